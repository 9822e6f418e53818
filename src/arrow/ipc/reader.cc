#include "arrow/ipc/reader.h"

#include <cstring>
#include <memory>
#include <string>

#include "arrow/ipc/compression.h"
#include "arrow/ipc/fbs/File_generated.h"
#include "arrow/ipc/fbs/Message_generated.h"
#include "arrow/ipc/message.h"
#include "arrow/ipc/schema_codec.h"
#include "arrow/ipc/writer.h"

namespace strata::arrow::ipc {
namespace {

namespace fb = org::apache::arrow::flatbuf;
using internal::MessageView;

std::string S(int64_t v) { return std::to_string(v); }

// Copies a flatbuffers struct out of a vector. The Verifier checks a struct vector's length
// prefix only for 4-byte alignment, so the 8-byte-aligned structs inside may be misaligned;
// reading them in place would be undefined behavior.
template <typename T>
T LoadStruct(const T* p) {
  T v;
  std::memcpy(static_cast<void*>(&v), static_cast<const void*>(p), sizeof(T));
  return v;
}

// A zero-filled 8-byte buffer: stands in for absent buffers of empty arrays (e.g. the offsets
// of a 0-length utf8 array, which some writers omit).
const BufferPtr& ZeroBuffer() {
  static const BufferPtr kZero = Buffer::AllocateZeroed(8);
  return kZero;
}

const BufferPtr& EmptyBuffer() {
  static const BufferPtr kEmpty = Buffer::AllocateZeroed(0);
  return kEmpty;
}

// Rebuilds the arrays of one RecordBatch message from its field nodes and body buffers.
class BatchDecoder {
 public:
  BatchDecoder(const BufferPtr& data, const MessageView& mv, const fb::RecordBatch* rb,
               Compression codec, const ReadOptions& options)
      : data_(data), mv_(mv), rb_(rb), codec_(codec), options_(options) {}

  Result<ArrayDataPtr> Load(const Field& f, int depth) {
    if (depth > options_.max_depth) {
      return Status::Corruption("field '" + f.name + "' nested deeper than " +
                                S(options_.max_depth));
    }
    const auto* nodes = rb_->nodes();
    if (nodes == nullptr || node_i_ >= nodes->size()) {
      return Status::Corruption("record batch has " + S(nodes ? nodes->size() : 0) +
                                " field nodes; field '" + f.name + "' needs more");
    }
    const fb::FieldNode node = LoadStruct(nodes->Get(node_i_++));
    auto a = std::make_shared<ArrayData>();
    a->type = f.type;
    a->length = node.length();
    a->null_count = node.null_count();
    if (a->length < 0 || a->null_count < 0 || a->null_count > a->length) {
      return Status::Corruption("field '" + f.name + "' has length " + S(a->length) +
                                " and null count " + S(a->null_count));
    }
    const DataType& t = *f.type;
    if (t.id() == TypeId::kNull) {
      a->null_count = a->length;
      return a;
    }
    STRATA_ASSIGN_OR_RETURN(BufferPtr validity, Next(f));
    if (a->null_count == 0) {
      validity = nullptr;
    } else if (validity->size() == 0) {
      return Status::Corruption("field '" + f.name + "' has " + S(a->null_count) +
                                " nulls but no validity buffer");
    }
    a->buffers.push_back(std::move(validity));
    for (int i = 1; i < t.num_buffers(); ++i) {
      STRATA_ASSIGN_OR_RETURN(BufferPtr b, Next(f));
      const bool is_offsets =
          i == 1 && (t.is_binary_like() || t.id() == TypeId::kList || t.id() == TypeId::kLargeList);
      if (is_offsets && a->length == 0 && b->size() == 0) b = ZeroBuffer();
      a->buffers.push_back(std::move(b));
    }
    for (const auto& c : t.children()) {
      STRATA_ASSIGN_OR_RETURN(auto ca, Load(*c, depth + 1));
      a->children.push_back(std::move(ca));
    }
    return a;
  }

  Status CheckAllUsed() const {
    const size_t nodes = rb_->nodes() ? rb_->nodes()->size() : 0;
    const size_t bufs = rb_->buffers() ? rb_->buffers()->size() : 0;
    if (node_i_ != nodes || buf_i_ != bufs) {
      return Status::Corruption("record batch has " + S(nodes) + " field nodes and " + S(bufs) +
                                " buffers; the schema uses " + S(node_i_) + " and " + S(buf_i_));
    }
    return Status::OK();
  }

