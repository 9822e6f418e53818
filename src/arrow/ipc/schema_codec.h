// Conversion between Strata schemas (arrow/type.h) and the Arrow IPC Schema flatbuffer
// (fbs/Schema.fbs, from the Arrow format specification). Used by the IPC writer and reader.
// Thread-safety: stateless functions; safe to call concurrently.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include "arrow/ipc/fbs/Schema_generated.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::arrow::ipc::internal {

namespace fb = org::apache::arrow::flatbuf;

/// Serializes `schema` (little-endian, field and schema custom metadata included) into `fbb`.
/// Every type of type.h is supported. Errors: Invalid naming the field when a type is missing
/// or a parameter is out of range (e.g. a time32 with a micro unit).
Result<flatbuffers::Offset<fb::Schema>> EncodeSchema(flatbuffers::FlatBufferBuilder& fbb,
                                                     const Schema& schema);

/// Decodes an already verified Schema flatbuffer. Errors: NotSupported naming the field for
/// dictionary-encoded fields, big-endian schemas and types Strata does not carry (union, map,
/// run-end encoded, views, interval, decimal256); Corruption for impossible parameters (bad
/// bit width, wrong child count) or nesting deeper than `max_depth`.
Result<SchemaPtr> DecodeSchema(const fb::Schema* schema, int max_depth);

}  // namespace strata::arrow::ipc::internal
