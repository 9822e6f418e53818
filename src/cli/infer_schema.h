// Table schema for `strata import` of text files when the table does not exist yet and no
// --schema is given, inferred from the first rows (up to kInferRows), and the conversion of a
// CSV record into a JSON row object under a schema (then arrow/json/rows_json.h builds the
// batch). Inference per column, over the non-empty values of the sample:
//   all integers (-?[0-9]+ in CSV, JSON integers)             -> int64
//   all numbers (integers mixed with decimals/exponents)      -> float64
//   all true/false (CSV: case-insensitive)                    -> bool
//   all JSON arrays of numbers of one length N                -> fixed_size_list<float32>[N]
//                                                                (a vector column)
//   anything else (or no value at all in the sample)          -> utf8
// Every field is nullable; an empty CSV field and a JSON null are null. Arrays of different
// lengths, nested objects or arrays of non-numbers are Invalid ("pass --schema").
// Column order: the CSV header, or first appearance in JSON Lines.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arrow/type.h"
#include "cli/text_input.h"
#include "common/status.h"

namespace strata::cli {

/// Rows of the first file sampled for inference.
constexpr int kInferRows = 1000;

Result<arrow::SchemaPtr> InferCsvSchema(const std::vector<std::string>& header,
                                        const std::vector<CsvRecord>& sample,
                                        const std::string& path);
Result<arrow::SchemaPtr> InferJsonlSchema(const std::vector<JsonlRecord>& sample,
                                          const std::string& path);

/// The CSV record as a JSON object under `schema`: empty field -> null; integer/float/bool
/// columns parse the text (Invalid "FILE:LINE: column 'c': ..." when it does not parse);
/// list-like columns parse the text as a JSON array; other types keep the string (dates,
/// timestamps and decimals are then read by rows_json.h). Header names not in the schema are
/// Invalid.
Result<nlohmann::json> CsvRecordToJson(const std::vector<std::string>& header,
                                       const CsvRecord& record, const arrow::Schema& schema,
                                       const std::string& path);

/// A JSON Lines row made to fit `schema` where inference allows mixed values: a number or a
/// boolean in a utf8 column becomes its JSON text (inference gives utf8 to a column whose
/// values mix strings, numbers and booleans). In place; other values are left to rows_json.h.
void JsonRowToStrings(nlohmann::json* row, const arrow::Schema& schema);

}  // namespace strata::cli
