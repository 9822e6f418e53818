// Round trips through the Arrow IPC writer and reader: every type, nulls, slices, empty and
// 0-row batches, metadata, stream and file format, LZ4_FRAME and ZSTD bodies.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <tuple>

#include "arrow/ipc/reader.h"
#include "arrow/ipc/writer.h"
#include "ipc_test_util.h"

namespace strata::arrow::ipc {
namespace {

using testing::AllTypesSchema;
using testing::DumpJson;
using testing::SampleBatch;

BufferPtr ToBuffer(const std::string& s) {
  return Buffer::CopyFrom(s.data(), static_cast<int64_t>(s.size()));
}

Result<ReadResult> WriteThenRead(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                                 bool file, Compression c) {
  WriteOptions wo;
  wo.compression = c;
  auto bytes = file ? WriteFile(schema, batches, wo) : WriteStream(schema, batches, wo);
  if (!bytes.ok()) return bytes.status();
  return file ? ReadFile(ToBuffer(*bytes)) : ReadStream(ToBuffer(*bytes));
}

class RoundTrip : public ::testing::TestWithParam<std::tuple<bool, Compression>> {};

TEST_P(RoundTrip, AllTypesWithNulls) {
  auto [file, codec] = GetParam();
  auto schema = AllTypesSchema();
  auto b1 = SampleBatch(schema, 37, 0);
  auto b2 = SampleBatch(schema, 5, 3);
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  ASSERT_TRUE(b2.ok()) << b2.status().ToString();
  std::vector<RecordBatchPtr> in = {*b1, *b2};
  auto r = WriteThenRead(*schema, in, file, codec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->schema->Equals(*schema, /*check_metadata=*/true)) << r->schema->ToString();
  ASSERT_EQ(r->batches.size(), 2u);
  EXPECT_EQ(r->batches[0]->num_rows(), 37);
  EXPECT_EQ(r->batches[1]->num_rows(), 5);
  EXPECT_EQ(DumpJson(*r->schema, r->batches), DumpJson(*schema, in));
  // The dump really carries nulls and values.
  auto dump = DumpJson(*schema, in);
  EXPECT_TRUE(dump["batches"][0]["columns"]["i32"][2].is_null());
  EXPECT_EQ(dump["batches"][0]["columns"]["i32"][0], -50000 + 1000 * 5);
  EXPECT_EQ(r->batches[0]->column(0).null_count(), 0);
  EXPECT_GT(r->batches[0]->column(5).null_count(), 0);
}

TEST_P(RoundTrip, SlicedBatchesAtOddOffsets) {
  auto [file, codec] = GetParam();
  auto schema = AllTypesSchema();
  auto full = SampleBatch(schema, 50, 1);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  for (int64_t off : {1, 3, 8, 13}) {
    auto sliced = (*full)->Slice(off, 29);
    auto r = WriteThenRead(*schema, {sliced}, file, codec);
    ASSERT_TRUE(r.ok()) << "offset " << off << ": " << r.status().ToString();
    ASSERT_EQ(r->batches.size(), 1u);
    EXPECT_EQ(r->batches[0]->num_rows(), 29);
    EXPECT_EQ(DumpJson(*schema, r->batches), DumpJson(*schema, {sliced})) << "offset " << off;
    // Decoded arrays start at offset 0 (slices are rebased on write).
    EXPECT_EQ(r->batches[0]->column_data(13)->offset, 0);
  }
}

TEST_P(RoundTrip, EmptyAndZeroRowBatches) {
  auto [file, codec] = GetParam();
  auto schema = AllTypesSchema();
  auto zero = SampleBatch(schema, 0, 0);
  auto one = SampleBatch(schema, 1, 2);
  ASSERT_TRUE(zero.ok() && one.ok());
  auto r0 = WriteThenRead(*schema, {}, file, codec);
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  EXPECT_TRUE(r0->schema->Equals(*schema, true));
  EXPECT_EQ(r0->batches.size(), 0u);
  auto r = WriteThenRead(*schema, {*one, *zero, *one}, file, codec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->batches.size(), 3u);
  EXPECT_EQ(r->batches[1]->num_rows(), 0);
  EXPECT_EQ(DumpJson(*schema, r->batches), DumpJson(*schema, {*one, *zero, *one}));
  // A 0-row slice of a non-empty batch.
  auto rs = WriteThenRead(*schema, {(*one)->Slice(1, 0)}, file, codec);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  EXPECT_EQ(rs->batches.at(0)->num_rows(), 0);
}

INSTANTIATE_TEST_SUITE_P(Formats, RoundTrip,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(Compression::kNone,
                                                              Compression::kLz4Frame,
                                                              Compression::kZstd)));

TEST(IpcRoundTrip, UncompressedReadIsZeroCopy) {
  auto schema = std::make_shared<const Schema>(std::vector<FieldPtr>{field("x", int64())});
  auto batch = std::make_shared<RecordBatch>(
      schema, 4, std::vector<ArrayDataPtr>{MakeInt64Array({1, 2, std::nullopt, 4})});
  auto bytes = WriteStream(*schema, {batch});
  ASSERT_TRUE(bytes.ok());
  BufferPtr in = ToBuffer(*bytes);
  auto r = ReadStream(in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& values = r->batches[0]->column_data(0)->buffers[1];
  EXPECT_GE(values->data(), in->data());
  EXPECT_LE(values->data() + values->size(), in->data() + in->size());
  EXPECT_EQ(r->batches[0]->column(0).Value<int64_t>(3), 4);
  EXPECT_TRUE(r->batches[0]->column(0).IsNull(2));
}

TEST(IpcRoundTrip, CompressionShrinksRepetitiveBodiesAndStoresRandomOnesRaw) {
  auto schema = std::make_shared<const Schema>(
      std::vector<FieldPtr>{field("same", int64()), field("rand", int64())});
  std::vector<std::optional<int64_t>> same(4096, 42), rnd;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 4096; ++i) rnd.push_back(static_cast<int64_t>(rng()));
  auto batch = std::make_shared<RecordBatch>(
      schema, 4096, std::vector<ArrayDataPtr>{MakeInt64Array(same), MakeInt64Array(rnd)});
  auto plain = WriteStream(*schema, {batch});
  ASSERT_TRUE(plain.ok());
  for (Compression c : {Compression::kLz4Frame, Compression::kZstd}) {
    WriteOptions wo;
    wo.compression = c;
    auto packed = WriteStream(*schema, {batch}, wo);
    ASSERT_TRUE(packed.ok());
    EXPECT_LT(packed->size(), plain->size() - 30000);  // the constant column collapses
    auto r = ReadStream(ToBuffer(*packed));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->batches[0]->column(1).Value<int64_t>(4095), *rnd[4095]);
    EXPECT_EQ(r->batches[0]->column(0).Value<int64_t>(17), 42);
  }
}

