#include "shard/shard_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <tuple>
#include <unordered_set>

#include "arrow/builder.h"
#include "format/shard_manifest.h"
#include "memtable/hidden_columns.h"
#include "memtable/memtable.h"
#include "shard/batch_conformance.h"
#include "shard/shard_writer_impl.h"
#include "sstable/index_files.h"
#include "sstable/sstable_reader.h"
#include "sstable/sstable_writer.h"
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

Status ShardWriter::Impl::Replay(uint64_t start) {
  // Entries go into MemTables split at their recorded generations. A generation at or below
  // an already published one is in an SSTable (its entries precede replay_after only when the
  // flush committed; tolerated and skipped for safety).
  GenPtr cur;
  uint64_t cur_gen = 0;
  const uint64_t published_below = manifest.current_generation();
  wal::WalReplaySummary summary;
  for (int attempt = 0;; ++attempt) {
    auto visit = [&](wal::WalEntry&& entry) -> Status {
      if (entry.writer_epoch > epoch) {
        return Status::Fenced("WAL entry " + std::to_string(entry.position) + " of '" +
                              shard_prefix + "' has writer_epoch " +
                              std::to_string(entry.writer_epoch) + " above ours (" +
                              std::to_string(epoch) + ")");
      }
      if (entry.fence_sentinel || entry.num_rows == 0) return Status::OK();
      if (!entry.schema->Equals(*layout.storage_schema)) {
        return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                  shard_prefix + "' has schema " + entry.schema->ToString() +
                                  ", the shard stores " + layout.storage_schema->ToString());
      }
      if (entry.generation < published_below) {
        spdlog::warn("WAL entry {} of '{}' has published generation {}; skipped", entry.position,
                     shard_prefix, entry.generation);
        return Status::OK();
      }
      if (cur == nullptr || entry.generation != cur_gen) {
        if (cur != nullptr && entry.generation < cur_gen) {
          return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                    shard_prefix + "' has generation " +
                                    std::to_string(entry.generation) + " after generation " +
                                    std::to_string(cur_gen));
        }
        if (cur != nullptr) {
          cur->mt->Freeze();
          frozen.push_back(cur);
        }
        // Replayed rows are visible at once; their indexes are built afterwards, in the
        // background (queries scan the MemTable exactly meanwhile), so a restart answers
        // its first query after reading the WAL, not after rebuilding an HNSW row by row.
        STRATA_ASSIGN_OR_RETURN(cur, NewGen(entry.generation, /*with_indexes=*/false));
        cur_gen = entry.generation;
      }
      auto conformed = ConformBatches(layout.storage_schema, entry.batches);
      if (!conformed.ok()) {
        return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                  shard_prefix + "': " + conformed.status().message());
      }
      STRATA_ASSIGN_OR_RETURN(auto range, cur->mt->InsertVisible(*conformed, entry.position));
      // No reader exists yet: marking after the rows became visible is safe here.
      MarkRows(*cur, *conformed, range.begin, range.end - range.begin);
      cur->rows += range.end - range.begin;
      cur->last_wal_position.store(entry.position);
      if (layout.rowid_column >= 0) {
        for (const auto& b : *conformed) {
          arrow::Array ids = b->column(layout.rowid_column);
          for (int64_t i = 0; i < ids.length(); ++i) {
            next_rowid = std::max(next_rowid, ids.Value<uint64_t>(i) + 1);
          }
        }
      }
      return Status::OK();
    };
    STRATA_ASSIGN_OR_RETURN(summary, wal::WalReader::Replay(*store, shard_prefix, start, visit));
    if (!summary.torn_position && summary.max_position_present > summary.last_position) {
      return Status::Corruption("WAL of '" + shard_prefix + "' has a gap: position " +
                                std::to_string(summary.last_position + 1) +
                                " is missing but entries up to " +
                                std::to_string(summary.max_position_present) + " exist");
    }
    if (summary.entries > 0 || summary.torn_position) {
      spdlog::info("replayed {} WAL entries ({} rows) of '{}'{}", summary.entries, summary.rows,
                   shard_prefix,
                   summary.torn_position
                       ? " (torn tail from position " + std::to_string(*summary.torn_position) + ")"
                       : std::string());
    }
    // The active MemTable: the newest replayed generation, or a fresh one.
    if (active == nullptr) {
      if (cur != nullptr) {
        active = cur;
      } else {
        STRATA_ASSIGN_OR_RETURN(active, NewGen(std::max<uint64_t>(published_below, 1)));
      }
    } else if (cur != nullptr && cur != active) {
      // A second round found more entries (an older writer appended during our claim).
      active->mt->Freeze();
      frozen.push_back(active);
      active = cur;
    }
    uint64_t next = std::max({summary.max_position_present, summary.last_position,
                              manifest.replay_after_wal_entry_position(), start - 1}) +
                    1;
    wal::WalWriterOptions wo;
    wo.writer_epoch = epoch;
    wo.generation = active->generation;
    wo.group_commit = options.group_commit;
    wo.max_wal_entry_bytes = options.max_wal_entry_bytes;
    wal = std::make_unique<wal::WalWriter>(store, shard_prefix, layout.storage_schema, next, wo);
    auto sentinel = wal->WriteFenceSentinel(active->generation,
                                            summary.torn_position ? *summary.torn_position : 0);
    if (sentinel.ok()) return Status::OK();
    if (sentinel.status().code() != StatusCode::kFenced || attempt >= 16) {
      return sentinel.status().WithContext("fence sentinel of shard '" + shard_id + "'");
    }
    // The tip moved: an older writer appended after our replay, or a newer writer claimed.
    STRATA_ASSIGN_OR_RETURN(auto latest, manifests->LoadLatest());
    if (latest && latest->writer_epoch() != epoch) {
      return Status::Fenced("shard '" + shard_id + "' was claimed by writer epoch " +
                            std::to_string(latest->writer_epoch()) + " while opening");
    }
    start = summary.last_position + 1;
    if (summary.torn_position) {
      return Status::Corruption("WAL of '" + shard_prefix +
                                "' changed behind a torn entry while opening");
    }
  }
}

