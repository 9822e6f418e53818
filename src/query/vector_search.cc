#include "query/vector_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "index/vector/exact_search.h"
#include "index/vector/hnsw_index.h"
#include "index/vector/ivf_index.h"
#include "io/mapped_file.h"
#include "io/mapped_file_cache.h"
#include "query/filter_bits_cache.h"
#include "query/result_columns.h"
#include "query/row_predicate.h"
#include "query/source_rows.h"

namespace strata::query {

namespace {

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

// The per-source algorithm of vector_search.h over `shard`.
Result<QueryResult> SearchSources(const shard::ShardSnapshot& shard, const arrow::Schema& schema,
                                  const VectorSearchOptions& options, int vcol, int64_t dim,
                                  const Projection& projection, const SnapshotFilter& filter) {
  const std::string& vname = schema.field(vcol)->name;
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
  const bool bounded = options.lower_bound.has_value() || options.upper_bound.has_value();
  const auto in_bounds = [&options](float d) {
    return (!options.lower_bound || d >= *options.lower_bound) &&
           (!options.upper_bound || d < *options.upper_bound);
  };
  // Prefilter: the filter restricts the candidates; postfilter: only liveness does, and the
  // filter runs over the merged top list.
  const bool postfilter = !filter.empty() && !options.prefilter;
  static const SnapshotFilter kNoFilter;
  const SnapshotFilter& source_filter = postfilter ? kNoFilter : filter;

  // The filter compiled into per-row checks, when its shape allows (row_predicate.h).
  std::optional<RowPredicate> predicate;
  std::optional<std::string> evaluated_key;  // of an uncompiled filter, once per query
  if (!source_filter.empty() && !source_filter.expr()->uses_row_id() &&
      !source_filter.expr()->uses_row_offset()) {
    predicate = RowPredicate::Compile(*shard.schema, *source_filter.expr()->expr());
  }

  QueryResult result;
  std::vector<SourceCandidate> candidates;
  for (uint32_t s = 0; s < shard.sources.size(); ++s) {
    const shard::SourceView& source = shard.sources[s];
    const index::ColumnIndex* planned_ci =
        options.bypass_vector_index ? nullptr : source.FindIndex(vcol, index::IndexKind::kHnsw);
    const bool graph_usable = planned_ci != nullptr && planned_ci->hnsw() != nullptr &&
                              planned_ci->spec().hnsw.distance == options.distance;
    // A base IVF index filters while it scans its partitions (below), so the HNSW planner's
    // choices do not apply to it.
    const bool ivf_usable = planned_ci != nullptr && planned_ci->ivf() != nullptr &&
                            planned_ci->spec().hnsw.distance == options.distance;
    if (!ivf_usable && !source_filter.empty() && source.live_rows > 0 &&
        !source_filter.expr()->uses_row_offset() && (graph_usable || predicate)) {
      // Filtered source: the planner of filtered_source_search.h.
      FilteredSourceQuery fq;
      fq.shard = &shard;
      fq.source = s;
      fq.filter = &source_filter;
      fq.predicate = predicate ? &*predicate : nullptr;
      if (!predicate && !evaluated_key) {
        evaluated_key = FilterBitsCache::EvaluatedKey(*source_filter.expr(), *shard.schema);
      }
      fq.evaluated_key = evaluated_key ? &*evaluated_key : nullptr;
      fq.hnsw = graph_usable ? planned_ci->hnsw() : nullptr;
      fq.searcher = &searcher;
      fq.query = options.query.data();
      fq.distance = options.distance;
      fq.vector_column = vcol;
      fq.dim = dim;
      fq.want = want;
      fq.ef = options.ef.value_or(index::DefaultEf(want));
      if (bounded) fq.in_bounds = in_bounds;
      fq.force = options.force_filtered_plan;
      STRATA_ASSIGN_OR_RETURN(FilteredSourceResult r, SearchFilteredSource(fq));
      for (const index::Neighbor& n : r.found) candidates.push_back({n.distance, s, n.label});
      result.plan.push_back(source.name + ": " + r.plan + (graph_usable ? "" : " (no graph)"));
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(AcceptedRows accepted, AcceptedRows::Make(shard, s, source_filter));
    const std::string filter_plan = accepted.plan().empty() ? "" : "; rows: " + accepted.plan();
    if (accepted.count() == 0) {
      result.plan.push_back(source.name + ": skipped, " +
                            (source.live_rows == 0 ? std::string("no live rows")
                                                   : std::string("no live row passes the filter")) +
                            filter_plan);
      continue;
    }
    const int64_t source_want = std::min(want, accepted.count());
    // Distance bounds are checked while collecting, so k rows come back when enough exist.
    const auto distance_of = [&source, &searcher, vcol, dim](int64_t label) {
      const auto [b, row] = source.Locate(label);
      if (b < 0) return std::numeric_limits<float>::quiet_NaN();
      const arrow::Array list = source.batches[static_cast<size_t>(b)]->column(vcol);
      if (list.IsNull(row)) return std::numeric_limits<float>::quiet_NaN();
      const arrow::Array child = list.child(0);
      return searcher.Distance(child.raw_values<float>() + (list.offset() + row) * dim);
    };
    std::function<bool(int64_t)> accept;
    if (bounded) {
      accept = [&accepted, &distance_of, &in_bounds](int64_t label) {
        return accepted.Test(label) && in_bounds(distance_of(label));
      };
    } else {
      accept = [&accepted](int64_t label) { return accepted.Test(label); };
    }
    const index::ColumnIndex* ci =
        options.bypass_vector_index ? nullptr : source.FindIndex(vcol, index::IndexKind::kHnsw);
    std::string why_exact;
    const std::string kind_name = ci != nullptr && ci->ivf() != nullptr
                                      ? index::IvfTypeName(ci->ivf()->params().type)
                                      : std::string("HNSW");
    if (options.bypass_vector_index) {
      why_exact = "bypass_vector_index";
    } else if (ci == nullptr || (ci->hnsw() == nullptr && ci->ivf() == nullptr)) {
      why_exact = hnsw_spec == nullptr
                      ? "no HNSW on '" + vname + "'"
                      : "index '" + hnsw_spec->name + "' not built for this source yet";
    } else if (ci->spec().hnsw.distance != options.distance) {
      why_exact = kind_name + " '" + ci->spec().name + "' uses " +
                  DistanceTypeName(ci->spec().hnsw.distance) + ", the query " +
                  DistanceTypeName(options.distance);
    } else if (static_cast<double>(accepted.count()) <
               index::kExactSearchMaxFraction * static_cast<double>(source.num_rows)) {
      why_exact = kind_name + " '" + ci->spec().name +
                  "' skipped: " + std::to_string(accepted.count()) + " of " +
                  std::to_string(source.num_rows) + " rows accepted (< " +
                  FormatFraction(index::kExactSearchMaxFraction) + ")";
    }
    int64_t kept = 0;
    if (why_exact.empty() && ci->ivf() != nullptr) {
      // The base's IVF index: probe nprobes partitions (again up to max_nprobes when they
      // held fewer than the rows wanted), re-rank k * refine_factor candidates exactly.
      const index::IvfIndex& ivf = *ci->ivf();
      // Refine reads scattered rows: while --cache-bytes binds they are copied with pread
      // instead of mapped (io/mapped_file.h MappedReads), so they do not fill the cache.
      io::MappedReads reads;
      std::vector<float> copied;
      if (io::MappedFileCache::Global().ReadsBypassMapping()) copied.resize(dim);
      const auto vector_of = [&source, vcol, dim, &reads, &copied](int64_t label) -> const float* {
        const auto [b, row] = source.Locate(label);
        if (b < 0) return nullptr;
        const arrow::Array list = source.batches[static_cast<size_t>(b)]->column(vcol);
        if (list.IsNull(row)) return nullptr;
        const float* v = list.child(0).raw_values<float>() + (list.offset() + row) * dim;
        if (!copied.empty() && reads.Read(v, copied.size() * sizeof(float), copied.data())) {
          return copied.data();
        }
        return v;
      };
      index::IvfIndex::SearchOptions io;
      io.k = source_want;
      io.nprobes = options.nprobes.value_or(20);
      io.refine_factor = options.refine_factor.value_or(0);
      // Without distance bounds accept() is a bit test whose pass rate is known exactly.
      if (!bounded && source.num_rows > 0) {
        io.accept_fraction =
            static_cast<double>(accepted.count()) / static_cast<double>(source.num_rows);
      }
      STRATA_ASSIGN_OR_RETURN(std::vector<index::Neighbor> found,
                              ivf.Search(options.query.data(), io, accept, vector_of));
      const int64_t partitions = ivf.params().num_partitions;
      const int64_t max_probes = options.max_nprobes.has_value() && *options.max_nprobes != 0
                                     ? std::min(*options.max_nprobes, partitions)
                                     : (options.max_nprobes.has_value() ? partitions : io.nprobes);
      std::string probes = std::to_string(std::min(io.nprobes, partitions));
      if (static_cast<int64_t>(found.size()) < source_want && max_probes > io.nprobes &&
          io.nprobes < partitions) {
        io.nprobes = max_probes;
        STRATA_ASSIGN_OR_RETURN(found, ivf.Search(options.query.data(), io, accept, vector_of));
        probes += " then " + std::to_string(max_probes);
      }
      for (const index::Neighbor& n : found) {
        if (bounded && !in_bounds(n.distance)) continue;
        candidates.push_back({n.distance, s, n.label});
        ++kept;
      }
      result.plan.push_back(source.name + ": " + kind_name + " '" + ci->spec().name +
                            "' nprobes=" + probes + " of " + std::to_string(partitions) +
                            (io.refine_factor > 0
                                 ? " refine_factor=" + std::to_string(io.refine_factor)
                                 : std::string()) +
                            ", " + std::to_string(kept) + " candidates" +
                            (accepted.filtered() ? " (filtered)" : "") + filter_plan);
      continue;
    }
    if (why_exact.empty()) {
      const int64_t ef = options.ef.value_or(index::DefaultEf(source_want));
      STRATA_ASSIGN_OR_RETURN(std::vector<index::Neighbor> found,
                              ci->hnsw()->Search(options.query.data(), source_want, ef, accept));
      for (const index::Neighbor& n : found) {
        // The index may hold rows newer than the snapshot: accept() already rejected them.
        if (bounded && !in_bounds(n.distance)) continue;
        candidates.push_back({n.distance, s, n.label});
        ++kept;
      }
      result.plan.push_back(source.name + ": HNSW '" + ci->spec().name +
                            "' ef=" + std::to_string(std::max(ef, source_want)) + ", " +
                            std::to_string(kept) + " candidates" +
                            (accepted.filtered() ? " (filtered)" : "") + filter_plan);
      continue;
    }
    index::TopK top(source_want);
    // An exact scan of a mapped base touches every page: it runs in steps of about 4 MiB of
    // vectors with a --cache-bytes check between them (io/mapped_file_cache.h), so it never
    // holds more than one step over the bound, however large a base batch is.
    const int64_t step = std::max<int64_t>(1024, (int64_t{4} << 20) / (4 * dim));
    for (size_t b = 0; b < source.batches.size(); ++b) {
      const arrow::Array column = source.batches[b]->column(vcol);
      for (int64_t off = 0; off < column.length(); off += step) {
        const int64_t len = std::min(step, column.length() - off);
        STRATA_RETURN_IF_ERROR(
            searcher.Scan(off == 0 && len == column.length() ? column : column.Slice(off, len),
                          source.batch_starts[b] + off, &top, accept));
        io::MappedFileCache::Global().MaybeTrim();
      }
    }
    for (const index::Neighbor& n : top.Sorted()) {
      if (bounded && !in_bounds(n.distance)) continue;
      candidates.push_back({n.distance, s, n.label});
    }
    result.plan.push_back(source.name + ": exact scan of " + std::to_string(accepted.count()) +
                          " rows (" + why_exact + ")" + filter_plan);
  }

  std::sort(candidates.begin(), candidates.end(), SourceBetter);
  if (static_cast<int64_t>(candidates.size()) > want) {
    candidates.resize(static_cast<size_t>(want));
  }
  if (postfilter) {
    std::vector<SourceHit> top;
    for (const SourceCandidate& c : candidates) top.push_back({c.source, c.position});
    STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> pass, FilterHits(shard, filter, top));
    std::vector<SourceCandidate> kept;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (pass[i] != 0) kept.push_back(candidates[i]);
    }
    result.plan.push_back("postfilter: " + std::to_string(kept.size()) + " of " +
                          std::to_string(candidates.size()) + " top rows pass the filter");
    candidates = std::move(kept);
  }
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
  if (options.with_row_id) columns.push_back(MakeUInt64Array(SourceRowIds(shard, hits)));
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
  if ((options.lower_bound && std::isnan(*options.lower_bound)) ||
      (options.upper_bound && std::isnan(*options.upper_bound))) {
    return Status::Invalid("distance_range: lower_bound and upper_bound must not be NaN");
  }
  if (options.lower_bound && options.upper_bound && *options.lower_bound > *options.upper_bound) {
    return Status::Invalid("distance_range: lower_bound " + std::to_string(*options.lower_bound) +
                           " is greater than upper_bound " + std::to_string(*options.upper_bound));
  }
  if (options.ef && *options.ef < 1) {
    return Status::Invalid("ef must be >= 1, got " + std::to_string(*options.ef));
  }
  if (options.distance == DistanceType::kCosine &&
      index::SquaredNorm(options.query.data(), dim) == 0.0f) {
    return Status::Invalid(
        "vector: the query vector is all zeros, which has no cosine distance; use l2 or dot");
  }
  const std::shared_ptr<const shard::ShardSnapshot> shard = ShardOf(snapshot);
  SnapshotFilter filter;
  if (options.filter) {
    STRATA_ASSIGN_OR_RETURN(filter, SnapshotFilter::Make(*shard, *options.filter));
  }
  Result<QueryResult> result =
      SearchSources(*shard, *snapshot.schema, options, vcol, dim, projection, filter);
  // The base pages the search mapped (IVF refine reads, result rows) count against
  // --cache-bytes (io/mapped_file_cache.h).
  io::MappedFileCache::Global().MaybeTrim();
  return result;
}

}  // namespace strata::query
