// Test helpers: small snapshots with an id (int64), a name (utf8) and a vector column.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arrow/builder.h"
#include "arrow/type.h"
#include "index/index_spec.h"
#include "shard/shard_writer.h"
#include "table/table.h"

namespace strata::query::testing {

/// The definition of an index of `kind` ("HNSW" or "BTREE") named `name` on `column`.
inline index::IndexSpec IndexSpecFor(index::IndexKind kind, const std::string& column,
                                     const std::string& name) {
  index::IndexSpec spec;
  spec.kind = kind;
  spec.column = column;
  spec.name = name;
  spec.requested_type = kind == index::IndexKind::kHnsw ? "HNSW" : "BTREE";
  return spec;
}

inline arrow::DataTypePtr VectorType(int32_t dim) {
  return arrow::fixed_size_list(arrow::field("item", arrow::float32(), true), dim);
}

inline arrow::SchemaPtr TestSchema(int32_t dim) {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
      arrow::field("vector", VectorType(dim))});
}

/// One batch: ids, names and vectors (nullopt = null vector), all of dimension `dim`.
inline arrow::RecordBatchPtr TestBatch(const arrow::SchemaPtr& schema, int32_t dim,
                                       const std::vector<int64_t>& ids,
                                       const std::vector<std::optional<std::string>>& names,
                                       const std::vector<std::optional<std::vector<float>>>& vecs) {
  arrow::RecordBatchBuilder b(schema);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(b.column(0)->AppendInt(ids[i]).ok());
    if (names[i]) {
      EXPECT_TRUE(b.column(1)->AppendBytes(*names[i]).ok());
    } else {
      EXPECT_TRUE(b.column(1)->AppendNull().ok());
    }
    if (vecs[i]) {
      EXPECT_EQ(static_cast<int32_t>(vecs[i]->size()), dim);
      EXPECT_TRUE(b.column(2)->child(0)->AppendFloats(vecs[i]->data(), dim).ok());
      EXPECT_TRUE(b.column(2)->AppendValid().ok());
    } else {
      EXPECT_TRUE(b.column(2)->AppendNull().ok());
    }
  }
  auto batch = b.Finish();
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  return *batch;
}

inline table::TableSnapshot MakeSnapshot(arrow::SchemaPtr schema,
                                         std::vector<arrow::RecordBatchPtr> batches) {
  table::TableSnapshot s;
  s.shard = shard::ViewOfBatches(schema, std::move(batches));
  s.schema = std::move(schema);
  s.version = 1;
  s.num_rows = s.shard->num_rows;
  return s;
}

/// Column `name` of a single-batch result as int64 values.
inline std::vector<int64_t> Int64Column(const arrow::RecordBatch& batch, const std::string& name) {
  std::vector<int64_t> out;
  const int i = batch.schema()->GetFieldIndex(name);
  EXPECT_GE(i, 0) << name;
  if (i < 0) return out;
  arrow::Array a = batch.column(i);
  for (int64_t r = 0; r < a.length(); ++r) out.push_back(a.Value<int64_t>(r));
  return out;
}

}  // namespace strata::query::testing
