#include "query/filter/parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <thread>

#include "query/filter/lexer.h"

namespace strata::query::filter {
namespace {

struct ValidCase {
  const char* sql;
  const char* canonical;
};

// Every construct of the grammar, with the canonical text ToString must give.
const ValidCase kValid[] = {
    // Comparisons and their spellings.
    {"a = 1", "(a = 1)"},
    {"a != 1", "(a <> 1)"},
    {"a <> 1", "(a <> 1)"},
    {"a<1", "(a < 1)"},
    {"a <= 1", "(a <= 1)"},
    {"a > 1", "(a > 1)"},
    {"a >= 1", "(a >= 1)"},
    {"1 = a", "(1 = a)"},
    {"a = b = c", "((a = b) = c)"},
    // Boolean operators and precedence: AND binds tighter than OR, NOT tighter than AND.
    {"a = 1 OR b = 2 AND c = 3", "((a = 1) OR ((b = 2) AND (c = 3)))"},
    {"(a = 1 OR b = 2) AND c = 3", "(((a = 1) OR (b = 2)) AND (c = 3))"},
    {"a AND b AND c", "((a AND b) AND c)"},
    {"a OR b OR c", "((a OR b) OR c)"},
    {"NOT a = 1", "(NOT (a = 1))"},
    {"NOT a AND b", "((NOT a) AND b)"},
    {"NOT NOT a", "(NOT (NOT a))"},
    {"not (a or b)", "(NOT (a OR b))"},
    {"a = 1 and not b = 2", "((a = 1) AND (NOT (b = 2)))"},
    {"((a))", "a"},
    // Arithmetic precedence and associativity.
    {"a + b * c", "(a + (b * c))"},
    {"(a + b) * c", "((a + b) * c)"},
    {"a - b - c", "((a - b) - c)"},
    {"a / b % c", "((a / b) % c)"},
    {"a + b > c * 2", "((a + b) > (c * 2))"},
    {"a * 2 + 1 = 7", "(((a * 2) + 1) = 7)"},
    // Unary minus: folds into numbers, negates anything else, binds tighter than * and +.
    {"-x", "-x"},
    {"-1", "-1"},
    {"- 1.5", "-1.5"},
    {"x - -1", "(x - -1)"},
    {"x--1", "(x - -1)"},
    {"-----1", "-1"},
    {"- -x", "- -x"},
    {"-(a + b)", "-(a + b)"},
    {"-a * b", "(-a * b)"},
    {"-(1)", "-1"},
    {"+5", "5"},
    {"-9223372036854775808", "-9223372036854775808"},
    {"9223372036854775807", "9223372036854775807"},
    {"- -9223372036854775808", "- -9223372036854775808"},
    {"9223372036854775808", "9223372036854775808.0"},
    {"-9223372036854775809", "-9223372036854775808.0"},
    // Numbers.
    {"a = 0", "(a = 0)"},
    {"a = 007", "(a = 7)"},
    {"a = 1.5", "(a = 1.5)"},
    {"a = .5", "(a = 0.5)"},
    {"a = 2.", "(a = 2.0)"},
    {"a = 2e3", "(a = 2000.0)"},
    {"a = 2.5E-3", "(a = 0.0025)"},
    {"a = 1e+20", "(a = 1e+20)"},
    {"a = 1e-400", "(a = 0.0)"},
    {"a = 0.1", "(a = 0.1)"},
    // Strings, booleans, NULL.
    {"s = 'abc'", "(s = 'abc')"},
    {"s = 'it''s'", "(s = 'it''s')"},
    {"s = ''", "(s = '')"},
    {"s = 'a\"b`c'", "(s = 'a\"b`c')"},
    {"s = 'caf\xc3\xa9'", "(s = 'caf\xc3\xa9')"},
    {"b = true", "(b = TRUE)"},
    {"b = False", "(b = FALSE)"},
    {"a = null", "(a = NULL)"},
    // IS [NOT] NULL.
    {"a IS NULL", "(a IS NULL)"},
    {"a is not null", "(a IS NOT NULL)"},
    {"a + 1 IS NULL", "((a + 1) IS NULL)"},
    {"NOT a IS NULL", "(NOT (a IS NULL))"},
    {"a IS NULL IS NOT NULL", "((a IS NULL) IS NOT NULL)"},
    // [NOT] IN.
    {"a IN (1, 2, 3)", "(a IN (1, 2, 3))"},
    {"a in (1)", "(a IN (1))"},
    {"a NOT IN ('x', 'y')", "(a NOT IN ('x', 'y'))"},
    {"a IN (1 + 2, b, NULL)", "(a IN ((1 + 2), b, NULL))"},
    {"_rowid IN (1, 4294967296)", "(_rowid IN (1, 4294967296))"},
    {"a IN (b IN (1))", "(a IN ((b IN (1))))"},
    // [NOT] BETWEEN: the AND belongs to BETWEEN, a following AND is a conjunction.
    {"a BETWEEN 1 AND 5", "(a BETWEEN 1 AND 5)"},
    {"a NOT BETWEEN 1 AND 5", "(a NOT BETWEEN 1 AND 5)"},
    {"a BETWEEN 1 AND 5 AND b", "((a BETWEEN 1 AND 5) AND b)"},
    {"a BETWEEN b + 1 AND c * 2", "(a BETWEEN (b + 1) AND (c * 2))"},
    {"a between -1 and 1", "(a BETWEEN -1 AND 1)"},
    // [NOT] LIKE.
    {"name LIKE 'a%'", "(name LIKE 'a%')"},
    {"name NOT LIKE '_b%'", "(name NOT LIKE '_b%')"},
    {"NOT name LIKE 'x'", "(NOT (name LIKE 'x'))"},
    // DATE and TIMESTAMP literals.
    {"d = DATE '2024-01-31'", "(d = DATE '2024-01-31')"},
    {"d = date '1970-1-2'", "(d = DATE '1970-01-02')"},
    {"d >= date '1969-12-31'", "(d >= DATE '1969-12-31')"},
    {"d = DATE '2024-02-29'", "(d = DATE '2024-02-29')"},
    {"d = DATE '2000-02-29'", "(d = DATE '2000-02-29')"},
    {"t < TIMESTAMP '2024-01-31 12:00:00'", "(t < TIMESTAMP '2024-01-31 12:00:00')"},
    {"t < timestamp '2024-01-31T23:59:59.5'", "(t < TIMESTAMP '2024-01-31 23:59:59.500000')"},
    {"t = TIMESTAMP '2024-01-31'", "(t = TIMESTAMP '2024-01-31 00:00:00')"},
    {"t = TIMESTAMP '1969-12-31 23:59:59.999999'", "(t = TIMESTAMP '1969-12-31 23:59:59.999999')"},
    {"t = TIMESTAMP '2024-01-31 08:30'", "(t = TIMESTAMP '2024-01-31 08:30:00')"},
    {"t = TIMESTAMP '2024-01-31 08:30:01.123456789'",
     "(t = TIMESTAMP '2024-01-31 08:30:01.123456')"},
    // A word spelled like a keyword is a column when no string follows; written quoted.
    {"date = 1", "(`date` = 1)"},
    {"date(x)", "date(x)"},
    // CAST.
    {"CAST(a AS BIGINT)", "CAST(a AS bigint)"},
    {"cast(a + 1 as varchar) = '2'", "(CAST((a + 1) AS varchar) = '2')"},
    {"CAST(a AS double precision)", "CAST(a AS double)"},
    {"CAST(a AS date)", "CAST(a AS date)"},
    {"-CAST(a AS int)", "-CAST(a AS int)"},
    // Identifiers: backticks, double quotes, paths, keywords and odd names quoted back.
    {"`a b` = 1", "(`a b` = 1)"},
    {"`a``b` = 1", "(`a``b` = 1)"},
    {"\"Mixed Case\" = 1", "(`Mixed Case` = 1)"},
    {"\"a\"\"b\" = 1", "(`a\"b` = 1)"},
    {"`select` = 1", "(select = 1)"},  // not a keyword of this grammar: printed plain
    {"`and` = 1", "(`and` = 1)"},
    {"`1a` = 1", "(`1a` = 1)"},
    {"`a.b` = 1", "(`a.b` = 1)"},
    {"a.b = 1", "(a.b = 1)"},
    {"a.b.c IS NULL", "(a.b.c IS NULL)"},
    {"a.`b c`.d = 1", "(a.`b c`.d = 1)"},
    {"`x`.y = 1", "(x.y = 1)"},
    {"CamelCase = 1", "(CamelCase = 1)"},
    {"_rowoffset < 10", "(_rowoffset < 10)"},
    // Function calls: lower-cased names, zero or more arguments.
    {"lower(name) = 'x'", "(lower(name) = 'x')"},
    {"UPPER(name)", "upper(name)"},
    {"now()", "now()"},
    {"starts_with(s, 'ab')", "starts_with(s, 'ab')"},
    {"regexp_match(s, '^a.*$') AND length(s) > 3",
     "(regexp_match(s, '^a.*$') AND (length(s) > 3))"},
    {"array_has(tags, 'x')", "array_has(tags, 'x')"},
    {"f(g(a, 1), -b)", "f(g(a, 1), -b)"},
    // Whitespace anywhere between tokens, keywords in any case.
    {" \t\na\r\n=\f1\v ", "(a = 1)"},
    {"a iS nOt NuLl AnD b", "((a IS NOT NULL) AND b)"},
};

TEST(FilterParserTest, ValidExpressionsGiveTheirCanonicalText) {
  for (const ValidCase& c : kValid) {
    SCOPED_TRACE(c.sql);
    auto r = ParseExpression(c.sql);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const std::string text = (*r)->ToString();
    EXPECT_EQ(text, c.canonical);
    // The canonical text is a fixed point.
    auto again = ParseExpression(text);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ((*again)->ToString(), text);
  }
}

struct InvalidCase {
  const char* sql;
  size_t position;   // expected byte offset named in the message
  const char* what;  // expected substring of the message (names the token)
};

const InvalidCase kInvalid[] = {
    {"a >", 3, "expected an expression at position 3 (end of input)"},
    {"a = 'abc", 4, "unterminated string literal at position 4"},
    {"a IN ()", 6, "expected an expression but found ')' at position 6"},
    {"a IN 1", 5, "expected '(' after IN but found '1' at position 5"},
    {"a IN (1, 2", 10, "expected ')' or ',' in the IN list at position 10 (end of input)"},
    {"a IN (1,)", 8, "expected an expression but found ')' at position 8"},
    {"a BETWEEN 1", 11, "expected AND of BETWEEN at position 11 (end of input)"},
    {"a BETWEEN 1 OR 2", 12, "expected AND of BETWEEN but found 'OR' at position 12"},
    {"date '2023-02-30'", 5, "invalid date ''2023-02-30''"},
    {"d = DATE '2023-13-01'", 9, "invalid date"},
    {"d = DATE '2023-1-1x'", 9, "invalid date"},
    {"d = DATE '23-01-01'", 9, "invalid date"},
    {"d = DATE ''", 9, "invalid date"},
    {"d = DATE '2023-02-29'", 9, "invalid date"},
    {"d = DATE '1900-02-29'", 9, "invalid date"},
    {"t = TIMESTAMP '2024-01-01 24:00:00'", 14, "invalid timestamp"},
    {"t = TIMESTAMP '2024-01-01 12:60'", 14, "invalid timestamp"},
    {"t = TIMESTAMP '2024-01-01 12:00:00Z'", 14, "invalid timestamp"},
    {"t = TIMESTAMP '2024-01-01 12:00:00.'", 14, "invalid timestamp"},
    {"t = TIMESTAMP '2024-01-01 12:00:00.1234567890'", 14, "invalid timestamp"},
    {"CAST(a AS)", 9, "expected a type name but found ')' at position 9"},
    {"CAST(a)", 6, "expected AS in CAST but found ')' at position 6"},
    {"CAST(a AS int", 13, "expected ')' after the CAST type at position 13 (end of input)"},
    {"CAST(a AS varchar(10))", 17, "expected ')' after the CAST type but found '('"},
    {"a = = 1", 4, "expected an expression but found '=' at position 4"},
    {"a = 1 b", 6, "unexpected token 'b' at position 6"},
    {"a = 1)", 5, "unexpected token ')' at position 5"},
    {"(a = 1", 6, "expected ')' at position 6 (end of input)"},
    {"a NOT = 1", 6, "expected IN, BETWEEN or LIKE after NOT but found '='"},
    {"a IS 1", 5, "expected NULL or NOT NULL but found '1' at position 5"},
    {"a IS NOT TRUE", 9, "expected NULL but found 'TRUE' at position 9"},
    {"a AND", 5, "expected an expression at position 5 (end of input)"},
    {"AND a", 0, "expected an expression but found 'AND' at position 0"},
    {"a = NOT b", 4, "expected an expression but found 'NOT' at position 4"},
    {"f(a,)", 4, "expected an expression but found ')' at position 4"},
    {"f(a b)", 4, "expected ')' or ',' in the argument list but found 'b' at position 4"},
    {"a.", 2, "expected a field name after '.' at position 2 (end of input)"},
    {"a.1", 1, "unexpected token '.1' at position 1"},
    {"a = 1abc", 4, "malformed number '1abc' at position 4"},
    {"a = 1e", 4, "malformed number '1e' at position 4"},
    {"a = 1.2.3", 4, "malformed number '1.2.3'"},
    {"a = 1e400", 4, "number out of range '1e400' at position 4"},
    {"a = -1e400", 5, "number out of range '1e400' at position 5"},
    {"a # 1", 2, "unexpected character '#' at position 2"},
    {"a ! 1", 2, "unexpected character '!' at position 2"},
    {"a = \xff", 4, "unexpected character '\\xFF' at position 4"},
    {"caf\xc3\xa9 = 1", 3, "unexpected character '\xc3\xa9' at position 3"},
    {"`a = 1", 0, "unterminated quoted name at position 0"},
    {"\"a = 1", 0, "unterminated quoted name at position 0"},
    {"`` = 1", 0, "empty quoted identifier at position 0"},
    {"a = +", 4, "expected an expression but found '+' at position 4"},
    {"-", 1, "expected an expression at position 1 (end of input)"},
    {"a = 1 ; DROP TABLE t", 6, "unexpected character ';' at position 6"},
    {"a = 'x' 'y'", 8, "unexpected token ''y'' at position 8"},
    {"a = 'a very long string literal that goes on and on' b", 4 + 48 + 1,
     "unexpected token 'b' at position 53"},
    {"a = 1 'a very long string literal that goes on and on'", 6,
     "unexpected token ''a very long string literal that...' at position 6"},
};

TEST(FilterParserTest, InvalidExpressionsNameTheTokenAndPosition) {
  for (const InvalidCase& c : kInvalid) {
    SCOPED_TRACE(c.sql);
    auto r = ParseExpression(c.sql);
    ASSERT_FALSE(r.ok()) << "parsed as " << (*r)->ToString();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    const std::string& m = r.status().message();
    EXPECT_EQ(m.rfind("filter: ", 0), 0u) << m;
    EXPECT_NE(m.find(c.what), std::string::npos) << m;
    EXPECT_NE(m.find("at position " + std::to_string(c.position)), std::string::npos) << m;
  }
}

TEST(FilterParserTest, EmptyAndTooLongTextAreRejectedWithTheLimit) {
  for (const char* blank : {"", " ", "\t\n "}) {
    auto r = ParseExpression(blank);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "filter: is empty");
  }
  ParseOptions options;
  options.max_length = 10;
  options.context = "update expression for 'x'";
  auto ok = ParseExpression("a = 123456", options);  // exactly 10 bytes
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)->ToString(), "(a = 123456)");
  auto r = ParseExpression("a = 1234567", options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "update expression for 'x': is 11 bytes long; the limit is 10 bytes (max_length)");
  // The default limit is 64 KiB.
  const std::string big = "a = '" + std::string(70000, 'x') + "'";
  auto r2 = ParseExpression(big);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().message(),
            "filter: is 70006 bytes long; the limit is 65536 bytes (max_length)");
}

