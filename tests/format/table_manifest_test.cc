#include "format/table_manifest.h"

#include <gtest/gtest.h>

#include "../io/storage_test_util.h"
#include "io/local_object_store.h"

namespace strata::format {
namespace {

using strata::testing::TempDir;

TEST(TableManifest, CommitLoadHighestAndCollision) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  EXPECT_FALSE(LoadLatestTableManifest(*store, "db/t")->has_value());
  auto schema = strata::testing::TestSchema();
  for (uint64_t v : {1, 2, 10}) {
    TableManifest m;
    m.set_version(v);
    m.set_arrow_schema(*EncodeSchema(*schema));
    m.add_shard_ids("shard-" + std::to_string(v));
    m.set_table_name("t");
    ASSERT_TRUE(CommitTableManifest(*store, "db/t", m).ok());
  }
  auto latest = LoadLatestTableManifest(*store, "db/t");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->version(), 10u);  // numeric, not lexicographic ("10" < "2")
  EXPECT_EQ((*latest)->shard_ids(0), "shard-10");
  auto decoded = DecodeSchema((*latest)->arrow_schema());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE((*decoded)->Equals(*schema)) << (*decoded)->ToString();

  TableManifest dup;
  dup.set_version(2);
  EXPECT_TRUE(CommitTableManifest(*store, "db/t", dup).IsAlreadyExists());
  TableManifest kept;  // the loser changed nothing
  ASSERT_TRUE(kept.ParseFromString(*store->Get(TableManifestKey("db/t", 2))));
  EXPECT_EQ(kept.shard_ids(0), "shard-2");
}

TEST(TableManifest, CorruptNewestIsReported) {
  TempDir dir;
  auto store = *io::LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(store->Put(TableManifestKey("db/t", 3), "\xff\xff\xff garbage").ok());
  auto r = LoadLatestTableManifest(*store, "db/t");
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(DecodeSchema("not ipc").status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace strata::format
