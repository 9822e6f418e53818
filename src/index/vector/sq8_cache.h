// Process-wide cache of the 8-bit codes (index/vector/sq8_codes.h) of batches' vector
// columns, built the first time an exact search asks for them and kept while the batch's
// memory lives, within a byte budget (`strata serve --vector-code-bytes`).
//
// Key: the address of the batch's first vector, its row count and dim; an entry also holds a
// weak reference to the owner of the float buffer (arrow::Buffer::owner), so a batch freed
// and another allocated at the same address never meets the old codes (the entry is dropped
// when its owner has expired). Sources' batches are immutable (MemTable batches included:
// the log appends whole batches), so codes never go stale while the owner lives.
// Eviction: least recently used first when an insert passes the budget; expired entries are
// swept at every insert. A budget of 0 disables the cache (Get returns nullptr).
// Thread-safety: every method may be called from any thread; one mutex guards the map, and
// codes are built outside it (two threads may build the same batch once each; one is kept).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "arrow/array.h"
#include "index/vector/sq8_codes.h"

namespace strata::index {

struct Sq8CacheStats {
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t budget = 0;
  int64_t hits = 0;
  int64_t builds = 0;
  int64_t evictions = 0;
};

class Sq8Cache {
 public:
  /// The server's cache; its budget is set at start from --vector-code-bytes.
  static Sq8Cache& Global();
  /// Default budget: a sixteenth of physical memory (a quarter of --cache-bytes's default, as
  /// codes are a quarter of the float vectors), 256 MiB when that is unknown.
  static int64_t DefaultBudget();

  explicit Sq8Cache(int64_t budget_bytes = DefaultBudget());

  /// Sets the budget in bytes (0 disables), evicting down to it.
  void SetBudget(int64_t bytes);
  /// Codes of `list` (one batch's fixed_size_list<float32>[dim] column): cached ones, or,
  /// when `build`, new ones (nullptr when the cache is disabled, the column is of another
  /// type, or one batch's codes alone exceed the budget).
  std::shared_ptr<const Sq8Codes> Get(const arrow::Array& list, int64_t dim, bool build);
  /// Codes of `list` as Get, built once the rows queries asked of this batch since its last
  /// build (this call's `rows_wanted` included) reach its rows / `share`: a query that reads
  /// 1% of each batch is as well served by the codes after a few queries as one reading a
  /// tenth is at once (the rows a query scores from the floats are what the codes save).
  /// The demand is counted per batch key, cleared at a build, and forgotten wholesale past
  /// 65,536 batches (a freed batch's count can only bring the next build at its address
  /// forward).
  std::shared_ptr<const Sq8Codes> GetOnDemand(const arrow::Array& list, int64_t dim,
                                              int64_t rows_wanted, int64_t share);
  Sq8CacheStats stats() const;

 private:
  struct Key {
    uintptr_t address;
    int64_t rows;
    int64_t dim;
    bool operator==(const Key& o) const {
      return address == o.address && rows == o.rows && dim == o.dim;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uintptr_t>()(k.address) ^
             (static_cast<size_t>(k.rows) * 0x9e3779b97f4a7c15ull);
    }
  };
  struct Entry {
    std::weak_ptr<const void> owner;
    std::shared_ptr<const Sq8Codes> codes;
    std::list<Key>::iterator lru;  // position in lru_ (front = most recent)
  };
  void EvictLocked(int64_t budget);
  // The key of `list`'s float buffer, or nullopt when it has no owned buffer (then never cached).
  static std::optional<Key> KeyOf(const arrow::Array& list, int64_t dim);

  mutable std::mutex mu_;
  int64_t budget_;                                    // guarded by mu_
  int64_t bytes_ = 0;                                 // guarded by mu_
  std::unordered_map<Key, Entry, KeyHash> map_;       // guarded by mu_
  std::list<Key> lru_;                                // guarded by mu_
  std::unordered_map<Key, int64_t, KeyHash> demand_;  // guarded by mu_: rows asked, not built
  int64_t hits_ = 0, builds_ = 0, evictions_ = 0;     // guarded by mu_
};

}  // namespace strata::index
