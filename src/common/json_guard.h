// Guards for untrusted JSON text (request bodies): a nesting-depth limit checked before any
// parser builds a tree, and short excerpts for error messages.
// Why: nlohmann::json parses iteratively but serializes (dump) recursively, so a value nested
// ~100,000 levels deep overflows the stack when echoed into an error message; and echoing
// whole values lets one request produce megabyte-sized error bodies and log lines.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata {

/// Deepest accepted nesting of arrays/objects in a JSON request body. Insert rows use
/// 2 levels (array of row objects) plus one per struct/list level of a column.
inline constexpr int kMaxJsonDepth = 64;

/// Longest excerpt of untrusted text echoed in an error message, in bytes.
inline constexpr size_t kMaxEchoBytes = 100;

/// Scans `text` (JSON, possibly invalid) and fails when arrays/objects nest deeper than
/// `max_depth`. Brackets inside strings (with \" escapes) are not counted. Linear, no
/// allocation, no recursion. Malformed JSON is not reported here (the parser does that).
/// Errors: Invalid "<what>: JSON nesting is deeper than the limit of N levels (at byte B)".
Status CheckJsonDepth(std::string_view text, std::string_view what, int max_depth = kMaxJsonDepth);

/// `text` itself when it has at most `max_bytes` bytes, else its first `max_bytes` bytes
/// (cut on a UTF-8 boundary) followed by "... (N bytes)".
std::string Excerpt(std::string_view text, size_t max_bytes = kMaxEchoBytes);

/// "at byte B: <reason>" for a JSON parser failure, where `parser_what` is the parser's own
/// message (nlohmann: "[json.exception.parse_error.101] parse error at line L, column C:
/// <reason>"); the prefix up to the first ": " is dropped and the rest capped at 200 bytes.
std::string DescribeJsonParseError(size_t byte, std::string_view parser_what);

}  // namespace strata
