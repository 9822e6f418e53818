#include "query/vector_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "arrow/compute/gather.h"
#include "index/vector/exact_search.h"
#include "index/vector/hnsw_index.h"
#include "query/result_columns.h"
#include "query/source_rows.h"

namespace strata::query {

namespace {

struct Candidate {
  float distance;
  int32_t batch;
  int64_t row;       // row inside the batch
  int64_t position;  // row position in the snapshot
};

// Max-heap order on (distance, position): the heap top is the worst kept candidate.
inline bool Better(const Candidate& a, const Candidate& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.position < b.position);
}

bool IsFloatVectorType(const arrow::DataType& type) {
  return type.id() == arrow::TypeId::kFixedSizeList &&
         type.value_type()->id() == arrow::TypeId::kFloat32;
}

bool IsVectorLike(const arrow::DataType& type) {
  return type.id() == arrow::TypeId::kFixedSizeList && type.value_type()->is_floating();
}

// One candidate of the per-source search.
struct SourceCandidate {
  float distance;
  uint32_t source;
  int64_t position;
};

// Merge order: distance, then older source, then lower position.
inline bool SourceBetter(const SourceCandidate& a, const SourceCandidate& b) {
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.source != b.source) return a.source < b.source;
  return a.position < b.position;
}

std::string FormatFraction(double f) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", f);
  return buf;
}

// The per-source algorithm of vector_search.h over snapshot.shard.
Result<QueryResult> SearchSources(const table::TableSnapshot& snapshot,
                                  const VectorSearchOptions& options, int vcol, int64_t dim,
                                  const Projection& projection,
                                  const std::optional<BoundPredicate>& filter) {
  const shard::ShardSnapshot& shard = *snapshot.shard;
  const std::string& vname = snapshot.schema->field(vcol)->name;
  const int num_user_fields = snapshot.schema->num_fields();
  int64_t want = options.k;
  if (options.offset > std::numeric_limits<int64_t>::max() - want) {
    want = std::numeric_limits<int64_t>::max();
  } else {
    want += options.offset;
  }
  STRATA_ASSIGN_OR_RETURN(index::ExactSearcher searcher,
                          index::ExactSearcher::Make(options.query.data(), dim, options.distance));
  // The HNSW definition on this column, if any (to explain sources that lack it).
  const index::IndexSpec* hnsw_spec = nullptr;
  for (const index::IndexSpec& spec : shard.index_specs) {
    if (spec.kind == index::IndexKind::kHnsw && spec.column == vname) hnsw_spec = &spec;
  }

  QueryResult result;
  std::vector<SourceCandidate> candidates;
  for (size_t s = 0; s < shard.sources.size(); ++s) {
    const shard::SourceView& source = shard.sources[s];
    const AcceptedRows accepted(source, filter ? &*filter : nullptr);
    if (accepted.count() == 0) {
      result.plan.push_back(source.name + ": skipped, " +
                            (source.live_rows == 0 ? std::string("no live rows")
                                                   : std::string("no live row passes the filter")));
      continue;
    }
    const int64_t source_want = std::min(want, accepted.count());
    const auto accept = [&accepted](int64_t label) { return accepted.Test(label); };
    const index::ColumnIndex* ci =
        options.bypass_vector_index ? nullptr : source.FindIndex(vcol, index::IndexKind::kHnsw);
    std::string why_exact;
    if (options.bypass_vector_index) {
      why_exact = "bypass_vector_index";
    } else if (ci == nullptr || ci->hnsw() == nullptr) {
      why_exact = hnsw_spec == nullptr
                      ? "no HNSW on '" + vname + "'"
                      : "HNSW '" + hnsw_spec->name + "' not built for this source yet";
    } else if (ci->spec().hnsw.distance != options.distance) {
      why_exact = "HNSW '" + ci->spec().name + "' uses " +
                  DistanceTypeName(ci->spec().hnsw.distance) + ", the query " +
                  DistanceTypeName(options.distance);
    } else if (static_cast<double>(accepted.count()) <
               index::kExactSearchMaxFraction * static_cast<double>(source.num_rows)) {
      why_exact = "HNSW '" + ci->spec().name + "' skipped: " + std::to_string(accepted.count()) +
                  " of " + std::to_string(source.num_rows) + " rows accepted (< " +
                  FormatFraction(index::kExactSearchMaxFraction) + ")";
    }
    if (why_exact.empty()) {
      const int64_t ef = options.ef.value_or(index::DefaultEf(source_want));
      STRATA_ASSIGN_OR_RETURN(std::vector<index::Neighbor> found,
                              ci->hnsw()->Search(options.query.data(), source_want, ef, accept));
      for (const index::Neighbor& n : found) {
        // The index may hold rows newer than the snapshot: accept() already rejected them.
        candidates.push_back({n.distance, static_cast<uint32_t>(s), n.label});
      }
      result.plan.push_back(source.name + ": HNSW '" + ci->spec().name +
                            "' ef=" + std::to_string(std::max(ef, source_want)) + ", " +
                            std::to_string(found.size()) + " candidates" +
                            (filter ? " (filtered)" : ""));
      continue;
    }
    index::TopK top(source_want);
    for (size_t b = 0; b < source.batches.size(); ++b) {
      STRATA_RETURN_IF_ERROR(
          searcher.Scan(source.batches[b]->column(vcol), source.batch_starts[b], &top, accept));
    }
    for (const index::Neighbor& n : top.Sorted()) {
      candidates.push_back({n.distance, static_cast<uint32_t>(s), n.label});
    }
    result.plan.push_back(source.name + ": exact scan of " + std::to_string(accepted.count()) +
                          " rows (" + why_exact + ")");
  }

  std::sort(candidates.begin(), candidates.end(), SourceBetter);
  const size_t skip = static_cast<size_t>(
      std::min<int64_t>(options.offset, static_cast<int64_t>(candidates.size())));
  const size_t end = static_cast<size_t>(
      std::min<int64_t>(static_cast<int64_t>(candidates.size()),
                        static_cast<int64_t>(skip) + std::min<int64_t>(options.k, 1ll << 40)));
  std::vector<SourceHit> hits;
  std::vector<float> distances;
  for (size_t r = skip; r < end; ++r) {
    hits.push_back({candidates[r].source, candidates[r].position});
    distances.push_back(candidates[r].distance);
  }
  const int64_t out_rows = static_cast<int64_t>(hits.size());
  STRATA_ASSIGN_OR_RETURN(std::vector<arrow::ArrayDataPtr> columns,
                          GatherSourceRows(shard, projection, hits));
  columns.push_back(MakeFloat32Values(distances));
  if (options.with_row_id) {
    columns.push_back(MakeUInt64Array(SourceRowIds(shard, num_user_fields, hits)));
  }
  result.schema = OutputSchema(projection, /*with_distance=*/true, options.with_row_id);
  result.num_rows = out_rows;
  result.batches.push_back(
      std::make_shared<arrow::RecordBatch>(result.schema, out_rows, std::move(columns)));
  return result;
}
}  // namespace

