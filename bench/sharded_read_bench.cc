// Reads of a table of several bucket shards against the same rows unsharded (issue 16,
// docs/SHARDING.md "One base for all shards"): R seeded clustered 128-d rows
// (bench/clustered_rows.h, HNSW on vec) written in 10,000-row batches into (a) an unsharded
// table and (b) a table with a bucket LSM write spec of B buckets, then, for each stage:
//   1. "compacted": flushed and compacted into the base (one graph for every shard's rows);
//   2. "+ upserts in L0": U% of the rows upserted again and flushed, not compacted (each
//      shard then holds its own SSTable and MemTable sources);
//   3. "while upserting": as 2, with one more thread upserting 1,000-row batches of random
//      ids into the measured layout at STRATA_SRB_WRITE_RPS rows/s while its queries run, and
//      one compacting L0 every 200 ms as the background compactor would (the writer's
//      achieved rows/s is reported);
// measured on one thread, the two layouts in turns (ABAB), every query taking its own
// Table::Snapshot() as the server does per request: vector search q/s (k = 10), the overlap
// of the two layouts' top-10 ids (recall of the sharded answer against the unsharded one),
// and point lookups q/s (`id = x`, which the sharded table prunes to one shard, as the
// server's query path does: query::PruneShards with its explain line), plus the same lookups
// on the sharded table without pruning (what pruning costs or saves).
// Environment: STRATA_SRB_ROWS (200000), STRATA_SRB_BUCKETS (4), STRATA_SRB_QUERIES (1000),
// STRATA_SRB_UPSERT_PCT (20), STRATA_SRB_TURNS (3), STRATA_SRB_WRITE_RPS (5000),
// STRATA_SRB_STAGES (3: all; 2 skips "while upserting"). `make bench-sharded-read` runs it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "clustered_rows.h"
#include "io/local_object_store.h"
#include "query/scan.h"
#include "query/shard_pruning.h"
#include "query/vector_search.h"
#include "table/local_catalog.h"
#include "table/lsm_write_spec.h"

