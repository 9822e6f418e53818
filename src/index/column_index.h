// One index over one column, of any kind (HNSW, BTree, FTS), as a MemTable or an SSTable holds
// it: the IndexSpec it was built from plus the algorithm object. It indexes rows of record
// batches by row position and serializes to the bytes of an SSTable's `indices/{name}/` file:
//   "STIDX001" | u32 kind | u32 spec length | IndexSpec (JSON) | u64 rows covered |
//   payload (the algorithm's own Serialize output, which carries its own checksum)
// (integers little-endian).
// Thread-safety: IndexBatch may run concurrently with itself and with reads (the algorithm
// objects lock internally); the spec and column are immutable.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "index/fts/inverted_index.h"
#include "index/index_spec.h"
#include "index/scalar/btree_index.h"
#include "index/vector/hnsw_index.h"
#include "index/vector/ivf_index.h"

namespace strata::index {

class ColumnIndex {
 public:
  /// An empty index for `spec` over column `column_index` of `schema` (the storage schema the
  /// batches will have). `initial_capacity`: HNSW preallocation, vectors.
  /// Errors: ValidateIndexSpec's, or the algorithm's Make errors.
  static Result<std::shared_ptr<ColumnIndex>> Make(const IndexSpec& spec,
                                                   const arrow::Schema& schema,
                                                   int64_t initial_capacity = 1024);
  /// The base table's IVF form of a vector `spec` (BaseIvfFor(spec) set): an index over
  /// `ivf`, already trained on `trained_rows` rows (the retrain trigger compares the rows
  /// indexed with it) and holding no vector yet; IndexBatch adds rows to it.
  /// Errors: ValidateIndexSpec's; Invalid when `ivf` is null or its dimension differs.
  static Result<std::shared_ptr<ColumnIndex>> MakeIvf(const IndexSpec& spec,
                                                      const arrow::Schema& schema,
                                                      std::unique_ptr<IvfIndex> ivf,
                                                      int64_t trained_rows);
  /// Builds an index for `spec` over every row of `batches` (positions from 0, in order).
  static Result<std::shared_ptr<ColumnIndex>> Build(
      const IndexSpec& spec, const arrow::Schema& schema,
      const std::vector<arrow::RecordBatchPtr>& batches);

  const IndexSpec& spec() const { return spec_; }
  int column() const { return column_; }

  /// Indexes every row of `batch` (storage schema) as positions first_position + i.
  /// Null values are skipped by HNSW and FTS (BTree keeps them for IS NULL); a zero vector
  /// under cosine is skipped by HNSW. Errors: the algorithm's (allocation, type mismatch).
  Status IndexBatch(const arrow::RecordBatch& batch, int64_t first_position);

  /// The algorithm objects (exactly one is non-null: per spec().kind, and for kind HNSW
  /// either the graph or the base table's IVF index).
  const HnswIndex* hnsw() const { return hnsw_.get(); }
  const IvfIndex* ivf() const { return ivf_.get(); }
  /// Rows the IVF index was trained on (0 for other indexes).
  int64_t ivf_trained_rows() const { return ivf_trained_rows_; }
  const BTreeIndex* btree() const { return btree_.get(); }
  const InvertedIndex* fts() const { return fts_.get(); }

  /// Rows handed to IndexBatch so far (nulls included).
  int64_t rows_indexed() const;
  int64_t memory_bytes() const;

  Result<std::string> Serialize() const;
  /// An independent copy (same spec, column, rows; Serialize + Deserialize, so O(index
  /// bytes)), for growing an index while readers keep searching the original.
  /// Errors: Serialize's / Deserialize's.
  Result<std::shared_ptr<ColumnIndex>> Clone(const arrow::Schema& schema) const;
  /// Errors: Corruption naming what failed; Invalid when the stored column is not in `schema`.
  static Result<std::shared_ptr<ColumnIndex>> Deserialize(std::string_view bytes,
                                                          const arrow::Schema& schema);

 private:
  ColumnIndex() = default;
  IndexSpec spec_;
  int column_ = -1;
  std::unique_ptr<HnswIndex> hnsw_;
  std::unique_ptr<IvfIndex> ivf_;
  int64_t ivf_trained_rows_ = 0;
  std::unique_ptr<BTreeIndex> btree_;
  std::unique_ptr<InvertedIndex> fts_;
  std::atomic<int64_t> rows_indexed_{0};
};

/// IndexSpec <-> JSON (the form stored in index files and table manifests' params).
std::string IndexSpecToJson(const IndexSpec& spec);
Result<IndexSpec> IndexSpecFromJson(std::string_view json);

}  // namespace strata::index
