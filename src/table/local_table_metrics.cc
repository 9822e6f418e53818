// LocalTable::ShardStats (GET /metrics), apart from local_table.cc.
#include <mutex>
#include <shared_mutex>

#include "table/local_table.h"

namespace strata::table {

std::vector<shard::ShardWriterStats> LocalTable::ShardStats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (dropped_ || !shard_) return {};
  return {shard_->stats()};
}

}  // namespace strata::table
