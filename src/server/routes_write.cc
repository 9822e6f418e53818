// insert/ (PROTOCOL.md §5.3): an Arrow IPC stream (LZ4 batches, chunked), or with
// `content-type: application/json` a JSON array of row objects converted under the table
// schema. `?mode=overwrite` replaces rows and schema. Replies {"version": N}.
#include <nlohmann/json.hpp>

#include "arrow/json/rows_json.h"
#include "server/http_errors.h"
#include "server/routes.h"
#include "server/table_helpers.h"
#include "server/write_limits.h"

namespace strata::server {

namespace {

bool IsJsonContent(const httplib::Request& req) {
  const std::string ct = req.get_header_value("Content-Type");
  return ct.rfind("application/json", 0) == 0;
}

}  // namespace

void HandleInsert(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  bool overwrite = false;
  if (req.http->has_param("mode")) {
    const std::string m = req.http->get_param_value("mode");
    if (m == "overwrite") {
      overwrite = true;
    } else if (m != "append") {
      return SendError(res, Status::Invalid("mode must be append or overwrite, got '" + m + "'"));
    }
  }
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  table::Table& table = **t;

  DecodedUpload upload;
  if (IsJsonContent(*req.http)) {
    upload.schema = table.schema();
    Result<arrow::RecordBatchPtr> batch =
        arrow::json::ParseRowsJson(req.body_view(), upload.schema);
    if (!batch.ok()) return SendError(res, batch.status().WithContext("insert"));
    if ((*batch)->num_rows() > 0) {
      upload.num_rows = (*batch)->num_rows();
      upload.batches.push_back(std::move(*batch));
    }
  } else {
    Result<DecodedUpload> decoded = DecodeArrowUpload(req.body, "insert");
    if (!decoded.ok()) return SendError(res, decoded.status());
    upload = std::move(*decoded);
  }

  // Limits before anything is written (write_limits.h); an overwrite declares a new schema.
  Status limits = CheckWrite(ctx.options.limits, overwrite ? upload.schema.get() : nullptr,
                             upload.batches, "insert");
  if (!limits.ok()) return SendError(res, limits);

  uint64_t version = 0;
  if (overwrite) {
    Result<uint64_t> v = table.Overwrite(upload.schema, upload.batches);
    if (!v.ok()) return SendError(res, v.status());
    version = *v;
  } else if (upload.batches.empty()) {
    version = table.version();  // nothing to write
  } else {
    Result<uint64_t> v = table.Insert(upload.batches);
    if (!v.ok()) return SendError(res, v.status());
    version = *v;
  }
  // Committed: from here on only a 200 may be sent.
  SendJson(res, "{\"version\":" + std::to_string(version) + "}");
}

}  // namespace strata::server
