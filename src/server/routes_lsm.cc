// set_lsm_write_spec/ and unset_lsm_write_spec/ (PROTOCOL.md §5.6; table/lsm_write_spec.h,
// docs/SHARDING.md).
#include "server/http_errors.h"
#include "server/routes.h"
#include "server/server_context.h"

namespace strata::server {

void SendLsmSpecError(httplib::Response& res, const Status& st) {
  // A spec this build cannot run (several shards) is a valid request for an unbuilt feature.
  if (st.code() == StatusCode::kNotSupported) {
    return SendError(res, 501, "not_implemented", st.message());
  }
  SendError(res, st);
}

void HandleSetLsmWriteSpec(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<table::LsmWriteSpec> spec = table::ParseLsmWriteSpec(req.body_view());
  if (!spec.ok()) return SendError(res, spec.status().WithContext("set_lsm_write_spec"));
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  Status st = (*t)->SetLsmWriteSpec(std::move(*spec));
  if (!st.ok()) return SendLsmSpecError(res, st.WithContext("set_lsm_write_spec"));
  SendJson(res, "{}");
}

void HandleUnsetLsmWriteSpec(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  Status st = (*t)->SetLsmWriteSpec(std::nullopt);
  if (!st.ok()) return SendLsmSpecError(res, st.WithContext("unset_lsm_write_spec"));
  SendJson(res, "{}");
}

}  // namespace strata::server
