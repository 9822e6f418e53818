// Maintained indexes through the tiers of one shard (issue 4): definitions at open and added
// later (backfill, SSTable builds), describe(), visibility only once indexed, index files
// persisted at flush and loaded at reopen, index progress falling to 0, tombstone-only
// generations writing no HNSW.
#include <gtest/gtest.h>

#include <thread>

#include "arrow/builder.h"
#include "format/key_encoding.h"
#include "index/column_index.h"
#include "shard/shard_writer.h"
#include "shard_test_util.h"
#include "sstable/index_files.h"

namespace strata::shard {
namespace {

using strata::testing::MakeBatch;
using namespace strata::shard::testing;
using namespace std::chrono_literals;

index::IndexSpec Spec(const std::string& name, const std::string& column, index::IndexKind kind,
                      const std::string& uuid) {
  index::IndexSpec s;
  s.name = name;
  s.column = column;
  s.kind = kind;
  s.requested_type = index::IndexKindName(kind);
  s.uuid = uuid;
  return s;
}

std::vector<index::IndexSpec> AllSpecs() {
  return {Spec("vector_idx", "vector", index::IndexKind::kHnsw, "u1"),
          Spec("id_idx", "id", index::IndexKind::kBTree, "u2"),
          Spec("name_idx", "name", index::IndexKind::kFts, "u3")};
}

/// Waits until every definition's num_unindexed_rows is 0 (or 10 s pass).
bool WaitIndexed(const ShardWriter& w) {
  for (int i = 0; i < 1000; ++i) {
    bool done = true;
    for (const auto& p : w.IndexProgressAll()) done &= p.num_unindexed_rows == 0;
    if (done) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

int64_t RowsIndexed(const ShardDescription& d, const std::string& kind) {
  for (const auto& i : d.indexes) {
    if (i.kind == kind) return i.rows_indexed;
  }
  return -1;
}

TEST(ShardIndexes, DescribeListsConfiguredIndexesWithRowsIndexed) {
  ShardFixture f;
  ShardWriterOptions o;
  o.indexes = AllSpecs();
  auto w = f.OpenOrDie(o);
  ASSERT_TRUE(w->Put({MakeBatch(0, 30)}).ok());
  ASSERT_TRUE(w->Put({MakeBatch(30, 12)}).ok());
  const ShardDescription d = w->Describe();
  // The primary-key index (the hidden `_rowid` key: no declared key) and the three.
  ASSERT_EQ(d.indexes.size(), 4u);
  EXPECT_EQ(d.indexes[0].kind, "PK");
  EXPECT_EQ(d.indexes[0].column, "_rowid");
  EXPECT_EQ(RowsIndexed(d, "PK"), 42);
  EXPECT_EQ(RowsIndexed(d, "HNSW"), 42);
  EXPECT_EQ(RowsIndexed(d, "BTREE"), 42);
  EXPECT_EQ(RowsIndexed(d, "FTS"), 42);
  EXPECT_EQ(d.indexes[1].name, "vector_idx");
  EXPECT_EQ(d.indexes[1].column, "vector");
  // Every source of a snapshot carries the three complete indexes.
  auto snap = *w->Snapshot();
  ASSERT_EQ(snap->sources.size(), 1u);
  EXPECT_EQ(snap->sources[0].indexes.size(), 3u);
  EXPECT_EQ(snap->sources[0].live_rows, 42);
  EXPECT_NE(snap->sources[0].FindIndex(2, index::IndexKind::kHnsw), nullptr);
  EXPECT_EQ(snap->sources[0].FindIndex(2, index::IndexKind::kHnsw)->hnsw()->size(), 42);
}

TEST(ShardIndexes, NoDefinitionsMeansNoIndexInDescribeOrSources) {
  ShardFixture f;
  auto w = f.OpenOrDie();
  ASSERT_TRUE(w->Put({MakeBatch(0, 5)}).ok());
  // Only the primary-key index: a vector search here is exact (no HNSW entry).
  const auto d = w->Describe();
  ASSERT_EQ(d.indexes.size(), 1u);
  EXPECT_EQ(d.indexes[0].kind, "PK");
  auto snap = *w->Snapshot();
  EXPECT_TRUE(snap->sources.back().indexes.empty());
  EXPECT_TRUE(w->IndexProgressAll().empty());
}

TEST(ShardIndexes, FlushWritesIndexFilesAndReopenLoadsThem) {
  ShardFixture f;
  ShardWriterOptions o;
  o.indexes = AllSpecs();
  {
    auto w = f.OpenOrDie(o);
    ASSERT_TRUE(w->Put({MakeBatch(0, 20)}).ok());
    auto sealed = w->force_seal_active();
    ASSERT_TRUE(sealed.ok() && sealed->has_value());
    ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10000ms)).ok());
    ASSERT_TRUE(w->Put({MakeBatch(20, 5)}).ok());
    const auto d = w->Describe();
    ASSERT_EQ(d.sstables.size(), 1u);
    auto listed = f.local->List(f.shard_prefix() + "/");
    ASSERT_TRUE(listed.ok());
    int idx_files = 0;
    for (const auto& obj : *listed) idx_files += obj.key.find("/indices/") != std::string::npos;
    EXPECT_EQ(idx_files, 3);
    for (const auto& p : w->IndexProgressAll()) {
      EXPECT_EQ(p.num_indexed_rows, 25) << p.spec.name;
      EXPECT_EQ(p.num_unindexed_rows, 0) << p.spec.name;
    }
  }
  auto w = f.OpenOrDie(o);
  // Replayed rows answer at once; their MemTable indexes are backfilled in the background.
  EXPECT_EQ((*w->Snapshot())->num_rows, 25);
  ASSERT_TRUE(WaitIndexed(*w));
  auto snap = *w->Snapshot();
  ASSERT_EQ(snap->sources.size(), 2u);  // the SSTable and the replayed active MemTable
  EXPECT_FALSE(snap->sources[0].memtable);
  ASSERT_EQ(snap->sources[0].indexes.size(), 3u);
  const auto* h = snap->sources[0].FindIndex(2, index::IndexKind::kHnsw);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->hnsw()->size(), 20);
  const auto* b = snap->sources[0].FindIndex(0, index::IndexKind::kBTree);
  ASSERT_NE(b, nullptr);
  std::string key;
  format::AppendSignedComponent(7, 8, &key);
  EXPECT_EQ(b->btree()->Equal(key), std::vector<int64_t>{7});
  EXPECT_EQ(snap->sources[1].indexes.size(), 3u);
  EXPECT_EQ(RowsIndexed(w->Describe(), "HNSW"), 5);
}

