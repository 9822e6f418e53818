// Read views under a continuous writer (DESIGN.md §6, shard/liveness.h): one writer thread
// upserts and deletes keys of a small primary-key table (id, version, vector with an HNSW
// index) while the shard seals and flushes continuously (max_memtable_rows 300); 8 reader
// threads take ShardWriter::Snapshot() in a loop and check what must hold in ANY consistent
// view:
//  (a) each key is live at most once across the sources (SourceView::IsLive per row);
//  (b) each source's live_rows equals its live rows counted by iterating, and the
//      snapshot's num_rows their sum (also CountRows, and Scan's row count);
//  (c) monotonic reads per reader: a key's version never goes backwards across the reader's
//      successive snapshots, a key that vanished (deleted) never comes back with a version
//      the reader saw before, and last_wal_position never decreases (2 more readers check,
//      with Snapshot() in a tight loop, that visible rows and last_wal_position never do);
//  (d) acknowledged writes: a key whose upsert of version v was acknowledged before the
//      snapshot is live with version >= v unless a later delete was issued; a key whose
//      delete was acknowledged before the snapshot is absent unless re-inserted later (then
//      with a newer version). Also: no version the writer has not issued yet.
// Every live row's vector must match its (id, version), and vector searches return live rows
// of the view. At the end the shard is reopened (WAL replay + SSTables) and its live set must
// equal the writer's model exactly.
// Duration: STRATA_RV_SECONDS (default 5; `make tsan` runs 30 under ThreadSanitizer).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "index/index_spec.h"
#include "query/scan.h"
#include "query/vector_search.h"
#include "shard_test_util.h"
#include "table/table.h"

namespace strata::shard {
namespace {

using testing::kShardId;
using testing::kTable;
using testing::ShardFixture;
using namespace std::chrono_literals;

constexpr int64_t kKeys = 2000;
constexpr int kReaders = 8;
constexpr int kFastReaders = 2;  // Snapshot() in a tight loop: monotonic reads only
constexpr int32_t kDim = 4;
constexpr int kIdCol = 0, kVersionCol = 1, kVectorCol = 2;

arrow::SchemaPtr Schema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("version", arrow::int64(), false),
      arrow::field("vector",
                   arrow::fixed_size_list(arrow::field("item", arrow::float32()), kDim))});
}

/// The vector of (id, version): exact in float32 for ids < 2^24 and versions mod 2^22.
std::vector<float> VectorOf(int64_t id, int64_t version) {
  return {static_cast<float>(id), static_cast<float>(version % (int64_t{1} << 22)),
          static_cast<float>(id % 7), 1.0f};
}

arrow::RecordBatchPtr Rows(const std::vector<int64_t>& ids, int64_t version) {
  std::vector<std::optional<int64_t>> idv, vv;
  std::vector<float> vec;
  for (int64_t id : ids) {
    idv.push_back(id);
    vv.push_back(version);
    for (float x : VectorOf(id, version)) vec.push_back(x);
  }
  return std::make_shared<arrow::RecordBatch>(
      Schema(), static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(idv), arrow::MakeInt64Array(vv),
                                       arrow::MakeVectorArray(vec, kDim)});
}

arrow::RecordBatchPtr Keys(const std::vector<int64_t>& ids) {
  std::vector<std::optional<int64_t>> idv(ids.begin(), ids.end());
  return std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)}),
      static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(idv)});
}

ShardWriterOptions Options() {
  ShardWriterOptions o;
  o.primary_key = {"id"};
  o.max_memtable_rows = 300;
  index::IndexSpec hnsw;
  hnsw.kind = index::IndexKind::kHnsw;
  hnsw.column = "vector";
  hnsw.name = "vector_idx";
  hnsw.requested_type = "IVF_HNSW_SQ";
  hnsw.hnsw.distance = index::DistanceType::kL2;
  hnsw.uuid = "rv-hnsw";
  o.indexes = {hnsw};
  return o;
}

int RunSeconds() {
  const char* env = std::getenv("STRATA_RV_SECONDS");
  if (env == nullptr || *env == '\0') return 5;
  return std::max(1, std::atoi(env));
}

