#include "shard/shard_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "format/shard_manifest.h"
#include "memtable/hidden_columns.h"
#include "memtable/memtable.h"
#include "shard/batch_conformance.h"
#include "shard/shard_writer_impl.h"
#include "sstable/sstable_reader.h"
#include "wal/wal_entry.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace strata::shard {

std::string ShardPrefix(const std::string& table_prefix, const std::string& shard_id) {
  return table_prefix + "/_mem_wal/" + shard_id;
}

namespace {

Status ValidateShardId(const std::string& id) {
  if (id.empty() || id.size() > 128) {
    return Status::Invalid("shard id must be 1 to 128 characters, got " +
                           std::to_string(id.size()));
  }
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return Status::Invalid("shard id '" + id + "' may only hold [A-Za-z0-9_-]");
  }
  return Status::OK();
}

}  // namespace

void ShardWriter::Impl::MarkRows(GenState& g, const std::vector<arrow::RecordBatchPtr>& batches,
                                 int64_t begin, int64_t lookup_rows) {
  int64_t total = 0;
  for (const auto& b : batches) total += b->num_rows();
  g.live->EnsureRows(begin + total);
  if (lookup_rows <= 0) return;
  const std::vector<std::string> keys = g.mt->RowKeys(begin, begin + lookup_rows);
  const BaseSource::State base_state = base ? base->CurrentState() : BaseSource::State{};
  const int ts = layout.tombstone_column;
  int64_t pos = begin;
  for (const auto& b : batches) {
    const arrow::Array tomb = b->column(ts);
    for (int64_t i = 0; i < b->num_rows() && pos < begin + lookup_rows; ++i, ++pos) {
      const uint64_t seq = RowAddress(g.generation, pos);
      const std::string& key = keys[static_cast<size_t>(pos - begin)];
      bool found = false;
      if (auto p = g.mt->LookupBefore(key, pos)) {
        g.live->Supersede(*p, seq);
        found = true;
      }
      for (auto it = frozen.rbegin(); !found && it != frozen.rend(); ++it) {
        GenState& f = **it;
        if (f.generation >= g.generation) continue;
        if (auto p = f.mt->LookupBefore(key, f.mt->num_rows())) {
          if (f.live->Supersede(*p, seq)) g.cross_marks.emplace_back(f.generation, *p);
          found = true;
        }
      }
      for (size_t t = sstables.size(); !found && t-- > 0;) {
        const auto& sst = sstables[t];
        if (sst->generation() >= g.generation || !sst->MayContain(key)) continue;
        if (auto hit = sst->Lookup(key)) {
          if (sstable_live[t]->Supersede(hit->position, seq)) {
            g.cross_marks.emplace_back(sst->generation(), hit->position);
          }
          found = true;
        }
      }
      if (!found && base_state.rows > 0) MarkBaseRow(base_state, key, seq);
      if (tomb.IsValid(i) && tomb.BoolValue(i)) g.live->Supersede(pos, seq);
    }
  }
}

Status ShardWriter::Impl::LoadSSTableLiveness() {
  sstable_live.clear();
  for (const auto& t : sstables) {
    auto live = std::make_shared<Liveness>();
    live->EnsureRows(t->num_rows());
    for (uint32_t p : t->deletions().ToVector()) live->Supersede(p, Liveness::kDead);
    const int ts = layout.tombstone_column;
    int64_t base = 0;
    for (const auto& b : t->batches()) {
      const arrow::Array tomb = b->column(ts);
      if (tomb.length() > 0) {
        for (int64_t i = 0; i < b->num_rows(); ++i) {
          if (tomb.IsValid(i) && tomb.BoolValue(i)) live->Supersede(base + i, Liveness::kDead);
        }
      }
      base += b->num_rows();
    }
    sstable_live.push_back(std::move(live));
  }
  auto index_of = [&](uint64_t gen) -> int64_t {
    for (size_t i = 0; i < sstables.size(); ++i) {
      if (sstables[i]->generation() == gen) return static_cast<int64_t>(i);
    }
    return -1;
  };
  for (size_t i = 0; i < sstables.size(); ++i) {
    const auto& t = sstables[i];
    if (t->supersedes().has_value()) {
      for (const auto& [gen, dv] : t->supersedes()->generations) {
        const int64_t o = index_of(gen);
        if (o < 0) continue;  // a generation no longer published
        for (uint32_t p : dv.ToVector()) {
          sstable_live[static_cast<size_t>(o)]->Supersede(p, Liveness::kDead);
        }
      }
      continue;
    }
    // Written before supersedes.bin existed: probe each newest key against older SSTables.
    const sstable::PkIndex& pk = t->pk_index();
    for (int64_t k = 0; k < pk.size(); ++k) {
      const std::string_view key = pk.key(k);
      for (size_t o = i; o-- > 0;) {
        if (!sstables[o]->MayContain(key)) continue;
        if (auto hit = sstables[o]->Lookup(key)) {
          sstable_live[o]->Supersede(hit->position, Liveness::kDead);
          break;
        }
      }
    }
  }
  return Status::OK();
}

