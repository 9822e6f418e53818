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

/// The version rule of every read (PROTOCOL.md §5.1; only the current version is readable):
/// OK when `requested` is empty or equals `current`; Invalid (400 invalid_input) saying time
/// travel is not supported yet, naming the table and both versions, when it is older; NotFound
/// (404, which the LanceDB client reports as "Table 't (version: N)' was not found") when it
/// is newer than the current version.
Status CheckVersion(uint64_t current, std::optional<uint64_t> requested, const std::string& table);
/// CheckVersion(snapshot.version, requested, table).
Status CheckVersion(const table::TableSnapshot& snapshot, std::optional<uint64_t> requested,
                    const std::string& table);

}  // namespace strata::server
