#include "query/filter/ast.h"

#include <charconv>
#include <initializer_list>
#include <string_view>

#include "query/filter/lexer.h"
#include "query/filter/temporal.h"

namespace strata::query::filter {
namespace {

std::string Quote(std::string_view s, char quote) {
  std::string out(1, quote);
  for (char c : s) {
    out.push_back(c);
    if (c == quote) out.push_back(c);
  }
  out.push_back(quote);
  return out;
}

// Words the parser reads as keywords where a name could stand; a name spelled like one is
// written quoted so the text parses back to a column.
bool IsReservedWord(std::string_view w) {
  static constexpr std::string_view kWords[] = {"AND",  "OR",      "NOT",  "IN",       "IS",
                                                "NULL", "BETWEEN", "LIKE", "TRUE",     "FALSE",
                                                "CAST", "AS",      "DATE", "TIMESTAMP"};
  for (std::string_view k : kWords) {
    if (IsKeyword(w, k)) return true;
  }
  return false;
}

std::string NameText(const std::string& name) {
  bool plain = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      plain = false;
      break;
    }
  }
  if (plain && !IsReservedWord(name)) return name;
  return Quote(name, '`');
}

std::string FloatText(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  std::string out(buf, r.ptr);
  if (out == "inf" || out == "-inf" || out == "nan" || out == "-nan") {
    // Not produced by the parser; written as an expression that reads back as such a value.
    return out[0] == '-' ? "CAST('-" + out.substr(1) + "' AS double)"
                         : "CAST('" + out + "' AS double)";
  }
  // A float must read back as a float: "2e+20" and "2.5" do, "3" gets ".0".
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

// Concatenation by appends (GCC 12 at -O3 reports a false -Wrestrict for `"(" + string`).
std::string Cat(std::initializer_list<std::string_view> parts) {
  size_t n = 0;
  for (std::string_view p : parts) n += p.size();
  std::string out;
  out.reserve(n);
  for (std::string_view p : parts) out.append(p);
  return out;
}

std::string ChildText(const Expr& e, size_t i) {
  if (i >= e.children.size() || e.children[i] == nullptr) return "<missing>";
  return e.children[i]->ToString();
}

}  // namespace

const char* CompareOpName(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return "=";
    case CompareOp::kNe:
      return "<>";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
  }
  return "?";
}

const char* ArithOpName(ArithOp op) {
  switch (op) {
    case ArithOp::kAdd:
      return "+";
    case ArithOp::kSub:
      return "-";
    case ArithOp::kMul:
      return "*";
    case ArithOp::kDiv:
      return "/";
    case ArithOp::kMod:
      return "%";
  }
  return "?";
}

std::string Literal::ToString() const {
  switch (kind) {
    case Kind::kNull:
      return "NULL";
    case Kind::kBool:
      return bool_value ? "TRUE" : "FALSE";
    case Kind::kInt:
      return std::to_string(int_value);
    case Kind::kFloat:
      return FloatText(float_value);
    case Kind::kString:
      return Quote(string_value, '\'');
    case Kind::kDate:
      return "DATE '" + internal::FormatDate(int_value) + "'";
    case Kind::kTimestamp:
      return "TIMESTAMP '" + internal::FormatTimestamp(int_value, arrow::TimeUnit::kMicro) + "'";
  }
  return "?";
}

std::string Expr::ToString() const {
  switch (kind) {
    case ExprKind::kLiteral:
      return literal.ToString();
    case ExprKind::kColumn: {
      std::string out;
      for (size_t i = 0; i < path.size(); ++i) {
        if (i > 0) out.push_back('.');
        out += NameText(path[i]);
      }
      return out;
    }
    case ExprKind::kNot:
      return "(NOT " + ChildText(*this, 0) + ")";
    case ExprKind::kNegate: {
      std::string c = ChildText(*this, 0);
      // "- -x", never "--x" (which SQL dialects with comments read as one).
      return Cat({(!c.empty() && c[0] == '-') ? "- " : "-", c});
    }
    case ExprKind::kAnd:
      return Cat({"(", ChildText(*this, 0), " AND ", ChildText(*this, 1), ")"});
    case ExprKind::kOr:
      return Cat({"(", ChildText(*this, 0), " OR ", ChildText(*this, 1), ")"});
    case ExprKind::kCompare:
      return Cat(
          {"(", ChildText(*this, 0), " ", CompareOpName(compare), " ", ChildText(*this, 1), ")"});
    case ExprKind::kArith:
      return Cat(
          {"(", ChildText(*this, 0), " ", ArithOpName(arith), " ", ChildText(*this, 1), ")"});
    case ExprKind::kIsNull:
      return Cat({"(", ChildText(*this, 0), negated ? " IS NOT NULL)" : " IS NULL)"});
    case ExprKind::kIn: {
      std::string out = Cat({"(", ChildText(*this, 0), negated ? " NOT IN (" : " IN ("});
      for (size_t i = 1; i < children.size(); ++i) {
        if (i > 1) out += ", ";
        out += ChildText(*this, i);
      }
      out += "))";
      return out;
    }
    case ExprKind::kBetween:
      return Cat({"(", ChildText(*this, 0), negated ? " NOT BETWEEN " : " BETWEEN ",
                  ChildText(*this, 1), " AND ", ChildText(*this, 2), ")"});
    case ExprKind::kLike:
      return Cat(
          {"(", ChildText(*this, 0), negated ? " NOT LIKE " : " LIKE ", ChildText(*this, 1), ")"});
    case ExprKind::kCast:
      return Cat({"CAST(", ChildText(*this, 0), " AS ", cast_type, ")"});
    case ExprKind::kCall: {
      std::string out = Cat({function, "("});
      for (size_t i = 0; i < children.size(); ++i) {
        if (i > 0) out += ", ";
        out += ChildText(*this, i);
      }
      out += ")";
      return out;
    }
  }
  return "?";
}

}  // namespace strata::query::filter