/// Writer-published facts per key, read by the readers (all monotonic in time).
struct KeyState {
  std::atomic<int64_t> issued_upsert{0};  // newest upsert version issued (before the Put)
  std::atomic<int64_t> issued_delete{0};  // newest delete version issued (before the Delete)
  /// Last acknowledged operation: version v > 0 of an upsert, -v of a delete, 0 = none.
  std::atomic<int64_t> acked{0};
};

/// Collects failures from every thread (the first few are reported in full).
class Failures {
 public:
  void Add(const std::string& what) {
    const int n = count_.fetch_add(1) + 1;
    if (n <= 20) {
      std::lock_guard<std::mutex> lock(mu_);
      ADD_FAILURE() << what;
    }
  }
  int count() const { return count_.load(); }

 private:
  std::atomic<int> count_{0};
  std::mutex mu_;
};

/// The live (id -> version) rows of a view, checking (a), (b) and row contents.
struct LiveSet {
  std::vector<int64_t> version = std::vector<int64_t>(kKeys, 0);  // 0 = absent
  int64_t rows_checked = 0;
  int64_t live = 0;
};

LiveSet CollectLive(const ShardSnapshot& s, Failures* fail, const std::string& who) {
  LiveSet out;
  const int ts = s.storage_schema->GetFieldIndex("_tombstone");
  for (const SourceView& src : s.sources) {
    int64_t live = 0, rows = 0;
    if (src.batches.size() != src.batch_starts.size()) {
      fail->Add(who + ": " + src.name + " has " + std::to_string(src.batches.size()) +
                " batches but " + std::to_string(src.batch_starts.size()) + " batch starts");
      continue;
    }
    for (size_t k = 0; k < src.batches.size(); ++k) {
      const arrow::RecordBatch& b = *src.batches[k];
      if (src.batch_starts[k] != rows) {
        fail->Add(who + ": " + src.name + " batch " + std::to_string(k) + " starts at " +
                  std::to_string(src.batch_starts[k]) + ", expected " + std::to_string(rows));
      }
      const arrow::Array ids = b.column(kIdCol), versions = b.column(kVersionCol);
      const arrow::Array vec = b.column(kVectorCol), tomb = b.column(ts);
      const arrow::Array items = vec.child(0);
      for (int64_t i = 0; i < b.num_rows(); ++i) {
        const int64_t pos = src.batch_starts[k] + i;
        ++out.rows_checked;
        // From the marks, so that (b) checks live_rows against them (IsLive skips the marks
        // when live_rows == num_rows), and IsLive must agree.
        const bool marked_live =
            src.liveness == nullptr || src.liveness->IsLive(pos, *src.visibility);
        if (src.IsLive(pos) != marked_live) {
          fail->Add(who + ": " + src.name + " row " + std::to_string(pos) + " IsLive " +
                    (marked_live ? "false" : "true") + ", its mark says the opposite");
        }
        if (!marked_live) continue;
        ++live;
        const int64_t id = ids.Value<int64_t>(i);
        if (id < 0 || id >= kKeys) {
          fail->Add(who + ": " + src.name + " live row " + std::to_string(pos) + " has id " +
                    std::to_string(id));
          continue;
        }
        if (tomb.IsValid(i) && tomb.BoolValue(i)) {
          fail->Add(who + ": " + src.name + " row " + std::to_string(pos) + " (id " +
                    std::to_string(id) + ") is a live tombstone");
          continue;
        }
        const int64_t v = versions.Value<int64_t>(i);
        const std::vector<float> want = VectorOf(id, v);
        for (int d = 0; d < kDim; ++d) {
          const float got = items.Value<float>(vec.ListStart(i) + d);
          if (got != want[static_cast<size_t>(d)]) {
            fail->Add(who + ": " + src.name + " row " + std::to_string(pos) + " (id " +
                      std::to_string(id) + ", version " + std::to_string(v) + ") vector[" +
                      std::to_string(d) + "] = " + std::to_string(got) + ", expected " +
                      std::to_string(want[static_cast<size_t>(d)]));
            break;
          }
        }
        // (a) at most once among live rows.
        if (out.version[static_cast<size_t>(id)] != 0) {
          fail->Add(who + ": key " + std::to_string(id) + " live twice: version " +
                    std::to_string(out.version[static_cast<size_t>(id)]) + " and version " +
                    std::to_string(v) + " (" + src.name + " row " + std::to_string(pos) + ")");
        }
        out.version[static_cast<size_t>(id)] = v;
      }
      rows += b.num_rows();
    }
    if (rows != src.num_rows) {
      fail->Add(who + ": " + src.name + " batches hold " + std::to_string(rows) +
                " rows, num_rows " + std::to_string(src.num_rows));
    }
    // (b) per source.
    if (live != src.live_rows) {
      fail->Add(who + ": " + src.name + " live_rows " + std::to_string(src.live_rows) +
                ", counted " + std::to_string(live) + " (num_rows " + std::to_string(src.num_rows) +
                ")");
    }
    out.live += live;
  }
  // (b) the whole view.
  if (out.live != s.num_rows) {
    fail->Add(who + ": num_rows " + std::to_string(s.num_rows) + ", counted " +
              std::to_string(out.live) + " over " + std::to_string(s.sources.size()) + " sources");
  }
  return out;
}

