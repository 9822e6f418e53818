// Binding of CAST (the type names it accepts) and of function calls (the function table,
// arities and argument types) (Binder, binder_internal.h).
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "query/filter/binder_internal.h"

namespace strata::query::filter {

using arrow::DataType;
using arrow::DataTypePtr;
using arrow::TypeId;

namespace internal {
namespace {

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

}  // namespace

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

}  // namespace internal
}  // namespace strata::query::filter
