#include "io/s3_wire.h"

#include <algorithm>
#include <charconv>
#include <ctime>

namespace strata::io::s3 {
namespace {

bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// Parses a decimal run of exactly `n` digits at s[pos]; -1 when not digits.
int Digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

int64_t CivilToMicros(int year, int month, int day, int h, int m, int s, int64_t micros) {
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) {
    return 0;
  }
  struct tm tm = {};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  const time_t t = ::timegm(&tm);
  if (t <= 0) return 0;
  return static_cast<int64_t>(t) * 1'000'000 + micros;
}

}  // namespace

std::string UriEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (Unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params) {
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += UriEncode(name, false);
    out.push_back('=');
    out += UriEncode(value, false);
  }
  return out;
}

Result<std::string> XmlUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c != '&') {
      out.push_back(c);
      ++i;
      continue;
    }
    const size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      return Status::Invalid("XML text has an unterminated entity at offset " + std::to_string(i));
    }
    const std::string_view ent = text.substr(i + 1, semi - i - 1);
    if (ent == "amp") {
      out.push_back('&');
    } else if (ent == "lt") {
      out.push_back('<');
    } else if (ent == "gt") {
      out.push_back('>');
    } else if (ent == "quot") {
      out.push_back('"');
    } else if (ent == "apos") {
      out.push_back('\'');
    } else if (ent.size() >= 2 && ent[0] == '#') {
      const bool hex = ent[1] == 'x' || ent[1] == 'X';
      const std::string_view digits = ent.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      auto [p, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || cp == 0 ||
          cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return Status::Invalid("XML text has a bad character reference '&" + std::string(ent) +
                               ";'");
      }
      AppendUtf8(cp, &out);
    } else {
      return Status::Invalid("XML text has an unknown entity '&" + std::string(ent) + ";'");
    }
    i = semi + 1;
  }
  return out;
}

std::optional<std::string_view> XmlElement(std::string_view xml, std::string_view tag, size_t from,
                                           size_t* end) {
  const std::string open = "<" + std::string(tag);
  size_t pos = from;
  while (true) {
    pos = xml.find(open, pos);
    if (pos == std::string_view::npos) return std::nullopt;
    const size_t after = pos + open.size();
    if (after >= xml.size()) return std::nullopt;
    if (xml.compare(after, 2, "/>") == 0) {
      if (end != nullptr) *end = after + 2;
      return std::string_view();
    }
    // "<Tag>" or "<Tag attr=...>"; anything else ("<TagLonger>") is another element.
    if (xml[after] == '>' || xml[after] == ' ') {
      const size_t gt = xml.find('>', after);
      if (gt == std::string_view::npos) return std::nullopt;
      const std::string close = "</" + std::string(tag) + ">";
      const size_t stop = xml.find(close, gt + 1);
      if (stop == std::string_view::npos) return std::nullopt;
      if (end != nullptr) *end = stop + close.size();
      return xml.substr(gt + 1, stop - gt - 1);
    }
    pos = after;
  }
}

Result<ListPage> ParseListPage(std::string_view xml) {
  if (xml.find("<ListBucketResult") == std::string_view::npos) {
    return Status::Corruption("S3 list response is not a ListBucketResult: " +
                              std::string(xml.substr(0, 200)));
  }
  ListPage page;
  size_t pos = 0, end = 0;
  while (auto contents = XmlElement(xml, "Contents", pos, &end)) {
    pos = end;
    ListedObject obj;
    auto key = XmlElement(*contents, "Key");
    if (!key) return Status::Corruption("S3 list response has a <Contents> without <Key>");
    auto unescaped = XmlUnescape(*key);
    if (!unescaped.ok()) return Status::Corruption("S3 list key: " + unescaped.status().message());
    obj.key = std::move(*unescaped);
    auto size = XmlElement(*contents, "Size");
    if (!size || size->empty()) {
      return Status::Corruption("S3 list response has no <Size> for '" + obj.key + "'");
    }
    auto [p, ec] = std::from_chars(size->data(), size->data() + size->size(), obj.size);
    if (ec != std::errc() || p != size->data() + size->size() || obj.size < 0) {
      return Status::Corruption("S3 list response has a bad <Size> '" + std::string(*size) +
                                "' for '" + obj.key + "'");
    }
    if (auto lm = XmlElement(*contents, "LastModified")) obj.mtime_micros = ParseIso8601(*lm);
    page.objects.push_back(std::move(obj));
  }
  pos = 0;
  while (auto cp = XmlElement(xml, "CommonPrefixes", pos, &end)) {
    pos = end;
    auto prefix = XmlElement(*cp, "Prefix");
    if (!prefix)
      return Status::Corruption("S3 list response has <CommonPrefixes> without <Prefix>");
    auto unescaped = XmlUnescape(*prefix);
    if (!unescaped.ok())
      return Status::Corruption("S3 list prefix: " + unescaped.status().message());
    page.common_prefixes.push_back(std::move(*unescaped));
  }
  if (auto t = XmlElement(xml, "IsTruncated")) page.truncated = *t == "true";
  if (page.truncated) {
    auto token = XmlElement(xml, "NextContinuationToken");
    if (!token || token->empty()) {
      return Status::Corruption("S3 list response is truncated but has no NextContinuationToken");
    }
    auto unescaped = XmlUnescape(*token);
    if (!unescaped.ok())
      return Status::Corruption("S3 list token: " + unescaped.status().message());
    page.next_token = std::move(*unescaped);
  }
  return page;
}

std::string ErrorSummary(std::string_view xml) {
  auto err = XmlElement(xml, "Error");
  if (!err) return "";
  std::string out;
  if (auto code = XmlElement(*err, "Code")) out = std::string(*code);
  if (auto msg = XmlElement(*err, "Message"); msg && !msg->empty()) {
    auto text = XmlUnescape(*msg);
    out += (out.empty() ? "" : ": ") + (text.ok() ? *text : std::string(*msg));
  }
  return out;
}

int64_t ParseHttpDate(std::string_view s) {
  // "Wed, 02 Dec 2026 00:20:28 GMT"
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const size_t comma = s.find(", ");
  if (comma == std::string_view::npos) return 0;
  s.remove_prefix(comma + 2);
  if (s.size() < 24) return 0;
  const int day = Digits(s, 0, 2);
  const size_t mon = kMonths.find(s.substr(3, 3));
  const int year = Digits(s, 7, 4);
  const int h = Digits(s, 12, 2), m = Digits(s, 15, 2), sec = Digits(s, 18, 2);
  if (day < 0 || mon == std::string_view::npos || mon % 3 != 0 || year < 0 || h < 0 || m < 0 ||
      sec < 0 || s.substr(21, 3) != "GMT") {
    return 0;
  }
  return CivilToMicros(year, static_cast<int>(mon / 3) + 1, day, h, m, sec, 0);
}

int64_t ParseIso8601(std::string_view s) {
  // "2026-12-02T00:20:28.123Z"
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return 0;
  }
  const int year = Digits(s, 0, 4), month = Digits(s, 5, 2), day = Digits(s, 8, 2);
  const int h = Digits(s, 11, 2), m = Digits(s, 14, 2), sec = Digits(s, 17, 2);
  if (year < 0 || month < 0 || day < 0 || h < 0 || m < 0 || sec < 0) return 0;
  size_t pos = 19;
  int64_t micros = 0;
  if (s[pos] == '.') {
    int64_t scale = 100'000;
    ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      micros += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  if (pos != s.size() - 1 || s[pos] != 'Z') return 0;
  return CivilToMicros(year, month, day, h, m, sec, micros);
}

}  // namespace strata::io::s3
