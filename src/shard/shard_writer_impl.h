// Internal to shard/: the state of a ShardWriter (shard_writer.h), shared by the files that
// implement it (shard_writer.cc: open, close, snapshots; shard_replay.cc: WAL replay;
// shard_write_path.cc: puts and the syncer; shard_flush.cc: seal, waits, the flusher;
// shard_indexes.cc: index definitions and the indexer; shard_tuning.cc: settings; shard_base.cc:
// the base tier and compaction installs). Not a public interface: include only from src/shard/*.cc.
// Locks: as shard_writer.h says; every field names the lock that guards it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "format/shard_manifest.h"
#include "memtable/hidden_columns.h"
#include "memtable/memtable.h"
#include "shard/base_source.h"
#include "shard/shard_writer.h"
#include "sstable/sstable_reader.h"
#include "wal/wal_writer.h"

namespace strata::shard {

/// One MemTable with its bookkeeping. `mt` is internally locked; `pending` and `rows` are
/// guarded by Impl::mu_; `last_wal_position` is written by WAL OnDurable callbacks (no mu_).
struct GenState {
  uint64_t generation = 0;
  std::shared_ptr<memtable::MemTable> mt;
  int64_t pending = 0;   // enqueued WAL appends not yet settled (guarded by mu_)
  int64_t indexing = 0;  // puts still indexing their rows (guarded by mu_)
  /// Prepared parts of multi-shard writes (ShardWriter::Prepare) not yet published or
  /// aborted; counted from their WAL enqueue (guarded by mu_). A MemTable holding one is not
  /// sealed (no trigger fires; force_seal_active first stops new parts and waits for these),
  /// so every row written after a held part is in the same MemTable behind it and becomes
  /// visible after it: a later version of a key never shows while the held version it
  /// superseded, and the marks that version made, are invisible. Nor does it flush.
  int64_t txn_held = 0;
  int64_t rows = 0;  // rows inserted, pending ones included (guarded by mu_)
  std::atomic<uint64_t> last_wal_position{0};
  /// Liveness of this generation's rows (marked by the writer under mu_; read lock-free);
  /// the SSTable flushed from it keeps the same object.
  std::shared_ptr<Liveness> live = std::make_shared<Liveness>();
  /// (older generation, row) pairs this generation's rows superseded: its supersedes.bin
  /// (guarded by mu_; final once frozen and settled).
  std::vector<std::pair<uint64_t, int64_t>> cross_marks;
};
using GenPtr = std::shared_ptr<GenState>;

/// A prepared multi-shard part (shard_writer.h PreparedWrite): the generation holding its
/// rows and the end of their range. `done` (guarded by Impl::mu) once published or aborted.
struct PreparedState {
  GenPtr gen;
  int64_t begin = 0;  // the part's rows: [begin, end) of gen's MemTable
  int64_t end = 0;
  bool done = false;
};

struct ShardWriter::Impl {
  std::shared_ptr<io::ObjectStore> store;
  std::string shard_id;
  std::string shard_prefix;
  ShardWriterOptions options;
  memtable::StorageLayout layout;
  std::unique_ptr<format::ShardManifestStore> manifests;
  std::unique_ptr<wal::WalWriter> wal;  // internally locked; mu_ may be held when calling it
  uint64_t epoch = 0;

  mutable std::mutex mu;
  std::condition_variable cv;  // with mu: every state change
  GenPtr active;               // guarded by mu
  std::deque<GenPtr> frozen;   // guarded by mu: oldest first
  std::vector<std::shared_ptr<const sstable::SSTableReader>> sstables;  // mu: ascending gen
  std::vector<std::shared_ptr<Liveness>> sstable_live;  // guarded by mu: parallel to sstables
  format::ShardManifest manifest;  // guarded by mu: newest committed by this writer
  /// The base table (options.base; may be null): its writer side is serialised by mu.
  std::shared_ptr<BaseSource> base;
  /// Newest generation compacted into the base (SSTables <= it are not in `sstables`).
  uint64_t compacted_generation = 0;  // guarded by mu
  Status sticky;                      // guarded by mu: Fenced / WriterPoisoned
  /// When the writer opened, or `sticky` was set (describe's state_age_ms).
  std::chrono::steady_clock::time_point state_since = std::chrono::steady_clock::now();  // mu
  /// When a write with rows last reached the writer (or the writer opened): idle compaction
  /// (base::BaseTable::IdleCompactionDue) waits for a quiet shard.
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();  // mu
  bool closed = false;             // guarded by mu
  uint64_t next_rowid = 0;         // guarded by mu
  ShardWriterStats stats;          // guarded by mu
  int64_t nondurable_pending = 0;  // guarded by mu: non-durable appends the syncer owes

  std::thread flusher;
  std::thread syncer;  // non-durable mode only
  std::thread indexer;