// ----------------------------------------------------------------------------------------
// Write path

Result<PutResult> ShardWriter::Impl::Write(std::vector<arrow::RecordBatchPtr> storage_rows,
                                           std::vector<arrow::RecordBatchPtr> user_rows) {
  PutResult result;
  for (const auto& b : storage_rows) result.num_rows += b->num_rows();
  for (const auto& b : user_rows) result.num_rows += b->num_rows();
  // The free-space floor first, probed without mu (a statvfs): nothing is written below it.
  // The bytes still to be flushed from this shard's MemTables are reserved out of the free space.
  Status space = Status::OK();
  std::unique_lock<std::mutex> lock(mu);
  if (result.num_rows > 0 && options.free_space != nullptr) {
    const int64_t reserved = FlushReserveBytes();
    lock.unlock();
    space = options.free_space->Check(reserved);
    lock.lock();
  }
  STRATA_RETURN_IF_ERROR(CheckWritable());
  if (result.num_rows == 0) return result;
  last_write = Clock::now();  // refused or stalled writes count: the table is not quiet
  if (!space.ok()) {
    ++stats.space_refusals;
    return space;
  }

  // Backpressure: wait (without holding mu) until the unflushed set is under the limits.
  if (OverLimit()) {
    ++stats.backpressure_waits;
    const Deadline deadline = Clock::now() + options.write_stall_timeout;
    while (OverLimit()) {
      // Make the active MemTable flushable so the stall can clear.
      if (active->rows > 0 && frozen.empty()) STRATA_RETURN_IF_ERROR(SealActive());
      if (cv.wait_until(lock, deadline) == std::cv_status::timeout && OverLimit()) {
        ++stats.backpressure_timeouts;
        return Status::Backpressure("shard '" + shard_id + "': writes stalled for " +
                                    std::to_string(options.write_stall_timeout.count()) +
                                    " ms: " + std::to_string(UnflushedBytes()) +
                                    " unflushed bytes in " + std::to_string(frozen.size()) +
                                    " frozen MemTables (max_unflushed_bytes " +
                                    std::to_string(options.max_unflushed_bytes) + "); retry later");
      }
      STRATA_RETURN_IF_ERROR(CheckWritable());
    }
  }
  if (SealDue()) STRATA_RETURN_IF_ERROR(SealActive());

  if (layout.rowid_column >= 0) {
    // A storage row keeps its `_rowid`: it must be one this shard assigned (a key from the
    // future would later collide with a fresh insert). Checked under mu, before any change.
    for (const auto& b : storage_rows) {
      arrow::Array ids = b->column(layout.rowid_column);
      for (int64_t i = 0; i < ids.length(); ++i) {
        if (ids.Value<uint64_t>(i) >= next_rowid) {
          return Status::Invalid("storage row " + std::to_string(i) + ": _rowid " +
                                 std::to_string(ids.Value<uint64_t>(i)) +
                                 " was never assigned by shard '" + shard_id + "' (next is " +
                                 std::to_string(next_rowid) + ")");
        }
      }
    }
  }
  // Hidden columns are added under mu so _rowid values follow insert order.
  std::vector<arrow::RecordBatchPtr> batches = std::move(storage_rows);
  uint64_t rowid = next_rowid;
  for (const auto& b : user_rows) {
    STRATA_ASSIGN_OR_RETURN(auto with_hidden, memtable::AddHiddenColumns(layout, *b, rowid, false));
    if (layout.rowid_column >= 0) rowid += static_cast<uint64_t>(b->num_rows());
    batches.push_back(std::move(with_hidden));
  }
  GenPtr g = active;
  STRATA_ASSIGN_OR_RETURN(memtable::RowRange range, g->mt->Insert(batches));
  next_rowid = rowid;  // assigned only once the rows are in the MemTable
  // Liveness before visibility (shard/liveness.h): storage rows and every row of a
  // primary-key table may supersede an older version; fresh `_rowid` rows cannot.
  int64_t storage_count = 0;
  for (size_t i = 0; i + user_rows.size() < batches.size(); ++i) {
    storage_count += batches[i]->num_rows();
  }
  MarkRows(*g, batches, range.begin,
           layout.rowid_column >= 0 ? storage_count : range.end - range.begin);
  const bool durable = options.durable_write;
  if (!durable) g->mt->MarkDurable(range.end, 0);
  std::atomic<uint64_t>* epoch_ptr = &visible_epoch;
  auto on_durable = [g, end = range.end, durable, epoch_ptr](uint64_t position) {
    if (durable) g->mt->MarkDurable(end, position);
    uint64_t prev = g->last_wal_position.load();
    while (prev < position && !g->last_wal_position.compare_exchange_weak(prev, position)) {
    }
    epoch_ptr->fetch_add(1);
  };
  auto handle = wal->Enqueue(batches, g->generation, std::move(on_durable));
  if (!handle.ok()) {
    FailWrites(handle.status());
    return sticky;
  }
  g->rows += result.num_rows;
  ++g->pending;
  ++g->indexing;
  ++stats.puts;
  stats.rows += static_cast<uint64_t>(result.num_rows);
  result.generation = g->generation;
  if (!durable) ++nondurable_pending;  // the syncer thread makes it durable
  lock.unlock();

  // Index outside every lock (concurrently with other puts and the WAL fsync); the rows
  // become visible once durable and indexed.
  g->mt->IndexRows(range);
  lock.lock();
  --g->indexing;
  visible_epoch.fetch_add(1);
  cv.notify_all();
  if (!durable) return result;
  lock.unlock();

  Result<uint64_t> position = wal->Wait(*handle);

  lock.lock();
  --g->pending;
  if (!position.ok()) FailWrites(position.status());
  cv.notify_all();
  if (!position.ok()) return sticky.ok() ? position.status() : sticky;
  result.wal_position = *position;
  return result;
}

