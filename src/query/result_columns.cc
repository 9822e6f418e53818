#include "query/result_columns.h"

#include "query/query_result.h"

namespace strata::query {

namespace {
arrow::ArrayDataPtr MakeFixed(arrow::DataTypePtr type, int64_t n, const void* values,
                              int64_t bytes) {
  auto data = std::make_shared<arrow::ArrayData>();
  data->type = std::move(type);
  data->length = n;
  data->null_count = 0;
  data->buffers = {nullptr, bytes == 0 ? arrow::Buffer::AllocateZeroed(0)
                                       : arrow::Buffer::CopyFrom(values, bytes)};
  return data;
}
}  // namespace

arrow::SchemaPtr OutputSchema(const Projection& projection, bool with_distance, bool with_row_id) {
  if (!with_distance && !with_row_id) return projection.schema;
  std::vector<arrow::FieldPtr> fields = projection.schema->fields();
  if (with_distance) fields.push_back(arrow::field(kDistanceColumn, arrow::float32(), true));
  if (with_row_id) fields.push_back(arrow::field(kRowIdColumn, arrow::uint64(), true));
  return std::make_shared<arrow::Schema>(std::move(fields), projection.schema->metadata());
}

arrow::ArrayDataPtr MakeFloat32Values(const std::vector<float>& values) {
  const auto n = static_cast<int64_t>(values.size());
  return MakeFixed(arrow::float32(), n, values.data(), n * 4);
}

arrow::ArrayDataPtr MakeUInt64Array(const std::vector<uint64_t>& values) {
  const auto n = static_cast<int64_t>(values.size());
  return MakeFixed(arrow::uint64(), n, values.data(), n * 8);
}

arrow::ArrayDataPtr MakeRowIdRange(int64_t start, int64_t n) {
  std::vector<uint64_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = static_cast<uint64_t>(start + i);
  return MakeUInt64Array(ids);
}

}  // namespace strata::query
