// MemTable primary keys, newest-wins lookups at snapshots, tombstones, the visibility
// watermark, IndexStore::describe and the hidden storage columns.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "format/key_encoding.h"
#include "memtable/hidden_columns.h"
#include "memtable/index_store.h"
#include "memtable/memtable.h"
#include "memtable/primary_key_index.h"

namespace strata::memtable {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using strata::testing::TestSchema;

// Key of id `id` as the MemTable encodes it (id column, int64).
std::string IdKey(int64_t id) {
  std::string k;
  format::AppendSignedComponent(id, 8, &k);
  return k;
}

// A storage batch (id, name, vector, _tombstone) with ids `ids`, names "v{version}".
arrow::RecordBatchPtr Rows(const StorageLayout& layout, const std::vector<int64_t>& ids,
                           int version, bool tombstone = false) {
  auto user = MakeBatch(0, static_cast<int64_t>(ids.size()));
  std::vector<std::optional<int64_t>> id_values(ids.begin(), ids.end());
  std::string name = "v";
  name += std::to_string(version);
  std::vector<std::optional<std::string>> names(ids.size(), name);
  auto cols = user->columns();
  cols[0] = arrow::MakeInt64Array(id_values);
  cols[1] = arrow::MakeUtf8Array(names);
  arrow::RecordBatch b(layout.user_schema, user->num_rows(), cols);
  return *AddHiddenColumns(layout, b, 0, tombstone);
}

std::string NameAt(const MemTable& m, int64_t position) {
  auto [k, i] = m.Locate(position);
  auto snap = m.Snapshot();
  return std::string(snap.batches.at(static_cast<size_t>(k))->column(1).GetView(i));
}

class MemTableKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    layout_ = *MakeStorageLayout(TestSchema(), {"id"});
    mt_ = *MemTable::Make(layout_.storage_schema, {.generation = 7,
                                                   .key_columns = layout_.key_columns,
                                                   .tombstone_column = layout_.tombstone_column,
                                                   .indexes = {}});
  }
  StorageLayout layout_;
  std::shared_ptr<MemTable> mt_;
};

TEST_F(MemTableKeys, NewestRowWinsAndOlderOnesAreSuperseded) {
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {1, 2, 3}, 1)}, 1).ok());
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {2, 4}, 2)}, 2).ok());
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {2}, 3)}, 3).ok());
  EXPECT_EQ(mt_->Lookup(IdKey(2)), std::optional<int64_t>(5));
  EXPECT_EQ(NameAt(*mt_, 5), "v3");
  EXPECT_EQ(mt_->Lookup(IdKey(1)), std::optional<int64_t>(0));
  EXPECT_EQ(mt_->Lookup(IdKey(9)), std::nullopt);
  // At an older snapshot (watermark 5: rows 0..4) the newest 2 is row 3.
  EXPECT_EQ(mt_->Lookup(IdKey(2), 5), std::optional<int64_t>(3));
  EXPECT_EQ(mt_->Lookup(IdKey(2), 3), std::optional<int64_t>(1));
  EXPECT_EQ(mt_->Lookup(IdKey(4), 4), std::nullopt);
  EXPECT_EQ(mt_->SupersededRows(6), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(mt_->SupersededRows(4), (std::vector<int64_t>{1}));
  auto keys = mt_->RowKeys(0, 100);
  ASSERT_EQ(keys.size(), 6u);
  EXPECT_EQ(keys[3], IdKey(2));
  EXPECT_EQ(keys[4], IdKey(4));
  EXPECT_EQ(mt_->generation(), 7u);
  EXPECT_GT(mt_->index_bytes(), 0);
  EXPECT_EQ(mt_->total_bytes(), mt_->num_bytes() + mt_->index_bytes());
}

TEST_F(MemTableKeys, TombstonesAreRowsThatDeleteTheirKey) {
  auto live = Rows(layout_, {7, 8}, 1);
  ASSERT_TRUE(mt_->InsertVisible({live}, 1).ok());
  auto tomb = *MakeTombstones(layout_, *live, {0});
  EXPECT_EQ(tomb->num_rows(), 1);
  EXPECT_EQ(Ids({tomb}), (std::vector<int64_t>{7}));
  EXPECT_TRUE(tomb->column(1).IsNull(0));  // non-key columns are null
  EXPECT_TRUE(tomb->column(2).IsNull(0));
  ASSERT_TRUE(mt_->InsertVisible({tomb}, 2).ok());
  EXPECT_EQ(mt_->Lookup(IdKey(7)), std::optional<int64_t>(2));
  EXPECT_TRUE(mt_->IsTombstone(2));
  EXPECT_FALSE(mt_->IsTombstone(0));
  EXPECT_FALSE(mt_->IsTombstone(1));
  EXPECT_FALSE(mt_->IsTombstone(99));
  EXPECT_EQ(mt_->SupersededRows(3), (std::vector<int64_t>{0}));
}

