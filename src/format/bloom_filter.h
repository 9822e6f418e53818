// Bloom filter over encoded primary keys (SSTable bloom_filter.bin, DESIGN.md §1, §6).
// Classic Bloom filter (Bloom 1970) sized for a target false-positive rate p and n keys:
// m = ceil(-n ln p / (ln 2)^2) bits (at least 64, rounded up to a multiple of 64),
// k = round(m/n ln 2) hashes in [1, 30]; probe i uses h1 + i*h2 mod m (Kirsch & Mitzenmacher,
// "Less Hashing, Same Performance", 2006) with h1/h2 the two halves of XXH3-128 (seed 0).
//
// Serialized form (little-endian): "STBF" | u32 format version (1) | u32 k | u32 reserved (0)
// | u64 m (bits) | u64 n (keys added) | m/8 bytes of bits | u64 XXH64 (seed 0) of every
// preceding byte.
// Thread-safety: Add is not thread-safe; concurrent MayContain on an unchanging filter is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::format {

class BloomFilter {
 public:
  /// A filter for `expected_keys` keys (0 treated as 1) at false-positive rate `fp_rate`
  /// (clamped to [1e-6, 0.5]; default about 1%).
  static BloomFilter ForKeys(int64_t expected_keys, double fp_rate = 0.01);

  void Add(std::string_view key);
  /// False means `key` was certainly never added; true means probably added.
  bool MayContain(std::string_view key) const;

  uint64_t num_bits() const { return num_bits_; }
  uint32_t num_hashes() const { return num_hashes_; }
  uint64_t num_keys() const { return num_keys_; }

  std::string Serialize() const;
  /// Errors: Corruption naming what is wrong (magic, version, sizes, checksum mismatch).
  /// Limit: at most 2^36 bits (8 GiB) accepted.
  static Result<BloomFilter> Deserialize(std::string_view bytes);

 private:
  BloomFilter(uint64_t num_bits, uint32_t num_hashes)
      : num_bits_(num_bits), num_hashes_(num_hashes), words_(num_bits / 64, 0) {}
  uint64_t num_bits_;
  uint32_t num_hashes_;
  uint64_t num_keys_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace strata::format
