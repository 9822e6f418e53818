// Process-wide cache of which rows of a read source pass a filter (a compiled RowPredicate, or
// any filter the evaluator answers that reads neither `_rowid` nor `_rowoffset`), as one bit
// per row position, so a filter that queries repeat (a tenant, a category, a label)
// is tested by a bit lookup instead of a read of the column, and its selectivity is a count
// instead of a BTree count plus a sample. The filter-bitset cache of Lucene-style engines
// over immutable segments, applied to Strata's sources: a row's values never change once
// written (updates and deletes write new rows and liveness marks, checked separately), and a
// MemTable only appends, so bits computed for positions [0, m) stay right while the source
// lives, and a view of more rows only computes the tail.
//
// Key: the filter's canonical form (RowPredicate::Key, or the bound expression's SQL with its
// columns' names and types), the source's name (which tells a frozen MemTable from the SSTable
// flushed from it) and the address of its first batch. An entry serves a source only while the
// source holds, at the same indexes, the very batches the bits were computed over (weak
// references, so a batch freed and another allocated at its address never matches): a source
// whose batches were replaced or reordered (a rewrite) gets new bits, and entries whose batches
// are all gone are dropped.
// Building: a (predicate, source) pair gets bits the second time a query asks for it within
// the demand window (the last 65,536 pairs asked, at most 8 MiB of keys): a one-off filter
// never pays the pass over the source (about 1 ns a row). Memory: rows / 8 bytes per entry
// (125 KB for 1,000,000 rows) plus its key (the filter's text: up to 64 KiB), bounded by
// `strata serve --filter-cache-bytes`; least recently used entries go first, and
// expired ones are swept at every insert. A budget of 0 disables the cache.
// Thread-safety: every method may be called from any thread; one mutex guards the maps, and
// bits are computed outside it (two threads may compute the same pair; one is kept).
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "query/filter/evaluator.h"
#include "query/row_predicate.h"
#include "shard/source_view.h"

namespace strata::query {

/// Rows of positions [0, rows) of one source that pass a predicate (liveness not applied).
struct FilterBits {
  int64_t rows = 0;
  int64_t count = 0;            // passing rows of [0, rows)
  std::vector<uint64_t> words;  // bit p % 64 of words[p / 64]: row p passes
  /// The passing positions, ascending, when they are few (count <= rows / 64, so the list is
  /// no larger than the bits): the exact plan reads them instead of scanning every word.
  std::optional<std::vector<int64_t>> positions;
  bool Test(int64_t p) const {
    return p >= 0 && p < rows && ((words[static_cast<size_t>(p >> 6)] >> (p & 63)) & 1) != 0;
  }
  /// Passing rows among positions [0, n) (n clamped to rows).
  int64_t CountBelow(int64_t n) const;
  int64_t bytes() const {
    return static_cast<int64_t>(words.size() * sizeof(uint64_t) +
                                (positions ? positions->size() * sizeof(int64_t) : 0)) +
           64;
  }
};

struct FilterBitsCacheStats {
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t budget = 0;
  int64_t hits = 0;
  int64_t builds = 0;  // entries computed, extensions of a grown MemTable included
  int64_t evictions = 0;
};

class FilterBitsCache {
 public:
  /// The server's cache; its budget is set at start from --filter-cache-bytes.
  static FilterBitsCache& Global();
  /// Default budget: 1/256 of physical memory (96 MiB of 24 GiB), 64 MiB when unknown.
  static int64_t DefaultBudget();

  explicit FilterBitsCache(int64_t budget_bytes = DefaultBudget());

  /// Sets the budget in bytes (0 disables), evicting down to it.
  void SetBudget(int64_t bytes);
  /// Sets the bits of the passing rows among positions [from, to) of the source in *words
  /// (sized for `to` rows, other bits left as they are). Errors abandon the bits.
  using Fill = std::function<Status(int64_t from, int64_t to, std::vector<uint64_t>* words)>;

  /// Bits of the filter `filter_key` names (a canonical form: equal keys must pass equal
  /// rows of any source; the filter may read only the rows' stored values) covering at least
  /// positions [0, rows) of `source`, computed by `fill`; or nullptr: the cache is disabled,
  /// the source has no batch, the bits would not fit the budget, or this is the first time
  /// the pair is asked for (it is counted). Entries covering fewer rows (a MemTable that
  /// grew) are extended by the missing tail. Errors: those of `fill` (nothing cached, and the
  /// pair is not computed again until the demand window forgets it).
  Result<std::shared_ptr<const FilterBits>> Get(const std::string& filter_key,
                                                const shard::SourceView& source, int64_t rows,
                                                const Fill& fill);
  /// The key of a filter the evaluator answers, bound to `schema`: its SQL and the bound
  /// columns' indexes, names and types (a rename or a type change never meets old bits), or ""
  /// when it must not be cached (it reads `_rowid` or `_rowoffset`: the latter depends on the
  /// view). Compute it once per query: it prints the expression.
  static std::string EvaluatedKey(const filter::BoundExpr& expr, const arrow::Schema& schema);
  /// Get for a compiled predicate (`bound` of the predicate whose RowPredicate::Key is
  /// `predicate_key`, bound to `source`); its keys never meet other filters'.
  std::shared_ptr<const FilterBits> Get(const std::string& predicate_key,
                                        const RowPredicate::Bound& bound,
                                        const shard::SourceView& source, int64_t rows);
  FilterBitsCacheStats stats() const;

 private:
  struct Entry {
    // The batches the bits cover, in order: the entry serves a source only while it still
    // holds these very batches at these indexes (so row positions mean the same rows).
    std::vector<std::weak_ptr<const void>> owners;
    std::vector<const void*> ids;  // their addresses
    std::shared_ptr<const FilterBits> bits;
    int64_t charged = 0;  // bytes counted against the budget: bits->bytes() + the key's
    std::list<std::string>::iterator lru;  // position in lru_ (front = most recent)
  };
  void EvictLocked(int64_t budget);
  // Whether `source` holds e's batches, alive, at e's indexes (as far as it has batches).
  static bool Serves(const Entry& e, const shard::SourceView& source);
  void EraseLocked(std::unordered_map<std::string, Entry>::iterator it);

  mutable std::mutex mu_;
  int64_t budget_;                                  // guarded by mu_
  int64_t bytes_ = 0;                               // guarded by mu_
  std::unordered_map<std::string, Entry> map_;      // guarded by mu_
  std::list<std::string> lru_;                      // guarded by mu_
  std::unordered_map<std::string, int64_t> asked_;  // guarded by mu_: pairs asked, no bits yet
  int64_t asked_bytes_ = 0;                         // guarded by mu_: key bytes in asked_
  int64_t hits_ = 0, builds_ = 0, evictions_ = 0;   // guarded by mu_
};

}  // namespace strata::query