ShardSnapshot ShardWriter::Impl::BuildViewLocked() const {
  ShardSnapshot out;
  out.schema = layout.user_schema;
  out.storage_schema = layout.storage_schema;
  out.rowid_column = layout.rowid_column;
  out.index_specs = specs;
  out.compacted_generation = compacted_generation;
  out.base_epoch = base ? base->epoch() : 0;
  auto vis = std::make_shared<Visibility>();
  std::vector<GenPtr> gens(frozen.begin(), frozen.end());
  gens.push_back(active);
  std::vector<memtable::MemTableView> snaps;
  for (const auto& g : gens) {
    snaps.push_back(g->mt->View());
    vis->memtables.push_back({g->generation, snaps.back().num_rows});
  }
  out.visibility = vis;
  uint64_t wal_position = manifest.replay_after_wal_entry_position();
  auto current = [&](const std::shared_ptr<const index::ColumnIndex>& idx) {
    for (const auto& spec : specs) {
      if (spec.name == idx->spec().name && spec.uuid == idx->spec().uuid) return true;
    }
    return false;
  };
  if (auto b = BaseViewLocked(vis)) {
    out.num_rows += b->live_rows;
    out.sources.push_back(std::move(*b));
  }
  for (size_t i = 0; i < sstables.size(); ++i) {
    const auto& t = sstables[i];
    SourceView v;
    v.name = "sstable gen " + std::to_string(t->generation());
    v.generation = t->generation();
    for (const auto& b : t->batches()) {
      if (b->num_rows() == 0) continue;
      v.batches.push_back(b);
      v.batch_starts.push_back(v.num_rows);
      v.num_rows += b->num_rows();
    }
    v.liveness = sstable_live[i];
    v.visibility = vis;
    v.live_rows = v.num_rows - sstable_live[i]->DeadIn(*vis);
    for (auto& idx : t->indexes()) {
      if (current(idx)) v.indexes.push_back(std::move(idx));
    }
    if (layout.rowid_column < 0) {
      v.key_columns = layout.key_columns;
      v.find_key = [t](std::string_view key) -> std::optional<int64_t> {
        auto hit = t->Lookup(key);
        if (!hit) return std::nullopt;
        return hit->position;
      };
    }
    out.num_rows += v.live_rows;
    out.sources.push_back(std::move(v));
  }
  for (size_t i = 0; i < gens.size(); ++i) {
    const GenPtr& g = gens[i];
    // Taken after the rows: a complete index covers every row visible now, a superset.
    std::vector<std::shared_ptr<const index::ColumnIndex>> indexes = g->mt->CompleteIndexes();
    const memtable::MemTableView& m = snaps[i];
    wal_position = std::max(wal_position, m.last_wal_position);
    SourceView v;
    v.memtable = true;
    v.generation = g->generation;
    v.name = "memtable gen " + std::to_string(g->generation) +
             (i + 1 == gens.size() ? " (active)" : " (frozen)");
    v.batches = m.batches;  // the MemTable skips 0-row batches
    v.batch_starts = m.batch_starts;
    v.num_rows = m.num_rows;
    v.liveness = g->live;
    v.visibility = vis;
    v.live_rows = v.num_rows - g->live->DeadIn(*vis);
    for (auto& idx : indexes) {
      if (current(idx)) v.indexes.push_back(std::move(idx));
    }
    if (layout.rowid_column < 0) {
      v.key_columns = layout.key_columns;
      v.find_key = [mt = g->mt, watermark = m.num_rows](std::string_view key) {
        return mt->Lookup(key, watermark);
      };
    }
    out.num_rows += v.live_rows;
    out.sources.push_back(std::move(v));
  }
  out.last_wal_position = wal_position;
  return out;
}

ShardWriter::ShardWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ShardWriter::~ShardWriter() { close(); }

