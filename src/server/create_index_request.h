// Parsing of the create_index/ JSON body (PROTOCOL.md §5.4) into an index::IndexSpec.
//
// Body: a flat object {"column", "index_type", "name"?, ...params}, exactly as the LanceDB
// 0.31 client sends it:
//   column      required; a top-level column of `schema`, resolved exactly first, then
//               ASCII-case-insensitively (ambiguous matches are Invalid); a `backtick`-quoted
//               name (`` `` `` inside for a backtick) is unquoted first; nested paths (a.b) are
//               NotSupported. IndexSpec::column is the schema's spelling.
//   index_type  required, case-sensitive as the client spells it:
//                 IVF_FLAT IVF_SQ IVF_PQ IVF_HNSW_PQ IVF_HNSW_SQ IVF_HNSW_FLAT and the
//                 CamelCase IvfFlat IvfSq IvfPq IvfHnswPq IvfHnswSq IvfHnswFlat -> HNSW in
//                 MemTables and SSTables; on the base table IVF_FLAT / IVF_SQ / IVF_PQ are
//                 FAISS IVF indexes (index_spec.h BaseIvfFor), the IVF_HNSW_* types the float
//                 HNSW; IVF_RQ / IvfRq -> NotSupported (FAISS 1.7.3 has no RaBitQ);
//                 BTREE BTree BITMAP Bitmap -> BTREE; FTS INVERTED Inverted -> FTS;
//                 LABEL_LIST LabelList FM -> NotSupported; anything else (e.g. `btree`, which
//                 LanceDB rejects too) -> Invalid listing the accepted names.
//               IndexSpec::requested_type is the upper-snake spelling (IvfPq -> IVF_PQ,
//               BTree -> BTREE, Inverted -> INVERTED).
//   name        optional; default `{column}_idx` with `column` as sent, unquoted (the name
//               the client's waitForIndex polls: "My Col_idx" for `My Col`). 1-256 bytes, no
//               control characters, no '/' or '\', not
//               "." or ".."; no '%', '#' or '?' (the LanceDB 0.31 client does not encode
//               them in index/{n}/... paths, so such an index could not be addressed).
//   vector types: metric_type "l2" (default) | "cosine" | "dot" (case-insensitive;
//               "euclidean" = l2), "hamming" NotSupported; m in [2, 128] and ef_construction
//               in [m, 4096] (HNSW types only; default 16 / 100); num_partitions,
//               num_sub_vectors, num_bits, sample_rate, max_iterations, target_partition_size
//               (IVF parameters: positive integers; num_partitions, num_sub_vectors,
//               num_bits, sample_rate, max_iterations and target_partition_size shape the
//               base's IVF_FLAT / IVF_SQ / IVF_PQ index and are range-checked against the
//               column by index::ValidateIndexSpec; the IVF_HNSW_* types, one graph, do not
//               partition and keep them in params_json only).
//   FTS: base_tokenizer "simple" | "whitespace", language "English", with_position,
//               lower_case, stem, remove_stop_words, ascii_folding (booleans),
//               max_token_length in [1, 1024] (null = 1024, the largest supported); the
//               client's defaults min_ngram_length 3, max_ngram_length 3, prefix_only false,
//               custom_stop_words null/[] and lance_tokenizer null are accepted, other values
//               are NotSupported naming the key.
//   Any other key, or a key of another index family (metric_type on BTREE, stem on IVF_PQ),
//   is Invalid naming it. `branch` (a branch handle) is accepted only as "main" or null.
// IndexSpec::params_json is every key other than column/index_type/name/branch, as sent
// (compact JSON object).
// Kind-specific checks against the column type (vector / scalar / utf8) are left to
// index::ValidateIndexSpec, which Table::CreateIndex runs.
// Errors are values: Invalid / NotSupported naming the key and the limit; nothing throws
// (nlohmann exceptions are caught). Bodies deeper than kMaxJsonDepth are Invalid.
// Thread-safety: pure function.
#pragma once

#include <string_view>

#include "arrow/type.h"
#include "common/status.h"
#include "index/index_spec.h"

namespace strata::server {

/// Parses a create_index/ body against the table's user `schema` (see the file comment).
/// The returned spec has no uuid / created_at (Table::CreateIndex sets them).
Result<index::IndexSpec> ParseCreateIndexRequest(std::string_view body,
                                                 const arrow::Schema& schema);

}  // namespace strata::server