TEST(ShardIndexes, DefinitionAddedLaterIsBackfilledAndBuiltForSSTables) {
  ShardFixture f;
  auto w = f.OpenOrDie();
  ASSERT_TRUE(w->Put({MakeBatch(0, 15)}).ok());
  auto sealed = w->force_seal_active();
  ASSERT_TRUE(sealed.ok() && sealed->has_value());
  ASSERT_TRUE(w->wait_for_generation((*sealed)->generation, In(10000ms)).ok());
  ASSERT_TRUE(w->Put({MakeBatch(15, 10)}).ok());

  ASSERT_TRUE(w->SetIndexes(AllSpecs()).ok());
  ASSERT_TRUE(WaitIndexed(*w));
  for (const auto& p : w->IndexProgressAll()) EXPECT_EQ(p.num_indexed_rows, 25) << p.spec.name;
  auto snap = *w->Snapshot();
  ASSERT_EQ(snap->sources.size(), 2u);
  for (const auto& s : snap->sources) EXPECT_EQ(s.indexes.size(), 3u) << s.name;
  EXPECT_EQ(snap->sources[0].FindIndex(2, index::IndexKind::kHnsw)->hnsw()->size(), 15);
  EXPECT_EQ(snap->sources[1].FindIndex(2, index::IndexKind::kHnsw)->hnsw()->size(), 10);
  // New rows go into the backfilled index too.
  ASSERT_TRUE(w->Put({MakeBatch(25, 3)}).ok());
  EXPECT_EQ(RowsIndexed(w->Describe(), "FTS"), 13);

  // Dropping a definition removes it everywhere.
  auto specs = AllSpecs();
  specs.erase(specs.begin());
  ASSERT_TRUE(w->SetIndexes(specs).ok());
  EXPECT_EQ(w->IndexProgressAll().size(), 2u);
  EXPECT_EQ(RowsIndexed(w->Describe(), "HNSW"), -1);
  auto after = *w->Snapshot();
  for (const auto& s : after->sources) {
    EXPECT_EQ(s.FindIndex(2, index::IndexKind::kHnsw), nullptr) << s.name;
  }
}

TEST(ShardIndexes, InvalidDefinitionChangesNothing) {
  ShardFixture f;
  auto w = f.OpenOrDie();
  auto bad = Spec("x", "name", index::IndexKind::kHnsw, "u9");  // utf8 column
  Status st = w->SetIndexes({bad});
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_NE(st.message().find("name"), std::string::npos) << st.ToString();
  EXPECT_TRUE(w->IndexProgressAll().empty());
}

