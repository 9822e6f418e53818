#include "query/filter/parser.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/civil_date.h"
#include "query/filter/lexer.h"

namespace strata::query::filter {
namespace {

// A parsed subtree and its height (a leaf is 1), so the tree depth limit holds for
// left-associative chains ("a + a + a ...") that the parser builds without recursing.
struct Node {
  ExprPtr expr;
  int depth = 1;
};

// Reads `count_min`..`count_max` digits at s[*i]; false when there are fewer.
bool ReadDigits(std::string_view s, size_t* i, size_t count_min, size_t count_max, int64_t* value) {
  size_t k = 0;
  int64_t v = 0;
  while (*i + k < s.size() && k < count_max && s[*i + k] >= '0' && s[*i + k] <= '9') {
    v = v * 10 + (s[*i + k] - '0');
    ++k;
  }
  if (k < count_min) return false;
  *i += k;
  *value = v;
  return true;
}

// "yyyy-m[m]-d[d]" at s[*i]: days since the epoch, or false when malformed or not a date.
bool ReadDate(std::string_view s, size_t* i, int64_t* days) {
  int64_t y, m, d;
  if (!ReadDigits(s, i, 4, 4, &y)) return false;
  if (*i >= s.size() || s[*i] != '-') return false;
  ++*i;
  if (!ReadDigits(s, i, 1, 2, &m)) return false;
  if (*i >= s.size() || s[*i] != '-') return false;
  ++*i;
  if (!ReadDigits(s, i, 1, 2, &d)) return false;
  if (m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(m))) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

bool ParseDate(std::string_view s, int64_t* days) {
  size_t i = 0;
  return ReadDate(s, &i, days) && i == s.size();
}

// "yyyy-mm-dd[( |T)hh:mm[:ss[.f...]]]" (1-9 fraction digits, truncated to microseconds):
// microseconds since 1970-01-01 00:00:00 UTC.
bool ParseTimestamp(std::string_view s, int64_t* micros) {
  size_t i = 0;
  int64_t days;
  if (!ReadDate(s, &i, &days)) return false;
  int64_t h = 0, mi = 0, sec = 0, frac = 0;
  if (i < s.size()) {
    if (s[i] != ' ' && s[i] != 'T') return false;
    ++i;
    if (!ReadDigits(s, &i, 2, 2, &h) || i >= s.size() || s[i] != ':') return false;
    ++i;
    if (!ReadDigits(s, &i, 2, 2, &mi)) return false;
    if (i < s.size() && s[i] == ':') {
      ++i;
      if (!ReadDigits(s, &i, 2, 2, &sec)) return false;
      if (i < s.size() && s[i] == '.') {
        ++i;
        const size_t start = i;
        int64_t f;
        if (!ReadDigits(s, &i, 1, 9, &f)) return false;
        for (size_t k = i - start; k < 9; ++k) f *= 10;  // nanoseconds
        frac = f / 1000;
      }
    }
    if (i != s.size()) return false;
  }
  if (h > 23 || mi > 59 || sec > 59) return false;
  *micros = ((days * 24 + h) * 60 + mi) * 60 * 1000000 + sec * 1000000 + frac;
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens, const ParseOptions& options)
      : sql_(sql), tokens_(std::move(tokens)), options_(options) {}

  Result<ExprPtr> Run() {
    STRATA_ASSIGN_OR_RETURN(Node n, ParseNested());
    if (Peek().kind != TokenKind::kEnd) return Unexpected(Peek());
    return n.expr;
  }

 private:
  // --- tokens --------------------------------------------------------------------------------
  const Token& Peek(size_t ahead = 0) const {
    const size_t k = pos_ + ahead;
    return k < tokens_.size() ? tokens_[k] : tokens_.back();
  }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool PeekWord(std::string_view keyword, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == TokenKind::kWord && IsKeyword(t.text, keyword);
  }
  bool AcceptWord(std::string_view keyword) {
    if (!PeekWord(keyword)) return false;
    Next();
    return true;
  }
  bool Accept(TokenKind kind) {
    if (Peek().kind != kind) return false;
    Next();
    return true;
  }