Result<int> ResolveVectorColumn(const arrow::Schema& schema, const std::string& name) {
  int index = -1;
  if (!name.empty()) {
    index = schema.GetFieldIndex(name);
    if (index < 0) {
      return Status::Invalid("vector_column '" + name + "' is not in the table schema");
    }
  } else {
    std::vector<int> candidates;
    for (int i = 0; i < schema.num_fields(); ++i) {
      if (IsVectorLike(*schema.field(i)->type)) candidates.push_back(i);
    }
    if (candidates.empty()) {
      return Status::Invalid(
          "the table has no vector column (fixed_size_list<float32>) to search; set "
          "vector_column");
    }
    if (candidates.size() > 1) {
      std::string names;
      for (int i : candidates) names += (names.empty() ? "" : ", ") + schema.field(i)->name;
      return Status::Invalid("the table has several vector columns (" + names +
                             "); set vector_column to one of them");
    }
    index = candidates[0];
  }
  const auto& field = schema.field(index);
  if (!IsFloatVectorType(*field->type)) {
    if (IsVectorLike(*field->type)) {
      return Status::NotSupported("vector column '" + field->name + "' has type " +
                                  field->type->ToString() +
                                  "; only fixed_size_list<float32> is searchable yet");
    }
    return Status::Invalid("column '" + field->name + "' has type " + field->type->ToString() +
                           ", not a vector type (fixed_size_list<float32>)");
  }
  return index;
}

