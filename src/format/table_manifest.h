// Reading and committing base table manifests (DESIGN.md §3: {table}/_versions/{version}.manifest,
// protobuf strata.format.TableManifest). Versions are decimal in the file name, committed with
// put_if_absent, so two writers can never both commit the same version.
// Thread-safety: stateless functions over a thread-safe ObjectStore.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "arrow/type.h"
#include "common/status.h"
#include "format/proto/table_manifest.pb.h"
#include "io/object_store.h"

namespace strata::format {

/// "{table_prefix}/_versions/{version}.manifest".
std::string TableManifestKey(const std::string& table_prefix, uint64_t version);

/// The highest committed manifest of the table at `table_prefix`, or nullopt when there is
/// none. Errors: Corruption when the newest manifest cannot be parsed; IOError.
Result<std::optional<TableManifest>> LoadLatestTableManifest(io::ObjectStore& store,
                                                             const std::string& table_prefix);

/// Writes `manifest` as version manifest.version() with put_if_absent.
/// Errors: AlreadyExists when that version is taken (a concurrent writer won); IOError.
Status CommitTableManifest(io::ObjectStore& store, const std::string& table_prefix,
                           const TableManifest& manifest);

/// `schema` as Arrow IPC stream bytes with zero record batches. Errors: from the IPC writer.
Result<std::string> EncodeSchema(const arrow::Schema& schema);
/// Inverse of EncodeSchema. Errors: Corruption naming what failed.
Result<arrow::SchemaPtr> DecodeSchema(const std::string& bytes);

}  // namespace strata::format
