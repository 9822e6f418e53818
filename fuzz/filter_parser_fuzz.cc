// libFuzzer target: the SQL filter parser (query/filter/parser.h) on arbitrary text.
// Properties checked on every input:
//   - ParseExpression returns an expression or an Invalid error and never crashes, overflows
//     the stack or reads out of bounds (ASan / UBSan);
//   - an error names a position inside the text ("at position N", N <= size), except the
//     empty and too-long messages;
//   - round trip: the canonical text ToString() of a parsed expression parses again to an
//     expression with the same canonical text (with room for the canonical text's extra
//     parentheses and length: every node is parenthesized, so it can need up to twice the
//     nesting of the input);
//   - monotonic limits: whatever parses with max_depth 8 parses the same with the default.
// Seeds: fuzz/corpus/filter_parser (one expression per file).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "query/filter/parser.h"

namespace {

using strata::query::filter::ParseExpression;
using strata::query::filter::ParseOptions;

void CheckError(const strata::Status& st, size_t size) {
  if (st.code() != strata::StatusCode::kInvalidArgument) std::abort();
  const std::string& m = st.message();
  if (m.rfind("filter: ", 0) != 0) std::abort();
  if (m == "filter: is empty" || m.find("(max_length)") != std::string::npos) return;
  const size_t at = m.rfind(" at position ");
  if (at == std::string::npos) std::abort();
  const size_t position = std::strtoull(m.c_str() + at + 13, nullptr, 10);
  if (position > size) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view sql(reinterpret_cast<const char*>(data), size);
  const ParseOptions defaults;
  auto parsed = ParseExpression(sql, defaults);
  if (!parsed.ok()) {
    CheckError(parsed.status(), size);
  } else {
    const std::string text = (*parsed)->ToString();
    ParseOptions relaxed;
    relaxed.max_length = text.size() + 1;
    relaxed.max_depth = 2 * defaults.max_depth + 1;
    auto again = ParseExpression(text, relaxed);
    if (!again.ok()) std::abort();
    if ((*again)->ToString() != text) std::abort();
  }
  ParseOptions shallow;
  shallow.max_depth = 8;
  auto small = ParseExpression(sql, shallow);
  if (small.ok()) {
    if (!parsed.ok() || (*small)->ToString() != (*parsed)->ToString()) std::abort();
  } else {
    CheckError(small.status(), size);
  }
  return 0;
}
