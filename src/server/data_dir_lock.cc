#include "server/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace strata::server {

namespace {

// The holder's record: "pid N\n" (written after it took the lock; may be empty for an instant).
std::string ReadHolder(int fd) {
  char buf[128];
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "";
  std::string text(buf, static_cast<size_t>(n));
  const size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  if (text.rfind("pid ", 0) == 0) text = text.substr(4);
  for (char c : text) {
    if (c < '0' || c > '9') return "";
  }
  return text;
}

}  // namespace

Result<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::IOError("cannot create data directory " + dir + ": " + ec.message());
  }
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError("cannot open the data directory's lock file " + path + ": " +
                           std::strerror(errno));
  }
  int rc = 0;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string pid = ReadHolder(fd);
      ::close(fd);
      return Status::AlreadyExists(
          "data directory " + dir + " is in use by another strata server (" +
          (pid.empty() ? std::string("pid not yet recorded") : "pid " + pid) + ", lock file " +
          path + "): stop it, or give this server another --data");
    }
    ::close(fd);
    return Status::IOError("cannot lock the data directory's lock file " + path + ": " +
                           std::strerror(err) +
                           " (a filesystem without flock support: --no-data-dir-lock starts "
                           "without the lock; then only one server may use the directory)");
  }
  const std::string record = "pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, record.data(), record.size(), 0) != static_cast<ssize_t>(record.size())) {
    const int err = errno;
    ::close(fd);
    return Status::IOError("cannot write the data directory's lock file " + path + ": " +
                           std::strerror(err));
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd, path));
}

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace strata::server
