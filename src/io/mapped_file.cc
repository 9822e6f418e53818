#include "io/mapped_file.h"

#include "io/mapped_file_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata::io {

Result<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return Status::NotFound("file not found: " + path);
    return Status::IOError("open " + path + ": " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return Status::IOError("stat " + path + ": " + std::strerror(e));
  }
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->size_ = static_cast<int64_t>(st.st_size);
  m->path_ = path;
  if (m->size_ > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(m->size_), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return Status::IOError("mmap " + path + ": " + std::strerror(e));
    }
    (void)::madvise(p, static_cast<size_t>(m->size_), MADV_RANDOM);
    m->data_ = static_cast<const uint8_t*>(p);
    MappedFileCache::Global().Register(m.get());
  }
  ::close(fd);  // the mapping keeps the file
  return std::shared_ptr<const MappedFile>(std::move(m));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) MappedFileCache::Global().Unregister(this);
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

MappedReads::~MappedReads() {
  if (reads_ > 0) MappedFileCache::Global().CountPreads(reads_);
  for (const OpenFile& f : open_) {
    if (f.fd >= 0) ::close(f.fd);
  }
}

bool MappedReads::Read(const void* p, size_t len, void* dst) {
  const OpenFile* hit = nullptr;
  for (const OpenFile& f : open_) {
    if (f.file->Contains(p)) {
      hit = &f;
      break;
    }
  }
  if (hit == nullptr) {
    const MappedFile* file = MappedFileCache::Global().Find(p);
    if (file == nullptr) return false;
    open_.push_back({file, ::open(file->path().c_str(), O_RDONLY | O_CLOEXEC)});
    hit = &open_.back();
  }
  if (hit->fd < 0) return false;
  const auto offset = static_cast<off_t>(static_cast<const uint8_t*>(p) - hit->file->data());
  if (::pread(hit->fd, dst, len, offset) != static_cast<ssize_t>(len)) return false;
  ++reads_;
  return true;
}

}  // namespace strata::io
