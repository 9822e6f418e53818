// merge_insert/ (PROTOCOL.md §5.3): an upsert of the uploaded rows (Arrow IPC stream) into
// the table, matched on one column, as ONE read-modify-write (Table::ReadModifyWrite): nothing
// else writes the table between the match and the write, and the result is one WAL entry.
//
// Query parameters: on=col (exactly one), when_matched_update_all, when_matched_update_all_filt
// (SQL), when_not_matched_insert_all, when_not_matched_by_source_delete,
// when_not_matched_by_source_delete_filt (SQL), use_index (accepted; the match is always a
// hash join, see below). Booleans default to false.
//
// The upload is conformed to the table schema first (shard::ConformBatches, as insert/:
// columns by name, missing nullable columns null; a mismatch is 400 naming the column).
// Matching: a hash map from the encoded `on` value (format/key_encoding.h) of every source
// row to its index (a second source row with the same value is 400 "Ambiguous merge insert",
// as LanceDB), then one scan of the snapshot's live target rows looking each up. A null `on`
// value never matches (SQL equality).
// Results, per live target row and source row:
//   matched, when_matched_update_all (and the _filt TRUE): a new version of the target row
//     with the source row's values: for a table whose primary key is `on`, the source row as
//     is (same key: it replaces); for a table without a primary key, the source values with
//     the TARGET's hidden `_rowid` (so it replaces that row); for a primary-key table matched
//     on another column, a tombstone of the target's key followed by the source row (written
//     after it, so it wins when the keys are equal);
//   source row not matched, when_not_matched_insert_all: inserted;
//   target row not matched, when_not_matched_by_source_delete (and the _filt TRUE): tombstone.
// Filters: when_matched_update_all_filt is bound against a schema of two struct columns,
// `target` and `source`, each holding the table's columns, so `target.x` and `source.x` are
// struct field accesses (evaluator.h `a.b`); unqualified columns are unknown there.
// when_not_matched_by_source_delete_filt reads the target row: unqualified columns, or
// `target.x` (tried when the unqualified binding fails).
// Answer {"version", "num_inserted_rows", "num_updated_rows", "num_deleted_rows",
// "num_attempts": 1, "num_rows": source rows}.
#include <nlohmann/json.hpp>

#include <unordered_map>

#include "arrow/compute/concatenate.h"
#include "arrow/compute/take.h"
#include "format/key_encoding.h"
#include "query/filter/evaluator.h"
#include "server/http_errors.h"
#include "server/mutation_helpers.h"
#include "server/routes.h"
#include "server/table_helpers.h"
#include "server/write_limits.h"
#include "shard/batch_conformance.h"

namespace strata::server {

namespace {

struct MergeOptions {
  std::string on;
  bool update_all = false;
  std::optional<std::string> update_filt;
  bool insert_all = false;
  bool delete_by_source = false;
  std::optional<std::string> delete_filt;
};

Result<MergeOptions> ParseMergeOptions(const httplib::Request& req) {
  MergeOptions o;
  if (req.get_param_value_count("on") != 1 || req.get_param_value("on").empty()) {
    return Status::Invalid("merge_insert: query parameter 'on' must name exactly one column, got " +
                           std::to_string(req.get_param_value_count("on")));
  }
  o.on = req.get_param_value("on");
  STRATA_ASSIGN_OR_RETURN(o.update_all, BoolParam(req, "when_matched_update_all", false));
  STRATA_ASSIGN_OR_RETURN(o.insert_all, BoolParam(req, "when_not_matched_insert_all", false));
  STRATA_ASSIGN_OR_RETURN(o.delete_by_source,
                          BoolParam(req, "when_not_matched_by_source_delete", false));
  STRATA_RETURN_IF_ERROR(BoolParam(req, "use_index", true).status());
  if (req.has_param("when_matched_update_all_filt")) {
    o.update_filt = req.get_param_value("when_matched_update_all_filt");
  }
  if (req.has_param("when_not_matched_by_source_delete_filt")) {
    o.delete_filt = req.get_param_value("when_not_matched_by_source_delete_filt");
  }
  return o;
}

/// A struct array over `children` (each of `length` rows, offset 0), no nulls.
arrow::ArrayDataPtr MakeStruct(const std::vector<arrow::FieldPtr>& fields,
                               std::vector<arrow::ArrayDataPtr> children, int64_t length) {
  auto out = std::make_shared<arrow::ArrayData>();
  out->type = arrow::struct_(fields);
  out->length = length;
  out->buffers.push_back(nullptr);
  out->children = std::move(children);
  return out;
}

/// Schema {target: struct<table columns>, source: struct<table columns>}.
arrow::SchemaPtr CombinedSchema(const arrow::Schema& table, bool with_source) {
  std::vector<arrow::FieldPtr> fields{arrow::field("target", arrow::struct_(table.fields()))};
  if (with_source) fields.push_back(arrow::field("source", arrow::struct_(table.fields())));
  return std::make_shared<arrow::Schema>(std::move(fields));
}

/// The first `n` columns of `batch` (the user columns of a storage batch).
std::vector<arrow::ArrayDataPtr> FirstColumns(const arrow::RecordBatch& batch, int n) {
  std::vector<arrow::ArrayDataPtr> out;
  for (int c = 0; c < n; ++c) out.push_back(batch.column_data(c));
  return out;
}

/// The entries of `values` whose mask byte is set.
std::vector<int64_t> Select(const std::vector<int64_t>& values, const std::vector<uint8_t>& mask) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (mask[i]) out.push_back(values[i]);
  }
  return out;
}

