// Test helpers for the storage tests: a temporary directory removed at scope exit, a small
// table schema (id int64 non-null, name utf8, vector fixed_size_list<float32>[4]) and
// deterministic batches of it, and readers of ids back out of batches.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "arrow/type.h"

namespace strata::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata-test-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline constexpr int32_t kDim = 4;

inline arrow::SchemaPtr TestSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), /*nullable=*/false),
      arrow::field("name", arrow::utf8()),
      arrow::field("vector", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim)),
  });
}

/// Rows with ids [first, first + n): name "row{id}", vector {id, id+0.25, id+0.5, id+0.75}.
inline arrow::RecordBatchPtr MakeBatch(int64_t first, int64_t n,
                                       arrow::SchemaPtr schema = TestSchema()) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> names;
  std::vector<float> vec;
  for (int64_t i = first; i < first + n; ++i) {
    ids.push_back(i);
    names.push_back("row" + std::to_string(i));
    for (int d = 0; d < kDim; ++d) vec.push_back(static_cast<float>(i) + 0.25f * d);
  }
  return std::make_shared<arrow::RecordBatch>(
      schema, n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeUtf8Array(names),
                                       arrow::MakeVectorArray(vec, kDim)});
}

/// Every value of int64 column `column` over `batches`, in order.
inline std::vector<int64_t> Ids(const std::vector<arrow::RecordBatchPtr>& batches,
                                const std::string& column = "id") {
  std::vector<int64_t> out;
  for (const auto& b : batches) {
    int idx = b->schema()->GetFieldIndex(column);
    EXPECT_GE(idx, 0);
    if (idx < 0) continue;
    arrow::Array a = b->column(idx);
    for (int64_t i = 0; i < a.length(); ++i) out.push_back(a.Value<int64_t>(i));
  }
  return out;
}

inline std::vector<int64_t> Range(int64_t first, int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = first; i < first + n; ++i) out.push_back(i);
  return out;
}

}  // namespace strata::testing
