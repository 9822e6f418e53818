#include "query/filter/temporal.h"

#include <cstdio>
#include <limits>

#include "common/civil_date.h"

namespace strata::query::filter::internal {

namespace {

// Reads exactly `n` digits at *pos.
bool Digits(std::string_view s, size_t* pos, int n, int64_t* out) {
  if (*pos + static_cast<size_t>(n) > s.size()) return false;
  int64_t v = 0;
  for (int k = 0; k < n; ++k) {
    const char c = s[*pos + static_cast<size_t>(k)];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += static_cast<size_t>(n);
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parses the date part at *pos.
bool DatePart(std::string_view s, size_t* pos, int64_t* days) {
  int64_t y, m, d;
  if (!Digits(s, pos, 4, &y) || !Expect(s, pos, '-') || !Digits(s, pos, 2, &m) ||
      !Expect(s, pos, '-') || !Digits(s, pos, 2, &d)) {
    return false;
  }
  if (m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(m))) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

}  // namespace

std::optional<int64_t> ParseDate(std::string_view s) {
  s = Trim(s);
  size_t pos = 0;
  int64_t days;
  if (!DatePart(s, &pos, &days) || pos != s.size()) return std::nullopt;
  return days;
}

std::optional<int64_t> ParseTimestamp(std::string_view s, arrow::TimeUnit unit) {
  s = Trim(s);
  size_t pos = 0;
  int64_t days;
  if (!DatePart(s, &pos, &days)) return std::nullopt;
  int64_t hh = 0, mm = 0, ss = 0, nanos = 0;
  if (pos < s.size() && (s[pos] == ' ' || s[pos] == 'T')) {
    ++pos;
    if (!Digits(s, &pos, 2, &hh) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &mm)) {
      return std::nullopt;
    }
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!Digits(s, &pos, 2, &ss)) return std::nullopt;
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        int digits = 0;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          if (digits == 9) return std::nullopt;
          nanos = nanos * 10 + (s[pos] - '0');
          ++digits;
          ++pos;
        }
        if (digits == 0) return std::nullopt;
        for (int k = digits; k < 9; ++k) nanos *= 10;
      }
    }
    if (pos < s.size() && s[pos] == 'Z') ++pos;
  }
  if (pos != s.size() || hh > 23 || mm > 59 || ss > 59) return std::nullopt;
  const int64_t secs = days * 86400 + hh * 3600 + mm * 60 + ss;
  const int64_t per = NanosPer(ScaleOf(*arrow::timestamp(unit)));
  const int64_t units_per_sec = 1000000000 / per;
  int64_t v;
  if (__builtin_mul_overflow(secs, units_per_sec, &v)) return std::nullopt;
  if (__builtin_add_overflow(v, nanos / per, &v)) return std::nullopt;
  return v;
}

std::string FormatDate(int64_t days) {
  const CivilDate c = CivilFromDays(days);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02u", static_cast<long long>(c.year), c.month,
                c.day);
  return buf;
}

std::string FormatTimestamp(int64_t value, arrow::TimeUnit unit) {
  const Scale sc = ScaleOf(*arrow::timestamp(unit));
  const int64_t per_sec = 1000000000 / NanosPer(sc);
  int64_t secs = value / per_sec;
  int64_t frac = value % per_sec;
  if (frac < 0) {
    frac += per_sec;
    --secs;
  }
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  std::string out = FormatDate(days);
  char buf[48];
  std::snprintf(buf, sizeof(buf), " %02lld:%02lld:%02lld", static_cast<long long>(rem / 3600),
                static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
  out += buf;
  if (frac != 0) {
    const int width = sc == Scale::kMilli ? 3 : sc == Scale::kMicro ? 6 : 9;
    std::snprintf(buf, sizeof(buf), ".%0*lld", width, static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

Scale ScaleOf(const arrow::DataType& t) {
  switch (t.id()) {
    case arrow::TypeId::kDate32:
      return Scale::kDay;
    case arrow::TypeId::kDate64:
      return Scale::kMilli;
    default:
      switch (t.unit()) {
        case arrow::TimeUnit::kSecond:
          return Scale::kSecond;
        case arrow::TimeUnit::kMilli:
          return Scale::kMilli;
        case arrow::TimeUnit::kMicro:
          return Scale::kMicro;
        case arrow::TimeUnit::kNano:
          return Scale::kNano;
      }
  }
  return Scale::kNano;
}

int64_t NanosPer(Scale s) {
  switch (s) {
    case Scale::kDay:
      return 86400LL * 1000000000LL;
    case Scale::kSecond:
      return 1000000000LL;
    case Scale::kMilli:
      return 1000000LL;
    case Scale::kMicro:
      return 1000LL;
    case Scale::kNano:
      return 1;
  }
  return 1;
}

int64_t ScaleUp(int64_t v, Scale from, Scale to) {
  const int64_t f = NanosPer(from) / NanosPer(to);
  int64_t out;
  if (__builtin_mul_overflow(v, f, &out)) {
    return v < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  return out;
}

int64_t ScaleDown(int64_t v, Scale from, Scale to) {
  const int64_t f = NanosPer(to) / NanosPer(from);
  int64_t q = v / f;
  if (v % f != 0 && v < 0) --q;
  return q;
}

}  // namespace strata::query::filter::internal