  // --- errors --------------------------------------------------------------------------------
  Status Error(const std::string& what, size_t position, bool end_of_input = false) const {
    return Status::Invalid(std::string(options_.context) + ": " + what + " at position " +
                           std::to_string(position) + (end_of_input ? " (end of input)" : ""));
  }
  std::string Quoted(const Token& t) const {
    std::string q = "'";  // appends: GCC 12 -O3 gives a false -Wrestrict for "'" + string
    q += TokenForMessage(sql_, t.begin, t.end);
    q += "'";
    return q;
  }
  Status Unexpected(const Token& t) const {
    if (t.kind == TokenKind::kEnd) return Error("unexpected end of input", t.begin);
    return Error("unexpected token " + Quoted(t), t.begin);
  }
  Status Expected(const std::string& what, const Token& t) const {
    if (t.kind == TokenKind::kEnd) return Error("expected " + what, t.begin, true);
    return Error("expected " + what + " but found " + Quoted(t), t.begin);
  }
  Status TooDeep(size_t position) const {
    return Error("nested deeper than " + std::to_string(options_.max_depth) + " levels (max_depth)",
                 position);
  }
  Status Expect(TokenKind kind, const char* what) {
    if (!Accept(kind)) return Expected(what, Peek());
    return Status::OK();
  }

  // --- nodes ---------------------------------------------------------------------------------
  // A node over `children` (depth 1 + the deepest child), or the max_depth error.
  Result<Node> Make(Expr e, std::vector<Node> children) {
    int depth = 0;
    e.children.reserve(children.size());
    for (Node& c : children) {
      depth = std::max(depth, c.depth);
      e.children.push_back(std::move(c.expr));
    }
    ++depth;
    if (depth > options_.max_depth) return TooDeep(e.position);
    return Node{std::make_shared<const Expr>(std::move(e)), depth};
  }
  static Expr Of(ExprKind kind, size_t position) {
    Expr e;
    e.kind = kind;
    e.position = position;
    return e;
  }
  static Node Leaf(Expr e) { return Node{std::make_shared<const Expr>(std::move(e)), 1}; }

  // Recursion guard: every recursive step of the parser goes through ParseNested (parentheses,
  // call arguments, IN lists, the CAST operand), ParseNot or ParseUnary, each of which counts
  // one level, so the C++ stack stays within max_depth levels whatever the input.
  class Guard {
   public:
    explicit Guard(int* depth) : depth_(depth) { ++*depth_; }
    ~Guard() { --*depth_; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    int* depth_;
  };

  // --- grammar -------------------------------------------------------------------------------
  // expr := or ; entered once per nesting level.
  Result<Node> ParseNested() {
    Guard g(&nesting_);
    if (nesting_ > options_.max_depth) return TooDeep(Peek().begin);
    return ParseOr();
  }

  // or := and (OR and)*
  Result<Node> ParseOr() {
    STRATA_ASSIGN_OR_RETURN(Node left, ParseAnd());
    while (PeekWord("OR")) {
      const size_t at = Next().begin;
      STRATA_ASSIGN_OR_RETURN(Node right, ParseAnd());
      STRATA_ASSIGN_OR_RETURN(left,
                              Make(Of(ExprKind::kOr, at), {std::move(left), std::move(right)}));
    }
    return left;
  }

  // and := not (AND not)*
  Result<Node> ParseAnd() {
    STRATA_ASSIGN_OR_RETURN(Node left, ParseNot());
    while (PeekWord("AND")) {
      const size_t at = Next().begin;
      STRATA_ASSIGN_OR_RETURN(Node right, ParseNot());
      STRATA_ASSIGN_OR_RETURN(left,
                              Make(Of(ExprKind::kAnd, at), {std::move(left), std::move(right)}));
    }
    return left;
  }

  // not := NOT not | predicate
  Result<Node> ParseNot() {
    if (!PeekWord("NOT")) return ParsePredicate();
    const size_t at = Next().begin;
    Guard g(&nesting_);
    if (nesting_ > options_.max_depth) return TooDeep(at);
    STRATA_ASSIGN_OR_RETURN(Node inner, ParseNot());
    return Make(Of(ExprKind::kNot, at), {std::move(inner)});
  }