void ShardWriter::Impl::SyncerLoop() {
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    cv.wait(lock, [&] { return closed || nondurable_pending > 0; });
    if (nondurable_pending == 0 && closed) return;
    const int64_t n = nondurable_pending;
    lock.unlock();
    Status st = wal->Sync();
    lock.lock();
    // Every append queued before Sync is settled now (durable or failed).
    nondurable_pending -= n;
    for (auto& f : frozen) f->pending = 0;
    active->pending = 0;
    if (!st.ok()) FailWrites(st);
    cv.notify_all();
    if (closed) return;
  }
}

namespace {

// Invalid naming the column and the first row when a user batch (conforming to
// layout.user_schema) holds a null primary-key value. Declared keys are the first user
// columns' storage indexes, which equal their user-schema indexes; the hidden _rowid key of
// keyless tables is not in user batches. A nullable key column must not let a null key in: a
// null-key row could never be deleted or updated (Apply refuses null keys in storage rows).
Status CheckNoNullKeys(const memtable::StorageLayout& layout,
                       const std::vector<arrow::RecordBatchPtr>& user_batches, const char* what) {
  if (layout.rowid_column >= 0) return Status::OK();
  int64_t row_base = 0;
  for (const auto& b : user_batches) {
    for (int c : layout.key_columns) {
      const arrow::Array key = b->column(c);
      if (key.null_count() == 0) continue;
      for (int64_t i = 0; i < key.length(); ++i) {
        if (key.IsNull(i)) {
          return Status::Invalid(std::string(what) + ": row " + std::to_string(row_base + i) +
                                 ", primary-key column '" + layout.user_schema->field(c)->name +
                                 "' is null; primary-key values may not be null");
        }
      }
    }
    row_base += b->num_rows();
  }
  return Status::OK();
}

}  // namespace

