// Seeded clustered rows for the compaction benchmark (bench/compaction_bench.cc): schema
// {id int64 primary key, vec fixed_size_list<float32>[128]}; vectors around kCentroids centres
// uniform in [-1, 1]^128 with Gaussian spread sigma 0.1 per dimension (seed 42: every run and
// the restart child draw the same sequence).
// Thread-safety: a Vectors is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "arrow/builder.h"
#include "table/primary_key.h"

namespace strata::bench {

inline constexpr int32_t kDim = 128;
inline constexpr int kCentroids = 1000;

inline arrow::SchemaPtr Schema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return *table::DeclarePrimaryKey(s, {"id"});
}

class Vectors {
 public:
  Vectors() : rng_(42), centroids_(kCentroids * kDim) {
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& x : centroids_) x = u(rng_);
  }
  std::vector<float> Next() {
    std::normal_distribution<float> n(0, 0.1f);
    const size_t c = rng_() % kCentroids;
    std::vector<float> v(kDim);
    for (int d = 0; d < kDim; ++d) v[d] = centroids_[c * kDim + d] + n(rng_);
    return v;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<float> centroids_;
};

inline arrow::RecordBatchPtr Batch(const std::vector<int64_t>& ids, Vectors& vecs) {
  arrow::RecordBatchBuilder b(Schema());
  for (int64_t id : ids) {
    (void)b.column(0)->AppendInt(id);
    const std::vector<float> v = vecs.Next();
    (void)b.column(1)->child(0)->AppendFloats(v.data(), kDim);
    (void)b.column(1)->AppendValid();
  }
  return *b.Finish();
}

inline arrow::RecordBatchPtr Keys(const std::vector<int64_t>& ids) {
  std::vector<std::optional<int64_t>> idv(ids.begin(), ids.end());
  auto schema = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
  return std::make_shared<arrow::RecordBatch>(
      schema, static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(idv)});
}

}  // namespace strata::bench