TEST(IpcRoundTrip, SlicedStructAndFixedSizeListChildren) {
  // Children that are themselves offset inside their buffers.
  auto inner = MakeInt64Array({10, 11, 12, 13, 14, 15, std::nullopt, 17});
  auto child = Array(inner).Slice(2, 6).data();  // 12..17
  auto st_type = struct_({field("v", int64())});
  auto st = std::make_shared<ArrayData>();
  st->type = st_type;
  st->length = 6;
  st->buffers = {nullptr};
  st->children = {child};
  auto fsl_type = fixed_size_list(field("item", int64()), 2);
  auto fsl = std::make_shared<ArrayData>();
  fsl->type = fsl_type;
  fsl->length = 3;
  fsl->buffers = {nullptr};
  fsl->children = {child};
  ASSERT_TRUE(ValidateArray(*st).ok());
  ASSERT_TRUE(ValidateArray(*fsl).ok());
  auto schema = std::make_shared<const Schema>(
      std::vector<FieldPtr>{field("st", st_type), field("fsl", fsl_type)});
  // Take rows [1, 3) of the struct and matching rows of the list.
  auto st_s = Array(st).Slice(1, 2).data();
  auto fsl_s = Array(fsl).Slice(1, 2).data();
  auto batch = std::make_shared<RecordBatch>(schema, 2, std::vector<ArrayDataPtr>{st_s, fsl_s});
  auto bytes = WriteStream(*schema, {batch});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto r = ReadStream(ToBuffer(*bytes));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto dump = DumpJson(*schema, r->batches);
  EXPECT_EQ(dump["batches"][0]["columns"]["st"],
            nlohmann::json::parse(R"([{"v":"13"},{"v":"14"}])"));
  EXPECT_EQ(dump["batches"][0]["columns"]["fsl"],
            nlohmann::json::parse(R"([["14","15"],[null,"17"]])"));
}

TEST(IpcRoundTrip, WriterRejectsMismatchedBatches) {
  auto schema = std::make_shared<const Schema>(std::vector<FieldPtr>{field("x", int64())});
  auto other = std::make_shared<const Schema>(std::vector<FieldPtr>{field("x", float32())});
  auto batch =
      std::make_shared<RecordBatch>(other, 1, std::vector<ArrayDataPtr>{MakeFloat32Array({1.f})});
  auto w = WriteStream(*schema, {batch});
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(w.status().IsInvalid());
  EXPECT_NE(w.status().message().find("'x'"), std::string::npos) << w.status().message();
  auto bad_len =
      std::make_shared<RecordBatch>(schema, 3, std::vector<ArrayDataPtr>{MakeInt64Array({1})});
  EXPECT_FALSE(WriteFile(*schema, {bad_len}).ok());
}

TEST(IpcRoundTrip, FileLayoutHasMagicAndFooter) {
  auto schema = AllTypesSchema();
  auto b = SampleBatch(schema, 3, 0);
  ASSERT_TRUE(b.ok());
  auto bytes = WriteFile(*schema, {*b});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 8), std::string("ARROW1\0\0", 8));
  EXPECT_EQ(bytes->substr(bytes->size() - 6), "ARROW1");
  uint32_t marker;
  std::memcpy(&marker, bytes->data() + 8, 4);
  EXPECT_EQ(marker, 0xFFFFFFFFu);
  auto stream = WriteStream(*schema, {*b});
  ASSERT_TRUE(stream.ok());
  // Stream ends with EOS; the file embeds the same stream after its 8-byte header.
  EXPECT_EQ(stream->substr(stream->size() - 8), std::string("\xff\xff\xff\xff\0\0\0\0", 8));
  EXPECT_EQ(bytes->substr(8, stream->size()), *stream);
}

}  // namespace
}  // namespace strata::arrow::ipc
