// Internal to the filter evaluator: dates and timestamps as text and between units.
// Calendar: proleptic Gregorian, via common/civil_date.h (H. Hinnant's era algorithm).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "arrow/type.h"

namespace strata::query::filter::internal {

/// 'YYYY-MM-DD' -> days since the epoch; nullopt when malformed or not a real date.
std::optional<int64_t> ParseDate(std::string_view s);

/// 'YYYY-MM-DD', 'YYYY-MM-DD[ T]hh:mm[:ss[.f{1,9}]]' (optional trailing 'Z') -> nanoseconds
/// since the epoch (UTC); nullopt when malformed or out of the int64 nanosecond range when
/// `unit` is nanoseconds. Returned in `unit` (truncated toward negative infinity).
std::optional<int64_t> ParseTimestamp(std::string_view s, arrow::TimeUnit unit);

/// Days -> 'YYYY-MM-DD'.
std::string FormatDate(int64_t days);
/// A timestamp value in `unit` -> 'YYYY-MM-DD hh:mm:ss[.fraction]' (fraction digits of the unit,
/// omitted when zero).
std::string FormatTimestamp(int64_t value, arrow::TimeUnit unit);

/// Steps of the temporal ladder, coarsest first. Comparisons run in the finer of two scales.
enum class Scale : uint8_t { kDay, kSecond, kMilli, kMicro, kNano };

/// Scale of a date32 (days), date64 (ms) or timestamp (its unit) type.
Scale ScaleOf(const arrow::DataType& t);
/// Nanoseconds per step of `s`.
int64_t NanosPer(Scale s);
/// `v` in scale `from` expressed in the finer-or-equal scale `to` (saturating on overflow).
int64_t ScaleUp(int64_t v, Scale from, Scale to);
/// `v` in scale `from` expressed in the coarser-or-equal scale `to` (floor division).
int64_t ScaleDown(int64_t v, Scale from, Scale to);

}  // namespace strata::query::filter::internal