// A thread's last successful parse is handed out again for the same text (a sharded read
// parses its filter for pruning, then for the query): the same tree, and only when the limits
// would have accepted it too.
TEST(FilterParserTest, TheSameTextParsedAgainGivesTheSameTreeWithinItsLimits) {
  auto a = ParseExpression("id = 434 AND v > 2");
  auto b = ParseExpression("id = 434 AND v > 2");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ((*b)->ToString(), "((id = 434) AND (v > 2))");
  auto c = ParseExpression("id = 435 AND v > 2");
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->get(), a->get());
  EXPECT_EQ((*c)->ToString(), "((id = 435) AND (v > 2))");
  // The same text under tighter limits is still refused.
  ParseOptions short_text;
  short_text.max_length = 5;
  auto d = ParseExpression("id = 435 AND v > 2", short_text);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "filter: is 18 bytes long; the limit is 5 bytes (max_length)");
  ParseOptions shallow;
  shallow.max_depth = 1;
  ASSERT_TRUE(ParseExpression("((a))").ok());
  EXPECT_FALSE(ParseExpression("((a))", shallow).ok());
  // Another thread parses on its own.
  std::thread other([&] {
    auto e = ParseExpression("id = 434 AND v > 2");
    ASSERT_TRUE(e.ok());
    EXPECT_NE(e->get(), a->get());
  });
  other.join();
}

