// Bind: resolves columns, checks types and builds the bound tree evaluator.cc runs
// (rules in evaluator.h). Subtrees without column references are folded into literals here.
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <set>

#include "arrow/builder.h"
#include "common/strings.h"
#include "query/filter/bound_expr_internal.h"
#include "query/filter/evaluator.h"
#include "query/filter/parser.h"

namespace strata::query::filter {

using arrow::DataType;
using arrow::DataTypePtr;
using arrow::TypeId;

namespace internal {
namespace {

enum class Family { kNull, kNumber, kBool, kString, kTemporal, kOther };

Family FamilyOf(const DataType& t) {
  if (t.id() == TypeId::kNull) return Family::kNull;
  if (t.is_numeric()) return Family::kNumber;
  if (t.id() == TypeId::kBool) return Family::kBool;
  if (IsString(t)) return Family::kString;
  if (IsTemporal(t)) return Family::kTemporal;
  return Family::kOther;
}

bool IsLiteral(const Node& n) { return n.op == NodeOp::kLiteral; }

bool IsNullNode(const Node& n) { return n.type->id() == TypeId::kNull; }

// A non-negative int64 literal (read as uint64 next to a uint64 operand).
bool IsNonNegativeIntLiteral(const Node& n) {
  return IsLiteral(n) && n.type->id() == TypeId::kInt64 && arrow::Array(n.literal).IsValid(0) &&
         arrow::Array(n.literal).Value<int64_t>(0) >= 0;
}

NodePtr MakeLiteral(const ExprPtr& expr, arrow::ArrayDataPtr value) {
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kLiteral;
  n->type = value->type;
  n->expr = expr;
  n->literal = std::move(value);
  return n;
}

NodePtr NullLiteral(const ExprPtr& expr, const DataTypePtr& type) {
  return MakeLiteral(expr, MakeNullArray(type, 1));
}

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

struct CastName {
  const char* name;
  DataTypePtr (*make)();
};

DataTypePtr TimestampUs() { return arrow::timestamp(arrow::TimeUnit::kMicro); }

const CastName kCastNames[] = {
    {"tinyint", arrow::int8},  {"smallint", arrow::int16}, {"int", arrow::int32},
    {"integer", arrow::int32}, {"bigint", arrow::int64},   {"float", arrow::float32},
    {"real", arrow::float32},  {"double", arrow::float64}, {"varchar", arrow::utf8},
    {"string", arrow::utf8},   {"text", arrow::utf8},      {"boolean", arrow::boolean},
    {"bool", arrow::boolean},  {"date", arrow::date32},    {"timestamp", TimestampUs},
};

class Binder {
 public:
  Binder(const arrow::Schema& schema, const BindOptions& options)
      : schema_(schema), options_(options) {}

  Result<NodePtr> Bind(const ExprPtr& e, int depth);

