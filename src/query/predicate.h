// The skeleton's SQL filter: exactly one comparison `column = literal`, where the literal is an
// integer (`-12`), a float (`1.5`, `2e3`), a single-quoted string (`'it''s'`, '' escapes a
// quote) or `true` / `false`. The column is a bare identifier ([A-Za-z_][A-Za-z0-9_]*) or quoted
// with backticks or double quotes. Anything else is rejected as Invalid naming what is
// unsupported, so a caller never gets silently wrong rows. SQL semantics: a null value never
// matches. (The full SQL filter language of DESIGN.md §2 replaces this in a later issue.)
// Thread-safety: values are immutable after parsing; functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "table/table.h"

namespace strata::query {

/// A literal of the filter language.
struct Literal {
  enum class Kind { kInt, kFloat, kString, kBool };
  Kind kind = Kind::kInt;
  int64_t int_value = 0;
  double float_value = 0.0;
  std::string string_value;
  bool bool_value = false;

  /// SQL spelling, e.g. `'a''b'`, `3`, `true`.
  std::string ToString() const;
};

/// `column = value`.
struct EqualsPredicate {
  std::string column;
  Literal value;

  std::string ToString() const;
};

/// Parses `sql` (at most 64 KiB). Errors: Invalid naming the unsupported construct, e.g.
/// "filter 'a > 1' is not supported yet: only `column = literal` is (found '>')".
Result<EqualsPredicate> ParsePredicate(std::string_view sql);

/// A predicate resolved against a schema: the column index and a type-checked literal.
struct BoundPredicate {
  EqualsPredicate predicate;
  int column_index = -1;
};

/// Resolves the column (exact name first, then a unique case-insensitive match) and checks the
/// literal fits its type: ints and floats compare numerically with integer and floating
/// columns, strings with utf8/large_utf8, booleans with bool.
/// Errors: Invalid naming the missing column, or the column type and literal that do not match.
Result<BoundPredicate> BindPredicate(const EqualsPredicate& predicate, const arrow::Schema& schema);

/// Evaluates over `batch` (whose schema is the bound one): sets `(*mask)[i]` to 1 when row i
/// matches, else 0. `mask` is resized to batch.num_rows().
void EvaluatePredicate(const BoundPredicate& predicate, const arrow::RecordBatch& batch,
                       std::vector<uint8_t>* mask);

/// Number of rows of `snapshot` matching `predicate` (binds it first; errors as BindPredicate).
Result<int64_t> CountMatching(const EqualsPredicate& predicate,
                              const table::TableSnapshot& snapshot);

}  // namespace strata::query
