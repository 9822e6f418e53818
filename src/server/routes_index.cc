// Index routes of PROTOCOL.md §5.4 on top of table::Table's index API:
//   create_index/        body parsed by ParseCreateIndexRequest -> Table::CreateIndex; 200 {}
//   index/list/          {"indexes":[{"index_name", "columns":[column], "index_type",
//                        "num_indexed_rows", "num_unindexed_rows", "index_uuid",
//                        "created_at" (epoch ms), "size_bytes"}]}
//   index/{n}/stats/     {"num_indexed_rows", "num_unindexed_rows", "index_type",
//                        "distance_type" and "memtable_index_type": "HNSW" (vector indexes),
//                        "num_indices": 1, "base_index" (what the base table really built,
//                        once it has: {"index_type": IVF_FLAT|IVF_PQ|IVF_SQ|HNSW|BTREE|FTS,
//                        "rows", "memory_bytes", IVF: "num_partitions", "trained_rows",
//                        PQ: "num_sub_vectors", "num_bits"; HNSW: "m", "ef_construction"})}
//   index/{n}/drop/      200 {}
//   index/{n}/prewarm/   200 {} (MemTable and SSTable indexes are always resident)
// `index_type` is the type the index was created with (IndexSpec::requested_type). An unknown
// index name is 404 `index_not_found` (the client reads it as IndexNotFound, or as "no index"
// for stats/); an unknown table is 404 `table_not_found`. index/list/ and stats/ accept
// {"version": null|N} with the version rule of table_helpers.h CheckVersion (older: 400 "time
// travel is not supported yet"; newer: 404, as describe/).
#include <nlohmann/json.hpp>

#include "index/vector/distance.h"
#include "server/create_index_request.h"
#include "server/http_errors.h"
#include "server/query_request.h"
#include "server/routes.h"
#include "server/table_helpers.h"

namespace strata::server {

namespace {

using nlohmann::json;

void SendIndexNotFound(httplib::Response& res, const std::string& table, const std::string& name) {
  SendError(res, 404, "index_not_found", "index '" + name + "' not found on table '" + table + "'");
}

// The table of `req`, with the body's optional {"version"} checked against its version.
Result<std::shared_ptr<table::Table>> TableAtVersion(ServerContext& ctx, const TableRequest& req) {
  STRATA_ASSIGN_OR_RETURN(std::optional<uint64_t> version, ParseDescribeRequest(req.body_view()));
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<table::Table> t,
                          ctx.catalog->GetTable(req.database, req.route.table));
  STRATA_RETURN_IF_ERROR(CheckVersion(t->version(), version, req.route.table));
  return t;
}

std::optional<table::IndexStatus> FindIndex(const table::Table& t, const std::string& name) {
  for (auto& s : t.ListIndexes()) {
    if (s.spec.name == name) return std::move(s);
  }
  return std::nullopt;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

void HandleCreateIndex(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  arrow::SchemaPtr schema = (*t)->schema();
  Result<index::IndexSpec> spec = ParseCreateIndexRequest(req.body_view(), *schema);
  if (!spec.ok()) return SendError(res, spec.status());
  Result<index::IndexSpec> created = (*t)->CreateIndex(std::move(*spec));
  if (!created.ok()) return SendError(res, created.status().WithContext("create_index"));
  SendJson(res, "{}");
}

void HandleListIndexes(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = TableAtVersion(ctx, req);
  if (!t.ok()) return SendError(res, t.status());
  json indexes = json::array();
  for (const table::IndexStatus& s : (*t)->ListIndexes()) {
    indexes.push_back({{"index_name", s.spec.name},
                       {"columns", json::array({s.spec.column})},
                       {"index_type", s.spec.requested_type},
                       {"num_indexed_rows", s.num_indexed_rows},
                       {"num_unindexed_rows", s.num_unindexed_rows},
                       {"index_uuid", s.spec.uuid},
                       {"created_at", s.spec.created_at_micros / 1000},
                       {"size_bytes", s.size_bytes}});
  }
  SendJson(res, Dump(json{{"indexes", indexes}}));
}

void HandleIndexStats(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = TableAtVersion(ctx, req);
  if (!t.ok()) return SendError(res, t.status());
  std::optional<table::IndexStatus> s = FindIndex(**t, req.route.index_name);
  if (!s) return SendIndexNotFound(res, req.route.table, req.route.index_name);
  json out = {{"num_indexed_rows", s->num_indexed_rows},
              {"num_unindexed_rows", s->num_unindexed_rows},
              {"index_type", s->spec.requested_type},
              {"num_indices", 1}};
  if (s->spec.kind == index::IndexKind::kHnsw) {
    out["distance_type"] = index::DistanceTypeName(s->spec.hnsw.distance);
    out["memtable_index_type"] = "HNSW";  // MemTables and SSTables
  }
  if (s->base.has_value()) {
    const table::BaseIndexBuilt& b = *s->base;
    json base = {{"index_type", b.type}, {"rows", b.rows}, {"memory_bytes", b.memory_bytes}};
    if (b.num_partitions > 0) {
      base["num_partitions"] = b.num_partitions;
      base["trained_rows"] = b.trained_rows;
    }
    if (b.num_sub_vectors > 0) {
      base["num_sub_vectors"] = b.num_sub_vectors;
      base["num_bits"] = b.num_bits;
    }
    if (b.m > 0) {
      base["m"] = b.m;
      base["ef_construction"] = b.ef_construction;
    }
    out["base_index"] = std::move(base);
  }
  SendJson(res, Dump(out));
}

void HandleDropIndex(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  Status st = (*t)->DropIndex(req.route.index_name);
  if (st.IsNotFound()) return SendIndexNotFound(res, req.route.table, req.route.index_name);
  if (!st.ok()) return SendError(res, st.WithContext("index/" + req.route.index_name + "/drop"));
  SendJson(res, "{}");
}

void HandlePrewarmIndex(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  if (!FindIndex(**t, req.route.index_name)) {
    return SendIndexNotFound(res, req.route.table, req.route.index_name);
  }
  SendJson(res, "{}");
}

}  // namespace strata::server
