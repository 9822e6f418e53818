#include "query/filter/lexer.h"

#include <cstdint>

namespace strata::query::filter {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWordStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsWordChar(char c) { return IsWordStart(c) || IsDigit(c); }

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when the bytes there are not
// one (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

Status LexError(std::string_view context, const std::string& what, size_t pos) {
  return Status::Invalid(std::string(context) + ": " + what + " at position " +
                         std::to_string(pos));
}

}  // namespace

bool IsKeyword(std::string_view word, std::string_view keyword) {
  if (word.size() != keyword.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != keyword[i]) return false;
  }
  return true;
}

std::string TokenForMessage(std::string_view sql, size_t begin, size_t end) {
  constexpr size_t kMaxBytes = 32;
  static const char kHex[] = "0123456789ABCDEF";
  if (begin > sql.size()) begin = sql.size();
  if (end > sql.size()) end = sql.size();
  std::string out;
  size_t i = begin;
  size_t used = 0;
  while (i < end && used < kMaxBytes) {
    const uint8_t c = static_cast<uint8_t>(sql[i]);
    size_t n = Utf8SequenceLength(sql.substr(0, end), i);
    if (n == 1 && c >= 0x20 && c != 0x7F) {
      out.push_back(static_cast<char>(c));
    } else if (n > 1) {
      if (used + n > kMaxBytes) break;
      out.append(sql.substr(i, n));
    } else {
      n = 1;  // a control character or an invalid byte
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
    i += n;
    used += n;
  }
  if (i < end) out += "...";
  return out;
}

Result<std::vector<Token>> Tokenize(std::string_view sql, std::string_view context) {
  std::vector<Token> tokens;
  const size_t n = sql.size();
  size_t i = 0;
  const auto at = [&](size_t k) -> char { return k < n ? sql[k] : '\0'; };
  while (true) {
    while (i < n && IsSpace(sql[i])) ++i;
    Token t;
    t.begin = i;
    if (i >= n) {
      t.kind = TokenKind::kEnd;
      t.end = n;
      tokens.push_back(std::move(t));
      return tokens;
    }
    const char c = sql[i];
    if (IsWordStart(c)) {
      size_t j = i + 1;
      while (j < n && IsWordChar(sql[j])) ++j;
      t.kind = TokenKind::kWord;
      t.text.assign(sql.substr(i, j - i));
      i = j;
    } else if (IsDigit(c) || (c == '.' && IsDigit(at(i + 1)))) {
      size_t j = i;
      while (j < n && IsDigit(sql[j])) ++j;
      if (at(j) == '.') {
        ++j;
        while (j < n && IsDigit(sql[j])) ++j;
      }
      bool malformed = false;
      if (at(j) == 'e' || at(j) == 'E') {
        ++j;
        if (at(j) == '+' || at(j) == '-') ++j;
        if (!IsDigit(at(j))) malformed = true;
        while (j < n && IsDigit(sql[j])) ++j;
      }
      // A number running into a word ("1abc", "1e5x") or a second point ("1.2.3").
      while (j < n && (IsWordChar(sql[j]) || sql[j] == '.')) {
        malformed = true;
        ++j;
      }
      if (malformed) {
        return LexError(context, "malformed number '" + TokenForMessage(sql, i, j) + "'", i);
      }
      t.kind = TokenKind::kNumber;
      t.text.assign(sql.substr(i, j - i));
      i = j;
    } else if (c == '\'' || c == '`' || c == '"') {
      const char quote = c;
      size_t j = i + 1;
      bool closed = false;
      while (j < n) {
        if (sql[j] == quote) {
          if (at(j + 1) == quote) {
            t.text.push_back(quote);
            j += 2;
            continue;
          }
          closed = true;
          ++j;
          break;
        }
        t.text.push_back(sql[j]);
        ++j;
      }
      if (!closed) {
        return LexError(
            context, quote == '\'' ? "unterminated string literal" : "unterminated quoted name", i);
      }
      if (quote == '\'') {
        t.kind = TokenKind::kString;
      } else {
        if (t.text.empty()) return LexError(context, "empty quoted identifier", i);
        t.kind = TokenKind::kQuotedName;
      }
      i = j;
    } else {
      size_t len = 1;
      switch (c) {
        case '(':
          t.kind = TokenKind::kLParen;
          break;
        case ')':
          t.kind = TokenKind::kRParen;
          break;
        case ',':
          t.kind = TokenKind::kComma;
          break;
        case '.':
          t.kind = TokenKind::kDot;
          break;
        case '=':
          t.kind = TokenKind::kEq;
          break;
        case '+':
          t.kind = TokenKind::kPlus;
          break;
        case '-':
          t.kind = TokenKind::kMinus;
          break;
        case '*':
          t.kind = TokenKind::kStar;
          break;
        case '/':
          t.kind = TokenKind::kSlash;
          break;
        case '%':
          t.kind = TokenKind::kPercent;
          break;
        case '!':
          if (at(i + 1) != '=') {
            return LexError(context, "unexpected character '!'", i);
          }
          t.kind = TokenKind::kNe;
          len = 2;
          break;
        case '<':
          if (at(i + 1) == '=') {
            t.kind = TokenKind::kLe;
            len = 2;
          } else if (at(i + 1) == '>') {
            t.kind = TokenKind::kNe;
            len = 2;
          } else {
            t.kind = TokenKind::kLt;
          }
          break;
        case '>':
          if (at(i + 1) == '=') {
            t.kind = TokenKind::kGe;
            len = 2;
          } else {
            t.kind = TokenKind::kGt;
          }
          break;
        default: {
          size_t width = Utf8SequenceLength(sql, i);
          if (width == 0) width = 1;
          return LexError(context,
                          "unexpected character '" + TokenForMessage(sql, i, i + width) + "'", i);
        }
      }
      t.text = std::string(sql.data() + i, len);
      i += len;
    }
    t.end = i;
    tokens.push_back(std::move(t));
  }
}

}  // namespace strata::query::filter
