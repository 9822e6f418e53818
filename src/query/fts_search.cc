#include "query/fts_search.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "common/strings.h"
#include "query/result_columns.h"
#include "query/source_rows.h"

namespace strata::query {

namespace {

// The FTS definition of column `name` (exact name first, then a case-insensitive match).
const index::IndexSpec* FindFtsSpec(const std::vector<index::IndexSpec>& specs,
                                    const std::string& name) {
  for (const auto& spec : specs) {
    if (spec.kind == index::IndexKind::kFts && spec.column == name) return &spec;
  }
  for (const auto& spec : specs) {
    if (spec.kind == index::IndexKind::kFts && EqualsIgnoreCase(spec.column, name)) return &spec;
  }
  return nullptr;
}

struct ScoredHit {
  float score;
  uint32_t source;
  int64_t position;
};

// Score descending, then older source, then lower position.
bool ScoreBetter(const ScoredHit& a, const ScoredHit& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.source != b.source) return a.source < b.source;
  return a.position < b.position;
}

}  // namespace

Result<QueryResult> FtsSearch(const table::TableSnapshot& snapshot,
                              const FtsSearchOptions& options) {
  if (options.k < 1) {
    return Status::Invalid("k must be >= 1 for a full-text search, got " +
                           std::to_string(options.k));
  }
  if (options.offset < 0) {
    return Status::Invalid("offset must be >= 0, got " + std::to_string(options.offset));
  }
  bool blank = true;
  for (char c : options.query.text) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) return Status::Invalid("full_text_query: the query text is empty");
  STRATA_ASSIGN_OR_RETURN(Projection projection,
                          ResolveProjection(snapshot.schema, options.columns_out));
  const std::shared_ptr<const shard::ShardSnapshot> shard_ptr = ShardOf(snapshot);
  SnapshotFilter filter;
  if (options.filter) {
    STRATA_ASSIGN_OR_RETURN(filter, SnapshotFilter::Make(*shard_ptr, *options.filter));
  }
  // Postfilter: rank over the live rows, then drop the top rows failing the filter.
  const bool postfilter = !filter.empty() && !options.prefilter;
  static const SnapshotFilter kNoFilter;
  const SnapshotFilter& source_filter = postfilter ? kNoFilter : filter;
  static const std::vector<index::IndexSpec> kNoSpecs;
  const std::vector<index::IndexSpec>& specs =
      snapshot.shard ? snapshot.shard->index_specs : kNoSpecs;

  // The definitions to search, one per column.
  std::vector<const index::IndexSpec*> targets;
  if (options.columns.empty()) {
    for (const auto& spec : specs) {
      if (spec.kind != index::IndexKind::kFts) continue;
      bool seen = false;
      for (const auto* t : targets) seen = seen || t->column == spec.column;
      if (!seen) targets.push_back(&spec);
    }
    if (targets.empty()) {
      return Status::Invalid(
          "full_text_query: the table has no FTS index; create one with create_index "
          "index_type FTS");
    }
  } else {
    for (const std::string& name : options.columns) {
      const index::IndexSpec* spec = FindFtsSpec(specs, name);
      if (spec == nullptr) {
        if (snapshot.schema->GetFieldIndex(name) < 0) {
          bool found = false;
          for (const auto& f : snapshot.schema->fields())
            found = found || EqualsIgnoreCase(f->name, name);
          if (!found) {
            return Status::Invalid("full_text_query: column '" + name +
                                   "' is not in the table schema");
          }
        }
        return Status::Invalid("full_text_query: column '" + name +
                               "' has no FTS index; create one with create_index index_type FTS");
      }
      if (std::find(targets.begin(), targets.end(), spec) == targets.end()) {
        targets.push_back(spec);
      }
    }
  }
  for (const auto* spec : targets) {
    if (options.query.kind == index::FtsQuery::Kind::kPhrase && !spec->fts.with_position) {
      return Status::Invalid(
          "full_text_query: phrase queries need an FTS index built with "
          "with_position; index '" +
          spec->name + "' on column '" + spec->column + "' has none");
    }
  }

  int64_t want = options.k;
  if (options.offset > std::numeric_limits<int64_t>::max() - want) {
    want = std::numeric_limits<int64_t>::max();
  } else {
    want += options.offset;
  }

  QueryResult result;
  // Best score per (source, position) over the searched columns.
  std::map<std::pair<uint32_t, int64_t>, float> best;
  {
    const shard::ShardSnapshot& shard = *shard_ptr;
    // Accepted rows per source, computed once for every searched column.
    std::vector<std::optional<AcceptedRows>> accepted_by_source(shard.sources.size());
    for (const index::IndexSpec* spec : targets) {
      const int col = snapshot.schema->GetFieldIndex(spec->column);
      if (col < 0) {
        return Status::Invalid("full_text_query: FTS index '" + spec->name + "' names column '" +
                               spec->column + "', which is not in the table schema");
      }
      // Per source: its complete index, or a temporary one over its rows.
      std::vector<const index::InvertedIndex*> indexes(shard.sources.size(), nullptr);
      std::vector<std::unique_ptr<index::InvertedIndex>> temporary(shard.sources.size());
      for (size_t s = 0; s < shard.sources.size(); ++s) {
        const shard::SourceView& source = shard.sources[s];
        if (source.live_rows == 0) continue;
        const index::ColumnIndex* ci = source.FindIndex(col, index::IndexKind::kFts);
        if (ci != nullptr && ci->fts() != nullptr) {
          indexes[s] = ci->fts();
          continue;
        }
        STRATA_ASSIGN_OR_RETURN(temporary[s], index::InvertedIndex::Make(spec->fts));
        for (size_t b = 0; b < source.batches.size(); ++b) {
          STRATA_RETURN_IF_ERROR(
              temporary[s]->AddColumn(source.batches[b]->column(col), source.batch_starts[b]));
        }
        indexes[s] = temporary[s].get();
      }
      std::vector<std::string> terms;
      for (const auto* idx : indexes) {
        if (idx != nullptr) {
          terms = idx->QueryTerms(options.query);
          break;
        }
      }
      // Corpus statistics over the live rows of every source.
      index::Bm25Stats stats;
      for (size_t s = 0; s < shard.sources.size(); ++s) {
        if (indexes[s] == nullptr) continue;
        const shard::SourceView& source = shard.sources[s];
        // Every row below the watermark live (nothing overwritten or deleted): count by
        // position alone instead of a bitmap lookup per indexed document.
        stats.Merge(source.live_rows == source.num_rows
                        ? indexes[s]->StatsBelow(terms, source.num_rows)
                        : indexes[s]->Stats(terms, [&source](int64_t position) {
                            return source.IsLive(position);
                          }));
      }
      for (size_t s = 0; s < shard.sources.size(); ++s) {
        const shard::SourceView& source = shard.sources[s];
        const std::string where = "FTS '" + spec->name + "' on '" + spec->column + "'";
        if (indexes[s] == nullptr) {
          result.plan.push_back(source.name + ": " + where + " skipped, no live rows");
          continue;
        }
        if (!accepted_by_source[s]) {
          STRATA_ASSIGN_OR_RETURN(
              accepted_by_source[s],
              AcceptedRows::Make(shard, static_cast<uint32_t>(s), source_filter));
        }
        const AcceptedRows& accepted = *accepted_by_source[s];
        std::vector<index::ScoredDoc> docs;
        if (accepted.count() > 0 && !terms.empty()) {
          STRATA_ASSIGN_OR_RETURN(
              docs, indexes[s]->Search(options.query, stats, std::min(want, accepted.count()),
                                       [&accepted](int64_t p) { return accepted.Test(p); }));
        }
        for (const index::ScoredDoc& d : docs) {
          auto [it, inserted] =
              best.emplace(std::make_pair(static_cast<uint32_t>(s), d.position), d.score);
          if (!inserted && d.score > it->second) it->second = d.score;
        }
        result.plan.push_back(source.name + ": " + where +
                              (temporary[s]
                                   ? ", temporary index over " + std::to_string(source.num_rows) +
                                         " rows (not built for this source yet)"
                                   : std::string()) +
                              ", " + std::to_string(docs.size()) + " matches" +
                              (accepted.plan().empty() ? "" : "; rows: " + accepted.plan()));
      }
    }
  }

  std::vector<ScoredHit> ranked;
  ranked.reserve(best.size());
  for (const auto& [key, score] : best) ranked.push_back({score, key.first, key.second});
  std::sort(ranked.begin(), ranked.end(), ScoreBetter);
  if (static_cast<int64_t>(ranked.size()) > want) ranked.resize(static_cast<size_t>(want));
  if (postfilter) {
    std::vector<SourceHit> top;
    for (const ScoredHit& h : ranked) top.push_back({h.source, h.position});
    STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> pass, FilterHits(*shard_ptr, filter, top));
    std::vector<ScoredHit> kept;
    for (size_t i = 0; i < ranked.size(); ++i) {
      if (pass[i] != 0) kept.push_back(ranked[i]);
    }
    result.plan.push_back("postfilter: " + std::to_string(kept.size()) + " of " +
                          std::to_string(ranked.size()) + " top rows pass the filter");
    ranked = std::move(kept);
  }
  const size_t skip =
      static_cast<size_t>(std::min<int64_t>(options.offset, static_cast<int64_t>(ranked.size())));
  const size_t end = static_cast<size_t>(
      std::min<int64_t>(static_cast<int64_t>(ranked.size()),
                        static_cast<int64_t>(skip) + std::min<int64_t>(options.k, 1ll << 40)));
  std::vector<SourceHit> hits;
  std::vector<float> scores;
  for (size_t r = skip; r < end; ++r) {
    hits.push_back({ranked[r].source, ranked[r].position});
    scores.push_back(ranked[r].score);
  }

  std::vector<arrow::FieldPtr> fields = projection.schema->fields();
  fields.push_back(arrow::field(kScoreColumn, arrow::float32(), true));
  if (options.with_row_id) fields.push_back(arrow::field(kRowIdColumn, arrow::uint64(), true));
  result.schema = std::make_shared<arrow::Schema>(std::move(fields), projection.schema->metadata());
  STRATA_ASSIGN_OR_RETURN(std::vector<arrow::ArrayDataPtr> columns,
                          GatherSourceRows(*shard_ptr, projection, hits));
  columns.push_back(MakeFloat32Values(scores));
  if (options.with_row_id) columns.push_back(MakeUInt64Array(SourceRowIds(*shard_ptr, hits)));
  result.num_rows = static_cast<int64_t>(hits.size());
  result.batches.push_back(
      std::make_shared<arrow::RecordBatch>(result.schema, result.num_rows, std::move(columns)));
  return result;
}

}  // namespace strata::query
