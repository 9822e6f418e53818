#include "memtable/hidden_columns.h"

#include <algorithm>
#include <set>

#include "arrow/builder.h"
#include "arrow/compute/take.h"
#include "format/key_encoding.h"

namespace strata::memtable {

Result<StorageLayout> MakeStorageLayout(arrow::SchemaPtr user_schema,
                                        const std::vector<std::string>& primary_key) {
  if (user_schema == nullptr) return Status::Invalid("storage layout: user schema is null");
  for (const auto& f : user_schema->fields()) {
    if (f->name == kRowIdColumn || f->name == kTombstoneColumn) {
      return Status::Invalid("column name '" + f->name +
                             "' is reserved for a hidden storage column");
    }
  }
  StorageLayout layout;
  layout.user_schema = user_schema;
  std::set<std::string> seen;
  for (const auto& name : primary_key) {
    int idx = user_schema->GetFieldIndex(name);
    if (idx < 0) return Status::Invalid("primary key column '" + name + "' is not in the schema");
    if (!seen.insert(name).second) {
      return Status::Invalid("primary key column '" + name + "' is listed twice");
    }
    STRATA_RETURN_IF_ERROR(format::ValidateKeyType(*user_schema->field(idx)->type, name));
    layout.key_columns.push_back(idx);
  }
  std::vector<arrow::FieldPtr> fields;
  for (int i = 0; i < user_schema->num_fields(); ++i) {
    const auto& f = user_schema->field(i);
    const bool is_key = std::find(layout.key_columns.begin(), layout.key_columns.end(), i) !=
                        layout.key_columns.end();
    if (is_key || f->nullable) {
      fields.push_back(f);
    } else {
      fields.push_back(arrow::field(f->name, f->type, /*nullable=*/true, f->metadata));
    }
  }
  if (primary_key.empty()) {
    layout.rowid_column = static_cast<int>(fields.size());
    layout.key_columns.push_back(layout.rowid_column);
    fields.push_back(arrow::field(kRowIdColumn, arrow::uint64(), /*nullable=*/false));
  }
  layout.tombstone_column = static_cast<int>(fields.size());
  fields.push_back(arrow::field(kTombstoneColumn, arrow::boolean(), /*nullable=*/true));
  layout.storage_schema =
      std::make_shared<arrow::Schema>(std::move(fields), user_schema->metadata());
  return layout;
}

arrow::ArrayDataPtr MakeRowIdArray(uint64_t first, int64_t n) {
  arrow::ArrayBuilder b(arrow::uint64());
  b.Reserve(n);
  for (int64_t i = 0; i < n; ++i) (void)b.AppendUInt(first + static_cast<uint64_t>(i));
  return *b.Finish();
}

arrow::ArrayDataPtr MakeConstantBoolArray(bool value, int64_t n) {
  arrow::ArrayBuilder b(arrow::boolean());
  b.Reserve(n);
  for (int64_t i = 0; i < n; ++i) (void)b.AppendBool(value);
  return *b.Finish();
}

Result<arrow::RecordBatchPtr> AddHiddenColumns(const StorageLayout& layout,
                                               const arrow::RecordBatch& batch,
                                               uint64_t first_rowid, bool tombstone) {
  if (batch.num_columns() != layout.user_schema->num_fields()) {
    return Status::Invalid("batch has " + std::to_string(batch.num_columns()) +
                           " columns, the table schema " +
                           std::to_string(layout.user_schema->num_fields()));
  }
  std::vector<arrow::ArrayDataPtr> columns = batch.columns();
  if (layout.rowid_column >= 0) columns.push_back(MakeRowIdArray(first_rowid, batch.num_rows()));
  columns.push_back(MakeConstantBoolArray(tombstone, batch.num_rows()));
  return std::make_shared<arrow::RecordBatch>(layout.storage_schema, batch.num_rows(),
                                              std::move(columns));
}

Result<arrow::RecordBatchPtr> MakeTombstones(const StorageLayout& layout,
                                             const arrow::RecordBatch& storage_batch,
                                             const std::vector<int64_t>& rows) {
  const auto& schema = *layout.storage_schema;
  if (storage_batch.num_columns() != schema.num_fields()) {
    return Status::Invalid("tombstones: batch has " + std::to_string(storage_batch.num_columns()) +
                           " columns, the storage schema " + std::to_string(schema.num_fields()));
  }
  for (int64_t r : rows) {
    if (r < 0 || r >= storage_batch.num_rows()) {
      return Status::Invalid("tombstones: row " + std::to_string(r) + " is outside the batch of " +
                             std::to_string(storage_batch.num_rows()) + " rows");
    }
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  std::vector<arrow::ArrayDataPtr> columns;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const bool copy = std::find(layout.key_columns.begin(), layout.key_columns.end(), i) !=
                      layout.key_columns.end();
    if (i == layout.tombstone_column) {
      columns.push_back(MakeConstantBoolArray(true, n));
    } else if (copy) {
      STRATA_ASSIGN_OR_RETURN(auto taken,
                              arrow::compute::Take(*storage_batch.column_data(i), rows.data(), n));
      columns.push_back(std::move(taken));
    } else {
      arrow::ArrayBuilder b(schema.field(i)->type);
      STRATA_RETURN_IF_ERROR(b.AppendNulls(n));
      STRATA_ASSIGN_OR_RETURN(auto nulls, b.Finish());
      columns.push_back(std::move(nulls));
    }
  }
  return std::make_shared<arrow::RecordBatch>(layout.storage_schema, n, std::move(columns));
}

}  // namespace strata::memtable
