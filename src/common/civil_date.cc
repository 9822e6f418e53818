#include "common/civil_date.h"

namespace strata {

// Both conversions shift the year to start on March 1, so the leap day is the last day of the
// shifted year, and count in 400-year eras of 146097 days (the Gregorian cycle). Day 0 of era 0
// (0000-03-01) is 719468 days before 1970-01-01.
namespace {
constexpr int64_t kDaysPerEra = 146097;
constexpr int64_t kEpochShift = 719468;
}  // namespace

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  if (m <= 2) --y;  // January and February belong to the previous shifted year
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t year_of_era = y - era * 400;  // [0, 399]
  const int64_t month = m;
  const int64_t shifted_month = month > 2 ? month - 3 : month + 9;  // [0, 11], 0 = March
  const int64_t day_of_year =
      (153 * shifted_month + 2) / 5 + static_cast<int64_t>(d) - 1;  // [0, 365]
  const int64_t day_of_era =
      year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;  // [0, 146096]
  return era * kDaysPerEra + day_of_era - kEpochShift;
}

CivilDate CivilFromDays(int64_t days) {
  const int64_t z = days + kEpochShift;
  const int64_t era = (z >= 0 ? z : z - (kDaysPerEra - 1)) / kDaysPerEra;
  const int64_t day_of_era = z - era * kDaysPerEra;  // [0, 146096]
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) /
      365;  // [0, 399]
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // [0, 365]
  const int64_t shifted_month = (5 * day_of_year + 2) / 153;                   // [0, 11]
  CivilDate out;
  out.day = static_cast<unsigned>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  out.month = static_cast<unsigned>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  out.year = year_of_era + era * 400 + (out.month <= 2 ? 1 : 0);
  return out;
}

bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

}  // namespace strata
