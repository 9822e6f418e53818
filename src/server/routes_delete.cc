// delete/ (PROTOCOL.md §5.3): {"predicate": "<sql filter>"} -> tombstones for the keys of the
// matching live rows, written as one read-modify-write (Table::ReadModifyWrite: no write of
// the table lands between the read and the tombstones), durable before the answer
// {"num_deleted_rows", "version"}. The predicate is any SQL filter (query/filter/), bound
// against the table schema; `_rowid` and `_rowoffset` may be used.
#include <nlohmann/json.hpp>

#include "query/matched_rows.h"
#include "server/http_errors.h"
#include "server/mutation_helpers.h"
#include "server/routes.h"
#include "server/write_limits.h"

namespace strata::server {

void HandleDelete(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  nlohmann::json body = nlohmann::json::parse(req.body_view(), nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("predicate") ||
      !body["predicate"].is_string()) {
    return SendError(res, Status::Invalid("delete: body must be {\"predicate\": \"<sql>\"}"));
  }
  const std::string predicate = body["predicate"].get<std::string>();
  Status limit = CheckFilterBytes(ctx.options.limits, predicate, "delete: predicate");
  if (!limit.ok()) return SendError(res, limit);
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  int64_t deleted = 0;
  auto fn = [&](const table::TableSnapshot& snap) -> Result<table::Mutation> {
    deleted = 0;
    STRATA_ASSIGN_OR_RETURN(auto filter, query::SnapshotFilter::Make(*snap.shard, predicate));
    STRATA_ASSIGN_OR_RETURN(auto matched, query::MatchLiveRows(*snap.shard, filter));
    STRATA_ASSIGN_OR_RETURN(auto layout, StorageLayoutOf(snap));
    table::Mutation m;
    for (const auto& mb : matched) {
      std::vector<int64_t> all(static_cast<size_t>(mb.storage->num_rows()));
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
      STRATA_ASSIGN_OR_RETURN(auto tombstones, memtable::MakeTombstones(layout, *mb.storage, all));
      deleted += mb.storage->num_rows();
      m.storage_rows.push_back(std::move(tombstones));
    }
    return m;
  };
  Result<uint64_t> version = (*t)->ReadModifyWrite(fn);
  if (!version.ok()) return SendError(res, version.status().WithContext("delete"));
  // Committed: from here on only a 200 may be sent.
  nlohmann::json out = {{"num_deleted_rows", deleted}, {"version", *version}};
  SendJson(res, out.dump());
}

}  // namespace strata::server