Result<PutResult> ShardWriter::Put(const std::vector<arrow::RecordBatchPtr>& batches) {
  STRATA_ASSIGN_OR_RETURN(auto conformed, ConformBatches(impl_->layout.user_schema, batches));
  STRATA_RETURN_IF_ERROR(CheckNoNullKeys(impl_->layout, conformed, "put"));
  std::vector<arrow::RecordBatchPtr> nonempty;
  for (auto& b : conformed) {
    if (b->num_rows() > 0) nonempty.push_back(std::move(b));
  }
  return impl_->Write({}, std::move(nonempty));
}

Result<PutResult> ShardWriter::Apply(const std::vector<arrow::RecordBatchPtr>& storage_rows,
                                     const std::vector<arrow::RecordBatchPtr>& user_rows) {
  const auto& layout = impl_->layout;
  auto conformed_storage = ConformBatches(layout.storage_schema, storage_rows);
  if (!conformed_storage.ok()) {
    return conformed_storage.status().WithContext("storage rows");
  }
  std::vector<arrow::RecordBatchPtr> storage;
  for (auto& b : *conformed_storage) {
    if (b->num_rows() == 0) continue;
    for (int c : layout.key_columns) {
      if (b->column(c).null_count() > 0) {
        return Status::Invalid("storage rows: key column '" +
                               layout.storage_schema->field(c)->name + "' has " +
                               std::to_string(b->column(c).null_count()) + " nulls");
      }
    }
    storage.push_back(std::move(b));
  }
  auto conformed_user = ConformBatches(layout.user_schema, user_rows);
  if (!conformed_user.ok()) return conformed_user.status().WithContext("new rows");
  STRATA_RETURN_IF_ERROR(CheckNoNullKeys(layout, *conformed_user, "new rows"));
  std::vector<arrow::RecordBatchPtr> user;
  for (auto& b : *conformed_user) {
    if (b->num_rows() > 0) user.push_back(std::move(b));
  }
  return impl_->Write(std::move(storage), std::move(user));
}

Result<PutResult> ShardWriter::Delete(const std::vector<arrow::RecordBatchPtr>& keys) {
  const auto& layout = impl_->layout;
  const arrow::Schema& storage = *layout.storage_schema;
  std::vector<arrow::RecordBatchPtr> rows;
  for (const auto& kb : keys) {
    if (kb->num_rows() == 0) continue;
    std::vector<arrow::ArrayDataPtr> columns;
    for (int c = 0; c < storage.num_fields(); ++c) {
      const auto& field = storage.field(c);
      const bool is_key = std::find(layout.key_columns.begin(), layout.key_columns.end(), c) !=
                          layout.key_columns.end();
      if (is_key) {
        int idx = kb->schema()->GetFieldIndex(field->name);
        if (idx < 0) return Status::Invalid("delete: key column '" + field->name + "' missing");
        const auto& data = kb->column_data(idx);
        if (!data->type->Equals(*field->type)) {
          return Status::Invalid("delete: key column '" + field->name + "' has type " +
                                 data->type->ToString() + ", the table's is " +
                                 field->type->ToString());
        }
        if (kb->column(idx).null_count() > 0) {
          return Status::Invalid("delete: key column '" + field->name + "' has nulls");
        }
        columns.push_back(data);
      } else if (c == layout.tombstone_column) {
        columns.push_back(memtable::MakeConstantBoolArray(true, kb->num_rows()));
      } else {
        arrow::ArrayBuilder nulls(field->type);
        STRATA_RETURN_IF_ERROR(nulls.AppendNulls(kb->num_rows()));
        STRATA_ASSIGN_OR_RETURN(auto arr, nulls.Finish());
        columns.push_back(std::move(arr));
      }
    }
    rows.push_back(std::make_shared<arrow::RecordBatch>(layout.storage_schema, kb->num_rows(),
                                                        std::move(columns)));
  }
  return impl_->Write(std::move(rows), {});
}

