#include "server/mutation_helpers.h"

#include <algorithm>
#include <cctype>

namespace strata::server {

Result<memtable::StorageLayout> StorageLayoutOf(const table::TableSnapshot& snapshot) {
  std::vector<std::string> pk = snapshot.key_columns;
  if (pk.size() == 1 && pk[0] == memtable::kRowIdColumn) pk.clear();
  return memtable::MakeStorageLayout(snapshot.schema, pk);
}

Result<bool> BoolParam(const httplib::Request& req, const std::string& name, bool fallback) {
  if (!req.has_param(name.c_str())) return fallback;
  std::string v = req.get_param_value(name.c_str());
  std::string lower = v;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "true") return true;
  if (lower == "false") return false;
  return Status::Invalid("query parameter '" + name + "' must be true or false, got '" +
                         v.substr(0, 40) + "'");
}

HiddenValues HiddenValuesFor(const query::filter::BoundExpr& expr,
                             const shard::ShardSnapshot& shard,
                             const query::MatchedBatch& matched) {
  HiddenValues out;
  if (expr.uses_row_id()) out.row_ids = query::MatchedRowIds(shard, matched);
  if (expr.uses_row_offset()) out.row_offsets = query::MatchedRowOffsets(shard, matched);
  return out;
}

}  // namespace strata::server