  // predicate := additive ( cmp additive | IS [NOT] NULL | [NOT] IN (expr, ...)
  //                       | [NOT] BETWEEN additive AND additive | [NOT] LIKE additive )*
  Result<Node> ParsePredicate() {
    STRATA_ASSIGN_OR_RETURN(Node left, ParseAdditive());
    while (true) {
      const Token& t = Peek();
      const size_t at = t.begin;
      CompareOp op;
      bool is_compare = true;
      switch (t.kind) {
        case TokenKind::kEq:
          op = CompareOp::kEq;
          break;
        case TokenKind::kNe:
          op = CompareOp::kNe;
          break;
        case TokenKind::kLt:
          op = CompareOp::kLt;
          break;
        case TokenKind::kLe:
          op = CompareOp::kLe;
          break;
        case TokenKind::kGt:
          op = CompareOp::kGt;
          break;
        case TokenKind::kGe:
          op = CompareOp::kGe;
          break;
        default:
          is_compare = false;
          op = CompareOp::kEq;
          break;
      }
      if (is_compare) {
        Next();
        STRATA_ASSIGN_OR_RETURN(Node right, ParseAdditive());
        Expr e = Of(ExprKind::kCompare, at);
        e.compare = op;
        STRATA_ASSIGN_OR_RETURN(left, Make(std::move(e), {std::move(left), std::move(right)}));
        continue;
      }
      if (PeekWord("IS")) {
        Next();
        Expr e = Of(ExprKind::kIsNull, at);
        e.negated = AcceptWord("NOT");
        if (!AcceptWord("NULL")) return Expected(e.negated ? "NULL" : "NULL or NOT NULL", Peek());
        STRATA_ASSIGN_OR_RETURN(left, Make(std::move(e), {std::move(left)}));
        continue;
      }
      bool negated = false;
      if (PeekWord("NOT") && (PeekWord("IN", 1) || PeekWord("BETWEEN", 1) || PeekWord("LIKE", 1))) {
        Next();
        negated = true;
      } else if (PeekWord("NOT")) {
        Next();
        return Expected("IN, BETWEEN or LIKE after NOT", Peek());
      }
      if (AcceptWord("IN")) {
        STRATA_ASSIGN_OR_RETURN(left, ParseInList(std::move(left), at, negated));
      } else if (AcceptWord("BETWEEN")) {
        STRATA_ASSIGN_OR_RETURN(Node low, ParseAdditive());
        if (!AcceptWord("AND")) return Expected("AND of BETWEEN", Peek());
        STRATA_ASSIGN_OR_RETURN(Node high, ParseAdditive());
        Expr e = Of(ExprKind::kBetween, at);
        e.negated = negated;
        STRATA_ASSIGN_OR_RETURN(
            left, Make(std::move(e), {std::move(left), std::move(low), std::move(high)}));
      } else if (AcceptWord("LIKE")) {
        STRATA_ASSIGN_OR_RETURN(Node pattern, ParseAdditive());
        Expr e = Of(ExprKind::kLike, at);
        e.negated = negated;
        STRATA_ASSIGN_OR_RETURN(left, Make(std::move(e), {std::move(left), std::move(pattern)}));
      } else {
        return left;
      }
    }
  }

  // IN ( expr [, expr]* )
  Result<Node> ParseInList(Node left, size_t at, bool negated) {
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after IN"));
    std::vector<Node> items;
    items.push_back(std::move(left));
    do {
      STRATA_ASSIGN_OR_RETURN(Node item, ParseNested());
      items.push_back(std::move(item));
    } while (Accept(TokenKind::kComma));
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' or ',' in the IN list"));
    Expr e = Of(ExprKind::kIn, at);
    e.negated = negated;
    return Make(std::move(e), std::move(items));
  }

  // additive := multiplicative ((+ | -) multiplicative)*
  Result<Node> ParseAdditive() {
    STRATA_ASSIGN_OR_RETURN(Node left, ParseMultiplicative());
    while (Peek().kind == TokenKind::kPlus || Peek().kind == TokenKind::kMinus) {
      const Token& t = Next();
      Expr e = Of(ExprKind::kArith, t.begin);
      e.arith = t.kind == TokenKind::kPlus ? ArithOp::kAdd : ArithOp::kSub;
      STRATA_ASSIGN_OR_RETURN(Node right, ParseMultiplicative());
      STRATA_ASSIGN_OR_RETURN(left, Make(std::move(e), {std::move(left), std::move(right)}));
    }
    return left;
  }

  // multiplicative := unary ((* | / | %) unary)*
  Result<Node> ParseMultiplicative() {
    STRATA_ASSIGN_OR_RETURN(Node left, ParseUnary());
    while (true) {
      const TokenKind k = Peek().kind;
      ArithOp op;
      if (k == TokenKind::kStar) {
        op = ArithOp::kMul;
      } else if (k == TokenKind::kSlash) {
        op = ArithOp::kDiv;
      } else if (k == TokenKind::kPercent) {
        op = ArithOp::kMod;
      } else {
        return left;
      }
      Expr e = Of(ExprKind::kArith, Next().begin);
      e.arith = op;
      STRATA_ASSIGN_OR_RETURN(Node right, ParseUnary());
      STRATA_ASSIGN_OR_RETURN(left, Make(std::move(e), {std::move(left), std::move(right)}));
    }
  }