TEST(FilterParserTest, DeepNestingIsAnErrorNotAStackOverflow) {
  const size_t n = 100000;
  ParseOptions big;
  big.max_length = 4 * n + 10;
  // 100k parentheses.
  const std::string parens = std::string(n, '(') + "a" + std::string(n, ')');
  auto r = ParseExpression(parens, big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "filter: nested deeper than 256 levels (max_depth) at position 256");
  // 100k NOTs, 100k minus signs before a column and before a number.
  std::string nots;
  for (size_t i = 0; i < n; ++i) nots += "NOT ";
  r = ParseExpression(nots + "a", big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(max_depth) at position 1020"), std::string::npos)
      << r.status().message();
  r = ParseExpression(std::string(n, '-') + "x", big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(max_depth) at position 255"), std::string::npos)
      << r.status().message();
  r = ParseExpression(std::string(n, '-') + "1", big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(max_depth)"), std::string::npos);
  // Nested calls and CASTs.
  std::string calls;
  for (size_t i = 0; i < n / 4; ++i) calls += "f(";
  calls += "a" + std::string(n / 4, ')');
  r = ParseExpression(calls, big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(max_depth) at position 512"), std::string::npos)
      << r.status().message();
  // A long left-associative chain recurses little but builds a deep tree: limited too.
  std::string chain = "a";
  for (size_t i = 0; i < 20000; ++i) chain += "+a";
  r = ParseExpression(chain, big);
  ASSERT_FALSE(r.ok());
  // The 256th '+' makes a tree of 257 levels (a leaf is one level).
  EXPECT_NE(r.status().message().find("(max_depth) at position " + std::to_string(1 + 2 * 255)),
            std::string::npos)
      << r.status().message();

  // Exactly at the limit: accepted.
  ParseOptions small;
  small.max_depth = 4;
  auto ok = ParseExpression("((a + b) * c) = 1", small);  // Compare > Arith > Arith > leaf
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)->ToString(), "(((a + b) * c) = 1)");
  auto deep = ParseExpression("(((a + b) * c) = 1) AND d", small);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(),
            "filter: nested deeper than 4 levels (max_depth) at position 20");
}

TEST(FilterParserTest, NestingUpToTheLimitIsAcceptedAndRoundTrips) {
  // Parentheses: the whole text is one level, each pair one more.
  const std::string ok_parens = std::string(255, '(') + "a" + std::string(255, ')');
  auto r = ParseExpression(ok_parens);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->ToString(), "a");
  const std::string bad_parens = std::string(256, '(') + "a" + std::string(256, ')');
  EXPECT_FALSE(ParseExpression(bad_parens).ok());

  // 200 NOTs: a tree 201 levels deep. Its canonical text parenthesizes every NOT, so it needs
  // twice the nesting to parse back, and then gives the same text.
  std::string nots;
  for (int i = 0; i < 200; ++i) nots += "NOT ";
  r = ParseExpression(nots + "a");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string text = (*r)->ToString();
  EXPECT_EQ(text.size(), 200 * 6 + 1u);
  EXPECT_EQ(text.substr(0, 12), "(NOT (NOT (N");
  ParseOptions relaxed;
  relaxed.max_depth = 2 * 256 + 1;
  auto again = ParseExpression(text, relaxed);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->ToString(), text);

  // A chain of 255 additions is a tree of 256 levels: accepted.
  std::string chain = "a";
  for (int i = 0; i < 255; ++i) chain += " + a";
  r = ParseExpression(chain);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->children[0]->kind, ExprKind::kArith);
  EXPECT_EQ((*r)->position, chain.size() - 3);  // the last '+'
}

