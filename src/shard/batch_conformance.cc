#include "shard/batch_conformance.h"

#include <cmath>
#include <memory>
#include <unordered_set>

#include "arrow/builder.h"

namespace strata::shard {
namespace {

using arrow::DataType;
using arrow::TypeId;

Status Mismatch(const std::string& column, const std::string& what, const std::string& got,
                const std::string& want) {
  return Status::Invalid("column '" + column + "': " + what + " " + got +
                         " does not match the table's " + want);
}

/// Can an array of type `got` be stored as `want`? Child field names are not compared
/// (clients name list items "item" or "element"); everything that changes the layout or the
/// meaning of values is.
Status CheckType(const std::string& column, const DataType& want, const DataType& got) {
  if (want.id() != got.id()) return Mismatch(column, "type", got.ToString(), want.ToString());
  switch (want.id()) {
    case TypeId::kFixedSizeBinary:
      if (want.byte_width() != got.byte_width()) {
        return Mismatch(column, "byte width", std::to_string(got.byte_width()),
                        std::to_string(want.byte_width()));
      }
      break;
    case TypeId::kTime32:
    case TypeId::kTime64:
    case TypeId::kDuration:
    case TypeId::kTimestamp:
      if (want.unit() != got.unit()) {
        return Mismatch(column, "time unit", arrow::TimeUnitName(got.unit()),
                        arrow::TimeUnitName(want.unit()));
      }
      if (want.timezone() != got.timezone()) {
        return Mismatch(column, "timezone", "'" + got.timezone() + "'",
                        "'" + want.timezone() + "'");
      }
      break;
    case TypeId::kDecimal128:
      if (want.precision() != got.precision() || want.scale() != got.scale()) {
        return Mismatch(column, "type", got.ToString(), want.ToString());
      }
      break;
    case TypeId::kFixedSizeList:
      if (want.list_size() != got.list_size()) {
        return Mismatch(column, "vector dimension", std::to_string(got.list_size()),
                        std::to_string(want.list_size()));
      }
      return CheckType(column, *want.value_type(), *got.value_type());
    case TypeId::kList:
    case TypeId::kLargeList:
      return CheckType(column, *want.value_type(), *got.value_type());
    case TypeId::kStruct: {
      if (want.children().size() != got.children().size()) {
        return Mismatch(column, "struct field count", std::to_string(got.children().size()),
                        std::to_string(want.children().size()));
      }
      for (size_t i = 0; i < want.children().size(); ++i) {
        const auto& w = *want.children()[i];
        const auto& g = *got.children()[i];
        if (w.name != g.name) {
          return Mismatch(column, "struct field " + std::to_string(i) + " name", "'" + g.name + "'",
                          "'" + w.name + "'");
        }
        STRATA_RETURN_IF_ERROR(CheckType(column + "." + w.name, *w.type, *g.type));
      }
      break;
    }
    default:
      break;
  }
  return Status::OK();
}

/// A shallow copy of `data` whose type (and children's types) are `type`'s; the same pointer
/// when the types are already identical objects.
arrow::ArrayDataPtr Relabel(const arrow::ArrayDataPtr& data, const arrow::DataTypePtr& type) {
  if (data->type == type) return data;
  auto out = std::make_shared<arrow::ArrayData>(*data);
  out->type = type;
  const auto& kids = type->children();
  for (size_t i = 0; i < out->children.size() && i < kids.size(); ++i) {
    out->children[i] = Relabel(out->children[i], kids[i]->type);
  }
  return out;
}

int64_t NullCount(const arrow::ArrayData& data) {
  if (data.type->id() == TypeId::kNull) return data.length;
  if (data.buffers.empty() || data.buffers[0] == nullptr) return 0;
  return arrow::ComputeNullCount(data);
}

/// Vector columns (fixed_size_list of float16/32/64) must hold usable vectors: a row is null
/// as a whole or has every element set and finite. Search cannot rank NaN/Inf, and a vector
/// with null elements (the Node client pads short vectors with nulls) would silently never
/// match; both are rejected here, naming the row and element.
Status CheckVectorValues(const std::string& column, const arrow::ArrayData& data) {
  if (data.type->id() != TypeId::kFixedSizeList || data.children.empty()) return Status::OK();
  const TypeId item = data.type->value_type()->id();
  if (item != TypeId::kFloat16 && item != TypeId::kFloat32 && item != TypeId::kFloat64) {
    return Status::OK();
  }
  const arrow::Array list(std::make_shared<arrow::ArrayData>(data));
  const arrow::Array values(data.children[0]);
  const int64_t dim = data.type->list_size();
  for (int64_t row = 0; row < data.length; ++row) {
    if (list.IsNull(row)) continue;
    const int64_t start = list.ListStart(row);
    for (int64_t e = 0; e < dim; ++e) {
      const int64_t v = start + e;
      if (values.IsNull(v)) {
        return Status::Invalid("column '" + column + "': row " + std::to_string(row) +
                               " has a null at element " + std::to_string(e) + " of " +
                               std::to_string(dim) +
                               "; a vector must be null as a whole or have every element set");
      }
      bool finite = true;
      if (item == TypeId::kFloat32) {
        finite = std::isfinite(values.Value<float>(v));
      } else if (item == TypeId::kFloat64) {
        finite = std::isfinite(values.Value<double>(v));
      } else {
        finite = (values.Value<uint16_t>(v) & 0x7C00) != 0x7C00;  // exponent all ones: Inf/NaN
      }
      if (!finite) {
        return Status::Invalid("column '" + column + "': row " + std::to_string(row) +
                               " has a NaN or infinite value at element " + std::to_string(e) +
                               "; vector values must be finite");
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status ValidateTableSchema(const arrow::Schema& schema) {
  if (schema.num_fields() == 0) return Status::Invalid("table schema has no columns");
  std::unordered_set<std::string> seen;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const auto& f = schema.field(i);
    if (f == nullptr || f->type == nullptr) {
      return Status::Invalid("table schema field " + std::to_string(i) + " has no type");
    }
    if (f->name.empty()) {
      return Status::Invalid("table schema field " + std::to_string(i) + " has an empty name");
    }
    if (!seen.insert(f->name).second) {
      return Status::Invalid("table schema has column '" + f->name + "' more than once");
    }
  }
  return Status::OK();
}

Result<arrow::RecordBatchPtr> ConformBatch(const arrow::SchemaPtr& schema,
                                           const arrow::RecordBatch& batch) {
  const arrow::Schema& got = *batch.schema();
  if (got.num_fields() != batch.num_columns()) {
    return Status::Invalid("batch has " + std::to_string(batch.num_columns()) +
                           " columns but its schema " + std::to_string(got.num_fields()));
  }
  // Every batch column must be a table column, once.
  std::vector<int> source(static_cast<size_t>(schema->num_fields()), -1);
  for (int i = 0; i < got.num_fields(); ++i) {
    const std::string& name = got.field(i)->name;
    int j = schema->GetFieldIndex(name);
    if (j < 0) {
      return Status::Invalid("column '" + name + "' is not in the table schema " +
                             schema->ToString());
    }
    if (source[static_cast<size_t>(j)] >= 0) {
      return Status::Invalid("column '" + name + "' appears more than once in the batch");
    }
    source[static_cast<size_t>(j)] = i;
  }
  STRATA_RETURN_IF_ERROR(batch.Validate());
  std::vector<arrow::ArrayDataPtr> columns;
  columns.reserve(source.size());
  for (int j = 0; j < schema->num_fields(); ++j) {
    const arrow::Field& want = *schema->field(j);
    int i = source[static_cast<size_t>(j)];
    if (i < 0) {
      if (!want.nullable) {
        return Status::Invalid("column '" + want.name +
                               "' is missing from the batch and is not nullable");
      }
      arrow::ArrayBuilder builder(want.type);
      STRATA_RETURN_IF_ERROR(builder.AppendNulls(batch.num_rows()));
      STRATA_ASSIGN_OR_RETURN(auto filled, builder.Finish());
      columns.push_back(std::move(filled));
      continue;
    }
    const arrow::ArrayDataPtr& data = batch.column_data(i);
    STRATA_RETURN_IF_ERROR(CheckType(want.name, *want.type, *data->type));
    STRATA_RETURN_IF_ERROR(CheckVectorValues(want.name, *data));
    if (!want.nullable) {
      int64_t nulls = NullCount(*data);
      if (nulls > 0) {
        return Status::Invalid("column '" + want.name + "' is not nullable but has " +
                               std::to_string(nulls) + " null" + (nulls == 1 ? "" : "s"));
      }
    }
    columns.push_back(Relabel(data, want.type));
  }
  return std::make_shared<arrow::RecordBatch>(schema, batch.num_rows(), std::move(columns));
}

Result<std::vector<arrow::RecordBatchPtr>> ConformBatches(
    const arrow::SchemaPtr& schema, const std::vector<arrow::RecordBatchPtr>& batches) {
  std::vector<arrow::RecordBatchPtr> out;
  out.reserve(batches.size());
  for (size_t k = 0; k < batches.size(); ++k) {
    if (batches[k] == nullptr) return Status::Invalid("batch " + std::to_string(k) + " is null");
    auto conformed = ConformBatch(schema, *batches[k]);
    if (!conformed.ok()) {
      return batches.size() == 1 ? conformed.status()
                                 : conformed.status().WithContext("batch " + std::to_string(k));
    }
    out.push_back(std::move(conformed).value());
  }
  return out;
}

}  // namespace strata::shard
