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

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace strata::io
