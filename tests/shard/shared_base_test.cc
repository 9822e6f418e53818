// A base shared by several shards (shard/liveness.h "Lanes", shard/base_source.h): each shard
// writer marks the base rows of its own keys in its own lane, concurrently, and one view of
// the table reads the base once under a Visibility with one lane per shard.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "../live_rows_util.h"
#include "shard/base_source.h"
#include "shard_test_util.h"
#include "sstable/sstable_writer.h"

namespace strata::shard {
namespace {

using namespace std::chrono_literals;
using testing::kTable;
using testing::KvRows;
using testing::KvSchema;
using testing::ShardFixture;

std::shared_ptr<Visibility> Vis(std::vector<Visibility::MemGen> memtables) {
  auto v = std::make_shared<Visibility>();
  v->memtables = std::move(memtables);
  return v;
}

TEST(LivenessLanes, MarksAreJudgedByTheirLanesView) {
  Liveness live;
  live.EnsureRows(8);
  // Lane 0 marks row 0 with (gen 3, pos 5); lane 1 marks row 1 with (gen 3, pos 5) too; lane 2
  // marks row 2 with (gen 1, pos 0); row 3 is kDead; rows 4..7 are unmarked.
  ASSERT_TRUE(live.Supersede(0, RowAddress(3, 5), 0));
  ASSERT_TRUE(live.Supersede(1, RowAddress(3, 5), 1));
  ASSERT_TRUE(live.Supersede(2, RowAddress(1, 0), 2));
  ASSERT_TRUE(live.Supersede(3, Liveness::kDead, 1));
  EXPECT_FALSE(live.Supersede(1, RowAddress(4, 0), 1));  // written once
  EXPECT_FALSE(live.Supersede(4, RowAddress(4, 0), Liveness::kMaxLanes));
  EXPECT_EQ(live.Lane(0), 0);
  EXPECT_EQ(live.Lane(1), 1);
  EXPECT_EQ(live.Lane(2), 2);
  EXPECT_EQ(live.marks(), 4);
  // Lane 0 sees gen 3 up to position 6, lane 1 only up to 5 (pos 5 invisible), lane 2 sees all.
  Visibility table;
  table.lanes = {Vis({{3, 6}}), Vis({{3, 5}}), Vis({})};
  EXPECT_FALSE(live.IsLive(0, table));
  EXPECT_TRUE(live.IsLive(1, table));
  EXPECT_FALSE(live.IsLive(2, table));
  EXPECT_FALSE(live.IsLive(3, table));
  EXPECT_TRUE(live.IsLive(4, table));
  EXPECT_EQ(live.DeadIn(table), 3);
  // A view with fewer lanes sees nothing of the missing ones.
  Visibility two;
  two.lanes = {Vis({{3, 6}}), Vis({{3, 6}})};
  EXPECT_TRUE(live.IsLive(2, two));
  EXPECT_EQ(live.DeadIn(two), 3);  // rows 0, 1, 3
  // A view without lanes judges every mark by itself (a one-shard source).
  EXPECT_EQ(live.DeadIn(*Vis({})), 4);
  EXPECT_EQ(live.DeadIn(*Vis({{3, 0}})), 2);  // row 2 (gen 1 < 3) and row 3
}

// The rows of the base: keys [0, n) with value -1, as a fragment.
std::shared_ptr<BaseSource> MakeBase(ShardFixture& f, const arrow::SchemaPtr& storage, int64_t n) {
  arrow::RecordBatchBuilder b(storage);
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_TRUE(b.column(0)->AppendInt(k).ok());
    EXPECT_TRUE(b.column(1)->AppendInt(-1).ok());
    EXPECT_TRUE(b.column(2)->AppendBool(false).ok());
  }
  sstable::SSTableInput in;
  in.generation = 1;
  in.schema = storage;
  in.batches = {*b.Finish()};
  in.key_columns = {0};
  const std::string prefix = std::string(kTable) + "/base";
  auto entry = sstable::WriteSSTable(*f.local, prefix, in);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  auto reader = sstable::SSTableReader::Open(*f.local, prefix, *entry);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  auto base = std::make_shared<BaseSource>(storage);
  base->AppendFragment(*reader);
  return base;
}

// The table's view: the base once under both shards' visibilities, then each shard's sources.
// Returns key -> value of the live rows; fails on a key seen twice.
std::map<int64_t, int64_t> TableRows(const BaseSource& base,
                                     const std::vector<const ShardWriter*>& shards,
                                     int64_t* base_live = nullptr) {
  const BaseSource::State st = base.CurrentState();
  std::vector<std::shared_ptr<const ShardSnapshot>> snaps;
  auto table_vis = std::make_shared<Visibility>();
  for (const ShardWriter* w : shards) {
    snaps.push_back(*w->Snapshot());
    table_vis->lanes.push_back(snaps.back()->visibility);
  }
  std::vector<SourceView> sources;
  if (auto v = base.View(st, table_vis, {}, {0})) sources.push_back(std::move(*v));
  for (const auto& s : snaps) {
    for (const auto& src : s->sources) {
      EXPECT_NE(src.name, "base") << "a shard of a shared base put the base in its own view";
      sources.push_back(src);
    }
  }
  std::map<int64_t, int64_t> out;
  for (size_t i = 0; i < sources.size(); ++i) {
    const SourceView& src = sources[i];
    int64_t live = 0;
    for (size_t k = 0; k < src.batches.size(); ++k) {
      const arrow::RecordBatchPtr& b = src.batches[k];
      const arrow::Array id = b->column(0), v = b->column(1), tomb = b->column(2);
      for (int64_t r = 0; r < b->num_rows(); ++r) {
        if (!src.IsLive(src.batch_starts[k] + r)) continue;
        ++live;
        if (tomb.IsValid(r) && tomb.BoolValue(r)) continue;
        const int64_t key = id.Value<int64_t>(r);
        EXPECT_EQ(out.count(key), 0u) << "key " << key << " live twice (source " << src.name << ")";
        out[key] = v.Value<int64_t>(r);
      }
    }
    EXPECT_EQ(live, src.live_rows) << src.name << ": live_rows disagrees with IsLive";
    if (i == 0 && base_live != nullptr) *base_live = live;
  }
  return out;
}

arrow::SchemaPtr KvStorageSchema(ShardFixture& f) {
  ShardWriterOptions o;
  o.primary_key = {"id"};
  auto probe = ShardWriter::Open(f.faults, kTable, "probe", KvSchema(), o);
  EXPECT_TRUE(probe.ok()) << probe.status().ToString();
  return (*probe)->storage_schema();
}

// Carried marks (and folded ones) are dead only in views that have their lane, as IsLive says.
TEST(SharedBase, CarriedMarksCountOnlyInViewsOfTheirLane) {
  ShardFixture f;
  auto base = MakeBase(f, KvStorageSchema(f), 10);
  base->CarryMarks({{0, RowAddress(2, 0)}, {1, RowAddress(3, 0)}}, 1);
  base->CarryMarks({{2, RowAddress(2, 0)}}, 0);
  auto both = std::make_shared<Visibility>();
  both->lanes = {Vis({}), Vis({})};
  auto only0 = std::make_shared<Visibility>();
  only0->lanes = {Vis({})};
  auto check = [&](const std::shared_ptr<Visibility>& view, int64_t want_dead) {
    const auto st = base->CurrentState();
    EXPECT_EQ(base->DeadIn(st, *view), want_dead);
    auto v = base->View(st, view, {}, {0});
    ASSERT_TRUE(v.has_value());
    int64_t live = 0;
    for (int64_t p = 0; p < v->num_rows; ++p) live += v->IsLive(p) ? 1 : 0;
    EXPECT_EQ(live, v->live_rows);
    EXPECT_EQ(v->live_rows, 10 - want_dead);
  };
  check(both, 3);
  check(only0, 1);
  base->FoldCarried(2, 1);  // lane 1's generation-2 mark is always dead now, in lane 1's views
  check(both, 3);
  check(only0, 1);
}

TEST(SharedBase, TwoShardWritersMarkOneBaseConcurrentlyAndOneViewReadsIt) {
  ShardFixture f;
  constexpr int64_t kKeys = 400;
  auto base = MakeBase(f, KvStorageSchema(f), kKeys);
  auto open = [&](const std::string& id, int lane) {
    ShardWriterOptions o;
    o.primary_key = {"id"};
    o.base = base;
    o.base_lane = lane;
    o.base_in_view = false;
    o.max_memtable_rows = 50;  // seals and flushes run while the others mark
    return std::move(ShardWriter::Open(f.faults, kTable, id, KvSchema(), o)).value();
  };
  {
    ShardWriterOptions bad;
    bad.primary_key = {"id"};
    bad.base = base;
    bad.base_lane = 1;  // a lane above 0 with the base in the shard's own view
    EXPECT_TRUE(ShardWriter::Open(f.faults, kTable, "bad", KvSchema(), bad).status().IsInvalid());
    bad.base_in_view = false;
    bad.base_lane = Liveness::kMaxLanes;
    EXPECT_TRUE(ShardWriter::Open(f.faults, kTable, "bad", KvSchema(), bad).status().IsInvalid());
  }
  auto even = open("even", 0);
  auto odd = open("odd", 1);
  int64_t base_live = 0;
  EXPECT_EQ(TableRows(*base, {even.get(), odd.get()}, &base_live).size(),
            static_cast<size_t>(kKeys));
  EXPECT_EQ(base_live, kKeys);

  // Each shard upserts its own keys (even / odd) round after round, value = round; a reader
  // checks every view has each key once, at a round no older than in its previous view.
  constexpr int kRounds = 6;
  auto writer = [&](ShardWriter* w, int64_t parity) {
    for (int64_t round = 0; round < kRounds; ++round) {
      for (int64_t k = parity; k < kKeys; k += 20) {
        std::vector<int64_t> ids;
        std::vector<std::optional<int64_t>> vs;
        for (int64_t j = k; j < std::min(kKeys, k + 20); j += 2)
          ids.push_back(j), vs.push_back(round);
        ASSERT_TRUE(w->Put({KvRows(ids, vs)}).ok());
      }
    }
  };
  std::atomic<bool> done{false};
  std::thread reader([&] {
    std::map<int64_t, int64_t> last;
    while (!done.load()) {
      auto rows = TableRows(*base, {even.get(), odd.get()});
      ASSERT_EQ(rows.size(), static_cast<size_t>(kKeys));
      for (const auto& [k, v] : rows) {
        ASSERT_GE(v, last.count(k) ? last[k] : -1) << "key " << k << " went back";
      }
      last = std::move(rows);
    }
  });
  std::thread a(writer, even.get(), 0), b(writer, odd.get(), 1);
  a.join();
  b.join();
  done = true;
  reader.join();
  auto rows = TableRows(*base, {even.get(), odd.get()}, &base_live);
  ASSERT_EQ(rows.size(), static_cast<size_t>(kKeys));
  for (const auto& [k, v] : rows) EXPECT_EQ(v, kRounds - 1) << "key " << k;
  EXPECT_EQ(base_live, 0);  // every base row superseded, in both lanes
  // Each shard's own view (without the base) holds only its keys' versions.
  for (const auto& [w, parity] : {std::pair{even.get(), 0}, std::pair{odd.get(), 1}}) {
    for (const auto& batch : strata::testing::Live(**w->Snapshot())) {
      const arrow::Array id = batch->column(0);
      for (int64_t r = 0; r < batch->num_rows(); ++r) EXPECT_EQ(id.Value<int64_t>(r) % 2, parity);
    }
  }
  // A view that knew only the even shard's lane sees the odd keys' base rows as live.
  auto only_even = std::make_shared<Visibility>();
  only_even->lanes.push_back((*even->Snapshot())->visibility);
  auto v = base->View(base->CurrentState(), only_even, {}, {0});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->live_rows, kKeys / 2);
}

}  // namespace
}  // namespace strata::shard
