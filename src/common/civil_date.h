// Proleptic Gregorian calendar arithmetic: civil dates (year, month, day) <-> days since
// 1970-01-01. Algorithm: the 400-year-era method of Howard Hinnant, "chrono-Compatible
// Low-Level Date Algorithms" (days_from_civil / civil_from_days; public description, our own
// code). Years are astronomical (year 0 exists, -1 is 2 BC); no range checks are made, so
// callers validate month/day (DaysInMonth) before converting.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace strata {

/// A civil date: month 1-12, day 1-31.
struct CivilDate {
  int64_t year = 1970;
  unsigned month = 1;
  unsigned day = 1;
};

/// Days since 1970-01-01 (negative before) of the civil date `y`-`m`-`d`. Requires month
/// 1-12 and day 1-31 (not checked); exact for |y| up to ~2.5e13 (no int64 overflow).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);

/// The civil date `days` days after 1970-01-01 (before it when negative). Exact for |days|
/// up to ~9.2e18 minus 719468 (no int64 overflow).
CivilDate CivilFromDays(int64_t days);

/// Whether `y` is a Gregorian leap year (divisible by 4, and not by 100 unless by 400).
bool IsLeapYear(int64_t y);

/// Days in month `m` (1-12, not checked) of year `y`: 28-31.
unsigned DaysInMonth(int64_t y, unsigned m);

}  // namespace strata