TEST_F(MemTableKeys, RowsStayInvisibleUntilMarkedDurable) {
  auto r1 = *mt_->Insert({Rows(layout_, {1, 2}, 1)});
  EXPECT_EQ(r1.begin, 0);
  EXPECT_EQ(r1.end, 2);
  EXPECT_EQ(mt_->num_rows(), 2);
  EXPECT_EQ(mt_->visible_rows(), 0);
  EXPECT_EQ(mt_->Snapshot().num_rows, 0);
  EXPECT_TRUE(mt_->Snapshot().batches.empty());
  EXPECT_EQ(mt_->Lookup(IdKey(1)), std::nullopt);
  auto r2 = *mt_->Insert({Rows(layout_, {1}, 2)});
  mt_->MarkDurable(r1.end, 10);
  EXPECT_EQ(mt_->Snapshot().num_rows, 2);
  EXPECT_EQ(mt_->Snapshot().last_wal_position, 10u);
  EXPECT_EQ(mt_->Lookup(IdKey(1)), std::optional<int64_t>(0));  // row 2 not durable yet
  EXPECT_TRUE(mt_->SupersededRows(100).empty());
  mt_->MarkDurable(r2.end, 11);
  EXPECT_EQ(mt_->Lookup(IdKey(1)), std::optional<int64_t>(2));
  mt_->MarkDurable(1, 9);  // never moves back
  EXPECT_EQ(mt_->visible_rows(), 3);
  EXPECT_EQ(mt_->last_wal_position(), 11u);
}

TEST_F(MemTableKeys, TruncateInvisibleUndoesFailedRows) {
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {1, 2}, 1)}, 1).ok());
  const int64_t bytes = mt_->num_bytes();
  ASSERT_TRUE(mt_->Insert({Rows(layout_, {2, 3}, 2)}).ok());
  ASSERT_TRUE(mt_->Insert({Rows(layout_, {3}, 3)}).ok());
  EXPECT_EQ(mt_->TruncateInvisible(), 3);
  EXPECT_EQ(mt_->num_rows(), 2);
  EXPECT_EQ(mt_->num_bytes(), bytes);
  EXPECT_EQ(mt_->num_batches(), 1);
  EXPECT_EQ(mt_->RowKeys(0, 10).size(), 2u);
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {3}, 4)}, 2).ok());
  EXPECT_EQ(mt_->Lookup(IdKey(3)), std::optional<int64_t>(2));
  EXPECT_EQ(mt_->Lookup(IdKey(2)), std::optional<int64_t>(1));
  EXPECT_TRUE(mt_->SupersededRows(10).empty());
}

TEST_F(MemTableKeys, FrozenMemTableRejectsInserts) {
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {1}, 1)}, 1).ok());
  EXPECT_FALSE(mt_->frozen());
  mt_->Freeze();
  EXPECT_TRUE(mt_->frozen());
  EXPECT_TRUE(mt_->Snapshot().frozen);
  auto r = mt_->Insert({Rows(layout_, {2}, 1)});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mt_->num_rows(), 1);
}

TEST_F(MemTableKeys, DescribeListsThePrimaryKeyIndex) {
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {1, 2, 2}, 1)}, 1).ok());
  auto d = mt_->DescribeIndexes();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "PK");
  EXPECT_EQ(d[0].column, "id");
  EXPECT_EQ(d[0].name, "pk");
  EXPECT_EQ(d[0].rows_indexed, 3);

  IndexStore composite({"a", "b"});
  ASSERT_EQ(composite.describe().size(), 1u);
  EXPECT_EQ(composite.describe()[0].column, "a,b");
  EXPECT_TRUE(IndexStore({}).describe().empty());
  MemTable plain(TestSchema());
  EXPECT_TRUE(plain.DescribeIndexes().empty());
  EXPECT_EQ(plain.Lookup(IdKey(1)), std::nullopt);
}