struct MergeCounts {
  int64_t inserted = 0, updated = 0, deleted = 0, source_rows = 0;
};

class MergePlanner {
 public:
  MergePlanner(const MergeOptions& options, const DecodedUpload& upload, MergeCounts* counts)
      : o_(options), upload_(upload), counts_(counts) {}

  Result<table::Mutation> Run(const table::TableSnapshot& snap) {
    *counts_ = MergeCounts();
    const arrow::Schema& schema = *snap.schema;
    const int on = schema.GetFieldIndex(o_.on);
    if (on < 0) {
      return Status::Invalid("merge_insert: 'on' column '" + o_.on + "' is not in the table");
    }
    STRATA_RETURN_IF_ERROR(format::ValidateKeyType(*schema.field(on)->type, o_.on)
                               .WithContext("merge_insert: 'on' column"));
    STRATA_ASSIGN_OR_RETURN(layout_, StorageLayoutOf(snap));
    n_user_ = schema.num_fields();
    on_is_pk_ = snap.key_columns.size() == 1 && snap.key_columns[0] == o_.on;
    no_pk_ = layout_.rowid_column >= 0;
    STRATA_RETURN_IF_ERROR(BindFilters(schema));

    // Source rows under the table schema, as one batch.
    auto conformed = shard::ConformBatches(snap.schema, upload_.batches);
    if (!conformed.ok()) return conformed.status().WithContext("merge_insert");
    if (!conformed->empty()) {
      STRATA_ASSIGN_OR_RETURN(source_, arrow::compute::ConcatenateBatches(*conformed));
    }
    const int64_t n_source = source_ ? source_->num_rows() : 0;
    counts_->source_rows = n_source;

    // Hash the source keys.
    STRATA_ASSIGN_OR_RETURN(auto encoder, format::KeyEncoder::Make(schema, {on}));
    std::unordered_map<std::string, int64_t> keys;
    keys.reserve(static_cast<size_t>(n_source));
    if (source_) {
      arrow::Array col = source_->column(on);
      for (int64_t i = 0; i < n_source; ++i) {
        if (col.IsNull(i)) continue;
        auto [it, fresh] = keys.emplace(encoder.Encode(*source_, i), i);
        if (!fresh) {
          return Status::Invalid("merge_insert: Ambiguous merge insert: source rows " +
                                 std::to_string(it->second) + " and " + std::to_string(i) +
                                 " have the same value of the 'on' column '" + o_.on +
                                 "'; each target row may match at most one source row");
        }
      }
    }
    matched_source_.assign(static_cast<size_t>(n_source), 0);

    // One scan of the live target rows.
    std::string key;
    for (const auto& src : snap.shard->sources) {
      for (size_t b = 0; b < src.batches.size(); ++b) {
        const arrow::RecordBatchPtr& batch = src.batches[b];
        const int64_t start = src.batch_starts[b];
        arrow::Array col = batch->column(on);
        std::vector<int64_t> matched_rows, matched_src, unmatched_rows;
        for (int64_t r = 0; r < batch->num_rows(); ++r) {
          if (!src.IsLive(start + r)) continue;
          auto it = keys.end();
          if (!col.IsNull(r)) {
            key.clear();
            encoder.AppendKey(*batch, r, &key);
            it = keys.find(key);
          }
          if (it == keys.end()) {
            unmatched_rows.push_back(r);
          } else {
            matched_rows.push_back(r);
            matched_src.push_back(it->second);
            matched_source_[static_cast<size_t>(it->second)] = 1;
          }
        }
        if (o_.update_all && !matched_rows.empty()) {
          STRATA_RETURN_IF_ERROR(UpdateMatched(*batch, matched_rows, matched_src));
        }
        if (o_.delete_by_source && !unmatched_rows.empty()) {
          STRATA_RETURN_IF_ERROR(DeleteUnmatched(*batch, unmatched_rows));
        }
      }
    }

    if (o_.insert_all && source_) {
      std::vector<int64_t> rows;
      for (int64_t i = 0; i < n_source; ++i) {
        if (!matched_source_[static_cast<size_t>(i)]) rows.push_back(i);
      }
      if (!rows.empty()) {
        STRATA_ASSIGN_OR_RETURN(auto taken, Take(*source_, rows));
        mutation_.inserts.push_back(std::move(taken));
        counts_->inserted += static_cast<int64_t>(rows.size());
      }
    }
    return std::move(mutation_);
  }

