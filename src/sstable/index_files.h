// The maintained indexes of an SSTable (DESIGN.md §3, §5): one file per index definition,
//   {shard_prefix}/{sstable dir}/indices/{name}/{uuid}.idx
// holding index::ColumnIndex::Serialize() (the definition plus the algorithm's own format).
// The name is percent-escaped (bytes outside [A-Za-z0-9_-] become %XX; an escaped name over
// 120 bytes is cut and suffixed with its xxhash64, so every name fits a file name); the uuid
// tells a re-created definition of the same name from the old one. A flush writes the files of
// every definition before publishing the SSTable; a definition created later is built over the
// SSTable's rows in the background and its file added then (the SSTable's rows never change,
// so adding a file is safe).
// Thread-safety: stateless functions over a thread-safe ObjectStore.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "arrow/type.h"
#include "common/status.h"
#include "index/column_index.h"
#include "io/object_store.h"

namespace strata::sstable {

/// "{shard_prefix}/{dir_name}/indices/{escaped name}/{uuid}.idx".
std::string IndexFileKey(const std::string& shard_prefix, const std::string& dir_name,
                         const index::IndexSpec& spec);

/// Writes `index`'s file (put-if-absent; an existing file of the same definition is kept).
/// Returns the bytes written (0 when it existed). Errors: IOError.
Result<int64_t> WriteIndexFile(io::ObjectStore& store, const std::string& shard_prefix,
                               const std::string& dir_name, const index::ColumnIndex& index);

/// Loads every index file of SSTable `dir_name` against its storage `schema`. A file that
/// fails to load is skipped with an error log (queries then scan the SSTable exactly): an
/// index is never needed for correctness. Errors: IOError from listing.
Result<std::vector<std::shared_ptr<const index::ColumnIndex>>> LoadIndexFiles(
    io::ObjectStore& store, const std::string& shard_prefix, const std::string& dir_name,
    const arrow::Schema& schema);

/// Removes every index file of SSTable `dir_name` (all definitions). Errors: IOError.
Status RemoveIndexFiles(io::ObjectStore& store, const std::string& shard_prefix,
                        const std::string& dir_name);

}  // namespace strata::sstable
