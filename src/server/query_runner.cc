#include "server/query_runner.h"

#include <sstream>

#include "io/mapped_file_cache.h"
#include "query/shard_pruning.h"
#include "query/vector_search.h"

namespace strata::server {

namespace {

Result<query::QueryResult> RunPlan(const table::TableSnapshot& snapshot, const QueryRequest& req) {
  if (const auto* vs = std::get_if<query::VectorSearchOptions>(&req.plan)) {
    return query::VectorSearch(snapshot, *vs);
  }
  if (const auto* fts = std::get_if<query::FtsSearchOptions>(&req.plan)) {
    return query::FtsSearch(snapshot, *fts);
  }
  return query::Scan(snapshot, std::get<query::ScanOptions>(req.plan));
}

}  // namespace

Result<query::QueryResult> RunQuery(const table::TableSnapshot& snapshot, const QueryRequest& req) {
  // A table of several shards reads only the shards its filter can match (an equality or IN
  // on the shard column). Not full-text searches: their BM25 statistics are over every
  // shard's rows, so scores do not depend on the shard layout.
  // Neither when a column reads `_rowoffset` (an ordinal among ALL the snapshot's live rows),
  // nor for a vector search that filters after its top-k (the k nearest of the whole table).
  std::string shards_read;
  const std::optional<std::string>* filter = nullptr;
  auto offsets = [](const std::vector<query::ColumnRef>& columns) {
    for (const auto& c : columns) {
      if (c.name.find("_rowoffset") != std::string::npos) return true;
    }
    return false;
  };
  if (const auto* vs = std::get_if<query::VectorSearchOptions>(&req.plan)) {
    if (vs->prefilter && !offsets(vs->columns)) filter = &vs->filter;
  } else if (const auto* scan = std::get_if<query::ScanOptions>(&req.plan)) {
    if (!offsets(scan->columns)) filter = &scan->filter;
  }
  const table::TableSnapshot pruned =
      filter != nullptr ? query::PruneShards(snapshot, *filter, &shards_read) : snapshot;
  Result<query::QueryResult> r = RunPlan(pruned, req);
  if (r.ok() && !shards_read.empty()) r->plan.insert(r->plan.begin(), shards_read);
  // The base pages this query mapped count against --cache-bytes (io/mapped_file_cache.h);
  // scans and full-text searches end here (vector searches also check on their own).
  io::MappedFileCache::Global().MaybeTrim();
  return r;
}

namespace {

void AppendColumns(std::ostringstream& out, const std::vector<query::ColumnRef>& columns) {
  if (columns.empty()) {
    out << " columns=*";
    return;
  }
  out << " columns=[";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out << ", ";
    out << columns[i].name;
    if (!columns[i].alias.empty() && columns[i].alias != columns[i].name) {
      out << " AS " << columns[i].alias;
    }
  }
  out << "]";
}

void AppendFilter(std::ostringstream& out, const std::optional<std::string>& filter,
                  bool prefilter) {
  if (!filter) return;
  out << (prefilter ? " prefilter=(" : " postfilter=(") << *filter << ")";
}

}  // namespace

std::string DescribeQuery(const QueryRequest& req, const arrow::Schema* schema) {
  std::ostringstream out;
  if (const auto* vs = std::get_if<query::VectorSearchOptions>(&req.plan)) {
    std::string column = vs->column;
    if (column.empty() && schema != nullptr) {
      Result<int> resolved = query::ResolveVectorColumn(*schema, "");
      if (resolved.ok()) column = schema->field(*resolved)->name;
    }
    out << "VectorSearch column=" << (column.empty() ? "(the vector column)" : column)
        << " distance=" << query::DistanceTypeName(vs->distance) << " k=" << vs->k
        << " offset=" << vs->offset << " dimension=" << vs->query.size();
    if (vs->ef) out << " ef=" << *vs->ef;
    if (vs->bypass_vector_index) out << " bypass_vector_index";
    if (vs->lower_bound) out << " lower_bound=" << *vs->lower_bound;
    if (vs->upper_bound) out << " upper_bound=" << *vs->upper_bound;
    AppendFilter(out, vs->filter, vs->prefilter);
    AppendColumns(out, vs->columns);
    if (vs->with_row_id) out << " with_row_id";
  } else if (const auto* fts = std::get_if<query::FtsSearchOptions>(&req.plan)) {
    out << "FullTextSearch "
        << (fts->query.kind == index::FtsQuery::Kind::kPhrase
                ? "phrase"
                : (fts->query.require_all ? "match(AND)" : "match(OR)"))
        << " query=\"" << fts->query.text << "\" k=" << fts->k << " offset=" << fts->offset;
    if (!fts->columns.empty()) {
      out << " search_columns=[";
      for (size_t i = 0; i < fts->columns.size(); ++i) out << (i ? ", " : "") << fts->columns[i];
      out << "]";
    }
    AppendFilter(out, fts->filter, fts->prefilter);
    AppendColumns(out, fts->columns_out);
    if (fts->with_row_id) out << " with_row_id";
  } else {
    const auto& scan = std::get<query::ScanOptions>(req.plan);
    out << "Scan offset=" << scan.offset;
    if (scan.limit != std::numeric_limits<int64_t>::max()) out << " limit=" << scan.limit;
    AppendFilter(out, scan.filter, true);
    AppendColumns(out, scan.columns);
    if (scan.with_row_id) out << " with_row_id";
  }
  return out.str();
}

}  // namespace strata::server
