// Terminal output of the client commands: aligned text tables, CSV quoting, and one Arrow
// value as display text (vectors summarised as "[0.12, -0.5, 0.33, ... dim 128]").
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arrow/array.h"

namespace strata::cli {

/// Columns padded to their widest cell, two spaces apart, a dashed line under the header.
struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string Render() const;
};

/// RFC 4180: quoted when it holds ',', '"', CR or LF.
std::string CsvField(const std::string& s);

/// Value `i` of `data` as JSON (arrow/json/rows_json.h ValueToJson), with float32 values (also
/// inside lists and vectors) as their shortest decimal form: 0.1f is 0.1, not
/// 0.10000000149011612; dates as 'YYYY-MM-DD' and timestamps as 'YYYY-MM-DD hh:mm:ss[.f]'
/// (UTC), the forms import reads back.
nlohmann::json ValueJson(const arrow::ArrayData& data, int64_t i);

/// Value `i` of `data` for a table cell: null as "", floats with up to 6 significant digits,
/// lists of more than `max_values` values summarised with their length.
std::string CellText(const arrow::ArrayData& data, int64_t i, int max_values = 4);

}  // namespace strata::cli
