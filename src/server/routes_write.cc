// insert/ (PROTOCOL.md §5.3): an Arrow IPC stream (LZ4 batches, chunked), or with
// `content-type: application/json` a JSON array of row objects converted under the table
// schema. `?mode=overwrite` replaces rows and schema. Replies {"version": N}.
#include <nlohmann/json.hpp>

#include "arrow/compute/take.h"
#include "arrow/json/rows_json.h"
#include "query/predicate.h"
#include "server/http_errors.h"
#include "server/routes.h"
#include "server/table_helpers.h"

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

namespace strata::server {

// delete/ (PROTOCOL.md §5.3): {"predicate": "col = literal"} -> tombstones for the keys of the
// matching live rows, durable before the answer; {"num_deleted_rows", "version"}.
void HandleDelete(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  nlohmann::json body = nlohmann::json::parse(req.body_view(), nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("predicate") ||
      !body["predicate"].is_string()) {
    return SendError(res, Status::Invalid("delete: body must be {\"predicate\": \"<sql>\"}"));
  }
  Result<query::EqualsPredicate> pred = query::ParsePredicate(body["predicate"].get<std::string>());
  if (!pred.ok()) return SendError(res, pred.status().WithContext("delete"));
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  const table::TableSnapshot snap = (*t)->Snapshot();
  Result<query::BoundPredicate> bound = query::BindPredicate(*pred, *snap.schema);
  if (!bound.ok()) return SendError(res, bound.status().WithContext("delete"));
  std::vector<arrow::RecordBatchPtr> keys;
  int64_t matched = 0;
  std::vector<uint8_t> mask;
  for (size_t i = 0; i < snap.batches.size(); ++i) {
    query::EvaluatePredicate(*bound, *snap.batches[i], &mask);
    std::vector<int64_t> rows;
    for (size_t r = 0; r < mask.size(); ++r) {
      if (mask[r]) rows.push_back(static_cast<int64_t>(r));
    }
    if (rows.empty()) continue;
    Result<arrow::RecordBatchPtr> taken = arrow::compute::TakeBatch(
        *snap.storage_batches[i], rows.data(), static_cast<int64_t>(rows.size()));
    if (!taken.ok()) return SendError(res, taken.status());
    matched += static_cast<int64_t>(rows.size());
    keys.push_back(std::move(*taken));
  }
  uint64_t version = snap.version;
  if (matched > 0) {
    Result<uint64_t> v = (*t)->Delete(keys);
    if (!v.ok()) return SendError(res, v.status());
    version = *v;
  }
  // Committed: from here on only a 200 may be sent.
  nlohmann::json out = {{"num_deleted_rows", matched}, {"version", version}};
  SendJson(res, out.dump());
}

}  // namespace strata::server
