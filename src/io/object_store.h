// The object-store interface every durable byte of Strata goes through (DESIGN.md §2-§3).
// Keys are '/'-separated relative paths ("db/t/_mem_wal/s/wal/1000...0.arrow"): no leading '/',
// no empty, "." or ".." segments. The semantics follow what S3/GCS/Azure offer (whole-object
// put, conditional put-if-absent, ranged get, prefix listing), so a remote store can implement
// the same interface later.
// Thread-safety: implementations must be safe to call from many threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::io {

/// What a listing or head returns about one object.
struct ObjectMeta {
  std::string key;   // full key, relative to the store root
  int64_t size = 0;  // bytes
  /// Last modification time, microseconds since the UNIX epoch; 0 = unknown (a store that
  /// cannot tell). Age rules (base/gc.h) treat unknown as "just written".
  int64_t mtime_micros = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  /// Writes `data` at `key`, replacing any existing object; durable when it returns OK.
  /// Errors: Invalid for a malformed key; IOError.
  virtual Status Put(const std::string& key, std::string_view data) = 0;

  /// Writes `data` at `key` only when no object has that key, atomically (exactly one of many
  /// concurrent callers wins); durable when it returns OK.
  /// Errors: AlreadyExists when the key is taken (nothing written); Invalid; IOError.
  virtual Status PutIfAbsent(const std::string& key, std::string_view data) = 0;

  /// The whole object. Errors: NotFound; IOError.
  virtual Result<std::string> Get(const std::string& key) = 0;

  /// Bytes [offset, offset + length) of the object, shorter when the object ends first.
  /// Errors: NotFound; Invalid for negative offset/length; IOError.
  virtual Result<std::string> GetRange(const std::string& key, int64_t offset, int64_t length) = 0;

  /// Size (and modification time, when the store knows it) of the object.
  /// Errors: NotFound; IOError.
  virtual Result<ObjectMeta> Head(const std::string& key) = 0;

  /// Every object whose key starts with `prefix` (plain string prefix, any depth), sorted by
  /// key ascending. An empty result is not an error.
  virtual Result<std::vector<ObjectMeta>> List(const std::string& prefix) = 0;

  /// Names of the immediate "sub-folders" under `prefix` (which must be empty or end with '/'):
  /// the distinct next key segments of keys with more segments after them, sorted, like an S3
  /// listing with delimiter '/'. Additive to DESIGN.md's list: catalogs need it.
  virtual Result<std::vector<std::string>> ListChildren(const std::string& prefix) = 0;

  /// Removes the object; removing a missing key is OK. Errors: Invalid; IOError.
  virtual Status Remove(const std::string& key) = 0;

  /// Moves every object under "`from`/" to "`to`/" (same relative keys) atomically: readers see
  /// all of them under `from` or all under `to`, never a mix (catalog table renames). Both are
  /// keys (ValidateKey) naming folders, not prefixes of one another.
  /// Errors: NotFound when nothing is under `from`; AlreadyExists when something is under
  /// `to` (nothing moved); Invalid for malformed keys; NotSupported by stores without an
  /// atomic move (the default; a remote store would need a manifest-level indirection);
  /// IOError.
  virtual Status RenamePrefix(const std::string& from, const std::string& to);
  /// Whether RenamePrefix can succeed on this store (false: it is always NotSupported).
  virtual bool SupportsRenamePrefix() const { return false; }
};

/// Checks `key` is a well-formed relative key (see the file comment); Invalid naming the key
/// otherwise. Longest key: 4096 bytes.
Status ValidateKey(const std::string& key);

}  // namespace strata::io
