// Bind: resolves columns, checks types and builds the bound tree evaluator.cc runs
// (rules in evaluator.h). Subtrees without column references are folded into literals here.
// This file: literals, columns, folding and the per-expression dispatch; the operators are
// bound in binder_operators.cc, CAST and function calls in binder_calls.cc.
#include <set>

#include "arrow/builder.h"
#include "common/strings.h"
#include "query/filter/binder_internal.h"
#include "query/filter/bound_expr_internal.h"
#include "query/filter/evaluator.h"
#include "query/filter/parser.h"

namespace strata::query::filter {

using arrow::DataType;
using arrow::DataTypePtr;
using arrow::TypeId;

namespace internal {
namespace {

Result<arrow::ArrayDataPtr> LiteralArray(const Literal& lit) {
  switch (lit.kind) {
    case Literal::Kind::kNull:
      return MakeNullArray(arrow::null(), 1);
    default:
      break;
  }
  DataTypePtr type;
  switch (lit.kind) {
    case Literal::Kind::kBool:
      type = arrow::boolean();
      break;
    case Literal::Kind::kInt:
      type = arrow::int64();
      break;
    case Literal::Kind::kFloat:
      type = arrow::float64();
      break;
    case Literal::Kind::kString:
      type = arrow::utf8();
      break;
    case Literal::Kind::kDate:
      type = arrow::date32();
      break;
    default:
      type = arrow::timestamp(arrow::TimeUnit::kMicro);
      break;
  }
  arrow::ArrayBuilder b(type);
  switch (lit.kind) {
    case Literal::Kind::kBool:
      STRATA_RETURN_IF_ERROR(b.AppendBool(lit.bool_value));
      break;
    case Literal::Kind::kFloat:
      STRATA_RETURN_IF_ERROR(b.AppendDouble(lit.float_value));
      break;
    case Literal::Kind::kString:
      STRATA_RETURN_IF_ERROR(b.AppendBytes(lit.string_value));
      break;
    default:
      STRATA_RETURN_IF_ERROR(b.AppendInt(lit.int_value));
      break;
  }
  return b.Finish();
}

std::string JoinPath(const std::vector<std::string>& path) {
  std::string s;
  for (size_t i = 0; i < path.size(); ++i) s += (i ? "." : "") + path[i];
  return s;
}

std::string FieldNames(const std::vector<arrow::FieldPtr>& fields) {
  std::string s;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i == 32) return s + ", ... (" + std::to_string(fields.size()) + " in all)";
    s += (i ? ", " : "") + fields[i]->name;
  }
  return s.empty() ? "(none)" : s;
}

// Index of `name` among `fields`: exact, else the unique case-insensitive match; -1 when none,
// -2 when ambiguous.
int FindField(const std::vector<arrow::FieldPtr>& fields, const std::string& name) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i]->name == name) return static_cast<int>(i);
  }
  int found = -1;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (EqualsIgnoreCase(fields[i]->name, name)) {
      if (found >= 0) return -2;
      found = static_cast<int>(i);
    }
  }
  return found;
}

}  // namespace

std::string Binder::Describe(const Node& n) const {
  const Expr& e = *n.expr;
  if (e.kind == ExprKind::kLiteral) {
    switch (e.literal.kind) {
      case Literal::Kind::kNull:
        return "NULL";
      case Literal::Kind::kBool:
        return "boolean " + e.literal.ToString();
      case Literal::Kind::kInt:
        return "integer " + e.literal.ToString();
      case Literal::Kind::kFloat:
        return "float " + e.literal.ToString();
      case Literal::Kind::kString:
        return "string " + e.literal.ToString();
      default:
        return e.literal.ToString();
    }
  }
  if (e.kind == ExprKind::kColumn) {
    return n.type->ToString() + " column '" + JoinPath(e.path) + "'";
  }
  return n.type->ToString() + " expression '" + e.ToString() + "'";
}

