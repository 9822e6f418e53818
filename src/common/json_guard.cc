#include "common/json_guard.h"

namespace strata {

Status CheckJsonDepth(std::string_view text, std::string_view what, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skip the escaped character (\" must not end the string)
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return Status::Invalid(std::string(what) + ": JSON nesting is deeper than the limit of " +
                               std::to_string(max_depth) + " levels (at byte " + std::to_string(i) +
                               ")");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return Status::OK();
}

std::string Excerpt(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Do not split a UTF-8 sequence: back up over continuation bytes (10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string DescribeJsonParseError(size_t byte, std::string_view parser_what) {
  const size_t colon = parser_what.find(": ");
  if (colon != std::string_view::npos) parser_what.remove_prefix(colon + 2);
  return "at byte " + std::to_string(byte) + ": " + Excerpt(parser_what, 200);
}

}  // namespace strata