TEST(ShardIndexes, TombstoneOnlyGenerationWritesNoVectorIndex) {
  ShardFixture f;
  ShardWriterOptions o;
  o.indexes = AllSpecs();
  auto w = f.OpenOrDie(o);
  ASSERT_TRUE(w->Put({MakeBatch(0, 3)}).ok());
  auto s1 = w->force_seal_active();
  ASSERT_TRUE(s1.ok() && s1->has_value());
  ASSERT_TRUE(w->wait_for_generation((*s1)->generation, In(10000ms)).ok());
  // Delete by hidden _rowid: rows 0..2 have _rowid 0..2.
  arrow::ArrayBuilder ids(arrow::uint64());
  ASSERT_TRUE(ids.AppendUInt(0).ok());
  ASSERT_TRUE(ids.AppendUInt(1).ok());
  auto keys = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(
          std::vector<arrow::FieldPtr>{arrow::field("_rowid", arrow::uint64(), false)}),
      2, std::vector<arrow::ArrayDataPtr>{*ids.Finish()});
  ASSERT_TRUE(w->Delete({keys}).ok());
  auto s2 = w->force_seal_active();
  ASSERT_TRUE(s2.ok() && s2->has_value());
  ASSERT_TRUE(w->wait_for_generation((*s2)->generation, In(10000ms)).ok());
  const auto d = w->Describe();
  ASSERT_EQ(d.sstables.size(), 2u);
  auto listed = f.local->List(d.sstables[1].path + "/indices/");
  ASSERT_TRUE(listed.ok());
  for (const auto& obj : *listed) {
    EXPECT_EQ(obj.key.find("vector_idx"), std::string::npos) << obj.key;
  }
  // Searching that generation's (empty) HNSW returns nothing, without error.
  auto snap = *w->Snapshot();
  const auto* h = snap->sources[1].FindIndex(2, index::IndexKind::kHnsw);
  ASSERT_NE(h, nullptr);
  const float q[4] = {0, 0, 0, 0};
  auto r = h->hnsw()->Search(q, 10, 64);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->empty());
  EXPECT_EQ(snap->num_rows, 1);
  for (const auto& p : w->IndexProgressAll()) EXPECT_EQ(p.num_unindexed_rows, 0) << p.spec.name;
}

TEST(ShardIndexes, LongMultibyteIndexNameFlushesAndReloads) {
  // 85 x "€" = 255 bytes, 765 once percent-escaped: the file name must still fit (a bug report:
  // such a name poisoned the writer at its first flush).
  std::string name;
  for (int i = 0; i < 85; ++i) name += "\xE2\x82\xAC";
  ShardFixture f;
  ShardWriterOptions o;
  o.indexes = {Spec(name, "name", index::IndexKind::kFts, "u-long")};
  {
    auto w = f.OpenOrDie(o);
    ASSERT_TRUE(w->Put({MakeBatch(0, 4)}).ok());
    auto sealed = w->force_seal_active();
    ASSERT_TRUE(sealed.ok() && sealed->has_value());
    Status st = w->wait_for_generation((*sealed)->generation, In(10000ms));
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_TRUE(w->Put({MakeBatch(4, 1)}).ok());  // still writable
  }
  auto w = f.OpenOrDie(o);
  auto snap = *w->Snapshot();
  ASSERT_EQ(snap->sources.size(), 2u);
  ASSERT_EQ(snap->sources[0].indexes.size(), 1u);
  EXPECT_EQ(snap->sources[0].indexes[0]->spec().name, name);
  EXPECT_EQ(snap->sources[0].indexes[0]->fts()->num_docs(), 4);
}

TEST(ShardIndexes, EmptyMemTableIndexMemoryNeverStallsPuts) {
  // A bug report: an index whose preallocation alone exceeded max_unflushed_bytes blocked every
  // put with nothing to flush. Limits below one empty index's memory must still let puts in.
  ShardFixture f;
  ShardWriterOptions o;
  auto spec = Spec("vector_idx", "vector", index::IndexKind::kHnsw, "u-big");
  spec.hnsw.m = 128;
  spec.hnsw.ef_construction = 4096;
  o.indexes = {spec};
  o.max_unflushed_bytes = 1000;
  o.max_memtable_bytes = 1000;
  o.write_stall_timeout = 2000ms;
  auto w = f.OpenOrDie(o);
  for (int i = 0; i < 3; ++i) {
    auto put = w->Put({MakeBatch(i * 2, 2)});
    ASSERT_TRUE(put.ok()) << put.status().ToString();
  }
  EXPECT_EQ(SortedIds(*w).size(), 6u);
}

}  // namespace
}  // namespace strata::shard
