// JSON rows <-> RecordBatch, used by the JSON form of insert/ (PROTOCOL.md §0): a JSON array of
// row objects {"column": value, ...} converted under a table schema.
// Value forms by type:
//   ints: JSON integers (range-checked; integral floats like 3.0 accepted); floats: numbers
//   (float32 range-checked); halffloat: numbers (rounded to nearest even); bool: true/false;
//   string/large_string: strings; binary/large_binary/fixed_size_binary: a string (its UTF-8
//   bytes) or an array of byte values 0..255; decimal128: a decimal string "-12.34" or an
//   integer (digits checked against precision, fraction against scale);
//   date32: days since 1970-01-01 or "YYYY-MM-DD"; date64: ms or "YYYY-MM-DD";
//   timestamp: integer in the type's unit or ISO 8601 "YYYY-MM-DD[THH:MM:SS[.fraction]][Z|+HH:MM]"
//   (no zone = UTC); time32/time64/duration: integers in the type's unit;
//   list/large_list: arrays; fixed_size_list: arrays of exactly list_size values; struct:
//   objects (same key rules as rows); null: JSON null.
// Keys: a missing key is null (Invalid when the field is not nullable); an unknown key is
// Invalid. Errors name the row index and the column, e.g.
// "row 3, column 'vector': expected 4 values, got 3".
// Thread-safety: pure functions; safe to call concurrently. nlohmann::json exceptions never
// escape these functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::arrow::json {

/// Converts `rows` (a JSON array of objects) into one record batch under `schema`. Nothing is
/// returned on error. Errors: Invalid when `rows` is not an array, a row is not an object, or a
/// value does not fit its column (message names row index and column path).
Result<RecordBatchPtr> RowsFromJson(const nlohmann::json& rows, const SchemaPtr& schema);
/// Parses JSON text, then RowsFromJson. Malformed JSON is Invalid with the parser's byte
/// position; text nesting deeper than kMaxJsonDepth (common/json_guard.h) is Invalid before
/// parsing.
Result<RecordBatchPtr> ParseRowsJson(std::string_view text, const SchemaPtr& schema);

/// Value `i` (logical index) of `data` as JSON, in the forms RowsFromJson reads: ints and
/// temporal values as integers, floats as numbers (NaN/inf dump as null), utf8 as strings,
/// binary and fixed_size_binary as arrays of byte values, decimal128 as a decimal string,
/// lists as arrays, structs as objects, nulls as null.
nlohmann::json ValueToJson(const ArrayData& data, int64_t i);
/// The batch as a JSON array of row objects keyed by field name.
nlohmann::json RowsToJson(const RecordBatch& batch);
/// RowsToJson(batch).dump() (compact; invalid UTF-8 replaced by U+FFFD).
std::string RowsToJsonString(const RecordBatch& batch);
/// Appends the batch's rows to `out` as compact JSON objects separated by commas, each
/// object's keys in the schema's column order (RowsToJson's objects sort their keys), values
/// as ValueToJson. `first` is true before the first row of the whole output (no comma) and
/// false after it. Wrap the calls in "[" "]" for a JSON array (query/ with
/// accept: application/json).
void AppendRowsJsonInColumnOrder(const RecordBatch& batch, std::string* out, bool* first);

}  // namespace strata::arrow::json
