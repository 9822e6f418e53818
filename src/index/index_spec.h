// What a maintained index is (DESIGN.md §5): the definition `create_index/` records in the
// table manifest, from which every MemTable builds its in-memory index and every flush writes
// the SSTable's `indices/{name}/`. Vector index types of PROTOCOL.md §5.4 (IVF_PQ,
// IVF_HNSW_SQ, ...) all map to kind HNSW for the MemTable and SSTable tiers (the base-table
// IVF indexes come later); the requested type and the request's parameters are remembered in
// `requested_type` and `params_json`. The MemTable HNSW always uses `hnsw` (m, ef_construction
// from the request when an HNSW type sent them, else 16 / 100) and the request's metric_type.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>

#include "arrow/type.h"
#include "common/status.h"
#include "index/fts/tokenizer.h"
#include "index/vector/hnsw_index.h"

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
  HnswParams hnsw;             // kind HNSW
  FtsParams fts;               // kind FTS
  std::string uuid;            // identity of this definition (a re-created index gets a new one)
  int64_t created_at_micros = 0;
};

/// Checks `spec` against the table's user `schema`: the column exists; HNSW needs
/// fixed_size_list<float32> (dimension <= 65,536); BTREE a key-able scalar type
/// (format/key_encoding.h); FTS utf8 or large_utf8; parameters in range.
/// Errors: Invalid / NotSupported naming the column, its type and the index kind.
Status ValidateIndexSpec(const IndexSpec& spec, const arrow::Schema& schema);

}  // namespace strata::index
