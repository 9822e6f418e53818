#include "table/primary_key.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/strings.h"
#include "format/key_encoding.h"

namespace strata::table {

namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

/// true / false for the flag's accepted spellings, nullopt otherwise.
std::optional<bool> ParseFlag(const std::string& v) {
  for (const char* t : {"true", "1", "yes"}) {
    if (EqualsIgnoreCase(v, t)) return true;
  }
  for (const char* f : {"false", "0", "no"}) {
    if (EqualsIgnoreCase(v, f)) return false;
  }
  return std::nullopt;
}

/// A 1-based position (decimal digits only, at most 9 of them).
std::optional<int64_t> ParsePosition(const std::string& v) {
  if (v.empty() || v.size() > 9) return std::nullopt;
  int64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n < 1) return std::nullopt;
  return n;
}

bool HasKeyMetadata(const arrow::Field& f) {
  return f.metadata.Get(kPrimaryKeyMetadataKey) != nullptr ||
         f.metadata.Get(kPrimaryKeyPositionMetadataKey) != nullptr;
}

/// Refuses key metadata anywhere below a top-level field (`path` names the parent).
Status CheckNoNestedKey(const arrow::DataType& type, const std::string& path) {
  for (const auto& child : type.children()) {
    const std::string child_path = path + "." + child->name;
    if (HasKeyMetadata(*child)) {
      return Status::Invalid("primary key: column " + Quote(child_path) +
                             " is nested; key columns must be top-level columns");
    }
    if (child->type) STRATA_RETURN_IF_ERROR(CheckNoNestedKey(*child->type, child_path));
  }
  return Status::OK();
}

Status CheckKeyType(const arrow::Field& f) {
  Status st = format::ValidateKeyType(*f.type, f.name);
  if (!st.ok()) return Status::Invalid("primary key: " + st.message());
  return Status::OK();
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

Result<std::vector<std::string>> PrimaryKeyOf(const arrow::Schema& schema) {
  std::map<int64_t, std::string> positioned;  // position -> column
  std::vector<std::string> unpositioned;      // schema order
  for (const auto& f : schema.fields()) {
    if (f->type) STRATA_RETURN_IF_ERROR(CheckNoNestedKey(*f->type, f->name));
    const std::string* flag = f->metadata.Get(kPrimaryKeyMetadataKey);
    const std::string* pos = f->metadata.Get(kPrimaryKeyPositionMetadataKey);
    if (flag == nullptr && pos == nullptr) continue;
    std::optional<bool> is_key = true;
    if (flag != nullptr) {
      is_key = ParseFlag(*flag);
      if (!is_key) {
        return Status::Invalid("primary key: column " + Quote(f->name) + " has " +
                               kPrimaryKeyMetadataKey + " = " + Quote(*flag) +
                               "; expected true or false");
      }
    }
    std::optional<int64_t> position;
    if (pos != nullptr) {
      position = ParsePosition(*pos);
      if (!position) {
        return Status::Invalid("primary key: column " + Quote(f->name) + " has " +
                               kPrimaryKeyPositionMetadataKey + " = " + Quote(*pos) +
                               "; expected an integer >= 1");
      }
      if (!*is_key) {
        return Status::Invalid("primary key: column " + Quote(f->name) + " has " +
                               kPrimaryKeyMetadataKey + " = false but a key position");
      }
    }
    if (!*is_key) continue;
    STRATA_RETURN_IF_ERROR(CheckKeyType(*f));
    if (position) {
      auto [it, fresh] = positioned.emplace(*position, f->name);
      if (!fresh) {
        return Status::Invalid("primary key: columns " + Quote(it->second) + " and " +
                               Quote(f->name) + " both have key position " +
                               std::to_string(*position));
      }
    } else {
      unpositioned.push_back(f->name);
    }
  }
  std::vector<std::string> key;
  for (auto& [p, name] : positioned) key.push_back(std::move(name));
  for (auto& name : unpositioned) key.push_back(std::move(name));
  return key;
}

Result<arrow::SchemaPtr> DeclarePrimaryKey(const arrow::SchemaPtr& schema,
                                           const std::vector<std::string>& columns) {
  if (schema == nullptr) return Status::Invalid("primary key: the table schema is missing");
  if (columns.empty()) return Status::Invalid("primary key: no column given");
  std::set<std::string> seen;
  for (const auto& name : columns) {
    if (name.empty()) return Status::Invalid("primary key: empty column name");
    if (schema->GetFieldIndex(name) < 0) {
      std::string names;
      for (const auto& f : schema->fields()) names += (names.empty() ? "" : ", ") + f->name;
      return Status::Invalid("primary key: no column " + Quote(name) +
                             " in the schema; columns are: " + names);
    }
    if (!seen.insert(name).second) {
      return Status::Invalid("primary key: column " + Quote(name) + " is listed twice");
    }
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> declared, PrimaryKeyOf(*schema));
  if (!declared.empty() && declared != columns) {
    return Status::Invalid("primary key: primary_key=" + Join(columns) +
                           " differs from the key the schema's field metadata declares (" +
                           Join(declared) + ")");
  }
  std::vector<arrow::FieldPtr> fields = schema->fields();
  for (size_t i = 0; i < columns.size(); ++i) {
    const int idx = schema->GetFieldIndex(columns[i]);
    const arrow::Field& f = *fields[static_cast<size_t>(idx)];
    STRATA_RETURN_IF_ERROR(CheckKeyType(f));
    arrow::KeyValueMetadata md = f.metadata;
    md.Set(kPrimaryKeyMetadataKey, "true");
    md.Set(kPrimaryKeyPositionMetadataKey, std::to_string(i + 1));
    fields[static_cast<size_t>(idx)] = arrow::field(f.name, f.type, f.nullable, std::move(md));
  }
  auto out = std::make_shared<arrow::Schema>(std::move(fields), schema->metadata());
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> check, PrimaryKeyOf(*out));
  if (check != columns) {  // cannot happen: every key field carries its position now
    return Status::Invalid("primary key: declared " + Join(columns) + " but the schema reads " +
                           Join(check));
  }
  return arrow::SchemaPtr(std::move(out));
}

Result<std::vector<std::string>> ParsePrimaryKeyList(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.empty()) {
      return Status::Invalid("primary_key must be a comma-separated list of column names, got '" +
                             std::string(text.substr(0, 200)) + "'");
    }
    out.emplace_back(part);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace strata::table
