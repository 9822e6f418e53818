#include "arrow/ipc/writer.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "arrow/ipc/compression.h"
#include "arrow/ipc/fbs/File_generated.h"
#include "arrow/ipc/fbs/Message_generated.h"
#include "arrow/ipc/message.h"
#include "arrow/ipc/schema_codec.h"

namespace strata::arrow::ipc {
namespace {

namespace fb = org::apache::arrow::flatbuf;
using internal::AppendMessage;

// One body buffer: bytes owned elsewhere (the array) or by `owned` (rebased / shifted copies).
struct Piece {
  const uint8_t* data = nullptr;
  int64_t size = 0;
  std::shared_ptr<std::string> owned;
};

Piece Owned(std::string s) {
  Piece p;
  p.owned = std::make_shared<std::string>(std::move(s));
  p.data = reinterpret_cast<const uint8_t*>(p.owned->data());
  p.size = static_cast<int64_t>(p.owned->size());
  return p;
}

// Flattens one record batch into field nodes and body pieces (pre-order), rebasing slices.
class BatchSerializer {
 public:
  std::vector<fb::FieldNode> nodes;
  std::vector<Piece> pieces;

  // `off` is the absolute element offset into a's buffers; `len` the number of elements.
  void Visit(const ArrayData& a, int64_t off, int64_t len) {
    const DataType& t = *a.type;
    if (t.id() == TypeId::kNull) {
      nodes.emplace_back(len, len);
      return;
    }
    const BufferPtr& validity = a.buffers[0];
    int64_t nulls = 0;
    if (validity != nullptr) {
      nulls = (off == a.offset && len == a.length) ? a.null_count
                                                   : len - CountSetBits(validity->data(), off, len);
    }
    nodes.emplace_back(len, nulls);
    if (nulls == 0) {
      pieces.emplace_back();
    } else {
      pieces.push_back(Bitmap(validity->data(), off, len));
    }
    switch (t.id()) {
      case TypeId::kBool:
        pieces.push_back(Bitmap(a.buffers[1]->data(), off, len));
        return;
      case TypeId::kUtf8:
      case TypeId::kBinary:
        VarWidth<int32_t>(a, off, len);
        return;
      case TypeId::kLargeUtf8:
      case TypeId::kLargeBinary:
        VarWidth<int64_t>(a, off, len);
        return;
      case TypeId::kList: {
        auto [b, e] = Offsets<int32_t>(a, off, len);
        Visit(*a.children[0], a.children[0]->offset + b, e - b);
        return;
      }
      case TypeId::kLargeList: {
        auto [b, e] = Offsets<int64_t>(a, off, len);
        Visit(*a.children[0], a.children[0]->offset + b, e - b);
        return;
      }
      case TypeId::kFixedSizeList: {
        const int64_t n = t.list_size();
        Visit(*a.children[0], a.children[0]->offset + off * n, len * n);
        return;
      }
      case TypeId::kStruct:
        for (const auto& c : a.children) Visit(*c, c->offset + off, len);
        return;
      default: {
        const int64_t w = t.bit_width() / 8;
        Piece p;
        if (a.buffers[1] != nullptr && len > 0) {
          p.data = a.buffers[1]->data() + off * w;
          p.size = len * w;
        }
        pieces.push_back(std::move(p));
        return;
      }
    }
  }

 private:
  static Piece Bitmap(const uint8_t* bits, int64_t off, int64_t len) {
    Piece p;
    if (len == 0) return p;
    if (off % 8 == 0) {
      p.data = bits + off / 8;
      p.size = BytesForBits(len);
      return p;
    }
    std::string s(static_cast<size_t>(BytesForBits(len)), '\0');
    auto* out = reinterpret_cast<uint8_t*>(s.data());
    for (int64_t i = 0; i < len; ++i) {
      if (GetBit(bits, off + i)) SetBit(out, i);
    }
    return Owned(std::move(s));
  }

