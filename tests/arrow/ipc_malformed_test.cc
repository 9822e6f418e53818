// The IPC reader on malformed input: truncation at every byte, byte flips, bad offsets and
// lengths, bad magic, decompression limits, unsupported types. It must return an error (or,
// for flips that keep the data well-formed, a valid result) and never crash.
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "arrow/ipc/fbs/Message_generated.h"
#include "arrow/ipc/message.h"
#include "arrow/ipc/reader.h"
#include "arrow/ipc/writer.h"
#include "ipc_test_util.h"

namespace strata::arrow::ipc {
namespace {

namespace fb = org::apache::arrow::flatbuf;

BufferPtr ToBuffer(const std::string& s) {
  return Buffer::CopyFrom(s.data(), static_cast<int64_t>(s.size()));
}

SchemaPtr SmallSchema() {
  return std::make_shared<const Schema>(std::vector<FieldPtr>{
      field("i", int32()), field("s", utf8()), field("l", list(field("item", int64()))),
      field("st", struct_({field("a", int16()), field("b", large_binary())})),
      field("v", fixed_size_list(field("item", float32()), 2))});
}

std::string SmallStream(Compression c = Compression::kNone) {
  auto schema = SmallSchema();
  auto b1 = testing::SampleBatch(schema, 6, 0);
  auto b2 = testing::SampleBatch(schema, 3, 1);
  WriteOptions wo;
  wo.compression = c;
  return WriteStream(*schema, {*b1, *b2}, wo).value();
}

std::string SmallFile() {
  auto schema = SmallSchema();
  auto b1 = testing::SampleBatch(schema, 6, 0);
  return WriteFile(*schema, {*b1}).value();
}

// End offsets of the messages of a well-formed stream.
std::set<int64_t> MessageEnds(const std::string& s) {
  std::set<int64_t> ends;
  BufferPtr b = ToBuffer(s);
  int64_t pos = 0;
  while (true) {
    auto mv = internal::ReadMessageAt(b, pos);
    if (!mv.ok() || mv->eos) break;
    ends.insert((mv)->end);
    pos = (mv)->end;
  }
  return ends;
}

TEST(IpcMalformed, StreamTruncatedAtEveryByte) {
  for (Compression c : {Compression::kNone, Compression::kLz4Frame}) {
    const std::string full = SmallStream(c);
    const auto ends = MessageEnds(full);
    ASSERT_EQ(ends.size(), 3u);  // schema + 2 batches
    for (size_t n = 0; n < full.size(); ++n) {
      auto r = ReadStream(ToBuffer(full.substr(0, n)));
      if (ends.count(static_cast<int64_t>(n)) != 0) {
        // Cut exactly after a message: the data end also ends the stream.
        ASSERT_TRUE(r.ok()) << n << ": " << r.status().ToString();
        size_t complete = 0;  // messages that end at or before n, minus the schema
        for (int64_t e : ends) complete += e <= static_cast<int64_t>(n) ? 1 : 0;
        EXPECT_EQ(r->batches.size(), complete - 1);
      } else {
        EXPECT_FALSE(r.ok()) << "prefix of " << n << " bytes was accepted";
      }
    }
    EXPECT_EQ(ReadStream(ToBuffer(full))->batches.size(), 2u);
  }
}

TEST(IpcMalformed, FileTruncatedAtEveryByte) {
  const std::string full = SmallFile();
  for (size_t n = 0; n < full.size(); ++n) {
    EXPECT_FALSE(ReadFile(ToBuffer(full.substr(0, n))).ok()) << n;
  }
  EXPECT_TRUE(ReadFile(ToBuffer(full)).ok());
}

TEST(IpcMalformed, EveryByteFlippedNeverCrashes) {
  int errors = 0;
  for (const std::string& base : {SmallStream(), SmallStream(Compression::kZstd), SmallFile()}) {
    const bool is_file = base.compare(0, 6, "ARROW1") == 0;
    for (size_t i = 0; i < base.size(); ++i) {
      for (uint8_t mask : {0xFF, 0x01, 0x80}) {
        std::string s = base;
        s[i] = static_cast<char>(s[i] ^ mask);
        auto r = is_file ? ReadFile(ToBuffer(s)) : ReadStream(ToBuffer(s));
        if (!r.ok()) {
          ++errors;
          EXPECT_FALSE(r.status().message().empty());
        } else {
          for (const auto& b : r->batches) EXPECT_TRUE(b->Validate().ok());
        }
      }
    }
  }
  EXPECT_GT(errors, 1000);
}

// Position in `s` of the fb::Buffer struct `index` of the first record batch.
size_t BufferStructPos(const std::string& s, size_t index) {
  BufferPtr b = Buffer::Wrap(s.data(), static_cast<int64_t>(s.size()), nullptr);
  auto schema_msg = internal::ReadMessageAt(b, 0).value();
  auto mv = internal::ReadMessageAt(b, schema_msg.end).value();
  const fb::RecordBatch* rb = mv.message->header_as_RecordBatch();
  const auto* p = reinterpret_cast<const char*>(rb->buffers()->Get(static_cast<uint32_t>(index)));
  return static_cast<size_t>(p - s.data());
}

TEST(IpcMalformed, BufferOffsetPastBody) {
  std::string s = SmallStream();
  const size_t pos = BufferStructPos(s, 1);
  const int64_t huge = int64_t{1} << 40;
  std::memcpy(s.data() + pos, &huge, 8);
  auto r = ReadStream(ToBuffer(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("outside the message body"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("'i'"), std::string::npos) << r.status().message();
}

TEST(IpcMalformed, BufferLengthNegativeOrOverflowing) {
  for (int64_t bad : {int64_t{-1}, INT64_MAX, INT64_MAX - 4}) {
    std::string s = SmallStream();
    const size_t pos = BufferStructPos(s, 1);
    std::memcpy(s.data() + pos + 8, &bad, 8);
    EXPECT_FALSE(ReadStream(ToBuffer(s)).ok()) << bad;
  }
}

TEST(IpcMalformed, DecreasingUtf8OffsetsFailValidation) {
  std::string s = SmallStream();
  // Buffers: i(validity, values), s(validity, offsets, data), ...; overwrite offsets[2].
  BufferPtr b = Buffer::Wrap(s.data(), static_cast<int64_t>(s.size()), nullptr);
  auto schema_msg = internal::ReadMessageAt(b, 0).value();
  auto mv = internal::ReadMessageAt(b, schema_msg.end).value();
  const auto* buf = mv.message->header_as_RecordBatch()->buffers()->Get(3);
  const int64_t body = mv.body_offset;
  const int32_t big = 1000;
  std::memcpy(s.data() + body + buf->offset() + 4, &big, 4);
  auto r = ReadStream(ToBuffer(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("'s'"), std::string::npos) << r.status().message();
}

TEST(IpcMalformed, BadMagicAndFooter) {
  std::string f = SmallFile();
  std::string head = f;
  head[0] = 'X';
  auto r = ReadFile(ToBuffer(head));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("magic"), std::string::npos);
  std::string tail = f;
  tail[tail.size() - 1] = '2';
  EXPECT_FALSE(ReadFile(ToBuffer(tail)).ok());
  std::string len = f;
  const int32_t bad = 1 << 30;
  std::memcpy(len.data() + len.size() - 10, &bad, 4);
  auto rl = ReadFile(ToBuffer(len));
  ASSERT_FALSE(rl.ok());
  EXPECT_NE(rl.status().message().find("footer length"), std::string::npos);
  // A stream is not a file and vice versa.
  EXPECT_FALSE(ReadFile(ToBuffer(SmallStream())).ok());
  EXPECT_FALSE(ReadStream(ToBuffer(f)).ok());
}

TEST(IpcMalformed, NegativeOrHugeMetadataLength) {
  std::string s("\xff\xff\xff\xff", 4);
  const int32_t neg = -5;
  s.append(reinterpret_cast<const char*>(&neg), 4);
  auto r = ReadStream(ToBuffer(s));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("negative"), std::string::npos);
  std::string h("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
  EXPECT_FALSE(ReadStream(ToBuffer(h)).ok());
  EXPECT_FALSE(ReadStream(ToBuffer(std::string())).ok());
  EXPECT_FALSE(ReadStream(ToBuffer(std::string(64, '\0'))).ok());  // EOS before any schema
}

TEST(IpcMalformed, DecompressedSizeLimit) {
  const std::string s = SmallStream(Compression::kLz4Frame);
  ReadOptions ro;
  ro.max_buffer_bytes = 8;
  auto r = ReadStream(ToBuffer(s), ro);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("limit"), std::string::npos) << r.status().message();
  EXPECT_TRUE(ReadStream(ToBuffer(s)).ok());
}

TEST(IpcMalformed, CompressedLengthPrefixLies) {
  std::string s = SmallStream(Compression::kZstd);
  BufferPtr b = Buffer::Wrap(s.data(), static_cast<int64_t>(s.size()), nullptr);
  auto schema_msg = internal::ReadMessageAt(b, 0).value();
  auto mv = internal::ReadMessageAt(b, schema_msg.end).value();
  const auto* buf = mv.message->header_as_RecordBatch()->buffers()->Get(1);
  ASSERT_GE(buf->length(), 8);
  int64_t raw;
  std::memcpy(&raw, s.data() + mv.body_offset + buf->offset(), 8);
  ASSERT_EQ(raw, -1);  // 24 bytes of int32 do not compress: stored raw
  // A buffer that claims compression but holds garbage.
  const auto* sbuf = mv.message->header_as_RecordBatch()->buffers()->Get(4);  // utf8 data
  ASSERT_GE(sbuf->length(), 8);
  const int64_t claim = 100;
  std::memcpy(s.data() + mv.body_offset + sbuf->offset(), &claim, 8);
  auto r = ReadStream(ToBuffer(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
}

// A stream whose only field is built by `make_field` in a hand-made Schema message.
template <typename F>
std::string HandMadeStream(F make_field, fb::Endianness endian = fb::Endianness::Little) {
  flatbuffers::FlatBufferBuilder fbb;
  auto f = make_field(fbb);
  auto fields = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Field>>{f});
  auto schema = fb::CreateSchema(fbb, endian, fields);
  auto msg =
      fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::Schema, schema.Union(), 0);
  fbb.Finish(msg);
  std::string out;
  internal::AppendMessage(&out, fbb.GetBufferPointer(), fbb.GetSize());
  internal::AppendEos(&out);
  return out;
}

TEST(IpcMalformed, UnsupportedTypesAreRejectedNamingTheField) {
  struct Case {
    const char* what;
    std::function<flatbuffers::Offset<fb::Field>(flatbuffers::FlatBufferBuilder&)> make;
  };
  std::vector<Case> cases = {
      {"Union",
       [](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateField(b, b.CreateString("col_u"), true, fb::Type::Union,
                                fb::CreateUnion(b).Union());
       }},
      {"Map",
       [](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateField(b, b.CreateString("col_u"), true, fb::Type::Map,
                                fb::CreateMap(b).Union());
       }},
      {"Interval",
       [](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateField(b, b.CreateString("col_u"), true, fb::Type::Interval,
                                fb::CreateInterval(b).Union());
       }},
      {"Utf8View",
       [](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateField(b, b.CreateString("col_u"), true, fb::Type::Utf8View,
                                fb::CreateUtf8View(b).Union());
       }},
      {"RunEndEncoded",
       [](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateField(b, b.CreateString("col_u"), true, fb::Type::RunEndEncoded,
                                fb::CreateRunEndEncoded(b).Union());
       }},
      {"decimal256",
       [](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateField(b, b.CreateString("col_u"), true, fb::Type::Decimal,
                                fb::CreateDecimal(b, 40, 2, 256).Union());
       }},
      {"dictionary",
       [](flatbuffers::FlatBufferBuilder& b) {
         auto idx = fb::CreateInt(b, 32, true);
         auto dict = fb::CreateDictionaryEncoding(b, 0, idx);
         return fb::CreateField(b, b.CreateString("col_u"), true, fb::Type::Utf8,
                                fb::CreateUtf8(b).Union(), dict);
       }},
  };
  for (const auto& c : cases) {
    auto r = ReadStream(ToBuffer(HandMadeStream(c.make)));
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), StatusCode::kNotSupported) << c.what << r.status().ToString();
    EXPECT_NE(r.status().message().find("'col_u'"), std::string::npos) << r.status().message();
  }
  auto big = HandMadeStream(
      [](flatbuffers::FlatBufferBuilder& b) {
        return fb::CreateField(b, b.CreateString("x"), true, fb::Type::Bool,
                               fb::CreateBool(b).Union());
      },
      fb::Endianness::Big);
  auto rb = ReadStream(ToBuffer(big));
  ASSERT_FALSE(rb.ok());
  EXPECT_NE(rb.status().message().find("big-endian"), std::string::npos);
  // Sanity: the same hand-made stream, little-endian, reads.
  auto ok = HandMadeStream([](flatbuffers::FlatBufferBuilder& b) {
    return fb::CreateField(b, b.CreateString("x"), true, fb::Type::Bool, fb::CreateBool(b).Union());
  });
  auto rok = ReadStream(ToBuffer(ok));
  ASSERT_TRUE(rok.ok()) << rok.status().ToString();
  EXPECT_EQ(rok->schema->field(0)->type->id(), TypeId::kBool);
}

TEST(IpcMalformed, BadTypeParameters) {
  auto r = ReadStream(ToBuffer(HandMadeStream([](flatbuffers::FlatBufferBuilder& b) {
    return fb::CreateField(b, b.CreateString("w"), true, fb::Type::Int,
                           fb::CreateInt(b, 24, true).Union());
  })));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'w'"), std::string::npos);
  auto l = ReadStream(ToBuffer(HandMadeStream([](flatbuffers::FlatBufferBuilder& b) {
    return fb::CreateField(b, b.CreateString("lst"), true, fb::Type::List,
                           fb::CreateList(b).Union());  // no child
  })));
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("children"), std::string::npos);
}

