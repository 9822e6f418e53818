// Internal to the filter binder / evaluator: the bound expression tree (binder.cc builds it,
// evaluator.cc, functions.cc and cast.cc evaluate it) and the entry points those files share.
// Not part of the public API (evaluator.h is).
// Thread-safety: nodes are immutable after Bind; evaluation only reads them.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "query/filter/ast.h"
#include "query/filter/datum.h"
#include "query/filter/evaluator.h"
#include "query/filter/like.h"
#include "query/filter/temporal.h"

namespace re2 {
class RE2;
}

namespace strata::query::filter::internal {

enum class NodeOp {
  kLiteral,    // `literal` (one row)
  kColumn,     // schema column `column`, then struct children `field_path`
  kRowId,      // RowContext::row_ids
  kRowOffset,  // RowContext::row_offsets
  kNot,
  kNegate,
  kAnd,
  kOr,
  kCompare,  // children[0] <compare> children[1], operands read as kinds[0] / kinds[1]
  kArith,    // children[0] <arith> children[1], both read as kinds[0]
  kIsNull,   // negated: IS NOT NULL
  kInSet,    // children[0] [NOT] IN constant set `in_set`, read as kinds[0]
  kLike,     // children[0] [NOT] LIKE children[1] (`like` set when the pattern is constant)
  kCast,     // CAST(children[0] AS type)
  kFunction,
};

enum class Func { kLower, kUpper, kLength, kStartsWith, kRegexpMatch, kArrayHas };

/// How an operand is read by a kernel: its values converted to one C type.
enum class Kind : uint8_t {
  kInt64,     // ints (uint64 checked), bool as 0/1
  kUInt64,    // unsigned ints, non-negative int literals
  kFloat64,   // any number
  kTemporal,  // date32 / date64 / timestamp as int64 in `scale`
  kString,    // utf8 / large_utf8 bytes
};

/// Constant right-hand side of IN, converted to the operand kind.
struct InSet {
  std::unordered_set<int64_t> i64;
  std::unordered_set<uint64_t> u64;
  std::unordered_set<double> f64;
  std::unordered_set<std::string> str;
  bool has_null = false;
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  NodeOp op = NodeOp::kLiteral;
  arrow::DataTypePtr type;  // result type
  ExprPtr expr;             // source (error messages)
  std::vector<NodePtr> children;
  arrow::ArrayDataPtr literal;  // kLiteral: one row of `type`
  int column = -1;              // kColumn: schema index
  std::vector<int> field_path;  // kColumn: struct child indices below the column
  CompareOp compare = CompareOp::kEq;
  ArithOp arith = ArithOp::kAdd;
  bool negated = false;
  Kind kinds[2] = {Kind::kInt64, Kind::kInt64};
  Scale scale = Scale::kDay;  // kTemporal operands
  Func func = Func::kLower;
  std::shared_ptr<const InSet> in_set;
  std::shared_ptr<const LikePattern> like;
  std::shared_ptr<const re2::RE2> regex;
};

/// Inputs of one evaluation: the batch (nullptr while folding constants at bind), the hidden
/// columns and the row count (1 while folding).
struct EvalContext {
  const arrow::RecordBatch* batch = nullptr;
  const RowContext* rows = nullptr;
  int64_t n = 0;
};

/// Evaluates `node` over the context's rows: a scalar when every input is a scalar.
Result<Datum> EvalNode(const Node& node, const EvalContext& ctx);

/// The values of `a` (any length) as `kind`: an array of int64 / uint64 / float64 with a's
/// validity; for kTemporal int64 in `scale`. Zero-copy when the physical values already are.
/// Errors: Invalid when a uint64 value passes int64 (names `what`).
Result<arrow::ArrayDataPtr> ToKind(const arrow::ArrayDataPtr& a, Kind kind, Scale scale,
                                   const std::string& what);

/// kFunction and kLike nodes (functions.cc).
Result<Datum> EvalFunction(const Node& node, std::vector<Datum> args, const EvalContext& ctx);
Result<Datum> EvalLike(const Node& node, const Datum& text, const Datum& pattern,
                       const EvalContext& ctx);

/// Whether CastArray supports `from` -> `to` (cast.cc).
bool CanCast(const arrow::DataType& from, const arrow::DataType& to);

/// The bound tree plus what BoundExpr reports.
class BoundExprImpl final : public BoundExpr {
 public:
  BoundExprImpl(NodePtr root, ExprPtr expr, std::vector<int> columns,
                std::vector<arrow::DataTypePtr> column_types, bool row_id, bool row_offset)
      : root_(std::move(root)),
        expr_(std::move(expr)),
        columns_(std::move(columns)),
        column_types_(std::move(column_types)),
        row_id_(row_id),
        row_offset_(row_offset) {}
  const arrow::DataTypePtr& type() const override { return root_->type; }
  const ExprPtr& expr() const override { return expr_; }
  bool uses_row_id() const override { return row_id_; }
  bool uses_row_offset() const override { return row_offset_; }
  const std::vector<int>& columns() const override { return columns_; }
  const Node& root() const { return *root_; }
  /// Bound type of columns()[i].
  const std::vector<arrow::DataTypePtr>& column_types() const { return column_types_; }

 private:
  NodePtr root_;
  ExprPtr expr_;
  std::vector<int> columns_;
  std::vector<arrow::DataTypePtr> column_types_;
  bool row_id_;
  bool row_offset_;
};

}  // namespace strata::query::filter::internal