  // Emits zero-based offsets for [off, off+len]; returns the original [begin, end) range.
  template <typename O>
  std::pair<int64_t, int64_t> Offsets(const ArrayData& a, int64_t off, int64_t len) {
    const BufferPtr& ob = a.buffers[1];
    if (ob == nullptr || ob->size() == 0) {
      pieces.push_back(Owned(std::string(sizeof(O), '\0')));
      return {0, 0};
    }
    const O* src = ob->data_as<O>() + off;
    const int64_t begin = static_cast<int64_t>(src[0]);
    const int64_t end = static_cast<int64_t>(src[len]);
    if (begin == 0) {
      Piece p;
      p.data = reinterpret_cast<const uint8_t*>(src);
      p.size = (len + 1) * static_cast<int64_t>(sizeof(O));
      pieces.push_back(std::move(p));
    } else {
      std::string s(static_cast<size_t>(len + 1) * sizeof(O), '\0');
      auto* dst = reinterpret_cast<O*>(s.data());
      for (int64_t i = 0; i <= len; ++i) dst[i] = static_cast<O>(src[i] - src[0]);
      pieces.push_back(Owned(std::move(s)));
    }
    return {begin, end};
  }

  template <typename O>
  void VarWidth(const ArrayData& a, int64_t off, int64_t len) {
    auto [b, e] = Offsets<O>(a, off, len);
    Piece p;
    if (e > b) {
      p.data = a.buffers[2]->data() + b;
      p.size = e - b;
    }
    pieces.push_back(std::move(p));
  }
};

void PutI64(std::string* s, int64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }

struct EncodedBatch {
  int64_t metadata_length = 0;
  int64_t body_length = 0;
};

Status CheckBatch(const Schema& schema, const RecordBatch& batch, size_t index) {
  const std::string where = "batch " + std::to_string(index);
  if (batch.num_columns() != schema.num_fields()) {
    return Status::Invalid(where + " has " + std::to_string(batch.num_columns()) +
                           " columns, the schema has " + std::to_string(schema.num_fields()));
  }
  for (int i = 0; i < batch.num_columns(); ++i) {
    const Field& f = *schema.field(i);
    const ArrayDataPtr& c = batch.column_data(i);
    if (c == nullptr || c->type == nullptr || !c->type->Equals(*f.type)) {
      return Status::Invalid(where + " column '" + f.name + "' has type " +
                             (c && c->type ? c->type->ToString() : std::string("none")) +
                             ", the schema says " + f.type->ToString());
    }
    if (c->length != batch.num_rows()) {
      return Status::Invalid(where + " column '" + f.name + "' has " + std::to_string(c->length) +
                             " rows, the batch has " + std::to_string(batch.num_rows()));
    }
    STRATA_RETURN_IF_ERROR(ValidateArray(*c).WithContext(where + " column '" + f.name + "'"));
  }
  return Status::OK();
}

Result<EncodedBatch> AppendBatch(const RecordBatch& batch, const WriteOptions& options,
                                 std::string* out) {
  BatchSerializer ser;
  for (const auto& c : batch.columns()) ser.Visit(*c, c->offset, c->length);

  // Lay out the body: compress pieces when asked, 8-byte align every buffer.
  const bool compress = options.compression != Compression::kNone;
  std::vector<fb::Buffer> layout;
  layout.reserve(ser.pieces.size());
  int64_t pos = 0;
  for (auto& p : ser.pieces) {
    if (compress && p.size > 0) {
      std::string s;
      PutI64(&s, p.size);
      STRATA_RETURN_IF_ERROR(internal::CompressBuffer(options.compression, p.data, p.size, &s));
      if (static_cast<int64_t>(s.size()) >= p.size + 8) {
        s.clear();
        PutI64(&s, -1);  // not worth it: stored uncompressed
        s.append(reinterpret_cast<const char*>(p.data), static_cast<size_t>(p.size));
      }
      p = Owned(std::move(s));
    }
    layout.emplace_back(pos, p.size);
    pos += (p.size + 7) / 8 * 8;
  }
  const int64_t body_length = pos;

  flatbuffers::FlatBufferBuilder fbb(1024);
  auto nodes = fbb.CreateVectorOfStructs(ser.nodes);
  auto bufs = fbb.CreateVectorOfStructs(layout);
  flatbuffers::Offset<fb::BodyCompression> comp = 0;
  if (compress) {
    comp = fb::CreateBodyCompression(fbb,
                                     options.compression == Compression::kLz4Frame
                                         ? fb::CompressionType::LZ4_FRAME
                                         : fb::CompressionType::ZSTD,
                                     fb::BodyCompressionMethod::BUFFER);
  }
  auto rb = fb::CreateRecordBatch(fbb, batch.num_rows(), nodes, bufs, comp);
  auto msg = fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::RecordBatch,
                               rb.Union(), body_length);
  fbb.Finish(msg);