 private:
  Result<BufferPtr> Next(const Field& f) {
    const auto* bufs = rb_->buffers();
    if (bufs == nullptr || buf_i_ >= bufs->size()) {
      return Status::Corruption("record batch has " + S(bufs ? bufs->size() : 0) +
                                " buffers; field '" + f.name + "' needs more");
    }
    const fb::Buffer b = LoadStruct(bufs->Get(buf_i_++));
    const int64_t off = b.offset();
    const int64_t len = b.length();
    if (off < 0 || len < 0 || off > mv_.body_length || len > mv_.body_length - off) {
      return Status::Corruption("buffer " + S(buf_i_ - 1) + " of field '" + f.name + "' spans [" +
                                S(off) + ", +" + S(len) + ") outside the message body of " +
                                S(mv_.body_length) + " bytes");
    }
    if (len == 0) return EmptyBuffer();
    int64_t start = mv_.body_offset + off;
    int64_t n = len;
    if (codec_ != Compression::kNone) {
      if (len < 8) {
        return Status::Corruption("compressed buffer " + S(buf_i_ - 1) + " of field '" + f.name +
                                  "' has " + S(len) + " bytes, less than its 8-byte length prefix");
      }
      int64_t raw_len;
      std::memcpy(&raw_len, data_->data() + start, 8);
      start += 8;
      n -= 8;
      if (raw_len != -1) {
        if (raw_len < 0 || raw_len > options_.max_buffer_bytes) {
          return Status::Corruption(
              "compressed buffer " + S(buf_i_ - 1) + " of field '" + f.name + "' declares " +
              S(raw_len) + " uncompressed bytes; the limit is " + S(options_.max_buffer_bytes));
        }
        auto r = internal::DecompressBuffer(codec_, data_->data() + start, n, raw_len);
        if (!r.ok()) return r.status().WithContext("field '" + f.name + "'");
        return r;
      }
    }
    if (reinterpret_cast<uintptr_t>(data_->data() + start) % 8 != 0) {
      return Buffer::CopyFrom(data_->data() + start, n);  // keep typed reads aligned
    }
    return data_->Slice(start, n);
  }

