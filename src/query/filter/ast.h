// Abstract syntax tree of Strata's SQL filter and projection expressions: the subset of
// DataFusion SQL that LanceDB users write in `where(...)`, `delete(...)`, `update(...)` and
// dynamic projections (DESIGN.md §6, issue 5). Produced by ParseExpression (parser.h), checked
// and typed by Bind (evaluator.h).
// Every node records `position`: the 0-based byte offset in the SQL text of the token that
// starts it (for a binary operator node: the operator token), so errors can name it.
// Thread-safety: immutable once parsed; share freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata::query::filter {

/// A literal value as written.
struct Literal {
  enum class Kind {
    kNull,       // NULL
    kBool,       // TRUE / FALSE
    kInt,        // 12, -3 (after folding unary minus), fits int64
    kFloat,      // 1.5, 2e3, 1e400 is an error, integers past int64 become floats
    kString,     // 'it''s' (value without quotes, '' unescaped)
    kDate,       // date '2024-01-31': int_value = days since 1970-01-01
    kTimestamp,  // timestamp '2024-01-31 12:00:00[.ffffff]' (or 'T'): int_value = microseconds
                 // since 1970-01-01 00:00:00 UTC (no time zone suffix accepted)
  };
  Kind kind = Kind::kNull;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0.0;
  std::string string_value;

  /// SQL spelling, e.g. `'a''b'`, `3`, `TRUE`, `NULL`, `DATE '2024-01-31'`.
  std::string ToString() const;
};

enum class ExprKind {
  kLiteral,  // literal
  kColumn,   // path: {"a"} or {"a", "b"} for a.b; `_rowid` and `_rowoffset` are columns too
  kNot,      // NOT c0
  kNegate,   // -c0 (unary minus of a non-literal)
  kAnd,      // c0 AND c1
  kOr,       // c0 OR c1
  kCompare,  // c0 <cmp> c1
  kArith,    // c0 <arith> c1
  kIsNull,   // c0 IS [NOT] NULL (negated)
  kIn,       // c0 [NOT] IN (c1, c2, ...) (negated); at least one list element
  kBetween,  // c0 [NOT] BETWEEN c1 AND c2 (negated), inclusive
  kLike,     // c0 [NOT] LIKE c1 (negated); % any run, _ one character; no ESCAPE clause
  kCast,     // CAST(c0 AS cast_type)
  kCall,     // function(c0, c1, ...)
};

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };  // = ; != or <> ; < ; <= ; > ; >=
enum class ArithOp { kAdd, kSub, kMul, kDiv, kMod };    // + - * / %

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  /// 0-based byte offset of the token that starts this node in the SQL text.
  size_t position = 0;
  Literal literal;                // kLiteral
  std::vector<std::string> path;  // kColumn: identifiers as written (backticks removed)
  CompareOp compare = CompareOp::kEq;
  ArithOp arith = ArithOp::kAdd;
  bool negated = false;   // kIsNull / kIn / kBetween / kLike: the NOT form
  std::string function;   // kCall: lower-cased name, e.g. "lower", "regexp_match"
  std::string cast_type;  // kCast: lower-cased type name as written, e.g. "bigint", "varchar"
  std::vector<ExprPtr> children;

  /// Canonical SQL of the subtree (fully parenthesized binary operators, upper-case keywords),
  /// e.g. "((a = 1) AND (b IS NOT NULL))". Used in plans and error messages.
  std::string ToString() const;
};

/// Name of the operator, e.g. "=", "<>", "+".
const char* CompareOpName(CompareOp op);
const char* ArithOpName(ArithOp op);

/// Hidden columns a filter may reference (query/source_rows.h gives their values).
inline constexpr char kRowIdName[] = "_rowid";          // uint64 row-version address
inline constexpr char kRowOffsetName[] = "_rowoffset";  // uint64 ordinal in the scan order

}  // namespace strata::query::filter
