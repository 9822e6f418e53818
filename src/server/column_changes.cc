#include "server/column_changes.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "arrow/json/schema_json.h"
#include "query/filter/evaluator.h"

namespace strata::server {

namespace {

using nlohmann::json;

constexpr const char* kReservedNames[] = {"_rowid", "_distance", "_score", "_rowoffset",
                                          "_tombstone"};

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

/// Invalid when `name` (a new column name, `what` naming the field) is empty or reserved.
Status CheckNewName(const std::string& name, const std::string& what) {
  if (name.empty()) return Status::Invalid(what + " is empty");
  const std::string lower = Lower(name);
  for (const char* r : kReservedNames) {
    if (lower == r) {
      return Status::Invalid(what + " '" + name +
                             "' is reserved (hidden or result column); choose another name");
    }
  }
  return Status::OK();
}

std::string ColumnList(const arrow::Schema& schema) {
  std::string names;
  for (int i = 0; i < schema.num_fields(); ++i) names += (i ? ", " : "") + schema.field(i)->name;
  return names;
}

Result<int> ColumnIndex(const arrow::Schema& schema, const std::string& name,
                        const std::string& what) {
  const int idx = schema.GetFieldIndex(name);
  if (idx < 0) {
    std::string hint = name.find('.') != std::string::npos
                           ? " (nested field paths are not supported; name a top-level column)"
                           : "";
    return Status::Invalid(what + ": unknown column '" + name + "'" + hint +
                           "; columns are: " + ColumnList(schema));
  }
  return idx;
}

Result<json> ParseObject(std::string_view body, const char* route, const char* key,
                         const char* shape) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains(key) || !j[key].is_array()) {
    return Status::Invalid(std::string(route) + ": body must be " + shape);
  }
  if (j[key].empty()) {
    return Status::Invalid(std::string(route) + ": '" + key + "' is empty; list at least one");
  }
  return j;
}

arrow::RecordBatchPtr MakeBatch(const arrow::SchemaPtr& schema, int64_t rows,
                                std::vector<arrow::ArrayDataPtr> columns) {
  return std::make_shared<arrow::RecordBatch>(schema, rows, std::move(columns));
}

// ---- lossless cast check ----

bool IsNumberOrBool(const arrow::DataType& t) {
  return t.is_integer() || t.is_floating() || t.id() == arrow::TypeId::kBool;
}