  EncodedBatch eb;
  eb.metadata_length = AppendMessage(out, fbb.GetBufferPointer(), fbb.GetSize());
  eb.body_length = body_length;
  out->reserve(out->size() + static_cast<size_t>(body_length));
  for (const auto& p : ser.pieces) {
    if (p.size > 0) out->append(reinterpret_cast<const char*>(p.data), static_cast<size_t>(p.size));
    internal::PadTo(out, 8);
  }
  return eb;
}

Result<flatbuffers::DetachedBuffer> SchemaMessage(const Schema& schema) {
  flatbuffers::FlatBufferBuilder fbb(1024);
  STRATA_ASSIGN_OR_RETURN(auto so, internal::EncodeSchema(fbb, schema));
  auto msg =
      fb::CreateMessage(fbb, fb::MetadataVersion::V5, fb::MessageHeader::Schema, so.Union(), 0);
  fbb.Finish(msg);
  return fbb.Release();
}

// Writes schema + batches + EOS to `out`; records each batch's block for the file footer.
Status WriteMessages(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                     const WriteOptions& options, std::string* out,
                     std::vector<fb::Block>* blocks) {
  for (size_t i = 0; i < batches.size(); ++i) {
    if (batches[i] == nullptr) return Status::Invalid("batch " + std::to_string(i) + " is null");
    STRATA_RETURN_IF_ERROR(CheckBatch(schema, *batches[i], i));
  }
  STRATA_ASSIGN_OR_RETURN(auto sm, SchemaMessage(schema));
  AppendMessage(out, sm.data(), sm.size());
  for (const auto& b : batches) {
    const int64_t start = static_cast<int64_t>(out->size());
    STRATA_ASSIGN_OR_RETURN(auto eb, AppendBatch(*b, options, out));
    if (blocks != nullptr) {
      blocks->emplace_back(start, static_cast<int32_t>(eb.metadata_length), eb.body_length);
    }
  }
  internal::AppendEos(out);
  return Status::OK();
}

}  // namespace

Result<std::string> WriteStream(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                                const WriteOptions& options) {
  std::string out;
  STRATA_RETURN_IF_ERROR(WriteMessages(schema, batches, options, &out, nullptr));
  return out;
}

Result<std::string> WriteFile(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                              const WriteOptions& options) {
  std::string out("ARROW1\0\0", 8);
  std::vector<fb::Block> blocks;
  STRATA_RETURN_IF_ERROR(WriteMessages(schema, batches, options, &out, &blocks));
  flatbuffers::FlatBufferBuilder fbb(1024);
  STRATA_ASSIGN_OR_RETURN(auto so, internal::EncodeSchema(fbb, schema));
  auto dicts = fbb.CreateVectorOfStructs(std::vector<fb::Block>());
  auto recs = fbb.CreateVectorOfStructs(blocks);
  auto footer = fb::CreateFooter(fbb, fb::MetadataVersion::V5, so, dicts, recs);
  fbb.Finish(footer);
  out.append(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  const int32_t footer_len = static_cast<int32_t>(fbb.GetSize());
  out.append(reinterpret_cast<const char*>(&footer_len), 4);
  out.append("ARROW1", 6);
  return out;
}

}  // namespace strata::arrow::ipc