Result<QueryResult> VectorSearch(const table::TableSnapshot& snapshot,
                                 const VectorSearchOptions& options) {
  if (options.k < 1) {
    return Status::Invalid("k must be >= 1 for a vector search, got " + std::to_string(options.k));
  }
  if (options.offset < 0) {
    return Status::Invalid("offset must be >= 0, got " + std::to_string(options.offset));
  }
  if (options.query.empty()) return Status::Invalid("vector: the query vector is empty");
  for (size_t i = 0; i < options.query.size(); ++i) {
    if (!std::isfinite(options.query[i])) {
      return Status::Invalid("vector: element " + std::to_string(i) + " is " +
                             (std::isnan(options.query[i]) ? "NaN" : "infinite") +
                             "; query vectors must be finite float32 values");
    }
  }
  STRATA_ASSIGN_OR_RETURN(const int vcol, ResolveVectorColumn(*snapshot.schema, options.column));
  const auto& vfield = snapshot.schema->field(vcol);
  const int64_t dim = vfield->type->list_size();
  if (static_cast<int64_t>(options.query.size()) != dim) {
    return Status::Invalid("vector: the query vector has dimension " +
                           std::to_string(options.query.size()) + " but column '" + vfield->name +
                           "' has dimension " + std::to_string(dim));
  }
  STRATA_ASSIGN_OR_RETURN(Projection projection,
                          ResolveProjection(snapshot.schema, options.columns));
  std::optional<BoundPredicate> filter;
  if (options.filter) {
    STRATA_ASSIGN_OR_RETURN(filter, BindPredicate(*options.filter, *snapshot.schema));
  }
  if (options.ef && *options.ef < 1) {
    return Status::Invalid("ef must be >= 1, got " + std::to_string(*options.ef));
  }
  if (options.distance == DistanceType::kCosine &&
      index::SquaredNorm(options.query.data(), dim) == 0.0f) {
    return Status::Invalid(
        "vector: the query vector is all zeros, which has no cosine distance; use l2 or dot");
  }
  if (snapshot.shard) {
    return SearchSources(snapshot, options, vcol, dim, projection, filter);
  }

  // Keep the best `want` = k + offset (saturating, at most the row count).
  int64_t want = options.k;
  if (options.offset > std::numeric_limits<int64_t>::max() - want) {
    want = std::numeric_limits<int64_t>::max();
  } else {
    want += options.offset;
  }
  want = std::min(want, snapshot.num_rows);

  const float* q = options.query.data();
  const float q_norm = std::sqrt(index::SquaredNorm(q, dim));
  std::vector<Candidate> heap;
  heap.reserve(static_cast<size_t>(std::min<int64_t>(want, 1 << 20)));
  std::vector<uint8_t> mask;
  int64_t base = 0;
  for (size_t b = 0; b < snapshot.batches.size() && want > 0; ++b) {
    const arrow::RecordBatch& batch = *snapshot.batches[b];
    const int64_t n = batch.num_rows();
    const arrow::Array list = batch.column(vcol);
    const arrow::Array child = list.child(0);
    const float* values = child.raw_values<float>();
    const bool list_has_nulls = !list.data()->buffers.empty() && list.data()->buffers[0] != nullptr;
    const bool child_has_nulls = !child.data()->buffers.empty() &&
                                 child.data()->buffers[0] != nullptr && child.null_count() != 0;
    if (filter) EvaluatePredicate(*filter, batch, &mask);
    for (int64_t i = 0; i < n; ++i) {
      if (filter && !mask[static_cast<size_t>(i)]) continue;
      if (list_has_nulls && list.IsNull(i)) continue;
      const int64_t start = (list.offset() + i) * dim;
      if (child_has_nulls) {
        bool any_null = false;
        for (int64_t j = 0; j < dim && !any_null; ++j) any_null = child.IsNull(start + j);
        if (any_null) continue;
      }
      const float d = index::Distance(options.distance, q, q_norm, values + start, dim);
      if (std::isnan(d)) continue;
      const Candidate c{d, static_cast<int32_t>(b), i, base + i};
      if (static_cast<int64_t>(heap.size()) < want) {
        heap.push_back(c);
        std::push_heap(heap.begin(), heap.end(), Better);
      } else if (Better(c, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), Better);
        heap.back() = c;
        std::push_heap(heap.begin(), heap.end(), Better);
      }
    }
    base += n;
  }
  std::sort_heap(heap.begin(), heap.end(), Better);  // ascending by (distance, position)
  const size_t skip = static_cast<size_t>(std::min<int64_t>(options.offset, heap.size()));

  QueryResult result;
  result.schema = OutputSchema(projection, /*with_distance=*/true, options.with_row_id);
  const int64_t out_rows = static_cast<int64_t>(heap.size() - skip);
  std::vector<arrow::ArrayDataPtr> columns;
  for (size_t c = 0; c < projection.indices.size(); ++c) {
    const int src = projection.indices[c];
    std::vector<arrow::compute::Span> spans;
    spans.reserve(static_cast<size_t>(out_rows));
    for (size_t r = skip; r < heap.size(); ++r) {
      const Candidate& cand = heap[r];
      arrow::compute::AddSpan(
          &spans,
          {snapshot.batches[static_cast<size_t>(cand.batch)]->column_data(src).get(), cand.row, 1});
    }
    STRATA_ASSIGN_OR_RETURN(
        arrow::ArrayDataPtr col,
        arrow::compute::GatherSpans(projection.schema->field(static_cast<int>(c))->type, spans));
    columns.push_back(std::move(col));
  }
  std::vector<float> distances;
  std::vector<uint64_t> row_ids;
  for (size_t r = skip; r < heap.size(); ++r) {
    distances.push_back(heap[r].distance);
    // The hidden `_rowid` key when the table has one, else the snapshot row position.
    row_ids.push_back(snapshot.row_ids.empty()
                          ? static_cast<uint64_t>(heap[r].position)
                          : arrow::Array(snapshot.row_ids[static_cast<size_t>(heap[r].batch)])
                                .Value<uint64_t>(heap[r].row));
  }
  columns.push_back(MakeFloat32Values(distances));
  if (options.with_row_id) columns.push_back(MakeUInt64Array(row_ids));
  result.num_rows = out_rows;
  result.batches.push_back(
      std::make_shared<arrow::RecordBatch>(result.schema, out_rows, std::move(columns)));
  return result;
}

}  // namespace strata::query