Result<NodePtr> Binder::Fold(NodePtr n) const {
  for (const auto& c : n->children) {
    if (!IsLiteral(*c)) return n;
  }
  EvalContext ctx{nullptr, nullptr, 1};
  STRATA_ASSIGN_OR_RETURN(Datum d, EvalNode(*n, ctx));
  auto value = d.data;
  if (value->type->id() == TypeId::kNull && n->type->id() != TypeId::kNull) {
    value = MakeNullArray(n->type, 1);
  }
  auto lit = std::make_shared<Node>();
  lit->op = NodeOp::kLiteral;
  lit->type = n->type;
  lit->expr = n->expr;
  lit->literal = std::move(value);
  return NodePtr(lit);
}

Result<NodePtr> Binder::BindColumn(const ExprPtr& e) {
  const auto& path = e->path;
  if (path.size() == 1 && (path[0] == kRowIdName || path[0] == kRowOffsetName)) {
    auto n = std::make_shared<Node>();
    const bool id = path[0] == kRowIdName;
    n->op = id ? NodeOp::kRowId : NodeOp::kRowOffset;
    n->type = arrow::uint64();
    n->expr = e;
    (id ? row_id : row_offset) = true;
    return NodePtr(n);
  }
  const int index = FindField(schema_.fields(), path[0]);
  if (index == -2) {
    return Error(e->position, "column name '" + path[0] + "' is ambiguous (differs only in case)");
  }
  if (index < 0) {
    return Status::Invalid(options_.context + ": unknown column '" + path[0] + "' at position " +
                           std::to_string(e->position) +
                           "; columns are: " + FieldNames(schema_.fields()));
  }
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kColumn;
  n->expr = e;
  n->column = index;
  columns_.insert(index);
  DataTypePtr type = schema_.field(index)->type;
  for (size_t k = 1; k < path.size(); ++k) {
    if (type->id() != TypeId::kStruct) {
      return Error(e->position,
                   "'" + JoinPath({path.begin(), path.begin() + static_cast<long>(k)}) + "' is " +
                       type->ToString() + ", not a struct; it has no field '" + path[k] + "'");
    }
    const int child = FindField(type->children(), path[k]);
    if (child < 0) {
      return Status::Invalid(
          options_.context + ": unknown field '" + path[k] + "' of struct column '" +
          JoinPath({path.begin(), path.begin() + static_cast<long>(k)}) + "' at position " +
          std::to_string(e->position) + "; fields are: " + FieldNames(type->children()));
    }
    n->field_path.push_back(child);
    type = type->children()[static_cast<size_t>(child)]->type;
  }
  n->type = type;
  return NodePtr(n);
}

