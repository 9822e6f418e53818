// Table versions (index changes are new versions), tags in the manifest (durable, no version
// change), Stats(), and Catalog::RenameTable (atomic folder move, old handles fail, survives a
// restart), plus LocalObjectStore::RenamePrefix.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "format/table_manifest.h"
#include "io/local_object_store.h"
#include "table/catalog.h"
#include "table/local_catalog.h"
#include "table/lsm_write_spec.h"
#include "table/primary_key.h"
#include "table/table_name.h"

namespace strata::table {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using strata::testing::TempDir;
using strata::testing::TestSchema;

std::unique_ptr<Catalog> OpenCatalog(const std::string& root) {
  auto c = Catalog::Open(root);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

index::IndexSpec BtreeSpec(const std::string& column) {
  index::IndexSpec spec;
  spec.name = column + "_idx";
  spec.column = column;
  spec.kind = index::IndexKind::kBTree;
  spec.requested_type = "BTREE";
  return spec;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Two servers on one store: b opens the table (claiming its shard) and commits a manifest
// (a tag). Every manifest change a then makes collides with b's version: it must be a 409
// Fenced naming the version, not the store's AlreadyExists (answered as a 400 about the
// request), and must change nothing b sees.
TEST(TableVersions, ManifestChangesOfAServerAnotherServerOvertookAreFenced) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  RecoveryOptions no_checks;
  no_checks.owner_check = std::chrono::milliseconds(0);
  const arrow::SchemaPtr schema = *DeclarePrimaryKey(TestSchema(), {"id"});
  LocalCatalog a(store, {}, {}, no_checks);
  auto ta = *a.CreateTable("default", "t", schema, {MakeBatch(0, 5, schema)}, CreateMode::kCreate);
  LocalCatalog b(store, {}, {}, no_checks);
  auto tb = *b.GetTable("default", "t");
  ASSERT_TRUE(tb->CreateTag("b1", tb->version()).ok());

  const Status tag = ta->CreateTag("a1", ta->version());
  EXPECT_EQ(tag.code(), StatusCode::kFenced) << tag.ToString();
  // b claimed the shard when it opened the table: a's owner check, before the manifest commit,
  // finds it (b's newer manifest version would refuse the commit too).
  EXPECT_NE(tag.message().find("is no longer the owner"), std::string::npos) << tag.ToString();
  EXPECT_NE(tag.message().find("tag change of table 't' not applied"), std::string::npos)
      << tag.ToString();
  const Status index = ta->CreateIndex(BtreeSpec("id")).status();
  EXPECT_EQ(index.code(), StatusCode::kFenced) << index.ToString();
  auto spec = ParseLsmWriteSpec(R"({"sharding":{"mode":"unsharded"}})");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const Status lsm = ta->SetLsmWriteSpec(*spec);
  EXPECT_EQ(lsm.code(), StatusCode::kFenced) << lsm.ToString();
  const Status overwrite = ta->Overwrite(schema, {MakeBatch(100, 3, schema)}).status();
  EXPECT_EQ(overwrite.code(), StatusCode::kFenced) << overwrite.ToString();

  // b's table is as b left it: its rows, its one tag, no index, no spec.
  auto tags = tb->ListTags();
  ASSERT_TRUE(tags.ok());
  EXPECT_EQ(tags->size(), 1u);
  EXPECT_EQ(tags->count("b1"), 1u);
  EXPECT_TRUE(tb->ListIndexes().empty());
  EXPECT_FALSE(tb->GetLsmWriteSpec().has_value());
  EXPECT_EQ(Ids(strata::testing::Live(tb->Snapshot())), Range(0, 5));
  LocalCatalog c(store, {}, {}, no_checks);
  auto tc = *c.GetTable("default", "t");
  EXPECT_EQ(Ids(strata::testing::Live(tc->Snapshot())), Range(0, 5));
  EXPECT_EQ(tc->ListTags()->size(), 1u);
}

TEST(TableVersions, IndexChangesMakeNewVersionsThatSurviveRestart) {
  TempDir dir;
  uint64_t after_drop = 0;
  {
    auto c = OpenCatalog(dir.path());
    auto t = *c->CreateTable("default", "t", TestSchema(), {MakeBatch(0, 3)}, CreateMode::kCreate);
    const uint64_t v0 = t->version();
    const int64_t before = NowMicros();
    ASSERT_TRUE(t->CreateIndex(BtreeSpec("id")).ok());
    const uint64_t v1 = t->version();
    EXPECT_EQ(v1, v0 + 1);
    const VersionInfo info = t->CurrentVersion();
    EXPECT_EQ(info.version, v1);
    EXPECT_GE(info.timestamp_micros, before);
    EXPECT_LE(info.timestamp_micros, NowMicros());
    auto v2 = t->Insert({MakeBatch(3, 2)});
    ASSERT_TRUE(v2.ok());
    EXPECT_EQ(*v2, v1 + 1);
    ASSERT_TRUE(t->DropIndex("id_idx").ok());
    after_drop = t->version();
    EXPECT_EQ(after_drop, *v2 + 1);
    EXPECT_EQ(t->Snapshot().version, after_drop);
  }
  auto c = OpenCatalog(dir.path());
  auto t = *c->GetTable("default", "t");
  EXPECT_EQ(t->version(), after_drop);
  EXPECT_EQ(t->Snapshot().num_rows, 5);
}

TEST(TableTags, CreateUpdateDeleteAreDurableAndKeepTheVersion) {
  TempDir dir;
  uint64_t v1 = 0, v2 = 0;
  {
    auto c = OpenCatalog(dir.path());
    auto t = *c->CreateTable("default", "t", TestSchema(), {MakeBatch(0, 3)}, CreateMode::kCreate);
    v1 = t->version();
    v2 = *t->Insert({MakeBatch(3, 1)});
    ASSERT_TRUE(t->CreateTag("first", v1).ok());
    ASSERT_TRUE(t->CreateTag("second", v2).ok());
    EXPECT_EQ(t->version(), v2);  // tags do not make versions

    Status dup = t->CreateTag("first", v2);
    EXPECT_TRUE(dup.IsAlreadyExists()) << dup.ToString();
    EXPECT_NE(dup.message().find("tag 'first' already exists"), std::string::npos);
    Status future = t->CreateTag("future", v2 + 1);
    EXPECT_TRUE(future.IsInvalid());
    EXPECT_NE(future.message().find("current version " + std::to_string(v2)), std::string::npos)
        << future.ToString();
    EXPECT_TRUE(t->CreateTag("zero", 0).IsInvalid());
    EXPECT_TRUE(t->CreateTag("", 1).IsInvalid());
    EXPECT_TRUE(t->CreateTag(std::string(257, 'a'), 1).IsInvalid());
    EXPECT_TRUE(t->CreateTag(std::string("a\x01"), 1).IsInvalid());
    EXPECT_TRUE(t->CreateTag(std::string(256, 'a'), 1).ok());
    ASSERT_TRUE(t->DeleteTag(std::string(256, 'a')).ok());

    Status missing = t->UpdateTag("nope", v1);
    EXPECT_TRUE(missing.IsInvalid());
    EXPECT_NE(missing.message().find("tag 'nope' does not exist"), std::string::npos);
    EXPECT_TRUE(t->UpdateTag("second", v2 + 5).IsInvalid());
    ASSERT_TRUE(t->UpdateTag("second", v1).ok());
    EXPECT_TRUE(t->DeleteTag("nope").IsInvalid());

    auto tags = *t->ListTags();
    ASSERT_EQ(tags.size(), 2u);
    EXPECT_EQ(tags["first"].version, v1);
    EXPECT_EQ(tags["second"].version, v1);
    EXPECT_GT(tags["first"].manifest_size, 0);
    // The update's manifest holds the "first" tag, so it is larger than create's.
    EXPECT_GT(tags["second"].manifest_size, tags["first"].manifest_size);
    EXPECT_EQ(t->version(), v2);
  }
  auto c = OpenCatalog(dir.path());
  auto t = *c->GetTable("default", "t");
  auto tags = *t->ListTags();
  ASSERT_EQ(tags.size(), 2u);
  EXPECT_EQ(tags["second"].version, v1);
  ASSERT_TRUE(t->DeleteTag("first").ok());
  EXPECT_EQ(t->ListTags()->size(), 1u);
  EXPECT_EQ(t->version(), v2);
}

TEST(TableStats, CountsSourcesRowsAndIndexes) {
  TempDir dir;
  auto c = OpenCatalog(dir.path());
  auto t = *c->CreateTable("default", "t", TestSchema(), {MakeBatch(0, 10)}, CreateMode::kCreate);
  ASSERT_TRUE(t->Flush(shard::Clock::now() + std::chrono::seconds(30)).ok());
  ASSERT_TRUE(t->Insert({MakeBatch(10, 4)}).ok());
  ASSERT_TRUE(t->CreateIndex(BtreeSpec("id")).ok());
  auto s = t->Stats();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->num_rows, 14);
  EXPECT_EQ(s->num_indices, 1);
  // One SSTable of 10 rows and the active MemTable of 4.
  EXPECT_EQ(s->fragment_rows, (std::vector<int64_t>{4, 10}));
  EXPECT_GT(s->total_bytes, 0);
}

TEST(ObjectStoreRename, MovesAFolderAtomicallyAndRefusesATakenTarget) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(store->Put("db/a/x", "1").ok());
  ASSERT_TRUE(store->Put("db/a/sub/y", "22").ok());
  ASSERT_TRUE(store->Put("db/c/z", "3").ok());
  ASSERT_TRUE(store->RenamePrefix("db/a", "db/b").ok());
  EXPECT_TRUE(store->List("db/a/")->empty());
  auto moved = *store->List("db/b/");
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0].key, "db/b/sub/y");
  EXPECT_EQ(*store->Get("db/b/x"), "1");
  EXPECT_TRUE(store->RenamePrefix("db/b", "db/c").IsAlreadyExists());
  EXPECT_EQ(*store->Get("db/b/x"), "1");  // nothing moved
  EXPECT_TRUE(store->RenamePrefix("db/nope", "db/d").IsNotFound());
  EXPECT_TRUE(store->RenamePrefix("db/b", "db/b/inner").IsInvalid());
  EXPECT_TRUE(store->RenamePrefix("../x", "db/e").IsInvalid());
  // A new parent folder is created.
  ASSERT_TRUE(store->RenamePrefix("db/b", "other/b").ok());
  EXPECT_EQ(*store->Get("other/b/sub/y"), "22");
}

