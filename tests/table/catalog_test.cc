#include "table/catalog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "index/index_spec.h"
#include "io/local_object_store.h"
#include "table/local_catalog.h"

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

int CountFiles(const std::string& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  int n = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

// Dropping a table waits for its background threads (an index build that cannot be
// interrupted: IVF training takes minutes at scale). Other tables must not wait with it: the
// drop runs outside the catalog lock, and meanwhile the dropped name is gone for readers and
// cannot be created again.
TEST(Catalog, DropWaitingForAnIndexBuildDoesNotBlockOtherTables) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  std::mutex mu;
  std::condition_variable cv;
  bool held = false, release = false;
  base::CompactionOptions co;
  co.background = false;
  co.index_build_hook = [&](const std::string&) {
    std::unique_lock<std::mutex> lock(mu);
    held = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  };
  LocalCatalog c(store, {}, co, {});
  const auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(60); };
  auto a = *c.CreateTable("default", "a", TestSchema(), {MakeBatch(0, 300)}, CreateMode::kCreate);
  ASSERT_TRUE(
      c.CreateTable("default", "b", TestSchema(), {MakeBatch(0, 7)}, CreateMode::kCreate).ok());
  ASSERT_TRUE(a->Flush(deadline()).ok());
  ASSERT_TRUE(a->Compact(deadline()).ok());  // a base without an index
  index::IndexSpec spec;
  spec.kind = index::IndexKind::kHnsw;
  spec.column = "vector";
  spec.name = "vector_idx";
  ASSERT_TRUE(a->CreateIndex(spec).ok());  // the builder indexes the base, then holds
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return held; }));
  }
  a.reset();
  std::atomic<bool> dropped{false};
  auto drop = std::async(std::launch::async, [&] {
    Status st = c.DropTable("default", "a");
    dropped = true;
    return st;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the drop waits for the build
  // Another table answers while the drop waits.
  auto b = c.GetTable("default", "b");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->Snapshot().num_rows, 7);
  EXPECT_TRUE((*b)->Insert({MakeBatch(7, 3)}).ok());
  EXPECT_FALSE(dropped.load());
  // The name being dropped: gone for readers, not creatable yet.
  EXPECT_TRUE(c.GetTable("default", "a").status().IsNotFound());
  Status again = c.CreateTable("default", "a", TestSchema(), {}, CreateMode::kCreate).status();
  EXPECT_TRUE(again.IsAlreadyExists()) << again.ToString();
  EXPECT_NE(again.message().find("being dropped"), std::string::npos) << again.ToString();
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  ASSERT_TRUE(drop.get().ok());
  EXPECT_TRUE(c.GetTable("default", "a").status().IsNotFound());
  auto recreated =
      c.CreateTable("default", "a", TestSchema(), {MakeBatch(0, 2)}, CreateMode::kCreate);
  ASSERT_TRUE(recreated.ok()) << recreated.status().ToString();
  EXPECT_EQ((*recreated)->Snapshot().num_rows, 2);
  EXPECT_EQ((*b)->Snapshot().num_rows, 10);
}

