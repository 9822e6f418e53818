// update/ (PROTOCOL.md §5.3): {"updates": [["col", "sql expr"], ...], "predicate": sql|null}.
// One read-modify-write (Table::ReadModifyWrite): the live rows the predicate picks (all live
// rows when it is null or absent) get a new version in which each listed column holds its
// expression evaluated over the row's current values (expressions read the values before the
// update, like SQL UPDATE SET), converted to the column type with CAST semantics
// (filter::CastArray); the other columns, and the key (primary key, or the hidden `_rowid`),
// are kept, so the new version replaces the old one. Answer {"rows_updated", "version"}.
// Refused with 400 (nothing written): an unknown column, a hidden column, a primary-key column
// (as LanceDB), a column listed twice, an expression that does not parse or bind, a value that
// does not convert, a null for a non-nullable column.
// A value written as an array literal `[a, b, ...]` (what the LanceDB clients send for an array
// value) sets a list or vector column (list_literal.h).
#include <nlohmann/json.hpp>

#include <set>

#include "query/filter/evaluator.h"
#include "query/matched_rows.h"
#include "server/http_errors.h"
#include "server/list_literal.h"
#include "server/mutation_helpers.h"
#include "server/routes.h"
#include "server/write_limits.h"

namespace strata::server {

namespace {

struct UpdateRequest {
  std::vector<std::pair<std::string, std::string>> updates;  // column, SQL expression
  std::optional<std::string> predicate;
};

Result<UpdateRequest> ParseUpdateRequest(std::string_view text) {
  nlohmann::json body = nlohmann::json::parse(text, nullptr, false);
  const char* shape =
      "update: body must be {\"updates\": [[\"column\", \"sql expression\"], ...], "
      "\"predicate\": \"<sql>\" or null}";
  if (body.is_discarded() || !body.is_object() || !body.contains("updates") ||
      !body["updates"].is_array()) {
    return Status::Invalid(shape);
  }
  UpdateRequest out;
  const auto& updates = body["updates"];
  if (updates.empty()) return Status::Invalid("update: 'updates' is empty; list at least one");
  for (size_t i = 0; i < updates.size(); ++i) {
    const auto& u = updates[i];
    if (!u.is_array() || u.size() != 2 || !u[0].is_string() || !u[1].is_string()) {
      return Status::Invalid("update: updates[" + std::to_string(i) +
                             "] must be a pair [\"column\", \"sql expression\"]");
    }
    out.updates.emplace_back(u[0].get<std::string>(), u[1].get<std::string>());
  }
  if (body.contains("predicate") && !body["predicate"].is_null()) {
    if (!body["predicate"].is_string()) return Status::Invalid(shape);
    out.predicate = body["predicate"].get<std::string>();
  }
  return out;
}

/// One SET clause bound to the table: storage column index and expression.
struct BoundUpdate {
  int column = -1;
  arrow::FieldPtr field;
  query::filter::BoundExprPtr expr;                // null for an array literal
  std::vector<query::filter::Literal> list_items;  // an array literal `[a, b, ...]`
};

Result<std::vector<BoundUpdate>> BindUpdates(const UpdateRequest& request,
                                             const table::TableSnapshot& snap) {
  std::vector<BoundUpdate> out;
  std::set<std::string> seen;
  const arrow::Schema& schema = *snap.schema;
  for (const auto& [column, sql] : request.updates) {
    if (column == memtable::kRowIdColumn || column == memtable::kTombstoneColumn ||
        column == query::filter::kRowOffsetName) {
      return Status::Invalid("update: column '" + column + "' is hidden and cannot be updated");
    }
    const int idx = schema.GetFieldIndex(column);
    if (idx < 0) {
      std::string names;
      for (int i = 0; i < schema.num_fields(); ++i) {
        names += (i ? ", " : "") + schema.field(i)->name;
      }
      return Status::Invalid("update: unknown column '" + column + "'; columns are: " + names);
    }
    for (const auto& k : snap.key_columns) {
      if (k == column) {
        return Status::Invalid("update: column '" + column +
                               "' is part of the primary key and cannot be updated");
      }
    }
    if (!seen.insert(column).second) {
      return Status::Invalid("update: column '" + column + "' is listed twice");
    }
    query::filter::BindOptions options;
    options.require_bool = false;
    options.context = "update expression for '" + column + "'";
    if (IsListLiteral(sql)) {
      STRATA_ASSIGN_OR_RETURN(auto items, ParseListLiteral(sql, options.context));
      // Checked here, before anything is written: the column type and vector dimension.
      STRATA_RETURN_IF_ERROR(
          RepeatListLiteral(items, schema.field(idx)->type, 0, "column '" + column + "'").status());
      out.push_back({idx, schema.field(idx), nullptr, std::move(items)});
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(auto expr, query::filter::ParseAndBind(sql, schema, options));
    out.push_back({idx, schema.field(idx), std::move(expr), {}});
  }
  return out;
}

}  // namespace

void HandleUpdate(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<UpdateRequest> request = ParseUpdateRequest(req.body_view());
  if (!request.ok()) return SendError(res, request.status());
  if (request->predicate) {
    Status limit = CheckFilterBytes(ctx.options.limits, *request->predicate, "update: predicate");
    if (!limit.ok()) return SendError(res, limit);
  }
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  int64_t updated = 0;
  auto fn = [&](const table::TableSnapshot& snap) -> Result<table::Mutation> {
    updated = 0;
    STRATA_ASSIGN_OR_RETURN(auto updates, BindUpdates(*request, snap));
    query::SnapshotFilter filter;
    if (request->predicate) {
      STRATA_ASSIGN_OR_RETURN(filter,
                              query::SnapshotFilter::Make(*snap.shard, *request->predicate));
    }
    STRATA_ASSIGN_OR_RETURN(auto matched, query::MatchLiveRows(*snap.shard, filter));
    table::Mutation m;
    for (const auto& mb : matched) {
      const arrow::RecordBatch& rows = *mb.storage;
      std::vector<arrow::ArrayDataPtr> columns;
      for (int c = 0; c < rows.num_columns(); ++c) columns.push_back(rows.column_data(c));
      // Every expression reads the old values: evaluate all before replacing any column.
      for (const auto& u : updates) {
        const std::string what = "column '" + u.field->name + "'";
        arrow::ArrayDataPtr values;
        if (u.expr == nullptr) {
          STRATA_ASSIGN_OR_RETURN(
              values, RepeatListLiteral(u.list_items, u.field->type, rows.num_rows(), what));
        } else {
          HiddenValues hidden = HiddenValuesFor(*u.expr, *snap.shard, mb);
          STRATA_ASSIGN_OR_RETURN(values, query::filter::Evaluate(*u.expr, rows, hidden.context()));
          STRATA_ASSIGN_OR_RETURN(values, query::filter::CastArray(values, u.field->type, what));
        }
        if (!u.field->nullable && arrow::Array(values).null_count() > 0) {
          return Status::Invalid("update: " + what + " is not nullable but the expression gives " +
                                 std::to_string(arrow::Array(values).null_count()) + " nulls");
        }
        columns[static_cast<size_t>(u.column)] = std::move(values);
      }
      m.storage_rows.push_back(
          std::make_shared<arrow::RecordBatch>(rows.schema(), rows.num_rows(), std::move(columns)));
      updated += rows.num_rows();
    }
    // The rows this update rewrites, checked before the mutation is returned (nothing is
    // written when a limit is exceeded).
    STRATA_RETURN_IF_ERROR(CheckWrite(ctx.options.limits, nullptr, m.storage_rows, "update"));
    return m;
  };
  Result<uint64_t> version = (*t)->ReadModifyWrite(fn);
  if (!version.ok()) return SendError(res, version.status());
  // Committed: from here on only a 200 may be sent.
  nlohmann::json out = {{"rows_updated", updated}, {"version", *version}};
  SendJson(res, out.dump());
}

}  // namespace strata::server