 private:
  static Result<arrow::RecordBatchPtr> Take(const arrow::RecordBatch& batch,
                                            const std::vector<int64_t>& rows) {
    return arrow::compute::TakeBatch(batch, rows.data(), static_cast<int64_t>(rows.size()));
  }

  Status BindFilters(const arrow::Schema& schema) {
    if (o_.update_all && o_.update_filt) {
      query::filter::BindOptions bo;
      bo.context = "when_matched_update_all_filt";
      STRATA_ASSIGN_OR_RETURN(
          update_filt_,
          query::filter::ParseAndBind(*o_.update_filt, *CombinedSchema(schema, true), bo));
    }
    if (o_.delete_by_source && o_.delete_filt) {
      query::filter::BindOptions bo;
      bo.context = "when_not_matched_by_source_delete_filt";
      auto plain = query::filter::ParseAndBind(*o_.delete_filt, schema, bo);
      if (plain.ok()) {
        delete_filt_ = std::move(*plain);
      } else {
        auto qualified =
            query::filter::ParseAndBind(*o_.delete_filt, *CombinedSchema(schema, false), bo);
        if (!qualified.ok()) return plain.status();
        delete_filt_ = std::move(*qualified);
        delete_filt_qualified_ = true;
      }
    }
    return Status::OK();
  }

  Status UpdateMatched(const arrow::RecordBatch& batch, std::vector<int64_t> rows,
                       std::vector<int64_t> src_rows) {
    if (update_filt_) {
      STRATA_ASSIGN_OR_RETURN(auto target, Take(batch, rows));
      STRATA_ASSIGN_OR_RETURN(auto source, Take(*source_, src_rows));
      const auto& fields = source_->schema()->fields();
      const int64_t n = static_cast<int64_t>(rows.size());
      arrow::RecordBatch combined(CombinedSchema(*source_->schema(), true), n,
                                  {MakeStruct(fields, FirstColumns(*target, n_user_), n),
                                   MakeStruct(fields, FirstColumns(*source, n_user_), n)});
      std::vector<uint8_t> mask;
      STRATA_RETURN_IF_ERROR(query::filter::EvaluateMask(*update_filt_, combined, {}, &mask));
      rows = Select(rows, mask);
      src_rows = Select(src_rows, mask);
      if (rows.empty()) return Status::OK();
    }
    STRATA_ASSIGN_OR_RETURN(auto source, Take(*source_, src_rows));
    const int64_t n = static_cast<int64_t>(rows.size());
    if (no_pk_) {
      // The source values under the target's hidden key: a replacement of the target row.
      STRATA_ASSIGN_OR_RETURN(auto target, Take(batch, rows));
      std::vector<arrow::ArrayDataPtr> columns = FirstColumns(*source, n_user_);
      columns.push_back(target->column_data(layout_.rowid_column));
      columns.push_back(memtable::MakeConstantBoolArray(false, n));
      mutation_.storage_rows.push_back(
          std::make_shared<arrow::RecordBatch>(layout_.storage_schema, n, std::move(columns)));
    } else {
      if (!on_is_pk_) {
        STRATA_ASSIGN_OR_RETURN(auto tombstones, memtable::MakeTombstones(layout_, batch, rows));
        mutation_.storage_rows.push_back(std::move(tombstones));
      }
      mutation_.inserts.push_back(std::move(source));
    }
    counts_->updated += n;
    return Status::OK();
  }

