// MemTable maintained indexes (issue 4): a row is visible only once durable AND indexed, in
// insert order; describe() lists every index with rows_indexed; AddIndex + Backfill on a
// non-empty MemTable; index memory counts toward total_bytes.
#include <gtest/gtest.h>

#include "../io/storage_test_util.h"
#include "memtable/memtable.h"

namespace strata::memtable {
namespace {

using strata::testing::MakeBatch;

index::IndexSpec Spec(const std::string& name, const std::string& column, index::IndexKind kind) {
  index::IndexSpec s;
  s.name = name;
  s.column = column;
  s.kind = kind;
  s.uuid = name + "-uuid";
  return s;
}

std::shared_ptr<MemTable> MakeIndexed() {
  MemTableOptions o;
  o.indexes = {Spec("v", "vector", index::IndexKind::kHnsw),
               Spec("n", "name", index::IndexKind::kFts)};
  return *MemTable::Make(strata::testing::TestSchema(), o);
}

TEST(MemTableIndexes, RowsBecomeVisibleOnlyWhenDurableAndIndexed) {
  auto m = MakeIndexed();
  auto r1 = m->Insert({MakeBatch(0, 4)});
  auto r2 = m->Insert({MakeBatch(4, 3)});
  ASSERT_TRUE(r1.ok() && r2.ok());
  m->MarkDurable(r2->end, 2);  // both durable, none indexed
  EXPECT_EQ(m->visible_rows(), 0);
  m->IndexRows(*r2);  // the second indexed first: still blocked behind the first range
  EXPECT_EQ(m->visible_rows(), 0);
  m->IndexRows(*r1);
  EXPECT_EQ(m->visible_rows(), 7);
  EXPECT_EQ(m->Snapshot().last_wal_position, 2u);

  auto r3 = m->Insert({MakeBatch(7, 2)});
  m->IndexRows(*r3);  // indexed, not durable
  EXPECT_EQ(m->visible_rows(), 7);
  m->MarkDurable(r3->end, 3);
  EXPECT_EQ(m->visible_rows(), 9);

  const auto d = m->DescribeIndexes();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].kind, "HNSW");
  EXPECT_EQ(d[0].column, "vector");
  EXPECT_EQ(d[0].rows_indexed, 9);
  EXPECT_EQ(d[1].kind, "FTS");
  EXPECT_EQ(d[1].rows_indexed, 9);
  EXPECT_EQ(m->CompleteIndexes().size(), 2u);
  EXPECT_GT(m->index_bytes(), 0);
  EXPECT_EQ(m->total_bytes(), m->num_bytes() + m->index_bytes());
}

TEST(MemTableIndexes, WithoutIndexesDurableIsEnough) {
  MemTable m(strata::testing::TestSchema());
  auto r = m.Insert({MakeBatch(0, 3)});
  ASSERT_TRUE(r.ok());
  m.MarkDurable(r->end, 1);
  EXPECT_EQ(m.visible_rows(), 3);
  EXPECT_TRUE(m.DescribeIndexes().empty());
}

TEST(MemTableIndexes, AddIndexBackfillsExistingRows) {
  MemTable m(strata::testing::TestSchema());
  ASSERT_TRUE(m.InsertVisible({MakeBatch(0, 10)}, 1).ok());
  auto e = m.AddIndex(Spec("v", "vector", index::IndexKind::kHnsw));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_FALSE((*e)->complete.load());
  EXPECT_TRUE(m.CompleteIndexes().empty());  // queries scan until the backfill ends
  // A put after AddIndex indexes its own rows; the backfill covers the first 10.
  ASSERT_TRUE(m.InsertVisible({MakeBatch(10, 5)}, 2).ok());
  EXPECT_EQ((*e)->index->rows_indexed(), 5);
  ASSERT_TRUE(m.Backfill(*e).ok());
  EXPECT_TRUE((*e)->complete.load());
  EXPECT_EQ((*e)->index->rows_indexed(), 15);
  EXPECT_EQ((*e)->index->hnsw()->size(), 15);
  ASSERT_EQ(m.CompleteIndexes().size(), 1u);
  // The nearest neighbour of row 12's vector is row 12.
  const float q[4] = {12, 12.25f, 12.5f, 12.75f};
  auto r = (*e)->index->hnsw()->Search(q, 1, 64);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].label, 12);
  m.DropIndex("v");
  EXPECT_TRUE(m.DescribeIndexes().empty());
}

TEST(MemTableIndexes, BadDefinitionIsRejected) {
  MemTable m(strata::testing::TestSchema());
  auto e = m.AddIndex(Spec("x", "id", index::IndexKind::kFts));
  EXPECT_FALSE(e.ok());
  EXPECT_TRUE(m.DescribeIndexes().empty());
}

}  // namespace
}  // namespace strata::memtable
