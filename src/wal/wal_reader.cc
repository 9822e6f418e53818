#include "wal/wal_reader.h"

#include <spdlog/spdlog.h>

#include <set>

namespace strata::wal {

Result<WalReplaySummary> WalReader::Replay(io::ObjectStore& store, const std::string& shard_prefix,
                                           uint64_t start_position, const Visitor& visit) {
  if (start_position < 1) start_position = 1;
  const std::string dir = WalDir(shard_prefix);
  STRATA_ASSIGN_OR_RETURN(auto objects, store.List(dir));
  std::set<uint64_t> present;
  for (const auto& o : objects) {
    std::string name = o.key.substr(dir.size());
    auto pos = ParseWalEntryName(name);
    if (!pos) {
      if (name.find('/') == std::string::npos) {
        spdlog::warn("WAL of '{}': ignoring unexpected file '{}'", shard_prefix, name);
      }
      continue;
    }
    if (*pos >= start_position) present.insert(*pos);
  }
  WalReplaySummary summary;
  summary.max_position_present = present.empty() ? 0 : *present.rbegin();
  for (uint64_t p = start_position; present.count(p) != 0; ++p) {
    const std::string key = WalEntryKey(shard_prefix, p);
    auto bytes = store.Get(key);
    if (!bytes.ok()) {
      if (bytes.status().IsNotFound()) break;  // removed since the listing
      return bytes.status();
    }
    auto entry = DecodeWalEntry(p, std::move(bytes).value());
    if (!entry.ok()) {
      if (p < summary.max_position_present) {
        return Status::Corruption(entry.status().message() + " in '" + shard_prefix +
                                  "', and entries up to position " +
                                  std::to_string(summary.max_position_present) +
                                  " follow it: refusing to replay past lost data");
      }
      spdlog::warn("WAL of '{}': last entry {} is torn or corrupt ({}); replay ends at entry {}",
                   shard_prefix, p, entry.status().message(), p - 1);
      summary.torn_position = p;
      break;
    }
    summary.rows += entry->num_rows;
    ++summary.entries;
    summary.last_position = p;
    STRATA_RETURN_IF_ERROR(visit(std::move(entry).value()));
  }
  return summary;
}

}  // namespace strata::wal
