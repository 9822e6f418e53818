// ShardWriter::Apply: storage rows (replacements keeping their key, tombstones) and new user
// rows in one WAL entry; newer rows win within the entry; nothing written on bad input.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "memtable/hidden_columns.h"
#include "shard_test_util.h"

namespace strata::shard {
namespace {

using namespace std::chrono_literals;
using strata::testing::MakeBatch;
using testing::In;
using testing::kShardId;
using testing::kTable;
using testing::KvMap;
using testing::KvRows;
using testing::KvSchema;
using testing::KvStorage;
using testing::OpenKv;
using testing::ShardFixture;

TEST(ShardApply, PrimaryKeyReplacementsTombstonesAndInsertsInOneEntry) {
  ShardFixture f;
  auto w = std::move(OpenKv(f)).value();
  ASSERT_TRUE(w->Put({KvRows({1, 2, 3}, {10, 20, 30})}).ok());
  const uint64_t entries_before = w->stats().wal_entries;
  // Storage: replace 1 -> 11, tombstone 2, replace 3 -> 31 then 3 -> 32 (later wins).
  // User rows: new 4, and 1 -> 12, which must win over the storage row of key 1.
  auto storage =
      KvStorage(*w, {1, 2, 3, 3}, {11, std::nullopt, 31, 32}, {false, true, false, false});
  auto r = w->Apply({storage}, {KvRows({4, 1}, {40, 12})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_rows, 6);
  EXPECT_EQ(w->stats().wal_entries, entries_before + 1);
  const std::map<int64_t, std::optional<int64_t>> want{{1, 12}, {3, 32}, {4, 40}};
  EXPECT_EQ(KvMap(*w), want);
  // Through a flush (duplicates within one generation become SSTable deletions) and a reopen.
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10s)).ok());
  EXPECT_EQ(KvMap(*w), want);
  w.reset();
  auto reopened = std::move(OpenKv(f)).value();
  EXPECT_EQ(KvMap(*reopened), want);
}

TEST(ShardApply, ReplayedEntryKeepsNewestWithoutFlush) {
  ShardFixture f;
  auto w = std::move(OpenKv(f)).value();
  ASSERT_TRUE(w->Put({KvRows({5}, {50})}).ok());
  ASSERT_TRUE(w->Apply({KvStorage(*w, {5}, {51}, {false})}, {KvRows({5}, {52})}).ok());
  w.reset();
  auto reopened = std::move(OpenKv(f)).value();
  const std::map<int64_t, std::optional<int64_t>> want{{5, 52}};
  EXPECT_EQ(KvMap(*reopened), want);
}

