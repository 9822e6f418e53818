#include "format/bloom_filter.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "format/little_endian.h"

namespace strata::format {
namespace {

constexpr char kMagic[4] = {'S', 'T', 'B', 'F'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 4 + 4 + 4 + 4 + 8 + 8;
constexpr uint64_t kMaxBits = uint64_t{1} << 36;

}  // namespace

BloomFilter BloomFilter::ForKeys(int64_t expected_keys, double fp_rate) {
  const double n = static_cast<double>(std::max<int64_t>(expected_keys, 1));
  const double p = std::clamp(fp_rate, 1e-6, 0.5);
  const double ln2 = std::log(2.0);
  double m = std::ceil(-n * std::log(p) / (ln2 * ln2));
  uint64_t bits = static_cast<uint64_t>(std::max(m, 64.0));
  bits = (bits + 63) / 64 * 64;
  bits = std::min(bits, kMaxBits);
  double k = std::round(static_cast<double>(bits) / n * ln2);
  uint32_t hashes = static_cast<uint32_t>(std::clamp(k, 1.0, 30.0));
  return BloomFilter(bits, hashes);
}

void BloomFilter::Add(std::string_view key) {
  XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  uint64_t x = h.low64;
  for (uint32_t i = 0; i < num_hashes_; ++i) {
    uint64_t bit = x % num_bits_;
    words_[bit >> 6] |= uint64_t{1} << (bit & 63);
    x += h.high64;
  }
  ++num_keys_;
}

bool BloomFilter::MayContain(std::string_view key) const {
  XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  uint64_t x = h.low64;
  for (uint32_t i = 0; i < num_hashes_; ++i) {
    uint64_t bit = x % num_bits_;
    if ((words_[bit >> 6] & (uint64_t{1} << (bit & 63))) == 0) return false;
    x += h.high64;
  }
  return true;
}

std::string BloomFilter::Serialize() const {
  std::string out;
  out.reserve(kHeaderBytes + num_bits_ / 8 + 8);
  out.append(kMagic, 4);
  PutU32(&out, kFormatVersion);
  PutU32(&out, num_hashes_);
  PutU32(&out, 0);
  PutU64(&out, num_bits_);
  PutU64(&out, num_keys_);
  for (uint64_t w : words_) PutU64(&out, w);
  PutU64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Result<BloomFilter> BloomFilter::Deserialize(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes + 8) {
    return Status::Corruption("bloom filter: " + std::to_string(bytes.size()) +
                              " bytes is shorter than the " + std::to_string(kHeaderBytes + 8) +
                              "-byte header and checksum");
  }
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return Status::Corruption("bloom filter: bad magic (expected \"STBF\")");
  }
  const char* p = bytes.data();
  uint32_t version = GetU32(p + 4);
  if (version != kFormatVersion) {
    return Status::Corruption("bloom filter: unknown format version " + std::to_string(version));
  }
  uint32_t hashes = GetU32(p + 8);
  uint64_t bits = GetU64(p + 16);
  uint64_t keys = GetU64(p + 24);
  if (hashes < 1 || hashes > 30) {
    return Status::Corruption("bloom filter: hash count " + std::to_string(hashes) +
                              " outside [1, 30]");
  }
  if (bits < 64 || bits % 64 != 0 || bits > kMaxBits) {
    return Status::Corruption("bloom filter: bit count " + std::to_string(bits) +
                              " is not a multiple of 64 in [64, 2^36]");
  }
  if (bytes.size() != kHeaderBytes + bits / 8 + 8) {
    return Status::Corruption("bloom filter: " + std::to_string(bytes.size()) +
                              " bytes, expected " + std::to_string(kHeaderBytes + bits / 8 + 8) +
                              " for " + std::to_string(bits) + " bits");
  }
  uint64_t stored = GetU64(p + bytes.size() - 8);
  if (XXH64(p, bytes.size() - 8, 0) != stored) {
    return Status::Corruption("bloom filter: checksum mismatch");
  }
  BloomFilter f(bits, hashes);
  f.num_keys_ = keys;
  const char* w = p + kHeaderBytes;
  for (size_t i = 0; i < f.words_.size(); ++i) f.words_[i] = GetU64(w + 8 * i);
  return f;
}

}  // namespace strata::format
