// count_rows/ and query/ (PROTOCOL.md §5.1, §5.2). query/ answers an uncompressed Arrow IPC
// FILE (ARROW1 magic and footer) holding the projected columns, `_distance` for vector
// searches, `_score` for full-text searches and `_rowid` when asked; with
// `accept: application/json` (curl users; the SDK sends `accept: */*`), a JSON array of row
// objects in the same column order instead (arrow/json/rows_json.h value forms: vectors as
// arrays of numbers).
#include <algorithm>
#include <cctype>

#include "arrow/builder.h"
#include "arrow/ipc/writer.h"
#include "arrow/json/rows_json.h"
#include "query/shard_pruning.h"
#include "server/http_errors.h"
#include "server/query_request.h"
#include "server/query_runner.h"
#include "server/routes.h"
#include "server/server_metrics.h"
#include "server/table_helpers.h"
#include "server/write_limits.h"

namespace strata::server {

void HandleCountRows(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<CountRowsRequest> parsed = ParseCountRowsRequest(req.body_view());
  if (!parsed.ok()) return SendError(res, parsed.status());
  if (parsed->predicate) {
    Status limit =
        CheckFilterBytes(ctx.options.limits, *parsed->predicate, "count_rows: predicate");
    if (!limit.ok()) return SendError(res, limit);
  }
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  ScopedQueryTimer timer(*ctx.metrics, req.database, req.route.table, "count_rows");
  const table::TableSnapshot snap = (*t)->Snapshot();
  Status st = CheckVersion(snap, parsed->version, req.route.table);
  if (!st.ok()) return SendError(res, st);
  // A table of several shards counts only the shards the predicate can match.
  Result<int64_t> count =
      query::CountRows(query::PruneShards(snap, parsed->predicate), parsed->predicate);
  if (!count.ok()) return SendError(res, count.status());
  SendJson(res, std::to_string(*count));
}

bool WantsJson(const httplib::Request& req) {
  // Any media range of the Accept header naming application/json exactly ("*/*" and
  // "application/*" keep the Arrow answer: that is what the LanceDB clients send).
  std::string accept = req.get_header_value("Accept");
  std::transform(accept.begin(), accept.end(), accept.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  size_t start = 0;
  while (start <= accept.size()) {
    size_t end = accept.find(',', start);
    if (end == std::string::npos) end = accept.size();
    std::string range = accept.substr(start, end - start);
    range = range.substr(0, range.find(';'));
    const size_t b = range.find_first_not_of(" \t");
    const size_t e = range.find_last_not_of(" \t");
    if (b != std::string::npos && range.substr(b, e - b + 1) == "application/json") return true;
    start = end + 1;
  }
  return false;
}

void HandleQuery(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<QueryRequest> parsed = ParseQueryRequest(req.body_view());
  if (!parsed.ok()) return SendError(res, parsed.status());
  Status limits = CheckQueryLimits(ctx.options.limits, *parsed);
  if (!limits.ok()) return SendError(res, limits);
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  ScopedQueryTimer timer(*ctx.metrics, req.database, req.route.table, QueryKind(*parsed));
  // A restarted table's first vector queries wait (bounded) for its base index checkpoints.
  if (const auto* v = std::get_if<query::VectorSearchOptions>(&parsed->plan);
      v != nullptr && !v->bypass_vector_index) {
    (*t)->AwaitIndexLoads(v->column);
  }
  const table::TableSnapshot snap = (*t)->Snapshot();
  Status st = CheckVersion(snap, parsed->version, req.route.table);
  if (!st.ok()) return SendError(res, st);

  Result<query::QueryResult> result = RunQuery(snap, *parsed);
  if (!result.ok()) return SendError(res, result.status());
  if (WantsJson(*req.http)) {
    std::string body = "[";
    bool first = true;
    for (const arrow::RecordBatchPtr& batch : result->batches) {
      arrow::json::AppendRowsJsonInColumnOrder(*batch, &body, &first);
    }
    body.push_back(']');
    res.status = 200;
    res.body = std::move(body);
    res.set_header("Content-Type", "application/json");
    return;
  }
  if (result->batches.empty()) {
    // Always send one batch, so readers see the columns even with no rows.
    arrow::RecordBatchBuilder empty(result->schema);
    Result<arrow::RecordBatchPtr> batch = empty.Finish();
    if (!batch.ok()) return SendError(res, batch.status());
    result->batches.push_back(std::move(*batch));
  }
  Result<std::string> file = arrow::ipc::WriteFile(*result->schema, result->batches);
  if (!file.ok()) return SendError(res, file.status());
  res.status = 200;
  res.body = std::move(*file);
  res.set_header("Content-Type", "application/vnd.apache.arrow.file");
}

}  // namespace strata::server