TEST(Catalog, CreateModes) {
  TempDir dir;
  auto c = OpenCatalog(dir.path());
  auto t = c->CreateTable("default", "t", TestSchema(), {MakeBatch(0, 5)}, CreateMode::kCreate);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->Snapshot().num_rows, 5);

  auto again = c->CreateTable("default", "t", TestSchema(), {}, CreateMode::kCreate);
  EXPECT_TRUE(again.status().IsAlreadyExists());
  EXPECT_NE(again.status().message().find("already exists"), std::string::npos);

  auto ok = c->CreateTable("default", "t", TestSchema(), {MakeBatch(100, 1)}, CreateMode::kExistOk);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(Ids(strata::testing::Live((*ok)->Snapshot())), Range(0, 5));  // unchanged

  auto other_schema = std::make_shared<arrow::Schema>(
      std::vector<arrow::FieldPtr>{arrow::field("k", arrow::int64(), false)});
  auto k_batch = std::make_shared<arrow::RecordBatch>(
      other_schema, 2, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({41, 42})});
  uint64_t before = (*t)->version();
  auto over = c->CreateTable("default", "t", other_schema, {k_batch}, CreateMode::kOverwrite);
  ASSERT_TRUE(over.ok()) << over.status().ToString();
  auto snap = (*over)->Snapshot();
  EXPECT_TRUE(snap.schema->Equals(*other_schema));
  EXPECT_EQ(Ids(strata::testing::Live(snap), "k"), (std::vector<int64_t>{41, 42}));
  EXPECT_GT(snap.version, before);
  // The handle taken before the overwrite sees the new state too (same table object).
  EXPECT_EQ((*t)->Snapshot().num_rows, 2);
  // Bad initial rows: nothing is created.
  auto bad = c->CreateTable("default", "u", other_schema, {MakeBatch(0, 1)}, CreateMode::kCreate);
  EXPECT_TRUE(bad.status().IsInvalid()) << bad.status().ToString();
  EXPECT_TRUE(c->GetTable("default", "u").status().IsNotFound());
  EXPECT_EQ(*c->ListTables("default"), std::vector<std::string>{"t"});
}

TEST(Catalog, VersionsGrowAndSurviveRestart) {
  TempDir dir;
  std::vector<uint64_t> versions;
  {
    auto c = OpenCatalog(dir.path());
    auto t = *c->CreateTable("default", "v", TestSchema(), {}, CreateMode::kCreate);
    versions.push_back(t->version());
    for (int i = 0; i < 3; ++i) versions.push_back(*t->Insert({MakeBatch(i * 2, 2)}));
    EXPECT_EQ(t->version(), versions.back());
    auto over = t->Overwrite(TestSchema(), {MakeBatch(50, 1)});
    ASSERT_TRUE(over.ok());
    versions.push_back(*over);
    versions.push_back(*t->Insert({MakeBatch(51, 1)}));
  }
  for (size_t i = 1; i < versions.size(); ++i) EXPECT_GT(versions[i], versions[i - 1]);
  auto c = OpenCatalog(dir.path());
  auto t = *c->GetTable("default", "v");
  EXPECT_EQ(t->version(), versions.back());
  EXPECT_EQ(Ids(strata::testing::Live(t->Snapshot())), (std::vector<int64_t>{50, 51}));
  EXPECT_GT(*t->Insert({MakeBatch(52, 1)}), versions.back());
  // Only the current shard's files remain after the overwrite.
  auto* local = dynamic_cast<LocalCatalog*>(c.get());
  ASSERT_NE(local, nullptr);
  auto shards = std::filesystem::path(dir.path()) / "default" / "v" / "_mem_wal";
  int shard_dirs = 0;
  for (auto& e : std::filesystem::directory_iterator(shards)) shard_dirs += e.is_directory();
  EXPECT_EQ(shard_dirs, 1);
}

