// Per-buffer body compression of Arrow IPC record batches (Arrow format specification,
// Message.fbs "BodyCompression", method BUFFER): LZ4_FRAME (one LZ4 frame, liblz4 LZ4F API) or
// ZSTD (one zstd frame, libzstd). The framing (int64 uncompressed-length prefix, -1 = stored
// uncompressed) is handled by the callers in writer.cc / reader.cc.
// Thread-safety: stateless functions; safe to call concurrently.
#pragma once

#include <cstdint>
#include <string>

#include "arrow/buffer.h"
#include "arrow/ipc/writer.h"
#include "common/status.h"

namespace strata::arrow::ipc::internal {

/// Appends the compressed form of `data[0, size)` to `out`. Errors: Internal when the codec
/// library fails (it should not for valid input).
Status CompressBuffer(Compression codec, const uint8_t* data, int64_t size, std::string* out);

/// Decompresses `data[0, size)` into a new 64-byte-aligned buffer of exactly
/// `uncompressed_size` bytes. Errors: Corruption when the input is not one valid frame of the
/// codec or does not decompress to exactly `uncompressed_size` bytes. The caller bounds
/// `uncompressed_size` (ReadOptions::max_buffer_bytes) before calling.
Result<BufferPtr> DecompressBuffer(Compression codec, const uint8_t* data, int64_t size,
                                   int64_t uncompressed_size);

/// "LZ4_FRAME", "ZSTD" or "NONE".
const char* CompressionName(Compression codec);

}  // namespace strata::arrow::ipc::internal
