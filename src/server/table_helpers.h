// Helpers shared by the table routes: decoding Arrow IPC uploads and checking requested
// versions. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/buffer.h"
#include "arrow/type.h"
#include "common/status.h"
#include "table/table.h"

namespace strata::server {

/// The schema and non-empty record batches of an uploaded Arrow IPC stream (0-row batches,
/// such as the one of an empty-table create, are dropped).
struct DecodedUpload {
  arrow::SchemaPtr schema;
  std::vector<arrow::RecordBatchPtr> batches;
  int64_t num_rows = 0;
};

/// Decodes `body` as an IPC stream (LZ4/ZSTD-compressed batches allowed). `route` prefixes
/// errors. Errors: Invalid for an empty body or bytes that are not a valid stream (the
/// reader's message included).
Result<DecodedUpload> DecodeArrowUpload(const arrow::BufferPtr& body, const char* route);

/// OK when `requested` is empty or equals the snapshot's version; NotFound naming the table and
/// both versions otherwise (only the latest version is kept).
Status CheckVersion(const table::TableSnapshot& snapshot, std::optional<uint64_t> requested,
                    const std::string& table);

}  // namespace strata::server