table::TableSnapshot TableView(const ShardWriter& w, std::shared_ptr<const ShardSnapshot> s) {
  table::TableSnapshot out;
  out.schema = w.schema();
  out.key_columns = w.key_columns();
  out.version = s->last_wal_position;
  out.num_rows = s->num_rows;
  out.shard = std::move(s);
  return out;
}

TEST(ReadViewConcurrency, SnapshotsStayConsistentUnderSealsFlushesAndDeletes) {
  const int seconds = RunSeconds();
  const uint64_t seed = 20240611;
  ShardFixture f;
  auto opened = ShardWriter::Open(f.faults, kTable, kShardId, Schema(), Options());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<ShardWriter> w = std::move(opened).value();

  std::vector<KeyState> keys(kKeys);
  std::vector<int64_t> model(kKeys, 0);  // writer only: live version, 0 = absent
  std::atomic<bool> stop{false};
  Failures fail;
  std::atomic<int64_t> snapshots{0}, rows_checked{0}, searches{0}, search_hits{0};
  std::atomic<int64_t> fast_snapshots{0};
  int64_t puts = 0, deletes = 0, rows_written = 0;

  std::thread writer([&] {
    std::mt19937_64 rng(seed);
    int64_t next_version = 1;
    const auto end = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < end && fail.count() == 0) {
      const bool del = rng() % 8 == 0;
      const int64_t n = 1 + static_cast<int64_t>(rng() % (del ? 8 : 16));
      std::vector<int64_t> ids;
      std::vector<bool> taken(kKeys, false);
      for (int tries = 0; tries < 64 && static_cast<int64_t>(ids.size()) < n; ++tries) {
        const int64_t id = static_cast<int64_t>(rng() % kKeys);
        if (taken[static_cast<size_t>(id)]) continue;
        if (del && model[static_cast<size_t>(id)] == 0) continue;  // delete live keys
        taken[static_cast<size_t>(id)] = true;
        ids.push_back(id);
      }
      if (ids.empty()) continue;
      const int64_t version = next_version++;
      for (int64_t id : ids) {
        (del ? keys[static_cast<size_t>(id)].issued_delete
             : keys[static_cast<size_t>(id)].issued_upsert)
            .store(version);
      }
      auto r = del ? w->Delete({Keys(ids)}) : w->Put({Rows(ids, version)});
      if (!r.ok()) {
        fail.Add(std::string(del ? "Delete" : "Put") + " failed: " + r.status().ToString());
        break;
      }
      for (int64_t id : ids) {
        keys[static_cast<size_t>(id)].acked.store(del ? -version : version);
        model[static_cast<size_t>(id)] = del ? 0 : version;
      }
      (del ? deletes : puts) += 1;
      rows_written += static_cast<int64_t>(ids.size());
    }
    stop.store(true);
  });

  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      const std::string who = "reader " + std::to_string(r);
      std::mt19937_64 rng(seed + 1 + static_cast<uint64_t>(r));
      std::vector<int64_t> floor(kKeys, 0);  // (c): least version a later view may show
      std::vector<int64_t> last(kKeys, 0);   // version in this reader's previous view
      std::vector<int64_t> lo(kKeys);
      uint64_t last_wal = 0;
      for (int64_t iter = 0; !stop.load() && fail.count() == 0; ++iter) {
        for (int64_t k = 0; k < kKeys; ++k) lo[static_cast<size_t>(k)] = keys[k].acked.load();
        auto snap = w->Snapshot();
        if (!snap.ok()) {
          fail.Add(who + ": Snapshot failed: " + snap.status().ToString());
          return;
        }
        const std::shared_ptr<const ShardSnapshot> s = *snap;
        ++snapshots;
        if (s->last_wal_position < last_wal) {
          fail.Add(who + ": last_wal_position went back from " + std::to_string(last_wal) + " to " +
                   std::to_string(s->last_wal_position));
        }
        last_wal = s->last_wal_position;
        const LiveSet live = CollectLive(*s, &fail, who);
        rows_checked += live.rows_checked;
        for (int64_t k = 0; k < kKeys; ++k) {
          const size_t i = static_cast<size_t>(k);
          const int64_t v = live.version[i];
          const int64_t issued_up = keys[k].issued_upsert.load();
          const int64_t issued_del = keys[k].issued_delete.load();
          const std::string key = who + ": key " + std::to_string(k) + " ";
          if (v != 0) {
            if (v > issued_up) {
              fail.Add(key + "has version " + std::to_string(v) + " never issued (newest " +
                       std::to_string(issued_up) + ")");
            }
            if (lo[i] > 0 && v < lo[i]) {  // (d) acknowledged upsert
              fail.Add(key + "shows version " + std::to_string(v) + " after version " +
                       std::to_string(lo[i]) + " was acknowledged");
            }
            if (lo[i] < 0 && v < -lo[i]) {  // (d) acknowledged delete, not re-inserted after
              fail.Add(key + "shows version " + std::to_string(v) + " after its delete (version " +
                       std::to_string(-lo[i]) + ") was acknowledged");
            }
            if (v < floor[i]) {  // (c)
              fail.Add(key + "went back: version " + std::to_string(v) + " after this reader saw " +
                       (last[i] == 0
                            ? "it deleted (after version " + std::to_string(floor[i] - 1) + ")"
                            : "version " + std::to_string(floor[i])));
            }
            floor[i] = v;
          } else {
            if (lo[i] > 0 && issued_del < lo[i]) {  // (d)
              fail.Add(key + "absent although version " + std::to_string(lo[i]) +
                       " was acknowledged and no later delete issued (newest delete " +
                       std::to_string(issued_del) + ")");
            }
            if (last[i] != 0) floor[i] = last[i] + 1;  // deleted: a later version only
          }
          last[i] = v;
        }
        // Queries over the same view: counts and vector search hits are live rows of it.
        if (iter % 4 == static_cast<int64_t>(r % 4)) {
          const table::TableSnapshot t = TableView(*w, s);
          auto count = query::CountRows(t, std::nullopt);
          if (!count.ok() || *count != s->num_rows) {
            fail.Add(who + ": CountRows " +
                     (count.ok() ? std::to_string(*count) : count.status().ToString()) +
                     ", num_rows " + std::to_string(s->num_rows));
          }
          query::VectorSearchOptions vo;
          const int64_t qid = static_cast<int64_t>(rng() % kKeys);
          vo.query = VectorOf(qid, static_cast<int64_t>(rng() % 100000));
          vo.k = 10;
          auto hits = query::VectorSearch(t, vo);
          ++searches;
          if (!hits.ok()) {
            fail.Add(who + ": VectorSearch: " + hits.status().ToString());
          } else {
            const int64_t want = std::min<int64_t>(10, s->num_rows);
            if (hits->num_rows != want) {
              fail.Add(who + ": VectorSearch returned " + std::to_string(hits->num_rows) +
                       " rows, expected " + std::to_string(want));
            }
            for (const auto& b : hits->batches) {
              const arrow::Array ids = b->column(b->schema()->GetFieldIndex("id"));
              const arrow::Array vs = b->column(b->schema()->GetFieldIndex("version"));
              for (int64_t j = 0; j < b->num_rows(); ++j) {
                const int64_t id = ids.Value<int64_t>(j);
                ++search_hits;
                if (id < 0 || id >= kKeys ||
                    live.version[static_cast<size_t>(id)] != vs.Value<int64_t>(j)) {
                  fail.Add(who + ": VectorSearch hit id " + std::to_string(id) + " version " +
                           std::to_string(vs.Value<int64_t>(j)) + " is not live in the view");
                }
              }
            }
          }
        }
        if (iter % 16 == static_cast<int64_t>(r)) {
          const table::TableSnapshot t = TableView(*w, s);
          auto scan = query::Scan(t, query::ScanOptions{});
          if (!scan.ok() || scan->num_rows != s->num_rows) {
            fail.Add(who + ": Scan " +
                     (scan.ok() ? std::to_string(scan->num_rows) : scan.status().ToString()) +
                     " rows, num_rows " + std::to_string(s->num_rows));
          }
        }
      }
    });
  }

  // (c) at full speed: a view never shows fewer visible rows (rows only become visible, and a
  // flush publishes exactly the rows its MemTable showed) or an older WAL position than the
  // previous view this thread took.
  for (int r = 0; r < kFastReaders; ++r) {
    readers.emplace_back([&, r] {
      const std::string who = "fast reader " + std::to_string(r);
      int64_t last_visible = 0;
      uint64_t last_wal = 0;
      while (!stop.load() && fail.count() == 0) {
        auto snap = w->Snapshot();
        if (!snap.ok()) {
          fail.Add(who + ": Snapshot failed: " + snap.status().ToString());
          return;
        }
        ++fast_snapshots;
        int64_t visible = 0;
        for (const SourceView& src : (*snap)->sources) visible += src.num_rows;
        if (visible < last_visible || (*snap)->last_wal_position < last_wal) {
          fail.Add(who + ": view went back: " + std::to_string(visible) +
                   " visible rows, last_wal_position " +
                   std::to_string((*snap)->last_wal_position) + " after " +
                   std::to_string(last_visible) + " and " + std::to_string(last_wal));
        }
        last_visible = visible;
        last_wal = (*snap)->last_wal_position;
      }
    });
  }

  writer.join();
  for (auto& t : readers) t.join();
  ASSERT_EQ(fail.count(), 0) << "failures (first 20 reported above)";

  // The final view equals the model exactly.
  auto expect_model = [&](const ShardWriter& sw, const std::string& when) {
    auto snap = sw.Snapshot();
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    const LiveSet live = CollectLive(**snap, &fail, when);
    int64_t want_rows = 0, mismatches = 0;
    for (int64_t k = 0; k < kKeys; ++k) {
      want_rows += model[static_cast<size_t>(k)] != 0;
      if (live.version[static_cast<size_t>(k)] != model[static_cast<size_t>(k)] &&
          ++mismatches <= 10) {
        ADD_FAILURE() << when << ": key " << k << " has version "
                      << live.version[static_cast<size_t>(k)] << ", model "
                      << model[static_cast<size_t>(k)];
      }
    }
    EXPECT_EQ(mismatches, 0) << when;
    EXPECT_EQ((*snap)->num_rows, want_rows) << when;
    EXPECT_EQ(fail.count(), 0) << when;
  };
  expect_model(*w, "final view");
  const ShardWriterStats st = w->stats();
  const size_t sstables = w->Describe().sstables.size();
  EXPECT_GT(st.seals, 2u);
  EXPECT_GT(st.flushes, 1u);
  w.reset();
  auto reopened = ShardWriter::Open(f.faults, kTable, kShardId, Schema(), Options());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  expect_model(**reopened, "after reopen");

  std::printf("[figures] read views under a writer for %d s: %" PRId64
              " snapshots by %d readers (+ %" PRId64 " by %d fast readers), %" PRId64
              " rows checked, %" PRId64 " vector searches (%" PRId64 " hits); writer %" PRId64
              " puts + %" PRId64 " deletes (%" PRId64
              " rows); %llu seals, %llu flushes, %zu SSTables\n",
              seconds, snapshots.load(), kReaders, fast_snapshots.load(), kFastReaders,
              rows_checked.load(), searches.load(), search_hits.load(), puts, deletes, rows_written,
              static_cast<unsigned long long>(st.seals),
              static_cast<unsigned long long>(st.flushes), sstables);
  EXPECT_GT(snapshots.load(), 0);
}

}  // namespace
}  // namespace strata::shard