Result<std::unique_ptr<ShardWriter>> ShardWriter::Open(std::shared_ptr<io::ObjectStore> store,
                                                       std::string table_prefix,
                                                       std::string shard_id,
                                                       arrow::SchemaPtr schema,
                                                       ShardWriterOptions options) {
  STRATA_RETURN_IF_ERROR(ValidateShardId(shard_id));
  if (schema == nullptr) return Status::Invalid("shard schema is null");
  STRATA_RETURN_IF_ERROR(ValidateTableSchema(*schema));
  if (options.max_memtable_rows < 1 || options.max_memtable_bytes < 1 ||
      options.max_unflushed_bytes < 1 || options.max_wal_entry_bytes < 1 ||
      options.flush_retries < 0) {
    return Status::Invalid(
        "shard options: max_memtable_rows, max_memtable_bytes, max_unflushed_bytes and "
        "max_wal_entry_bytes must be >= 1 and flush_retries >= 0");
  }
  if (options.base_lane < 0 || options.base_lane >= Liveness::kMaxLanes ||
      (options.base_lane > 0 && options.base_in_view)) {
    // A lane above 0 is a shard of a shared base, whose view only the table can build.
    return Status::Invalid("shard options: base_lane " + std::to_string(options.base_lane) +
                           " must be in [0, " + std::to_string(Liveness::kMaxLanes) +
                           "), and above 0 only with base_in_view false");
  }
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.store = std::move(store);
  s.shard_id = std::move(shard_id);
  s.shard_prefix = ShardPrefix(table_prefix, s.shard_id);
  s.options = options;
  STRATA_ASSIGN_OR_RETURN(s.layout, memtable::MakeStorageLayout(schema, options.primary_key));
  s.manifests = std::make_unique<format::ShardManifestStore>(s.store, s.shard_prefix, s.shard_id);
  for (const auto& spec : options.indexes) {
    STRATA_RETURN_IF_ERROR(index::ValidateIndexSpec(spec, *s.layout.storage_schema));
  }
  s.specs = options.indexes;
  s.memtable_names = options.memtable_indexes;

  // 1. Claim: writer_epoch + 1. From here on an older writer fails its next manifest commit.
  STRATA_ASSIGN_OR_RETURN(s.manifest, s.manifests->Claim());
  s.epoch = s.manifest.writer_epoch();

  // 2. Published SSTables (also the highest _rowid they hold).
  s.base = options.base;
  s.compacted_generation = options.compacted_generation;
  if (s.base != nullptr && s.layout.rowid_column >= 0) {
    const BaseSource::State st = s.base->CurrentState();
    const auto batches = s.base->Batches(st);
    for (size_t k = 0; k < batches.size(); ++k) {
      arrow::Array ids = batches[k]->column(s.layout.rowid_column);
      for (int64_t i = 0; i < ids.length(); ++i) {
        s.next_rowid = std::max(s.next_rowid, ids.Value<uint64_t>(i) + 1);
      }
    }
  }
  for (const auto& e : s.manifest.sstables()) {
    if (e.generation() <= s.compacted_generation) continue;  // in the base
    auto r = sstable::SSTableReader::Open(*s.store, s.shard_prefix, e);
    if (!r.ok()) return r.status().WithContext("shard '" + s.shard_id + "'");
    if (s.layout.rowid_column >= 0) {
      for (const auto& b : (*r)->batches()) {
        arrow::Array ids = b->column(s.layout.rowid_column);
        for (int64_t i = 0; i < ids.length(); ++i) {
          s.next_rowid = std::max(s.next_rowid, ids.Value<uint64_t>(i) + 1);
        }
      }
    }
    s.sstables.push_back(std::move(*r));
  }
  STRATA_RETURN_IF_ERROR(s.LoadSSTableLiveness());
  s.LoadBaseLiveness();

  // 3. Replay the WAL and write the fence sentinel at the tip.
  STRATA_RETURN_IF_ERROR(s.Replay(s.manifest.replay_after_wal_entry_position() + 1));

  // Definitions an SSTable lacks (created while it was published, or a crash before its
  // background build finished) are built again in the background.
  // Replayed MemTables: add the index definitions now (rows inserted from here on are indexed
  // by their put) and backfill the replayed rows in the indexer thread, newest MemTable
  // first (the active one takes the queries' fresh rows).
  {
    std::vector<GenPtr> replayed(s.frozen.begin(), s.frozen.end());
    replayed.push_back(s.active);
    for (auto it = replayed.rbegin(); it != replayed.rend(); ++it) {
      const GenPtr& g = *it;
      if (!g->mt->IndexEntries().empty() || g->mt->num_rows() == 0) continue;
      for (const auto& spec : s.MemTableSpecs()) {
        auto entry = g->mt->AddIndex(spec);
        if (!entry.ok()) return entry.status().WithContext("shard '" + s.shard_id + "'");
        if (!(*entry)->complete.load()) s.index_tasks.push_back({g, *entry, nullptr, spec});
      }
    }
  }
  for (const auto& spec : s.specs) s.QueueSSTableBuilds(spec);

  std::unique_ptr<ShardWriter> w(new ShardWriter(std::move(impl)));
  w->impl_->indexer = std::thread([p = w->impl_.get()] { p->IndexerLoop(); });
  if (w->impl_->options.start_flusher) {
    w->impl_->flusher = std::thread([p = w->impl_.get()] { p->FlusherLoop(); });
  }
  if (!w->impl_->options.durable_write) {
    w->impl_->syncer = std::thread([p = w->impl_.get()] { p->SyncerLoop(); });
  }
  return w;
}

