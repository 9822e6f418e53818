#include "query/filter/ast.h"

#include <charconv>
#include <cstdio>
#include <initializer_list>
#include <string_view>

#include "query/filter/lexer.h"

namespace strata::query::filter {
namespace {

// Civil date of a day count since 1970-01-01 in the proleptic Gregorian calendar (the
// era-based algorithm of H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;                                       // [0, 146096]
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const int64_t mp = (5 * doy + 2) / 153;                                     // [0, 11]
  *d = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0);
}

std::string DateText(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  return buf;
}

std::string TimestampText(int64_t micros) {
  constexpr int64_t kPerDay = 86400LL * 1000000LL;
  const int64_t days = FloorDiv(micros, kPerDay);
  int64_t rest = micros - days * kPerDay;  // [0, kPerDay)
  const int64_t frac = rest % 1000000;
  rest /= 1000000;
  char buf[64];
  std::snprintf(buf, sizeof(buf), " %02lld:%02lld:%02lld", static_cast<long long>(rest / 3600),
                static_cast<long long>(rest / 60 % 60), static_cast<long long>(rest % 60));
  std::string out = DateText(days) + buf;
  if (frac != 0) {
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

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
      return "DATE '" + DateText(int_value) + "'";
    case Kind::kTimestamp:
      return "TIMESTAMP '" + TimestampText(int_value) + "'";
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