/// Whether value i of `a` and `b` (same fixed-width number / bool type) is the same value
/// (floats: numerically, NaN equal to NaN, -0 equal to 0).
bool SameValue(const arrow::Array& a, const arrow::Array& b, int64_t i) {
  switch (a.type_id()) {
    case arrow::TypeId::kBool:
      return a.BoolValue(i) == b.BoolValue(i);
    case arrow::TypeId::kFloat32: {
      const float x = a.Value<float>(i), y = b.Value<float>(i);
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case arrow::TypeId::kFloat64: {
      const double x = a.Value<double>(i), y = b.Value<double>(i);
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    default: {
      const int width = a.type()->bit_width() / 8;
      const uint8_t* pa = a.data()->buffers[1]->data() + (a.offset() + i) * width;
      const uint8_t* pb = b.data()->buffers[1]->data() + (b.offset() + i) * width;
      return std::memcmp(pa, pb, static_cast<size_t>(width)) == 0;
    }
  }
}

/// Casts `values` to `target`, refusing a lossy number conversion (see the header).
Result<arrow::ArrayDataPtr> LosslessCast(const arrow::ArrayDataPtr& values,
                                         const arrow::DataTypePtr& target,
                                         const std::string& column) {
  const std::string what = "alter_columns: column '" + column + "'";
  STRATA_ASSIGN_OR_RETURN(auto cast, query::filter::CastArray(values, target, what));
  const arrow::DataType& from = *values->type;
  if (!IsNumberOrBool(from) || !IsNumberOrBool(*target)) return cast;
  if (from.is_floating() && target->is_floating()) return cast;  // rounding is allowed
  STRATA_ASSIGN_OR_RETURN(auto back, query::filter::CastArray(cast, values->type, what));
  const arrow::Array src(values), rt(back), out(cast);
  for (int64_t i = 0; i < src.length(); ++i) {
    if (src.IsNull(i)) continue;
    if (!SameValue(src, rt, i)) {
      auto repr = query::filter::CastArray(src.Slice(i, 1).data(), arrow::utf8(), what);
      std::string shown = repr.ok() ? std::string(arrow::Array(*repr).GetView(0)) : "?";
      return Status::Invalid(what + ": value " + shown + " does not convert to " +
                             target->ToString() + " without loss; nothing changed");
    }
  }
  return cast;
}

}  // namespace

// ---- parsing ----

Result<std::vector<NewColumn>> ParseAddColumns(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(
      json j,
      ParseObject(body, "add_columns", "new_columns",
                  "{\"new_columns\": [{\"name\": \"col\", \"expression\": \"sql\"}, ...]}"));
  std::vector<NewColumn> out;
  const auto& cols = j["new_columns"];
  for (size_t i = 0; i < cols.size(); ++i) {
    const std::string at = "add_columns: new_columns[" + std::to_string(i) + "]";
    const auto& c = cols[i];
    if (!c.is_object()) return Status::Invalid(at + " must be {\"name\", \"expression\"}");
    if (!c.contains("name") || !c["name"].is_string()) {
      return Status::Invalid(at + ".name must be a string");
    }
    if (!c.contains("expression") || !c["expression"].is_string()) {
      return Status::Invalid(at + ".expression must be a SQL string");
    }
    out.push_back({c["name"].get<std::string>(), c["expression"].get<std::string>()});
  }
  return out;
}

Result<std::vector<ColumnAlteration>> ParseAlterColumns(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(
      json j, ParseObject(body, "alter_columns", "alterations",
                          "{\"alterations\": [{\"path\": \"col\", \"rename\"?: \"new\", "
                          "\"nullable\"?: bool, \"data_type\"?: {\"type\": ...}}, ...]}"));
  std::vector<ColumnAlteration> out;
  const auto& alts = j["alterations"];
  for (size_t i = 0; i < alts.size(); ++i) {
    const std::string at = "alter_columns: alterations[" + std::to_string(i) + "]";
    const auto& a = alts[i];
    if (!a.is_object()) return Status::Invalid(at + " must be an object with \"path\"");
    if (!a.contains("path") || !a["path"].is_string()) {
      return Status::Invalid(at + ".path must be a string");
    }
    ColumnAlteration alt;
    alt.path = a["path"].get<std::string>();
    if (a.contains("rename") && !a["rename"].is_null()) {
      if (!a["rename"].is_string()) return Status::Invalid(at + ".rename must be a string");
      alt.rename = a["rename"].get<std::string>();
    }
    if (a.contains("nullable") && !a["nullable"].is_null()) {
      if (!a["nullable"].is_boolean()) return Status::Invalid(at + ".nullable must be a boolean");
      alt.nullable = a["nullable"].get<bool>();
    }
    if (a.contains("data_type") && !a["data_type"].is_null()) {
      auto type = arrow::json::DataTypeFromJson(a["data_type"], alt.path);
      if (!type.ok()) return type.status().WithContext(at + ".data_type");
      alt.data_type = std::move(type).value();
    }
    if (!alt.rename && !alt.nullable && alt.data_type == nullptr) {
      return Status::Invalid(at + " changes nothing; give rename, nullable or data_type");
    }
    out.push_back(std::move(alt));
  }
  return out;
}

Result<std::vector<std::string>> ParseDropColumns(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(
      json j, ParseObject(body, "drop_columns", "columns", "{\"columns\": [\"col\", ...]}"));
  std::vector<std::string> out;
  const auto& cols = j["columns"];
  for (size_t i = 0; i < cols.size(); ++i) {
    if (!cols[i].is_string()) {
      return Status::Invalid("drop_columns: columns[" + std::to_string(i) +
                             "] must be a column name string");
    }
    out.push_back(cols[i].get<std::string>());
  }
  return out;
}

// ---- planning ----

Result<table::ColumnRewrite> PlanAddColumns(const std::vector<NewColumn>& columns,
                                            const table::RewriteSource& source) {
  const arrow::SchemaPtr& schema = source.snapshot.schema;
  std::vector<arrow::FieldPtr> fields = schema->fields();
  std::vector<query::filter::BoundExprPtr> exprs;
  std::set<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string at = "add_columns: new_columns[" + std::to_string(i) + "]";
    const NewColumn& c = columns[i];
    STRATA_RETURN_IF_ERROR(CheckNewName(c.name, at + ".name"));
    if (schema->GetFieldIndex(c.name) >= 0) {
      return Status::Invalid(at + ".name: column '" + c.name + "' already exists");
    }
    if (!names.insert(c.name).second) {
      return Status::Invalid(at + ".name: column '" + c.name + "' is listed twice");
    }
    query::filter::BindOptions options;
    options.require_bool = false;
    options.context = at + ".expression for '" + c.name + "'";
    STRATA_ASSIGN_OR_RETURN(auto expr, query::filter::ParseAndBind(c.expression, *schema, options));
    if (expr->type()->id() == arrow::TypeId::kNull) {
      return Status::Invalid(options.context + ": a bare NULL has no type; write CAST(NULL AS " +
                             "<type>), e.g. CAST(NULL AS bigint)");
    }
    if (expr->uses_row_id() || expr->uses_row_offset()) {
      return Status::Invalid(options.context +
                             ": may not read _rowid or _rowoffset (the rewrite gives rows new "
                             "row ids)");
    }
    fields.push_back(arrow::field(c.name, expr->type(), /*nullable=*/true));
    exprs.push_back(std::move(expr));
  }
  table::ColumnRewrite r;
  r.schema = std::make_shared<arrow::Schema>(std::move(fields), schema->metadata());
  r.primary_key = source.primary_key;
  r.indexes = source.indexes;
  r.transform = [schema = r.schema, exprs](const arrow::RecordBatchPtr& batch,
                                           size_t) -> Result<arrow::RecordBatchPtr> {
    std::vector<arrow::ArrayDataPtr> cols = batch->columns();
    for (const auto& e : exprs) {
      STRATA_ASSIGN_OR_RETURN(auto values, query::filter::Evaluate(*e, *batch));
      cols.push_back(std::move(values));
    }
    return MakeBatch(schema, batch->num_rows(), std::move(cols));
  };
  return r;
}