  const BufferPtr& data_;
  const MessageView& mv_;
  const fb::RecordBatch* rb_;
  Compression codec_;
  const ReadOptions& options_;
  size_t node_i_ = 0;
  size_t buf_i_ = 0;
};

Result<RecordBatchPtr> DecodeBatch(const BufferPtr& data, const MessageView& mv,
                                   const SchemaPtr& schema, const ReadOptions& options) {
  const fb::RecordBatch* rb = mv.message->header_as_RecordBatch();
  if (rb == nullptr) return Status::Corruption("record batch message has no header");
  Compression codec = Compression::kNone;
  if (const fb::BodyCompression* c = rb->compression()) {
    if (c->method() != fb::BodyCompressionMethod::BUFFER) {
      return Status::NotSupported("body compression method " + S(static_cast<int>(c->method())) +
                                  " is not supported");
    }
    switch (c->codec()) {
      case fb::CompressionType::LZ4_FRAME:
        codec = Compression::kLz4Frame;
        break;
      case fb::CompressionType::ZSTD:
        codec = Compression::kZstd;
        break;
      default:
        return Status::NotSupported("body compression codec " + S(static_cast<int>(c->codec())) +
                                    " is not supported");
    }
  }
  if (rb->length() < 0) {
    return Status::Corruption("record batch has negative length " + S(rb->length()));
  }
  BatchDecoder dec(data, mv, rb, codec, options);
  std::vector<ArrayDataPtr> cols;
  cols.reserve(static_cast<size_t>(schema->num_fields()));
  for (const auto& f : schema->fields()) {
    STRATA_ASSIGN_OR_RETURN(auto a, dec.Load(*f, 1));
    cols.push_back(std::move(a));
  }
  STRATA_RETURN_IF_ERROR(dec.CheckAllUsed());
  auto batch = std::make_shared<RecordBatch>(schema, rb->length(), std::move(cols));
  Status st = batch->Validate();
  if (!st.ok()) return Status::Corruption(st.message());
  return batch;
}

Status UnexpectedHeader(const MessageView& mv) {
  const fb::MessageHeader h = mv.message->header_type();
  if (h == fb::MessageHeader::DictionaryBatch) {
    return Status::NotSupported("IPC dictionary batch at offset " + S(mv.start) +
                                ": dictionaries are not supported");
  }
  const char* name = fb::EnumNameMessageHeader(h);
  return Status::Corruption("unexpected IPC message " +
                            std::string(name && *name ? name : "unknown") + " (" +
                            S(static_cast<int>(h)) + ") at offset " + S(mv.start));
}

}  // namespace

Result<ReadResult> ReadStream(const BufferPtr& data, const ReadOptions& options) {
  if (data == nullptr) return Status::Invalid("IPC stream data is null");
  ReadResult out;
  STRATA_ASSIGN_OR_RETURN(auto first, internal::ReadMessageAt(data, 0));
  if (first.eos) return Status::Corruption("IPC stream is empty: no schema message");
  if (first.message->header_type() != fb::MessageHeader::Schema) {
    return Status::Corruption("IPC stream does not start with a schema message");
  }
  STRATA_ASSIGN_OR_RETURN(
      out.schema, internal::DecodeSchema(first.message->header_as_Schema(), options.max_depth));
  int64_t pos = first.end;
  while (true) {
    STRATA_ASSIGN_OR_RETURN(auto mv, internal::ReadMessageAt(data, pos));
    if (mv.eos) break;
    if (mv.message->header_type() != fb::MessageHeader::RecordBatch) {
      return UnexpectedHeader(mv);
    }
    auto batch = DecodeBatch(data, mv, out.schema, options);
    if (!batch.ok()) {
      return batch.status().WithContext("record batch " +
                                        S(static_cast<int64_t>(out.batches.size())) +
                                        " at offset " + S(mv.start));
    }
    out.batches.push_back(std::move(batch).value());
    pos = mv.end;
  }
  return out;
}

Result<ReadResult> ReadFile(const BufferPtr& data, const ReadOptions& options) {
  if (data == nullptr) return Status::Invalid("IPC file data is null");
  const int64_t size = data->size();
  constexpr int64_t kMagic = 6;
  if (size < 2 * kMagic + 2 + 4) {
    return Status::Corruption("IPC file of " + S(size) + " bytes is too small");
  }
  const uint8_t* p = data->data();
  if (std::memcmp(p, "ARROW1", 6) != 0) {
    return Status::Corruption("IPC file does not start with the ARROW1 magic");
  }
  if (std::memcmp(p + size - kMagic, "ARROW1", 6) != 0) {
    return Status::Corruption("IPC file does not end with the ARROW1 magic");
  }
  int32_t footer_len;
  std::memcpy(&footer_len, p + size - kMagic - 4, 4);
  const int64_t footer_end = size - kMagic - 4;
  if (footer_len <= 0 || footer_len > footer_end - 8) {
    return Status::Corruption("IPC file footer length " + S(footer_len) +
                              " does not fit the file of " + S(size) + " bytes");
  }
  const int64_t footer_start = footer_end - footer_len;
  BufferPtr footer_buf = data->Slice(footer_start, footer_len);
  if (reinterpret_cast<uintptr_t>(footer_buf->data()) % 8 != 0) {
    footer_buf = Buffer::CopyFrom(footer_buf->data(), footer_len);
  }
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 128;
  flatbuffers::Verifier verifier(footer_buf->data(), static_cast<size_t>(footer_len), vopts);
  if (!fb::VerifyFooterBuffer(verifier)) {
    return Status::Corruption("IPC file footer is not a valid Footer flatbuffer");
  }
  const fb::Footer* footer = fb::GetFooter(footer_buf->data());
  ReadResult out;
  STRATA_ASSIGN_OR_RETURN(out.schema, internal::DecodeSchema(footer->schema(), options.max_depth));
  if (footer->dictionaries() != nullptr && footer->dictionaries()->size() > 0) {
    return Status::NotSupported("IPC file has dictionary batches; dictionaries are not supported");
  }
  // Messages must lie between the leading magic and the footer.
  BufferPtr body = data->Slice(0, footer_start);
  if (footer->recordBatches() != nullptr) {
    for (const fb::Block* bp : *footer->recordBatches()) {
      const fb::Block block = LoadStruct(bp);
      const fb::Block* b = &block;
      const int64_t i = static_cast<int64_t>(out.batches.size());
      if (b->offset() < 8 || b->offset() >= footer_start) {
        return Status::Corruption("IPC file block " + S(i) + " offset " + S(b->offset()) +
                                  " is outside [8, " + S(footer_start) + ")");
      }
      STRATA_ASSIGN_OR_RETURN(auto mv, internal::ReadMessageAt(body, b->offset()));
      if (mv.eos) {
        return Status::Corruption("IPC file block " + S(i) + " points at an end-of-stream marker");
      }
      if (mv.message->header_type() != fb::MessageHeader::RecordBatch) {
        return UnexpectedHeader(mv);
      }
      auto batch = DecodeBatch(body, mv, out.schema, options);
      if (!batch.ok()) {
        return batch.status().WithContext("record batch " + S(i) + " at offset " + S(b->offset()));
      }
      out.batches.push_back(std::move(batch).value());
    }
  }
  return out;
}

}  // namespace strata::arrow::ipc
