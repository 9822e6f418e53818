// Array literals in update/ values: the LanceDB clients turn an array value
// (`update({values: {vector: [3, 4]}})`) into the SQL text `[3, 4]` (DataFusion's array
// literal), which the filter language (query/filter/) does not have. update/ accepts it for
// list, large_list and fixed_size_list columns: the elements are literals (numbers,
// 'strings' with '' escaping, TRUE/FALSE, NULL) separated by commas.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "query/filter/ast.h"

namespace strata::server {

/// Whether `sql` (after leading blanks) starts with '['.
bool IsListLiteral(std::string_view sql);

/// The elements of `[e1, e2, ...]` (`[]` = none). Errors: Invalid naming `context` and the
/// position of a malformed or non-literal element or a missing ']'.
Result<std::vector<query::filter::Literal>> ParseListLiteral(std::string_view sql,
                                                             const std::string& context);

/// `rows` copies of the list `items` under `type` (list, large_list or fixed_size_list of
/// numbers, bool or utf8). Errors: Invalid naming `what` when the column is not a list, a
/// fixed_size_list's size differs from the element count (naming both), or an element does
/// not fit the element type.
Result<arrow::ArrayDataPtr> RepeatListLiteral(const std::vector<query::filter::Literal>& items,
                                              const arrow::DataTypePtr& type, int64_t rows,
                                              const std::string& what);

}  // namespace strata::server
