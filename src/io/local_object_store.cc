#include "io/local_object_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace strata::io {
namespace {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  std::string msg = what + " '" + path + "': " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(msg);
  return Status::IOError(msg);
}

bool IsTempName(std::string_view name) { return name.rfind(".tmp-", 0) == 0; }

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

Status FsyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory", path, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync directory", path, err);
  return Status::OK();
}

/// mkdir -p of `dir` (a path under `root`), fsyncing each parent that got a new entry.
Status MakeDirs(const std::string& root, const std::string& dir) {
  if (dir.size() <= root.size()) return Status::OK();
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::OK();
    return Status::IOError("'" + dir + "' exists and is not a directory");
  }
  std::string parent = ParentOf(dir);
  STRATA_RETURN_IF_ERROR(MakeDirs(root, parent));
  if (::mkdir(dir.c_str(), 0755) != 0) {
    if (errno == EEXIST) return Status::OK();
    return ErrnoStatus("mkdir", dir, errno);
  }
  return FsyncPath(parent);
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::OK();
}

/// st_mtim as microseconds since the UNIX epoch (0 when the clock reads before it).
int64_t MtimeMicros(const struct stat& st) {
  const int64_t micros = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000 +
                         static_cast<int64_t>(st.st_mtim.tv_nsec) / 1000;
  return micros > 0 ? micros : 0;
}

}  // namespace

Result<std::shared_ptr<LocalObjectStore>> LocalObjectStore::Open(const std::string& root_dir) {
  if (root_dir.empty()) return Status::Invalid("data directory path is empty");
  std::error_code ec;
  std::filesystem::create_directories(root_dir, ec);
  if (ec)
    return Status::IOError("cannot create data directory '" + root_dir + "': " + ec.message());
  auto abs = std::filesystem::absolute(root_dir, ec);
  if (ec) return Status::IOError("cannot resolve '" + root_dir + "': " + ec.message());
  std::string root = abs.lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  struct stat st;
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IOError("data directory '" + root + "' is not a directory");
  }
  return std::shared_ptr<LocalObjectStore>(new LocalObjectStore(std::move(root)));
}

Status LocalObjectStore::WriteObject(const std::string& key, std::string_view data,
                                     bool if_absent) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  const std::string path = PathOf(key);
  const std::string dir = ParentOf(path);
  // A concurrent Remove may delete an emptied directory between MakeDirs and the create;
  // retry a few times when that happens.
  for (int attempt = 0;; ++attempt) {
    STRATA_RETURN_IF_ERROR(MakeDirs(root_, dir));
    std::string tmp = dir + "/.tmp-" + std::to_string(::getpid()) + "-" +
                      std::to_string(tmp_counter_.fetch_add(1));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == ENOENT && attempt < 5) continue;
      return ErrnoStatus("create", tmp, errno);
    }
    Status st = WriteAll(fd, data, tmp);
    if (st.ok() && ::fdatasync(fd) != 0) st = ErrnoStatus("fdatasync", tmp, errno);
    if (::close(fd) != 0 && st.ok()) st = ErrnoStatus("close", tmp, errno);
    if (!st.ok()) {
      ::unlink(tmp.c_str());
      return st;
    }
    if (if_absent) {
      int rc = ::link(tmp.c_str(), path.c_str());
      int err = errno;
      ::unlink(tmp.c_str());
      if (rc != 0) {
        if (err == EEXIST) return Status::AlreadyExists("object '" + key + "' already exists");
        if (err == ENOENT && attempt < 5) continue;
        return ErrnoStatus("link", path, err);
      }
    } else if (::rename(tmp.c_str(), path.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      if (err == ENOENT && attempt < 5) continue;
      return ErrnoStatus("rename", path, err);
    }
    return FsyncPath(dir);
  }
}

Status LocalObjectStore::Put(const std::string& key, std::string_view data) {
  return WriteObject(key, data, /*if_absent=*/false);
}

Status LocalObjectStore::PutIfAbsent(const std::string& key, std::string_view data) {
  return WriteObject(key, data, /*if_absent=*/true);
}

Result<std::string> LocalObjectStore::Get(const std::string& key) {
  return GetRange(key, 0, INT64_MAX);
}

Result<std::string> LocalObjectStore::GetRange(const std::string& key, int64_t offset,
                                               int64_t length) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  if (offset < 0 || length < 0) {
    return Status::Invalid("range of '" + key + "' has a negative offset or length");
  }
  const std::string path = PathOf(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::NotFound("'" + path + "' is not a file");
  }
  int64_t size = st.st_size;
  int64_t begin = std::min(offset, size);
  int64_t n = std::min(length, size - begin);
  std::string out(static_cast<size_t>(n), '\0');
  int64_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, out.data() + done, static_cast<size_t>(n - done), begin + done);
    if (r < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus("read", path, err);
    }
    if (r == 0) break;  // file shrank underneath us
    done += r;
  }
  ::close(fd);
  out.resize(static_cast<size_t>(done));
  return out;
}

