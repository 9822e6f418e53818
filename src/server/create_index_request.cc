#include "server/create_index_request.h"

#include <cctype>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_guard.h"
#include "common/strings.h"
#include "index/vector/distance.h"

namespace strata::server {

namespace {

using nlohmann::json;

constexpr const char* kRoute = "create_index";

enum class Family { kVector, kScalar, kFts };

struct TypeName {
  const char* spelling;   // as the client sends it
  const char* canonical;  // upper-snake form recorded in requested_type
  Family family;
  bool hnsw_params;  // the type carries m / ef_construction
};

// PROTOCOL.md §5.4: the index_type spellings the LanceDB 0.31 client accepts.
constexpr TypeName kTypes[] = {
    {"IVF_FLAT", "IVF_FLAT", Family::kVector, false},
    {"IVF_SQ", "IVF_SQ", Family::kVector, false},
    {"IVF_PQ", "IVF_PQ", Family::kVector, false},
    {"IVF_HNSW_PQ", "IVF_HNSW_PQ", Family::kVector, true},
    {"IVF_HNSW_SQ", "IVF_HNSW_SQ", Family::kVector, true},
    {"IVF_HNSW_FLAT", "IVF_HNSW_FLAT", Family::kVector, true},
    {"IvfFlat", "IVF_FLAT", Family::kVector, false},
    {"IvfSq", "IVF_SQ", Family::kVector, false},
    {"IvfPq", "IVF_PQ", Family::kVector, false},
    {"IvfHnswPq", "IVF_HNSW_PQ", Family::kVector, true},
    {"IvfHnswSq", "IVF_HNSW_SQ", Family::kVector, true},
    {"IvfHnswFlat", "IVF_HNSW_FLAT", Family::kVector, true},
    {"BTREE", "BTREE", Family::kScalar, false},
    {"BTree", "BTREE", Family::kScalar, false},
    {"BITMAP", "BITMAP", Family::kScalar, false},
    {"Bitmap", "BITMAP", Family::kScalar, false},
    {"FTS", "FTS", Family::kFts, false},
    {"INVERTED", "INVERTED", Family::kFts, false},
    {"Inverted", "INVERTED", Family::kFts, false},
};
constexpr const char* kUnsupportedTypes[] = {"LABEL_LIST", "LabelList", "FM"};

constexpr const char* kIvfIntKeys[] = {"num_partitions", "num_sub_vectors",       "num_bits",
                                       "sample_rate",    "target_partition_size", "max_iterations"};
constexpr const char* kFtsBoolKeys[] = {"with_position", "lower_case", "stem", "remove_stop_words",
                                        "ascii_folding"};

std::string Got(const json& v) {
  if (v.is_structured()) return v.type_name();
  return Excerpt(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string Prefix() { return std::string(kRoute) + ": "; }

Result<json> ParseBody(std::string_view body) {
  size_t first = 0;
  while (first < body.size() && std::isspace(static_cast<unsigned char>(body[first]))) ++first;
  if (first == body.size()) {
    return Status::Invalid(Prefix() + "the request body is empty; expected a JSON object with " +
                           "\"column\" and \"index_type\"");
  }
  STRATA_RETURN_IF_ERROR(CheckJsonDepth(body, kRoute));
  json j;
  try {
    j = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    return Status::Invalid(Prefix() + "the request body is not valid JSON " +
                           DescribeJsonParseError(e.byte, e.what()));
  } catch (const std::exception& e) {
    return Status::Invalid(Prefix() +
                           "the request body is not valid JSON: " + Excerpt(e.what(), 200));
  }
  if (!j.is_object()) {
    return Status::Invalid(Prefix() + "the request body must be a JSON object, got " + Got(j));
  }
  return j;
}

// nullptr when `key` is absent or null.
const json* Find(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::string> RequiredString(const json& j, const char* key) {
  const json* v = Find(j, key);
  if (v == nullptr) return Status::Invalid(Prefix() + "\"" + key + "\" is required");
  if (!v->is_string()) {
    return Status::Invalid(Prefix() + key + " must be a string, got " + Got(*v));
  }
  return v->get<std::string>();
}

// An integer in [lo, hi], or `fallback` when absent / null.
Result<int64_t> GetInt(const json& j, const char* key, int64_t lo, int64_t hi, int64_t fallback) {
  const json* v = Find(j, key);
  if (v == nullptr) return fallback;
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v->is_number_integer()) {
    return Status::Invalid(Prefix() + key + " must be an integer in " + range + ", got " + Got(*v));
  }
  bool in_range;
  int64_t x = 0;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(hi) && static_cast<int64_t>(u) >= lo;
    x = in_range ? static_cast<int64_t>(u) : 0;
  } else {
    x = v->get<int64_t>();
    in_range = x >= lo && x <= hi;
  }
  if (!in_range) {
    return Status::Invalid(Prefix() + key + " must be an integer in " + range + ", got " + Got(*v));
  }
  return x;
}

Result<bool> GetBool(const json& j, const char* key, bool fallback) {
  const json* v = Find(j, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) {
    return Status::Invalid(Prefix() + key + " must be true or false, got " + Got(*v));
  }
  return v->get<bool>();
}

// Unquotes a `backtick`-quoted field path segment (`` stands for one backtick); a plain name
// is returned as is. Errors: Invalid for an unterminated quote; NotSupported for a nested path.
Result<std::string> UnquoteColumn(const std::string& sent) {
  if (!sent.empty() && sent.front() == '`') {
    std::string out;
    size_t i = 1;
    for (; i < sent.size(); ++i) {
      if (sent[i] == '`') {
        if (i + 1 < sent.size() && sent[i + 1] == '`') {
          out.push_back('`');
          ++i;
          continue;
        }
        break;
      }
      out.push_back(sent[i]);
    }
    if (i >= sent.size()) {
      return Status::Invalid(Prefix() + "column " + Got(json(sent)) +
                             " has an unterminated backtick quote");
    }
    if (i + 1 != sent.size()) {
      return Status::NotSupported(Prefix() + "column " + Got(json(sent)) +
                                  ": indexes on nested fields are not supported (a top-level "
                                  "column is required)");
    }
    return out;
  }
  return sent;
}

// The schema's spelling of column `sent` (see the header).
Result<std::string> ResolveColumn(const std::string& sent, const arrow::Schema& schema) {
  if (sent.empty()) return Status::Invalid(Prefix() + "column must not be empty");
  if (schema.GetFieldIndex(sent) >= 0) return sent;
  STRATA_ASSIGN_OR_RETURN(std::string name, UnquoteColumn(sent));
  if (schema.GetFieldIndex(name) >= 0) return name;
  std::vector<std::string> matches;
  for (const auto& f : schema.fields()) {
    if (EqualsIgnoreCase(f->name, name)) matches.push_back(f->name);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1) {
    return Status::Invalid(Prefix() + "column " + Got(json(sent)) +
                           " is ambiguous: it matches columns '" + matches[0] + "' and '" +
                           matches[1] + "' case-insensitively; use the exact name");
  }
  if (sent.front() != '`' && name.find('.') != std::string::npos) {
    return Status::NotSupported(Prefix() + "column " + Got(json(sent)) +
                                ": indexes on nested fields are not supported (a top-level "
                                "column is required)");
  }
  std::string names;
  for (const auto& f : schema.fields()) {
    if (names.size() > 200) {
      names += ", ...";
      break;
    }
    if (!names.empty()) names += ", ";
    names += f->name;
  }
  return Status::Invalid(Prefix() + "column " + Got(json(sent)) +
                         " is not in the table schema (columns: " + names + ")");
}

Status ValidateName(const std::string& name) {
  if (name.empty() || name.size() > 256) {
    return Status::Invalid(Prefix() + "name must be 1 to 256 bytes, got " +
                           std::to_string(name.size()));
  }
  if (name == "." || name == "..") {
    return Status::Invalid(Prefix() + "name must not be '.' or '..'");
  }
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '/' || c == '\\') {
      return Status::Invalid(Prefix() + "name " + Got(json(name)) +
                             " must not contain '/', '\\' or control characters");
    }
    // The LanceDB client puts index names into index/{n}/... paths without encoding these, so
    // an index named with them could never be found, dropped or waited for.
    if (c == '%' || c == '#' || c == '?') {
      return Status::Invalid(Prefix() + "name " + Got(json(name)) +
                             " must not contain '%', '#' or '?' (the LanceDB client sends index "
                             "names unencoded in the URL path)");
    }
  }
  return Status::OK();
}

const TypeName* FindType(const std::string& t) {
  for (const TypeName& n : kTypes) {
    if (t == n.spelling) return &n;
  }
  return nullptr;
}

Status CheckFtsDefaults(const json& j) {
  for (const char* key : {"min_ngram_length", "max_ngram_length"}) {
    const json* v = Find(j, key);
    if (v != nullptr && !(v->is_number_integer() && v->get<int64_t>() == 3)) {
      return Status::NotSupported(Prefix() + key + " " + Got(*v) +
                                  " is not supported (n-gram tokenization is not implemented; "
                                  "only the default 3 is accepted)");
    }
  }
  if (const json* v = Find(j, "prefix_only"); v != nullptr && *v != json(false)) {
    return Status::NotSupported(Prefix() + "prefix_only " + Got(*v) +
                                " is not supported (only the default false is accepted)");
  }
  if (const json* v = Find(j, "custom_stop_words");
      v != nullptr && !(v->is_array() && v->empty())) {
    return Status::NotSupported(Prefix() + "custom_stop_words " + Got(*v) +
                                " is not supported (only the default null is accepted)");
  }
  if (const json* v = Find(j, "lance_tokenizer"); v != nullptr) {
    return Status::NotSupported(Prefix() + "lance_tokenizer " + Got(*v) +
                                " is not supported (only the default null is accepted)");
  }
  return Status::OK();
}

Status ParseFts(const json& j, index::FtsParams* fts) {
  STRATA_RETURN_IF_ERROR(CheckFtsDefaults(j));
  if (const json* v = Find(j, "base_tokenizer")) {
    if (!v->is_string()) {
      return Status::Invalid(Prefix() + "base_tokenizer must be a string, got " + Got(*v));
    }
    const std::string t = v->get<std::string>();
    if (t != "simple" && t != "whitespace") {
      return Status::NotSupported(Prefix() + "base_tokenizer " + Got(*v) +
                                  " is not supported (supported: \"simple\", \"whitespace\")");
    }
    fts->base_tokenizer = t;
  }
  if (const json* v = Find(j, "language")) {
    if (!v->is_string()) {
      return Status::Invalid(Prefix() + "language must be a string, got " + Got(*v));
    }
    if (!EqualsIgnoreCase(v->get<std::string>(), "english")) {
      return Status::NotSupported(Prefix() + "language " + Got(*v) +
                                  " is not supported (supported: \"English\")");
    }
    fts->language = "English";
  }
  STRATA_ASSIGN_OR_RETURN(fts->with_position, GetBool(j, "with_position", fts->with_position));
  STRATA_ASSIGN_OR_RETURN(fts->lower_case, GetBool(j, "lower_case", fts->lower_case));
  STRATA_ASSIGN_OR_RETURN(fts->stem, GetBool(j, "stem", fts->stem));
  STRATA_ASSIGN_OR_RETURN(fts->remove_stop_words,
                          GetBool(j, "remove_stop_words", fts->remove_stop_words));
  STRATA_ASSIGN_OR_RETURN(fts->ascii_folding, GetBool(j, "ascii_folding", fts->ascii_folding));
  // null means "no limit" in LanceDB; the tokenizer's largest supported limit stands in.
  const bool explicit_null = j.contains("max_token_length") && j.at("max_token_length").is_null();
  STRATA_ASSIGN_OR_RETURN(
      int64_t max_len, GetInt(j, "max_token_length", 1, index::kMaxTokenLengthLimit,
                              explicit_null ? index::kMaxTokenLengthLimit : fts->max_token_length));
  fts->max_token_length = static_cast<int>(max_len);
  return Status::OK();
}

Status ParseVector(const json& j, bool hnsw_params, index::HnswParams* hnsw) {
  if (const json* v = Find(j, "metric_type")) {
    if (!v->is_string()) {
      return Status::Invalid(Prefix() + "metric_type must be a string, got " + Got(*v));
    }
    Result<index::DistanceType> d = index::ParseDistanceType(v->get<std::string>());
    if (!d.ok()) {
      const std::string msg = Prefix() + "metric_type " + Got(*v) +
                              " is not supported (supported: \"l2\", \"cosine\", \"dot\")";
      return d.status().code() == StatusCode::kNotSupported ? Status::NotSupported(msg)
                                                            : Status::Invalid(msg);
    }
    hnsw->distance = *d;
  }
  for (const char* key : kIvfIntKeys) {
    STRATA_RETURN_IF_ERROR(GetInt(j, key, 1, std::numeric_limits<int32_t>::max(), 1).status());
  }
  STRATA_ASSIGN_OR_RETURN(int64_t m, GetInt(j, "m", 2, 128, hnsw->m));
  STRATA_ASSIGN_OR_RETURN(int64_t efc,
                          GetInt(j, "ef_construction", 1, 4096, hnsw->ef_construction));
  if (hnsw_params) {
    if (efc < m) {
      return Status::Invalid(Prefix() + "ef_construction must be in [m, 4096] (m = " +
                             std::to_string(m) + "), got " + std::to_string(efc));
    }
    hnsw->m = static_cast<int>(m);
    hnsw->ef_construction = static_cast<int>(efc);
  }
  return Status::OK();
}

// Whether `key` belongs to `family` (or to every family).
bool KeyAllowed(const std::string& key, Family family, bool hnsw_params) {
  if (key == "column" || key == "index_type" || key == "name" || key == "branch") return true;
  if (family == Family::kVector) {
    if (key == "metric_type") return true;
    for (const char* k : kIvfIntKeys) {
      if (key == k) return true;
    }
    if (key == "m" || key == "ef_construction") return hnsw_params;
    return false;
  }
  if (family == Family::kFts) {
    for (const char* k : kFtsBoolKeys) {
      if (key == k) return true;
    }
    return key == "base_tokenizer" || key == "language" || key == "max_token_length" ||
           key == "min_ngram_length" || key == "max_ngram_length" || key == "prefix_only" ||
           key == "custom_stop_words" || key == "lance_tokenizer";
  }
  return false;
}

Result<index::IndexSpec> Parse(std::string_view body, const arrow::Schema& schema) {
  STRATA_ASSIGN_OR_RETURN(json j, ParseBody(body));
  STRATA_ASSIGN_OR_RETURN(std::string sent_column, RequiredString(j, "column"));
  STRATA_ASSIGN_OR_RETURN(std::string type_name, RequiredString(j, "index_type"));

  const TypeName* type = FindType(type_name);
  if (type == nullptr && (type_name == "IVF_RQ" || type_name == "IvfRq")) {
    return Status::NotSupported(
        Prefix() + "index_type " + Got(json(type_name)) +
        " (RaBitQ) is not supported: FAISS 1.7.3, which builds Strata's IVF indexes, has no "
        "RaBitQ; use IVF_PQ or IVF_SQ for a compact index, IVF_FLAT or IVF_HNSW_SQ otherwise");
  }
  if (type == nullptr) {
    for (const char* u : kUnsupportedTypes) {
      if (type_name == u) {
        return Status::NotSupported(Prefix() + "index_type " + Got(json(type_name)) +
                                    " is not supported (supported: vector IVF_* types, BTREE, "
                                    "BITMAP, FTS)");
      }
    }
    return Status::Invalid(
        Prefix() + "index_type " + Got(json(type_name)) +
        " is not a valid index type (case-sensitive; accepted: IVF_FLAT, IVF_SQ, IVF_PQ, "
        "IVF_HNSW_PQ, IVF_HNSW_SQ, IVF_HNSW_FLAT, BTREE, BITMAP, FTS, INVERTED, or "
        "their CamelCase names such as IvfPq, BTree)");
  }

  if (const json* b = Find(j, "branch");
      b != nullptr && !(b->is_string() && b->get<std::string>() == "main")) {
    return Status::NotSupported(Prefix() + "branch " + Got(*b) +
                                " is not supported (only the main branch exists)");
  }
  for (const auto& [key, value] : j.items()) {
    if (!KeyAllowed(key, type->family, type->hnsw_params)) {
      return Status::Invalid(Prefix() + "key " + Got(json(key)) + " is not a parameter of " +
                             "index_type " + type_name);
    }
  }

  index::IndexSpec spec;
  STRATA_ASSIGN_OR_RETURN(spec.column, ResolveColumn(sent_column, schema));
  spec.requested_type = type->canonical;
  // IVF_FLAT / IVF_PQ / IVF_SQ are built as such on the base table (index_spec.h BaseIvfFor).
  spec.base_ivf = type->family == Family::kVector && !type->hnsw_params;
  switch (type->family) {
    case Family::kVector:
      spec.kind = index::IndexKind::kHnsw;
      STRATA_RETURN_IF_ERROR(ParseVector(j, type->hnsw_params, &spec.hnsw));
      break;
    case Family::kScalar:
      spec.kind = index::IndexKind::kBTree;
      break;
    case Family::kFts:
      spec.kind = index::IndexKind::kFts;
      STRATA_RETURN_IF_ERROR(ParseFts(j, &spec.fts));
      break;
  }

  if (const json* n = Find(j, "name")) {
    if (!n->is_string()) {
      return Status::Invalid(Prefix() + "name must be a string, got " + Got(*n));
    }
    spec.name = n->get<std::string>();
  } else {
    // The client waits for `{column}_idx` with the column unquoted ("My Col_idx" for the
    // `My Col` it sends).
    STRATA_ASSIGN_OR_RETURN(std::string unquoted, UnquoteColumn(sent_column));
    spec.name = unquoted + "_idx";
  }
  STRATA_RETURN_IF_ERROR(ValidateName(spec.name));

  json params = json::object();
  for (const auto& [key, value] : j.items()) {
    if (key != "column" && key != "index_type" && key != "name" && key != "branch") {
      params[key] = value;
    }
  }
  spec.params_json = params.dump(-1, ' ', false, json::error_handler_t::replace);
  return spec;
}

}  // namespace

Result<index::IndexSpec> ParseCreateIndexRequest(std::string_view body,
                                                 const arrow::Schema& schema) {
  try {
    return Parse(body, schema);
  } catch (const std::exception& e) {
    // Not expected (every access is type-checked first); never let one cross the boundary.
    return Status::Invalid(Prefix() + "invalid request body: " + Excerpt(e.what(), 200));
  }
}

}  // namespace strata::server
