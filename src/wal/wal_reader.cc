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

  // Reads and decodes position p: the entry, NotFound when it vanished since the listing,
  // Corruption when unreadable.
  auto read = [&](uint64_t p) -> Result<WalEntry> {
    STRATA_ASSIGN_OR_RETURN(std::string bytes, store.Get(WalEntryKey(shard_prefix, p)));
    return DecodeWalEntry(p, std::move(bytes));
  };
  auto deliver = [&](WalEntry&& e) -> Status {
    summary.rows += e.num_rows;
    ++summary.entries;
    if (e.fence_sentinel) ++summary.fence_sentinels;
    summary.last_position = e.position;
    summary.last_writer_epoch = e.writer_epoch;
    summary.last_generation = e.generation;
    return visit(std::move(e));
  };

  uint64_t p = start_position;
  while (present.count(p) != 0) {
    auto entry = read(p);
    if (entry.ok()) {
      STRATA_RETURN_IF_ERROR(deliver(std::move(entry).value()));
      ++p;
      continue;
    }
    if (entry.status().IsNotFound()) break;  // removed since the listing
    if (!(entry.status().code() == StatusCode::kCorruption)) return entry.status();
    // An unreadable run starts at p: find its end and what follows it.
    const uint64_t run_first = p;
    Status first_error = entry.status();
    uint64_t q = p + 1;
    std::optional<WalEntry> after;
    for (; present.count(q) != 0; ++q) {
      auto next = read(q);
      if (next.ok()) {
        after = std::move(next).value();
        break;
      }
      if (next.status().IsNotFound()) break;
      if (!(next.status().code() == StatusCode::kCorruption)) return next.status();
    }
    const uint64_t run_last = q - 1;
    if (!after) {
      if (q <= summary.max_position_present) {
        return Status::Corruption(first_error.message() + " in '" + shard_prefix + "': positions " +
                                  std::to_string(run_first) + ".." + std::to_string(run_last) +
                                  " are unreadable, position " + std::to_string(q) +
                                  " is missing and entries up to " +
                                  std::to_string(summary.max_position_present) + " exist");
      }
      spdlog::warn(
          "WAL of '{}': last entries {}..{} are torn or corrupt ({}); replay ends at entry {}",
          shard_prefix, run_first, run_last, first_error.message(), run_first - 1);
      summary.torn_position = run_first;
      summary.torn_last_position = run_last;
      break;
    }
    if (!after->fence_sentinel || after->fence_skip_from == 0 ||
        after->fence_skip_from > run_first) {
      return Status::Corruption(first_error.message() + " in '" + shard_prefix +
                                "', and the entry at position " + std::to_string(q) +
                                " follows it without vouching for it (not a fence sentinel "
                                "skipping from <= " +
                                std::to_string(run_first) + "): refusing to replay past lost data");
    }
    spdlog::warn("WAL of '{}': skipping torn entries {}..{} (fence sentinel {} skips from {})",
                 shard_prefix, run_first, run_last, q, after->fence_skip_from);
    for (uint64_t s = run_first; s <= run_last; ++s) summary.skipped_positions.push_back(s);
    STRATA_RETURN_IF_ERROR(deliver(std::move(*after)));
    p = q + 1;
  }
  return summary;
}

}  // namespace strata::wal
