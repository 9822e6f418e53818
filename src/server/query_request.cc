#include "server/query_request.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/json_fast_parse.h"
#include "common/json_guard.h"
#include "query/projection_alias.h"

namespace strata::server {

namespace {

// Insertion-ordered, so a `columns` object keeps the order the client gave its aliases.
using json = nlohmann::ordered_json;

// nlohmann's parser: for what the fast path rejects, with the error's byte position.
Result<json> ParseSlow(std::string_view body, const char* route) {
  try {
    return json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    return Status::Invalid(std::string(route) + ": the request body is not valid JSON " +
                           DescribeJsonParseError(e.byte, e.what()));
  } catch (const std::exception& e) {
    return Status::Invalid(std::string(route) +
                           ": the request body is not valid JSON: " + Excerpt(e.what(), 200));
  }
}

// `vector_floats`, when given, receives the top-level "vector" member's numbers when the fast
// path read them directly (FastParseOrderedJsonWithFloats); the tree then holds [0] there.
Result<json> ParseObject(std::string_view body, const char* route, bool allow_empty,
                         std::vector<float>* vector_floats = nullptr) {
  size_t first = 0;
  while (first < body.size() && std::isspace(static_cast<unsigned char>(body[first]))) ++first;
  if (first == body.size()) {
    if (allow_empty) return json::object();
    return Status::Invalid(std::string(route) +
                           ": the request body is empty; expected a JSON object");
  }
  json j;
  std::optional<json> fast = vector_floats != nullptr
                                 ? FastParseOrderedJsonWithFloats(body, "vector", vector_floats)
                                 : FastParseOrderedJson(body);
  if (fast) {
    j = std::move(*fast);
  } else {
    if (vector_floats != nullptr) vector_floats->clear();  // the tree below holds the vector
    // Named as the router names it for the other JSON routes ("query/: ...").
    STRATA_RETURN_IF_ERROR(CheckJsonDepth(body, std::string(route) + "/"));
    STRATA_ASSIGN_OR_RETURN(j, ParseSlow(body, route));
  }
  if (!j.is_object()) {
    return Status::Invalid(std::string(route) + ": the request body must be a JSON object");
  }
  return j;
}

// What an invalid value was, for error messages: the type of arrays and objects (never
// serialized: untrusted, possibly huge or deep), scalars as JSON capped at kMaxEchoBytes.
std::string Got(const json& v) {
  if (v.is_structured()) return v.type_name();
  return Excerpt(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool IsNull(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null();
}

Result<std::optional<int64_t>> GetInt(const json& j, const char* key, int64_t min_value) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<int64_t>();
  int64_t v = 0;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::Invalid(std::string(key) + " must be at most 9223372036854775807, got " +
                             std::to_string(u));
    }
    v = static_cast<int64_t>(u);
  } else if (it->is_number_integer()) {
    v = it->get<int64_t>();
  } else {
    return Status::Invalid(std::string(key) + " must be an integer, got " + Got(*it));
  }
  if (v < min_value) {
    return Status::Invalid(std::string(key) + " must be >= " + std::to_string(min_value) +
                           ", got " + std::to_string(v));
  }
  return std::optional<int64_t>(v);
}

Result<std::optional<std::string>> GetString(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) {
    return Status::Invalid(std::string(key) + " must be a string, got " + Got(*it));
  }
  return std::optional<std::string>(it->get<std::string>());
}

Result<bool> GetBool(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) {
    return Status::Invalid(std::string(key) + " must be true or false, got " + Got(*it));
  }
  return it->get<bool>();
}

Result<std::optional<uint64_t>> GetVersion(const json& j) {
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(j, "version", 0));
  if (!v) return std::optional<uint64_t>();
  return std::optional<uint64_t>(static_cast<uint64_t>(*v));
}