namespace {

using namespace strata;  // NOLINT
using Clock = std::chrono::steady_clock;

int64_t Env(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoll(v) > 0 ? std::atoll(v) : fallback;
}

void Check(const Status& st, const char* what) {
  if (st.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, st.ToString().c_str());
  std::exit(1);
}

struct Layout {
  std::string name;
  std::string dir;
  std::shared_ptr<io::LocalObjectStore> store;
  std::unique_ptr<table::LocalCatalog> catalog;
  std::shared_ptr<table::Table> table;
};

void Open(Layout& l, int64_t buckets) {
  std::filesystem::remove_all(l.dir);
  std::filesystem::create_directories(l.dir);
  l.store = *io::LocalObjectStore::Open(l.dir);
  base::CompactionOptions co;
  co.background = false;  // compaction only where the stages say
  l.catalog = std::make_unique<table::LocalCatalog>(l.store, shard::ShardWriterOptions{}, co);
  std::optional<table::LsmWriteSpec> spec;
  if (buckets > 1) {
    spec = table::LsmWriteSpec{};
    spec->mode = table::ShardingMode::kBucket;
    spec->column = "id";
    spec->num_buckets = buckets;
  }
  auto t =
      l.catalog->CreateTable("default", "t", bench::Schema(), {}, table::CreateMode::kCreate, spec);
  Check(t.status(), "create");
  l.table = *t;
  index::IndexSpec hnsw;
  hnsw.kind = index::IndexKind::kHnsw;
  hnsw.column = "vec";
  hnsw.name = "vec_idx";
  hnsw.requested_type = "HNSW";
  Check(l.table->CreateIndex(hnsw).status(), "hnsw");
}

void Write(Layout& l, int64_t first, int64_t last, int64_t step) {
  bench::Vectors vecs;  // the same vectors for both layouts
  std::vector<int64_t> ids;
  for (int64_t id = first; id < last; id += step) {
    ids.push_back(id);
    if (ids.size() == 10000) {
      Check(l.table->Insert({bench::Batch(ids, vecs)}).status(), "insert");
      ids.clear();
    }
  }
  if (!ids.empty()) Check(l.table->Insert({bench::Batch(ids, vecs)}).status(), "insert");
  Check(l.table->Flush(Clock::now() + std::chrono::minutes(10)).status(), "flush");
}

void CompactAll(Layout& l) {
  for (;;) {
    auto r = l.table->Compact(Clock::now() + std::chrono::minutes(30));
    Check(r.status(), "compact");
    if (r->sstables_remaining == 0) break;
  }
  l.table->AwaitIndexLoads("vec");
}

struct Figures {
  double search_qps = 0, lookup_qps = 0;
  double unpruned_qps = 0;                // the same lookups without query::PruneShards
  double written_rps = 0;                 // stage "while writing": the writer's rows/s
  std::vector<std::vector<int64_t>> top;  // per query, the top-10 ids
};

Figures Measure(Layout& l, const std::vector<std::vector<float>>& queries, int64_t rows,
                bool writing, int64_t write_rps) {
  Figures f;
  // Stage "while writing": one thread upserts 1,000-row batches of random existing ids
  // (fresh vectors) into this layout at a fixed rate (the same load for both layouts) for as
  // long as the queries run, and another compacts L0 as the background compactor would.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{0};
  std::thread writer, compactor;
  const auto w0 = Clock::now();
  if (writing) {
    writer = std::thread([&] {
      bench::Vectors vecs;
      std::mt19937_64 rng(11);
      const auto every = std::chrono::microseconds(1000000000 / write_rps);  // per 1,000 rows
      auto next = Clock::now();
      while (!stop.load()) {
        std::vector<int64_t> ids(1000);
        for (auto& id : ids) id = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows));
        Check(l.table->Insert({bench::Batch(ids, vecs)}).status(), "upsert while reading");
        written.fetch_add(1000);
        next += every;
        std::this_thread::sleep_until(next);
      }
    });
    compactor = std::thread([&] {
      while (!stop.load()) {
        auto r = l.table->Compact(Clock::now() + std::chrono::minutes(5));
        if (!r.ok() && r.status().code() != StatusCode::kBackpressure) Check(r.status(), "compact");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
  // Every query takes its own snapshot, as the server does per request.
  auto t0 = Clock::now();
  for (const auto& q : queries) {
    query::VectorSearchOptions o;
    o.query = q;
    o.k = 10;
    o.columns = {query::ColumnRef{"id"}};
    auto r = query::VectorSearch(l.table->Snapshot(), o);
    Check(r.status(), "search");
    std::vector<int64_t> ids;
    for (const auto& b : r->batches) {
      for (int64_t i = 0; i < b->num_rows(); ++i) ids.push_back(b->column(0).Value<int64_t>(i));
    }
    f.top.push_back(std::move(ids));
  }
  f.search_qps = static_cast<double>(queries.size()) /
                 std::chrono::duration<double>(Clock::now() - t0).count();
  auto lookups_qps = [&](bool prune) {
    std::mt19937_64 rng(7);
    const int64_t lookups = static_cast<int64_t>(queries.size()) * 4;
    const auto start = Clock::now();
    for (int64_t i = 0; i < lookups; ++i) {
      query::ScanOptions o;
      o.filter =
          "id = " + std::to_string(static_cast<int64_t>(rng() % static_cast<uint64_t>(rows)));
      const table::TableSnapshot snap = l.table->Snapshot();
      std::string plan;  // as the server asks for it (explain_plan/ shows it)
      auto r =
          prune ? query::Scan(query::PruneShards(snap, o.filter, &plan), o) : query::Scan(snap, o);
      Check(r.status(), "lookup");
      if (r->num_rows != 1) {
        std::fprintf(stderr, "lookup %s: %lld rows\n", o.filter->c_str(),
                     static_cast<long long>(r->num_rows));
        std::exit(1);
      }
    }
    return static_cast<double>(lookups) /
           std::chrono::duration<double>(Clock::now() - start).count();
  };
  f.lookup_qps = lookups_qps(true);
  f.unpruned_qps = lookups_qps(false);
  if (writing) {
    stop = true;
    writer.join();
    compactor.join();
    f.written_rps = static_cast<double>(written.load()) /
                    std::chrono::duration<double>(Clock::now() - w0).count();
  }
  return f;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main() {
  const int64_t rows = Env("STRATA_SRB_ROWS", 200000);
  const int64_t buckets = Env("STRATA_SRB_BUCKETS", 4);
  const int64_t nq = Env("STRATA_SRB_QUERIES", 1000);
  const int64_t upsert_pct = Env("STRATA_SRB_UPSERT_PCT", 20);
  const int64_t turns = Env("STRATA_SRB_TURNS", 3);
  const int64_t write_rps = Env("STRATA_SRB_WRITE_RPS", 5000);
  const int64_t stages = std::min<int64_t>(3, Env("STRATA_SRB_STAGES", 3));
  std::printf(
      "sharded read bench: %lld rows (128-d clustered, HNSW), unsharded vs %lld buckets, "
      "%lld queries, %lld turns\n",
      static_cast<long long>(rows), static_cast<long long>(buckets), static_cast<long long>(nq),
      static_cast<long long>(turns));
  const std::string tmp = std::filesystem::temp_directory_path().string();
  Layout layouts[2];
  layouts[0].name = "unsharded";
  layouts[1].name = std::to_string(buckets) + " buckets";
  for (int m = 0; m < 2; ++m) {
    layouts[m].dir = tmp + "/strata-srb-" + std::to_string(::getpid()) + "-" + std::to_string(m);
    Open(layouts[m], m == 0 ? 1 : buckets);
    const auto t0 = Clock::now();
    Write(layouts[m], 0, rows, 1);
    CompactAll(layouts[m]);
    std::printf("%s: loaded and compacted in %.1f s\n", layouts[m].name.c_str(),
                std::chrono::duration<double>(Clock::now() - t0).count());
  }
  bench::Vectors qv;
  std::vector<std::vector<float>> queries;
  for (int64_t i = 0; i < nq; ++i) queries.push_back(qv.Next());
  const char* stage_names[] = {"compacted", "+ upserts in L0", "while upserting"};
  for (int stage = 0; stage < stages; ++stage) {
    if (stage == 1) {
      const int64_t step = std::max<int64_t>(1, 100 / std::max<int64_t>(1, upsert_pct));
      for (auto& l : layouts) Write(l, 0, rows, step);
    }
    std::vector<double> sq[2], lq[2], uq[2], wq[2], overlap;
    for (int64_t t = 0; t < turns; ++t) {
      Figures f[2];
      for (int m = 0; m < 2; ++m) f[m] = Measure(layouts[m], queries, rows, stage == 2, write_rps);
      int64_t same = 0, total = 0;
      for (size_t q = 0; q < queries.size(); ++q) {
        const std::set<int64_t> a(f[0].top[q].begin(), f[0].top[q].end());
        for (int64_t id : f[1].top[q]) same += a.count(id);
        total += static_cast<int64_t>(f[0].top[q].size());
      }
      overlap.push_back(total > 0 ? static_cast<double>(same) / static_cast<double>(total) : 0);
      for (int m = 0; m < 2; ++m) {
        sq[m].push_back(f[m].search_qps);
        lq[m].push_back(f[m].lookup_qps);
        uq[m].push_back(f[m].unpruned_qps);
        wq[m].push_back(f[m].written_rps);
      }
      std::printf(
          "stage %s turn %lld: search %.0f / %.0f q/s, lookups %.0f / %.0f q/s (unpruned "
          "%.0f)",
          stage_names[stage], static_cast<long long>(t + 1), f[0].search_qps, f[1].search_qps,
          f[0].lookup_qps, f[1].lookup_qps, f[1].unpruned_qps);
      if (stage == 2)
        std::printf(", upserted %.0f / %.0f rows/s", f[0].written_rps, f[1].written_rps);
      std::printf("\n");
    }
    std::printf(
        "median, %s: search unsharded %.0f q/s, %s %.0f q/s (%.2fx); point lookups %.0f vs %.0f "
        "q/s (%.2fx; %s unpruned %.0f q/s)",
        stage_names[stage], Median(sq[0]), layouts[1].name.c_str(), Median(sq[1]),
        Median(sq[1]) / Median(sq[0]), Median(lq[0]), Median(lq[1]), Median(lq[1]) / Median(lq[0]),
        layouts[1].name.c_str(), Median(uq[1]));
    if (stage == 2) {
      // The writer changes vectors, so the two layouts' answers are not comparable here.
      std::printf("; upserted %.0f vs %.0f rows/s meanwhile\n", Median(wq[0]), Median(wq[1]));
    } else {
      std::printf("; top-10 overlap %.3f\n", Median(overlap));
    }
  }
  for (auto& l : layouts) {
    l.table.reset();
    l.catalog.reset();
    std::filesystem::remove_all(l.dir);
  }
  return 0;
}
