// Arrow IPC writer: streaming format and file format (Arrow columnar format specification,
// "Serialization and Interprocess Communication (IPC)"). Messages are flatbuffers built from
// our own schema files in fbs/ (written from that specification). Body buffers are 8-byte
// aligned and padded (64 where cheap); optional per-buffer LZ4_FRAME or ZSTD body compression
// (each compressed buffer prefixed with its uncompressed length as int64 little-endian).
// Thread-safety: stateless functions; safe to call concurrently.
#pragma once

#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::arrow::ipc {

enum class Compression { kNone, kLz4Frame, kZstd };

struct WriteOptions {
  Compression compression = Compression::kNone;
};

/// Serializes `schema` and `batches` as an IPC stream: schema message, one record-batch message
/// per batch (0-row batches included), then the EOS marker 0xFFFFFFFF 0x00000000.
/// Errors: Invalid when a batch's schema does not match `schema`.
Result<std::string> WriteStream(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                                const WriteOptions& options = {});

/// Serializes as an IPC file: "ARROW1" + 2 padding bytes, the stream (with EOS), the footer
/// flatbuffer (schema + record-batch blocks), footer length (int32), "ARROW1".
Result<std::string> WriteFile(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                              const WriteOptions& options = {});

}  // namespace strata::arrow::ipc
