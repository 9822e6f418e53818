// stats/ (PROTOCOL.md §5.1), no body:
//   {"total_bytes", "num_rows", "num_indices", "fragment_stats": {"num_fragments",
//    "num_small_fragments", "lengths": {"min","max","mean","p25","p50","p75","p99"}}}
// A fragment is one non-empty source of the table's shard (published SSTable, frozen or
// active MemTable; table::TableStats), its length the rows it physically holds (older
// versions and tombstones included, as Lance counts physical rows). num_rows is the live row
// count. The statistics follow LanceDB's native table stats (rust/lancedb/src/table.rs
// `stats`): a fragment is small below 100,000 rows; with the lengths sorted ascending and n
// of them, pX = lengths[n * X / 100] (p25 = lengths[n / 4], ...), mean is the integer mean,
// and every length figure is 0 when there is no fragment.
#include <nlohmann/json.hpp>

#include "server/http_errors.h"
#include "server/routes.h"

namespace strata::server {

/// Rows below which a fragment counts as small (LanceDB's native threshold).
inline constexpr int64_t kSmallFragmentRows = 100000;

void HandleStats(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  using nlohmann::json;
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  Result<table::TableStats> stats = (*t)->Stats();
  if (!stats.ok()) return SendError(res, stats.status());
  const std::vector<int64_t>& rows = stats->fragment_rows;  // ascending
  const size_t n = rows.size();
  auto at = [&rows, n](size_t i) -> int64_t { return n == 0 ? 0 : rows[std::min(i, n - 1)]; };
  int64_t sum = 0, small = 0;
  for (int64_t r : rows) {
    sum += r;
    if (r < kSmallFragmentRows) ++small;
  }
  json lengths = {{"min", at(0)},
                  {"max", n == 0 ? 0 : rows.back()},
                  {"mean", n == 0 ? 0 : sum / static_cast<int64_t>(n)},
                  {"p25", at(n / 4)},
                  {"p50", at(n / 2)},
                  {"p75", at(n * 3 / 4)},
                  {"p99", at(n * 99 / 100)}};
  json out = {{"total_bytes", stats->total_bytes},
              {"num_rows", stats->num_rows},
              {"num_indices", stats->num_indices},
              {"fragment_stats",
               {{"num_fragments", static_cast<int64_t>(n)},
                {"num_small_fragments", small},
                {"lengths", std::move(lengths)}}}};
  SendJson(res, out.dump());
}

}  // namespace strata::server