// A plain column reference: an identifier, or a `backtick` / "double"-quoted name.
std::optional<std::string> PlainColumnRef(std::string_view expr) {
  while (!expr.empty() && std::isspace(static_cast<unsigned char>(expr.front()))) {
    expr.remove_prefix(1);
  }
  while (!expr.empty() && std::isspace(static_cast<unsigned char>(expr.back()))) {
    expr.remove_suffix(1);
  }
  if (expr.empty()) return std::nullopt;
  const char q = expr.front();
  if (q == '`' || q == '"') {
    if (expr.size() < 3 || expr.back() != q) return std::nullopt;
    std::string out;
    for (size_t i = 1; i + 1 < expr.size(); ++i) {
      if (expr[i] == q) {
        if (i + 2 < expr.size() && expr[i + 1] == q) {
          out.push_back(q);
          ++i;
          continue;
        }
        return std::nullopt;
      }
      out.push_back(expr[i]);
    }
    return out;
  }
  if (!(std::isalpha(static_cast<unsigned char>(q)) || q == '_')) return std::nullopt;
  for (char c : expr) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return std::nullopt;
  }
  return std::string(expr);
}

Result<std::vector<query::ColumnRef>> GetColumns(const json& j) {
  std::vector<query::ColumnRef> out;
  auto it = j.find("columns");
  if (it == j.end() || it->is_null()) return out;
  if (it->is_array()) {
    for (const auto& c : *it) {
      if (!c.is_string()) {
        return Status::Invalid("columns must be an array of column names, got " + Got(c));
      }
      out.push_back({c.get<std::string>(), ""});
    }
    return out;
  }
  if (it->is_object()) {
    for (auto kv = it->begin(); kv != it->end(); ++kv) {
      if (!kv.value().is_string()) {
        return Status::Invalid("columns: the expression of '" + kv.key() +
                               "' must be a string, got " + Got(kv.value()));
      }
      if (kv.key().empty()) {
        return Status::Invalid("columns: an output column name (alias) must not be empty");
      }
      const std::string expr = kv.value().get<std::string>();
      // A plain column reference is gathered as is; anything else is an SQL expression the
      // projection evaluates (query/projection.h).
      std::optional<std::string> ref = PlainColumnRef(expr);
      out.push_back({ref ? *ref : expr, kv.key()});
    }
    return out;
  }
  return Status::Invalid("columns must be an array of names or an object {alias: sql}, got " +
                         Got(*it));
}

// An SQL filter (query/filter/); blank text = none. Syntax and names are checked when the
// query binds it against the table schema.
Result<std::optional<std::string>> GetFilter(const json& j, const char* key) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> sql, GetString(j, key));
  if (!sql) return std::optional<std::string>();
  bool blank = true;
  for (char c : *sql) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) return std::optional<std::string>();
  return sql;
}

Result<std::optional<float>> GetBound(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<float>();
  if (!it->is_number()) {
    return Status::Invalid(std::string(key) + " must be a number or null, got " + Got(*it));
  }
  const double v = it->get<double>();
  if (std::isnan(v)) return Status::Invalid(std::string(key) + " must not be NaN");
  return std::optional<float>(static_cast<float>(v));
}

Result<std::vector<float>> GetVector(const json& v) {
  std::vector<float> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const json& x = v[i];
    if (x.is_array()) {
      return Status::NotSupported(
          "vector: multi-vector queries are not supported yet (send one vector per request)");
    }
    if (!x.is_number()) {
      return Status::Invalid("vector: element " + std::to_string(i) + " must be a number, got " +
                             Got(x));
    }
    out.push_back(static_cast<float>(x.get<double>()));
  }
  return out;
}

// A number that must equal `expected` when present (structured FTS options we do not vary).
Status RequireNumber(const json& j, const char* key, double expected, const char* where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::OK();
  if (!it->is_number()) {
    return Status::Invalid(std::string(where) + "." + key + " must be a number, got " + Got(*it));
  }
  if (it->get<double>() != expected) {
    return Status::NotSupported(std::string(where) + "." + key + " " + Got(*it) +
                                " is not supported yet (only " + Got(json(expected)) + ")");
  }
  return Status::OK();
}

// "column" of a structured query: null = every FTS column.
Result<std::vector<std::string>> GetFtsColumn(const json& q, const char* where) {
  auto it = q.find("column");
  if (it == q.end() || it->is_null()) return std::vector<std::string>{};
  if (!it->is_string()) {
    return Status::Invalid(std::string(where) + ".column must be a string or null, got " +
                           Got(*it));
  }
  return std::vector<std::string>{it->get<std::string>()};
}

