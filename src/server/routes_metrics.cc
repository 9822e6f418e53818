// GET /metrics (PROTOCOL.md §0): Prometheus text exposition format 0.0.4 (metrics.h). The
// live HTTP and query families of ServerMetrics, then series read at scrape time:
//  - per open table (labels database, table; summed over its shards) the ShardWriter
//    counters. They live in the shard writer, so they restart from zero when the table is
//    reopened (server restart), overwritten or has its columns rewritten (a new shard writer):
//    a normal Prometheus counter reset, which rate() and increase() handle;
//  - per open table the live row count (Table::Snapshot().num_rows, cached by the table until
//    its next write) and version gauges;
//  - process gauges (uptime, resident memory from /proc/self/statm, open tables).
// Tables on disk that no request has touched since start are not open and not listed.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "index/vector/sq8_cache.h"
#include "io/fetched_file.h"
#include "io/mapped_file_cache.h"
#include "query/filter_bits_cache.h"
#include "server/server_context.h"
#include "server/server_metrics.h"

namespace strata::server {

namespace {

using metrics::Label;
using metrics::MetricFamily;
using metrics::MetricType;
using metrics::Sample;

// Resident set size in bytes (second field of /proc/self/statm, in pages); -1 when unknown.
double ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return -1;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// A "Name:  N kB" field of /proc/self/status in bytes (RssAnon: heap and other private memory;
// RssFile: resident pages of mapped files, e.g. the base's fragments); -1 when unknown.
double StatusBytes(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  double out = -1;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, field, n) == 0) {
      out = std::atof(line + n) * 1024.0;
      break;
    }
  }
  std::fclose(f);
  return out;
}

// Per-table shard-writer stats, summed over the table's shards.
struct TableStats {
  std::vector<Label> labels;  // database, table
  shard::ShardWriterStats stats;
  double rows = 0;
  double version = 0;
  base::BaseStats base;         // compaction counters and base size (Table::DescribeBase)
  double l0_sstables = 0;       // published SSTables not yet compacted, over the shards
  double memtable_bytes = 0;    // active + frozen MemTables (rows and their indexes)
  double base_index_bytes = 0;  // the base table's indexes in memory
  table::WriterRecoveryInfo recovery;
  /// Per shard: (shard id, state, seconds in it).
  std::vector<std::tuple<std::string, std::string, double>> shard_states;
};

void Add(shard::ShardWriterStats& to, const shard::ShardWriterStats& s) {
  to.puts += s.puts;
  to.rows += s.rows;
  to.seals += s.seals;
  to.flushes += s.flushes;
  to.flush_failures += s.flush_failures;
  to.backpressure_waits += s.backpressure_waits;
  to.backpressure_timeouts += s.backpressure_timeouts;
  to.space_refusals += s.space_refusals;
  to.wal_entries += s.wal_entries;
  to.wal_appends += s.wal_appends;
  to.wal_fsyncs += s.wal_fsyncs;
  to.flush_seconds_total += s.flush_seconds_total;
  for (size_t i = 0; i < s.wal_group_size_histogram.size(); ++i) {
    to.wal_group_size_histogram[i] += s.wal_group_size_histogram[i];
  }
  for (size_t i = 0; i < s.flush_seconds_histogram.size(); ++i) {
    to.flush_seconds_histogram[i] += s.flush_seconds_histogram[i];
  }
}

// One per-table counter family from a field of ShardWriterStats.
MetricFamily TableCounter(const std::vector<TableStats>& tables, const char* name, std::string help,
                          uint64_t shard::ShardWriterStats::*field) {
  MetricFamily f{name, std::move(help), MetricType::kCounter, {}};
  for (const TableStats& t : tables) {
    f.samples.push_back({"", t.labels, static_cast<double>(t.stats.*field)});
  }
  return f;
}

MetricFamily TableGauge(const std::vector<TableStats>& tables, const char* name, const char* help,
                        double TableStats::*field) {
  MetricFamily f{name, help, MetricType::kGauge, {}};
  for (const TableStats& t : tables) f.samples.push_back({"", t.labels, t.*field});
  return f;
}

