// One write across several shards, all or nothing (docs/SHARDING.md "All-or-nothing
// multi-shard writes"): two-phase commit through the table's transaction log (txn_log.h).
//  1. Prepare: every shard's part is written as one WAL entry tagged with a fresh txn id
//     (shard::ShardWriter::Prepare), in parallel; each part is durable and invisible.
//  2. Decide: the commit record {txn id, every part's shard and WAL position} is stored with
//     put-if-absent. That put is the commit point.
//  3. Publish every part (rows become visible), then acknowledge. If a part failed, or the
//     commit was refused or its outcome stayed unknown, the write is decided aborted where it
//     can be and every prepared part is aborted, which poisons its shard writer: the table
//     reopens it (writer_recovery.h) and its replay skips the part (ShardWriterOptions::
//     txn_committed = TxnLog::PartCommitted), so the rows are in no shard.
// A write whose rows all route to one shard is not a transaction: it is that shard's Apply.
// Cost of a multi-shard write: the slowest part's WAL put, then one small record put.
// Thread-safety: WriteAllOrNothing may run from many threads at once; the caller serialises it
// against whatever must not interleave (the table's write lock), and keeps every writer alive
// until it returns (a writer reopened meanwhile would be a dangling pointer).
// Known limits: an abort can only poison (a reopen removes the held rows), so a part refused
// for backpressure or free space poisons the shards where the others prepared; two writes that
// each hold a part in a shard the other waits on for backpressure wait out the stall timeout.
#pragma once

#include <chrono>
#include <shared_mutex>

#include <string>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "shard/shard_writer.h"
#include "table/txn_log.h"

namespace strata::table {

/// One shard's part of a write: rows as ShardWriter::Apply takes them.
struct ShardWrite {
  shard::ShardWriter* writer = nullptr;
  std::vector<arrow::RecordBatchPtr> storage_rows;
  std::vector<arrow::RecordBatchPtr> user_rows;
};

struct MultiShardWriteResult {
  std::vector<shard::PutResult> puts;  // one per part, in the order given (0 rows: empty)
  std::string txn_id;                  // empty when no transaction was needed
};

/// Writes `parts` all or nothing (see the file comment). Parts with no rows are skipped; one
/// part left is a plain Apply. `request_id` is recorded in the commit record (informative).
/// Errors: Invalid when a part's rows fail ShardWriter::CheckApply (nothing written); a
/// part's Prepare error (Backpressure, InsufficientStorage, Fenced, WriterPoisoned, IOError:
/// every other prepared part aborted, which poisons those shards until their reopen); Fenced when
/// the write was decided aborted by another (a replay); the commit put's error when its outcome
/// stayed unknown (every part aborted; the rows count nowhere until a replay decides, and then only
/// if the commit did land).
/// `publish_mu` (optional): every part first waits until the rows ahead of it are visible
/// (ShardWriter::AwaitPublishable, up to `ready_timeout` from the end of the prepares; a
/// failure aborts the write), then
/// the parts publish holding it exclusively, so a reader that builds its view of every shard
/// holding it shared sees all of the write or none (LocalTable). The caller must then run one
/// such write at a time per set of shards: two writes holding parts ahead of each other in
/// different shards would each wait for the other.
Result<MultiShardWriteResult> WriteAllOrNothing(TxnLog& log, std::vector<ShardWrite> parts,
                                                const std::string& request_id = "",
                                                std::shared_mutex* publish_mu = nullptr,
                                                std::chrono::milliseconds ready_timeout = {});

}  // namespace strata::table
