// Route handlers of PROTOCOL.md, grouped by concern (routes_tables.cc: list/create/drop/
// describe; routes_write.cc: insert; routes_read.cc: count_rows/query; routes_index.cc: the
// index routes). The router
// (router.cc) reads the body, resolves database and table, and calls these.
// Every handler fills `res` completely: 2xx with a body, or a JSON error (http_errors.h).
// Writes never answer 5xx once the write committed (PROTOCOL.md §0 rule 4).
// Thread-safety: handlers run concurrently on the HTTP worker threads; they share only the
// thread-safe ServerContext::catalog.
#pragma once

#include <string>

#include <httplib.h>

#include "arrow/buffer.h"
#include "server/request_context.h"
#include "server/server_context.h"

namespace strata::server {

/// One table-scoped request: database, route (table + action), and the whole body.
struct TableRequest {
  const httplib::Request* http = nullptr;
  std::string database;
  TableRoute route;
  arrow::BufferPtr body;  // never null (empty when there was no body)

  std::string_view body_view() const { return body->view(); }
};

/// GET /readyz (routes_health.cc): whether this server is ready for reads and for writes,
/// with the reasons it is not (shutting down, free space below the floor, a poisoned or
/// fenced shard writer, a table that cannot be opened, and since when). 200 when ready for
/// reads and writes (`?for=reads`: when ready for reads), else 503; 400 for another `for`.
/// `detailed` false (API keys set, no valid key presented): reasons name no table and carry no
/// error message.
void HandleReadyz(ServerContext& ctx, const httplib::Request& req, httplib::Response& res,
                  bool detailed);

/// GET /v1/table/?limit=N&page_token=NAME -> {"tables":[...], "page_token"?}.
void HandleListTables(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

void HandleCreate(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleDrop(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleDescribe(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleInsert(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleCountRows(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleQuery(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// Read-modify-write routes of PROTOCOL.md §5.3, each one Table::ReadModifyWrite (one WAL
/// entry, no lost concurrent update): delete/ by any SQL filter -> tombstones
/// (routes_delete.cc); update/ [column, SQL expression] pairs + predicate -> replacement
/// versions (routes_update.cc); merge_insert/ upsert of an Arrow upload matched on one column
/// (routes_merge_insert.cc).
void HandleDelete(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleUpdate(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleMergeInsert(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// explain_plan/ ({"verbose", "query": {..}}) and analyze_plan/ (the query body): a JSON string
/// naming each source and whether it used an index or an exact scan (routes_explain.cc).
void HandleExplainPlan(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleAnalyzePlan(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// flush/ and mem_wal/describe/ (PROTOCOL.md §0 extensions, routes_mem_wal.cc).
void HandleFlush(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleMemWalDescribe(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// set_lsm_write_spec/ (JSON body, PROTOCOL.md §5.6) and unset_lsm_write_spec/ (no body)
/// (routes_lsm.cc): 200 {}; 400 naming the field for a bad spec, or "no LSM write spec" for an
/// unset without one; 501 `not_implemented` for a spec that needs several shards.
void HandleSetLsmWriteSpec(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleUnsetLsmWriteSpec(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// SendError, but NotSupported (a multi-shard spec) is 501 `not_implemented`.
void SendLsmSpecError(httplib::Response& res, const Status& st);
/// compact/ (DESIGN.md §7): one bounded compaction now; 409 compaction_running when one runs.
void HandleCompact(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// Index routes of PROTOCOL.md §5.4 (routes_index.cc): create_index/, index/list/,
/// index/{n}/stats/, index/{n}/drop/, index/{n}/prewarm/ ({n} = req.route.index_name). An
/// unknown index is 404 `index_not_found`.
void HandleCreateIndex(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleListIndexes(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleIndexStats(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleDropIndex(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandlePrewarmIndex(ServerContext& ctx, const TableRequest& req, httplib::Response& res);

/// Schema evolution of PROTOCOL.md §5.3 (routes_columns.cc, rules in column_changes.h):
/// add_columns/ (SQL expressions), alter_columns/ (rename, nullable, data_type), drop_columns/;
/// each one Table::RewriteColumns; answer {"version": N}.
void HandleAddColumns(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleAlterColumns(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleDropColumns(ServerContext& ctx, const TableRequest& req, httplib::Response& res);

/// Versions (routes_versions.cc): version/list/ -> {"versions":[{"version","timestamp"
/// (RFC 3339, UTC),"metadata":{}}]} with the current version; restore/ {"version":N|null}:
/// null or current -> 200 {"version":current}, older -> 400 "time travel is not supported
/// yet", newer -> 404.
void HandleListVersions(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleRestore(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// Tags (routes_tags.cc): tags/list/ -> bare map {"tag":{"version","manifestSize"}};
/// tags/version/ {"tag"} -> {"version"}; tags/create/ and tags/update/ {"tag","version"},
/// tags/delete/ {"tag"} -> 200 {}. Every tag error (unknown tag, existing tag, bad version or
/// name) is 400 invalid_input naming the tag.
void HandleListTags(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleTagVersion(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleCreateTag(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleUpdateTag(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
void HandleDeleteTag(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// stats/ (routes_stats.cc): {"total_bytes","num_rows","num_indices","fragment_stats":{..}}.
void HandleStats(ServerContext& ctx, const TableRequest& req, httplib::Response& res);
/// rename/ (routes_rename.cc) {"new_table_name","new_namespace"?} -> Catalog::RenameTable;
/// 200 {}; 404 for a missing table; 400 for a bad name or an existing target.
void HandleRename(ServerContext& ctx, const TableRequest& req, httplib::Response& res);

/// 200 with a compact JSON body.
void SendJson(httplib::Response& res, const std::string& body);

}  // namespace strata::server