TEST(FilterParserTest, NodesRecordTheirTokenPositionsAndValues) {
  auto r = ParseExpression("a.b >= -12 AND `x y` NOT IN (1.5, 'z')");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Expr& root = **r;
  EXPECT_EQ(root.kind, ExprKind::kAnd);
  EXPECT_EQ(root.position, 11u);
  ASSERT_EQ(root.children.size(), 2u);
  const Expr& cmp = *root.children[0];
  EXPECT_EQ(cmp.kind, ExprKind::kCompare);
  EXPECT_EQ(cmp.compare, CompareOp::kGe);
  EXPECT_EQ(cmp.position, 4u);
  const Expr& col = *cmp.children[0];
  EXPECT_EQ(col.kind, ExprKind::kColumn);
  EXPECT_EQ(col.path, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(col.position, 0u);
  const Expr& lit = *cmp.children[1];
  EXPECT_EQ(lit.kind, ExprKind::kLiteral);
  EXPECT_EQ(lit.literal.kind, Literal::Kind::kInt);
  EXPECT_EQ(lit.literal.int_value, -12);
  EXPECT_EQ(lit.position, 7u);  // the minus sign
  const Expr& in = *root.children[1];
  EXPECT_EQ(in.kind, ExprKind::kIn);
  EXPECT_TRUE(in.negated);
  EXPECT_EQ(in.position, 21u);  // NOT
  ASSERT_EQ(in.children.size(), 3u);
  EXPECT_EQ(in.children[0]->path, (std::vector<std::string>{"x y"}));
  EXPECT_EQ(in.children[0]->position, 15u);
  EXPECT_EQ(in.children[1]->literal.kind, Literal::Kind::kFloat);
  EXPECT_DOUBLE_EQ(in.children[1]->literal.float_value, 1.5);
  EXPECT_EQ(in.children[2]->literal.string_value, "z");
  EXPECT_EQ(in.children[2]->position, 34u);
}

TEST(FilterParserTest, LiteralValues) {
  auto value = [](const char* sql) -> Literal {
    auto r = ParseExpression(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    if (!r.ok()) return {};
    EXPECT_EQ((*r)->kind, ExprKind::kLiteral) << sql;
    return (*r)->literal;
  };
  Literal l = value("-9223372036854775808");
  EXPECT_EQ(l.kind, Literal::Kind::kInt);
  EXPECT_EQ(l.int_value, std::numeric_limits<int64_t>::min());
  l = value("9223372036854775808");
  EXPECT_EQ(l.kind, Literal::Kind::kFloat);
  EXPECT_DOUBLE_EQ(l.float_value, 9223372036854775808.0);
  l = value("18446744073709551616000");
  EXPECT_EQ(l.kind, Literal::Kind::kFloat);
  EXPECT_DOUBLE_EQ(l.float_value, 1.8446744073709551616e22);
  l = value("'it''s'");
  EXPECT_EQ(l.kind, Literal::Kind::kString);
  EXPECT_EQ(l.string_value, "it's");
  l = value("DATE '1970-01-01'");
  EXPECT_EQ(l.kind, Literal::Kind::kDate);
  EXPECT_EQ(l.int_value, 0);
  l = value("DATE '2024-01-31'");
  EXPECT_EQ(l.int_value, 19753);  // 54 years of 365 days + 13 leap days + 30
  l = value("DATE '1969-12-31'");
  EXPECT_EQ(l.int_value, -1);
  l = value("DATE '0000-03-01'");
  EXPECT_EQ(l.int_value, -719468);
  l = value("TIMESTAMP '1970-01-02 00:00:01.000002'");
  EXPECT_EQ(l.kind, Literal::Kind::kTimestamp);
  EXPECT_EQ(l.int_value, 86401000002LL);
  l = value("TIMESTAMP '1969-12-31 23:59:59'");
  EXPECT_EQ(l.int_value, -1000000);
  l = value("TRUE");
  EXPECT_EQ(l.kind, Literal::Kind::kBool);
  EXPECT_TRUE(l.bool_value);
  l = value("null");
  EXPECT_EQ(l.kind, Literal::Kind::kNull);
}

TEST(FilterParserTest, CanonicalTextOfHandBuiltLiterals) {
  Literal l;
  l.kind = Literal::Kind::kFloat;
  l.float_value = 3.0;
  EXPECT_EQ(l.ToString(), "3.0");
  l.float_value = -0.0;
  EXPECT_EQ(l.ToString(), "-0.0");
  l.kind = Literal::Kind::kDate;
  l.int_value = 19753;
  EXPECT_EQ(l.ToString(), "DATE '2024-01-31'");
  l.kind = Literal::Kind::kTimestamp;
  l.int_value = -1;
  EXPECT_EQ(l.ToString(), "TIMESTAMP '1969-12-31 23:59:59.999999'");
  l.kind = Literal::Kind::kString;
  l.string_value = "''";
  EXPECT_EQ(l.ToString(), "''''''");
  EXPECT_STREQ(CompareOpName(CompareOp::kNe), "<>");
  EXPECT_STREQ(CompareOpName(CompareOp::kLe), "<=");
  EXPECT_STREQ(ArithOpName(ArithOp::kMod), "%");
  EXPECT_STREQ(ArithOpName(ArithOp::kDiv), "/");
}

TEST(FilterParserTest, TokensCarryByteRanges) {
  auto r = Tokenize("a<>'x''y' >= 1.5e3", "filter");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<Token>& t = *r;
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].kind, TokenKind::kWord);
  EXPECT_EQ(t[1].kind, TokenKind::kNe);
  EXPECT_EQ(t[1].begin, 1u);
  EXPECT_EQ(t[1].end, 3u);
  EXPECT_EQ(t[2].kind, TokenKind::kString);
  EXPECT_EQ(t[2].text, "x'y");
  EXPECT_EQ(t[2].begin, 3u);
  EXPECT_EQ(t[2].end, 9u);
  EXPECT_EQ(t[3].kind, TokenKind::kGe);
  EXPECT_EQ(t[4].kind, TokenKind::kNumber);
  EXPECT_EQ(t[4].text, "1.5e3");
  EXPECT_EQ(t[5].kind, TokenKind::kEnd);
  EXPECT_EQ(t[5].begin, 18u);
  // Token text in messages: capped at 32 bytes, never splitting a UTF-8 character.
  const std::string s = std::string(31, 'x') + "\xc3\xa9" + "tail";
  EXPECT_EQ(TokenForMessage(s, 0, s.size()), std::string(31, 'x') + "...");
  EXPECT_EQ(TokenForMessage("a\nb", 0, 3), "a\\x0Ab");
}

}  // namespace
}  // namespace strata::query::filter
