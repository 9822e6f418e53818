// Schema <-> the LanceDB schema JSON (PROTOCOL.md §3; lance's own JSON schema, not Arrow's
// canonical type names):
//   Schema = {"fields":[Field...], "metadata"?:{str:str}}
//   Field  = {"name":str, "type":Type, "nullable":bool, "metadata"?:{str:str}}
//   Type   = {"type":str, "fields"?:[Field], "length"?:int}
// Spellings: null bool int8..int64 uint8..uint64 halffloat float double string large_string
// binary large_binary date32:day date64:ms time32:{s,ms} time64:{us,ns}
// timestamp:{s,ms,us,ns}:{TZ or -} duration:{s,ms,us,ns} decimal:128:P:S
// fixed_size_binary(+length) list/large_list(+fields:[child]) fixed_size_list(+fields, length)
// struct(+fields). "json" is read as large_binary. Rejected with Invalid naming the field and
// spelling: float32/boolean/utf8 and every other unknown spelling, dict:..., string_view,
// binary_view, decimal:256:...
// Thread-safety: pure functions; safe to call concurrently. nlohmann::json exceptions never
// escape these functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "arrow/type.h"
#include "common/status.h"

namespace strata::arrow::json {

/// Nesting deeper than this many type levels is rejected (untrusted input).
inline constexpr int kMaxTypeDepth = 64;

/// The Type object of `type`, e.g. {"type":"timestamp:us:UTC"} or
/// {"type":"fixed_size_list","length":4,"fields":[{...item...}]}. Every type of type.h maps.
nlohmann::json DataTypeToJson(const DataType& type);
/// {"name","type","nullable"} plus "metadata" when the field has any.
nlohmann::json FieldToJson(const Field& field);
/// {"fields":[...]} plus "metadata" when the schema has any.
nlohmann::json SchemaToJson(const Schema& schema);
/// SchemaToJson(schema).dump(): compact, keys sorted.
std::string SchemaToJsonString(const Schema& schema);

/// Parses a Type object. `field_name` names the field in error messages (dotted path for
/// nested children). Errors: Invalid naming the field and the spelling for unknown or
/// unsupported spellings, missing/invalid "fields" or "length", precision/scale out of range
/// (decimal precision 1..38, scale <= precision), nesting past kMaxTypeDepth.
Result<DataTypePtr> DataTypeFromJson(const nlohmann::json& type, const std::string& field_name);
/// Parses a Field object; "name", "type" and "nullable" are required.
Result<FieldPtr> FieldFromJson(const nlohmann::json& field);
/// Parses a Schema object; "fields" is required. Duplicate top-level field names are Invalid.
Result<SchemaPtr> SchemaFromJson(const nlohmann::json& schema);
/// Parses JSON text then SchemaFromJson; malformed JSON is Invalid with the parser's position.
Result<SchemaPtr> ParseSchemaJson(std::string_view text);

}  // namespace strata::arrow::json
