// Compaction and garbage collection at scale (issue "Compaction into an indexed base table",
// `make bench-compaction`). In-process, through the catalog, with default settings (MemTable
// sizes, compaction triggers, retention):
//  1. Load N rows (default 1,000,000; STRATA_COMPACTION_BENCH_ROWS) of seeded clustered 128-d
//     vectors (1,000 centroids, sigma 0.1; id int64 primary key, HNSW l2 created first) in
//     1,000-row batches. Every 100,000 rows: L0 count, base rows, bytes on disk, search QPS
//     (k 10, one thread, 300 queries on one snapshot; the writer paused: "just paused", with
//     whatever L0, MemTable and background compaction the load left). At 100,000 rows and at
//     the end of the load also "settled": flushed and compacted until no SSTable waits and no
//     compaction runs (base only), then the same QPS. Then the idle rule alone: a few rows
//     written and flushed, no write after: time until background compaction leaves L0 empty
//     (CompactionOptions::idle, default 30 s).
//  2. Upsert 10% of the ids (new vectors) and delete 5%, in 1,000-row batches.
//  3. Flush, compact until no SSTable waits, collect garbage; bytes on disk by kind (WAL,
//     SSTables, base data, base index checkpoints, manifests) against the same live rows loaded
//     fresh into a new table and compacted; again after both tables closed cleanly (their
//     base index checkpoints then cover every row, BaseTable::CloseWithCheckpoints).
//     Also the base's physical and live rows, the base rewrites the background trigger ran
//     (docs/COMPACTION.md "Base rewrite"; STRATA_COMPACTION_BENCH_REWRITE_MIN_DEAD_ROWS and
//     _REWRITE_FRACTION override its limits), search QPS and RSS.
//  4. Put latency: p50/p99 of the puts of steps 1-2 (full speed) that overlapped a compaction
//     against those that did not.
//  5. Restart: a child process (this binary, --restart DIR) opens the table and answers one
//     search: time to first answer, then RSS.
//  6. Paced put latency (bench/paced_writer.h), on the loaded table reopened (so its upserts do
//     not add garbage to step 3's figures): upserts of existing ids offered at half the
//     sustainable write rate S = 1 / (1 / L + 1 / C) (L the load's rows/s, C the rows
//     compacted per second of compaction, both measured in step 1; the write path and
//     compaction share the CPU). After a warm-up until one compaction ends, for
//     STRATA_COMPACTION_BENCH_PACED_SECONDS (default 120; 0 skips) and on until
//     STRATA_COMPACTION_BENCH_PACED_COMPACTIONS (2) compactions ended, at most
//     STRATA_COMPACTION_BENCH_PACED_MAX_SECONDS (900). STRATA_COMPACTION_BENCH_PACED_RATE sets
//     the rate in rows/s, STRATA_COMPACTION_BENCH_PACED_FRACTION the fraction of S; latency
//     counted from each put's due time.
// Prints one "[figures]" line per measurement and a summary of the targets.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arrow/builder.h"
#include "clustered_rows.h"
#include "compaction_bench_env.h"
#include "compaction_bench_restart.h"
#include "compaction_bench_search.h"
#include "index/index_spec.h"
#include "io/mapped_file_cache.h"
#include "paced_writer.h"
#include "query/vector_search.h"
#include "table/catalog.h"
#include "table/primary_key.h"
#include "usage.h"

extern char** environ;

