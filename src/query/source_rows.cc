#include "query/source_rows.h"

#include <bit>
#include <map>

#include "arrow/compute/gather.h"
#include "query/query_result.h"

namespace strata::query {

namespace {

// Set bits of LSB-first `bits` in [0, n).
int64_t CountBits(const std::vector<uint8_t>& bits, int64_t n) {
  int64_t count = 0;
  const int64_t full = std::min<int64_t>(n >> 3, static_cast<int64_t>(bits.size()));
  for (int64_t i = 0; i < full; ++i) count += std::popcount(bits[static_cast<size_t>(i)]);
  if ((n & 7) != 0 && full < static_cast<int64_t>(bits.size())) {
    const unsigned mask = (1u << (n & 7)) - 1u;
    count += std::popcount(static_cast<unsigned>(bits[static_cast<size_t>(full)] & mask));
  }
  return count;
}

}  // namespace

AcceptedRows::AcceptedRows(const shard::SourceView& source, const BoundPredicate* filter)
    : source_(&source), filtered_(filter != nullptr) {
  if (!filtered_) {
    count_ = source.live_rows;
    return;
  }
  mask_.assign(static_cast<size_t>(source.num_rows), 0);
  std::vector<uint8_t> match;
  for (size_t b = 0; b < source.batches.size(); ++b) {
    const arrow::RecordBatch& batch = *source.batches[b];
    EvaluatePredicate(*filter, batch, &match);
    const int64_t start = source.batch_starts[b];
    const std::vector<uint8_t>& live = source.live[b];
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      if (match[static_cast<size_t>(i)] != 0 && BitIsSet(live, i)) {
        mask_[static_cast<size_t>(start + i)] = 1;
        ++count_;
      }
    }
  }
}

Result<std::vector<arrow::ArrayDataPtr>> GatherSourceRows(const shard::ShardSnapshot& shard,
                                                          const Projection& projection,
                                                          const std::vector<SourceHit>& hits) {
  std::vector<arrow::ArrayDataPtr> columns;
  columns.reserve(projection.indices.size());
  for (size_t c = 0; c < projection.indices.size(); ++c) {
    const int src = projection.indices[c];
    std::vector<arrow::compute::Span> spans;
    spans.reserve(hits.size());
    for (const SourceHit& hit : hits) {
      const shard::SourceView& source = shard.sources[hit.source];
      const auto [b, row] = source.Locate(hit.position);
      if (b < 0) {
        return Status::Invalid("internal: row " + std::to_string(hit.position) +
                               " is outside source '" + source.name + "'");
      }
      arrow::compute::AddSpan(
          &spans, {source.batches[static_cast<size_t>(b)]->column_data(src).get(), row, 1});
    }
    STRATA_ASSIGN_OR_RETURN(
        arrow::ArrayDataPtr col,
        arrow::compute::GatherSpans(projection.schema->field(static_cast<int>(c))->type, spans));
    columns.push_back(std::move(col));
  }
  return columns;
}

std::vector<uint64_t> SourceRowIds(const shard::ShardSnapshot& shard, int num_user_fields,
                                   const std::vector<SourceHit>& hits) {
  std::vector<uint64_t> out;
  out.reserve(hits.size());
  // Live rows of all older sources, and per source the live rows of its earlier batches
  // (computed on first use).
  std::vector<int64_t> source_base(shard.sources.size() + 1, 0);
  for (size_t s = 0; s < shard.sources.size(); ++s) {
    source_base[s + 1] = source_base[s] + shard.sources[s].live_rows;
  }
  std::map<uint32_t, std::vector<int64_t>> batch_base;
  for (const SourceHit& hit : hits) {
    const shard::SourceView& source = shard.sources[hit.source];
    const auto [b, row] = source.Locate(hit.position);
    if (b < 0) {
      out.push_back(0);
      continue;
    }
    const arrow::RecordBatch& batch = *source.batches[static_cast<size_t>(b)];
    const auto& storage = *batch.schema();
    if (storage.num_fields() > num_user_fields &&
        storage.field(num_user_fields)->name == kRowIdColumn &&
        storage.field(num_user_fields)->type->id() == arrow::TypeId::kUInt64) {
      out.push_back(arrow::Array(batch.column_data(num_user_fields)).Value<uint64_t>(row));
      continue;
    }
    auto it = batch_base.find(hit.source);
    if (it == batch_base.end()) {
      std::vector<int64_t> bases(source.batches.size(), 0);
      int64_t acc = 0;
      for (size_t i = 0; i < source.batches.size(); ++i) {
        bases[i] = acc;
        acc += CountBits(source.live[i], source.batches[i]->num_rows());
      }
      it = batch_base.emplace(hit.source, std::move(bases)).first;
    }
    const int64_t rank = source_base[hit.source] + it->second[static_cast<size_t>(b)] +
                         CountBits(source.live[static_cast<size_t>(b)], row);
    out.push_back(static_cast<uint64_t>(rank));
  }
  return out;
}

}  // namespace strata::query