  /// Background index work: backfill a MemTable entry, or build a definition for an SSTable.
  struct IndexTask {
    GenPtr gen;
    std::shared_ptr<memtable::MemIndexEntry> entry;
    std::shared_ptr<const sstable::SSTableReader> sstable;
    index::IndexSpec spec;
  };
  std::vector<index::IndexSpec> specs;  // guarded by mu: current definitions
  /// Names of the definitions the MemTables keep (options.memtable_indexes; nullopt: all).
  std::optional<std::vector<std::string>> memtable_names;  // guarded by mu
  bool MemTableKeeps(const index::IndexSpec& spec) const {
    if (!memtable_names) return true;
    for (const auto& n : *memtable_names) {
      if (n == spec.name) return true;
    }
    return false;
  }
  /// The definitions a MemTable keeps. Holds mu.
  std::vector<index::IndexSpec> MemTableSpecs() const {
    std::vector<index::IndexSpec> out;
    for (const auto& spec : specs) {
      if (MemTableKeeps(spec)) out.push_back(spec);
    }
    return out;
  }
  std::deque<IndexTask> index_tasks;  // guarded by mu
  /// force_seal_active calls waiting for the active MemTable's prepared parts to settle
  /// (guarded by mu): new parts wait while this is above 0, so the wait is bounded.
  int64_t seal_barrier = 0;
  bool indexer_busy = false;  // guarded by mu

  // Read cache: `visible_epoch` bumps on every visible change (OnDurable, seal, publish).
  std::atomic<uint64_t> visible_epoch{1};
  mutable std::mutex cache_mu;
  mutable std::shared_ptr<const ShardSnapshot> cached;  // guarded by cache_mu
  mutable uint64_t cached_epoch = 0;                    // guarded by cache_mu (see Snapshot)

  // --- helpers (caller holds mu unless noted) ---
  Status CheckWritable() const {
    if (closed) return Status::Invalid("shard '" + shard_id + "' writer is closed");
    return sticky;
  }
  /// A MemTable of `generation`; `with_indexes` false: without the maintained indexes (WAL
  /// replay adds them afterwards and backfills them in the background).
  Result<GenPtr> NewGen(uint64_t generation, bool with_indexes = true) {
    memtable::MemTableOptions mo;
    mo.generation = generation;
    mo.key_columns = layout.key_columns;
    mo.tombstone_column = layout.tombstone_column;
    if (with_indexes) mo.indexes = MemTableSpecs();
    STRATA_ASSIGN_OR_RETURN(auto mt, memtable::MemTable::Make(layout.storage_schema, mo));
    auto g = std::make_shared<GenState>();
    g->generation = generation;
    g->mt = std::move(mt);
    return g;
  }
  /// The tunable options in force. Holds mu.
  WriterSettings SettingsLocked() const {
    WriterSettings w;
    w.durable_write = options.durable_write;
    w.max_memtable_rows = options.max_memtable_rows;
    w.max_memtable_bytes = options.max_memtable_bytes;
    w.max_memtable_age_ms = options.max_memtable_age.count();
    w.max_unflushed_bytes = options.max_unflushed_bytes;
    w.max_frozen_memtables = options.max_frozen_memtables;
    w.write_stall_timeout_ms = options.write_stall_timeout.count();
    return w;
  }
  int64_t UnflushedBytes() const {
    int64_t b = active->mt->total_bytes();
    for (const auto& f : frozen) b += f->mt->total_bytes();
    return b;
  }
  /// What flushing every acknowledged row would write, about: the MemTables holding rows, data
  /// and index bytes (an empty active MemTable's index preallocation writes nothing).
  int64_t FlushReserveBytes() const {
    return UnflushedBytes() - (active->rows > 0 ? 0 : active->mt->total_bytes());
  }
  bool OverLimit() const {
    // An empty active MemTable with nothing frozen has nothing to flush: its bytes (an index's
    // preallocation) cannot be reduced by waiting, so they never stall a put.
    if (active->rows == 0 && frozen.empty()) return false;
    if (UnflushedBytes() >= options.max_unflushed_bytes) return true;
    return options.max_frozen_memtables > 0 &&
           static_cast<int64_t>(frozen.size()) >= options.max_frozen_memtables;
  }
  bool SealDue() const {
    // A MemTable holding a prepared part is not sealed (see txn_held): the trigger waits.
    if (active->rows == 0 || active->txn_held > 0) return false;
    return active->rows >= options.max_memtable_rows ||
           active->mt->total_bytes() >= options.max_memtable_bytes ||
           active->mt->age() >= options.max_memtable_age;
  }
  /// Freezes the active MemTable (must hold rows) and starts the next generation.
  Status SealActive() {
    STRATA_ASSIGN_OR_RETURN(GenPtr next, NewGen(active->generation + 1));
    active->mt->Freeze();
    frozen.push_back(active);
    active = std::move(next);
    ++stats.seals;
    visible_epoch.fetch_add(1);
    cv.notify_all();
    return Status::OK();
  }
  /// Records a WAL failure: Fenced (confirmed by the manifest when possible) or poison.
  void FailWrites(const Status& st) {
    if (!sticky.ok()) return;
    if (st.code() == StatusCode::kFenced) {
      sticky = Status::Fenced("shard '" + shard_id + "': another writer owns the shard (" +
                              st.message() + ")");
    } else {
      sticky = Status::WriterPoisoned("shard '" + shard_id + "' writer poisoned: " + st.ToString() +
                                      "; the shard is reopened in the background once the store "
                                      "takes writes again");
    }
    state_since = std::chrono::steady_clock::now();
    cv.notify_all();
  }