namespace {

using namespace strata;  // NOLINT
using Clock = std::chrono::steady_clock;
using strata::bench::Batch;
using strata::bench::BenchCompaction;
using strata::bench::CacheBytes;
using strata::bench::Describe;
using strata::bench::DiskBytes;
using strata::bench::FreshCompare;
using strata::bench::Hnsw;
using strata::bench::IndexType;
using strata::bench::kDim;
using strata::bench::KeepTable;
using strata::bench::Keys;
using strata::bench::NumRows;
using strata::bench::PacedCompactions;
using strata::bench::PacedFraction;
using strata::bench::PacedMaxSeconds;
using strata::bench::PacedSeconds;
using strata::bench::Percentile;
using strata::bench::Recall;
using strata::bench::Refine;
using strata::bench::ResidentBytes;
using strata::bench::ResidentBytesByKind;
using strata::bench::ResidentSplit;
using strata::bench::Schema;
using strata::bench::SearchQps;
using strata::bench::Vectors;

constexpr int64_t kBatch = 1000;

// Flush, then compact until no SSTable waits and no compaction runs (retrying while a
// background one holds the work lock). False (after printing why) on an error.
bool Settle(table::Table& t) {
  if (Status st = t.Flush(Clock::now() + std::chrono::minutes(10)).status(); !st.ok()) {
    std::fprintf(stderr, "flush: %s\n", st.ToString().c_str());
    return false;
  }
  for (int i = 0; i < 100000; ++i) {
    const bool waiting = !t.DescribeShards().at(0).sstables.empty();
    const auto b = t.DescribeBase();
    if (!waiting && !(b.has_value() && b->stats.running > 0)) return true;
    if (waiting) {
      auto r = t.Compact(Clock::now() + std::chrono::minutes(10));
      if (!r.ok() && !r.status().IsAlreadyExists()) {
        std::fprintf(stderr, "compact: %s\n", r.status().ToString().c_str());
        return false;
      }
      if (r.ok() && !r->compacted_generations.empty()) continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::fprintf(stderr, "settle: SSTables still waiting\n");
  return false;
}

// For a table closed cleanly (its base index checkpoints then cover every row): reopens it,
// collects garbage (a superseded checkpoint is removed at once, base/gc.h) and closes it
// again, so the directory holds what a closed table needs and nothing superseded.
bool CollectClosed(const std::string& dir) {
  auto catalog = table::Catalog::Open(dir, {}, BenchCompaction());
  if (!catalog.ok()) return false;
  auto t = (*catalog)->GetTable("default", "bench");
  if (!t.ok()) return false;
  for (int i = 0; i < 1200; ++i) {  // the work lock is busy while the index checkpoint loads
    auto r = (*t)->CollectGarbage();
    if (r.ok()) return true;
    if (!r.status().IsAlreadyExists()) {
      std::fprintf(stderr, "gc: %s\n", r.status().ToString().c_str());
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int64_t L0(table::Table& t) {
  return static_cast<int64_t>(t.DescribeShards().at(0).sstables.size());
}

struct PutSample {
  double ms;
  bool during_compaction;
};

// Step 6, paced puts: a load the machine can sustain, on the loaded table reopened after the
// restart (its upserts would otherwise add garbage to the disk figures of the issue's
// scenario). Every row costs the write path (MemTable HNSW insert, WAL, flush) and later
// compaction (base HNSW insert); where both share the CPU (2 cores: the load alone keeps them
// busy), the sustainable write rate is S = 1 / (1 / L + 1 / C), L the load's rows/s and C
// compaction's rows per second of compaction. Measured on 2 cores at 200k rows: L
// 13,000-16,000, C 10,700-11,500, so S is about 6,000 and half of C (the default before) was
// 0.9 S, where puts queue whatever compaction does (docs/COMPACTION.md "Sustainable write
// rate"). A warm-up runs until one compaction ends (the reopened table measures its own C for
// the throttle and the compaction unit), then the measured run lasts PACED_SECONDS and on
// until PACED_COMPACTIONS compactions ended in it, at most PACED_MAX_SECONDS.
void PacedStep(const std::string& dir, int64_t rows, double load_rate, double c) {
  const double secs = PacedSeconds();
  if (secs <= 0) return;
  auto catalog = table::Catalog::Open(dir, {}, BenchCompaction());
  if (!catalog.ok()) {
    std::printf("paced step: reopen failed: %s\n", catalog.status().ToString().c_str());
    return;
  }
  auto opened = (*catalog)->GetTable("default", "bench");
  if (!opened.ok()) {
    std::printf("paced step: %s\n", opened.status().ToString().c_str());
    return;
  }
  const std::shared_ptr<table::Table> table = *opened;
  Vectors vecs;
  std::atomic<bool> compacting{false}, stop{false};
  std::thread watcher([&] {
    while (!stop.load()) {
      const auto b = table->DescribeBase();
      compacting = b.has_value() && b->stats.running > 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  const auto compactions = [&] {
    const auto b = table->DescribeBase();
    return b.has_value() ? b->stats.compactions : 0;
  };
  const double sustainable = c > 0 && load_rate > 0 ? 1.0 / (1.0 / load_rate + 1.0 / c) : 0;
  // STRATA_COMPACTION_BENCH_PACED_FRACTION (default 0.5) of S, or
  // STRATA_COMPACTION_BENCH_PACED_RATE (rows/s) overrides the offered rate.
  const char* fixed = std::getenv("STRATA_COMPACTION_BENCH_PACED_RATE");
  const double rate = fixed != nullptr && std::atof(fixed) > 0
                          ? std::atof(fixed)
                          : std::max(1000.0, PacedFraction() * sustainable);
  int64_t retries = 0;
  int64_t next = 0;  // batches written (ids cycle over the table)
  const auto put = [&](int64_t) {
    std::vector<int64_t> ids;
    const int64_t first = (next++ * kBatch) % rows;
    for (int64_t j = first; j < std::min(rows, first + kBatch); ++j) ids.push_back(j);
    Status st = table->Insert({Batch(ids, vecs)}).status();
    while (st.code() == StatusCode::kBackpressure) {
      ++retries;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      st = table->Insert({Batch(ids, vecs)}).status();
    }
    if (!st.ok()) std::fprintf(stderr, "paced put: %s\n", st.ToString().c_str());
    return st.ok();
  };
  const auto is_compacting = [&] { return compacting.load(); };
  const uint64_t w0 = compactions();
  const auto warm = strata::bench::PacedPuts(
      rate, kBatch, 0, put, is_compacting, [&] { return compactions() == w0; }, PacedMaxSeconds());
  const auto b0 = table->DescribeBase();
  const uint64_t want = PacedCompactions();
  const auto r = strata::bench::PacedPuts(
      rate, kBatch, secs, put, is_compacting,
      [&] { return compactions() < b0->stats.compactions + want; }, PacedMaxSeconds());
  const auto b1 = table->DescribeBase();
  stop = true;
  watcher.join();
  const double ip99 = Percentile(r.idle_ms, 0.99), dp99 = Percentile(r.during_ms, 0.99);
  std::printf(
      "[figures] paced puts at %.0f rows/s (%.2f S; load %.0f rows/s, compaction throughput "
      "%.0f rows/s, sustainable S %.0f rows/s), warm-up %.0f s, then %.0f s with %llu "
      "compactions: idle n %zu p50 %.2f ms p99 %.2f ms; during compaction n %zu p50 %.2f ms "
      "p99 %.2f ms; p99 ratio %.2f (target <= 2); %lld late starts, %lld retries after 503\n",
      rate, sustainable > 0 ? rate / sustainable : 0, load_rate, c, sustainable, warm.seconds,
      r.seconds, static_cast<unsigned long long>(b1->stats.compactions - b0->stats.compactions),
      r.idle_ms.size(), Percentile(r.idle_ms, 0.5), ip99, r.during_ms.size(),
      Percentile(r.during_ms, 0.5), dp99, ip99 > 0 ? dp99 / ip99 : 0,
      static_cast<long long>(r.late), static_cast<long long>(retries));
  const auto &t0 = b0->stats.throttle, &t1 = b1->stats.throttle;
  std::printf(
      "[figures] paced throttle: %llu writes slowed, %llu let through while a compaction ran, "
      "%llu stopped (%llu refused), %.1f s of delay\n",
      static_cast<unsigned long long>(t1.slowed_writes - t0.slowed_writes),
      static_cast<unsigned long long>(t1.inflight_passed - t0.inflight_passed),
      static_cast<unsigned long long>(t1.stopped_writes - t0.stopped_writes),
      static_cast<unsigned long long>(t1.stop_timeouts - t0.stop_timeouts),
      t1.delay_seconds_total - t0.delay_seconds_total);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--restart") {
    return strata::bench::RestartChild(argv[2], std::atoll(argv[3]));
  }
  const int64_t rows = NumRows();
  const std::string root = (std::filesystem::temp_directory_path() /
                            ("strata-compaction-bench-" + std::to_string(getpid())))
                               .string();
  const std::string dir = root + "/load", fresh_dir = root + "/fresh";
  std::filesystem::create_directories(dir);
  std::printf("compaction_bench: %lld rows of %d-d clustered vectors, batches of %lld, in %s\n",
              static_cast<long long>(rows), kDim, static_cast<long long>(kBatch), root.c_str());

  auto catalog = std::move(table::Catalog::Open(dir, {}, BenchCompaction())).value();
  auto table =
      std::move(catalog->CreateTable("default", "bench", Schema(), {}, table::CreateMode::kCreate))
          .value();
  if (Status st = table->CreateIndex(Hnsw()).status(); !st.ok()) {
    std::fprintf(stderr, "create index: %s\n", st.ToString().c_str());
    return 1;
  }
  Vectors vecs, probe;
  std::vector<PutSample> puts;
  std::atomic<bool> compacting{false};
  std::atomic<bool> stop{false};
  // A watcher marks the windows during which a compaction is running, and how long the base
  // had rows its index did not cover (searched exactly meanwhile: the index was being built).
  double uncovered_s = 0, first_ready_s = -1;
  const auto watch0 = Clock::now();
  std::thread watcher([&] {
    auto last = Clock::now();
    while (!stop.load()) {
      auto b = table->DescribeBase();
      compacting = b.has_value() && b->stats.running > 0;
      const auto now = Clock::now();
      if (b.has_value() && b->rows > 0) {
        bool covered = true;
        for (const auto& idx : b->indexes) covered &= idx.rows_indexed >= b->rows;
        if (!covered) uncovered_s += std::chrono::duration<double>(now - last).count();
        if (covered && first_ready_s < 0) {
          first_ready_s = std::chrono::duration<double>(now - watch0).count();
        }
      }
      last = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  int64_t backpressure_retries = 0;
  auto put = [&](const std::function<Status()>& fn) {
    const bool before = compacting.load();
    const auto t0 = Clock::now();
    Status st = fn();
    // 503 backpressure (L0 at --compaction-l0-stop): retry as a client would; the latency
    // counts the wait.
    while (st.code() == StatusCode::kBackpressure) {
      ++backpressure_retries;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      st = fn();
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!st.ok()) {
      std::fprintf(stderr, "put: %s\n", st.ToString().c_str());
      std::exit(1);
    }
    puts.push_back({ms, before || compacting.load()});
  };

  std::map<int64_t, double> qps_at, settled_qps_at;
  double load_rate = 0;  // rows/s of the load (settling excluded), for the paced step
  int64_t max_l0 = 0;
  const auto load0 = Clock::now();
  Clock::duration settling{0};  // time spent settling (not loading)
  for (int64_t first = 0; first < rows; first += kBatch) {
    std::vector<int64_t> ids;
    for (int64_t i = first; i < std::min(rows, first + kBatch); ++i) ids.push_back(i);
    put([&] { return table->Insert({Batch(ids, vecs)}).status(); });
    const int64_t done = first + static_cast<int64_t>(ids.size());
    const int64_t l0 = static_cast<int64_t>(table->DescribeShards().at(0).sstables.size());
    max_l0 = std::max(max_l0, l0);
    if (done % 100000 == 0 || done == rows) {
      load_rate = static_cast<double>(done) /
                  std::chrono::duration<double>(Clock::now() - load0 - settling).count();
      const double qps = SearchQps(*table, probe);
      qps_at[done] = qps;
      auto b = table->DescribeBase();
      std::printf(
          "[figures] rows %lld: L0 %lld (max so far %lld), base rows %lld (%lld compactions), "
          "search %.0f q/s, load %.0f rows/s,%s\n",
          static_cast<long long>(done), static_cast<long long>(l0), static_cast<long long>(max_l0),
          static_cast<long long>(b ? b->rows : 0), static_cast<long long>(b ? b->version : 0), qps,
          load_rate, Describe(DiskBytes(dir)).c_str());
      std::fflush(stdout);
      if (done == 100000 || done == rows) {
        const auto s0 = Clock::now();
        if (!Settle(*table)) return 1;
        const double settle_s = std::chrono::duration<double>(Clock::now() - s0).count();
        const double settled = SearchQps(*table, probe);
        settling += Clock::now() - s0;
        settled_qps_at[done] = settled;
        b = table->DescribeBase();
        std::printf(
            "[figures] settled search QPS at %lld rows: %.0f q/s (settled in %.1f s: L0 %lld, "
            "base rows %lld, %lld compactions)\n",
            static_cast<long long>(done), settled, settle_s, static_cast<long long>(L0(*table)),
            static_cast<long long>(b ? b->rows : 0), static_cast<long long>(b ? b->version : 0));
        std::fflush(stdout);
      }
    }
  }

  // The idle rule by itself: a few rows (upserts of existing ids) written and flushed into one
  // SSTable, below the count trigger; then no write. The background compacts it once the
  // table has been quiet for CompactionOptions::idle (30 s by default).
  {
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < std::min<int64_t>(kBatch, rows); ++i) ids.push_back(i);
    put([&] { return table->Insert({Batch(ids, vecs)}).status(); });
    const auto last_write = Clock::now();
    if (!table->Flush(Clock::now() + std::chrono::minutes(10)).ok()) return 1;
    const auto flushed = Clock::now();
    const int64_t l0 = L0(*table);
    const uint64_t idle0 = table->DescribeBase()->stats.idle_compactions;
    const auto limit = std::chrono::seconds(30 + 60);  // idle + margin
    while (L0(*table) > 0 && Clock::now() - flushed < limit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const auto b = table->DescribeBase();
    std::printf(
        "[figures] idle compaction: %lld rows written, flushed to L0 %lld; L0 %lld after %.1f s "
        "without writes (%.1f s after the flush; idle rule 30 s, waited up to %lld s), idle "
        "compactions %llu\n",
        static_cast<long long>(ids.size()), static_cast<long long>(l0),
        static_cast<long long>(L0(*table)),
        std::chrono::duration<double>(Clock::now() - last_write).count(),
        std::chrono::duration<double>(Clock::now() - flushed).count(),
        static_cast<long long>(limit.count()),
        static_cast<unsigned long long>(b->stats.idle_compactions - idle0));
    std::fflush(stdout);
  }

  // The compaction throughput C the load measured, for the paced step (step 6).
  double compaction_rate = 0;
  if (const auto b0 = table->DescribeBase(); b0 && b0->stats.compaction_seconds_total > 0) {
    compaction_rate =
        static_cast<double>(b0->stats.rows_compacted) / b0->stats.compaction_seconds_total;
  }

  // Upsert 10%, delete 5% (distinct random ids).
  std::vector<int64_t> order(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
  const int64_t n_up = rows / 10, n_del = rows / 20;
  for (int64_t i = 0; i < n_up; i += kBatch) {
    std::vector<int64_t> ids(order.begin() + i, order.begin() + std::min(n_up, i + kBatch));
    put([&] { return table->Insert({Batch(ids, vecs)}).status(); });
  }
  for (int64_t i = n_up; i < n_up + n_del; i += kBatch) {
    std::vector<int64_t> ids(order.begin() + i, order.begin() + std::min(n_up + n_del, i + kBatch));
    put([&] { return table->Delete({Keys(ids)}).status(); });
  }
  stop = true;
  watcher.join();

  // Settle: flush, compact until no SSTable waits (retrying while a background one runs).
  if (!Settle(*table)) return 1;
  // A base rewrite the settle made due runs in the background right after it: wait for it.
  {
    const base::CompactionOptions co = BenchCompaction();
    const auto w0 = Clock::now();
    for (;;) {
      const auto b = table->DescribeBase();
      const int64_t dead = b->rows - b->live_rows;
      const bool due = co.rewrite_dead_fraction > 0 && dead >= co.rewrite_min_dead_rows &&
                       static_cast<double>(dead) >= co.rewrite_dead_fraction * b->rows;
      if (!due || Clock::now() - w0 > std::chrono::minutes(20)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  // GC (waiting while the maintenance thread's own pass after the rewrite holds the work lock).
  for (int i = 0; i < 600 && table->CollectGarbage().status().IsAlreadyExists(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The base index built (and retrained, IVF) over every row: the recall below measures it.
  {
    const auto w0 = Clock::now();
    bool ready = false;
    for (int i = 0; i < 36000 && !ready; ++i) {
      auto b = table->DescribeBase();
      ready = b.has_value();
      if (b) {
        for (const auto& idx : b->indexes) ready &= idx.rows_indexed >= b->rows;
      }
      for (const auto& st : table->ListIndexes()) {
        if (st.base.has_value() && st.base->trained_rows > 0) {
          ready &= st.base->rows < 4 * st.base->trained_rows;
        }
      }
      if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::printf(
        "[figures] base index: first covered the base %.1f s into the load; base rows not "
        "covered by it (searched exactly) for %.1f s of the load; ready %.1f s after the "
        "settle%s\n",
        first_ready_s, uncovered_s, std::chrono::duration<double>(Clock::now() - w0).count(),
        ready ? "" : " (NOT ready after 1 h)");
  }
  const int64_t live = table->Snapshot().num_rows;
  const auto loaded_bytes = DiskBytes(dir);
  std::printf("[figures] after upserts and deletes: %lld live rows,%s\n",
              static_cast<long long>(live), Describe(loaded_bytes).c_str());
  {
    const auto b = table->DescribeBase();
    Vectors qp;
    const double qps = SearchQps(*table, qp);
    const double per = b->stats.rewrites > 0
                           ? b->stats.rewrite_seconds_total / static_cast<double>(b->stats.rewrites)
                           : 0;
    std::printf(
        "[figures] base after upserts and deletes: %lld physical rows, %lld live; %llu base "
        "rewrites (%llu rows reclaimed, %.1f s each on average); search %.0f q/s settled; RSS "
        "%.1f MB\n",
        static_cast<long long>(b->rows), static_cast<long long>(b->live_rows),
        static_cast<unsigned long long>(b->stats.rewrites),
        static_cast<unsigned long long>(b->stats.rewrite_rows_reclaimed), per, qps,
        static_cast<double>(ResidentBytes()) / 1e6);
  }

  // The same live rows loaded fresh and compacted.
  std::map<std::string, int64_t> fresh_closed_bytes;
  int64_t fresh_open_total = 0;
  if (FreshCompare()) {
    std::filesystem::create_directories(fresh_dir);
    auto fc = std::move(table::Catalog::Open(fresh_dir, {}, BenchCompaction())).value();
    auto ft =
        std::move(fc->CreateTable("default", "bench", Schema(), {}, table::CreateMode::kCreate))
            .value();
    if (!ft->CreateIndex(Hnsw()).ok()) return 1;
    auto snap = table->Snapshot();
    auto live_batches = std::move(shard::LiveBatches(*snap.shard)).value();
    for (const auto& b : live_batches) {
      for (int64_t off = 0; off < b->num_rows(); off += kBatch) {
        const auto slice = b->Slice(off, std::min(kBatch, b->num_rows() - off));
        Status st = ft->Insert({slice}).status();
        while (st.code() == StatusCode::kBackpressure) {  // L0 at its stop count: retry
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          st = ft->Insert({slice}).status();
        }
        if (!st.ok()) {
          std::fprintf(stderr, "fresh insert: %s\n", st.ToString().c_str());
          return 1;
        }
      }
    }
    if (!Settle(*ft)) return 1;
    (void)ft->CollectGarbage();
    const auto fresh_bytes = DiskBytes(fresh_dir);
    fresh_open_total = fresh_bytes.at("total");
    std::printf("[figures] fresh table of the same %lld live rows:%s\n",
                static_cast<long long>(ft->Snapshot().num_rows), Describe(fresh_bytes).c_str());
    std::printf(
        "[figures] disk bytes loaded / fresh: %.3f (target <= 1.2); per live row: "
        "loaded %.0f B, fresh %.0f B\n",
        static_cast<double>(loaded_bytes.at("total")) /
            static_cast<double>(fresh_bytes.at("total")),
        static_cast<double>(loaded_bytes.at("total")) / static_cast<double>(live),
        static_cast<double>(fresh_bytes.at("total")) / static_cast<double>(live));
    // Closed cleanly: the base index checkpoints cover every row (the loaded table is closed
    // below, before its restart, and compared then); superseded checkpoints collected.
    ft.reset();
    fc.reset();
    if (!CollectClosed(fresh_dir)) std::printf("fresh table: reopen and GC failed\n");
    fresh_closed_bytes = DiskBytes(fresh_dir);
    std::printf("[figures] fresh table closed cleanly:%s\n", Describe(fresh_closed_bytes).c_str());
  }

  std::vector<double> idle, during;
  for (const auto& p : puts) (p.during_compaction ? during : idle).push_back(p.ms);
  const double idle_p99 = Percentile(idle, 0.99), during_p99 = Percentile(during, 0.99);
  std::printf(
      "[figures] put latency: idle n %zu p50 %.2f ms p99 %.2f ms; during compaction n "
      "%zu p50 %.2f ms p99 %.2f ms; p99 ratio %.2f (target <= 2); %lld puts retried after 503 "
      "backpressure (L0 at its stop count)\n",
      idle.size(), Percentile(idle, 0.5), idle_p99, during.size(), Percentile(during, 0.5),
      during_p99, idle_p99 > 0 ? during_p99 / idle_p99 : 0,
      static_cast<long long>(backpressure_retries));
  const double q100 = qps_at.count(100000) ? qps_at[100000] : qps_at.begin()->second;
  const double qend = qps_at.rbegin()->second;
  std::printf(
      "[figures] search QPS at %lld rows / at 100k: %.0f / %.0f = %.2f (target >= 0.9); "
      "max L0 during the load %lld (target <= 5)\n",
      static_cast<long long>(qps_at.rbegin()->first), qend, q100, qend / q100,
      static_cast<long long>(max_l0));
  if (!settled_qps_at.empty()) {
    const double s100 = settled_qps_at.begin()->second;
    const double send = settled_qps_at.rbegin()->second;
    std::printf(
        "[figures] just paused QPS at %lld / at %lld = %.2f; settled QPS at %lld / at %lld = "
        "%.0f / %.0f = %.2f (target >= 0.9)\n",
        static_cast<long long>(qps_at.rbegin()->first),
        static_cast<long long>(qps_at.count(100000) ? 100000 : qps_at.begin()->first), qend / q100,
        static_cast<long long>(settled_qps_at.rbegin()->first),
        static_cast<long long>(settled_qps_at.begin()->first), send, s100, send / s100);
  }

  {
    Vectors rp;
    std::printf("[figures] index %s refine_factor %lld: recall@10 %.4f (100 queries, vs exact)\n",
                IndexType().c_str(), static_cast<long long>(Refine().value_or(0)),
                Recall(*table, rp));
    for (const auto& st : table->ListIndexes()) {
      if (!st.base.has_value()) continue;
      std::printf(
          "[figures] base index %s: %s, %lld rows, %.1f MB in memory, %lld partitions, "
          "trained on %lld rows\n",
          st.spec.name.c_str(), st.base->type.c_str(), static_cast<long long>(st.base->rows),
          static_cast<double>(st.base->memory_bytes) / 1e6,
          static_cast<long long>(st.base->num_partitions),
          static_cast<long long>(st.base->trained_rows));
    }
  }
  // Restart in a child process (its RSS is its own).
  table.reset();
  catalog.reset();
  // Closed cleanly, as the fresh table: the disk comparison with both checkpoints covering
  // every row.
  {
    if (!CollectClosed(dir)) std::printf("loaded table: reopen and GC failed\n");
    const auto loaded_closed = DiskBytes(dir);
    std::printf("[figures] loaded table closed cleanly:%s\n", Describe(loaded_closed).c_str());
    if (!fresh_closed_bytes.empty() && fresh_open_total > 0) {
      std::printf(
          "[figures] disk bytes loaded / fresh, both closed cleanly: %.3f (target <= 1.2; "
          "open, before the close: %.3f)\n",
          static_cast<double>(loaded_closed.at("total")) /
              static_cast<double>(fresh_closed_bytes.at("total")),
          static_cast<double>(loaded_bytes.at("total")) / static_cast<double>(fresh_open_total));
    }
  }
  // Twice: without a bound on mapped pages, then with the bench's --cache-bytes.
  for (const int64_t cache : {int64_t{0}, CacheBytes()}) {
    std::printf("restart child, --cache-bytes %lld%s\n", static_cast<long long>(cache),
                cache == 0 ? " (no bound)" : "");
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string cache_arg = std::to_string(cache);
    std::vector<char*> args = {self.data(), const_cast<char*>("--restart"),
                               const_cast<char*>(dir.c_str()), cache_arg.data(), nullptr};
    pid_t pid = 0;
    std::fflush(stdout);
    if (const int e = posix_spawn(&pid, self.c_str(), nullptr, nullptr, args.data(), environ);
        e != 0) {
      std::printf("restart child not started: %s (%s; rebuilt while running?)\n", std::strerror(e),
                  self.c_str());
    } else {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::printf("restart child failed (status %d)\n", status);
      }
    }
  }
  PacedStep(dir, rows, load_rate, compaction_rate);
  if (KeepTable()) {
    std::printf(
        "kept the table in %s (STRATA_COMPACTION_BENCH_KEEP=1; rerun the restart step "
        "with: %s --restart %s CACHE_BYTES)\n",
        dir.c_str(), "build/release/compaction_bench", dir.c_str());
    return 0;
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return 0;
}