Result<table::ColumnRewrite> PlanAlterColumns(const std::vector<ColumnAlteration>& alterations,
                                              const table::RewriteSource& source) {
  const arrow::SchemaPtr& schema = source.snapshot.schema;
  std::vector<arrow::FieldPtr> fields = schema->fields();
  std::map<std::string, std::string> renames;  // old -> new
  std::set<std::string> new_names;
  std::set<int> touched;
  std::vector<std::pair<int, arrow::DataTypePtr>> casts;  // column index, target type
  const std::set<std::string> pk(source.primary_key.begin(), source.primary_key.end());
  for (size_t i = 0; i < alterations.size(); ++i) {
    const std::string at = "alter_columns: alterations[" + std::to_string(i) + "]";
    const ColumnAlteration& a = alterations[i];
    STRATA_ASSIGN_OR_RETURN(int idx, ColumnIndex(*schema, a.path, at + ".path"));
    if (!touched.insert(idx).second) {
      return Status::Invalid(at + ".path: column '" + a.path + "' is altered twice");
    }
    arrow::Field f = *fields[static_cast<size_t>(idx)];
    if (a.data_type != nullptr && !a.data_type->Equals(*f.type)) {
      if (pk.count(a.path)) {
        return Status::Invalid(at + ".data_type: column '" + a.path +
                               "' is part of the primary key; its type cannot change");
      }
      const auto& old_t = *f.type;
      const auto& new_t = *a.data_type;
      if (old_t.id() == arrow::TypeId::kFixedSizeList &&
          new_t.id() == arrow::TypeId::kFixedSizeList && old_t.list_size() != new_t.list_size()) {
        return Status::Invalid(at + ".data_type: changing the vector dimension of '" + a.path +
                               "' from " + std::to_string(old_t.list_size()) + " to " +
                               std::to_string(new_t.list_size()) + " is not supported");
      }
      casts.emplace_back(idx, a.data_type);
      f.type = a.data_type;
    }
    if (a.nullable) {
      if (!*a.nullable && f.nullable) {
        int64_t nulls = 0;
        for (const auto& b : source.batches) nulls += b->column(idx).null_count();
        if (nulls > 0) {
          return Status::Invalid(at + ".nullable: column '" + a.path + "' holds " +
                                 std::to_string(nulls) +
                                 " nulls; it cannot become non-nullable (update or delete "
                                 "them first)");
        }
      }
      f.nullable = *a.nullable;
    }
    if (a.rename && *a.rename != a.path) {
      STRATA_RETURN_IF_ERROR(CheckNewName(*a.rename, at + ".rename"));
      if (schema->GetFieldIndex(*a.rename) >= 0) {
        return Status::Invalid(at + ".rename: column '" + *a.rename + "' already exists");
      }
      if (!new_names.insert(*a.rename).second) {
        return Status::Invalid(at + ".rename: two columns would be named '" + *a.rename + "'");
      }
      renames[a.path] = *a.rename;
      f.name = *a.rename;
    }
    fields[static_cast<size_t>(idx)] = std::make_shared<arrow::Field>(std::move(f));
  }
  table::ColumnRewrite r;
  r.schema = std::make_shared<arrow::Schema>(std::move(fields), schema->metadata());
  for (const auto& k : source.primary_key) {
    auto it = renames.find(k);
    r.primary_key.push_back(it == renames.end() ? k : it->second);
  }
  for (auto spec : source.indexes) {
    auto it = renames.find(spec.column);
    if (it != renames.end()) spec.column = it->second;
    Status fits = index::ValidateIndexSpec(spec, *r.schema);
    if (!fits.ok()) {
      return fits.WithContext("alter_columns: index '" + spec.name +
                              "' cannot stay on the altered column (drop the index first)");
    }
    r.indexes.push_back(std::move(spec));
  }
  r.transform = [schema = r.schema, casts](const arrow::RecordBatchPtr& batch,
                                           size_t) -> Result<arrow::RecordBatchPtr> {
    std::vector<arrow::ArrayDataPtr> cols = batch->columns();
    for (const auto& [idx, type] : casts) {
      STRATA_ASSIGN_OR_RETURN(
          cols[static_cast<size_t>(idx)],
          LosslessCast(cols[static_cast<size_t>(idx)], type, batch->schema()->field(idx)->name));
    }
    return MakeBatch(schema, batch->num_rows(), std::move(cols));
  };
  return r;
}