  /// One WAL entry: `storage_rows` (conformed to the storage schema, keys kept) followed by
  /// `user_rows` (conformed to the user schema; hidden columns added here, fresh `_rowid`s
  /// under mu for tables without a primary key). Later rows win over earlier ones of the same
  /// key (MemTable positions follow this order). 0-row batches must already be removed.
  /// With `txn` (one shard's part of a multi-shard write): the entry carries it and is
  /// written alone, the put waits for durability whatever durable_write says, and its rows stay
  /// invisible (held) when it returns; `*held` receives the generation holding them (then
  /// ShardWriter::Publish / Abort release it).
  Result<PutResult> Write(std::vector<arrow::RecordBatchPtr> storage_rows,
                          std::vector<arrow::RecordBatchPtr> user_rows,
                          const wal::TxnTag* txn = nullptr, GenPtr* held = nullptr,
                          int64_t* held_begin = nullptr, int64_t* held_end = nullptr);
  /// Waits (holding `lock` on mu) until rows below `end` of `g` are visible while a prepared
  /// multi-shard part ahead of them is held, so an acknowledged write is searchable.
  void AwaitVisibleBehindHeld(std::unique_lock<std::mutex>& lock, const GenPtr& g, int64_t end) {
    // The put is durable (or queued, non-durable) either way: it is acknowledged. Only when a
    // held part ahead was aborted (the writer is poisoned) or the writer closed does it
    // return before its rows are visible; they are then visible once the shard reopens.
    cv.wait(lock, [&] {
      return g->txn_held == 0 || g->mt->visible_rows() >= end || !sticky.ok() || closed;
    });
  }
  void FlusherLoop();
  void IndexerLoop();
  void RunIndexTask(const IndexTask& task);
  /// Queues builds of `spec` for every published SSTable lacking it. Holds mu.
  void QueueSSTableBuilds(const index::IndexSpec& spec) {
    for (const auto& t : sstables) {
      bool has = false;
      for (const auto& i : t->indexes()) has |= i->spec().uuid == spec.uuid;
      if (!has) index_tasks.push_back({nullptr, nullptr, t, spec});
    }
  }
  bool SpecCurrent(const index::IndexSpec& spec) const {
    for (const auto& s : specs) {
      if (s.name == spec.name && s.uuid == spec.uuid) return true;
    }
    return false;
  }
  void SyncerLoop();
  Status FlushOne(const GenPtr& g, const std::vector<index::IndexSpec>& flush_specs,
                  format::ShardManifest* committed,
                  std::shared_ptr<const sstable::SSTableReader>* reader);
  Status Replay(uint64_t start);

  /// Marks what rows [begin, begin + lookup_rows) of generation `g` (just inserted, under
  /// mu) supersede: for each, the newest older version of its key (same MemTable, then frozen
  /// MemTables newest first, then SSTables newest first: bloom filter, then key index), and
  /// the row itself when it is a tombstone. Rows past lookup_rows carry fresh `_rowid` keys
  /// (no older version can exist). Holds mu.
  void MarkRows(GenState& g, const std::vector<arrow::RecordBatchPtr>& batches, int64_t begin,
                int64_t lookup_rows);
  /// Liveness of every published SSTable at open: deletion vectors, tombstones and the
  /// supersedes.bin of newer SSTables (probing keys for SSTables written without one).
  Status LoadSSTableLiveness();
  /// The read view at this instant (ShardSnapshot without index filtering). Holds mu.
  ShardSnapshot BuildViewLocked() const;

  // --- the base tier (shard_base.cc) ---
  /// At open, after LoadSSTableLiveness: every key of an uncompacted SSTable supersedes the
  /// base's row of that key (kDead). O(keys of the uncompacted SSTables).
  void LoadBaseLiveness();
  /// Marks the base row of `key` superseded by `seq`, if the base holds one. Holds mu.
  void MarkBaseRow(const BaseSource::State& state, std::string_view key, uint64_t seq);
  /// The base as a source of a view, or nullopt when it holds no row. Holds mu.
  std::optional<SourceView> BaseViewLocked(const std::shared_ptr<const Visibility>& vis) const;
  /// InstallCompaction's checks (ShardWriter::CheckCompactionInstall). Holds mu.
  Status CheckInstallLocked(const CompactionInstall& install, int64_t appended_rows) const;
  /// Whether `t` (an SSTable of `sstables`) is compacted away. Holds mu.
  bool Compacted(uint64_t generation) const { return generation <= compacted_generation; }
};

}  // namespace strata::shard