TEST(CatalogRename, MovesTheTableClosesOldHandlesAndSurvivesRestart) {
  TempDir dir;
  uint64_t version = 0;
  {
    auto c = OpenCatalog(dir.path());
    auto a = *c->CreateTable("default", "a", TestSchema(), {MakeBatch(0, 5)}, CreateMode::kCreate);
    ASSERT_TRUE(a->CreateTag("keep", a->version()).ok());
    ASSERT_TRUE(a->Insert({MakeBatch(5, 2)}).ok());  // in the WAL only
    version = a->version();
    ASSERT_TRUE(c->CreateTable("default", "taken", TestSchema(), {}, CreateMode::kCreate).ok());

    Status taken = c->RenameTable("default", "a", "taken");
    EXPECT_TRUE(taken.IsAlreadyExists());
    EXPECT_NE(taken.message().find("table 'taken' already exists"), std::string::npos);
    EXPECT_TRUE(c->RenameTable("default", "a", "a").IsAlreadyExists());
    EXPECT_TRUE(c->RenameTable("default", "missing", "z").IsNotFound());
    EXPECT_TRUE(c->RenameTable("default", "a", "").IsInvalid());
    EXPECT_TRUE(c->RenameTable("default", "a", std::string("b\n")).IsInvalid());
    EXPECT_EQ(a->Snapshot().num_rows, 7);  // failed renames changed nothing

    ASSERT_TRUE(c->RenameTable("default", "a", "ns$b").ok());
    EXPECT_EQ(*c->ListTables("default"), (std::vector<std::string>{"ns$b", "taken"}));
    EXPECT_TRUE(c->GetTable("default", "a").status().IsNotFound());
    Status old_handle = a->Insert({MakeBatch(100, 1)}).status();
    EXPECT_TRUE(old_handle.IsNotFound()) << old_handle.ToString();
    EXPECT_NE(old_handle.message().find("renamed"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir.path()) / "default" / "a"));

    auto b = *c->GetTable("default", "ns$b");
    EXPECT_EQ(b->name(), "ns$b");
    EXPECT_EQ(Ids(strata::testing::Live(b->Snapshot())), Range(0, 7));
    EXPECT_EQ(b->version(), version);  // a rename is not a new table version
    EXPECT_EQ(b->ListTags()->at("keep").version, version - 1);
    ASSERT_TRUE(b->Insert({MakeBatch(7, 1)}).ok());
    version = b->version();
    // The old name can be reused.
    ASSERT_TRUE(c->CreateTable("default", "a", TestSchema(), {}, CreateMode::kCreate).ok());
  }
  auto c = OpenCatalog(dir.path());
  EXPECT_EQ(*c->ListTables("default"), (std::vector<std::string>{"a", "ns$b", "taken"}));
  auto b = *c->GetTable("default", "ns$b");
  EXPECT_EQ(Ids(strata::testing::Live(b->Snapshot())), Range(0, 8));
  EXPECT_EQ(b->version(), version);
  EXPECT_EQ((*c->GetTable("default", "a"))->Snapshot().num_rows, 0);
  // The committed manifest carries the new name.
  auto store = *io::LocalObjectStore::Open(dir.path());
  auto m = *format::LoadLatestTableManifest(*store, LocalCatalog::TablePrefix("default", "ns$b"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->table_name(), "ns$b");
}

