// Flush of a frozen MemTable into an SSTable directory (DESIGN.md §3-§4):
// "{shard_prefix}/{random8}_gen_{g}/" holding
//   data.arrow        Arrow IPC file of every row in forward insert order (row position i =
//                     i-th row), LZ4_FRAME body compression by default;
//   deletions.bin     portable Roaring deletion vector of the rows that are older duplicates
//                     of a key within this generation (format/deletion_vector.h);
//   pk_index.bin      sorted encoded keys -> newest row position (sstable/pk_index.h);
//   bloom_filter.bin  bloom filter of the distinct keys, ~1% false positives
//                     (format/bloom_filter.h);
//   supersedes.bin    rows of older generations this generation's rows superseded
//                     (format/supersedes.h; restores liveness at open, shard/liveness.h);
//   indices/{name}/{uuid}.idx  one file per maintained index (sstable/index_files.h).
// Every file is written with put_if_absent (a fresh random directory; a taken name is an
// error, never an overwrite) and is durable before WriteSSTable returns, so the caller may then
// commit a shard manifest that references the directory. Tombstone rows are written like any
// row (they shadow older tiers); the key of the newest row decides.
// Thread-safety: stateless functions over a thread-safe ObjectStore.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/ipc/writer.h"
#include "arrow/type.h"
#include "common/status.h"
#include "format/proto/shard_manifest.pb.h"
#include "format/supersedes.h"
#include "index/column_index.h"
#include "io/object_store.h"

namespace strata::sstable {

inline constexpr char kDataFile[] = "data.arrow";
inline constexpr char kDeletionsFile[] = "deletions.bin";
inline constexpr char kPkIndexFile[] = "pk_index.bin";
inline constexpr char kBloomFilterFile[] = "bloom_filter.bin";
inline constexpr char kSupersedesFile[] = "supersedes.bin";

/// "{random8}_gen_{generation}" with `random8` = 8 random hex digits.
std::string NewSSTableDirName(uint64_t generation);
/// The generation in a directory name "{8 hex}_gen_{g}", or Invalid naming the name.
Result<uint64_t> ParseSSTableDirName(const std::string& dir_name);
/// "{shard_prefix}/{dir_name}/{file}".
std::string SSTableFileKey(const std::string& shard_prefix, const std::string& dir_name,
                           const std::string& file);

struct SSTableWriteOptions {
  arrow::ipc::Compression compression = arrow::ipc::Compression::kLz4Frame;
  double bloom_fp_rate = 0.01;
  /// Directory name to use; empty = NewSSTableDirName(generation) (tests may fix it).
  std::string dir_name;
};

/// What to flush: a frozen MemTable's rows.
struct SSTableInput {
  uint64_t generation = 0;  // >= 1
  arrow::SchemaPtr schema;  // schema of every batch, hidden columns (_rowid, _tombstone) included
  std::vector<arrow::RecordBatchPtr> batches;  // oldest first; 0-row batches are dropped
  /// Indexes into `schema` of the key columns, key order (a table without a declared primary
  /// key passes its hidden `_rowid` column). Non-empty.
  std::vector<int> key_columns;
  /// Maintained indexes covering exactly these rows (positions = row order), written under
  /// indices/ (an HNSW holding no vector, e.g. a generation of tombstones, is not written).
  std::vector<std::shared_ptr<const index::ColumnIndex>> indexes;
  /// Rows of older generations that these rows superseded (written as supersedes.bin).
  format::Supersedes supersedes;
};

/// Writes the SSTable of `input` under `shard_prefix` and returns its manifest entry
/// ({generation, path = directory name, rows, bytes}). Input with zero rows is allowed (an
/// empty SSTable). On error, files already written are removed best effort and nothing that
/// could be mistaken for a published SSTable remains referenced (the manifest is not touched).
/// Errors: Invalid (generation 0, no key columns, batch schema mismatch, more than 2^32 - 1
/// rows); NotSupported (key column type); AlreadyExists (directory name taken); IOError.
Result<format::SSTableEntry> WriteSSTable(io::ObjectStore& store, const std::string& shard_prefix,
                                          const SSTableInput& input,
                                          const SSTableWriteOptions& options = {});

/// Removes the files (data, deletions, keys, bloom filter, indices/) of SSTable directory
/// `dir_name` (missing files are fine), e.g. after a failed flush attempt or once compacted.
/// Errors: IOError.
Status RemoveSSTable(io::ObjectStore& store, const std::string& shard_prefix,
                     const std::string& dir_name);

}  // namespace strata::sstable
