// ObjectStore on a local directory tree: key "a/b/c" is the file {root}/a/b/c.
// Durability: every put writes a temporary file in the target directory, fsyncs it, moves it
// into place (rename for Put, link() for PutIfAbsent so that a taken name fails atomically with
// EEXIST), then fsyncs the directory; directories created on the way are fsynced into their
// parents. Temporary files are named ".tmp-*" and never listed. Removing the last object of a
// directory removes the empty directories up to the root (an object store has no folders).
// Thread-safety: safe from many threads and processes (atomicity comes from the filesystem).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "io/object_store.h"

namespace strata::io {

class LocalObjectStore : public ObjectStore {
 public:
  /// Opens the store rooted at `root_dir`, creating the directory when missing.
  /// Errors: IOError when it cannot be created or is not a directory.
  static Result<std::shared_ptr<LocalObjectStore>> Open(const std::string& root_dir);

  Status Put(const std::string& key, std::string_view data) override;
  Status PutIfAbsent(const std::string& key, std::string_view data) override;
  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, int64_t offset, int64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::vector<ObjectMeta>> List(const std::string& prefix) override;
  Result<std::vector<std::string>> ListChildren(const std::string& prefix) override;
  Status Remove(const std::string& key) override;
  /// One rename(2) of directory {root}/from to {root}/to (renameat2 RENAME_NOREPLACE, so an
  /// existing target fails AlreadyExists atomically), then fsyncs both parent directories.
  Status RenamePrefix(const std::string& from, const std::string& to) override;
  bool SupportsRenamePrefix() const override { return true; }

  /// Absolute root directory (no trailing '/').
  const std::string& root() const { return root_; }
  /// Filesystem path of `key`.
  std::string PathOf(const std::string& key) const { return root_ + "/" + key; }

 private:
  explicit LocalObjectStore(std::string root) : root_(std::move(root)) {}
  Status WriteObject(const std::string& key, std::string_view data, bool if_absent);

  std::string root_;
  std::atomic<uint64_t> tmp_counter_{0};
};

}  // namespace strata::io
