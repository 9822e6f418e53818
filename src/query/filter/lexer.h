// Tokenizer of Strata's SQL filter / projection expressions (parser.h): splits the text into
// tokens that carry their 0-based byte range, so parse errors can name a token and its
// position. Lexical grammar (DataFusion / PostgreSQL subset):
//   words        [A-Za-z_][A-Za-z0-9_]*   (keywords are words; the parser compares them
//                                          case-insensitively)
//   quoted names `...` with `` for a backtick, "..." with "" for a double quote; non-empty
//   strings      '...' with '' for a quote; any bytes inside
//   numbers      digits [. digits*] [e|E [+|-] digits]  or  . digits [e ...]; a number may not
//                run into a letter, digit or underscore ("1abc" is an error)
//   operators    = != <> < <= > >= + - * / % ( ) , .
//   whitespace   space, \t, \n, \r, \f, \v separate tokens
// Errors: Invalid "<context>: unterminated string literal at position N", "... unexpected
// character '#' at position N", "... malformed number '1e' at position N", "... empty quoted
// identifier at position N". Never reads outside the input.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::query::filter {

enum class TokenKind {
  kEnd,         // end of input (begin == end == text size)
  kWord,        // identifier or keyword as written
  kQuotedName,  // `...` or "...": text is the name with the escapes removed
  kString,      // '...': text is the value with '' turned into '
  kNumber,      // text is the number as written
  kLParen,      // (
  kRParen,      // )
  kComma,       // ,
  kDot,         // .
  kEq,          // =
  kNe,          // != or <>
  kLt,          // <
  kLe,          // <=
  kGt,          // >
  kGe,          // >=
  kPlus,        // +
  kMinus,       // -
  kStar,        // *
  kSlash,       // /
  kPercent,     // %
};

/// One token: its kind, its byte range [begin, end) in the input, and its text (see TokenKind).
struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t begin = 0;
  size_t end = 0;
  std::string text;
};

/// Splits `sql` into tokens, ending with one kEnd token at position sql.size().
/// Errors: Invalid prefixed with `context` (see the file comment).
Result<std::vector<Token>> Tokenize(std::string_view sql, std::string_view context);

/// The input bytes [begin, end) of a token for an error message: at most 32 bytes (never
/// splitting a UTF-8 character), control characters and invalid UTF-8 bytes written as \xNN.
std::string TokenForMessage(std::string_view sql, size_t begin, size_t end);

/// Whether `word` equals the upper-case ASCII keyword `keyword`, ignoring ASCII case.
bool IsKeyword(std::string_view word, std::string_view keyword);

}  // namespace strata::query::filter
