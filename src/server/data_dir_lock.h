// The exclusive lock of a local data directory (issue 18): `strata serve --data DIR` holds an
// flock(2) on DIR/~strata.lock for its whole life, with its pid written in the file, so a
// second server on the same directory fails to start with an error naming the holder instead
// of fencing the first one (which would then answer stale reads until restarted).
// The kernel drops the lock when the process exits, however it exits (kill -9 included): a
// lock file left behind is not a held lock. The file name starts with '~', which no database
// directory name (table/table_name.h: a hashed name is "~PREFIX~HASH") can equal.
// An S3 store (--store s3://...) cannot be flock'ed; there the writer-epoch fence of every
// shard (DESIGN.md §4) is what stops a second writer.
// Thread-safety: one object per process and directory; not shared between threads.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace strata::server {

class DataDirLock {
 public:
  /// The lock file's name inside the data directory.
  static constexpr const char* kFileName = "~strata.lock";

  /// Creates `dir` when missing, then takes the lock without waiting and records this
  /// process's pid in the lock file. Errors: AlreadyExists "data directory DIR is in use by
  /// another strata server (pid N, lock file DIR/~strata.lock)" when another process (or
  /// another DataDirLock of this process) holds it; IOError when the directory or the file
  /// cannot be created or the filesystem does not support locks (the message names
  /// --no-data-dir-lock).
  static Result<std::unique_ptr<DataDirLock>> Acquire(const std::string& dir);

  /// Releases the lock (the file stays; its pid is then stale and ignored).
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

  /// DIR/~strata.lock.
  const std::string& path() const { return path_; }

 private:
  DataDirLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

}  // namespace strata::server
