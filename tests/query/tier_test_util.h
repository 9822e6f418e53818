// Test helpers for the index-aware queries: shard snapshots built by hand from sources
// (storage-schema batches, a liveness bit per row, indexes built with ColumnIndex::Build),
// rows of an (id int64, text utf8, vector fixed_size_list<float32>[dim]) table, and readers
// of result columns.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "arrow/type.h"
#include "index/column_index.h"
#include "index/index_spec.h"
#include "memtable/hidden_columns.h"
#include "shard/shard_writer.h"
#include "table/local_table.h"
#include "table/table.h"

namespace strata::query::testing {

/// id int64 (non-null), text utf8, vector fixed_size_list<float32>[dim].
inline arrow::SchemaPtr TierSchema(int32_t dim) {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), /*nullable=*/false), arrow::field("text", arrow::utf8()),
      arrow::field("vector", arrow::fixed_size_list(arrow::field("item", arrow::float32()), dim))});
}

/// One user row.
struct TierRow {
  int64_t id = 0;
  std::optional<std::string> text;
  std::optional<std::vector<float>> vector;
};

inline arrow::RecordBatchPtr TierBatch(const arrow::SchemaPtr& schema,
                                       const std::vector<TierRow>& rows) {
  const int32_t dim = schema->field(2)->type->list_size();
  arrow::RecordBatchBuilder b(schema);
  for (const TierRow& r : rows) {
    EXPECT_TRUE(b.column(0)->AppendInt(r.id).ok());
    if (r.text) {
      EXPECT_TRUE(b.column(1)->AppendBytes(*r.text).ok());
    } else {
      EXPECT_TRUE(b.column(1)->AppendNull().ok());
    }
    if (r.vector) {
      EXPECT_EQ(static_cast<int32_t>(r.vector->size()), dim);
      EXPECT_TRUE(b.column(2)->child(0)->AppendFloats(r.vector->data(), dim).ok());
      EXPECT_TRUE(b.column(2)->AppendValid().ok());
    } else {
      EXPECT_TRUE(b.column(2)->AppendNull().ok());
    }
  }
  auto batch = b.Finish();
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  return *batch;
}

/// One hand-made source: user rows split into batches of `batch_rows`, a live flag per row,
/// and the indexes of `indexed` (built over every row).
struct HandSource {
  std::string name;
  bool memtable = false;
  std::vector<TierRow> rows;
  std::vector<bool> live;  // empty = every row live
  std::vector<index::IndexSpec> indexed;
  int64_t batch_rows = 1 << 30;
  uint64_t first_rowid = 0;
};

/// A table snapshot whose shard holds `sources` (oldest first) and definitions `specs`.
/// `primary_key` empty = hidden `_rowid` (values first_rowid + row).
inline table::TableSnapshot HandSnapshot(const arrow::SchemaPtr& user_schema,
                                         const std::vector<HandSource>& sources,
                                         const std::vector<index::IndexSpec>& specs,
                                         const std::vector<std::string>& primary_key = {}) {
  auto layout = memtable::MakeStorageLayout(user_schema, primary_key);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
  auto shard = std::make_shared<shard::ShardSnapshot>();
  shard->schema = user_schema;
  shard->storage_schema = layout->storage_schema;
  shard->rowid_column = layout->rowid_column;
  shard->visibility = std::make_shared<shard::Visibility>();
  shard->index_specs = specs;
  table::TableSnapshot snap;
  snap.schema = user_schema;
  snap.version = 1;
  uint64_t generation = 0;
  for (const HandSource& hs : sources) {
    shard::SourceView v;
    v.name = hs.name;
    v.memtable = hs.memtable;
    v.generation = ++generation;
    for (size_t start = 0; start < hs.rows.size(); start += static_cast<size_t>(hs.batch_rows)) {
      const size_t end = std::min(hs.rows.size(), start + static_cast<size_t>(hs.batch_rows));
      std::vector<TierRow> part(hs.rows.begin() + static_cast<std::ptrdiff_t>(start),
                                hs.rows.begin() + static_cast<std::ptrdiff_t>(end));
      auto user = TierBatch(user_schema, part);
      auto storage = memtable::AddHiddenColumns(*layout, *user, hs.first_rowid + start);
      EXPECT_TRUE(storage.ok()) << storage.status().ToString();
      v.batch_starts.push_back(static_cast<int64_t>(start));
      v.batches.push_back(*storage);
    }
    v.num_rows = static_cast<int64_t>(hs.rows.size());
    v.SetLiveRows(hs.live);
    for (const index::IndexSpec& spec : hs.indexed) {
      auto idx = index::ColumnIndex::Build(spec, *layout->storage_schema, v.batches.ToVector());
      EXPECT_TRUE(idx.ok()) << idx.status().ToString();
      if (idx.ok()) v.indexes.push_back(*idx);
    }
    snap.num_rows += v.live_rows;
    shard->num_rows += v.live_rows;
    shard->sources.push_back(std::move(v));
  }
  snap.shard = shard;
  return snap;
}