  std::vector<int> Columns() const { return {columns_.begin(), columns_.end()}; }
  std::vector<DataTypePtr> ColumnTypes() const {
    std::vector<DataTypePtr> out;
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

Result<NodePtr> Binder::BindCast(const ExprPtr& e, int depth) {
  STRATA_ASSIGN_OR_RETURN(NodePtr x, Bind(e->children[0], depth + 1));
  DataTypePtr target;
  std::string names;
  for (const CastName& c : kCastNames) {
    if (e->cast_type == c.name) target = c.make();
    names += std::string(names.empty() ? "" : ", ") + c.name;
  }
  if (target == nullptr) {
    return Error(e->position, "unknown type '" + e->cast_type + "' in CAST; types are: " + names);
  }
  if (!CanCast(*x->type, *target)) {
    return Unsupported(x->expr->position,
                       "cannot cast " + Describe(*x) + " to " + target->ToString());
  }
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kCast;
  n->type = target;
  n->expr = e;
  n->children = {std::move(x)};
  return Fold(n);
}

Result<NodePtr> Binder::BindCall(const ExprPtr& e, int depth) {
  static const std::map<std::string, std::pair<Func, size_t>> kFunctions = {
      {"lower", {Func::kLower, 1}},
      {"upper", {Func::kUpper, 1}},
      {"length", {Func::kLength, 1}},
      {"char_length", {Func::kLength, 1}},
      {"character_length", {Func::kLength, 1}},
      {"starts_with", {Func::kStartsWith, 2}},
      {"regexp_match", {Func::kRegexpMatch, 2}},
      {"array_has", {Func::kArrayHas, 2}},
      {"array_contains", {Func::kArrayHas, 2}},
  };
  const auto it = kFunctions.find(e->function);
  if (it == kFunctions.end()) {
    std::string names;
    for (const auto& [name, _] : kFunctions) names += (names.empty() ? "" : ", ") + name;
    return Status::Invalid(options_.context + ": unknown function '" + e->function +
                           "' at position " + std::to_string(e->position) +
                           "; functions are: " + names);
  }
  const auto [func, arity] = it->second;
  if (e->children.size() != arity) {
    return Error(e->position, "function '" + e->function + "' takes " + std::to_string(arity) +
                                  (arity == 1 ? " argument" : " arguments") + ", got " +
                                  std::to_string(e->children.size()));
  }
  std::vector<NodePtr> args;
  for (const auto& c : e->children) {
    STRATA_ASSIGN_OR_RETURN(NodePtr a, Bind(c, depth + 1));
    args.push_back(std::move(a));
  }
  auto n = std::make_shared<Node>();
  n->op = NodeOp::kFunction;
  n->expr = e;
  n->func = func;
  auto need_string = [&](size_t i) -> Status {
    const Family f = FamilyOf(*args[i]->type);
    if (f == Family::kString || f == Family::kNull) return Status::OK();
    return Error(
        args[i]->expr->position,
        "function '" + e->function + "' needs a string argument, got " + Describe(*args[i]));
  };
  bool any_null = false;
  for (const auto& a : args) any_null |= IsNullNode(*a);
  switch (func) {
    case Func::kLower:
    case Func::kUpper:
      STRATA_RETURN_IF_ERROR(need_string(0));
      n->type = IsNullNode(*args[0]) ? arrow::utf8() : args[0]->type;
      break;
    case Func::kLength:
      STRATA_RETURN_IF_ERROR(need_string(0));
      n->type = arrow::int64();
      break;
    case Func::kStartsWith:
      STRATA_RETURN_IF_ERROR(need_string(0));
      STRATA_RETURN_IF_ERROR(need_string(1));
      n->type = arrow::boolean();
      break;
    case Func::kRegexpMatch: {
      STRATA_RETURN_IF_ERROR(need_string(0));
      STRATA_RETURN_IF_ERROR(need_string(1));
      n->type = arrow::boolean();
      if (any_null) break;
      if (!IsLiteral(*args[1])) {
        return Error(args[1]->expr->position,
                     "regexp_match needs a constant pattern, got " + Describe(*args[1]));
      }
      const std::string_view pattern = StringReader(*args[1]->literal)(0);
      re2::RE2::Options opts;
      opts.set_log_errors(false);
      auto re = std::make_shared<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), opts);
      if (!re->ok()) {
        return Error(args[1]->expr->position, "invalid regular expression " +
                                                  args[1]->expr->ToString() + ": " + re->error());
      }
      n->regex = std::move(re);
      break;
    }
    case Func::kArrayHas: {
      n->type = arrow::boolean();
      const DataType& lt = *args[0]->type;
      if (lt.id() == TypeId::kNull) break;
      if (!lt.is_list_like()) {
        return Error(args[0]->expr->position,
                     "function '" + e->function + "' needs a list, got " + Describe(*args[0]));
      }
      const DataTypePtr& et = lt.value_type();
      const Family fe = FamilyOf(*et), fv = FamilyOf(*args[1]->type);
      if (fv == Family::kNull) break;
      if (fe == Family::kOther || fe == Family::kNull || fe != fv) {
        return Error(args[1]->expr->position, "function '" + e->function + "' cannot look for " +
                                                  Describe(*args[1]) + " in " + Describe(*args[0]));
      }
      switch (fe) {
        case Family::kNumber:
          if (et->is_floating() || args[1]->type->is_floating()) {
            n->kinds[0] = Kind::kFloat64;
          } else if (et->id() == TypeId::kUInt64 && (args[1]->type->id() == TypeId::kUInt64 ||
                                                     IsNonNegativeIntLiteral(*args[1]))) {
            n->kinds[0] = Kind::kUInt64;
          } else {
            n->kinds[0] = Kind::kInt64;
          }
          break;
        case Family::kTemporal:
          n->kinds[0] = Kind::kTemporal;
          n->scale = std::max(ScaleOf(*et), ScaleOf(*args[1]->type));
          break;
        case Family::kString:
          n->kinds[0] = Kind::kString;
          break;
        default:
          n->kinds[0] = Kind::kInt64;
          break;
      }
      break;
    }
  }
  if (any_null) return NullLiteral(e, n->type);
  n->children = std::move(args);
  return Fold(n);
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

}  // namespace
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