MetricFamily Gauge(const char* name, const char* help, double value) {
  return MetricFamily{name, help, MetricType::kGauge, {{"", {}, value}}};
}

MetricFamily Counter(const char* name, const char* help, double value) {
  return MetricFamily{name, help, MetricType::kCounter, {{"", {}, value}}};
}

// Appended to the HELP of every shard-writer counter (see the file comment).
constexpr const char* kResetNote = " Restarts at zero when the table's shard writer reopens.";

std::vector<MetricFamily> StorageFamilies(table::Catalog& catalog) {
  std::vector<TableStats> tables;
  for (const table::OpenTable& open : catalog.OpenTables()) {
    TableStats t;
    t.labels = {{"database", open.database}, {"table", open.name}};
    for (const shard::ShardWriterStats& s : open.table->ShardStats()) Add(t.stats, s);
    t.rows = static_cast<double>(open.table->Snapshot().num_rows);
    t.version = static_cast<double>(open.table->version());
    if (auto b = open.table->DescribeBase()) t.base = b->stats;
    for (const auto& d : open.table->DescribeShards()) {
      t.l0_sstables += static_cast<double>(d.sstables.size());
      t.memtable_bytes += static_cast<double>(d.active.bytes);
      for (const auto& m : d.frozen) t.memtable_bytes += static_cast<double>(m.bytes);
      t.shard_states.emplace_back(d.shard_id, d.state, d.state_age_ms / 1000.0);
    }
    for (const table::IndexStatus& i : open.table->ListIndexes()) {
      if (i.base) t.base_index_bytes += static_cast<double>(i.base->memory_bytes);
    }
    t.recovery = open.table->RecoveryInfo();
    tables.push_back(std::move(t));
  }
  using S = shard::ShardWriterStats;
  auto help = [](const char* text) { return std::string(text) + kResetNote; };
  std::vector<MetricFamily> out;
  out.push_back(TableCounter(
      tables, "strata_puts_total",
      help("Write calls applied to the table's shards (insert, delete, update, merge_insert: one "
           "per call, each one WAL append)."),
      &S::puts));
  out.push_back(TableCounter(
      tables, "strata_rows_written_total",
      help("Rows written to the table's MemTables (inserted rows, replacement versions and "
           "tombstones)."),
      &S::rows));
  out.push_back(TableCounter(
      tables, "strata_wal_entries_total",
      help("WAL entries made durable (one per group commit, fence sentinels included)."),
      &S::wal_entries));
  out.push_back(TableCounter(tables, "strata_wal_appends_total",
                             help("Appends made durable in WAL entries."), &S::wal_appends));
  out.push_back(TableCounter(tables, "strata_wal_fsyncs_total",
                             help("WAL entry writes synced to disk."), &S::wal_fsyncs));
  {
    MetricFamily f{"strata_wal_group_size",
                   help("Appends grouped into one WAL entry (group commit); _count is entries "
                        "holding appends, _sum is appends."),
                   MetricType::kHistogram,
                   {}};
    // Bucket i of the WAL writer holds sizes [2^i, 2^(i+1)); sizes are integers, so its upper
    // bound is 2^(i+1) - 1; the last bucket (>= 128) is +Inf.
    const std::vector<double> bounds = {1, 3, 7, 15, 31, 63, 127};
    for (const TableStats& t : tables) {
      const auto& h = t.stats.wal_group_size_histogram;
      metrics::AppendHistogramSamples(t.labels, bounds, std::vector<uint64_t>(h.begin(), h.end()),
                                      static_cast<double>(t.stats.wal_appends), &f.samples);
    }
    out.push_back(std::move(f));
  }
  out.push_back(TableCounter(tables, "strata_memtable_seals_total",
                             help("MemTables sealed (frozen for flush)."), &S::seals));
  out.push_back(TableCounter(tables, "strata_flushes_total",
                             help("MemTables flushed to SSTables and published."), &S::flushes));
  out.push_back(TableCounter(tables, "strata_flush_failures_total",
                             help("Failed flush attempts (each is retried; the writer is "
                                  "poisoned after the last retry)."),
                             &S::flush_failures));
  {
    MetricFamily f{"strata_flush_duration_seconds",
                   help("Duration of successful flushes (SSTable written and manifest "
                        "committed)."),
                   MetricType::kHistogram,
                   {}};
    const std::vector<double> bounds(S::kFlushSecondsBounds.begin(), S::kFlushSecondsBounds.end());
    for (const TableStats& t : tables) {
      const auto& h = t.stats.flush_seconds_histogram;
      metrics::AppendHistogramSamples(t.labels, bounds, std::vector<uint64_t>(h.begin(), h.end()),
                                      t.stats.flush_seconds_total, &f.samples);
    }
    out.push_back(std::move(f));
  }
  out.push_back(TableCounter(tables, "strata_backpressure_waits_total",
                             help("Writes that waited for flushes (unflushed bytes or frozen "
                                  "MemTables at their limit)."),
                             &S::backpressure_waits));
  out.push_back(TableCounter(tables, "strata_backpressure_timeouts_total",
                             help("Writes refused after waiting write_stall_timeout for flushes."),
                             &S::backpressure_timeouts));
  out.push_back(TableCounter(tables, "strata_writes_refused_low_space_total",
                             help("Writes refused (507) while free space was below the floor "
                                  "(--min-free-bytes)."),
                             &S::space_refusals));
  {
    // One series per shard and state the writer can be in: 1 for its current state.
    MetricFamily f{"strata_shard_writer_state",
                   "1 for the state a shard writer is in (open, poisoned, fenced, closed), "
                   "0 for the others.",
                   MetricType::kGauge,
                   {}};
    MetricFamily g{"strata_shard_writer_state_seconds",
                   "Seconds the shard writer has been in its current state.",
                   MetricType::kGauge,
                   {}};
    for (const TableStats& t : tables) {
      for (const auto& [shard_id, state, seconds] : t.shard_states) {
        std::vector<Label> labels = t.labels;
        labels.push_back({"shard", shard_id});
        g.samples.push_back({"", labels, seconds});
        for (const char* st : {"open", "poisoned", "fenced", "closed"}) {
          std::vector<Label> l = labels;
          l.push_back({"state", st});
          f.samples.push_back({"", l, state == st ? 1.0 : 0.0});
        }
      }
    }
    out.push_back(std::move(f));
    out.push_back(std::move(g));
    MetricFamily a{"strata_writer_recovery_attempts_total",
                   "Background reopen attempts of poisoned shard writers (failed ones included).",
                   MetricType::kCounter,
                   {}};
    MetricFamily r{"strata_writer_recoveries_total",
                   "Poisoned shard writers reopened in the background (writes resumed).",
                   MetricType::kCounter,
                   {}};
    for (const TableStats& t : tables) {
      a.samples.push_back({"", t.labels, static_cast<double>(t.recovery.attempts)});
      r.samples.push_back({"", t.labels, static_cast<double>(t.recovery.recoveries)});
    }
    out.push_back(std::move(a));
    out.push_back(std::move(r));
  }
  auto base_counter = [&](const char* name, const char* text, auto get) {
    MetricFamily f{name, help(text), MetricType::kCounter, {}};
    for (const TableStats& t : tables) {
      f.samples.push_back({"", t.labels, static_cast<double>(get(t.base))});
    }
    out.push_back(std::move(f));
  };
  base_counter("strata_compactions_total", "Compactions of SSTables into the base committed.",
               [](const base::BaseStats& b) { return b.compactions; });
  base_counter("strata_compactions_idle_total",
               "Of those, compactions started by the idle rule (--compaction-idle-seconds).",
               [](const base::BaseStats& b) { return b.idle_compactions; });
  base_counter("strata_compaction_failures_total",
               "Compactions that failed (nothing committed; retried later).",
               [](const base::BaseStats& b) { return b.compaction_failures; });
  base_counter("strata_compacted_rows_total",
               "Rows of SSTables compacted into the base (dead ones included).",
               [](const base::BaseStats& b) { return b.rows_compacted; });
  base_counter("strata_compacted_bytes_total",
               "Bytes written by compactions (fragments, deletion vectors, index checkpoints).",
               [](const base::BaseStats& b) { return b.bytes_compacted; });
  base_counter("strata_compaction_seconds_total", "Time spent in committed compactions.",
               [](const base::BaseStats& b) { return b.compaction_seconds_total; });
  base_counter("strata_l0_slowed_writes_total",
               "Writes rate-limited because the L0 backlog reached --compaction-l0-slowdown.",
               [](const base::BaseStats& b) { return b.throttle.slowed_writes; });
  base_counter("strata_l0_inflight_passed_writes_total",
               "Writes at the L0 slowdown let through unslowed because the running compaction "
               "was estimated to commit before the stop.",
               [](const base::BaseStats& b) { return b.throttle.inflight_passed; });
  base_counter("strata_l0_stopped_writes_total",
               "Writes that waited because the L0 backlog reached --compaction-l0-stop.",
               [](const base::BaseStats& b) { return b.throttle.stopped_writes; });
  base_counter("strata_l0_stop_timeouts_total",
               "Of those, writes refused with 503 backpressure at --write-stall-timeout-ms.",
               [](const base::BaseStats& b) { return b.throttle.stop_timeouts; });
  base_counter("strata_l0_write_delay_seconds_total",
               "Time writes spent slowed or stopped by the L0 backlog.",
               [](const base::BaseStats& b) { return b.throttle.delay_seconds_total; });
  base_counter("strata_base_index_builds_total",
               "Base indexes built or retrained by the index builder and installed.",
               [](const base::BaseStats& b) { return b.index_builds; });
  base_counter("strata_base_index_builds_abandoned_total",
               "Base index builds given up (server stopping, table dropped or index dropped).",
               [](const base::BaseStats& b) { return b.index_builds_abandoned; });
  base_counter("strata_base_rewrites_total",
               "Base rewrites committed (live rows copied into new fragments, dead rows "
               "dropped; --rewrite-dead-fraction).",
               [](const base::BaseStats& b) { return b.rewrites; });
  base_counter("strata_base_rewrite_failures_total",
               "Base rewrites that failed (nothing committed; retried after --gc-interval-s).",
               [](const base::BaseStats& b) { return b.rewrite_failures; });
  base_counter("strata_base_rewrite_rows_reclaimed_total",
               "Dead base rows dropped by base rewrites.",
               [](const base::BaseStats& b) { return b.rewrite_rows_reclaimed; });
  base_counter("strata_base_rewrite_bytes_reclaimed_total",
               "Base bytes (fragments, deletion vectors, checkpoints) no longer referenced "
               "after base rewrites (garbage collection removes the files).",
               [](const base::BaseStats& b) { return b.rewrite_bytes_reclaimed; });
  base_counter("strata_base_rewrite_seconds_total", "Time spent in committed base rewrites.",
               [](const base::BaseStats& b) { return b.rewrite_seconds_total; });
  base_counter("strata_gc_runs_total", "Garbage collection passes completed.",
               [](const base::BaseStats& b) { return b.gc_runs; });
  base_counter("strata_gc_failures_total", "Garbage collection passes that stopped on an error.",
               [](const base::BaseStats& b) { return b.gc_failures; });
  base_counter("strata_gc_files_removed_total",
               "Files removed by garbage collection (WAL entries, compacted SSTables, old "
               "manifests, unreferenced base files, orphans).",
               [](const base::BaseStats& b) { return b.gc_files_removed; });
  base_counter("strata_gc_bytes_removed_total", "Bytes of the files garbage collection removed.",
               [](const base::BaseStats& b) { return b.gc_bytes_removed; });
  out.push_back(TableGauge(tables, "strata_l0_sstables",
                           "Published SSTables waiting for compaction (L0), over the shards.",
                           &TableStats::l0_sstables));
  {
    MetricFamily f{"strata_base_rows",
                   "Rows of the base table (deleted ones included).",
                   MetricType::kGauge,
                   {}};
    MetricFamily g{"strata_base_bytes",
                   "Bytes of the base's fragments and index checkpoints.",
                   MetricType::kGauge,
                   {}};
    for (const TableStats& t : tables) {
      f.samples.push_back({"", t.labels, static_cast<double>(t.base.rows)});
      g.samples.push_back({"", t.labels, static_cast<double>(t.base.bytes)});
    }
    out.push_back(std::move(f));
    out.push_back(std::move(g));
  }
  out.push_back(TableGauge(tables, "strata_memtable_bytes",
                           "Bytes of the active and frozen MemTables (rows and their indexes), "
                           "over the shards.",
                           &TableStats::memtable_bytes));
  out.push_back(TableGauge(tables, "strata_base_index_memory_bytes",
                           "Memory of the base table's indexes (HNSW graphs, IVF codes and "
                           "centroids, BTree, FTS).",
                           &TableStats::base_index_bytes));
  out.push_back(TableGauge(tables, "strata_table_rows",
                           "Live rows of the table (newest version per key, deletes applied).",
                           &TableStats::rows));
  out.push_back(TableGauge(tables, "strata_table_version", "Current version of the table.",
                           &TableStats::version));
  out.push_back(Gauge("strata_open_tables", "Tables held open by the server.",
                      static_cast<double>(tables.size())));
  if (auto disk = catalog.FreeSpace(); disk && disk->free_bytes >= 0) {
    out.push_back(Gauge("strata_disk_free_bytes",
                        "Free bytes of the data directory's filesystem (statvfs f_bavail).",
                        static_cast<double>(disk->free_bytes)));
    out.push_back(Gauge("strata_disk_min_free_bytes",
                        "The free-space floor (--min-free-bytes): writes are refused below it.",
                        static_cast<double>(disk->floor_bytes)));
    out.push_back(Gauge("strata_disk_below_floor",
                        "1 while free space is below the floor (writes refused), else 0.",
                        disk->below ? 1.0 : 0.0));
  }
  return out;
}

}  // namespace

