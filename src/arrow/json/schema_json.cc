#include "arrow/json/schema_json.h"

#include <cstdint>
#include <exception>
#include <set>
#include <string>
#include <vector>

namespace strata::arrow::json {
namespace {

using nlohmann::json;

std::string Quote(const std::string& s) { return "'" + s + "'"; }

json MetadataToJson(const KeyValueMetadata& md) {
  json out = json::object();
  for (const auto& [k, v] : md.pairs()) out[k] = v;
  return out;
}

Result<KeyValueMetadata> MetadataFromJson(const json& j, const std::string& what) {
  KeyValueMetadata md;
  if (j.is_null()) return md;
  if (!j.is_object()) {
    return Status::Invalid(what + ": \"metadata\" must be an object of strings, got " +
                           std::string(j.type_name()));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_string()) {
      return Status::Invalid(what + ": metadata value of key " + Quote(it.key()) +
                             " must be a string, got " + std::string(it.value().type_name()));
    }
    md.Set(it.key(), it.value().get<std::string>());
  }
  return md;
}

Status Unsupported(const std::string& field_name, const std::string& spelling,
                   const std::string& hint = "") {
  return Status::Invalid("Json conversion: Unsupported type " + Quote(spelling) + " for field " +
                         Quote(field_name) + (hint.empty() ? "" : " (" + hint + ")"));
}

bool ParseUnit(const std::string& s, TimeUnit* unit) {
  if (s == "s") {
    *unit = TimeUnit::kSecond;
  } else if (s == "ms") {
    *unit = TimeUnit::kMilli;
  } else if (s == "us") {
    *unit = TimeUnit::kMicro;
  } else if (s == "ns") {
    *unit = TimeUnit::kNano;
  } else {
    return false;
  }
  return true;
}

// Strict decimal integer in [lo, hi].
bool ParseInt(const std::string& s, int64_t lo, int64_t hi, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i >= s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  v = neg ? -v : v;
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

std::vector<std::string> SplitColon(const std::string& s, size_t max_parts) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() + 1 < max_parts) {
    size_t p = s.find(':', start);
    if (p == std::string::npos) break;
    parts.push_back(s.substr(start, p - start));
    start = p + 1;
  }
  parts.push_back(s.substr(start));
  return parts;
}

Result<FieldPtr> FieldFromJsonImpl(const json& j, const std::string& parent, int depth);

Result<std::vector<FieldPtr>> ChildFields(const json& type, const std::string& name,
                                          const std::string& spelling, int depth) {
  auto it = type.find("fields");
  if (it == type.end() || !it->is_array()) {
    return Status::Invalid("field " + Quote(name) + ": type " + Quote(spelling) +
                           " needs a \"fields\" array");
  }
  std::vector<FieldPtr> out;
  for (const auto& f : *it) {
    STRATA_ASSIGN_OR_RETURN(auto child, FieldFromJsonImpl(f, name, depth + 1));
    out.push_back(std::move(child));
  }
  return out;
}