  // unary := - unary | + number | primary. A minus folds into a numeric literal operand.
  Result<Node> ParseUnary() {
    const Token& t = Peek();
    if (t.kind == TokenKind::kPlus && Peek(1).kind == TokenKind::kNumber) {
      Next();
      return ParseNumber(Next(), false, t.begin);
    }
    if (t.kind != TokenKind::kMinus) return ParsePrimary();
    const size_t at = Next().begin;
    if (Peek().kind == TokenKind::kNumber) return ParseNumber(Next(), true, at);
    Guard g(&nesting_);
    if (nesting_ > options_.max_depth) return TooDeep(at);
    STRATA_ASSIGN_OR_RETURN(Node inner, ParseUnary());
    if (inner.expr->kind == ExprKind::kLiteral) {
      const Literal& lit = inner.expr->literal;
      if (lit.kind == Literal::Kind::kFloat ||
          (lit.kind == Literal::Kind::kInt &&
           lit.int_value != std::numeric_limits<int64_t>::min())) {
        Expr e = Of(ExprKind::kLiteral, at);
        e.literal = lit;
        if (lit.kind == Literal::Kind::kFloat) {
          e.literal.float_value = -lit.float_value;
        } else {
          e.literal.int_value = -lit.int_value;
        }
        return Leaf(std::move(e));
      }
    }
    return Make(Of(ExprKind::kNegate, at), {std::move(inner)});
  }

  // A numeric literal, negated when a minus came before it (then `position` is the minus).
  Result<Node> ParseNumber(const Token& t, bool negative, size_t position) {
    Expr e = Of(ExprKind::kLiteral, position);
    const std::string& s = t.text;
    if (s.find_first_of(".eE") == std::string::npos) {
      uint64_t magnitude = 0;
      auto r = std::from_chars(s.data(), s.data() + s.size(), magnitude);
      if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
        constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        if (magnitude <= kMax) {
          e.literal.kind = Literal::Kind::kInt;
          e.literal.int_value =
              negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
          return Leaf(std::move(e));
        }
        if (negative && magnitude == kMax + 1) {
          e.literal.kind = Literal::Kind::kInt;
          e.literal.int_value = std::numeric_limits<int64_t>::min();
          return Leaf(std::move(e));
        }
      }
      // Past int64: a float, as DataFusion reads it.
    }
    double v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars does not say which way; strtod does (HUGE_VAL on overflow, a tiny or zero
      // value on underflow). The text is digits, '.', 'e' and a sign only.
      errno = 0;
      v = std::strtod(s.c_str(), nullptr);
    } else if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
      return Error("malformed number " + Quoted(t), t.begin);
    }
    if (!std::isfinite(v)) return Error("number out of range " + Quoted(t), t.begin);
    e.literal.kind = Literal::Kind::kFloat;
    e.literal.float_value = negative ? -v : v;
    return Leaf(std::move(e));
  }