void HandleMetrics(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  std::vector<MetricFamily> families = ctx.metrics->registry.Collect();
  for (MetricFamily& f : StorageFamilies(*ctx.catalog)) families.push_back(std::move(f));
  const double uptime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.metrics->start).count();
  families.push_back(
      Gauge("strata_process_uptime_seconds", "Seconds since the server started.", uptime));
  const double rss = ResidentBytes();
  if (rss >= 0) {
    families.push_back(Gauge("strata_process_resident_memory_bytes",
                             "Resident memory of the server process (/proc/self/statm).", rss));
  }
  const double anon = StatusBytes("RssAnon:"), file = StatusBytes("RssFile:");
  if (anon >= 0 && file >= 0) {
    families.push_back(Gauge("strata_process_resident_anon_bytes",
                             "Resident private memory (heap: MemTables, indexes, decoded rows; "
                             "RssAnon of /proc/self/status).",
                             anon));
    families.push_back(Gauge("strata_process_resident_file_bytes",
                             "Resident pages of mapped files (the base's fragments, used in "
                             "place; reclaimable page cache; RssFile of /proc/self/status).",
                             file));
  }
  const index::Sq8CacheStats codes = index::Sq8Cache::Global().stats();
  families.push_back(Gauge("strata_vector_code_bytes",
                           "Bytes of 8-bit vector codes held for exact searches (bounded by "
                           "--vector-code-bytes; index/vector/sq8_cache.h).",
                           static_cast<double>(codes.bytes)));
  families.push_back(Gauge("strata_vector_code_limit_bytes", "--vector-code-bytes (0 = off).",
                           static_cast<double>(codes.budget)));
  families.push_back(Gauge("strata_vector_code_batches", "Batches with 8-bit vector codes held.",
                           static_cast<double>(codes.entries)));
  families.push_back(Counter("strata_vector_code_builds_total",
                             "Batches whose 8-bit vector codes were built.",
                             static_cast<double>(codes.builds)));
  families.push_back(Counter("strata_vector_code_evictions_total",
                             "Batches whose codes were dropped to stay under --vector-code-bytes.",
                             static_cast<double>(codes.evictions)));
  const query::FilterBitsCacheStats bits = query::FilterBitsCache::Global().stats();
  families.push_back(Gauge("strata_filter_cache_bytes",
                           "Bytes of filter bitmaps held for repeated filters (bounded by "
                           "--filter-cache-bytes; query/filter_bits_cache.h).",
                           static_cast<double>(bits.bytes)));
  families.push_back(Gauge("strata_filter_cache_limit_bytes", "--filter-cache-bytes (0 = off).",
                           static_cast<double>(bits.budget)));
  families.push_back(Gauge("strata_filter_cache_entries",
                           "(filter, source) pairs with a bitmap held.",
                           static_cast<double>(bits.entries)));
  families.push_back(Counter("strata_filter_cache_hits_total",
                             "Filtered searches of a source that found its bitmap held.",
                             static_cast<double>(bits.hits)));
  families.push_back(Counter("strata_filter_cache_builds_total",
                             "Filter bitmaps computed (extensions of a grown MemTable included).",
                             static_cast<double>(bits.builds)));
  families.push_back(Counter("strata_filter_cache_evictions_total",
                             "Filter bitmaps dropped to stay under --filter-cache-bytes.",
                             static_cast<double>(bits.evictions)));
  const io::MappedFileCache::Stats cache = io::MappedFileCache::Global().stats();
  families.push_back(Gauge("strata_cache_limit_bytes",
                           "--cache-bytes: bound on the base's mapped pages resident in the "
                           "process (0 = none; io/mapped_file_cache.h).",
                           static_cast<double>(cache.limit_bytes)));
  families.push_back(Gauge("strata_cache_resident_bytes",
                           "Resident mapped-file pages above those of the binary and libraries "
                           "at start (what --cache-bytes bounds).",
                           static_cast<double>(cache.resident_bytes)));
  families.push_back(Gauge("strata_cache_mapped_bytes",
                           "Bytes of base and SSTable data files mapped (resident or not).",
                           static_cast<double>(cache.mapped_bytes)));
  families.push_back(Counter("strata_cache_trims_total",
                             "Times the cache unmapped pages to stay under --cache-bytes.",
                             static_cast<double>(cache.trims)));
  families.push_back(Counter("strata_cache_preads_total",
                             "Scattered rows (IVF refine candidates) read with pread instead of "
                             "mapped, while --cache-bytes binds.",
                             static_cast<double>(cache.preads)));
  families.push_back(Counter("strata_cache_trim_seconds_total",
                             "Time spent unmapping chunks to stay under --cache-bytes.",
                             cache.trim_seconds));
  families.push_back(Counter("strata_cache_advised_bytes_total",
                             "Mapped ranges passed to madvise(MADV_DONTNEED) to stay under "
                             "--cache-bytes, resident or not (not bytes released: see "
                             "strata_cache_resident_bytes).",
                             static_cast<double>(cache.advised_bytes)));
  const io::FetchedFiles::Stats fetched = io::FetchedFiles::Global().stats();
  families.push_back(Gauge("strata_cache_fetched_files",
                           "Local copies of an object store's data files, mapped by open "
                           "tables (--cache-dir; 0 on a local disk).",
                           static_cast<double>(fetched.files_on_disk)));
  families.push_back(Gauge("strata_cache_fetched_bytes",
                           "Bytes of those local copies on the local disk.",
                           static_cast<double>(fetched.bytes_on_disk)));
  families.push_back(Counter("strata_cache_fetched_bytes_total",
                             "Bytes copied from the object store to local copies.",
                             static_cast<double>(fetched.bytes_fetched)));
  families.push_back(Counter("strata_cache_ranged_gets_total",
                             "Ranged GETs sent to make local copies.",
                             static_cast<double>(fetched.ranged_gets)));
  res.status = 200;
  res.set_content(metrics::RenderText(families), "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace strata::server
