// Internal to the filter binder: the Binder class and the node helpers shared by binder.cc
// (columns, folding and the per-expression dispatch), binder_operators.cc (comparisons,
// arithmetic, boolean operands, IN and LIKE) and binder_calls.cc (CAST and function calls).
// Not part of the public API (evaluator.h is).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "query/filter/bound_expr_internal.h"
#include "query/filter/evaluator.h"

namespace strata::query::filter::internal {

enum class Family { kNull, kNumber, kBool, kString, kTemporal, kOther };

inline Family FamilyOf(const arrow::DataType& t) {
  if (t.id() == arrow::TypeId::kNull) return Family::kNull;
  if (t.is_numeric()) return Family::kNumber;
  if (t.id() == arrow::TypeId::kBool) return Family::kBool;
  if (IsString(t)) return Family::kString;
  if (IsTemporal(t)) return Family::kTemporal;
  return Family::kOther;
}

inline bool IsLiteral(const Node& n) { return n.op == NodeOp::kLiteral; }

inline bool IsNullNode(const Node& n) { return n.type->id() == arrow::TypeId::kNull; }

// A non-negative int64 literal (read as uint64 next to a uint64 operand).
inline bool IsNonNegativeIntLiteral(const Node& n) {
  return IsLiteral(n) && n.type->id() == arrow::TypeId::kInt64 &&
         arrow::Array(n.literal).IsValid(0) && arrow::Array(n.literal).Value<int64_t>(0) >= 0;
}

inline NodePtr MakeLiteral(const ExprPtr& expr, arrow::ArrayDataPtr value) {
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kLiteral;
  n->type = value->type;
  n->expr = expr;
  n->literal = std::move(value);
  return n;
}

inline NodePtr NullLiteral(const ExprPtr& expr, const arrow::DataTypePtr& type) {
  return MakeLiteral(expr, MakeNullArray(type, 1));
}

class Binder {
 public:
  Binder(const arrow::Schema& schema, const BindOptions& options)
      : schema_(schema), options_(options) {}

  Result<NodePtr> Bind(const ExprPtr& e, int depth);

  std::vector<int> Columns() const { return {columns_.begin(), columns_.end()}; }
  std::vector<arrow::DataTypePtr> ColumnTypes() const {
    std::vector<arrow::DataTypePtr> out;
    for (int c : columns_) out.push_back(schema_.field(c)->type);
    return out;
  }
  bool row_id = false;
  bool row_offset = false;

  Status Error(size_t pos, const std::string& msg) const {
    return Status::Invalid(options_.context + ": " + msg + " at position " + std::to_string(pos));
  }
  Status Unsupported(size_t pos, const std::string& msg) const {
    return Status::NotSupported(options_.context + ": " + msg + " at position " +
                                std::to_string(pos));
  }

 private:
  std::string Describe(const Node& n) const;
  Result<NodePtr> BindColumn(const ExprPtr& e);
  Result<NodePtr> BindCompare(const ExprPtr& e, CompareOp op, NodePtr l, NodePtr r);
  Result<NodePtr> BindArith(const ExprPtr& e);
  Result<NodePtr> BindBoolOperand(const ExprPtr& parent, const NodePtr& n, const char* op);
  Result<NodePtr> BindIn(const ExprPtr& e, int depth);
  Result<NodePtr> BindLike(const ExprPtr& e, int depth);
  Result<NodePtr> BindCast(const ExprPtr& e, int depth);
  Result<NodePtr> BindCall(const ExprPtr& e, int depth);
  // Replaces a node whose inputs are all literals by its value.
  Result<NodePtr> Fold(NodePtr n) const;
  // Turns a string literal next to a temporal operand into a timestamp literal.
  Result<NodePtr> StringToTemporal(const NodePtr& s, const Node& other) const;

  const arrow::Schema& schema_;
  const BindOptions& options_;
  std::set<int> columns_;
};

}  // namespace strata::query::filter::internal