// ----------------------------------------------------------------------------------------
// Close

void ShardWriter::close() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.closed = true;
    s.cv.notify_all();
  }
  if (s.flusher.joinable()) s.flusher.join();
  const bool syncer_ran = s.syncer.joinable();  // the writer was non-durable at some point
  if (s.syncer.joinable()) s.syncer.join();
  if (s.indexer.joinable()) s.indexer.join();
  // Non-durable puts (durable_write=false) return once their WAL append is queued; the syncer
  // returns as soon as it sees `closed`, so appends queued while it was inside its last Sync
  // would be dropped unwritten by ~WalWriter. Puts fail once `closed` is set (under mu), so
  // this Sync covers every put that returned OK.
  if (syncer_ran && s.wal) {
    Status synced = s.wal->Sync();
    if (!synced.ok()) {
      spdlog::error("closing shard '{}': WAL sync of non-durable puts failed: {}", s.shard_id,
                    synced.ToString());
    }
  }
}

// ----------------------------------------------------------------------------------------
// Reads and introspection

Result<std::shared_ptr<const ShardSnapshot>> ShardWriter::Snapshot() const {
  Impl& s = *impl_;
  const uint64_t epoch = s.visible_epoch.load();
  {
    std::lock_guard<std::mutex> lock(s.cache_mu);
    if (s.cached && s.cached_epoch == epoch) return s.cached;
  }
  std::shared_ptr<const ShardSnapshot> shared;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    shared = std::make_shared<const ShardSnapshot>(s.BuildViewLocked());
  }
  // A visible change (a watermark moving in MarkDurable / IndexRows) happens before its
  // epoch bump, so two views built under one epoch may differ, and a view built by a caller
  // that read an older epoch may be newer than the cached one. The cache therefore only ever
  // moves forward by content: rows only become visible (a flush publishes exactly the rows its
  // MemTable showed), so the visible row count orders views, and views with equal counts hold
  // the same rows (a newer epoch's may hold more indexes). cached_epoch is the newest epoch
  // any stored view's builder read: the cached view is at least as new as that builder's,
  // which saw every change bumped up to it. So a reader never gets a view older than one any
  // Snapshot() call returned before (monotonic reads) nor one missing a change whose bump it
  // saw. A compaction removes rows from the view (SSTable rows move into the base, dead ones
  // go): it is installed under mu and bumps compacted_generation, so views order by
  // (compacted_generation, visible rows). A base rewrite removes dead base rows without
  // changing compacted_generation; it bumps the base epoch, which orders first.
  auto order = [](const ShardSnapshot& v) {
    int64_t n = 0;
    for (const auto& src : v.sources) n += src.num_rows;
    return std::make_tuple(v.base_epoch, v.compacted_generation, n);
  };
  std::lock_guard<std::mutex> lock(s.cache_mu);
  const auto rows = order(*shared);
  const auto cached_rows =
      s.cached ? order(*s.cached) : std::make_tuple(uint64_t{0}, uint64_t{0}, int64_t{-1});
  if (rows > cached_rows || (rows == cached_rows && epoch >= s.cached_epoch)) s.cached = shared;
  s.cached_epoch = std::max(s.cached_epoch, epoch);
  return shared;
}

Clock::time_point ShardWriter::last_write() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->last_write;
}

