// HNSW index over float32 vectors of one column (DESIGN.md §5), built on hnswlib (Debian
// libhnswlib-dev, "Efficient and robust approximate nearest neighbor search using Hierarchical
// Navigable Small World graphs", Malkov & Yashunin 2018).
//
// Labels are caller-chosen int64 >= 0 (the row position inside a MemTable or SSTable).
// Distances follow LanceDB's `_distance` conventions (index/vector/distance.h):
//   l2     -> squared Euclidean distance (hnswlib L2Space);
//   cosine -> vectors are stored normalized and the answer is 1 - cos (hnswlib
//             InnerProductSpace over unit vectors); a zero vector cannot be normalized and is
//             not indexed (Add returns Invalid);
//   dot    -> 1 - dot (hnswlib InnerProductSpace).
// Capacity grows by doubling (hnswlib resizeIndex under an exclusive lock); memory_bytes()
// counts the allocated capacity, so a caller charging index memory is charged at allocation.
//
// Thread-safety: Add, AddColumn, Search and Serialize may be called from many threads at once.
// Searches (and Serialize) run in parallel; each Add is exclusive (it also grows the capacity
// in place): hnswlib 0.6.2's searchKnn reads neighbour lists and the entry point without its
// per-node locks, so an insert overlapping a search would be a data race (TSan). The lock is a
// fair reader/writer lock (readers and writers alternate when both wait), so a stream of
// searches cannot starve inserts nor the reverse. AddColumn takes it exclusively once per chunk
// of 256 rows (searches interleave between chunks) and inside a chunk inserts with up to 4
// threads of its own (hnswlib's concurrent addPoint: per-node link locks plus a global lock for
// the entry point; capacity is reserved for the whole chunk first, levels are drawn on the
// calling thread, and the few rows that raise the top level go in alone before the others).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "index/vector/distance.h"

namespace strata::index {

/// HNSW construction parameters. Defaults are the (m 16, ef_construction 100).
struct HnswParams {
  int m = 16;                 // graph degree (hnswlib M), in [2, 128]
  int ef_construction = 100;  // candidate list size while inserting, in [m, 4096]
  DistanceType distance = DistanceType::kL2;
};

/// One search answer: a label and its distance to the query.
struct Neighbor {
  int64_t label = 0;
  float distance = 0.0f;
};

/// Default query breadth: max(k, 64) (the default; a query's `ef` overrides it).
inline int64_t DefaultEf(int64_t k) { return k > 64 ? k : 64; }

class HnswIndex {
 public:
  /// An empty index for `dim`-dimensional vectors with room for `initial_capacity` vectors.
  /// Errors: Invalid for dim < 1 or > 65536, or params out of range (naming the field).
  static Result<std::unique_ptr<HnswIndex>> Make(int64_t dim, HnswParams params,
                                                 int64_t initial_capacity = 1024);
  ~HnswIndex();

  int64_t dim() const;
  const HnswParams& params() const;

  /// Indexes `vector` (dim() floats, all finite) under `label` (>= 0, not already present).
  /// Errors: Invalid (negative or duplicate label, non-finite value, zero vector under cosine);
  /// ResourceExhausted-style Invalid when growing fails to allocate.
  Status Add(int64_t label, const float* vector);
  /// Indexes rows [0, column.length) of a fixed_size_list<float32> column under labels
  /// first_label + i; null vectors (and vectors holding a null element) are skipped, and so
  /// are zero vectors under cosine (no direction; Add would reject them).
  /// Every row is validated, and every label checked absent, before anything is indexed; then
  /// the rows go in chunks of 256, each under the exclusive lock and inserted by
  /// min(hardware threads, 4, rows in chunk / 16) threads (at least 1: the caller's own).
  /// The graph differs from one built by Add row by row (insertion order interleaves), with the
  /// same recall. Returns the number indexed. Errors: as Add; Invalid for a column of another
  /// type or size, or first_label + rows overflowing int64. Only a failure while inserting (out
  /// of memory, full, a label added by another thread meanwhile) can leave earlier chunks
  /// indexed; size() counts them.
  Result<int64_t> AddColumn(const arrow::Array& column, int64_t first_label);

  /// The `k` nearest accepted labels, sorted by distance ascending (ties: lower label first).
  /// `ef` >= 1 is the search breadth (hnswlib ef; the effective breadth is max(ef, k)).
  /// `accept` (optional) filters labels as FilteredSearch does (rejected nodes still guide the
  /// walk; the search holds max(ef, k) accepted labels, or every accepted label reachable), with
  /// no distance budget, so a selective filter costs more; callers should run an exact search
  /// instead when the filter passes few rows (see kExactSearchMaxFraction). `query` has dim()
  /// finite floats (for cosine it need not be normalized; a zero query under cosine gives
  /// Invalid). The walk is hnsw_filtered_walk.h's (hnswlib's searchBaseLayerST over its graph,
  /// with every line of a neighbour's vector prefetched), not hnswlib's searchKnn.
  Result<std::vector<Neighbor>> Search(const float* query, int64_t k, int64_t ef,
                                       const std::function<bool(int64_t)>& accept = {}) const;

  /// Outcome of FilteredSearch besides its neighbours.
  struct FilteredSearchStats {
    int64_t distances = 0;          // distance computations made
    bool budget_exhausted = false;  // stopped at max_distances: the result is partial
  };
  /// Filtered best-first search (one pass, no over-fetch): every node reached still guides the
  /// traversal, but only labels `accept` passes enter the result, and the layer-0 search ends
  /// when `breadth` accepted labels are held and no unexpanded node is closer than the worst
  /// of them. This is hnswlib's own layer-0 loop for indexes with deleted elements
  /// (searchBaseLayerST<has_deletions = true>, 0.6.2) with `accept` in place of the deletion
  /// mark, i.e. the search filter hnswlib added in 0.7.0; the upper layers are descended
  /// greedily as in searchKnn. A filter passing a fraction s of the rows spread like the
  /// rows near the query explores about the region of an unfiltered search of breadth
  /// breadth / s. `max_distances` bounds the work: once that many distances were computed the
  /// search stops with stats->budget_exhausted (callers then search exactly). Returns the
  /// `k` best accepted labels found, sorted (ties: lower label first). Errors as Search.
  Result<std::vector<Neighbor>> FilteredSearch(const float* query, int64_t k, int64_t breadth,
                                               const std::function<bool(int64_t)>& accept,
                                               int64_t max_distances,
                                               FilteredSearchStats* stats) const;

  /// Vectors indexed.
  int64_t size() const;
  /// Bytes allocated (capacity * bytes per element + upper-layer links), for memory accounting.
  int64_t memory_bytes() const;

  /// The index as bytes (hnswlib's saveIndex format, behind our own header holding dim, params
  /// and an xxhash64 checksum). Errors: IOError.
  Result<std::string> Serialize() const;
  /// Inverse of Serialize. Errors: Corruption (bad magic, checksum, sizes) naming what failed.
  static Result<std::unique_ptr<HnswIndex>> Deserialize(std::string_view bytes);

 private:
  struct Impl;
  explicit HnswIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Filter selectivity (accepted rows / indexed rows) under which a filtered vector search
/// should be exact over the accepted rows instead of an over-fetching HNSW search. Chosen by
/// measurement (bench/hnsw_bench.cc; see the comment at its definition).
extern const double kExactSearchMaxFraction;

}  // namespace strata::index
