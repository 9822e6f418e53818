// Small ASCII string helpers shared across modules.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace strata {

/// Whether `a` and `b` are equal ignoring ASCII case ('A'-'Z' match 'a'-'z'); every other
/// byte, including non-ASCII UTF-8, must match exactly. Locale-independent.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace strata