Result<NodePtr> Binder::Bind(const ExprPtr& e, int depth) {
  if (depth > 1024) return Error(e->position, "expression nested too deeply");
  switch (e->kind) {
    case ExprKind::kLiteral: {
      STRATA_ASSIGN_OR_RETURN(auto value, LiteralArray(e->literal));
      return MakeLiteral(e, std::move(value));
    }
    case ExprKind::kColumn:
      return BindColumn(e);
    case ExprKind::kNot: {
      STRATA_ASSIGN_OR_RETURN(NodePtr c, Bind(e->children[0], depth + 1));
      STRATA_ASSIGN_OR_RETURN(c, BindBoolOperand(e, c, "NOT"));
      auto n = std::make_shared<Node>();
      n->op = NodeOp::kNot;
      n->type = arrow::boolean();
      n->expr = e;
      n->children = {std::move(c)};
      return Fold(n);
    }
    case ExprKind::kNegate: {
      STRATA_ASSIGN_OR_RETURN(NodePtr c, Bind(e->children[0], depth + 1));
      const Family f = FamilyOf(*c->type);
      if (f != Family::kNumber && f != Family::kNull) {
        return Error(c->expr->position, "cannot negate " + Describe(*c) + " (it needs a number)");
      }
      auto n = std::make_shared<Node>();
      n->op = NodeOp::kNegate;
      n->expr = e;
      n->kinds[0] = c->type->is_floating() ? Kind::kFloat64 : Kind::kInt64;
      n->type = c->type->is_floating() ? arrow::float64() : arrow::int64();
      if (f == Family::kNull) return NullLiteral(e, n->type);
      n->children = {std::move(c)};
      return Fold(n);
    }
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      const char* name = e->kind == ExprKind::kAnd ? "AND" : "OR";
      STRATA_ASSIGN_OR_RETURN(NodePtr l, Bind(e->children[0], depth + 1));
      STRATA_ASSIGN_OR_RETURN(l, BindBoolOperand(e, l, name));
      STRATA_ASSIGN_OR_RETURN(NodePtr r, Bind(e->children[1], depth + 1));
      STRATA_ASSIGN_OR_RETURN(r, BindBoolOperand(e, r, name));
      auto n = std::make_shared<Node>();
      n->op = e->kind == ExprKind::kAnd ? NodeOp::kAnd : NodeOp::kOr;
      n->type = arrow::boolean();
      n->expr = e;
      n->children = {std::move(l), std::move(r)};
      return Fold(n);
    }
    case ExprKind::kCompare: {
      STRATA_ASSIGN_OR_RETURN(NodePtr l, Bind(e->children[0], depth + 1));
      STRATA_ASSIGN_OR_RETURN(NodePtr r, Bind(e->children[1], depth + 1));
      return BindCompare(e, e->compare, std::move(l), std::move(r));
    }
    case ExprKind::kArith:
      return BindArith(e);
    case ExprKind::kIsNull: {
      STRATA_ASSIGN_OR_RETURN(NodePtr c, Bind(e->children[0], depth + 1));
      auto n = std::make_shared<Node>();
      n->op = NodeOp::kIsNull;
      n->type = arrow::boolean();
      n->expr = e;
      n->negated = e->negated;
      n->children = {std::move(c)};
      return Fold(n);
    }
    case ExprKind::kIn:
      return BindIn(e, depth);
    case ExprKind::kBetween: {
      STRATA_ASSIGN_OR_RETURN(NodePtr x, Bind(e->children[0], depth + 1));
      STRATA_ASSIGN_OR_RETURN(NodePtr lo, Bind(e->children[1], depth + 1));
      STRATA_ASSIGN_OR_RETURN(NodePtr hi, Bind(e->children[2], depth + 1));
      STRATA_ASSIGN_OR_RETURN(NodePtr ge, BindCompare(e, CompareOp::kGe, x, lo));
      STRATA_ASSIGN_OR_RETURN(NodePtr le, BindCompare(e, CompareOp::kLe, x, hi));
      auto n = std::make_shared<Node>();
      n->op = NodeOp::kAnd;
      n->type = arrow::boolean();
      n->expr = e;
      n->children = {std::move(ge), std::move(le)};
      STRATA_ASSIGN_OR_RETURN(NodePtr both, Fold(n));
      if (!e->negated) return both;
      auto no = std::make_shared<Node>();
      no->op = NodeOp::kNot;
      no->type = arrow::boolean();
      no->expr = e;
      no->children = {std::move(both)};
      return Fold(no);
    }
    case ExprKind::kLike:
      return BindLike(e, depth);
    case ExprKind::kCast:
      return BindCast(e, depth);
    case ExprKind::kCall:
      return BindCall(e, depth);
  }
  return Error(e->position, "unsupported expression");
}

}  // namespace internal

Result<BoundExprPtr> Bind(const ExprPtr& expr, const arrow::Schema& schema,
                          const BindOptions& options) {
  if (expr == nullptr) return Status::Invalid(options.context + ": no expression");
  internal::Binder binder(schema, options);
  STRATA_ASSIGN_OR_RETURN(internal::NodePtr root, binder.Bind(expr, 0));
  if (options.require_bool) {
    if (root->type->id() == TypeId::kNull) {
      root = internal::NullLiteral(expr, arrow::boolean());
    } else if (root->type->id() != TypeId::kBool) {
      return Status::Invalid(options.context + ": WHERE clause must be boolean, '" +
                             expr->ToString() + "' is " + root->type->ToString());
    }
  }
  return BoundExprPtr(std::make_shared<internal::BoundExprImpl>(
      std::move(root), expr, binder.Columns(), binder.ColumnTypes(), binder.row_id,
      binder.row_offset));
}

Result<BoundExprPtr> ParseAndBind(std::string_view sql, const arrow::Schema& schema,
                                  const BindOptions& options) {
  ParseOptions popts;
  popts.context = options.context;
  STRATA_ASSIGN_OR_RETURN(ExprPtr expr, ParseExpression(sql, popts));
  return Bind(expr, schema, options);
}

}  // namespace strata::query::filter
