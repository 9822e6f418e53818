// LocalCatalog::OpenTables (GET /metrics), apart from local_catalog.cc.
#include <mutex>

#include "table/local_catalog.h"

namespace strata::table {

std::vector<OpenTable> LocalCatalog::OpenTables() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OpenTable> out;
  out.reserve(open_.size());
  // open_ is a map keyed by (database, name): already sorted.
  for (const auto& [key, table] : open_) out.push_back({key.first, key.second, table});
  return out;
}

}  // namespace strata::table
