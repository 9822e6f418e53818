// Binding and vectorized evaluation of filter / projection expressions (ast.h) over Arrow
// record batches (DESIGN.md §6, issue 5).
//
// Bind resolves every column against a schema (exact name first, then a unique
// case-insensitive match; `a.b` walks struct fields; `_rowid` / `_rowoffset` are uint64 hidden
// columns whose values the caller supplies per batch in RowContext), checks types and gives
// every node a result type:
//   - numbers: integer columns and literals compare / compute as int64 (uint64 columns as
//     uint64 when both sides are unsigned), any float operand makes it float64; `/` of two
//     integers is integer division (DataFusion), division by zero gives NULL; integer overflow
//     wraps never: it is an Invalid error at evaluation ("integer overflow in 'a * b'");
//     a uint64 compared with a signed integer compares exactly (no wrap); `/` and `%` by zero
//     give NULL for floats too; NaN equals nothing;
//   - strings (utf8, large_utf8) compare bytewise; date32 / timestamp columns compare with
//     date / timestamp literals and with string literals in those formats;
//     temporal values compare in the finer of the two units (date32 days, date64 ms, a
//     timestamp's unit; a string literal is parsed at bind as a microsecond timestamp);
//   - booleans; AND / OR / NOT follow SQL three-valued logic (NULL AND FALSE = FALSE,
//     NULL OR TRUE = TRUE); comparisons with NULL give NULL; `x IN (..., NULL)` without a match
//     is NULL; LIKE with % and _ (no escape character; case-sensitive);
//   - CAST(x AS t) for t in: tinyint smallint int integer bigint (signed ints), float real
//     (float32), double (float64), varchar string text (utf8), boolean bool, date, timestamp;
//     a value that does not convert is an Invalid error naming it;
//   - functions: lower(s), upper(s), length(s) / char_length(s) / character_length(s)
//     (UTF-8 code points, int64), starts_with(s, prefix), regexp_match(s, pattern) (RE2, the
//     pattern must be a constant; true when it matches anywhere), array_has(list, v) /
//     array_contains(list, v) on list / large_list / fixed_size_list columns.
// Errors from Bind are Invalid and name the token and its position ("filter: unknown column
// 'x' at position 4; columns are: id, vec", "filter: cannot compare utf8 column 'name' with
// integer 3 at position 7", "filter: unknown function 'foo' at position 0",
// "filter: WHERE clause must be boolean, 'a + 1' is int64"), or NotSupported for a column
// type an operator cannot read (e.g. comparing a vector column).
// Evaluation is column-at-a-time (one pass per node over the whole batch), never row-by-row
// interpretation.
// Thread-safety: a BoundExpr is immutable after Bind; evaluation is pure and may run on many
// threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "query/filter/ast.h"

namespace strata::query::filter {

/// Values of the hidden columns for the rows of one batch (each null when not referenced by
/// the expression; Evaluate fails with Invalid naming the column when a referenced one is
/// null). Arrays of batch.num_rows() values.
struct RowContext {
  const uint64_t* row_ids = nullptr;      // `_rowid`
  const uint64_t* row_offsets = nullptr;  // `_rowoffset`
};

/// A type-checked expression. Opaque: built by Bind.
class BoundExpr {
 public:
  virtual ~BoundExpr() = default;
  /// Result type of the expression (bool for predicates).
  virtual const arrow::DataTypePtr& type() const = 0;
  /// The parsed expression it was bound from.
  virtual const ExprPtr& expr() const = 0;
  /// Whether the expression reads `_rowid` / `_rowoffset`.
  virtual bool uses_row_id() const = 0;
  virtual bool uses_row_offset() const = 0;
  /// Schema indices of the top-level columns it reads, ascending, without duplicates.
  virtual const std::vector<int>& columns() const = 0;
};
using BoundExprPtr = std::shared_ptr<const BoundExpr>;

struct BindOptions {
  /// Prefix of error messages (as ParseOptions::context).
  std::string context = "filter";
  /// Require a boolean result (filters, predicates). Projections pass false.
  bool require_bool = true;
};

/// Binds `expr` against `schema` (see the file comment for the rules and errors).
Result<BoundExprPtr> Bind(const ExprPtr& expr, const arrow::Schema& schema,
                          const BindOptions& options = {});

/// ParseExpression (parser.h) then Bind, with the same context; `sql` at most 64 KiB.
Result<BoundExprPtr> ParseAndBind(std::string_view sql, const arrow::Schema& schema,
                                  const BindOptions& options = {});

/// Evaluates `expr` over every row of `batch` (whose schema must be the bound schema, or a
/// schema with the same fields first: extra trailing columns such as hidden storage columns
/// are ignored). Returns an array of expr.type() with batch.num_rows() rows.
/// Errors: Invalid for runtime failures (integer overflow, a CAST that does not convert, a
/// missing RowContext array), naming the expression.
Result<arrow::ArrayDataPtr> Evaluate(const BoundExpr& expr, const arrow::RecordBatch& batch,
                                     const RowContext& context = {});

/// Evaluates a boolean `expr` and sets (*mask)[i] = 1 exactly when row i is TRUE (FALSE and
/// NULL give 0). `mask` is resized to batch.num_rows(). Errors as Evaluate.
Status EvaluateMask(const BoundExpr& expr, const arrow::RecordBatch& batch,
                    const RowContext& context, std::vector<uint8_t>* mask);

/// Converts `values` to `target` with CAST semantics (used by update/ to store an expression's
/// result in a column and by CAST): numbers between widths (out of range is Invalid naming
/// the value and target type), numbers <-> strings, strings -> date32 / timestamp, int -> float,
/// float -> int (truncation toward zero; NaN / out of range Invalid), same type = no copy.
/// `what` names the value in errors (e.g. "column 'price'").
/// Errors: Invalid; NotSupported for a conversion that does not exist (e.g. utf8 -> vector).
Result<arrow::ArrayDataPtr> CastArray(const arrow::ArrayDataPtr& values,
                                      const arrow::DataTypePtr& target, const std::string& what);

}  // namespace strata::query::filter