inline index::IndexSpec HnswSpec(const std::string& column, index::DistanceType distance,
                                 const std::string& name = "") {
  index::IndexSpec s;
  s.kind = index::IndexKind::kHnsw;
  s.column = column;
  s.name = name.empty() ? column + "_idx" : name;
  s.requested_type = "IVF_HNSW_SQ";
  s.hnsw.distance = distance;
  return s;
}

inline index::IndexSpec FtsSpec(const std::string& column, bool with_position = false) {
  index::IndexSpec s;
  s.kind = index::IndexKind::kFts;
  s.column = column;
  s.name = column + "_idx";
  s.requested_type = "FTS";
  s.fts.with_position = with_position;
  return s;
}

/// Column `name` of a result batch as doubles (int64, uint64 or float32 columns).
inline std::vector<double> NumericColumn(const arrow::RecordBatch& batch, const std::string& name) {
  std::vector<double> out;
  const int i = batch.schema()->GetFieldIndex(name);
  EXPECT_GE(i, 0) << name;
  if (i < 0) return out;
  arrow::Array a = batch.column(i);
  for (int64_t r = 0; r < a.length(); ++r) {
    switch (a.type_id()) {
      case arrow::TypeId::kInt64:
        out.push_back(static_cast<double>(a.Value<int64_t>(r)));
        break;
      case arrow::TypeId::kUInt64:
        out.push_back(static_cast<double>(a.Value<uint64_t>(r)));
        break;
      case arrow::TypeId::kFloat32:
        out.push_back(a.Value<float>(r));
        break;
      default:
        ADD_FAILURE() << "unexpected type of " << name;
    }
  }
  return out;
}

inline std::vector<int64_t> Ids(const arrow::RecordBatch& batch) {
  std::vector<int64_t> out;
  for (double v : NumericColumn(batch, "id")) out.push_back(static_cast<int64_t>(v));
  return out;
}

/// Whether some plan line starts with `source` and contains `needle`.
inline bool PlanSays(const std::vector<std::string>& plan, const std::string& source,
                     const std::string& needle) {
  for (const auto& line : plan) {
    if (line.rfind(source + ":", 0) == 0 && line.find(needle) != std::string::npos) return true;
  }
  return false;
}

/// Waits until every index of `t` covers every row (num_unindexed_rows == 0), up to 30 s.
inline bool WaitForIndexes(const table::Table& t) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    bool done = true;
    for (const auto& st : t.ListIndexes()) done = done && st.num_unindexed_rows == 0;
    if (done) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

/// Flushes every MemTable of `t` into SSTables (30 s deadline).
inline void FlushTable(table::Table& t) {
  auto r = t.Flush(shard::Clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

/// Names of the snapshot's sources, e.g. {"sstable gen 1", "memtable gen 3 (active)"}.
inline std::vector<std::string> SourceNames(const table::TableSnapshot& snap) {
  std::vector<std::string> out;
  if (snap.shard) {
    for (const auto& s : snap.shard->sources) out.push_back(s.name);
  }
  return out;
}

/// The int64 `id` (user column 0) of the row version at `_rowid` address `row_id`
/// (generation << 32 | position, query/source_rows.h), or nullopt when no source of the
/// snapshot has that generation and position.
inline std::optional<int64_t> IdAtRowId(const table::TableSnapshot& snap, uint64_t row_id) {
  if (!snap.shard) return std::nullopt;
  const uint64_t generation = row_id >> 32;
  const int64_t position = static_cast<int64_t>(row_id & 0xffffffffULL);
  for (const auto& s : snap.shard->sources) {
    if (s.generation != generation) continue;
    const auto [b, row] = s.Locate(position);
    if (b < 0) return std::nullopt;
    return arrow::Array(s.batches[static_cast<size_t>(b)]->column_data(0)).Value<int64_t>(row);
  }
  return std::nullopt;
}

}  // namespace strata::query::testing
