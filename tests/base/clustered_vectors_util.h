// Test data for the base-index tests (base_ivf_test.cc, base_index_builder_test.cc): a table
// schema (id int64 primary key, vector float32 x kDim), seeded clustered vectors (64 centres in
// [-1, 1]^32, points at N(0, 0.15) around them), a batch of them with consecutive ids, and the
// ids a query answered.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "arrow/builder.h"
#include "query/query_result.h"
#include "table/primary_key.h"

namespace strata::testing::clustered {

constexpr int64_t kDim = 32;

inline arrow::SchemaPtr VecSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
  return *table::DeclarePrimaryKey(s, {"id"});
}

class Data {
 public:
  explicit Data(uint64_t seed) : rng_(seed) {
    std::uniform_real_distribution<float> u(-1, 1);
    centres_.resize(64 * kDim);
    for (float& c : centres_) c = u(rng_);
  }
  /// `n` more vectors (n x kDim floats, row-major).
  std::vector<float> Next(int64_t n) {
    std::normal_distribution<float> g(0, 0.15f);
    std::uniform_int_distribution<int> pick(0, 63);
    std::vector<float> out(static_cast<size_t>(n * kDim));
    for (int64_t i = 0; i < n; ++i) {
      const int c = pick(rng_);
      for (int64_t d = 0; d < kDim; ++d) out[i * kDim + d] = centres_[c * kDim + d] + g(rng_);
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<float> centres_;
};

/// The vectors `v` as rows with ids first_id, first_id + 1, ...
inline arrow::RecordBatchPtr Rows(int64_t first_id, const std::vector<float>& v) {
  const int64_t n = static_cast<int64_t>(v.size()) / kDim;
  std::vector<std::optional<int64_t>> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back(first_id + i);
  return std::make_shared<arrow::RecordBatch>(
      VecSchema(), n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids),
                                       arrow::MakeVectorArray(v, kDim)});
}

/// The id column (column 0) of a query's answer, in order.
inline std::vector<int64_t> Ids(const query::QueryResult& r) {
  std::vector<int64_t> out;
  for (const auto& b : r.batches) {
    arrow::Array ids = b->column(0);
    for (int64_t i = 0; i < b->num_rows(); ++i) out.push_back(ids.Value<int64_t>(i));
  }
  return out;
}

}  // namespace strata::testing::clustered
