// Bit-reversed file names for WAL positions and shard-manifest versions (DESIGN.md §3, after
// the Lance MemWAL specification): the 64-bit number written as 64 binary digits, least
// significant bit first, so consecutive numbers spread over the key space of an object store
// (5 -> "1010" followed by 60 '0').
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::format {

/// Number of characters of a bit-reversed name (without extension).
inline constexpr size_t kBitReversedLength = 64;

/// `value` as 64 characters '0'/'1', bit 0 first.
std::string ToBitReversed(uint64_t value);

/// Inverse of ToBitReversed. Errors: Invalid when `name` is not exactly 64 characters of
/// '0'/'1' (naming the name and the offending character or length).
Result<uint64_t> FromBitReversed(std::string_view name);

}  // namespace strata::format