uint64_t ShardWriter::last_wal_position() const {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  uint64_t p = s.manifest.replay_after_wal_entry_position();
  for (const auto& f : s.frozen) p = std::max(p, f->last_wal_position.load());
  return std::max(p, s.active->last_wal_position.load());
}

ShardDescription ShardWriter::Describe() const {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  ShardDescription d;
  d.shard_id = s.shard_id;
  d.writer_epoch = s.epoch;
  d.current_generation = s.manifest.current_generation();
  d.replay_after_wal_entry_position = s.manifest.replay_after_wal_entry_position();
  d.wal_entry_position_last_seen =
      std::max(s.manifest.wal_entry_position_last_seen(), s.wal->last_durable_position());
  auto info = [](const GenState& g) {
    MemTableInfo m;
    m.generation = g.generation;
    m.rows = g.mt->visible_rows();
    m.bytes = g.mt->total_bytes();
    m.age_ms = std::chrono::duration_cast<std::chrono::milliseconds>(g.mt->age()).count();
    return m;
  };
  d.active = info(*s.active);
  for (const auto& f : s.frozen) d.frozen.push_back(info(*f));
  for (const auto& e : s.manifest.sstables()) {
    if (e.generation() <= s.compacted_generation) continue;  // in the base
    d.sstables.push_back({e.generation(), s.shard_prefix + "/" + e.path(), e.rows(), e.bytes()});
  }
  for (const auto& i : s.active->mt->DescribeIndexes()) {
    d.indexes.push_back({i.kind, i.column, i.name, i.rows_indexed});
  }
  d.settings = s.SettingsLocked();
  d.state = s.closed                                         ? "closed"
            : s.sticky.code() == StatusCode::kFenced         ? "fenced"
            : s.sticky.code() == StatusCode::kWriterPoisoned ? "poisoned"
                                                             : "open";
  d.state_reason = s.sticky.message();
  d.state_age_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - s.state_since).count();
  return d;
}

ShardWriter::Backlog ShardWriter::backlog() const {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  Backlog b;
  for (const auto& e : s.manifest.sstables()) {
    if (e.generation() > s.compacted_generation) ++b.sstables;
  }
  // A full active MemTable is sealed by the flusher without another put: count it now.
  b.frozen = static_cast<int64_t>(s.frozen.size()) + (s.SealDue() ? 1 : 0);
  b.active_rows = s.active->rows;
  b.memtable_rows = s.options.max_memtable_rows;
  const int64_t bytes = s.active->mt->total_bytes();
  if (b.active_rows > 0 && bytes > 0 && s.options.max_memtable_bytes > 0) {
    const double per_row = static_cast<double>(bytes) / static_cast<double>(b.active_rows);
    b.memtable_rows = std::min<int64_t>(
        b.memtable_rows,
        static_cast<int64_t>(static_cast<double>(s.options.max_memtable_bytes) / per_row));
  }
  return b;
}

ShardWriterStats ShardWriter::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ShardWriterStats st = impl_->stats;
  const auto ws = impl_->wal->stats();
  st.wal_entries = ws.entries_written;
  st.wal_appends = ws.appends;
  st.wal_fsyncs = ws.fsyncs;
  st.wal_group_size_histogram = ws.group_size_histogram;
  return st;
}

Status ShardWriter::health() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->CheckWritable();
}

const arrow::SchemaPtr& ShardWriter::schema() const { return impl_->layout.user_schema; }
const arrow::SchemaPtr& ShardWriter::storage_schema() const { return impl_->layout.storage_schema; }
const std::vector<std::string>& ShardWriter::key_columns() const {
  static const std::vector<std::string> rowid{memtable::kRowIdColumn};
  return impl_->options.primary_key.empty() ? rowid : impl_->options.primary_key;
}
const std::string& ShardWriter::shard_id() const { return impl_->shard_id; }
const std::string& ShardWriter::shard_prefix() const { return impl_->shard_prefix; }
uint64_t ShardWriter::writer_epoch() const { return impl_->epoch; }

Status ShardWriter::RemoveShardFiles(io::ObjectStore& store, const std::string& table_prefix,
                                     const std::string& shard_id) {
  STRATA_RETURN_IF_ERROR(ValidateShardId(shard_id));
  STRATA_ASSIGN_OR_RETURN(auto objects, store.List(ShardPrefix(table_prefix, shard_id) + "/"));
  for (const auto& o : objects) STRATA_RETURN_IF_ERROR(store.Remove(o.key));
  return Status::OK();
}

}  // namespace strata::shard