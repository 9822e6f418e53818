#include "common/civil_date.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace strata {
namespace {

TEST(CivilDateTest, KnownDays) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(2024, 2, 29), 19782);
  EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);
  EXPECT_EQ(DaysFromCivil(0, 3, 1), -719468);

  const CivilDate d = CivilFromDays(19782);
  EXPECT_EQ(d.year, 2024);
  EXPECT_EQ(d.month, 2u);
  EXPECT_EQ(d.day, 29u);
  const CivilDate e = CivilFromDays(-1);
  EXPECT_EQ(e.year, 1969);
  EXPECT_EQ(e.month, 12u);
  EXPECT_EQ(e.day, 31u);
}

TEST(CivilDateTest, LeapYearsAndMonthLengths) {
  EXPECT_TRUE(IsLeapYear(2000));
  EXPECT_TRUE(IsLeapYear(2024));
  EXPECT_TRUE(IsLeapYear(0));
  EXPECT_TRUE(IsLeapYear(-4));
  EXPECT_FALSE(IsLeapYear(1900));
  EXPECT_FALSE(IsLeapYear(2100));
  EXPECT_FALSE(IsLeapYear(2023));
  EXPECT_FALSE(IsLeapYear(-1));
  EXPECT_EQ(DaysInMonth(2024, 2), 29u);
  EXPECT_EQ(DaysInMonth(2023, 2), 28u);
  EXPECT_EQ(DaysInMonth(1900, 2), 28u);
  EXPECT_EQ(DaysInMonth(2023, 1), 31u);
  EXPECT_EQ(DaysInMonth(2023, 4), 30u);
  EXPECT_EQ(DaysInMonth(2023, 12), 31u);
}

// Walks the calendar day by day from 1600-01-01 to 2400-12-31 using only DaysInMonth and
// checks both conversions against the running day count.
TEST(CivilDateTest, MatchesDayByDayWalk) {
  int64_t days = DaysFromCivil(1600, 1, 1);
  ASSERT_EQ(days, -135140);
  for (int64_t y = 1600; y <= 2400; ++y) {
    for (unsigned m = 1; m <= 12; ++m) {
      for (unsigned d = 1; d <= DaysInMonth(y, m); ++d) {
        ASSERT_EQ(DaysFromCivil(y, m, d), days) << y << "-" << m << "-" << d;
        const CivilDate c = CivilFromDays(days);
        ASSERT_EQ(c.year, y);
        ASSERT_EQ(c.month, m);
        ASSERT_EQ(c.day, d);
        ++days;
      }
    }
  }
  EXPECT_EQ(days, DaysFromCivil(2401, 1, 1));
}

TEST(CivilDateTest, RoundTripsFarFromTheEpoch) {
  for (int64_t days : {int64_t{-1000000000}, int64_t{-719469}, int64_t{-719468}, int64_t{2932896},
                       int64_t{1000000000}}) {
    const CivilDate c = CivilFromDays(days);
    EXPECT_GE(c.month, 1u);
    EXPECT_LE(c.month, 12u);
    EXPECT_GE(c.day, 1u);
    EXPECT_LE(c.day, DaysInMonth(c.year, c.month));
    EXPECT_EQ(DaysFromCivil(c.year, c.month, c.day), days);
  }
  const CivilDate before_year0 = CivilFromDays(DaysFromCivil(0, 1, 1) - 1);
  EXPECT_EQ(before_year0.year, -1);
  EXPECT_EQ(before_year0.month, 12u);
  EXPECT_EQ(before_year0.day, 31u);
}

}  // namespace
}  // namespace strata
