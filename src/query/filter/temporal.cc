#include "query/filter/temporal.h"

#include <cstdio>
#include <limits>

namespace strata::query::filter::internal {

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

namespace {

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

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
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
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
