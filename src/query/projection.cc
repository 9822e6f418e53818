#include "query/projection.h"

#include <unordered_set>

namespace strata::query {

Result<Projection> ResolveProjection(const arrow::SchemaPtr& schema,
                                     const std::vector<ColumnRef>& columns) {
  Projection out;
  if (columns.empty()) {
    for (int i = 0; i < schema->num_fields(); ++i) out.indices.push_back(i);
    out.schema = schema;
    return out;
  }
  std::vector<arrow::FieldPtr> fields;
  std::unordered_set<std::string> seen;
  for (const ColumnRef& ref : columns) {
    const int index = schema->GetFieldIndex(ref.name);
    if (index < 0) {
      std::string names;
      for (const auto& f : schema->fields()) names += (names.empty() ? "" : ", ") + f->name;
      return Status::Invalid("column '" + ref.name +
                             "' is not in the table schema (columns: " + names + ")");
    }
    const std::string& out_name = ref.alias.empty() ? ref.name : ref.alias;
    if (!seen.insert(out_name).second) {
      return Status::Invalid("columns: output column '" + out_name + "' is selected twice");
    }
    out.indices.push_back(index);
    const auto& src = schema->field(index);
    fields.push_back(arrow::field(out_name, src->type, src->nullable, src->metadata));
  }
  out.schema = std::make_shared<arrow::Schema>(std::move(fields));
  return out;
}

arrow::RecordBatchPtr ApplyProjection(const Projection& projection,
                                      const arrow::RecordBatch& batch) {
  std::vector<arrow::ArrayDataPtr> columns;
  columns.reserve(projection.indices.size());
  for (int i : projection.indices) columns.push_back(batch.column_data(i));
  return std::make_shared<arrow::RecordBatch>(projection.schema, batch.num_rows(),
                                              std::move(columns));
}

}  // namespace strata::query
