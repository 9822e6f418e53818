// Little-endian fixed-width integer encoding for Strata's own binary files (bloom filters,
// primary-key indexes). Byte-by-byte, so it is independent of host byte order and alignment.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace strata::format {

/// Appends the 4 / 8 bytes of `v`, least significant first.
inline void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/// Reads 4 / 8 bytes at `p` (caller checks the bounds).
inline uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
inline uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace strata::format
