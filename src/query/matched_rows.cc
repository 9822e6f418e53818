#include "query/matched_rows.h"

#include "arrow/compute/take.h"

namespace strata::query {

Result<std::vector<MatchedBatch>> MatchLiveRows(const shard::ShardSnapshot& shard,
                                                const SnapshotFilter& filter) {
  std::vector<MatchedBatch> out;
  for (uint32_t s = 0; s < shard.sources.size(); ++s) {
    const shard::SourceView& src = shard.sources[s];
    if (src.live_rows == 0) continue;
    STRATA_ASSIGN_OR_RETURN(AcceptedRows accepted, AcceptedRows::Make(shard, s, filter));
    if (accepted.count() == 0) continue;
    MatchedBatch cur;
    cur.batch = -1;
    auto finish = [&]() -> Status {
      if (cur.batch < 0 || cur.rows.empty()) return Status::OK();
      const auto& batch = src.batches[static_cast<size_t>(cur.batch)];
      STRATA_ASSIGN_OR_RETURN(cur.storage,
                              arrow::compute::TakeBatch(*batch, cur.rows.data(),
                                                        static_cast<int64_t>(cur.rows.size())));
      out.push_back(std::move(cur));
      cur = MatchedBatch();
      cur.batch = -1;
      return Status::OK();
    };
    for (int64_t p : accepted.Positions()) {
      const auto [b, r] = src.Locate(p);
      if (b < 0) continue;
      if (b != cur.batch) {
        STRATA_RETURN_IF_ERROR(finish());
        cur.source = s;
        cur.batch = b;
      }
      cur.rows.push_back(r);
      cur.positions.push_back(p);
    }
    STRATA_RETURN_IF_ERROR(finish());
  }
  return out;
}

std::vector<uint64_t> MatchedRowIds(const shard::ShardSnapshot& shard,
                                    const MatchedBatch& matched) {
  const shard::SourceView& source = shard.sources[matched.source];
  std::vector<uint64_t> ids;
  ids.reserve(matched.positions.size());
  for (int64_t p : matched.positions) ids.push_back(RowIdOf(source, p));
  return ids;
}

std::vector<uint64_t> MatchedRowOffsets(const shard::ShardSnapshot& shard,
                                        const MatchedBatch& matched) {
  uint64_t base = 0;
  for (uint32_t s = 0; s < matched.source; ++s) {
    base += static_cast<uint64_t>(shard.sources[s].live_rows);
  }
  const shard::SourceView& src = shard.sources[matched.source];
  std::vector<uint64_t> offsets;
  offsets.reserve(matched.positions.size());
  int64_t next = 0;  // positions below `next` are counted into `base`
  for (int64_t p : matched.positions) {
    for (; next < p; ++next) base += src.IsLive(next) ? 1 : 0;
    offsets.push_back(base);
  }
  return offsets;
}

}  // namespace strata::query
