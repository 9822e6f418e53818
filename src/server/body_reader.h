// Reads a request body (Content-Length or chunked) into a 64-byte-aligned buffer while
// enforcing the server's body limit (PROTOCOL.md §0: 413 payload_too_large naming the limit).
// Past the limit the rest of the body is read and discarded (up to kMaxDrainBytes more) so the
// client receives the 413 instead of a reset connection.
// Thread-safety: per-request; no shared state.
#pragma once

#include <cstdint>

#include <httplib.h>

#include "arrow/buffer.h"
#include "common/status.h"

namespace strata::server {

/// Bytes read and discarded past the limit before the server gives up on the connection.
inline constexpr int64_t kMaxDrainBytes = int64_t{64} << 20;

/// The whole body. Errors: PayloadTooLarge ("request body exceeds the limit of N bytes
/// (--max-body-bytes)"), Invalid when the client stops sending mid-body.
Result<arrow::BufferPtr> ReadBody(const httplib::ContentReader& reader, int64_t max_body_bytes);

}  // namespace strata::server
