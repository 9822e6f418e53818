#include "query/filter/like.h"

namespace strata::query::filter::internal {

LikePattern::LikePattern(std::string_view pattern) {
  std::vector<Segment> parts(1);
  for (const char c : pattern) {
    if (c == '%') {
      parts.emplace_back();
      continue;
    }
    if (c == '_') parts.back().has_any = true;
    parts.back().chars.push_back(c);
  }
  bool any_underscore = false;
  for (const Segment& p : parts) any_underscore |= p.has_any;
  first_ = std::move(parts.front());
  if (parts.size() == 1) {
    if (!any_underscore) shape_ = Shape::kExact;
    return;
  }
  has_percent_ = true;
  last_ = std::move(parts.back());
  for (size_t i = 1; i + 1 < parts.size(); ++i) {
    if (!parts[i].chars.empty()) middle_.push_back(std::move(parts[i]));
  }
  if (any_underscore) return;
  if (middle_.empty() && last_.chars.empty()) {
    shape_ = Shape::kPrefix;
  } else if (middle_.empty() && first_.chars.empty()) {
    shape_ = Shape::kSuffix;
  } else if (middle_.size() == 1 && first_.chars.empty() && last_.chars.empty()) {
    shape_ = Shape::kContains;
  }
}

long LikePattern::MatchAt(const Segment& seg, std::string_view text, size_t pos) {
  if (!seg.has_any) {
    if (text.size() - pos < seg.chars.size()) return -1;
    return text.compare(pos, seg.chars.size(), seg.chars) == 0 ? static_cast<long>(seg.chars.size())
                                                               : -1;
  }
  size_t p = pos;
  for (const char c : seg.chars) {
    if (p >= text.size()) return -1;
    if (c == '_') {
      const size_t len = Utf8Length(static_cast<unsigned char>(text[p]));
      p += len <= text.size() - p ? len : 1;
    } else {
      if (text[p] != c) return -1;
      ++p;
    }
  }
  return static_cast<long>(p - pos);
}

long LikePattern::FindFrom(const Segment& seg, std::string_view text, size_t from, size_t* end) {
  if (!seg.has_any) {
    const size_t at = text.find(seg.chars, from);
    if (at == std::string_view::npos) return -1;
    *end = at + seg.chars.size();
    return static_cast<long>(at);
  }
  for (size_t p = from; p <= text.size(); ++p) {
    // Only start at a character boundary (not a UTF-8 continuation byte).
    if (p < text.size() && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80 && p != from) {
      continue;
    }
    const long len = MatchAt(seg, text, p);
    if (len >= 0) {
      *end = p + static_cast<size_t>(len);
      return static_cast<long>(p);
    }
  }
  return -1;
}

bool LikePattern::Match(std::string_view text) const {
  switch (shape_) {
    case Shape::kExact:
      return text == first_.chars;
    case Shape::kPrefix:
      return text.size() >= first_.chars.size() &&
             text.compare(0, first_.chars.size(), first_.chars) == 0;
    case Shape::kSuffix:
      return text.size() >= last_.chars.size() &&
             text.compare(text.size() - last_.chars.size(), last_.chars.size(), last_.chars) == 0;
    case Shape::kContains:
      return text.find(middle_[0].chars) != std::string_view::npos;
    case Shape::kGeneral:
      break;
  }
  const long head = MatchAt(first_, text, 0);
  if (head < 0) return false;
  if (!has_percent_) return static_cast<size_t>(head) == text.size();
  size_t pos = static_cast<size_t>(head);
  for (const Segment& seg : middle_) {
    size_t end;
    if (FindFrom(seg, text, pos, &end) < 0) return false;
    pos = end;
  }
  if (last_.chars.empty()) return true;
  if (!last_.has_any) {
    if (text.size() < pos + last_.chars.size()) return false;
    return text.compare(text.size() - last_.chars.size(), last_.chars.size(), last_.chars) == 0;
  }
  for (size_t p = pos; p <= text.size(); ++p) {
    if (p < text.size() && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80 && p != pos) {
      continue;
    }
    const long len = MatchAt(last_, text, p);
    if (len >= 0 && p + static_cast<size_t>(len) == text.size()) return true;
  }
  return false;
}

}  // namespace strata::query::filter::internal
