// BTreeIndex's private state (BTreeIndex::Impl: the ordered map of encoded keys to their
// positions, its lock and memory accounting), shared by btree_index.cc (building, lookups)
// and btree_index_io.cc (Serialize / Deserialize).
// Thread-safety: see the members' comments (mu_ guards the map and counters).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "index/scalar/btree_index.h"
#include "index/scalar/sorted_runs.h"

namespace strata::index {
namespace btree_detail {

// Encoded null key: the null tag alone (format/key_encoding.h).
inline constexpr std::string_view kNullKey("\x00", 1);
// Approximate bytes of one std::map node besides the key and value objects.
inline constexpr int64_t kNodeOverhead = 32;

// Heap bytes of a std::string beyond the object itself (0 while in the small buffer).
inline int64_t StringHeapBytes(const std::string& s) {
  return s.capacity() > 15 ? static_cast<int64_t>(s.capacity()) + 1 : 0;
}

}  // namespace btree_detail

struct BTreeIndex::Impl {
  arrow::DataTypePtr type;
  std::string column_name;

  mutable std::shared_mutex mu_;
  // Encoded key -> its positions, ascending and unique. Guarded by mu_.
  std::map<std::string, std::vector<int64_t>, std::less<>> map;
  int64_t entries = 0;       // (key, position) pairs. Guarded by mu_.
  int64_t memory_bytes = 0;  // Guarded by mu_.

  // Adds (key, pos); mu_ held exclusively.
  void Insert(std::string&& key, int64_t pos) {
    auto it = map.lower_bound(key);
    if (it == map.end() || it->first != key) {
      memory_bytes += static_cast<int64_t>(sizeof(std::string) + sizeof(std::vector<int64_t>)) +
                      btree_detail::kNodeOverhead + btree_detail::StringHeapBytes(key);
      it = map.emplace_hint(it, std::move(key), std::vector<int64_t>{});
    }
    std::vector<int64_t>& v = it->second;
    const size_t cap = v.capacity();
    if (v.empty() || pos > v.back()) {
      v.push_back(pos);
    } else {
      auto at = std::lower_bound(v.begin(), v.end(), pos);
      if (*at == pos) return;  // already indexed
      v.insert(at, pos);
    }
    ++entries;
    memory_bytes += static_cast<int64_t>((v.capacity() - cap) * sizeof(int64_t));
  }

  // The map range of keys within the bounds (mu_ held); first == last when it is empty or
  // inverted.
  using It = std::map<std::string, std::vector<int64_t>, std::less<>>::const_iterator;
  std::pair<It, It> Bounds(const std::optional<KeyBound>& lower,
                           const std::optional<KeyBound>& upper) const {
    It first = map.begin();
    It last = map.end();
    if (lower) first = lower->inclusive ? map.lower_bound(lower->key) : map.upper_bound(lower->key);
    if (upper) last = upper->inclusive ? map.upper_bound(upper->key) : map.lower_bound(upper->key);
    // An empty or inverted range: `first` at or after `last` in key order.
    if (first == map.end() || (last != map.end() && !(first->first < last->first))) {
      return {map.end(), map.end()};
    }
    return {first, last};
  }

  // Positions of every non-null key in [first, last) except `skip` when `skip_one`, sorted and
  // unique (mu_ held shared).
  template <typename It>
  static std::vector<int64_t> Collect(It first, It last, std::string_view skip, bool skip_one) {
    std::vector<int64_t> out;
    std::vector<size_t> runs;
    for (It it = first; it != last; ++it) {
      if (it->first == btree_detail::kNullKey) continue;
      if (skip_one && it->first == skip) continue;
      if (it->second.empty()) continue;
      runs.push_back(out.size());
      out.insert(out.end(), it->second.begin(), it->second.end());
    }
    if (runs.size() > 1) MergeSortedRuns(&out, std::move(runs));
    return out;
  }
};

}  // namespace strata::index