// ----------------------------------------------------------------------------------------
// Seal and waits

Result<std::optional<SealedGeneration>> ShardWriter::force_seal_active() {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  STRATA_RETURN_IF_ERROR(s.CheckWritable());
  if (s.active->rows == 0) return std::optional<SealedGeneration>();
  GenPtr sealed = s.active;
  STRATA_RETURN_IF_ERROR(s.SealActive());
  // Every put that reached `sealed` was enqueued before the seal; wait until they settle so
  // rows and last_wal_position are final.
  s.cv.wait(lock, [&] { return sealed->pending == 0 || !s.sticky.ok() || s.closed; });
  if (sealed->pending > 0) return s.sticky.ok() ? s.CheckWritable() : s.sticky;
  SealedGeneration out;
  out.shard_id = s.shard_id;
  out.generation = sealed->generation;
  out.last_wal_position = sealed->last_wal_position.load();
  out.rows = sealed->rows;
  return std::optional<SealedGeneration>(out);
}

std::optional<uint64_t> ShardWriter::newest_unpublished_generation() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->frozen.empty()) return std::nullopt;
  return impl_->frozen.back()->generation;
}

Status ShardWriter::wait_for_generation(uint64_t generation, Deadline deadline) {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  auto done = [&] { return s.manifest.current_generation() > generation; };
  while (!done()) {
    if (!s.sticky.ok()) return s.sticky;
    if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
    if (s.cv.wait_until(lock, deadline) == std::cv_status::timeout && !done()) {
      if (!s.sticky.ok()) return s.sticky;
      return Status::Timeout("shard '" + s.shard_id + "': generation " +
                             std::to_string(generation) +
                             " is not flushed yet (current_generation " +
                             std::to_string(s.manifest.current_generation()) + ")");
    }
  }
  return Status::OK();
}

Status ShardWriter::wait_for_flush_drain(Deadline deadline) {
  Impl& s = *impl_;
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.frozen.empty()) {
    if (!s.sticky.ok()) return s.sticky;
    if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
    if (s.cv.wait_until(lock, deadline) == std::cv_status::timeout && !s.frozen.empty()) {
      return Status::Timeout("shard '" + s.shard_id + "': " + std::to_string(s.frozen.size()) +
                             " MemTables still frozen (oldest generation " +
                             std::to_string(s.frozen.front()->generation) + ")");
    }
  }
  return Status::OK();
}

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
// Flusher