TEST(CatalogRename, LongHashedNamesAndACrashBeforeTheManifestCommit) {
  TempDir dir;
  const std::string long_from(230, 'f');
  const std::string long_to(240, 't');
  ASSERT_EQ(EncodeNameForDir(long_to)[0], '~');
  {
    auto c = OpenCatalog(dir.path());
    ASSERT_TRUE(
        c->CreateTable("default", long_from, TestSchema(), {MakeBatch(0, 2)}, CreateMode::kCreate)
            .ok());
    ASSERT_TRUE(c->RenameTable("default", long_from, long_to).ok());
    ASSERT_TRUE(
        c->CreateTable("default", "x", TestSchema(), {MakeBatch(0, 3)}, CreateMode::kCreate).ok());
  }
  // Simulate a crash after the folder move of x -> y but before the manifest commit: the
  // plain folder name is authoritative.
  auto store = *io::LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(store
                  ->RenamePrefix(LocalCatalog::TablePrefix("default", "x"),
                                 LocalCatalog::TablePrefix("default", "y"))
                  .ok());
  auto c = OpenCatalog(dir.path());
  auto names = *c->ListTables("default");
  EXPECT_EQ(names, (std::vector<std::string>{long_to, "y"}));
  auto y = c->GetTable("default", "y");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)->Snapshot().num_rows, 3);
  EXPECT_EQ((*c->GetTable("default", long_to))->Snapshot().num_rows, 2);
  EXPECT_TRUE(c->GetTable("default", long_from).status().IsNotFound());
}

}  // namespace
}  // namespace strata::table
