#include "arrow/ipc/message.h"

#include <cstring>

namespace strata::arrow::ipc::internal {
namespace {

int32_t LoadI32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

MessageView Eos() {
  MessageView mv;
  mv.eos = true;
  return mv;
}

}  // namespace

void PadTo(std::string* out, size_t alignment) {
  const size_t rem = out->size() % alignment;
  if (rem != 0) out->append(alignment - rem, '\0');
}

int64_t AppendMessage(std::string* out, const uint8_t* flatbuffer, size_t size) {
  const size_t padded = (size + 8 + 7) / 8 * 8 - 8;  // prefix (8) + metadata is 8-aligned
  const uint32_t marker = kContinuation;
  const int32_t len = static_cast<int32_t>(padded);
  out->append(reinterpret_cast<const char*>(&marker), 4);
  out->append(reinterpret_cast<const char*>(&len), 4);
  out->append(reinterpret_cast<const char*>(flatbuffer), size);
  out->append(padded - size, '\0');
  return static_cast<int64_t>(padded) + 8;
}

void AppendEos(std::string* out) {
  const uint32_t marker = kContinuation;
  const int32_t zero = 0;
  out->append(reinterpret_cast<const char*>(&marker), 4);
  out->append(reinterpret_cast<const char*>(&zero), 4);
}

Result<MessageView> ReadMessageAt(const BufferPtr& data, int64_t pos) {
  const int64_t size = data->size();
  if (pos < 0 || pos > size) {
    return Status::Corruption("IPC message offset " + std::to_string(pos) +
                              " is outside the data (" + std::to_string(size) + " bytes)");
  }
  if (pos == size) return Eos();
  if (size - pos < 4) {
    return Status::Corruption("IPC stream truncated: " + std::to_string(size - pos) +
                              " bytes left at offset " + std::to_string(pos) +
                              ", a message length needs 4");
  }
  const uint8_t* base = data->data();
  int64_t prefix = 4;
  int32_t len = LoadI32(base + pos);
  if (static_cast<uint32_t>(len) == kContinuation) {
    if (size - pos < 8) {
      // A lone continuation marker at the very end: treat as end of stream only if nothing
      // follows; otherwise it is truncated.
      return Status::Corruption("IPC stream truncated after the continuation marker at offset " +
                                std::to_string(pos));
    }
    len = LoadI32(base + pos + 4);
    prefix = 8;
  }
  if (len == 0) return Eos();
  if (len < 0) {
    return Status::Corruption("IPC message at offset " + std::to_string(pos) +
                              " has negative metadata length " + std::to_string(len));
  }
  if (len > size - pos - prefix) {
    return Status::Corruption("IPC message at offset " + std::to_string(pos) +
                              " declares metadata of " + std::to_string(len) + " bytes but only " +
                              std::to_string(size - pos - prefix) + " remain");
  }
  MessageView mv;
  mv.start = pos;
  mv.metadata_length = prefix + len;
  const uint8_t* meta = base + pos + prefix;
  if (reinterpret_cast<uintptr_t>(meta) % 8 != 0) {
    mv.metadata = Buffer::CopyFrom(meta, len);  // flatbuffers reads scalars in place
  } else {
    mv.metadata = data->Slice(pos + prefix, len);
  }
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 128;
  vopts.max_tables = 1000000;
  flatbuffers::Verifier verifier(mv.metadata->data(), static_cast<size_t>(len), vopts);
  if (!fb::VerifyMessageBuffer(verifier)) {
    return Status::Corruption("IPC message at offset " + std::to_string(pos) +
                              " is not a valid Message flatbuffer");
  }
  mv.message = fb::GetMessage(mv.metadata->data());
  const auto version = mv.message->version();
  if (version < fb::MetadataVersion::V4 || version > fb::MetadataVersion::V5) {
    return Status::NotSupported(
        "IPC message at offset " + std::to_string(pos) + " has metadata version " +
        std::to_string(static_cast<int>(version)) + "; only V4 and V5 are supported");
  }
  const int64_t body_len = mv.message->bodyLength();
  mv.body_offset = pos + mv.metadata_length;
  if (body_len < 0 || body_len > size - mv.body_offset) {
    return Status::Corruption("IPC message at offset " + std::to_string(pos) +
                              " declares a body of " + std::to_string(body_len) +
                              " bytes but only " + std::to_string(size - mv.body_offset) +
                              " remain");
  }
  mv.body_length = body_len;
  mv.end = mv.body_offset + body_len;
  return mv;
}

}  // namespace strata::arrow::ipc::internal