void ShardWriter::Impl::FlusherLoop() {
  std::unique_lock<std::mutex> lock(mu);
  while (!closed) {
    if (sticky.ok() && SealDue()) {
      Status st = SealActive();
      if (!st.ok()) FailWrites(st);
    }
    const bool ready = sticky.ok() && !frozen.empty() && frozen.front()->pending == 0 &&
                       frozen.front()->indexing == 0;
    if (!ready) {
      // Wake up for the age trigger too.
      auto wait = std::min<Clock::duration>(options.max_memtable_age, std::chrono::seconds(1));
      if (active->rows > 0) {
        auto left = options.max_memtable_age - active->mt->age();
        wait = std::max<Clock::duration>(std::min(wait, left), std::chrono::milliseconds(1));
      }
      cv.wait_for(lock, wait);
      continue;
    }
    GenPtr g = frozen.front();
    const std::vector<index::IndexSpec> flush_specs = specs;
    lock.unlock();
    const auto t0 = Clock::now();
    format::ShardManifest committed;
    std::shared_ptr<const sstable::SSTableReader> reader;
    Status st = FlushOne(g, flush_specs, &committed, &reader);
    lock.lock();
    if (st.ok()) {
      // A compaction's manifest update (CommitCompactedSSTables) may have committed a newer one.
      if (committed.version() > manifest.version()) manifest = std::move(committed);
      sstables.push_back(reader);
      sstable_live.push_back(g->live);  // same marks, same positions
      // Definitions created while this generation was flushing.
      for (const auto& spec : specs) {
        bool has = false;
        for (const auto& i : reader->indexes()) has |= i->spec().uuid == spec.uuid;
        if (!has) index_tasks.push_back({nullptr, nullptr, reader, spec});
      }
      frozen.pop_front();
      ++stats.flushes;
      const double flush_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      stats.flush_seconds_total += flush_seconds;
      size_t bucket = 0;
      while (bucket < ShardWriterStats::kFlushSecondsBounds.size() &&
             flush_seconds > ShardWriterStats::kFlushSecondsBounds[bucket]) {
        ++bucket;
      }
      ++stats.flush_seconds_histogram[bucket];
      visible_epoch.fetch_add(1);
      cv.notify_all();
      if (options.on_publish) {
        lock.unlock();
        options.on_publish();
        lock.lock();
      }
    } else if (!closed || !st.IsInvalid()) {
      if (st.code() == StatusCode::kFenced) {
        FailWrites(st);
      } else {
        spdlog::error("shard '{}': flush of generation {} failed for good: {}", shard_id,
                      g->generation, st.ToString());
        sticky = Status::WriterPoisoned(
            "shard '" + shard_id + "': flush of generation " + std::to_string(g->generation) +
            " failed after retries: " + st.ToString() +
            "; the shard is reopened in the background once the store takes writes again");
        state_since = Clock::now();
        cv.notify_all();
      }
    }
  }
}

