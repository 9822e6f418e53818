// A read-only memory mapping of one local file (issue 15, "disk-resident base"): the base
// table's fragments (uncompressed Arrow IPC files, written once and never modified) are mapped
// rather than read into the heap, and the IPC reader uses their buffers in place, so their
// pages belong to the kernel's page cache: resident while in use, dropped under memory
// pressure and read back on the next touch. The mapping is MAP_PRIVATE + PROT_READ with
// MADV_RANDOM (a vector search touches scattered rows: no readahead).
//
// A file removed while mapped (garbage collection of a replaced fragment) stays readable
// until the last mapping goes (POSIX unlink semantics). A read error of a mapped page is a
// SIGBUS, not a Status: the mapped files are the base's own immutable files on a local disk.
//
// Every mapping registers with MappedFileCache::Global() (io/mapped_file_cache.h), which may
// drop its resident pages (MADV_DONTNEED) to hold the process under `--cache-bytes`; the
// bytes read the same before and after.
//
// Thread-safety: immutable after Open; the bytes may be read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::io {

class MappedFile {
 public:
  /// Maps the whole of `path`. Errors: NotFound; IOError naming the path and errno.
  static Result<std::shared_ptr<const MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  bool Contains(const void* p) const {
    const auto* b = static_cast<const uint8_t*>(p);
    return b >= data_ && b < data_ + size_;
  }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  int64_t size_ = 0;
  std::string path_;
};

/// Reads bytes that lie in mapped files with pread(2), without touching the mapping: for
/// scattered reads (IVF refine candidates) while --cache-bytes binds (MappedFileCache::
/// ReadsBypassMapping). Mapping such a row maps a whole page-cache folio (up to 2 MiB on Linux
/// 6.18) into the process, which the cache then has to unmap again; a pread copies 512 bytes.
/// Holds one descriptor per file read, closed on destruction. Thread-safety: one per thread
/// (e.g. per query); the mappings read must outlive it (a query's snapshot holds them).
class MappedReads {
 public:
  MappedReads() = default;
  ~MappedReads();
  MappedReads(const MappedReads&) = delete;
  MappedReads& operator=(const MappedReads&) = delete;

  /// Copies `len` bytes at `p` into `dst` when `p` lies in a registered mapping whose file can
  /// still be opened and read; false otherwise (e.g. the file was garbage-collected while
  /// mapped), and the caller reads `p` through the mapping.
  bool Read(const void* p, size_t len, void* dst);

 private:
  struct OpenFile {
    const MappedFile* file;
    int fd;  // -1: the file could not be opened
  };
  std::vector<OpenFile> open_;
  int64_t reads_ = 0;  // added to MappedFileCache's stats on destruction
};

}  // namespace strata::io
