// Binding of the operators: comparisons (and temporal string literals), arithmetic, boolean
// operands, IN (a constant set or an OR of equalities) and LIKE (Binder, binder_internal.h).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/builder.h"
#include "query/filter/binder_internal.h"

namespace strata::query::filter {

using arrow::DataTypePtr;
using arrow::TypeId;

namespace internal {

Result<NodePtr> Binder::StringToTemporal(const NodePtr& s, const Node& other) const {
  const std::string_view text = StringReader(*s->literal)(0);
  auto us = ParseTimestamp(text, arrow::TimeUnit::kMicro);
  if (!us) {
    return Error(s->expr->position, "cannot compare " + Describe(other) + " with " + Describe(*s) +
                                        " (not a date 'YYYY-MM-DD' or timestamp "
                                        "'YYYY-MM-DD hh:mm:ss[.ffffff]')");
  }
  arrow::ArrayBuilder b(arrow::timestamp(arrow::TimeUnit::kMicro));
  STRATA_RETURN_IF_ERROR(b.AppendInt(*us));
  STRATA_ASSIGN_OR_RETURN(auto value, b.Finish());
  return MakeLiteral(s->expr, std::move(value));
}

Result<NodePtr> Binder::BindCompare(const ExprPtr& e, CompareOp op, NodePtr l, NodePtr r) {
  if (IsNullNode(*l) || IsNullNode(*r)) return NullLiteral(e, arrow::boolean());
  Family fl = FamilyOf(*l->type), fr = FamilyOf(*r->type);
  if (fl == Family::kTemporal && fr == Family::kString && IsLiteral(*r)) {
    STRATA_ASSIGN_OR_RETURN(r, StringToTemporal(r, *l));
    fr = Family::kTemporal;
  } else if (fr == Family::kTemporal && fl == Family::kString && IsLiteral(*l)) {
    STRATA_ASSIGN_OR_RETURN(l, StringToTemporal(l, *r));
    fl = Family::kTemporal;
  }
  const std::string op_name = CompareOpName(op);
  if (fl == Family::kOther) {
    return Unsupported(l->expr->position, "cannot compare " + Describe(*l) + " with '" + op_name +
                                              "' (comparisons read numbers, strings, booleans, "
                                              "dates and timestamps)");
  }
  if (fr == Family::kOther) {
    return Unsupported(r->expr->position, "cannot compare " + Describe(*r) + " with '" + op_name +
                                              "' (comparisons read numbers, strings, booleans, "
                                              "dates and timestamps)");
  }
  if (fl != fr) {
    return Error(r->expr->position, "cannot compare " + Describe(*l) + " with " + Describe(*r));
  }
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kCompare;
  n->type = arrow::boolean();
  n->expr = e;
  n->compare = op;
  switch (fl) {
    case Family::kNumber: {
      if (l->type->is_floating() || r->type->is_floating()) {
        n->kinds[0] = n->kinds[1] = Kind::kFloat64;
      } else {
        const bool lu = l->type->id() == TypeId::kUInt64, ru = r->type->id() == TypeId::kUInt64;
        n->kinds[0] = lu || (ru && IsNonNegativeIntLiteral(*l)) ? Kind::kUInt64 : Kind::kInt64;
        n->kinds[1] = ru || (lu && IsNonNegativeIntLiteral(*r)) ? Kind::kUInt64 : Kind::kInt64;
      }
      break;
    }
    case Family::kTemporal:
      n->kinds[0] = n->kinds[1] = Kind::kTemporal;
      n->scale = std::max(ScaleOf(*l->type), ScaleOf(*r->type));
      break;
    case Family::kString:
      n->kinds[0] = n->kinds[1] = Kind::kString;
      break;
    default:  // bool
      n->kinds[0] = n->kinds[1] = Kind::kInt64;
      break;
  }
  n->children = {std::move(l), std::move(r)};
  return Fold(n);
}

Result<NodePtr> Binder::BindArith(const ExprPtr& e) {
  STRATA_ASSIGN_OR_RETURN(NodePtr l, Bind(e->children[0], 0));
  STRATA_ASSIGN_OR_RETURN(NodePtr r, Bind(e->children[1], 0));
  const std::string op = ArithOpName(e->arith);
  for (const NodePtr* side : {&l, &r}) {
    const Family f = FamilyOf(*(*side)->type);
    if (f != Family::kNumber && f != Family::kNull) {
      return Error((*side)->expr->position,
                   "cannot apply '" + op + "' to " + Describe(**side) + " (it needs numbers)");
    }
  }
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kArith;
  n->expr = e;
  n->arith = e->arith;
  if (l->type->is_floating() || r->type->is_floating()) {
    n->kinds[0] = Kind::kFloat64;
    n->type = arrow::float64();
  } else {
    const bool lu = l->type->id() == TypeId::kUInt64 || IsNonNegativeIntLiteral(*l);
    const bool ru = r->type->id() == TypeId::kUInt64 || IsNonNegativeIntLiteral(*r);
    const bool any_u = l->type->id() == TypeId::kUInt64 || r->type->id() == TypeId::kUInt64;
    n->kinds[0] = lu && ru && any_u ? Kind::kUInt64 : Kind::kInt64;
    n->type = n->kinds[0] == Kind::kUInt64 ? arrow::uint64() : arrow::int64();
  }
  if (IsNullNode(*l) || IsNullNode(*r)) return NullLiteral(e, n->type);
  n->children = {std::move(l), std::move(r)};
  return Fold(n);
}

Result<NodePtr> Binder::BindBoolOperand(const ExprPtr& parent, const NodePtr& c, const char* op) {
  if (IsNullNode(*c)) return NullLiteral(c->expr, arrow::boolean());
  if (c->type->id() != TypeId::kBool) {
    (void)parent;
    return Error(c->expr->position,
                 std::string(op) + " needs a boolean operand, got " + Describe(*c));
  }
  return c;
}

Result<NodePtr> Binder::BindIn(const ExprPtr& e, int depth) {
  STRATA_ASSIGN_OR_RETURN(NodePtr x, Bind(e->children[0], depth + 1));
  std::vector<NodePtr> items;
  bool all_literal = true;
  for (size_t i = 1; i < e->children.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(NodePtr item, Bind(e->children[i], depth + 1));
    all_literal &= IsLiteral(*item);
    items.push_back(std::move(item));
  }
  if (!all_literal || IsLiteral(*x)) {
    // General form: OR of equalities (three-valued logic gives IN's NULL rules).
    NodePtr acc;
    for (const NodePtr& item : items) {
      STRATA_ASSIGN_OR_RETURN(NodePtr eq, BindCompare(e, CompareOp::kEq, x, item));
      if (acc == nullptr) {
        acc = eq;
        continue;
      }
      auto o = std::make_shared<Node>();
      o->op = NodeOp::kOr;
      o->type = arrow::boolean();
      o->expr = e;
      o->children = {acc, eq};
      STRATA_ASSIGN_OR_RETURN(acc, Fold(o));
    }
    if (!e->negated) return acc;
    auto no = std::make_shared<Node>();
    no->op = NodeOp::kNot;
    no->type = arrow::boolean();
    no->expr = e;
    no->children = {acc};
    return Fold(no);
  }
  if (IsNullNode(*x)) return NullLiteral(e, arrow::boolean());
  // Type each item as `x = item` would be, then convert the items to x's kind.
  auto set = std::make_shared<InSet>();
  Kind kind = Kind::kInt64;
  Scale scale = Scale::kDay;
  bool any_float = x->type->is_floating();
  std::vector<NodePtr> typed;
  for (NodePtr& item : items) {
    if (IsNullNode(*item)) {
      set->has_null = true;
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(NodePtr cmp, BindCompare(e, CompareOp::kEq, x, item));
    if (IsLiteral(*cmp)) continue;  // cannot happen: x is not a literal
    kind = cmp->kinds[0];
    any_float |= cmp->kinds[0] == Kind::kFloat64;
    if (kind == Kind::kTemporal) scale = std::max(scale, cmp->scale);
    typed.push_back(cmp->children[1]);
  }
  if (typed.empty() && !set->has_null) return Status::Internal("filter: empty IN list");
  // Only NULL items: `x [NOT] IN (NULL, ...)` is NULL for every row (and the items give no
  // type to compare x as: a string x was read as a number).
  if (typed.empty()) return NullLiteral(e, arrow::boolean());
  if (any_float && FamilyOf(*x->type) == Family::kNumber) kind = Kind::kFloat64;
  if (FamilyOf(*x->type) == Family::kNumber && !any_float) {
    kind = x->type->id() == TypeId::kUInt64 ? Kind::kUInt64 : Kind::kInt64;
  }
  if (FamilyOf(*x->type) == Family::kTemporal) scale = std::max(scale, ScaleOf(*x->type));
  const std::string what = e->ToString();  // once: per item it made long IN lists quadratic
  for (const NodePtr& item : typed) {
    if (kind == Kind::kUInt64 && !IsNonNegativeIntLiteral(*item)) continue;  // never equal
    STRATA_ASSIGN_OR_RETURN(auto v, ToKind(item->literal, kind, scale, what));
    arrow::Array a(v);
    switch (kind) {
      case Kind::kString:
        set->str.emplace(StringReader(*v)(0));
        break;
      case Kind::kFloat64:
        set->f64.insert(a.Value<double>(0));
        break;
      case Kind::kUInt64:
        set->u64.insert(a.Value<uint64_t>(0));
        break;
      default:
        set->i64.insert(a.Value<int64_t>(0));
        break;
    }
  }
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kInSet;
  n->type = arrow::boolean();
  n->expr = e;
  n->negated = e->negated;
  n->kinds[0] = kind;
  n->scale = scale;
  n->in_set = std::move(set);
  n->children = {std::move(x)};
  return NodePtr(n);
}

Result<NodePtr> Binder::BindLike(const ExprPtr& e, int depth) {
  STRATA_ASSIGN_OR_RETURN(NodePtr t, Bind(e->children[0], depth + 1));
  STRATA_ASSIGN_OR_RETURN(NodePtr p, Bind(e->children[1], depth + 1));
  for (const NodePtr* side : {&t, &p}) {
    const Family f = FamilyOf(*(*side)->type);
    if (f != Family::kString && f != Family::kNull) {
      return Error((*side)->expr->position, "LIKE needs strings, got " + Describe(**side));
    }
  }
  if (IsNullNode(*t) || IsNullNode(*p)) return NullLiteral(e, arrow::boolean());
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kLike;
  n->type = arrow::boolean();
  n->expr = e;
  n->negated = e->negated;
  if (IsLiteral(*p)) n->like = std::make_shared<LikePattern>(StringReader(*p->literal)(0));
  n->children = {std::move(t), std::move(p)};
  return Fold(n);
}

}  // namespace internal
}  // namespace strata::query::filter