Result<std::string> GetTerms(const json& q, const char* where) {
  auto it = q.find("terms");
  if (it == q.end() || !it->is_string()) {
    return Status::Invalid(std::string(where) + ".terms must be a string, got " +
                           (it == q.end() ? std::string("nothing") : Got(*it)));
  }
  return it->get<std::string>();
}

// full_text_query: {"columns": [..], "query": "text"} (legacy) or {"query": {match|phrase}}.
Result<query::FtsSearchOptions> GetFullTextQuery(const json& f) {
  if (!f.is_object()) {
    return Status::Invalid("full_text_query must be an object, got " + Got(f));
  }
  query::FtsSearchOptions o;
  auto qit = f.find("query");
  if (qit == f.end() || qit->is_null()) {
    return Status::Invalid("full_text_query.query is required (the query text or a query object)");
  }
  if (qit->is_string()) {
    o.query.kind = index::FtsQuery::Kind::kMatch;
    o.query.text = qit->get<std::string>();
    auto cit = f.find("columns");
    if (cit != f.end() && !cit->is_null()) {
      if (!cit->is_array()) {
        return Status::Invalid("full_text_query.columns must be an array of column names, got " +
                               Got(*cit));
      }
      for (const auto& c : *cit) {
        if (!c.is_string()) {
          return Status::Invalid("full_text_query.columns must hold column names, got " + Got(c));
        }
        o.columns.push_back(c.get<std::string>());
      }
    }
    return o;
  }
  if (!qit->is_object()) {
    return Status::Invalid("full_text_query.query must be a string or an object, got " + Got(*qit));
  }
  if (qit->size() != 1) {
    return Status::Invalid(
        "full_text_query.query must hold exactly one query kind (match or phrase), got " +
        std::to_string(qit->size()) + " keys");
  }
  const std::string kind = qit->begin().key();
  const json& q = qit->begin().value();
  if (kind != "match" && kind != "phrase") {
    return Status::NotSupported("full_text_query.query." + kind +
                                " is not supported yet (only match and phrase queries are)");
  }
  const std::string where = "full_text_query.query." + kind;
  if (!q.is_object()) return Status::Invalid(where + " must be an object, got " + Got(q));
  STRATA_ASSIGN_OR_RETURN(o.query.text, GetTerms(q, where.c_str()));
  STRATA_ASSIGN_OR_RETURN(o.columns, GetFtsColumn(q, where.c_str()));
  if (kind == "match") {
    o.query.kind = index::FtsQuery::Kind::kMatch;
    STRATA_RETURN_IF_ERROR(RequireNumber(q, "boost", 1.0, where.c_str()));
    STRATA_RETURN_IF_ERROR(RequireNumber(q, "fuzziness", 0.0, where.c_str()));
    // max_expansions and prefix_length only shape fuzzy matching (fuzziness 0: no effect).
    auto op = q.find("operator");
    if (op != q.end() && !op->is_null()) {
      const std::string v = op->is_string() ? op->get<std::string>() : std::string();
      if (v == "Or" || v == "or" || v == "OR") {
        o.query.require_all = false;
      } else if (v == "And" || v == "and" || v == "AND") {
        o.query.require_all = true;
      } else {
        return Status::Invalid(where + ".operator must be \"Or\" or \"And\", got " + Got(*op));
      }
    }
  } else {
    o.query.kind = index::FtsQuery::Kind::kPhrase;
    STRATA_RETURN_IF_ERROR(RequireNumber(q, "slop", 0.0, where.c_str()));
  }
  return o;
}

// LanceDB accepts the column a query appends in its own projection (`select(["id",
// "_distance"])`, `select(["id", "_score"])`; the 0.31 client warns when an FTS query leaves
// `_score` out): a plain, unaliased reference to it is dropped, since the column is appended
// anyway. A projection of nothing but appended columns is refused (an empty list means "all").
Status DropAppendedRefs(std::vector<query::ColumnRef>* columns,
                        std::initializer_list<const char*> appended) {
  if (columns->empty()) return Status::OK();
  std::vector<query::ColumnRef> kept;
  for (query::ColumnRef& c : *columns) {
    bool drop = false;
    for (const char* name : appended) {
      if (name != nullptr && c.name == name && (c.alias.empty() || c.alias == name)) drop = true;
    }
    if (!drop) kept.push_back(std::move(c));
  }
  if (kept.empty()) {
    return Status::Invalid(
        "columns: name at least one table column besides the columns the query appends");
  }
  *columns = std::move(kept);
  return Status::OK();
}