Result<ObjectMeta> LocalObjectStore::Head(const std::string& key) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  const std::string path = PathOf(key);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat", path, errno);
  if (!S_ISREG(st.st_mode)) return Status::NotFound("'" + path + "' is not a file");
  return ObjectMeta{key, static_cast<int64_t>(st.st_size), MtimeMicros(st)};
}

Result<std::vector<ObjectMeta>> LocalObjectStore::List(const std::string& prefix) {
  std::vector<ObjectMeta> out;
  size_t slash = prefix.rfind('/');
  std::string base = slash == std::string::npos ? "" : prefix.substr(0, slash);
  std::string start = base.empty() ? root_ : root_ + "/" + base;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(
      start, std::filesystem::directory_options::skip_permission_denied, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
      return out;
    }
    return Status::IOError("list '" + start + "': " + ec.message());
  }
  for (auto end = std::filesystem::recursive_directory_iterator(); it != end; it.increment(ec)) {
    if (ec) {
      // A directory removed while we walk it: skip it.
      if (ec == std::errc::no_such_file_or_directory) {
        ec.clear();
        continue;
      }
      return Status::IOError("list '" + start + "': " + ec.message());
    }
    const auto& entry = *it;
    std::string name = entry.path().filename().string();
    if (IsTempName(name)) continue;
    std::error_code sec;
    if (!entry.is_regular_file(sec)) continue;
    std::string full = entry.path().string();
    std::string key = full.substr(root_.size() + 1);
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    struct stat st;
    if (::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // removed concurrently
    out.push_back({std::move(key), static_cast<int64_t>(st.st_size), MtimeMicros(st)});
  }
  std::sort(out.begin(), out.end(),
            [](const ObjectMeta& a, const ObjectMeta& b) { return a.key < b.key; });
  return out;
}

Result<std::vector<std::string>> LocalObjectStore::ListChildren(const std::string& prefix) {
  if (!prefix.empty() && prefix.back() != '/') {
    return Status::Invalid("ListChildren prefix '" + prefix + "' must be empty or end with '/'");
  }
  std::vector<std::string> out;
  std::string dir = prefix.empty() ? root_ : root_ + "/" + prefix.substr(0, prefix.size() - 1);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return out;
    return ErrnoStatus("opendir", dir, errno);
  }
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || IsTempName(name)) continue;
    struct stat st;
    if (::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      out.push_back(std::move(name));
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Status LocalObjectStore::Remove(const std::string& key) {
  STRATA_RETURN_IF_ERROR(ValidateKey(key));
  const std::string path = PathOf(key);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::OK();
    return ErrnoStatus("unlink", path, errno);
  }
  std::string dir = ParentOf(path);
  Status synced = FsyncPath(dir);
  // Remove directories left empty, up to (not including) the root; rmdir fails on non-empty.
  while (dir.size() > root_.size() && ::rmdir(dir.c_str()) == 0) {
    dir = ParentOf(dir);
  }
  return synced.IsNotFound() ? Status::OK() : synced;
}

Status LocalObjectStore::RenamePrefix(const std::string& from, const std::string& to) {
  STRATA_RETURN_IF_ERROR(ValidateKey(from));
  STRATA_RETURN_IF_ERROR(ValidateKey(to));
  if (from == to || to.rfind(from + "/", 0) == 0 || from.rfind(to + "/", 0) == 0) {
    return Status::Invalid("cannot move '" + from + "/' to '" + to + "/': one holds the other");
  }
  const std::string src = PathOf(from);
  const std::string dst = PathOf(to);
  struct stat st;
  if (::stat(src.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::NotFound("nothing to move under '" + from + "/'");
  }
  const std::string dst_parent = ParentOf(dst);
  STRATA_RETURN_IF_ERROR(MakeDirs(root_, dst_parent));
  int rc = ::renameat2(AT_FDCWD, src.c_str(), AT_FDCWD, dst.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && errno == EINVAL) {
    // A file system without RENAME_NOREPLACE: check, then rename (the caller serialises).
    struct stat taken;
    if (::stat(dst.c_str(), &taken) == 0) {
      errno = EEXIST;
    } else {
      rc = ::rename(src.c_str(), dst.c_str());
    }
  }
  if (rc != 0) {
    const int err = errno;
    if (err == EEXIST || err == ENOTEMPTY) {
      return Status::AlreadyExists("cannot move '" + from + "/' to '" + to +
                                   "/': the target already exists");
    }
    return ErrnoStatus("rename directory to '" + dst + "'", src, err);
  }
  STRATA_RETURN_IF_ERROR(FsyncPath(dst_parent));
  const std::string src_parent = ParentOf(src);
  if (src_parent != dst_parent) {
    Status synced = FsyncPath(src_parent);
    if (!synced.ok() && !synced.IsNotFound()) return synced;
  }
  return Status::OK();
}

}  // namespace strata::io
