// The MemTable primary-key index (DESIGN.md §5): encoded key (format/key_encoding.h) -> newest
// row position, plus, for every row, the position of the previous row with the same key
// (-1 when none). The chain makes snapshot lookups exact while appends continue: the newest
// row of a key below a watermark W is found by following the chain from the newest row until
// a position < W. It also yields the rows a flush marks deleted (older duplicates of a key).
// Rows must be inserted with consecutive positions 0, 1, 2, ...
// Thread-safety: not internally locked; the owning MemTable's `mu_` guards it (writers
// exclusive, readers shared).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::memtable {

class PrimaryKeyIndex {
 public:
  /// Indexes row `position` (must equal rows()) under `key`; returns the previous row
  /// position of the same key, or -1.
  int64_t Insert(std::string key, int64_t position);

  /// Newest row position < `watermark` whose key is `key`, or nullopt.
  std::optional<int64_t> Lookup(std::string_view key, int64_t watermark) const;

  /// Previous row with the same key as row `position` (-1 when none or out of range).
  int64_t previous(int64_t position) const;
  /// Encoded key of row `position` (0 <= position < rows()).
  const std::string& key(int64_t position) const { return keys_[static_cast<size_t>(position)]; }

  /// Ascending positions < `watermark` that a newer row < `watermark` with the same key
  /// supersedes.
  std::vector<int64_t> SupersededRows(int64_t watermark) const;

  /// Removes the rows at positions >= `position` (undoing their Inserts exactly).
  void TruncateTo(int64_t position);

  int64_t rows() const { return static_cast<int64_t>(keys_.size()); }
  int64_t distinct_keys() const { return static_cast<int64_t>(newest_.size()); }
  /// Approximate memory held, bytes (keys, chain, hash table nodes).
  int64_t memory_bytes() const;

 private:
  std::deque<std::string> keys_;                          // key of each row (stable references)
  std::vector<int64_t> prev_;                             // previous row of the same key, or -1
  std::unordered_map<std::string_view, int64_t> newest_;  // views into keys_
  int64_t key_bytes_ = 0;
};

}  // namespace strata::memtable
