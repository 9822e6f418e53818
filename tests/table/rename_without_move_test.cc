// Catalog::RenameTable on a store with no atomic prefix move (S3; issue 17): the table keeps
// its folder, a pointer names it, and the manifest commit is the rename
// (table/table_folders.h). The store here is the local store behind a wrapper that refuses
// RenamePrefix as S3ObjectStore does and can fail puts (FaultInjectingStore).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../io/forwarding_store.h"
#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "format/table_manifest.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "table/catalog.h"
#include "table/local_catalog.h"
#include "table/table_folders.h"

namespace strata::table {
namespace {

using strata::testing::Ids;
using strata::testing::MakeBatch;
using strata::testing::Range;
using strata::testing::TempDir;
using strata::testing::TestSchema;

// The local store without RenamePrefix, as S3ObjectStore (ForwardingStore keeps the default).
using NoMoveStore = strata::testing::ForwardingStore;

class RenameWithoutMove : public ::testing::Test {
 protected:
  void SetUp() override {
    local_ = *io::LocalObjectStore::Open(dir_.path());
    faults_ = std::make_shared<io::FaultInjectingStore>(local_);
    store_ = std::make_shared<NoMoveStore>(faults_);
    Reopen();
  }
  void Reopen() {
    catalog_.reset();
    auto c = Catalog::Open(store_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    catalog_ = std::move(*c);
  }
  std::vector<int64_t> Rows(const std::string& name) {
    auto t = catalog_->GetTable("default", name);
    EXPECT_TRUE(t.ok()) << name << ": " << t.status().ToString();
    if (!t.ok()) return {};
    return Ids(strata::testing::Live((*t)->Snapshot()));
  }
  std::vector<std::string> Names() { return *catalog_->ListTables("default"); }
  bool Exists(const std::string& key) { return local_->Head(key).ok(); }
  std::string NameIn(const std::string& folder) {
    auto m = *format::LoadLatestTableManifest(*local_, folder);
    return m ? m->table_name() : std::string("(none)");
  }

  TempDir dir_;
  std::shared_ptr<io::LocalObjectStore> local_;
  std::shared_ptr<io::FaultInjectingStore> faults_;
  std::shared_ptr<io::ObjectStore> store_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(RenameWithoutMove, KeepsTheFolderAndSurvivesARestart) {
  ASSERT_TRUE(
      catalog_->CreateTable("default", "a", TestSchema(), {MakeBatch(0, 5)}, CreateMode::kCreate)
          .ok());
  ASSERT_TRUE(catalog_->RenameTable("default", "a", "b").ok());
  EXPECT_EQ(Rows("b"), Range(0, 5));
  EXPECT_TRUE(catalog_->GetTable("default", "a").status().IsNotFound());
  EXPECT_EQ(Names(), (std::vector<std::string>{"b"}));
  // The files stayed in a's folder; the manifest there names b; b's pointer names the folder.
  EXPECT_EQ(NameIn("default/a"), "b");
  EXPECT_FALSE(Exists("default/b/_versions/1"));
  EXPECT_EQ(*local_->Get("default/~names/b"), "a\nb");
  ASSERT_TRUE((*catalog_->GetTable("default", "b"))->Insert({MakeBatch(5, 2)}).ok());
  Reopen();
  EXPECT_EQ(Names(), (std::vector<std::string>{"b"}));
  EXPECT_EQ(Rows("b"), Range(0, 7));
  EXPECT_TRUE(catalog_->GetTable("default", "a").status().IsNotFound());
}

TEST_F(RenameWithoutMove, TheOldNameIsReusableAndBothTablesKeepTheirRows) {
  ASSERT_TRUE(
      catalog_->CreateTable("default", "a", TestSchema(), {MakeBatch(0, 4)}, CreateMode::kCreate)
          .ok());
  ASSERT_TRUE(catalog_->RenameTable("default", "a", "b").ok());
  // a's plain folder holds b, so the new a goes to a fresh folder with a pointer.
  ASSERT_TRUE(
      catalog_->CreateTable("default", "a", TestSchema(), {MakeBatch(100, 3)}, CreateMode::kCreate)
          .ok());
  EXPECT_EQ(Rows("a"), Range(100, 3));
  EXPECT_EQ(Rows("b"), Range(0, 4));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a", "b"}));
  const std::string pointer = *local_->Get("default/~names/a");
  EXPECT_EQ(pointer.rfind("~a~", 0), 0u) << pointer;
  EXPECT_EQ(NameIn("default/a"), "b");
  // Creating a again is refused: it exists (found through its pointer).
  EXPECT_TRUE(catalog_->CreateTable("default", "a", TestSchema(), {}, CreateMode::kCreate)
                  .status()
                  .IsAlreadyExists());
  Reopen();
  EXPECT_EQ(Names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Rows("a"), Range(100, 3));
  EXPECT_EQ(Rows("b"), Range(0, 4));
  // Renames chain and come back: b -> c -> a is refused (a exists), c -> d, then b is free.
  ASSERT_TRUE(catalog_->RenameTable("default", "b", "c").ok());
  EXPECT_TRUE(catalog_->RenameTable("default", "c", "a").IsAlreadyExists());
  ASSERT_TRUE(catalog_->RenameTable("default", "c", "d").ok());
  EXPECT_FALSE(Exists("default/~names/b"));  // the stale pointers go with each rename
  EXPECT_FALSE(Exists("default/~names/c"));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a", "d"}));
  Reopen();
  EXPECT_EQ(Names(), (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(Rows("d"), Range(0, 4));
  EXPECT_TRUE(catalog_->GetTable("default", "b").status().IsNotFound());
  EXPECT_TRUE(catalog_->GetTable("default", "c").status().IsNotFound());
}

TEST_F(RenameWithoutMove, RenamingBackToThePlainFolderAndDroppingRemoveThePointers) {
  ASSERT_TRUE(
      catalog_->CreateTable("default", "a", TestSchema(), {MakeBatch(0, 2)}, CreateMode::kCreate)
          .ok());
  ASSERT_TRUE(catalog_->RenameTable("default", "a", "b").ok());
  ASSERT_TRUE(catalog_->RenameTable("default", "b", "a").ok());
  EXPECT_EQ(NameIn("default/a"), "a");
  EXPECT_FALSE(Exists("default/~names/b"));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a"}));
  ASSERT_TRUE(catalog_->RenameTable("default", "a", "z").ok());
  ASSERT_TRUE(catalog_->DropTable("default", "z").ok());
  EXPECT_FALSE(Exists("default/~names/z"));
  EXPECT_FALSE(Exists("default/a/_versions/1"));
  EXPECT_EQ(Names(), std::vector<std::string>{});
  ASSERT_TRUE(
      catalog_->CreateTable("default", "z", TestSchema(), {MakeBatch(9, 1)}, CreateMode::kCreate)
          .ok());
  EXPECT_EQ(NameIn("default/z"), "z");  // a plain folder again
  Reopen();
  EXPECT_EQ(Rows("z"), Range(9, 1));
}

// A rename whose commit fails (as a crash between the pointer and the commit would leave it):
// the old name stays in force, the new name is missing, and the pointer left behind is ignored.
TEST_F(RenameWithoutMove, AFailedCommitLeavesTheOldNameAndAStalePointerIsIgnored) {
  ASSERT_TRUE(
      catalog_->CreateTable("default", "a", TestSchema(), {MakeBatch(0, 3)}, CreateMode::kCreate)
          .ok());
  io::PutFault fault;
  fault.key_prefix = "default/a/_versions/";
  faults_->AddFault(fault);
  Status st = catalog_->RenameTable("default", "a", "b");
  EXPECT_FALSE(st.ok());
  faults_->ClearFaults();
  EXPECT_EQ(*local_->Get("default/~names/b"), "a\nb");  // written before the commit
  EXPECT_TRUE(catalog_->GetTable("default", "b").status().IsNotFound());
  EXPECT_EQ(Rows("a"), Range(0, 3));
  EXPECT_EQ(Names(), (std::vector<std::string>{"a"}));
  Reopen();
  EXPECT_EQ(Names(), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(catalog_->GetTable("default", "b").status().IsNotFound());
  // The rename retried goes through; then a stale pointer of the old name (a crash after the
  // commit, before its removal) does not bring the old name back.
  ASSERT_TRUE(catalog_->RenameTable("default", "a", "b").ok());
  TableFolders folders(store_);
  ASSERT_TRUE(folders.WritePointer("default", "a", "default/a").ok());
  Reopen();
  EXPECT_TRUE(catalog_->GetTable("default", "a").status().IsNotFound());
  EXPECT_EQ(Names(), (std::vector<std::string>{"b"}));
  EXPECT_EQ(Rows("b"), Range(0, 3));
}

TEST_F(RenameWithoutMove, LongHashedNames) {
  const std::string long_a(230, 'a');
  const std::string long_b(240, 'b');
  ASSERT_TRUE(
      catalog_->CreateTable("default", long_a, TestSchema(), {MakeBatch(0, 2)}, CreateMode::kCreate)
          .ok());
  ASSERT_TRUE(catalog_->RenameTable("default", long_a, long_b).ok());
  ASSERT_TRUE(
      catalog_
          ->CreateTable("default", long_a, TestSchema(), {MakeBatch(50, 1)}, CreateMode::kCreate)
          .ok());
  Reopen();
  EXPECT_EQ(Names(), (std::vector<std::string>{long_a, long_b}));
  EXPECT_EQ(Rows(long_b), Range(0, 2));
  EXPECT_EQ(Rows(long_a), Range(50, 1));
}

// Two servers on one bucket (break test, issue 17): a second catalog on the same store.
std::unique_ptr<Catalog> SecondServer(const std::shared_ptr<io::ObjectStore>& store) {
  auto c = Catalog::Open(store);
  EXPECT_TRUE(c.ok());
  return c.ok() ? std::move(*c) : nullptr;
}

// Server A's create is at its manifest commit when server B's create of the same name starts.
// B must not remove A's objects as "leftovers of a crashed create": before, it did, and A's
// create then committed and answered OK with its rows gone.
TEST_F(RenameWithoutMove, ConcurrentCreatesOnTwoServersLoseNoAcknowledgedRow) {
  auto other = SecondServer(store_);
  io::PutFault hold_a;
  hold_a.key_contains = "_versions/1.manifest";
  hold_a.times = 1;
  hold_a.hold = true;
  hold_a.fail = false;
  const int a_rule = faults_->AddFault(hold_a);
  Status a_status;
  std::thread a([&] {
    a_status =
        catalog_->CreateTable("default", "t", TestSchema(), {MakeBatch(0, 5)}, CreateMode::kCreate)
            .status();
  });
  while (faults_->held_puts() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int b_rule = faults_->AddFault(hold_a);  // B's commit waits too, after A's
  Status b_status;
  std::thread b([&] {
    b_status =
        other->CreateTable("default", "t", TestSchema(), {MakeBatch(100, 7)}, CreateMode::kCreate)
            .status();
  });
  while (faults_->held_puts() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  faults_->RemoveFault(a_rule);
  a.join();
  faults_->RemoveFault(b_rule);
  b.join();
  ASSERT_TRUE(a_status.ok()) << a_status.ToString();
  EXPECT_TRUE(b_status.IsAlreadyExists()) << b_status.ToString();
  other.reset();
  Reopen();
  EXPECT_EQ(Rows("t"), Range(0, 5));  // A's acknowledged rows
}

// A stale server renames a table another server renamed meanwhile: refused with 409 fenced,
// nothing changed (before, it committed on top: both renames answered 200).
TEST_F(RenameWithoutMove, ARenameOfANameAnotherServerRenamedIsFenced) {
  ASSERT_TRUE(
      catalog_->CreateTable("default", "a", TestSchema(), {MakeBatch(0, 3)}, CreateMode::kCreate)
          .ok());
  auto other = SecondServer(store_);
  ASSERT_TRUE(other->GetTable("default", "a").ok());  // B opens a (and claims its shard)
  ASSERT_TRUE(other->RenameTable("default", "a", "b").ok());
  Status st = catalog_->RenameTable("default", "a", "c");  // A still has "a" open
  EXPECT_EQ(st.code(), StatusCode::kFenced) << st.ToString();
  EXPECT_NE(st.message().find("renamed it to 'b'"), std::string::npos) << st.ToString();
  other.reset();
  Reopen();
  EXPECT_EQ(Names(), (std::vector<std::string>{"b"}));
  EXPECT_EQ(Rows("b"), Range(0, 3));
}

}  // namespace
}  // namespace strata::table
