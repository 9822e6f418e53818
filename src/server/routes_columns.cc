// add_columns/, alter_columns/, drop_columns/ (PROTOCOL.md §5.3): each parses its body, then
// runs one Table::RewriteColumns whose plan (column_changes.h) is made from the snapshot taken
// under the table's write lock, so a concurrent write or schema change is never lost. Answer
// {"version": N}. Bad input is 400 invalid_input naming the field (nothing changes); a missing
// table 404.
#include <nlohmann/json.hpp>

#include "server/column_changes.h"
#include "server/http_errors.h"
#include "server/routes.h"
#include "server/write_limits.h"

namespace strata::server {

namespace {

template <typename Request, typename Planner>
void RunRewrite(ServerContext& ctx, const TableRequest& req, httplib::Response& res,
                const Result<Request>& request, Planner plan) {
  if (!request.ok()) return SendError(res, request.status());
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  Result<uint64_t> version =
      (*t)->RewriteColumns([&](const table::RewriteSource& source) -> Result<table::ColumnRewrite> {
        STRATA_ASSIGN_OR_RETURN(table::ColumnRewrite rewrite, plan(*request, source));
        // The new schema's vector widths (write_limits.h), before anything is written.
        if (rewrite.schema != nullptr) {
          STRATA_RETURN_IF_ERROR(
              CheckSchemaLimits(ctx.options.limits, *rewrite.schema, req.route.action));
        }
        return rewrite;
      });
  if (!version.ok()) return SendError(res, version.status());
  // Committed: from here on only a 200 may be sent.
  SendJson(res, nlohmann::json{{"version", *version}}.dump());
}

}  // namespace

void HandleAddColumns(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  // The new columns' values are written like an insert's: each string/binary value against
  // --max-string-bytes (a literal or an expression could otherwise store any size). Only the
  // appended columns are checked, so existing rows never fail a since-lowered limit.
  const RequestLimits& limits = ctx.options.limits;
  auto plan = [&limits](const std::vector<NewColumn>& columns,
                        const table::RewriteSource& source) -> Result<table::ColumnRewrite> {
    STRATA_ASSIGN_OR_RETURN(table::ColumnRewrite rewrite, PlanAddColumns(columns, source));
    const int old_fields = source.snapshot.schema->num_fields();
    std::vector<arrow::FieldPtr> added(rewrite.schema->fields().begin() + old_fields,
                                       rewrite.schema->fields().end());
    auto added_schema = std::make_shared<arrow::Schema>(std::move(added));
    rewrite.transform = [inner = std::move(rewrite.transform), added_schema, old_fields, &limits](
                            const arrow::RecordBatchPtr& batch,
                            size_t index) -> Result<arrow::RecordBatchPtr> {
      STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr out, inner(batch, index));
      std::vector<arrow::ArrayDataPtr> columns(out->columns().begin() + old_fields,
                                               out->columns().end());
      auto values =
          std::make_shared<arrow::RecordBatch>(added_schema, out->num_rows(), std::move(columns));
      STRATA_RETURN_IF_ERROR(CheckStringValues(limits, {values}, "add_columns"));
      return out;
    };
    return rewrite;
  };
  RunRewrite(ctx, req, res, ParseAddColumns(req.body_view()), plan);
}

void HandleAlterColumns(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  RunRewrite(ctx, req, res, ParseAlterColumns(req.body_view()), PlanAlterColumns);
}

void HandleDropColumns(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  RunRewrite(ctx, req, res, ParseDropColumns(req.body_view()), PlanDropColumns);
}

}  // namespace strata::server