Status ShardWriter::Impl::FlushOne(const GenPtr& g,
                                   const std::vector<index::IndexSpec>& flush_specs,
                                   format::ShardManifest* committed,
                                   std::shared_ptr<const sstable::SSTableReader>* reader) {
  const memtable::MemTableSnapshot snap = g->mt->Snapshot();
  sstable::SSTableInput input;
  input.generation = g->generation;
  input.schema = layout.storage_schema;
  input.batches = snap.batches;
  input.key_columns = layout.key_columns;
  {
    // Frozen and settled: no row of g is inserted any more, so cross_marks is final.
    std::map<uint64_t, format::DeletionVector> by_gen;
    for (const auto& [gen, pos] : g->cross_marks) by_gen[gen].Add(static_cast<uint32_t>(pos));
    for (auto& [gen, dv] : by_gen) input.supersedes.generations.emplace_back(gen, std::move(dv));
  }
  // Every definition's index over exactly these rows: the MemTable's when complete (it holds
  // every row: nothing is pending or indexing), else built now.
  const auto entries = g->mt->IndexEntries();
  for (const auto& spec : flush_specs) {
    std::shared_ptr<const index::ColumnIndex> idx;
    for (const auto& e : entries) {
      if (e->index->spec().uuid == spec.uuid && e->complete.load() && !e->failed.load() &&
          snap.num_rows == g->mt->num_rows()) {
        idx = e->index;
      }
    }
    if (idx == nullptr) {
      auto built = index::ColumnIndex::Build(spec, *layout.storage_schema, snap.batches);
      if (!built.ok()) {
        spdlog::error("shard '{}': index '{}' of generation {} not built: {}", shard_id, spec.name,
                      g->generation, built.status().ToString());
        continue;
      }
      idx = std::move(*built);
    }
    input.indexes.push_back(std::move(idx));
  }
  const uint64_t last_pos = std::max(g->last_wal_position.load(), snap.last_wal_position);
  auto backoff = options.flush_retry_backoff;
  Status last;
  for (int attempt = 0; attempt <= options.flush_retries; ++attempt) {
    if (attempt > 0) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, backoff, [&] { return closed; });
      if (closed) return Status::Invalid("closed during flush retry");
      backoff *= 2;
    }
    auto entry = sstable::WriteSSTable(*store, shard_prefix, input);
    if (!entry.ok()) {
      last = entry.status();
      std::lock_guard<std::mutex> lock(mu);
      ++stats.flush_failures;
      spdlog::warn("shard '{}': flush of generation {} attempt {} failed: {}", shard_id,
                   g->generation, attempt + 1, last.ToString());
      continue;
    }
    bool already = false;
    auto edit = [&](format::ShardManifest& m) -> Status {
      if (m.current_generation() > g->generation) {
        already = true;  // an earlier attempt committed but reported an error
        return Status::OK();
      }
      if (m.current_generation() != g->generation) {
        return Status::Internal("shard '" + shard_id + "': flushing generation " +
                                std::to_string(g->generation) + " but current_generation is " +
                                std::to_string(m.current_generation()));
      }
      *m.add_sstables() = *entry;
      m.set_current_generation(g->generation + 1);
      m.set_replay_after_wal_entry_position(
          std::max(m.replay_after_wal_entry_position(), last_pos));
      m.set_wal_entry_position_last_seen(
          std::max(m.wal_entry_position_last_seen(), wal->last_durable_position()));
      m.set_created_at_micros(0);
      return Status::OK();
    };
    auto updated = manifests->Update(epoch, edit);
    if (!updated.ok()) {
      last = updated.status();
      Status rm = sstable::RemoveSSTable(*store, shard_prefix, entry->path());
      (void)rm;
      if (last.code() == StatusCode::kFenced || last.code() == StatusCode::kInternal) return last;
      std::lock_guard<std::mutex> lock(mu);
      ++stats.flush_failures;
      spdlog::warn("shard '{}': manifest commit of generation {} attempt {} failed: {}", shard_id,
                   g->generation, attempt + 1, last.ToString());
      continue;
    }
    if (already) {
      Status rm = sstable::RemoveSSTable(*store, shard_prefix, entry->path());
      (void)rm;
    }
    *committed = std::move(*updated);
    const format::SSTableEntry* published = nullptr;
    for (const auto& e : committed->sstables()) {
      if (e.generation() == g->generation) published = &e;
    }
    if (published == nullptr) return Status::Internal("published SSTable missing from manifest");
    auto r = sstable::SSTableReader::Open(*store, shard_prefix, *published,
                                          /*load_indexes=*/false);
    if (!r.ok()) return r.status();
    for (const auto& idx : input.indexes) (*r)->AttachIndex(idx);
    *reader = std::move(*r);
    return Status::OK();
  }
  return last;
}

// ----------------------------------------------------------------------------------------
// Indexes

Status ShardWriter::SetIndexes(std::vector<index::IndexSpec> new_specs) {
  Impl& s = *impl_;
  for (const auto& spec : new_specs) {
    STRATA_RETURN_IF_ERROR(index::ValidateIndexSpec(spec, *s.layout.storage_schema));
  }
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.closed) return Status::Invalid("shard '" + s.shard_id + "' writer is closed");
  auto same = [](const index::IndexSpec& a, const index::IndexSpec& b) {
    return a.name == b.name && a.uuid == b.uuid;
  };
  std::vector<GenPtr> gens(s.frozen.begin(), s.frozen.end());
  gens.push_back(s.active);
  for (const auto& old : s.specs) {
    bool kept = false;
    for (const auto& n : new_specs) kept |= same(old, n);
    if (kept) continue;
    for (const auto& g : gens) g->mt->DropIndex(old.name);
  }
  std::vector<index::IndexSpec> added;
  for (const auto& n : new_specs) {
    bool existed = false;
    for (const auto& old : s.specs) existed |= same(old, n);
    if (!existed) added.push_back(n);
  }
  s.specs = std::move(new_specs);
  for (const auto& spec : added) {
    // A definition the MemTables do not keep is built at flush (FlushOne) and for SSTables.
    for (const auto& g : s.MemTableKeeps(spec) ? gens : std::vector<GenPtr>{}) {
      auto entry = g->mt->AddIndex(spec);
      if (!entry.ok()) {
        spdlog::error("shard '{}': index '{}' not added to generation {}: {}", s.shard_id,
                      spec.name, g->generation, entry.status().ToString());
        continue;
      }
      if (!(*entry)->complete.load()) s.index_tasks.push_back({g, *entry, nullptr, spec});
    }
    s.QueueSSTableBuilds(spec);
  }
  s.visible_epoch.fetch_add(1);
  s.cv.notify_all();
  return Status::OK();
}

