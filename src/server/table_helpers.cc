#include "server/table_helpers.h"

#include "arrow/ipc/reader.h"

namespace strata::server {

Result<DecodedUpload> DecodeArrowUpload(const arrow::BufferPtr& body, const char* route) {
  if (body == nullptr || body->size() == 0) {
    return Status::Invalid(std::string(route) +
                           ": the request body is empty; expected an Arrow IPC stream");
  }
  Result<arrow::ipc::ReadResult> read = arrow::ipc::ReadStream(body);
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

Status CheckVersion(const table::TableSnapshot& snapshot, std::optional<uint64_t> requested,
                    const std::string& table) {
  if (!requested || *requested == snapshot.version) return Status::OK();
  return Status::NotFound("table '" + table + "' version " + std::to_string(*requested) +
                          " not found (this server keeps only the latest version, " +
                          std::to_string(snapshot.version) + ")");
}

}  // namespace strata::server
