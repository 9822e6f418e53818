#include "query/source_rows.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <optional>

#include "arrow/compute/gather.h"
#include "arrow/compute/take.h"
#include "common/strings.h"
#include "format/key_encoding.h"
#include "index/column_index.h"
#include "index/scalar/btree_index.h"
#include "query/filter/ast.h"
#include "query/index_candidates.h"

namespace strata::query {

namespace {

using filter::CompareOp;
using filter::Expr;
using filter::ExprKind;
using filter::Literal;

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

void SetBit(std::vector<uint8_t>& bits, int64_t i) {
  bits[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
}

std::string Plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

arrow::RecordBatchPtr UserView(const arrow::SchemaPtr& schema, const arrow::RecordBatch& batch) {
  const int n = schema->num_fields();
  std::vector<arrow::ArrayDataPtr> cols(batch.columns().begin(), batch.columns().begin() + n);
  return std::make_shared<arrow::RecordBatch>(schema, batch.num_rows(), std::move(cols));
}

// ---------------------------------------------------------------------------------------
// SnapshotFilter

Result<SnapshotFilter> SnapshotFilter::Make(const shard::ShardSnapshot& shard,
                                            std::string_view sql) {
  SnapshotFilter out;
  STRATA_ASSIGN_OR_RETURN(out.expr_, filter::ParseAndBind(sql, *shard.schema));
  out.row_offset_base_.assign(shard.sources.size() + 1, 0);
  for (size_t s = 0; s < shard.sources.size(); ++s) {
    out.row_offset_base_[s + 1] = out.row_offset_base_[s] + shard.sources[s].live_rows;
  }
  return out;
}

int64_t SnapshotFilter::row_offset_base(uint32_t source) const {
  return source < row_offset_base_.size() ? row_offset_base_[source] : 0;
}

// ---------------------------------------------------------------------------------------
// AcceptedRows

Result<AcceptedRows> AcceptedRows::Make(const shard::ShardSnapshot& shard, uint32_t source_index,
                                        const SnapshotFilter& filter) {
  AcceptedRows out;
  const shard::SourceView& source = shard.sources.at(source_index);
  out.source_ = &source;
  if (filter.empty()) {
    out.count_ = source.live_rows;
    return out;
  }
  out.filtered_ = true;
  if (source.live_rows == 0) {
    out.sparse_ = true;  // no position
    out.plan_ = "no live rows";
    return out;
  }
  const filter::BoundExpr& expr = *filter.expr();
  const bool need_ids = expr.uses_row_id();
  const bool need_offsets = expr.uses_row_offset();
  std::vector<const Expr*> conjuncts;
  FlattenAnd(expr.expr(), &conjuncts);
  std::string how;
  std::optional<std::vector<int64_t>> candidates =
      IndexCandidates(*shard.schema, source, conjuncts, &how);
  if (candidates) {
    std::vector<int64_t> live;
    live.reserve(candidates->size());
    for (int64_t p : *candidates) {
      if (source.IsLive(p)) live.push_back(p);
    }
    // Gathering most of the rows costs more than evaluating the batches as they are.
    if (static_cast<int64_t>(live.size()) * 2 > source.num_rows) {
      how += " matched " + std::to_string(live.size()) + " rows, not selective";
      candidates.reset();
    } else {
      *candidates = std::move(live);
    }
  }
  std::vector<uint8_t> match;
  std::vector<uint64_t> ids, offsets;
  filter::RowContext ctx;
  int64_t offset_base = filter.row_offset_base(source_index);  // live rows before the batch
  if (candidates) {
    // Evaluate the whole filter on the candidate rows only, batch by batch.
    size_t next = 0;
    std::vector<int64_t> rows;
    for (size_t b = 0; b < source.batches.size() && next < candidates->size(); ++b) {
      if (!need_offsets) {
        // Jump to the batch of the next candidate (a point query on a base of 1,000 batches
        // need not walk them all).
        const auto it = std::upper_bound(
            source.batch_starts.begin(),
            source.batch_starts.begin() + static_cast<std::ptrdiff_t>(source.batches.size()),
            (*candidates)[next]);
        const auto at = static_cast<size_t>(it - source.batch_starts.begin());
        if (at > b + 1) b = at - 1;
      }
      const arrow::RecordBatch& batch = *source.batches[b];
      const int64_t start = source.batch_starts[b];
      const int64_t end = start + batch.num_rows();
      rows.clear();
      while (next < candidates->size() && (*candidates)[next] < end) {
        rows.push_back((*candidates)[next++] - start);
      }
      std::vector<uint8_t> live;  // needed for `_rowoffset` only
      if (need_offsets) live = source.LiveBits(b);
      if (!rows.empty()) {
        const int64_t m = static_cast<int64_t>(rows.size());
        std::vector<arrow::ArrayDataPtr> cols(batch.columns().begin(),
                                              batch.columns().begin() + shard.schema->num_fields());
        for (int c : expr.columns()) {
          STRATA_ASSIGN_OR_RETURN(cols[static_cast<size_t>(c)],
                                  arrow::compute::Take(*batch.column_data(c), rows.data(), m));
        }
        // Unread columns keep the source's arrays: the evaluator never touches them.
        arrow::RecordBatch picked(shard.schema, m, std::move(cols));
        ids.clear();
        offsets.clear();
        if (need_ids) {
          for (int64_t r : rows) ids.push_back(RowIdOf(source, start + r));
          ctx.row_ids = ids.data();
        }
        if (need_offsets) {
          for (int64_t r : rows) {
            offsets.push_back(static_cast<uint64_t>(offset_base + CountBits(live, r)));
          }
          ctx.row_offsets = offsets.data();
        }
        STRATA_RETURN_IF_ERROR(filter::EvaluateMask(expr, picked, ctx, &match));
        for (int64_t i = 0; i < m; ++i) {
          if (match[static_cast<size_t>(i)] != 0) {
            out.positions_.push_back(start + rows[static_cast<size_t>(i)]);
          }
        }
      }
      if (need_offsets) offset_base += CountBits(live, batch.num_rows());
    }
    out.count_ = static_cast<int64_t>(out.positions_.size());
    // Many accepted rows: a bitmap answers Test in O(1) (filtered graph searches call it per
    // visited node); few: binary search over the positions, no per-row bitmap.
    if (out.count_ * 64 >= source.num_rows) {
      out.mask_.assign(static_cast<size_t>((source.num_rows + 7) / 8), 0);
      for (int64_t p : out.positions_) SetBit(out.mask_, p);
      out.positions_.clear();
      out.positions_.shrink_to_fit();
    } else {
      out.sparse_ = true;
    }
    out.plan_ = how + ": " + Plural(static_cast<int64_t>(candidates->size()), "candidate");
    return out;
  }
  out.mask_.assign(static_cast<size_t>((source.num_rows + 7) / 8), 0);
  int64_t evaluated = 0;
  for (size_t b = 0; b < source.batches.size(); ++b) {
    const arrow::RecordBatch& batch = *source.batches[b];
    const int64_t n = batch.num_rows();
    const int64_t start = source.batch_starts[b];
    const std::vector<uint8_t> live = source.LiveBits(b);
    const int64_t live_here = CountBits(live, n);
    if (live_here == 0) continue;
    if (need_ids) {
      ids.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = RowIdOf(source, start + i);
      ctx.row_ids = ids.data();
    }
    if (need_offsets) {
      offsets.resize(static_cast<size_t>(n));
      int64_t acc = offset_base;
      for (int64_t i = 0; i < n; ++i) {
        offsets[static_cast<size_t>(i)] = static_cast<uint64_t>(acc);
        if (BitIsSet(live, i)) ++acc;
      }
      ctx.row_offsets = offsets.data();
    }
    offset_base += live_here;
    STRATA_RETURN_IF_ERROR(filter::EvaluateMask(expr, *UserView(shard.schema, batch), ctx, &match));
    evaluated += n;
    for (int64_t i = 0; i < n; ++i) {
      if (match[static_cast<size_t>(i)] != 0 && BitIsSet(live, i)) {
        SetBit(out.mask_, start + i);
        ++out.count_;
      }
    }
  }
  out.plan_ = (how.empty() ? std::string() : how + "; ") + "filter evaluated over " +
              Plural(evaluated, "row");
  return out;
}

std::vector<int64_t> AcceptedRows::Positions() const {
  if (sparse_) return positions_;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count_));
  if (filtered_) {
    for (size_t byte = 0; byte < mask_.size(); ++byte) {
      unsigned v = mask_[byte];
      while (v != 0) {
        const int bit = std::countr_zero(v);
        out.push_back(static_cast<int64_t>(byte) * 8 + bit);
        v &= v - 1;
      }
    }
    return out;
  }
  for (size_t b = 0; b < source_->batches.size(); ++b) {
    const std::vector<uint8_t> live = source_->LiveBits(b);
    const int64_t n = source_->batches[b]->num_rows();
    const int64_t start = source_->batch_starts[b];
    for (size_t byte = 0; byte < live.size(); ++byte) {
      unsigned v = live[byte];
      while (v != 0) {
        const int bit = std::countr_zero(v);
        const int64_t i = static_cast<int64_t>(byte) * 8 + bit;
        if (i < n) out.push_back(start + i);
        v &= v - 1;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Gathering

namespace {

// Column `col` (user schema index) of `hits`, gathered.
Result<arrow::ArrayDataPtr> GatherColumn(const shard::ShardSnapshot& shard, int col,
                                         const std::vector<SourceHit>& hits) {
  std::vector<arrow::compute::Span> spans;
  spans.reserve(hits.size());
  for (const SourceHit& hit : hits) {
    const shard::SourceView& source = shard.sources.at(hit.source);
    const auto [b, row] = source.Locate(hit.position);
    if (b < 0) {
      return Status::Invalid("internal: row " + std::to_string(hit.position) +
                             " is outside source '" + source.name + "'");
    }
    arrow::compute::AddSpan(
        &spans, {source.batches[static_cast<size_t>(b)]->column_data(col).get(), row, 1});
  }
  return arrow::compute::GatherSpans(shard.schema->field(col)->type, spans);
}

// A batch of the user schema over `hits` in which the columns `expr` reads are gathered
// (cached in `gathered`); the other columns hold placeholder arrays it never reads.
Result<arrow::RecordBatchPtr> GatherForExpr(const shard::ShardSnapshot& shard,
                                            const filter::BoundExpr& expr,
                                            const std::vector<SourceHit>& hits,
                                            std::map<int, arrow::ArrayDataPtr>* gathered) {
  const int nf = shard.schema->num_fields();
  std::vector<arrow::ArrayDataPtr> cols(static_cast<size_t>(nf));
  for (int c : expr.columns()) {
    auto it = gathered->find(c);
    if (it == gathered->end()) {
      STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, GatherColumn(shard, c, hits));
      it = gathered->emplace(c, std::move(col)).first;
    }
    cols[static_cast<size_t>(c)] = it->second;
  }
  for (int c = 0; c < nf; ++c) {
    if (cols[static_cast<size_t>(c)] != nullptr) continue;
    for (const auto& s : shard.sources) {
      if (!s.batches.empty()) {
        cols[static_cast<size_t>(c)] = s.batches[0]->column_data(c);
        break;
      }
    }
    if (cols[static_cast<size_t>(c)] == nullptr) {
      STRATA_ASSIGN_OR_RETURN(cols[static_cast<size_t>(c)],
                              arrow::compute::GatherSpans(shard.schema->field(c)->type, {}));
    }
  }
  return std::make_shared<arrow::RecordBatch>(shard.schema, static_cast<int64_t>(hits.size()),
                                              std::move(cols));
}

}  // namespace

Result<std::vector<arrow::ArrayDataPtr>> GatherSourceRows(const shard::ShardSnapshot& shard,
                                                          const Projection& projection,
                                                          const std::vector<SourceHit>& hits) {
  std::vector<arrow::ArrayDataPtr> columns;
  columns.reserve(projection.indices.size());
  std::map<int, arrow::ArrayDataPtr> gathered;
  std::vector<uint64_t> ids, offsets;
  for (size_t c = 0; c < projection.indices.size(); ++c) {
    const filter::BoundExprPtr expr =
        c < projection.exprs.size() ? projection.exprs[c] : filter::BoundExprPtr();
    if (expr == nullptr) {
      const int src = projection.indices[c];
      auto it = gathered.find(src);
      if (it == gathered.end()) {
        STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, GatherColumn(shard, src, hits));
        it = gathered.emplace(src, std::move(col)).first;
      }
      columns.push_back(it->second);
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr batch,
                            GatherForExpr(shard, *expr, hits, &gathered));
    filter::RowContext ctx;
    if (expr->uses_row_id()) {
      if (ids.empty()) ids = SourceRowIds(shard, hits);
      ctx.row_ids = ids.data();
    }
    if (expr->uses_row_offset()) {
      if (offsets.empty()) offsets = SourceRowOffsets(shard, hits);
      ctx.row_offsets = offsets.data();
    }
    STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, filter::Evaluate(*expr, *batch, ctx));
    columns.push_back(std::move(col));
  }
  return columns;
}

Result<std::vector<uint8_t>> FilterHits(const shard::ShardSnapshot& shard,
                                        const SnapshotFilter& filter,
                                        const std::vector<SourceHit>& hits) {
  std::vector<uint8_t> out(hits.size(), 1);
  if (filter.empty() || hits.empty()) return out;
  std::map<int, arrow::ArrayDataPtr> gathered;
  STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr batch,
                          GatherForExpr(shard, *filter.expr(), hits, &gathered));
  std::vector<uint64_t> ids, offsets;
  filter::RowContext ctx;
  if (filter.expr()->uses_row_id()) {
    ids = SourceRowIds(shard, hits);
    ctx.row_ids = ids.data();
  }
  if (filter.expr()->uses_row_offset()) {
    offsets = SourceRowOffsets(shard, hits);
    ctx.row_offsets = offsets.data();
  }
  STRATA_RETURN_IF_ERROR(filter::EvaluateMask(*filter.expr(), *batch, ctx, &out));
  return out;
}

std::vector<uint64_t> SourceRowIds(const shard::ShardSnapshot& shard,
                                   const std::vector<SourceHit>& hits) {
  std::vector<uint64_t> out;
  out.reserve(hits.size());
  for (const SourceHit& hit : hits) {
    out.push_back(RowIdOf(shard.sources.at(hit.source), hit.position));
  }
  return out;
}

std::vector<uint64_t> SourceRowOffsets(const shard::ShardSnapshot& shard,
                                       const std::vector<SourceHit>& hits) {
  std::vector<uint64_t> out;
  out.reserve(hits.size());
  // Live rows of all older sources, and per source the live rows of its earlier batches
  // (computed on first use).
  std::vector<int64_t> source_base(shard.sources.size() + 1, 0);
  for (size_t s = 0; s < shard.sources.size(); ++s) {
    source_base[s + 1] = source_base[s] + shard.sources[s].live_rows;
  }
  std::map<uint32_t, std::vector<std::pair<int64_t, std::vector<uint8_t>>>> batch_base;
  for (const SourceHit& hit : hits) {
    const shard::SourceView& source = shard.sources.at(hit.source);
    const auto [b, row] = source.Locate(hit.position);
    if (b < 0) {
      out.push_back(0);
      continue;
    }
    auto it = batch_base.find(hit.source);
    if (it == batch_base.end()) {
      // Per batch: live rows before it, and its live bitmap.
      std::vector<std::pair<int64_t, std::vector<uint8_t>>> bases(source.batches.size());
      int64_t acc = 0;
      for (size_t i = 0; i < source.batches.size(); ++i) {
        bases[i].first = acc;
        bases[i].second = source.LiveBits(i);
        acc += CountBits(bases[i].second, source.batches[i]->num_rows());
      }
      it = batch_base.emplace(hit.source, std::move(bases)).first;
    }
    const auto& base = it->second[static_cast<size_t>(b)];
    const int64_t rank = source_base[hit.source] + base.first + CountBits(base.second, row);
    out.push_back(static_cast<uint64_t>(rank));
  }
  return out;
}

std::shared_ptr<const shard::ShardSnapshot> ShardOf(const table::TableSnapshot& snapshot) {
  if (snapshot.shard) return snapshot.shard;
  auto shard = std::make_shared<shard::ShardSnapshot>();  // a failed snapshot: no rows
  shard->schema = snapshot.schema;
  shard->storage_schema = snapshot.schema;
  shard->visibility = std::make_shared<shard::Visibility>();
  return shard;
}

}  // namespace strata::query