std::vector<IndexProgress> ShardWriter::IndexProgressAll() const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  // Rows are counted as LanceDB does: the live rows of each source (not its physical row
  // versions), read from a view built now.
  const ShardSnapshot view = s.BuildViewLocked();
  std::vector<IndexProgress> out;
  for (const auto& spec : s.specs) {
    IndexProgress p;
    p.spec = spec;
    size_t v = 0;
    if (!view.sources.empty() && !view.sources[0].memtable && view.sources[0].generation == 0) {
      const SourceView& base = view.sources[v++];  // the base (BaseViewLocked) comes first
      bool has = false;
      for (const auto& i : base.indexes) {
        if (i->spec().uuid == spec.uuid) {
          has = true;
          p.size_bytes += i->memory_bytes();
        }
      }
      (has ? p.num_indexed_rows : p.num_unindexed_rows) += base.live_rows;
    }
    for (const auto& t : s.sstables) {
      bool has = false;
      for (const auto& i : t->indexes()) {
        if (i->spec().uuid == spec.uuid) {
          has = true;
          p.size_bytes += i->memory_bytes();
        }
      }
      (has ? p.num_indexed_rows : p.num_unindexed_rows) += view.sources[v++].live_rows;
    }
    std::vector<GenPtr> gens(s.frozen.begin(), s.frozen.end());
    gens.push_back(s.active);
    for (const auto& g : gens) {
      bool has = false;
      for (const auto& e : g->mt->IndexEntries()) {
        if (e->index->spec().uuid == spec.uuid && e->complete.load() && !e->failed.load()) {
          has = true;
          p.size_bytes += e->index->memory_bytes();
        }
      }
      (has ? p.num_indexed_rows : p.num_unindexed_rows) += view.sources[v++].live_rows;
    }
    out.push_back(std::move(p));
  }
  return out;
}

void ShardWriter::Impl::IndexerLoop() {
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    cv.wait(lock, [&] { return closed || !index_tasks.empty(); });
    if (closed) return;
    IndexTask task = std::move(index_tasks.front());
    index_tasks.pop_front();
    if (!SpecCurrent(task.spec)) continue;
    if (task.entry != nullptr && !MemTableKeeps(task.spec)) continue;  // dropped from MemTables
    indexer_busy = true;
    lock.unlock();
    RunIndexTask(task);
    lock.lock();
    indexer_busy = false;
    visible_epoch.fetch_add(1);
    cv.notify_all();
  }
}

void ShardWriter::Impl::RunIndexTask(const IndexTask& task) {
  if (task.entry != nullptr) {
    Status st = task.gen->mt->Backfill(task.entry);
    if (!st.ok()) {
      spdlog::error("shard '{}': backfill of index '{}' in generation {} failed: {}", shard_id,
                    task.spec.name, task.gen->generation, st.ToString());
    }
    return;
  }
  const auto& t = task.sstable;
  auto built = index::ColumnIndex::Build(task.spec, *layout.storage_schema, t->batches());
  if (!built.ok()) {
    spdlog::error("shard '{}': index '{}' for SSTable {} not built: {}", shard_id, task.spec.name,
                  t->dir_name(), built.status().ToString());
    return;
  }
  if ((*built)->hnsw() != nullptr && (*built)->hnsw()->size() == 0) {
    t->AttachIndex(std::move(*built));  // nothing to index: no file (as at flush)
    return;
  }
  auto written = sstable::WriteIndexFile(*store, shard_prefix, t->dir_name(), **built);
  if (!written.ok()) {
    spdlog::error("shard '{}': index '{}' for SSTable {} not written: {}", shard_id, task.spec.name,
                  t->dir_name(), written.status().ToString());
    return;
  }
  t->AttachIndex(std::move(*built));
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
