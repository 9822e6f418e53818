// Arrow IPC reader for the streaming and file formats. Input is untrusted: every message
// length, flatbuffer (verified with the flatbuffers Verifier), buffer offset/length, field-node
// count, nesting depth (max 64) and decompressed size is bounds-checked; malformed input returns
// Corruption/Invalid naming what was wrong, never crashes. Dictionary-encoded fields, big-endian
// schemas and unknown types are rejected naming the field. Decoded arrays share the input
// buffer when uncompressed (zero-copy) and pass ValidateArray().
// Thread-safety: stateless functions; safe to call concurrently.
#pragma once

#include <cstdint>
#include <vector>

#include "arrow/array.h"
#include "arrow/buffer.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::arrow::ipc {

struct ReadOptions {
  /// Largest decompressed size of one buffer, bytes (guards against decompression bombs).
  int64_t max_buffer_bytes = int64_t{1} << 32;
  /// Largest nesting depth of types.
  int max_depth = 64;
};

struct ReadResult {
  SchemaPtr schema;
  std::vector<RecordBatchPtr> batches;
};

/// Reads a whole IPC stream held in `data` (schema, record batches, optional EOS; the end of
/// the data also ends the stream).
Result<ReadResult> ReadStream(const BufferPtr& data, const ReadOptions& options = {});

/// Reads an IPC file ("ARROW1" magic, footer, record-batch blocks).
Result<ReadResult> ReadFile(const BufferPtr& data, const ReadOptions& options = {});

}  // namespace strata::arrow::ipc
