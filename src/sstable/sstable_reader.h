// Reader of one SSTable directory written by sstable_writer.h: loads data.arrow (all batches,
// decoded eagerly), deletions.bin, pk_index.bin, bloom_filter.bin and (when present)
// supersedes.bin, validating each (IPC
// reader bounds checks, checksums). Key lookups consult the bloom filter first, then the
// primary-key index (DESIGN.md §6).
// Maintained indexes (indices/, sstable/index_files.h) are loaded at Open; an index built
// later for a new definition is attached with AttachIndex (the one mutable part, under
// `indexes_mu_`).
// Thread-safety: rows are immutable after Open; every const method may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "format/bloom_filter.h"
#include "format/deletion_vector.h"
#include "format/proto/shard_manifest.pb.h"
#include "format/supersedes.h"
#include "index/column_index.h"
#include "io/object_store.h"
#include "sstable/pk_index.h"

namespace strata::sstable {

/// Name of the bool column marking tombstone rows (W's MemTable writes it when present).
inline constexpr char kTombstoneColumn[] = "_tombstone";

/// The newest row of a key in one SSTable.
struct SSTableLookup {
  int64_t position = 0;    // row position in data.arrow
  bool tombstone = false;  // that row deletes the key (its `_tombstone` is true)
};

class SSTableReader {
 public:
  /// Opens SSTable `dir_name` ("{random8}_gen_{g}") under `shard_prefix`. The generation is
  /// taken from the directory name.
  /// Errors: NotFound (a file missing); Corruption (a file fails validation, or the files
  /// disagree: deletion/pk positions beyond the row count); Invalid (bad directory name);
  /// IOError.
  /// `load_indexes` false skips indices/ (the flusher attaches the indexes it just wrote).
  static Result<std::shared_ptr<const SSTableReader>> Open(io::ObjectStore& store,
                                                           const std::string& shard_prefix,
                                                           const std::string& dir_name,
                                                           bool load_indexes = true);
  /// Same, from a manifest entry (also checks entry.rows and entry.generation match).
  static Result<std::shared_ptr<const SSTableReader>> Open(io::ObjectStore& store,
                                                           const std::string& shard_prefix,
                                                           const format::SSTableEntry& entry,
                                                           bool load_indexes = true);

  uint64_t generation() const { return generation_; }
  const std::string& dir_name() const { return dir_name_; }
  const arrow::SchemaPtr& schema() const { return schema_; }
  /// Every row in forward insert order (superseded and tombstone rows included).
  const std::vector<arrow::RecordBatchPtr>& batches() const { return batches_; }
  int64_t num_rows() const { return num_rows_; }
  /// Bytes of the four files.
  int64_t num_bytes() const { return num_bytes_; }
  /// Rows that are older duplicates of a key within this SSTable.
  const format::DeletionVector& deletions() const { return deletions_; }
  const PkIndex& pk_index() const { return pk_index_; }
  const format::BloomFilter& bloom_filter() const { return bloom_; }
  /// Rows of older generations this SSTable's rows superseded (supersedes.bin); nullopt for an
  /// SSTable written before that file existed.
  const std::optional<format::Supersedes>& supersedes() const { return supersedes_; }

  /// Bloom filter check only: false = key certainly absent.
  bool MayContain(std::string_view key) const { return bloom_.MayContain(key); }
  /// Newest row of `key` (bloom filter first, then the primary-key index), or nullopt.
  std::optional<SSTableLookup> Lookup(std::string_view key) const;
  /// (batch index, row inside the batch) of row `position`, or (-1, -1) when out of range.
  std::pair<int64_t, int64_t> Locate(int64_t position) const;
  /// Whether row `position` is a tombstone (false when there is no `_tombstone` column).
  bool IsTombstone(int64_t position) const;

  /// The maintained indexes loaded or attached (each covers every row), any definition.
  std::vector<std::shared_ptr<const index::ColumnIndex>> indexes() const;
  /// Adds `index` (built over this SSTable's rows), replacing one of the same name.
  void AttachIndex(std::shared_ptr<const index::ColumnIndex> index) const;

 private:
  SSTableReader() = default;

  uint64_t generation_ = 0;
  std::string dir_name_;
  arrow::SchemaPtr schema_;
  std::vector<arrow::RecordBatchPtr> batches_;
  std::vector<int64_t> batch_starts_;  // first row position of each batch
  int64_t num_rows_ = 0;
  int64_t num_bytes_ = 0;
  int tombstone_column_ = -1;
  format::DeletionVector deletions_;
  PkIndex pk_index_;
  format::BloomFilter bloom_ = format::BloomFilter::ForKeys(1);
  std::optional<format::Supersedes> supersedes_;
  mutable std::mutex indexes_mu_;
  mutable std::vector<std::shared_ptr<const index::ColumnIndex>> indexes_;  // indexes_mu_
};

}  // namespace strata::sstable