Result<int32_t> PositiveLength(const json& type, const std::string& name,
                               const std::string& spelling) {
  auto it = type.find("length");
  if (it == type.end() || !it->is_number_integer()) {
    return Status::Invalid("field " + Quote(name) + ": type " + Quote(spelling) +
                           " needs an integer \"length\"");
  }
  const auto v = it->get<int64_t>();
  if (v < 1 || v > INT32_MAX) {
    return Status::Invalid("field " + Quote(name) + ": \"length\" of " + Quote(spelling) +
                           " must be in [1, 2147483647], got " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

Result<DataTypePtr> TypeFromJsonImpl(const json& type, const std::string& name, int depth) {
  if (depth > kMaxTypeDepth) {
    return Status::Invalid("field " + Quote(name) + ": type nesting deeper than " +
                           std::to_string(kMaxTypeDepth) + " levels");
  }
  if (!type.is_object()) {
    return Status::Invalid("field " + Quote(name) + ": \"type\" must be an object like " +
                           "{\"type\":\"int64\"}, got " + std::string(type.type_name()));
  }
  auto tit = type.find("type");
  if (tit == type.end() || !tit->is_string()) {
    return Status::Invalid("field " + Quote(name) + ": type object needs a string \"type\"");
  }
  const std::string s = tit->get<std::string>();
  static const std::pair<const char*, TypeId> kSimple[] = {
      {"null", TypeId::kNull},
      {"bool", TypeId::kBool},
      {"int8", TypeId::kInt8},
      {"int16", TypeId::kInt16},
      {"int32", TypeId::kInt32},
      {"int64", TypeId::kInt64},
      {"uint8", TypeId::kUInt8},
      {"uint16", TypeId::kUInt16},
      {"uint32", TypeId::kUInt32},
      {"uint64", TypeId::kUInt64},
      {"halffloat", TypeId::kFloat16},
      {"float", TypeId::kFloat32},
      {"double", TypeId::kFloat64},
      {"string", TypeId::kUtf8},
      {"large_string", TypeId::kLargeUtf8},
      {"binary", TypeId::kBinary},
      {"large_binary", TypeId::kLargeBinary},
      {"json", TypeId::kLargeBinary},
      {"date32:day", TypeId::kDate32},
      {"date64:ms", TypeId::kDate64},
  };
  for (const auto& [spelling, id] : kSimple) {
    if (s == spelling) return DataType::Make(id);
  }
  if (s == "list" || s == "large_list" || s == "fixed_size_list") {
    STRATA_ASSIGN_OR_RETURN(auto kids, ChildFields(type, name, s, depth));
    if (kids.size() != 1) {
      return Status::Invalid("field " + Quote(name) + ": type " + Quote(s) +
                             " needs exactly one child field, got " + std::to_string(kids.size()));
    }
    if (s == "list") return arrow::list(kids[0]);
    if (s == "large_list") return large_list(kids[0]);
    STRATA_ASSIGN_OR_RETURN(int32_t n, PositiveLength(type, name, s));
    return fixed_size_list(kids[0], n);
  }
  if (s == "struct") {
    STRATA_ASSIGN_OR_RETURN(auto kids, ChildFields(type, name, s, depth));
    return struct_(std::move(kids));
  }
  if (s == "fixed_size_binary") {
    STRATA_ASSIGN_OR_RETURN(int32_t n, PositiveLength(type, name, s));
    return fixed_size_binary(n);
  }
  const auto parts = SplitColon(s, 4);
  const std::string& head = parts[0];
  TimeUnit unit;
  if (head == "time32" && parts.size() == 2 && ParseUnit(parts[1], &unit) &&
      (unit == TimeUnit::kSecond || unit == TimeUnit::kMilli)) {
    return time32(unit);
  }
  if (head == "time64" && parts.size() == 2 && ParseUnit(parts[1], &unit) &&
      (unit == TimeUnit::kMicro || unit == TimeUnit::kNano)) {
    return time64(unit);
  }
  if (head == "duration" && parts.size() == 2 && ParseUnit(parts[1], &unit)) {
    return duration(unit);
  }
  if (head == "timestamp") {
    // The timezone itself may contain ':' ("+05:30"), so split into at most 3 parts.
    const auto tp = SplitColon(s, 3);
    if (tp.size() == 3 && ParseUnit(tp[1], &unit) && !tp[2].empty()) {
      return timestamp(unit, tp[2] == "-" ? "" : tp[2]);
    }
    return Unsupported(name, s, "expected timestamp:{s,ms,us,ns}:{TZ or -}");
  }
  if (head == "decimal") {
    if (parts.size() == 4 && parts[1] == "128") {
      int64_t p, sc;
      if (!ParseInt(parts[2], 1, 38, &p) || !ParseInt(parts[3], -1000, 1000, &sc) || sc > p) {
        return Status::Invalid("field " + Quote(name) + ": decimal " + Quote(s) +
                               " needs precision in [1, 38] and scale <= precision");
      }
      return decimal128(static_cast<int32_t>(p), static_cast<int32_t>(sc));
    }
    if (parts.size() >= 2 && parts[1] == "256") {
      return Unsupported(name, s, "decimal256 is not supported");
    }
    return Unsupported(name, s, "expected decimal:128:P:S");
  }
  if (head == "dict") return Unsupported(name, s, "dictionary types are not supported");
  if (s == "string_view" || s == "binary_view") {
    return Unsupported(name, s, "view types are not supported");
  }
  return Unsupported(name, s);
}

Result<FieldPtr> FieldFromJsonImpl(const json& j, const std::string& parent, int depth) {
  const std::string where = parent.empty() ? "schema" : "field " + Quote(parent);
  if (!j.is_object()) {
    return Status::Invalid(where + ": a field must be an object, got " +
                           std::string(j.type_name()));
  }
  auto nit = j.find("name");
  if (nit == j.end() || !nit->is_string()) {
    return Status::Invalid(where + ": a field needs a string \"name\"");
  }
  const std::string name = nit->get<std::string>();
  const std::string path = parent.empty() ? name : parent + "." + name;
  auto bit = j.find("nullable");
  if (bit == j.end() || !bit->is_boolean()) {
    return Status::Invalid("field " + Quote(path) + ": \"nullable\" is required and must be " +
                           "true or false");
  }
  auto tit = j.find("type");
  if (tit == j.end()) return Status::Invalid("field " + Quote(path) + ": \"type\" is required");
  STRATA_ASSIGN_OR_RETURN(auto type, TypeFromJsonImpl(*tit, path, depth));
  KeyValueMetadata md;
  auto mit = j.find("metadata");
  if (mit != j.end()) {
    STRATA_ASSIGN_OR_RETURN(md, MetadataFromJson(*mit, "field " + Quote(path)));
  }
  return field(name, std::move(type), bit->get<bool>(), std::move(md));
}

}  // namespace

json DataTypeToJson(const DataType& t) {
  json out = json::object();
  auto children = [&]() {
    json arr = json::array();
    for (const auto& c : t.children()) arr.push_back(FieldToJson(*c));
    return arr;
  };
  std::string unit = TimeUnitName(t.unit());
  switch (t.id()) {
    case TypeId::kNull:
      out["type"] = "null";
      break;
    case TypeId::kBool:
      out["type"] = "bool";
      break;
    case TypeId::kInt8:
      out["type"] = "int8";
      break;
    case TypeId::kInt16:
      out["type"] = "int16";
      break;
    case TypeId::kInt32:
      out["type"] = "int32";
      break;
    case TypeId::kInt64:
      out["type"] = "int64";
      break;
    case TypeId::kUInt8:
      out["type"] = "uint8";
      break;
    case TypeId::kUInt16:
      out["type"] = "uint16";
      break;
    case TypeId::kUInt32:
      out["type"] = "uint32";
      break;
    case TypeId::kUInt64:
      out["type"] = "uint64";
      break;
    case TypeId::kFloat16:
      out["type"] = "halffloat";
      break;
    case TypeId::kFloat32:
      out["type"] = "float";
      break;
    case TypeId::kFloat64:
      out["type"] = "double";
      break;
    case TypeId::kUtf8:
      out["type"] = "string";
      break;
    case TypeId::kLargeUtf8:
      out["type"] = "large_string";
      break;
    case TypeId::kBinary:
      out["type"] = "binary";
      break;
    case TypeId::kLargeBinary:
      out["type"] = "large_binary";
      break;
    case TypeId::kFixedSizeBinary:
      out["type"] = "fixed_size_binary";
      out["length"] = t.byte_width();
      break;
    case TypeId::kDate32:
      out["type"] = "date32:day";
      break;
    case TypeId::kDate64:
      out["type"] = "date64:ms";
      break;
    case TypeId::kTime32:
      out["type"] = "time32:" + unit;
      break;
    case TypeId::kTime64:
      out["type"] = "time64:" + unit;
      break;
    case TypeId::kTimestamp:
      out["type"] = "timestamp:" + unit + ":" + (t.timezone().empty() ? "-" : t.timezone());
      break;
    case TypeId::kDuration:
      out["type"] = "duration:" + unit;
      break;
    case TypeId::kDecimal128:
      out["type"] =
          "decimal:128:" + std::to_string(t.precision()) + ":" + std::to_string(t.scale());
      break;
    case TypeId::kList:
      out["type"] = "list";
      out["fields"] = children();
      break;
    case TypeId::kLargeList:
      out["type"] = "large_list";
      out["fields"] = children();
      break;
    case TypeId::kFixedSizeList:
      out["type"] = "fixed_size_list";
      out["fields"] = children();
      out["length"] = t.list_size();
      break;
    case TypeId::kStruct:
      out["type"] = "struct";
      out["fields"] = children();
      break;
  }
  return out;
}

json FieldToJson(const Field& f) {
  json out = json::object();
  out["name"] = f.name;
  out["type"] = DataTypeToJson(*f.type);
  out["nullable"] = f.nullable;
  if (!f.metadata.empty()) out["metadata"] = MetadataToJson(f.metadata);
  return out;
}

json SchemaToJson(const Schema& schema) {
  json out = json::object();
  json fields = json::array();
  for (const auto& f : schema.fields()) fields.push_back(FieldToJson(*f));
  out["fields"] = std::move(fields);
  if (!schema.metadata().empty()) out["metadata"] = MetadataToJson(schema.metadata());
  return out;
}

std::string SchemaToJsonString(const Schema& schema) {
  return SchemaToJson(schema).dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<DataTypePtr> DataTypeFromJson(const json& type, const std::string& field_name) {
  try {
    return TypeFromJsonImpl(type, field_name, 0);
  } catch (const std::exception& e) {
    return Status::Invalid("field " + Quote(field_name) + ": invalid type JSON: " + e.what());
  }
}

Result<FieldPtr> FieldFromJson(const json& f) {
  try {
    return FieldFromJsonImpl(f, "", 0);
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("invalid field JSON: ") + e.what());
  }
}

Result<SchemaPtr> SchemaFromJson(const json& j) {
  try {
    if (!j.is_object()) {
      return Status::Invalid("schema must be a JSON object, got " + std::string(j.type_name()));
    }
    auto fit = j.find("fields");
    if (fit == j.end() || !fit->is_array()) {
      return Status::Invalid("schema needs a \"fields\" array");
    }
    std::vector<FieldPtr> fields;
    std::set<std::string> names;
    for (const auto& fj : *fit) {
      STRATA_ASSIGN_OR_RETURN(auto f, FieldFromJsonImpl(fj, "", 0));
      if (!names.insert(f->name).second) {
        return Status::Invalid("schema has two fields named " + Quote(f->name));
      }
      fields.push_back(std::move(f));
    }
    KeyValueMetadata md;
    auto mit = j.find("metadata");
    if (mit != j.end()) {
      STRATA_ASSIGN_OR_RETURN(md, MetadataFromJson(*mit, "schema"));
    }
    return std::make_shared<const Schema>(std::move(fields), std::move(md));
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("invalid schema JSON: ") + e.what());
  }
}

Result<SchemaPtr> ParseSchemaJson(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("schema is not valid JSON: ") + e.what());
  }
  return SchemaFromJson(j);
}

}  // namespace strata::arrow::json