TEST(ShardApply, RowIdTableKeepsKeysAndAssignsFreshOnes) {
  ShardFixture f;
  auto w = f.OpenOrDie();
  ASSERT_TRUE(w->Put({MakeBatch(0, 3)}).ok());  // _rowid 0, 1, 2
  auto snap = *w->Snapshot();
  ASSERT_EQ(strata::testing::Live(*snap, true).size(), 1u);
  const auto stored_batches = strata::testing::Live(*snap, true);
  const arrow::RecordBatch& stored = *stored_batches[0];
  auto layout = *memtable::MakeStorageLayout(w->schema(), {});
  // Replacement of row 0 (name changed, _rowid kept) and a tombstone of row 1.
  arrow::RecordBatchBuilder rb(w->storage_schema());
  ASSERT_TRUE(rb.column(0)->AppendInt(100).ok());
  ASSERT_TRUE(rb.column(1)->AppendBytes("renamed").ok());
  ASSERT_TRUE(rb.column(2)->AppendNull().ok());
  ASSERT_TRUE(rb.column(3)->AppendUInt(arrow::Array(stored.column(3)).Value<uint64_t>(0)).ok());
  ASSERT_TRUE(rb.column(4)->AppendBool(false).ok());
  auto replacement = *rb.Finish();
  auto tomb = memtable::MakeTombstones(layout, stored, {1});
  ASSERT_TRUE(tomb.ok()) << tomb.status().ToString();
  auto r = w->Apply({replacement, *tomb}, {MakeBatch(7, 2)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto after = *w->Snapshot();
  std::map<uint64_t, std::pair<int64_t, std::string>> rows;  // _rowid -> (id, name)
  for (const auto& b : strata::testing::Live(*after, true)) {
    arrow::Array id = b->column(0), name = b->column(1), rowid = b->column(3);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      rows[rowid.Value<uint64_t>(i)] = {id.Value<int64_t>(i), std::string(name.GetView(i))};
    }
  }
  const std::map<uint64_t, std::pair<int64_t, std::string>> want{
      {0, {100, "renamed"}}, {2, {2, "row2"}}, {3, {7, "row7"}}, {4, {8, "row8"}}};
  EXPECT_EQ(rows, want);
  // The next plain put continues after the rows Apply assigned.
  ASSERT_TRUE(w->Put({MakeBatch(9, 1)}).ok());
  auto last = *w->Snapshot();
  uint64_t max_rowid = 0;
  for (const auto& b : strata::testing::Live(*last, true)) {
    arrow::Array rowid = b->column(3);
    for (int64_t i = 0; i < b->num_rows(); ++i)
      max_rowid = std::max(max_rowid, rowid.Value<uint64_t>(i));
  }
  EXPECT_EQ(max_rowid, 5u);
}

TEST(ShardApply, InvalidInputWritesNothing) {
  ShardFixture f;
  auto w = std::move(OpenKv(f)).value();
  ASSERT_TRUE(w->Put({KvRows({1, 2}, {10, 20})}).ok());
  const uint64_t pos = w->last_wal_position();
  const auto before = KvMap(*w);
  auto good_storage = KvStorage(*w, {1}, {99}, {false});

  // User rows under the wrong schema: the valid storage rows are not written either.
  auto bad_user = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
          arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::utf8(), true)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({3}), arrow::MakeUtf8Array({"x"})});
  auto r1 = w->Apply({good_storage}, {bad_user});
  ASSERT_FALSE(r1.ok());
  EXPECT_TRUE(r1.status().IsInvalid());
  EXPECT_NE(r1.status().message().find("new rows"), std::string::npos) << r1.status().ToString();
  EXPECT_NE(r1.status().message().find("'v'"), std::string::npos) << r1.status().ToString();

  // Storage rows under the user schema (no _tombstone column is fine: it is nullable) but a
  // storage row missing the key column is not.
  auto no_key = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("v", arrow::int64(), true)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({5})});
  auto r2 = w->Apply({no_key}, {KvRows({3}, {30})});
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("storage rows"), std::string::npos)
      << r2.status().ToString();
  EXPECT_NE(r2.status().message().find("'id'"), std::string::npos) << r2.status().ToString();

  EXPECT_EQ(w->last_wal_position(), pos);
  EXPECT_EQ(KvMap(*w), before);

  // A _rowid this shard never assigned is refused (it would collide with a later insert).
  ShardFixture g;
  auto rw = g.OpenOrDie();
  ASSERT_TRUE(rw->Put({MakeBatch(0, 2)}).ok());
  arrow::RecordBatchBuilder rb(rw->storage_schema());
  ASSERT_TRUE(rb.column(0)->AppendInt(1).ok());
  ASSERT_TRUE(rb.column(1)->AppendNull().ok());
  ASSERT_TRUE(rb.column(2)->AppendNull().ok());
  ASSERT_TRUE(rb.column(3)->AppendUInt(2).ok());
  ASSERT_TRUE(rb.column(4)->AppendBool(false).ok());
  const uint64_t rpos = rw->last_wal_position();
  auto r3 = rw->Apply({*rb.Finish()}, {});
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.status().message().find("_rowid 2 was never assigned"), std::string::npos)
      << r3.status().ToString();
  EXPECT_EQ(rw->last_wal_position(), rpos);
  EXPECT_EQ(testing::SortedIds(*rw), (std::vector<int64_t>{0, 1}));
}

TEST(ShardApply, EmptyApplyWritesNothing) {
  ShardFixture f;
  auto w = std::move(OpenKv(f)).value();
  auto r = w->Apply({}, {KvRows({}, {})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_rows, 0);
  EXPECT_EQ(r->wal_position, 0u);
  EXPECT_EQ(w->last_wal_position(), 0u);
}

}  // namespace
}  // namespace strata::shard
