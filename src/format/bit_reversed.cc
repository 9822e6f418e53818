#include "format/bit_reversed.h"

namespace strata::format {

std::string ToBitReversed(uint64_t value) {
  std::string out(kBitReversedLength, '0');
  for (size_t i = 0; i < kBitReversedLength; ++i) {
    if ((value >> i) & 1u) out[i] = '1';
  }
  return out;
}

Result<uint64_t> FromBitReversed(std::string_view name) {
  if (name.size() != kBitReversedLength) {
    return Status::Invalid("bit-reversed name '" + std::string(name.substr(0, 80)) + "' has " +
                           std::to_string(name.size()) + " characters, expected 64");
  }
  uint64_t value = 0;
  for (size_t i = 0; i < kBitReversedLength; ++i) {
    char c = name[i];
    if (c == '1') {
      value |= uint64_t{1} << i;
    } else if (c != '0') {
      return Status::Invalid("bit-reversed name '" + std::string(name) +
                             "' has a character other than '0'/'1' at offset " + std::to_string(i));
    }
  }
  return value;
}

}  // namespace strata::format