  // primary := literal | DATE 'str' | TIMESTAMP 'str' | CAST ( expr AS type )
  //          | name ( args ) | name (. name)* | ( expr )
  Result<Node> ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kNumber:
        return ParseNumber(Next(), false, t.begin);
      case TokenKind::kString: {
        Expr e = Of(ExprKind::kLiteral, t.begin);
        e.literal.kind = Literal::Kind::kString;
        e.literal.string_value = Next().text;
        return Leaf(std::move(e));
      }
      case TokenKind::kLParen: {
        Next();
        STRATA_ASSIGN_OR_RETURN(Node inner, ParseNested());
        STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
        return inner;
      }
      case TokenKind::kQuotedName:
        return ParsePath();
      case TokenKind::kWord:
        break;
      default:
        return Expected("an expression", t);
    }
    // Words.
    if (PeekWord("NULL") || PeekWord("TRUE") || PeekWord("FALSE")) {
      Expr e = Of(ExprKind::kLiteral, t.begin);
      if (PeekWord("NULL")) {
        e.literal.kind = Literal::Kind::kNull;
      } else {
        e.literal.kind = Literal::Kind::kBool;
        e.literal.bool_value = PeekWord("TRUE");
      }
      Next();
      return Leaf(std::move(e));
    }
    if ((PeekWord("DATE") || PeekWord("TIMESTAMP")) && Peek(1).kind == TokenKind::kString) {
      const bool is_date = PeekWord("DATE");
      Expr e = Of(ExprKind::kLiteral, Next().begin);
      const Token& s = Next();
      if (is_date) {
        e.literal.kind = Literal::Kind::kDate;
        if (!ParseDate(s.text, &e.literal.int_value)) {
          return Error("invalid date " + Quoted(s) + " (expected 'yyyy-mm-dd')", s.begin);
        }
      } else {
        e.literal.kind = Literal::Kind::kTimestamp;
        if (!ParseTimestamp(s.text, &e.literal.int_value)) {
          return Error(
              "invalid timestamp " + Quoted(s) + " (expected 'yyyy-mm-dd[ hh:mm[:ss[.ffffff]]]')",
              s.begin);
        }
      }
      return Leaf(std::move(e));
    }
    if (PeekWord("CAST") && Peek(1).kind == TokenKind::kLParen) return ParseCast();
    static constexpr std::string_view kReserved[] = {"AND",  "OR",   "NOT",     "IN",   "IS",
                                                     "NULL", "LIKE", "BETWEEN", "CAST", "AS"};
    for (std::string_view k : kReserved) {
      if (PeekWord(k)) return Expected("an expression", t);
    }
    if (Peek(1).kind == TokenKind::kLParen) return ParseCall();
    return ParsePath();
  }

  // CAST ( expr AS type ), type one word (or DOUBLE PRECISION, read as double).
  Result<Node> ParseCast() {
    Expr e = Of(ExprKind::kCast, Next().begin);
    Next();  // (
    STRATA_ASSIGN_OR_RETURN(Node inner, ParseNested());
    if (!AcceptWord("AS")) return Expected("AS in CAST", Peek());
    if (Peek().kind != TokenKind::kWord) return Expected("a type name", Peek());
    e.cast_type = Lower(Next().text);
    if (e.cast_type == "double") AcceptWord("PRECISION");
    STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after the CAST type"));
    return Make(std::move(e), {std::move(inner)});
  }

  // name ( [expr [, expr]*] )
  Result<Node> ParseCall() {
    Expr e = Of(ExprKind::kCall, Peek().begin);
    e.function = Lower(Next().text);
    Next();  // (
    std::vector<Node> args;
    if (!Accept(TokenKind::kRParen)) {
      do {
        STRATA_ASSIGN_OR_RETURN(Node arg, ParseNested());
        args.push_back(std::move(arg));
      } while (Accept(TokenKind::kComma));
      STRATA_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' or ',' in the argument list"));
    }
    return Make(std::move(e), std::move(args));
  }

  // name (. name)*, each a word or a quoted name.
  Result<Node> ParsePath() {
    Expr e = Of(ExprKind::kColumn, Peek().begin);
    e.path.push_back(Next().text);
    while (Accept(TokenKind::kDot)) {
      const Token& t = Peek();
      if (t.kind != TokenKind::kWord && t.kind != TokenKind::kQuotedName) {
        return Expected("a field name after '.'", t);
      }
      e.path.push_back(Next().text);
    }
    return Leaf(std::move(e));
  }

  std::string_view sql_;
  std::vector<Token> tokens_;
  const ParseOptions& options_;
  size_t pos_ = 0;
  int nesting_ = 0;  // current recursion depth (Guard)
};

}  // namespace

Result<ExprPtr> ParseExpression(std::string_view sql, const ParseOptions& options) {
  const std::string context(options.context);
  if (sql.size() > options.max_length) {
    return Status::Invalid(context + ": is " + std::to_string(sql.size()) +
                           " bytes long; the limit is " + std::to_string(options.max_length) +
                           " bytes (max_length)");
  }
  bool blank = true;
  for (char c : sql) {
    if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')) {
      blank = false;
      break;
    }
  }
  if (blank) return Status::Invalid(context + ": is empty");
  // The same text is often parsed twice in a row by one thread (a sharded table's pruning,
  // then the query's own bind: query/shard_pruning.h): the last success of this thread is
  // kept. The tree is immutable and depends only on the text (and, for success, on the
  // limits), so handing it out again is the same as parsing again.
  struct Last {
    std::string sql;
    size_t max_length = 0;
    int max_depth = 0;
    ExprPtr expr;
  };
  thread_local Last last;
  if (last.expr != nullptr && last.sql == sql && last.max_length == options.max_length &&
      last.max_depth == options.max_depth) {
    return last.expr;
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql, options.context));
  Parser parser(sql, std::move(tokens), options);
  STRATA_ASSIGN_OR_RETURN(ExprPtr expr, parser.Run());
  if (sql.size() <= 4096)
    last = Last{std::string(sql), options.max_length, options.max_depth, expr};
  return expr;
}

}  // namespace strata::query::filter