// An output column may not take the name of a column the query appends (`_distance` for vector
// search, `_score` for full-text search, `_rowid` with with_row_id): the answer would hold two
// columns of that name.
Status CheckReservedNames(const std::vector<query::ColumnRef>& columns,
                          std::initializer_list<const char*> appended) {
  for (const query::ColumnRef& c : columns) {
    std::string out = c.alias.empty() ? c.name : c.alias;
    // A list entry "EXPR AS alias" outputs `alias` (query/projection.h).
    if (c.alias.empty()) {
      if (auto split = query::SplitTrailingAlias(c.name)) out = split->second;
    }
    for (const char* name : appended) {
      if (name != nullptr && out == name) {
        return Status::Invalid("columns: output column '" + out +
                               "' clashes with the column this query appends; choose another "
                               "alias");
      }
    }
  }
  return Status::OK();
}

}  // namespace

Result<QueryRequest> ParseQueryRequest(std::string_view body) {
  std::vector<float> vector_floats;
  STRATA_ASSIGN_OR_RETURN(json j,
                          ParseObject(body, "query", /*allow_empty=*/false, &vector_floats));
  QueryRequest req;
  STRATA_ASSIGN_OR_RETURN(req.version, GetVersion(j));
  if (!IsNull(j, "order_by")) return Status::NotSupported("order_by is not supported yet");
  STRATA_ASSIGN_OR_RETURN(std::optional<float> lower_bound, GetBound(j, "lower_bound"));
  STRATA_ASSIGN_OR_RETURN(std::optional<float> upper_bound, GetBound(j, "upper_bound"));
  // k's lower bound depends on the plan (checked below): >= 0 for a plain scan, >= 1 for a
  // vector search.
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> k,
                          GetInt(j, "k", std::numeric_limits<int64_t>::min()));
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> offset, GetInt(j, "offset", 0));
  STRATA_ASSIGN_OR_RETURN(std::vector<query::ColumnRef> columns, GetColumns(j));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> filter, GetFilter(j, "filter"));
  STRATA_ASSIGN_OR_RETURN(bool with_row_id, GetBool(j, "with_row_id", false));
  STRATA_ASSIGN_OR_RETURN(bool prefilter, GetBool(j, "prefilter", true));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> distance_type, GetString(j, "distance_type"));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> vector_column, GetString(j, "vector_column"));

  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> ef, GetInt(j, "ef", 1));
  // IVF tuning (base-table IVF indexes): nprobes is the client's minimum_nprobes.
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> nprobes, GetInt(j, "nprobes", 1));
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> min_nprobes, GetInt(j, "minimum_nprobes", 1));
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> max_nprobes, GetInt(j, "maximum_nprobes", 0));
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> refine_factor, GetInt(j, "refine_factor", 1));
  if (refine_factor && *refine_factor > 1000) {
    return Status::Invalid("refine_factor must be in [1, 1000], got " +
                           std::to_string(*refine_factor));
  }
  STRATA_ASSIGN_OR_RETURN(bool bypass_vector_index, GetBool(j, "bypass_vector_index", false));

  auto vit = j.find("vector");
  const bool has_vector = vit != j.end() && !vit->is_null() && !(vit->is_array() && vit->empty());
  if (vit != j.end() && !vit->is_null() && !vit->is_array()) {
    return Status::Invalid("vector must be an array of numbers, got " + Got(*vit));
  }
  if (!IsNull(j, "full_text_query")) {
    if (has_vector) {
      return Status::NotSupported(
          "full_text_query together with vector (server-side hybrid search) is not supported; "
          "send the vector and the full-text query as two queries");
    }
    STRATA_ASSIGN_OR_RETURN(query::FtsSearchOptions fts, GetFullTextQuery(j["full_text_query"]));
    if (k && *k < 1) {
      return Status::Invalid("k must be >= 1 for a full-text search, got " + std::to_string(*k));
    }
    STRATA_RETURN_IF_ERROR(DropAppendedRefs(
        &columns, {query::kScoreColumn, with_row_id ? query::kRowIdColumn : nullptr}));
    STRATA_RETURN_IF_ERROR(CheckReservedNames(
        columns, {query::kScoreColumn, with_row_id ? query::kRowIdColumn : nullptr}));
    if (k) fts.k = *k;
    if (offset) fts.offset = *offset;
    fts.columns_out = std::move(columns);
    fts.filter = std::move(filter);
    fts.prefilter = prefilter;
    fts.with_row_id = with_row_id;
    req.plan = std::move(fts);
    return req;
  }
  if (!has_vector) {
    if (k && *k < 0) {
      return Status::Invalid("k must be >= 0 for a plain scan (0 returns no rows), got " +
                             std::to_string(*k));
    }
    STRATA_RETURN_IF_ERROR(
        CheckReservedNames(columns, {with_row_id ? query::kRowIdColumn : nullptr}));
    query::ScanOptions scan;
    if (k) scan.limit = *k;
    if (offset) scan.offset = *offset;
    scan.columns = std::move(columns);
    scan.filter = std::move(filter);
    scan.with_row_id = with_row_id;
    req.plan = std::move(scan);
    return req;
  }
  if (k && *k < 1) {
    return Status::Invalid("k must be >= 1 for a vector search, got " + std::to_string(*k));
  }
  STRATA_RETURN_IF_ERROR(DropAppendedRefs(
      &columns, {query::kDistanceColumn, with_row_id ? query::kRowIdColumn : nullptr}));
  STRATA_RETURN_IF_ERROR(CheckReservedNames(
      columns, {query::kDistanceColumn, with_row_id ? query::kRowIdColumn : nullptr}));
  query::VectorSearchOptions vs;
  if (!vector_floats.empty()) {
    vs.query = std::move(vector_floats);  // read by the fast parser (a flat array of numbers)
  } else if (vit->size() == 1 && (*vit)[0].is_array()) {
    STRATA_ASSIGN_OR_RETURN(vs.query, GetVector((*vit)[0]));  // [[...]] with one vector
  } else {
    STRATA_ASSIGN_OR_RETURN(vs.query, GetVector(*vit));
  }
  if (k) vs.k = *k;
  if (offset) vs.offset = *offset;
  if (distance_type) {
    STRATA_ASSIGN_OR_RETURN(vs.distance, query::ParseDistanceType(*distance_type));
  }
  if (vector_column) vs.column = *vector_column;
  vs.ef = ef;
  if (min_nprobes) vs.nprobes = *min_nprobes;
  if (nprobes) vs.nprobes = std::max(vs.nprobes.value_or(1), *nprobes);
  vs.max_nprobes = max_nprobes;
  if (vs.nprobes && vs.max_nprobes && *vs.max_nprobes != 0 && *vs.max_nprobes < *vs.nprobes) {
    return Status::Invalid("maximum_nprobes (" + std::to_string(*vs.max_nprobes) +
                           ") must be 0 (unbounded) or >= nprobes (" + std::to_string(*vs.nprobes) +
                           ")");
  }
  vs.refine_factor = refine_factor;
  vs.bypass_vector_index = bypass_vector_index;
  vs.columns = std::move(columns);
  vs.filter = std::move(filter);
  vs.prefilter = prefilter;
  vs.lower_bound = lower_bound;
  vs.upper_bound = upper_bound;
  vs.with_row_id = with_row_id;
  req.plan = std::move(vs);
  return req;
}

Result<CountRowsRequest> ParseCountRowsRequest(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(json j, ParseObject(body, "count_rows", /*allow_empty=*/true));
  CountRowsRequest req;
  STRATA_ASSIGN_OR_RETURN(req.version, GetVersion(j));
  STRATA_ASSIGN_OR_RETURN(req.predicate, GetFilter(j, "predicate"));
  return req;
}

Result<std::optional<uint64_t>> ParseDescribeRequest(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(json j, ParseObject(body, "describe", /*allow_empty=*/true));
  return GetVersion(j);
}

}  // namespace strata::server
