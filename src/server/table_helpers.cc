#include "server/table_helpers.h"

#include "arrow/ipc/reader.h"

namespace strata::server {

Result<DecodedUpload> DecodeArrowUpload(const arrow::BufferPtr& body, const char* route) {
  if (body == nullptr || body->size() == 0) {
    return Status::Invalid(std::string(route) +
                           ": the request body is empty; expected an Arrow IPC stream");
  }
  Result<arrow::ipc::ReadResult> read = arrow::ipc::ReadStream(body);
  const std::string_view text = body->view();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (!read.ok() && first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    // JSON sent without content-type: application/json (curl -d sends a form type).
    return Status::Invalid(std::string(route) +
                           ": the body looks like JSON but is not sent with content-type: "
                           "application/json, so it was read as an Arrow IPC stream (and is "
                           "not one). JSON is accepted with that content-type by create/ "
                           "({\"schema\": ..., \"rows\": [...]}) and insert/ ([row objects]); "
                           "every write also takes an Arrow IPC stream");
  }
  if (!read.ok()) {
    return Status::Invalid(std::string(route) + ": the body is not a valid Arrow IPC stream: " +
                           read.status().message());
  }
  DecodedUpload out;
  out.schema = read->schema;
  for (auto& batch : read->batches) {
    if (batch->num_rows() == 0) continue;
    out.num_rows += batch->num_rows();
    out.batches.push_back(std::move(batch));
  }
  return out;
}

Status CheckVersion(uint64_t current, std::optional<uint64_t> requested, const std::string& table) {
  if (!requested || *requested == current) return Status::OK();
  if (*requested < current) {
    return Status::Invalid("table '" + table + "': version " + std::to_string(*requested) +
                           " was requested, but time travel is not supported yet: only the "
                           "current version " +
                           std::to_string(current) + " can be read (use checkoutLatest)");
  }
  return Status::NotFound("table '" + table + "' version " + std::to_string(*requested) +
                          " not found (the current version is " + std::to_string(current) + ")");
}

Status CheckVersion(const table::TableSnapshot& snapshot, std::optional<uint64_t> requested,
                    const std::string& table) {
  return CheckVersion(snapshot.version, requested, table);
}

}  // namespace strata::server
