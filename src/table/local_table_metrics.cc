// LocalTable::ShardStats (GET /metrics), apart from local_table.cc.
#include <mutex>
#include <shared_mutex>

#include "table/local_table.h"

namespace strata::table {

std::vector<shard::ShardWriterStats> LocalTable::ShardStats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<shard::ShardWriterStats> out;
  if (dropped_) return out;
  for (const auto& w : shards_) out.push_back(w->stats());
  return out;
}

}  // namespace strata::table