  Status DeleteUnmatched(const arrow::RecordBatch& batch, std::vector<int64_t> rows) {
    if (delete_filt_) {
      STRATA_ASSIGN_OR_RETURN(auto target, Take(batch, rows));
      std::vector<uint8_t> mask;
      if (delete_filt_qualified_) {
        const int64_t n = target->num_rows();
        std::vector<arrow::FieldPtr> fields(layout_.user_schema->fields());
        arrow::RecordBatch combined(CombinedSchema(*layout_.user_schema, false), n,
                                    {MakeStruct(fields, FirstColumns(*target, n_user_), n)});
        STRATA_RETURN_IF_ERROR(query::filter::EvaluateMask(*delete_filt_, combined, {}, &mask));
      } else {
        STRATA_RETURN_IF_ERROR(query::filter::EvaluateMask(*delete_filt_, *target, {}, &mask));
      }
      rows = Select(rows, mask);
      if (rows.empty()) return Status::OK();
    }
    STRATA_ASSIGN_OR_RETURN(auto tombstones, memtable::MakeTombstones(layout_, batch, rows));
    mutation_.storage_rows.push_back(std::move(tombstones));
    counts_->deleted += static_cast<int64_t>(rows.size());
    return Status::OK();
  }

  const MergeOptions& o_;
  const DecodedUpload& upload_;
  MergeCounts* counts_;
  memtable::StorageLayout layout_;
  int n_user_ = 0;
  bool on_is_pk_ = false;
  bool no_pk_ = false;
  query::filter::BoundExprPtr update_filt_;
  query::filter::BoundExprPtr delete_filt_;
  bool delete_filt_qualified_ = false;
  arrow::RecordBatchPtr source_;
  std::vector<uint8_t> matched_source_;
  table::Mutation mutation_;
};

}  // namespace

void HandleMergeInsert(ServerContext& ctx, const TableRequest& req, httplib::Response& res) {
  Result<MergeOptions> options = ParseMergeOptions(*req.http);
  if (!options.ok()) return SendError(res, options.status());
  Result<std::shared_ptr<table::Table>> t = ctx.catalog->GetTable(req.database, req.route.table);
  if (!t.ok()) return SendError(res, t.status());
  Result<DecodedUpload> upload = DecodeArrowUpload(req.body, "merge_insert");
  if (!upload.ok()) return SendError(res, upload.status());
  {
    const RequestLimits& limits = ctx.options.limits;
    Status st = CheckWrite(limits, nullptr, upload->batches, "merge_insert");
    if (st.ok() && options->update_filt) {
      st = CheckFilterBytes(limits, *options->update_filt,
                            "merge_insert: when_matched_update_all_filt");
    }
    if (st.ok() && options->delete_filt) {
      st = CheckFilterBytes(limits, *options->delete_filt,
                            "merge_insert: when_not_matched_by_source_delete_filt");
    }
    if (!st.ok()) return SendError(res, st);
  }
  if (upload->schema != nullptr && upload->schema->GetFieldIndex(options->on) < 0) {
    // Conforming would fill it with nulls, which match nothing: every row would be inserted
    // with a null key.
    return SendError(res, Status::Invalid("merge_insert: the uploaded rows have no column '" +
                                          options->on + "' (the `on` column)"));
  }
  MergeCounts counts;
  MergePlanner planner(*options, *upload, &counts);
  Result<uint64_t> version =
      (*t)->ReadModifyWrite([&](const table::TableSnapshot& snap) { return planner.Run(snap); });
  if (!version.ok()) return SendError(res, version.status());
  // Committed: from here on only a 200 may be sent.
  nlohmann::json out = {{"version", *version},
                        {"num_inserted_rows", counts.inserted},
                        {"num_updated_rows", counts.updated},
                        {"num_deleted_rows", counts.deleted},
                        {"num_attempts", 1},
                        {"num_rows", counts.source_rows}};
  SendJson(res, out.dump());
}

}  // namespace strata::server
