// The MemWAL bucket hash (format/bucket_hash.h): the specification's test vectors for
// num_buckets = 8 (DESIGN.md §8), reference MurmurHash3_x86_32 vectors where the two agree
// (one or two complete 4-byte blocks), and the published Iceberg vector for a long.
#include "format/bucket_hash.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "arrow/builder.h"

namespace strata::format {
namespace {

int32_t Bucket8(uint32_t h) { return BucketOf(h, 8); }

TEST(BucketHash, SpecVectorsInt32) {
  EXPECT_EQ(Bucket8(BucketHashInt32(1)), 2);
  EXPECT_EQ(Bucket8(BucketHashInt32(2)), 7);
  EXPECT_EQ(Bucket8(BucketHashInt32(3)), 1);
}

TEST(BucketHash, SpecVectorsUtf8BoolFloat) {
  EXPECT_EQ(Bucket8(BucketHashBytes("a")), 1);
  EXPECT_EQ(Bucket8(BucketHashBytes("b")), 5);
  EXPECT_EQ(Bucket8(BucketHashBool(true)), 2);
  EXPECT_EQ(Bucket8(BucketHashFloat32(1.25f)), 0);
  EXPECT_EQ(Bucket8(BucketHashFloat64(1.25)), 0);
}

TEST(BucketHash, ReferenceMurmur3Blocks) {
  // MurmurHash3_x86_32, seed 0, over 4 little-endian bytes: 00 00 00 00, ff ff ff ff,
  // 21 43 65 87 (the widely published reference vectors).
  EXPECT_EQ(BucketHashInt32(0), 0x2362F9DEu);
  EXPECT_EQ(BucketHashInt32(-1), 0x76293B50u);
  EXPECT_EQ(BucketHashInt32(static_cast<int32_t>(0x87654321u)), 0xF55B516Bu);
  // A 4-byte string is one complete block: the same as its little-endian int32.
  EXPECT_EQ(BucketHashBytes(std::string("\x21\x43\x65\x87", 4)), 0xF55B516Bu);
}

TEST(BucketHash, Int64) {
  // Iceberg's bucket-transform vector: murmur3_x86_32 of the 8 little-endian bytes of 34L.
  EXPECT_EQ(BucketHashInt64(34), 2017239379u);
  EXPECT_EQ(Bucket8(BucketHashInt64(34)), 3);
  EXPECT_EQ(Bucket8(BucketHashInt64(1)), 4);
  EXPECT_EQ(Bucket8(BucketHashInt64(2)), 4);
  EXPECT_EQ(Bucket8(BucketHashInt64(3)), 3);
  EXPECT_EQ(Bucket8(BucketHashInt64(-1)), 0);
  // Not the int32 hash of the same value (the length is 8 and there is a high block).
  EXPECT_NE(BucketHashInt64(1), BucketHashInt32(1));
}

TEST(BucketHash, TailBytesAreBlocksOfTheirOwn) {
  // "a" is one sign-extended block of 0x61 with length 1, not the reference tail fold.
  EXPECT_NE(BucketHashBytes("a"), BucketHashInt32(0x61));
  // A byte >= 0x80 is sign-extended: differs from the zero-extended block.
  EXPECT_NE(BucketHashBytes(std::string("\x80", 1)), BucketHashBytes(std::string("\x7f", 1)));
  EXPECT_EQ(BucketHashBytes(""), 0u);  // fmix(0, 0)
}

TEST(BucketHash, FloatNormalisation) {
  EXPECT_EQ(BucketHashFloat32(0.0f), BucketHashFloat32(-0.0f));
  EXPECT_EQ(BucketHashFloat32(0.0f), BucketHashInt32(0));
  EXPECT_EQ(BucketHashFloat64(-0.0), BucketHashInt64(0));
  EXPECT_EQ(BucketHashFloat32(std::nanf("1")), BucketHashFloat32(std::nanf("2")));
  EXPECT_EQ(BucketHashFloat32(std::numeric_limits<float>::quiet_NaN()),
            BucketHashInt32(0x7fc00000));
  EXPECT_EQ(BucketHashFloat64(std::numeric_limits<double>::quiet_NaN()),
            BucketHashInt64(0x7ff8000000000000ll));
}

TEST(BucketHash, ArraysAndNulls) {
  auto ints = arrow::Array(arrow::MakeInt64Array({34, std::nullopt, 1}));
  EXPECT_EQ(*BucketOfValue(ints, 0, 8), 3);
  EXPECT_EQ(*BucketOfValue(ints, 1, 8), 0);  // null -> bucket 0
  EXPECT_EQ(*BucketOfValue(ints, 2, 8), 4);
  auto strs = arrow::Array(arrow::MakeUtf8Array({"a", "b", std::nullopt}));
  EXPECT_EQ(*BucketOfValue(strs, 0, 8), 1);
  EXPECT_EQ(*BucketOfValue(strs, 1, 8), 5);
  EXPECT_EQ(*BucketOfValue(strs, 2, 8), 0);
  auto floats = arrow::Array(arrow::MakeFloat32Array({1.25f}));
  EXPECT_EQ(*BucketOfValue(floats, 0, 8), 0);
  EXPECT_EQ(*BucketOfValue(ints, 0, 1), 0);  // one bucket: everything in 0
}

TEST(BucketHash, Errors) {
  auto ints = arrow::Array(arrow::MakeInt64Array({1}));
  EXPECT_TRUE(BucketOfValue(ints, 0, 0).status().IsInvalid());
  EXPECT_TRUE(BucketOfValue(ints, 1, 8).status().IsInvalid());
  EXPECT_FALSE(BucketHashSupports(*arrow::list(arrow::field("item", arrow::float32(), true))));
  EXPECT_TRUE(BucketHashSupports(*arrow::utf8()));
  EXPECT_FALSE(BucketHashSupports(*arrow::binary()));
}

}  // namespace
}  // namespace strata::format