TEST_F(MemTableKeys, AgeStartsAtTheFirstRow) {
  EXPECT_EQ(mt_->age().count(), 0);
  ASSERT_TRUE(mt_->InsertVisible({Rows(layout_, {1}, 1)}, 1).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(mt_->age(), std::chrono::milliseconds(20));
  EXPECT_LT(mt_->age(), std::chrono::seconds(10));
}

TEST(StorageLayout, TablesWithoutPrimaryKeyGetHiddenRowIds) {
  auto layout = *MakeStorageLayout(TestSchema(), {});
  ASSERT_EQ(layout.storage_schema->num_fields(), 5);
  EXPECT_EQ(layout.rowid_column, 3);
  EXPECT_EQ(layout.tombstone_column, 4);
  EXPECT_EQ(layout.key_columns, (std::vector<int>{3}));
  EXPECT_EQ(layout.storage_schema->field(3)->name, kRowIdColumn);
  EXPECT_EQ(layout.storage_schema->field(3)->type->id(), arrow::TypeId::kUInt64);
  EXPECT_TRUE(layout.storage_schema->field(0)->nullable);  // non-key columns nullable
  auto b = *AddHiddenColumns(layout, *MakeBatch(0, 3), 41);
  arrow::Array rowids = b->column(3);
  EXPECT_EQ(rowids.Value<uint64_t>(0), 41u);
  EXPECT_EQ(rowids.Value<uint64_t>(2), 43u);
  EXPECT_FALSE(b->column(4).BoolValue(1));
  auto mt = *MemTable::Make(layout.storage_schema, {.key_columns = layout.key_columns,
                                                    .tombstone_column = layout.tombstone_column,
                                                    .indexes = {}});
  ASSERT_TRUE(mt->InsertVisible({b}, 1).ok());
  std::string k;
  format::AppendUnsignedComponent(42, 8, &k);
  EXPECT_EQ(mt->Lookup(k), std::optional<int64_t>(1));
  EXPECT_EQ(mt->DescribeIndexes()[0].column, kRowIdColumn);
}

TEST(StorageLayout, BadPrimaryKeysAreRejected) {
  EXPECT_EQ(MakeStorageLayout(TestSchema(), {"nope"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeStorageLayout(TestSchema(), {"id", "id"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeStorageLayout(TestSchema(), {"vector"}).status().code(), StatusCode::kNotSupported);
  auto reserved = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("_rowid", arrow::int64())});
  EXPECT_EQ(MakeStorageLayout(reserved, {}).status().code(), StatusCode::kInvalidArgument);
  auto layout = *MakeStorageLayout(TestSchema(), {"name", "id"});
  EXPECT_EQ(layout.key_columns, (std::vector<int>{1, 0}));
  EXPECT_EQ(layout.rowid_column, -1);
  EXPECT_FALSE(layout.storage_schema->field(0)->nullable);  // key column keeps non-null
}

TEST(PrimaryKeyIndex, ChainsAndTruncation) {
  PrimaryKeyIndex pk;
  EXPECT_EQ(pk.Insert("a", 0), -1);
  EXPECT_EQ(pk.Insert("b", 1), -1);
  EXPECT_EQ(pk.Insert("a", 2), 0);
  EXPECT_EQ(pk.Insert("a", 3), 2);
  EXPECT_EQ(pk.distinct_keys(), 2);
  EXPECT_EQ(pk.previous(3), 2);
  EXPECT_EQ(pk.Lookup("a", 4), std::optional<int64_t>(3));
  EXPECT_EQ(pk.Lookup("a", 3), std::optional<int64_t>(2));
  EXPECT_EQ(pk.Lookup("a", 1), std::optional<int64_t>(0));
  EXPECT_EQ(pk.Lookup("a", 0), std::nullopt);
  pk.TruncateTo(2);
  EXPECT_EQ(pk.rows(), 2);
  EXPECT_EQ(pk.Lookup("a", 100), std::optional<int64_t>(0));
  pk.TruncateTo(0);
  EXPECT_EQ(pk.distinct_keys(), 0);
  EXPECT_EQ(pk.Lookup("b", 100), std::nullopt);
}

// Readers at snapshots never see a half-indexed or undurable row while a writer inserts.
TEST_F(MemTableKeys, ConcurrentSnapshotLookupsSeeOnlyVisibleRows) {
  constexpr int kRows = 2000;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto snap = mt_->Snapshot();
      // Key k is written at rows 2k (version 1) and 2k+1 (version 2).
      const int64_t w = snap.num_rows;
      if (w == 0) continue;
      const int64_t last_id = (w - 1) / 2;
      auto p = mt_->Lookup(IdKey(last_id), w);
      const int64_t want = w - 1;  // rows 2k (v1) and 2k+1 (v2): the newest is always w-1
      if (!p || *p != want) bad.fetch_add(1);
      if (mt_->Lookup(IdKey(last_id + 1), w).has_value()) bad.fetch_add(1);
    }
  });
  for (int k = 0; k < kRows / 2; ++k) {
    for (int v = 1; v <= 2; ++v) {
      auto r = *mt_->Insert({Rows(layout_, {k}, v)});
      mt_->MarkDurable(r.end, static_cast<uint64_t>(r.end));
    }
  }
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(mt_->SupersededRows(kRows).size(), static_cast<size_t>(kRows / 2));
}

}  // namespace
}  // namespace strata::memtable
