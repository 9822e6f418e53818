// What a maintained index is (DESIGN.md §5): the definition `create_index/` records in the
// table manifest, from which every MemTable builds its in-memory index and every flush writes
// the SSTable's `indices/{name}/`. Vector index types of PROTOCOL.md §5.4 (IVF_PQ,
// IVF_HNSW_SQ, ...) all map to kind HNSW for the MemTable and SSTable tiers; the base table
// builds the requested IVF type for real (BaseIvfDefinition below, index/vector/ivf_index.h);
// the requested type and the request's parameters are remembered in `requested_type` and
// `params_json`. The MemTable HNSW always uses `hnsw` (m, ef_construction
// from the request when an HNSW type sent them, else 16 / 100) and the request's metric_type.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "arrow/type.h"
#include "common/status.h"
#include "index/fts/tokenizer.h"
#include "index/vector/hnsw_index.h"
#include "index/vector/ivf_index.h"

namespace strata::index {

enum class IndexKind { kHnsw, kBTree, kFts };

/// "HNSW", "BTREE", "FTS" (IndexStore::describe spelling).
const char* IndexKindName(IndexKind kind);

struct IndexSpec {
  std::string name;    // unique per table; `{column}_idx` by default
  std::string column;  // top-level column name
  IndexKind kind = IndexKind::kBTree;
  std::string requested_type;  // index_type as sent, e.g. "IVF_PQ", "BTREE", "FTS"
  std::string params_json;     // the create_index body's parameters as sent (JSON object)
  // The base table builds the requested IVF type (BaseIvfFor). Set by create_index/ since
  // issue 15; definitions stored before it lack it and keep their float HNSW on the base, so
  // an upgrade never changes the index (and the recall) of an existing table.
  bool base_ivf = false;
  HnswParams hnsw;   // kind HNSW
  FtsParams fts;     // kind FTS
  std::string uuid;  // identity of this definition (a re-created index gets a new one)
  int64_t created_at_micros = 0;
};

/// Checks `spec` against the table's user `schema`: the column exists; HNSW needs
/// fixed_size_list<float32> (dimension <= 65,536); BTREE a key-able scalar type
/// (format/key_encoding.h); FTS utf8 or large_utf8; parameters in range.
/// Errors: Invalid / NotSupported naming the column, its type and the index kind.
Status ValidateIndexSpec(const IndexSpec& spec, const arrow::Schema& schema);

/// The base-table form of a vector definition (issue 15). IVF_FLAT, IVF_PQ, IVF_SQ,
/// IVF_HNSW_SQ and IVF_HNSW_PQ are built on the base as FAISS indexes (ivf_index.h) with the
/// create_index parameters of `params_json`: num_partitions, num_sub_vectors, num_bits (PQ
/// nbits), sample_rate, max_iterations, target_partition_size (num_partitions =
/// ceil(rows / target) at training), and m / ef_construction for IVF_HNSW_*; the metric is
/// spec.hnsw.distance. IVF_HNSW_FLAT (and a definition without an IVF type, or stored without
/// `base_ivf` by an older server) is served by the float HNSW (hnsw_index.h) on the base too:
/// nullopt. MemTables and SSTables always keep HNSW.
struct BaseIvfDefinition {
  IvfParams params;                   // num_partitions 0 = chosen at training (AutoPartitions)
  int64_t target_partition_size = 0;  // > 0: num_partitions = ceil(rows / this) at training
};
/// Errors: Corruption when params_json is not a JSON object (stored definitions only).
Result<std::optional<BaseIvfDefinition>> BaseIvfFor(const IndexSpec& spec);
/// Partitions of an IVF index trained over `rows` rows when the definition leaves it open:
/// round(sqrt(rows)) clamped to [1, 65536] (the usual IVF rule of thumb, LanceDB's former
/// default), or ceil(rows / target_partition_size) when that is set.
int64_t AutoPartitions(const BaseIvfDefinition& def, int64_t rows);

}  // namespace strata::index
