// WAL entry naming and encoding (DESIGN.md §3): one entry is one Arrow IPC stream file at
// "{table}/_mem_wal/{shard_id}/wal/{bit_reversed_position}.arrow", positions from 1, carrying
// schema metadata "writer_epoch" and "generation" (decimal) and, for data-less fence entries,
// "fence_sentinel" = "true". Entries always end with the IPC end-of-stream marker, so a file
// cut at a message boundary is recognised as torn.
//
// Torn entries are never overwritten (positions are never reused, DESIGN.md §3). A recovering
// writer that finds torn/corrupt entries at positions [a, b] at the tip of the log leaves
// them in place and writes its fence sentinel at b + 1 with metadata "fence_skip_from" = a:
// the sentinel vouches that a..b were unreadable when it was written, so replay skips exactly
// those positions and nothing else (see wal_reader.h).
//
// Multi-shard writes (docs/SHARDING.md "All-or-nothing multi-shard writes"): the part of one
// write that goes to one shard is an entry of its own carrying "txn_id" (the write's unique
// id) and "txn_shards" (how many shards the write touches, decimal >= 2). Such an entry counts
// only when the table's transaction log (table/txn_log.h) records the write as committed
// with this shard and position; replay skips it otherwise.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/ipc/writer.h"
#include "arrow/type.h"
#include "common/status.h"

namespace strata::wal {

inline constexpr char kWriterEpochKey[] = "writer_epoch";
inline constexpr char kGenerationKey[] = "generation";
inline constexpr char kFenceSentinelKey[] = "fence_sentinel";
/// Fence sentinels only: first position of the run of torn entries directly before the
/// sentinel that replay must skip (absent or 0: none).
inline constexpr char kFenceSkipFromKey[] = "fence_skip_from";
inline constexpr char kTxnIdKey[] = "txn_id";
inline constexpr char kTxnShardsKey[] = "txn_shards";

/// The multi-shard write an entry belongs to (empty id: none).
struct TxnTag {
  std::string id;
  uint64_t shards = 0;  // shards the write touches (>= 2 when id is set)
  bool empty() const { return id.empty(); }
};

/// "{shard_prefix}/wal/", where shard_prefix is "{table}/_mem_wal/{shard_id}".
std::string WalDir(const std::string& shard_prefix);
/// "{shard_prefix}/wal/{bit_reversed(position)}.arrow".
std::string WalEntryKey(const std::string& shard_prefix, uint64_t position);
/// Position of a WAL entry file name ("{64 bits}.arrow", no directory), or nullopt.
std::optional<uint64_t> ParseWalEntryName(const std::string& name);

/// One decoded WAL entry.
struct WalEntry {
  uint64_t position = 0;
  uint64_t writer_epoch = 0;
  uint64_t generation = 0;
  bool fence_sentinel = false;
  /// Fence sentinels only: positions [fence_skip_from, position) were torn when the sentinel
  /// was written and are skipped by replay; 0 = none.
  uint64_t fence_skip_from = 0;
  /// The multi-shard write this entry is a part of (empty: an ordinary entry).
  TxnTag txn;
  /// The entry's schema without the WAL metadata keys (the table schema when it was written).
  arrow::SchemaPtr schema;
  /// Batches under `schema`.
  std::vector<arrow::RecordBatchPtr> batches;
  int64_t num_rows = 0;
};

/// `schema` with the WAL metadata keys set (other schema metadata kept).
arrow::SchemaPtr WalEntrySchema(const arrow::Schema& schema, uint64_t writer_epoch,
                                uint64_t generation, bool fence_sentinel = false,
                                uint64_t fence_skip_from = 0, const TxnTag& txn = {});

/// Serializes one entry: the batches re-labelled with WalEntrySchema(...), IPC stream with EOS.
/// Errors: from the IPC writer (Invalid when a batch does not match `schema`).
Result<std::string> EncodeWalEntry(const arrow::Schema& schema,
                                   const std::vector<arrow::RecordBatchPtr>& batches,
                                   uint64_t writer_epoch, uint64_t generation,
                                   arrow::ipc::Compression compression, bool fence_sentinel = false,
                                   uint64_t fence_skip_from = 0, const TxnTag& txn = {});

/// Parses the bytes of the entry at `position`. Errors: Corruption naming the position and
/// what is wrong (no EOS marker = torn, IPC decode failure, missing/invalid metadata).
Result<WalEntry> DecodeWalEntry(uint64_t position, std::string bytes);

}  // namespace strata::wal
