// Parser of Strata's SQL filter / projection expressions (ast.h): a hand-written recursive
// descent parser over a tokenizer, DataFusion / PostgreSQL precedence:
//   OR < AND < NOT < comparison (= != <> < <= > >=), IS [NOT] NULL, [NOT] IN, [NOT] BETWEEN,
//   [NOT] LIKE < + - < * / % < unary minus < primary.
// Primaries: literals (integers, decimals, exponents, 'strings' with '' escaping, TRUE, FALSE,
// NULL, DATE 'yyyy-mm-dd', TIMESTAMP 'yyyy-mm-dd[ T]hh:mm:ss[.ffffff]'), identifiers
// ([A-Za-z_][A-Za-z0-9_]*, or `backtick quoted` with `` escaping, or "double quoted"), dotted
// paths a.b.c, CAST(x AS type), function calls name(args...), parenthesized expressions.
// Keywords are case-insensitive. A unary minus directly before a numeric literal folds into
// the literal (-9223372036854775808 is an int).
// Errors: Invalid with a message "<what> at position N" where N is the 0-based byte offset of
// the offending token (and the token itself, capped at 32 bytes), e.g.
//   "filter: unexpected token 'b' at position 6" (trailing tokens), "filter: expected an
//   expression but found '=' at position 4", "filter: unterminated string literal at
//   position 4", "filter: expected ')' at position 10 (end of input)",
//   "filter: invalid date ''2023-02-30'' (expected 'yyyy-mm-dd') at position 5",
//   "filter: is 70000 bytes long; the limit is 65536 bytes (max_length)",
//   "filter: nested deeper than 256 levels (max_depth) at position 300".
// The parser never recurses more than max_depth levels (deeply nested input cannot overflow the
// stack), rejects trees deeper than max_depth (a leaf is one level; long chains like
// "a + a + ..." count too) and never reads outside the input. Expr::ToString of an accepted
// expression parses back to the same text, given room for its extra parentheses (up to twice
// the nesting). Fuzzed by fuzz/filter_parser_fuzz.cc.
// Grammar decisions: a comparison chain is left-associative ("a = b = c" is "(a = b) = c");
// DATE / TIMESTAMP start a literal only before a string, else they are names ("date = 1");
// timestamps take 1-9 fraction digits, truncated to microseconds; CAST types are one word
// ("double precision" reads as "double"); a unary plus is accepted before a number only.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/status.h"
#include "query/filter/ast.h"

namespace strata::query::filter {

struct ParseOptions {
  /// Longest accepted text in bytes (DESIGN.md §9 filter length limit).
  size_t max_length = 64 * 1024;
  /// Deepest accepted nesting (parentheses, operators, calls).
  int max_depth = 256;
  /// Prefix of error messages, e.g. "filter", "update expression for 'x'".
  std::string_view context = "filter";
};

/// Parses one expression; the whole text must be consumed (trailing tokens are an error).
/// Empty or all-whitespace text is Invalid ("... is empty"). Each thread keeps its last
/// successful parse (text up to 4 KiB) and returns that same tree for the same text again.
Result<ExprPtr> ParseExpression(std::string_view sql, const ParseOptions& options = {});

}  // namespace strata::query::filter