TEST(IpcMalformed, NestingDepthLimit) {
  DataTypePtr t = int32();
  for (int i = 0; i < 80; ++i) t = list(field("item", t));
  Schema schema({field("deep", t)});
  auto bytes = WriteStream(schema, {});
  ASSERT_TRUE(bytes.ok());
  auto r = ReadStream(ToBuffer(*bytes));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("limit is 64"), std::string::npos) << r.status().message();
  ReadOptions ro;
  ro.max_depth = 100;
  EXPECT_TRUE(ReadStream(ToBuffer(*bytes), ro).ok());
}

TEST(IpcMalformed, LegacyFramingWithoutContinuationMarker) {
  const std::string modern = SmallStream();
  BufferPtr b = ToBuffer(modern);
  std::string legacy;
  int64_t pos = 0;
  while (true) {
    auto mv = internal::ReadMessageAt(b, pos).value();
    if (mv.eos) break;
    const int32_t len = static_cast<int32_t>(mv.metadata_length - 8);
    legacy.append(reinterpret_cast<const char*>(&len), 4);
    legacy.append(modern, static_cast<size_t>(mv.start + 8),
                  static_cast<size_t>(mv.end - mv.start - 8));
    pos = mv.end;
  }
  legacy.append(4, '\0');  // legacy EOS
  auto r = ReadStream(ToBuffer(legacy));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto m = ReadStream(b).value();
  EXPECT_EQ(testing::DumpJson(*r->schema, r->batches), testing::DumpJson(*m.schema, m.batches));
  EXPECT_EQ(r->batches.size(), 2u);
}

TEST(IpcMalformed, RecordBatchBeforeSchemaAndSecondSchema) {
  const std::string s = SmallStream();
  const auto ends = MessageEnds(s);
  const int64_t schema_end = *ends.begin();
  auto r = ReadStream(ToBuffer(s.substr(static_cast<size_t>(schema_end))));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("schema"), std::string::npos);
  std::string twice = s.substr(0, static_cast<size_t>(schema_end)) + s;
  EXPECT_FALSE(ReadStream(ToBuffer(twice)).ok());
}

TEST(IpcMalformed, UnalignedInputIsCopiedNotMisread) {
  const std::string s = SmallStream();
  std::string shifted = "x" + s;
  BufferPtr whole = ToBuffer(shifted);
  BufferPtr view = whole->Slice(1, static_cast<int64_t>(s.size()));  // odd address
  auto r = ReadStream(view);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto m = ReadStream(ToBuffer(s)).value();
  EXPECT_EQ(testing::DumpJson(*r->schema, r->batches), testing::DumpJson(*m.schema, m.batches));
}

}  // namespace
}  // namespace strata::arrow::ipc
