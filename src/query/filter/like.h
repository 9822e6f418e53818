// Internal to the filter evaluator: SQL LIKE matching (SQL:2016 §8.5 <like predicate>, the
// DataFusion subset): `%` matches any run of characters, `_` exactly one character (one UTF-8
// code point; an invalid byte counts as one character), everything else itself, bytewise and
// case-sensitive; no ESCAPE clause.
// Algorithm: the pattern splits at `%` into segments; the first is anchored at the start, the
// last at the end, the middle ones take their leftmost match (optimal because `%` is the only
// variable-length wildcard), so a match costs O(text * segment) at worst and O(text) for
// patterns without `_` (substring search).
// Thread-safety: a compiled pattern is immutable; Match may run on many threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::query::filter::internal {

class LikePattern {
 public:
  explicit LikePattern(std::string_view pattern);
  /// Whether `text` matches the whole pattern.
  bool Match(std::string_view text) const;

 private:
  struct Segment {
    std::string chars;  // literal bytes, with '_' as the one-character wildcard when has_any
    bool has_any = false;
  };
  // Length in bytes of the match of `seg` at `pos`, or -1.
  static long MatchAt(const Segment& seg, std::string_view text, size_t pos);
  static long FindFrom(const Segment& seg, std::string_view text, size_t from, size_t* end);

  // Shapes without '_' that reduce to one comparison or substring search.
  enum class Shape { kExact, kPrefix, kSuffix, kContains, kGeneral };
  Shape shape_ = Shape::kGeneral;
  bool has_percent_ = false;
  Segment first_;                // anchored at the start (may be empty)
  std::vector<Segment> middle_;  // non-empty segments between '%'s
  Segment last_;                 // anchored at the end (has_percent_ only; may be empty)
};

/// Bytes of the UTF-8 sequence starting with `lead` (1 for an invalid lead byte).
inline size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

}  // namespace strata::query::filter::internal
