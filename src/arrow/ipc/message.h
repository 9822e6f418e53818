// Arrow IPC encapsulated message framing (Arrow format specification, "Encapsulated message
// format"): 0xFFFFFFFF continuation marker, int32 little-endian metadata length (flatbuffer plus
// padding so the body starts 8-byte aligned), the Message flatbuffer, then the body. The
// pre-0.15 framing without continuation marker is accepted on read. Length 0 is end-of-stream.
// Thread-safety: stateless functions; safe to call concurrently.
#pragma once

#include <cstdint>
#include <string>

#include "arrow/buffer.h"
#include "arrow/ipc/fbs/Message_generated.h"
#include "common/status.h"

namespace strata::arrow::ipc::internal {

namespace fb = org::apache::arrow::flatbuf;

inline constexpr uint32_t kContinuation = 0xFFFFFFFFu;

/// One decoded message: the verified flatbuffer (kept alive by `metadata`) and the location of
/// its body inside the input.
struct MessageView {
  bool eos = false;    // true: end of stream, no message (other fields unset)
  BufferPtr metadata;  // the flatbuffer bytes (an aligned copy if the input was not)
  const fb::Message* message = nullptr;
  int64_t start = 0;            // offset of the message (its marker or length prefix)
  int64_t metadata_length = 0;  // prefix + flatbuffer + padding, bytes
  int64_t body_offset = 0;      // offset of the body in the input
  int64_t body_length = 0;
  int64_t end = 0;  // offset just past the body
};

/// Reads the message starting at `pos` of `data`. Returns a view with `eos` set at
/// end-of-stream (an EOS marker, or `pos` == size). Errors: Corruption when a length is negative or
/// runs past the data, the flatbuffer fails verification, or the metadata version is older than V4.
Result<MessageView> ReadMessageAt(const BufferPtr& data, int64_t pos);

/// Appends one framed message (marker, padded length, flatbuffer, zero padding) to `out` and
/// returns the metadata length written (prefix included). The caller appends the body.
int64_t AppendMessage(std::string* out, const uint8_t* flatbuffer, size_t size);

/// Appends the end-of-stream marker (0xFFFFFFFF, 0).
void AppendEos(std::string* out);

/// Appends zero bytes until out->size() is a multiple of `alignment`.
void PadTo(std::string* out, size_t alignment);

}  // namespace strata::arrow::ipc::internal
