#include "cli/infer_schema.h"

#include <charconv>
#include <cstring>

namespace strata::cli {

namespace {

using arrow::TypeId;

enum class Kind { kNone, kInt, kFloat, kBool, kVector, kString };

bool ParseInt(std::string_view s, int64_t* v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool ParseDouble(std::string_view s, double* v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool ParseBool(std::string_view s, bool* v) {
  if (s.size() == 4 && strncasecmp(s.data(), "true", 4) == 0) {
    *v = true;
    return true;
  }
  if (s.size() == 5 && strncasecmp(s.data(), "false", 5) == 0) {
    *v = false;
    return true;
  }
  return false;
}

// Per-column inference state: the widest kind seen, the vector length, where it was set.
struct ColumnGuess {
  Kind kind = Kind::kNone;
  int64_t dim = -1;
  int64_t dim_line = 0;
};

Status Merge(ColumnGuess* g, Kind k, int64_t dim, int64_t line, const std::string& column,
             const std::string& path) {
  auto where = [&](int64_t l) { return path + ":" + std::to_string(l); };
  if (k == Kind::kVector) {
    if (g->kind == Kind::kNone || g->kind == Kind::kVector) {
      if (g->dim >= 0 && g->dim != dim) {
        return Status::Invalid(where(line) + ": column '" + column + "': a vector of " +
                               std::to_string(dim) + " values, but " + std::to_string(g->dim) +
                               " at line " + std::to_string(g->dim_line) +
                               " (vectors need one length; pass --schema)");
      }
      if (g->dim < 0) {
        g->dim = dim;
        g->dim_line = line;
      }
      g->kind = Kind::kVector;
      return Status::OK();
    }
    g->kind = Kind::kString;
    return Status::OK();
  }
  if (g->kind == Kind::kNone) {
    g->kind = k;
  } else if (g->kind != k) {
    const bool numeric = (g->kind == Kind::kInt || g->kind == Kind::kFloat) &&
                         (k == Kind::kInt || k == Kind::kFloat);
    g->kind = numeric ? Kind::kFloat : Kind::kString;
  }
  return Status::OK();
}

// Kind of a JSON value; vectors are arrays of numbers. Invalid for objects and other arrays.
Result<Kind> JsonKind(const nlohmann::json& v, int64_t* dim, int64_t line,
                      const std::string& column, const std::string& path) {
  if (v.is_null()) return Kind::kNone;
  if (v.is_boolean()) return Kind::kBool;
  if (v.is_number_integer()) return Kind::kInt;
  if (v.is_number()) return Kind::kFloat;
  if (v.is_string()) return Kind::kString;
  if (v.is_array()) {
    for (const auto& x : v) {
      if (!x.is_number()) {
        return Status::Invalid(path + ":" + std::to_string(line) + ": column '" + column +
                               "': an array of non-numbers cannot be inferred (pass --schema)");
      }
    }
    *dim = static_cast<int64_t>(v.size());
    return Kind::kVector;
  }
  return Status::Invalid(path + ":" + std::to_string(line) + ": column '" + column +
                         "': a nested object cannot be inferred (pass --schema)");
}

Result<arrow::SchemaPtr> ToSchema(const std::vector<std::string>& names,
                                  const std::vector<ColumnGuess>& guesses,
                                  const std::string& path) {
  std::vector<arrow::FieldPtr> fields;
  for (size_t i = 0; i < names.size(); ++i) {
    arrow::DataTypePtr type;
    switch (guesses[i].kind) {
      case Kind::kInt:
        type = arrow::int64();
        break;
      case Kind::kFloat:
        type = arrow::float64();
        break;
      case Kind::kBool:
        type = arrow::boolean();
        break;
      case Kind::kVector:
        if (guesses[i].dim <= 0) {
          return Status::Invalid(path + ": column '" + names[i] +
                                 "': empty vectors (pass --schema)");
        }
        type = arrow::fixed_size_list(arrow::field("item", arrow::float32()),
                                      static_cast<int32_t>(guesses[i].dim));
        break;
      case Kind::kNone:
      case Kind::kString:
        type = arrow::utf8();
        break;
    }
    fields.push_back(arrow::field(names[i], type));
  }
  return std::make_shared<const arrow::Schema>(std::move(fields));
}

}  // namespace

Result<arrow::SchemaPtr> InferCsvSchema(const std::vector<std::string>& header,
                                        const std::vector<CsvRecord>& sample,
                                        const std::string& path) {
  std::vector<ColumnGuess> guesses(header.size());
  for (const CsvRecord& r : sample) {
    for (size_t i = 0; i < header.size() && i < r.fields.size(); ++i) {
      const std::string& s = r.fields[i];
      if (s.empty()) continue;
      int64_t iv;
      double dv;
      bool bv;
      int64_t dim = -1;
      Kind k = Kind::kString;
      if (ParseInt(s, &iv)) {
        k = Kind::kInt;
      } else if (ParseDouble(s, &dv)) {
        k = Kind::kFloat;
      } else if (ParseBool(s, &bv)) {
        k = Kind::kBool;
      } else if (s[0] == '[') {
        nlohmann::json v = nlohmann::json::parse(s, nullptr, false);
        if (!v.is_discarded() && v.is_array()) {
          auto jk = JsonKind(v, &dim, r.line, header[i], path);
          if (jk.ok()) k = *jk;
        }
      }
      STRATA_RETURN_IF_ERROR(Merge(&guesses[i], k, dim, r.line, header[i], path));
    }
  }
  return ToSchema(header, guesses, path);
}

Result<arrow::SchemaPtr> InferJsonlSchema(const std::vector<JsonlRecord>& sample,
                                          const std::string& path) {
  std::vector<std::string> names;
  std::vector<ColumnGuess> guesses;
  for (const JsonlRecord& r : sample) {
    for (const auto& [key, value] : r.row.items()) {
      size_t i = 0;
      while (i < names.size() && names[i] != key) ++i;
      if (i == names.size()) {
        names.push_back(key);
        guesses.emplace_back();
      }
      int64_t dim = -1;
      STRATA_ASSIGN_OR_RETURN(Kind k, JsonKind(value, &dim, r.line, key, path));
      if (k == Kind::kNone) continue;
      STRATA_RETURN_IF_ERROR(Merge(&guesses[i], k, dim, r.line, key, path));
    }
  }
  if (names.empty()) return Status::Invalid(path + ": no rows to infer a schema from");
  return ToSchema(names, guesses, path);
}

Result<nlohmann::json> CsvRecordToJson(const std::vector<std::string>& header,
                                       const CsvRecord& record, const arrow::Schema& schema,
                                       const std::string& path) {
  nlohmann::json row = nlohmann::json::object();
  for (size_t i = 0; i < header.size(); ++i) {
    const int idx = schema.GetFieldIndex(header[i]);
    auto bad = [&](const std::string& what) {
      return Status::Invalid(path + ":" + std::to_string(record.line) + ": column '" + header[i] +
                             "': " + what);
    };
    if (idx < 0) return bad("not a column of the table");
    const std::string& s = record.fields[i];
    if (s.empty()) {
      row[header[i]] = nullptr;
      continue;
    }
    const arrow::DataType& type = *schema.field(idx)->type;
    if (type.is_integer()) {
      int64_t v;
      if (ParseInt(s, &v)) {
        row[header[i]] = v;
      } else if (!type.is_signed_integer() && s[0] != '-') {
        uint64_t u;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
        if (ec != std::errc() || p != s.data() + s.size()) {
          return bad("'" + s + "' is not an integer");
        }
        row[header[i]] = u;
      } else {
        return bad("'" + s + "' is not an integer");
      }
    } else if (type.is_floating()) {
      double v;
      if (!ParseDouble(s, &v)) return bad("'" + s + "' is not a number");
      row[header[i]] = v;
    } else if (type.id() == TypeId::kBool) {
      bool v;
      if (s == "1") {
        v = true;
      } else if (s == "0") {
        v = false;
      } else if (!ParseBool(s, &v)) {
        return bad("'" + s + "' is not true or false");
      }
      row[header[i]] = v;
    } else if (type.is_list_like() || type.id() == TypeId::kStruct) {
      nlohmann::json v = nlohmann::json::parse(s, nullptr, false);
      if (v.is_discarded()) return bad("not a JSON value: " + s.substr(0, 60));
      row[header[i]] = std::move(v);
    } else {
      row[header[i]] = s;
    }
  }
  return row;
}

void JsonRowToStrings(nlohmann::json* row, const arrow::Schema& schema) {
  if (!row->is_object()) return;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const auto& f = schema.field(i);
    const arrow::TypeId id = f->type->id();
    if (id != arrow::TypeId::kUtf8 && id != arrow::TypeId::kLargeUtf8) continue;
    auto it = row->find(f->name);
    if (it != row->end() && (it->is_number() || it->is_boolean())) *it = it->dump();
  }
}

}  // namespace strata::cli