Result<table::ColumnRewrite> PlanDropColumns(const std::vector<std::string>& columns,
                                             const table::RewriteSource& source) {
  const arrow::SchemaPtr& schema = source.snapshot.schema;
  std::set<int> dropped;
  const std::set<std::string> pk(source.primary_key.begin(), source.primary_key.end());
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string at = "drop_columns: columns[" + std::to_string(i) + "]";
    STRATA_ASSIGN_OR_RETURN(int idx, ColumnIndex(*schema, columns[i], at));
    if (pk.count(columns[i])) {
      return Status::Invalid(at + ": column '" + columns[i] +
                             "' is part of the primary key and cannot be dropped");
    }
    if (!dropped.insert(idx).second) {
      return Status::Invalid(at + ": column '" + columns[i] + "' is listed twice");
    }
  }
  if (static_cast<int>(dropped.size()) == schema->num_fields()) {
    return Status::Invalid(
        "drop_columns: cannot drop every column of the table (drop the table "
        "instead)");
  }
  std::vector<arrow::FieldPtr> fields;
  std::vector<int> kept;
  std::set<std::string> dropped_names;
  for (int c = 0; c < schema->num_fields(); ++c) {
    if (dropped.count(c)) {
      dropped_names.insert(schema->field(c)->name);
    } else {
      fields.push_back(schema->field(c));
      kept.push_back(c);
    }
  }
  table::ColumnRewrite r;
  r.schema = std::make_shared<arrow::Schema>(std::move(fields), schema->metadata());
  r.primary_key = source.primary_key;
  for (const auto& spec : source.indexes) {
    if (!dropped_names.count(spec.column)) r.indexes.push_back(spec);
  }
  r.transform = [schema = r.schema, kept](const arrow::RecordBatchPtr& batch,
                                          size_t) -> Result<arrow::RecordBatchPtr> {
    std::vector<arrow::ArrayDataPtr> cols;
    for (int c : kept) cols.push_back(batch->column_data(c));
    return MakeBatch(schema, batch->num_rows(), std::move(cols));
  };
  return r;
}

}  // namespace strata::server