TEST(Catalog, ListSortedOddNamesDropAndRestart) {
  TempDir dir;
  const std::vector<std::string> names = {"zeta",      "a/b", "my table", "tä",
                                          "ns1$ns2$t", "...", "Alpha",    std::string(256, 'n')};
  {
    auto c = OpenCatalog(dir.path());
    int64_t id = 0;
    for (const auto& n : names) {
      auto t = c->CreateTable("default", n, TestSchema(), {MakeBatch(id, 3)}, CreateMode::kCreate);
      ASSERT_TRUE(t.ok()) << n << ": " << t.status().ToString();
      ASSERT_TRUE((*t)->Insert({MakeBatch(id + 3, 2)}).ok());
      id += 10;
    }
    ASSERT_TRUE(c->CreateTable("other db", "x", TestSchema(), {}, CreateMode::kCreate).ok());
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  auto c = OpenCatalog(dir.path());
  EXPECT_EQ(*c->ListTables("default"), sorted);
  EXPECT_EQ(*c->ListTables("other db"), std::vector<std::string>{"x"});
  EXPECT_TRUE(c->ListTables("nope")->empty());
  int64_t id = 0;
  for (const auto& n : names) {
    auto t = c->GetTable("default", n);
    ASSERT_TRUE(t.ok()) << n << ": " << t.status().ToString();
    EXPECT_EQ((*t)->name(), n);
    EXPECT_EQ(Ids(strata::testing::Live((*t)->Snapshot())), Range(id, 5)) << n;
    id += 10;
  }
  // Drop removes the table and its files; other tables stay.
  auto held = *c->GetTable("default", "a/b");
  ASSERT_TRUE(c->DropTable("default", "a/b").ok());
  EXPECT_TRUE(c->DropTable("default", "a/b").IsNotFound());
  EXPECT_TRUE(c->GetTable("default", "a/b").status().IsNotFound());
  EXPECT_TRUE(held->Insert({MakeBatch(1000, 1)}).status().IsNotFound());
  EXPECT_EQ(CountFiles(dir.path() + "/default/a%2Fb"), 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/default/a%2Fb"));
  sorted.erase(std::find(sorted.begin(), sorted.end(), "a/b"));
  EXPECT_EQ(*c->ListTables("default"), sorted);
  // Re-create under the dropped name starts empty.
  auto re = c->CreateTable("default", "a/b", TestSchema(), {}, CreateMode::kCreate);
  ASSERT_TRUE(re.ok());
  EXPECT_EQ((*re)->Snapshot().num_rows, 0);
}

TEST(Catalog, BadNamesAndMissingTables) {
  TempDir dir;
  auto c = OpenCatalog(dir.path());
  EXPECT_TRUE(
      c->CreateTable("default", "", TestSchema(), {}, CreateMode::kCreate).status().IsInvalid());
  EXPECT_TRUE(
      c->CreateTable("default", std::string(257, 'x'), TestSchema(), {}, CreateMode::kCreate)
          .status()
          .IsInvalid());
  EXPECT_TRUE(c->CreateTable("default", "a\tb", TestSchema(), {}, CreateMode::kCreate)
                  .status()
                  .IsInvalid());
  auto missing = c->GetTable("default", "ghost");
  EXPECT_TRUE(missing.status().IsNotFound());
  EXPECT_EQ(missing.status().message(), "table 'ghost' not found");
  EXPECT_TRUE(c->DropTable("default", "ghost").IsNotFound());
  EXPECT_TRUE(c->ListTables("default")->empty());
}

TEST(Catalog, InsertValidationChangesNothing) {
  TempDir dir;
  auto c = OpenCatalog(dir.path());
  auto t = *c->CreateTable("default", "t", TestSchema(), {MakeBatch(0, 2)}, CreateMode::kCreate);
  uint64_t v = t->version();
  auto vec3 = arrow::MakeVectorArray({1, 2, 3}, 3);
  auto bad = std::make_shared<arrow::RecordBatch>(
      std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
          arrow::field("id", arrow::int64(), false), arrow::field("vector", vec3->type)}),
      1, std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array({9}), vec3});
  auto r = t->Insert({bad});
  ASSERT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("vector dimension 3"), std::string::npos);
  EXPECT_EQ(t->version(), v);
  EXPECT_EQ(Ids(strata::testing::Live(t->Snapshot())), Range(0, 2));
}

// "." and "..": no URL can reach them (clients resolve /v1/table/../ to a parent path), so
// neither create nor rename may produce them; nothing is created.
TEST(Catalog, DotTableNamesAreRefusedAtCreateAndRename) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  LocalCatalog c(store, {}, {}, {});
  Status created =
      c.CreateTable("default", "..", TestSchema(), {MakeBatch(0, 3)}, CreateMode::kCreate).status();
  ASSERT_TRUE(created.IsInvalid()) << created.ToString();
  EXPECT_NE(created.message().find("'..' is not allowed"), std::string::npos);
  ASSERT_TRUE(
      c.CreateTable("default", "t", TestSchema(), {MakeBatch(0, 3)}, CreateMode::kCreate).ok());
  Status renamed = c.RenameTable("default", "t", ".");
  ASSERT_TRUE(renamed.IsInvalid()) << renamed.ToString();
  EXPECT_EQ(*c.ListTables("default"), std::vector<std::string>{"t"});
}

}  // namespace
}  // namespace strata::table
