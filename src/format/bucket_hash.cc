#include "format/bucket_hash.h"

#include <bit>
#include <cstring>
#include <limits>
#include <string>

namespace strata::format {
namespace {

// The mixing steps of the MemWAL specification's Appendix 3 (32-bit wrapping arithmetic).
uint32_t MixK1(uint32_t k) { return std::rotl(k * 0xcc9e2d51u, 15) * 0x1b873593u; }
uint32_t MixH1(uint32_t h, uint32_t k) { return std::rotl(h ^ k, 13) * 5u + 0xe6546b64u; }
uint32_t Finalize(uint32_t h, uint32_t len) {
  h ^= len;
  h = (h ^ (h >> 16)) * 0x85ebca6bu;
  h = (h ^ (h >> 13)) * 0xc2b2ae35u;
  return h ^ (h >> 16);
}

}  // namespace

uint32_t BucketHashInt32(int32_t v) {
  return Finalize(MixH1(0, MixK1(static_cast<uint32_t>(v))), 4);
}

uint32_t BucketHashInt64(int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  const uint32_t low = static_cast<uint32_t>(u);
  const uint32_t high = static_cast<uint32_t>(u >> 32);
  return Finalize(MixH1(MixH1(0, MixK1(low)), MixK1(high)), 8);
}

uint32_t BucketHashFloat32(float v) {
  uint32_t bits = 0;
  if (v != v) {
    bits = 0x7fc00000u;  // every NaN
  } else if (v != 0.0f) {
    bits = std::bit_cast<uint32_t>(v);
  }  // +0.0 and -0.0 -> 0
  return BucketHashInt32(static_cast<int32_t>(bits));
}

uint32_t BucketHashFloat64(double v) {
  uint64_t bits = 0;
  if (v != v) {
    bits = 0x7ff8000000000000ull;
  } else if (v != 0.0) {
    bits = std::bit_cast<uint64_t>(v);
  }
  return BucketHashInt64(static_cast<int64_t>(bits));
}

uint32_t BucketHashBool(bool v) { return BucketHashInt32(v ? 1 : 0); }

uint32_t BucketHashBytes(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  uint32_t h = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32_t chunk = static_cast<uint32_t>(p[i]) | (static_cast<uint32_t>(p[i + 1]) << 8) |
                           (static_cast<uint32_t>(p[i + 2]) << 16) |
                           (static_cast<uint32_t>(p[i + 3]) << 24);
    h = MixH1(h, MixK1(chunk));
  }
  for (; i < n; ++i) {
    // Each remaining byte is a block of its own, sign-extended (the spec's tail rule).
    const int32_t extended = static_cast<int8_t>(p[i]);
    h = MixH1(h, MixK1(static_cast<uint32_t>(extended)));
  }
  return Finalize(h, static_cast<uint32_t>(n));
}

int32_t BucketOf(uint32_t hash, int32_t num_buckets) {
  return static_cast<int32_t>((hash & static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) %
                              static_cast<uint32_t>(num_buckets));
}

bool BucketHashSupports(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::TypeId::kBool:
    case arrow::TypeId::kInt8:
    case arrow::TypeId::kInt16:
    case arrow::TypeId::kInt32:
    case arrow::TypeId::kInt64:
    case arrow::TypeId::kUInt8:
    case arrow::TypeId::kUInt16:
    case arrow::TypeId::kUInt32:
    case arrow::TypeId::kUInt64:
    case arrow::TypeId::kFloat32:
    case arrow::TypeId::kFloat64:
    case arrow::TypeId::kDate32:
    case arrow::TypeId::kTime32:
    case arrow::TypeId::kTime64:
    case arrow::TypeId::kTimestamp:
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kLargeUtf8:
      return true;
    default:
      return false;
  }
}

Result<int32_t> BucketOfValue(const arrow::Array& array, int64_t row, int32_t num_buckets) {
  if (num_buckets < 1) {
    return Status::Invalid("num_buckets must be >= 1, got " + std::to_string(num_buckets));
  }
  if (row < 0 || row >= array.length()) {
    return Status::Invalid("row " + std::to_string(row) + " is outside the array of " +
                           std::to_string(array.length()) + " rows");
  }
  if (!BucketHashSupports(*array.type())) {
    return Status::Invalid("the bucket transform does not take " + array.type()->ToString() +
                           " values");
  }
  if (array.IsNull(row)) return 0;
  uint32_t h = 0;
  switch (array.type_id()) {
    case arrow::TypeId::kBool:
      h = BucketHashBool(array.BoolValue(row));
      break;
    case arrow::TypeId::kInt8:
      h = BucketHashInt32(array.Value<int8_t>(row));
      break;
    case arrow::TypeId::kInt16:
      h = BucketHashInt32(array.Value<int16_t>(row));
      break;
    case arrow::TypeId::kInt32:
    case arrow::TypeId::kDate32:
    case arrow::TypeId::kTime32:
      h = BucketHashInt32(array.Value<int32_t>(row));
      break;
    case arrow::TypeId::kUInt8:
      h = BucketHashInt32(array.Value<uint8_t>(row));
      break;
    case arrow::TypeId::kUInt16:
      h = BucketHashInt32(array.Value<uint16_t>(row));
      break;
    case arrow::TypeId::kUInt32:
      h = BucketHashInt32(static_cast<int32_t>(array.Value<uint32_t>(row)));
      break;
    case arrow::TypeId::kInt64:
    case arrow::TypeId::kTime64:
    case arrow::TypeId::kTimestamp:
      h = BucketHashInt64(array.Value<int64_t>(row));
      break;
    case arrow::TypeId::kUInt64:
      h = BucketHashInt64(static_cast<int64_t>(array.Value<uint64_t>(row)));
      break;
    case arrow::TypeId::kFloat32:
      h = BucketHashFloat32(array.Value<float>(row));
      break;
    case arrow::TypeId::kFloat64:
      h = BucketHashFloat64(array.Value<double>(row));
      break;
    default:  // utf8, large_utf8
      h = BucketHashBytes(array.GetView(row));
      break;
  }
  return BucketOf(h, num_buckets);
}

}  // namespace strata::format
