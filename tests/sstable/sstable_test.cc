#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "format/key_encoding.h"
#include "io/fault_injecting_store.h"
#include "io/fetched_file.h"
#include "io/local_object_store.h"
#include "sstable/pk_index.h"
#include "sstable/sstable_reader.h"
#include "sstable/sstable_writer.h"

namespace strata::sstable {
namespace {

constexpr char kShard[] = "db/t/_mem_wal/s0";

// Schema (id int64 key, v int64 nullable, _tombstone bool).
arrow::SchemaPtr KvSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::int64()),
      arrow::field("_tombstone", arrow::boolean(), false)});
}

struct KvRow {
  int64_t id;
  std::optional<int64_t> v;
  bool tombstone = false;
};

arrow::RecordBatchPtr KvBatch(const std::vector<KvRow>& rows) {
  arrow::RecordBatchBuilder b(KvSchema());
  for (const auto& r : rows) {
    EXPECT_TRUE(b.column(0)->AppendInt(r.id).ok());
    EXPECT_TRUE((r.v ? b.column(1)->AppendInt(*r.v) : b.column(1)->AppendNull()).ok());
    EXPECT_TRUE(b.column(2)->AppendBool(r.tombstone).ok());
  }
  auto batch = b.Finish();
  EXPECT_TRUE(batch.ok());
  return *batch;
}

std::string IdKey(int64_t id) {
  std::string k;
  format::AppendSignedComponent(id, 8, &k);
  return k;
}

class SSTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto local = io::LocalObjectStore::Open(dir_.path());
    ASSERT_TRUE(local.ok());
    store_ = *local;
  }
  strata::testing::TempDir dir_;
  std::shared_ptr<io::LocalObjectStore> store_;
};

TEST(PkIndex, BuildKeepsNewestPositionAndReportsSuperseded) {
  std::vector<std::string> keys = {"b", "a", "c", "a", "b", "a"};
  std::vector<int64_t> superseded;
  PkIndex idx = PkIndex::Build(keys, &superseded);
  ASSERT_EQ(idx.size(), 3);
  EXPECT_EQ(idx.key(0), "a");
  EXPECT_EQ(idx.position(0), 5);
  EXPECT_EQ(idx.key(1), "b");
  EXPECT_EQ(idx.position(1), 4);
  EXPECT_EQ(idx.key(2), "c");
  EXPECT_EQ(idx.position(2), 2);
  EXPECT_EQ(superseded, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(idx.Find("b"), std::optional<int64_t>(4));
  EXPECT_EQ(idx.Find("bb"), std::nullopt);
  EXPECT_EQ(idx.Find(""), std::nullopt);

  auto back = PkIndex::Deserialize(idx.Serialize());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 3);
  EXPECT_EQ(back->Find("a"), std::optional<int64_t>(5));
  EXPECT_EQ(back->Find("c"), std::optional<int64_t>(2));

  std::string bytes = idx.Serialize();
  bytes[20] ^= 1;
  EXPECT_EQ(PkIndex::Deserialize(bytes).status().code(), StatusCode::kCorruption);
  auto empty = PkIndex::Deserialize(PkIndex::Build({}).Serialize());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0);
  EXPECT_EQ(empty->Find("a"), std::nullopt);
}

TEST(SSTableNames, DirectoryNames) {
  std::string d = NewSSTableDirName(12);
  EXPECT_EQ(d.size(), 8u + 5u + 2u);
  EXPECT_EQ(d.substr(8), "_gen_12");
  auto g = ParseSSTableDirName(d);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g, 12u);
  EXPECT_TRUE(ParseSSTableDirName("0123abcd_gen_0").status().IsInvalid());
  EXPECT_TRUE(ParseSSTableDirName("0123abcz_gen_1").status().IsInvalid());
  EXPECT_TRUE(ParseSSTableDirName("0123abcd_gen_").status().IsInvalid());
  EXPECT_TRUE(ParseSSTableDirName("0123abcd-gen-1").status().IsInvalid());
}

TEST_F(SSTableTest, NewestWinsDeletionsAndTombstones) {
  // Row positions: 0 id7 v1 | 1 id3 v30 | 2 id7 null | 3 id5 tombstone | 4 id3 v31 | 5 id9 v90
  SSTableInput in;
  in.generation = 4;
  in.schema = KvSchema();
  in.key_columns = {0};
  in.batches = {KvBatch({{7, 1}, {3, 30}}), KvBatch({}), KvBatch({{7, std::nullopt}}),
                KvBatch({{5, std::nullopt, true}, {3, 31}, {9, 90}})};
  auto entry = WriteSSTable(*store_, kShard, in);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_EQ(entry->generation(), 4u);
  EXPECT_EQ(entry->rows(), 6);
  EXPECT_EQ(entry->path().substr(8), "_gen_4");
  for (const char* f : {kDataFile, kDeletionsFile, kPkIndexFile, kBloomFilterFile}) {
    EXPECT_TRUE(store_->Head(SSTableFileKey(kShard, entry->path(), f)).ok()) << f;
  }

  auto r = SSTableReader::Open(*store_, kShard, *entry);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& reader = **r;
  EXPECT_EQ(reader.generation(), 4u);
  EXPECT_EQ(reader.num_rows(), 6);
  EXPECT_EQ(reader.num_bytes(), entry->bytes());
  EXPECT_TRUE(reader.schema()->Equals(*KvSchema()));
  EXPECT_EQ(strata::testing::Ids(reader.batches()), (std::vector<int64_t>{7, 3, 7, 5, 3, 9}));
  EXPECT_EQ(reader.deletions().ToVector(), (std::vector<uint32_t>{0, 1}));

  auto l7 = reader.Lookup(IdKey(7));
  ASSERT_TRUE(l7.has_value());
  EXPECT_EQ(l7->position, 2);
  EXPECT_FALSE(l7->tombstone);
  auto [b, row] = reader.Locate(l7->position);
  EXPECT_TRUE(reader.batches()[static_cast<size_t>(b)]->column(1).IsNull(row));  // v is null
  auto l5 = reader.Lookup(IdKey(5));
  ASSERT_TRUE(l5.has_value());
  EXPECT_EQ(l5->position, 3);
  EXPECT_TRUE(l5->tombstone);
  EXPECT_EQ(reader.Lookup(IdKey(3))->position, 4);
  EXPECT_FALSE(reader.Lookup(IdKey(4)).has_value());
  EXPECT_FALSE(reader.Lookup("").has_value());
  EXPECT_TRUE(reader.MayContain(IdKey(9)));
  EXPECT_EQ(reader.Locate(6), std::make_pair(int64_t{-1}, int64_t{-1}));
}

TEST_F(SSTableTest, ManySmallBatchesCoalesceAndLookupsMatchAReferenceMap) {
  std::mt19937_64 rng(3);
  SSTableInput in;
  in.generation = 1;
  in.schema = KvSchema();
  in.key_columns = {0};
  std::map<int64_t, int64_t> newest;  // id -> newest position
  int64_t pos = 0;
  for (int i = 0; i < 3000; ++i) {  // 1-row puts, as from single-row inserts
    int64_t id = static_cast<int64_t>(rng() % 1000);
    in.batches.push_back(KvBatch({{id, pos}}));
    newest[id] = pos++;
  }
  auto entry = WriteSSTable(*store_, kShard, in);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  auto r = SSTableReader::Open(*store_, kShard, entry->path());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->batches().size(), 1u);  // 3000 one-row batches -> one batch
  EXPECT_EQ((*r)->num_rows(), 3000);
  EXPECT_EQ((*r)->pk_index().size(), static_cast<int64_t>(newest.size()));
  EXPECT_EQ((*r)->deletions().cardinality(), 3000 - newest.size());
  for (int64_t id = 0; id < 1100; ++id) {
    auto l = (*r)->Lookup(IdKey(id));
    auto it = newest.find(id);
    if (it == newest.end()) {
      EXPECT_FALSE(l.has_value()) << id;
    } else {
      ASSERT_TRUE(l.has_value()) << id;
      EXPECT_EQ(l->position, it->second);
      auto [b, row] = (*r)->Locate(l->position);
      EXPECT_EQ((*r)->batches()[static_cast<size_t>(b)]->column(1).Value<int64_t>(row), it->second);
    }
  }
  // Every row is either superseded or the newest of its key.
  for (int64_t p = 0; p < 3000; ++p) {
    bool is_newest = false;
    for (const auto& [id, np] : newest) is_newest |= (np == p);
    EXPECT_NE((*r)->deletions().Contains(static_cast<uint32_t>(p)), is_newest) << p;
  }
}

TEST_F(SSTableTest, EmptyInputAndCompositeStringKeys) {
  SSTableInput in;
  in.generation = 2;
  in.schema = strata::testing::TestSchema();
  in.key_columns = {1, 0};  // (name, id)
  auto empty = WriteSSTable(*store_, kShard, in);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  auto er = SSTableReader::Open(*store_, kShard, *empty);
  ASSERT_TRUE(er.ok()) << er.status().ToString();
  EXPECT_EQ((*er)->num_rows(), 0);
  EXPECT_FALSE((*er)->Lookup("x").has_value());

  in.generation = 3;
  in.batches = {strata::testing::MakeBatch(0, 50), strata::testing::MakeBatch(10, 5)};
  auto entry = WriteSSTable(*store_, kShard, in);
  ASSERT_TRUE(entry.ok());
  auto r = SSTableReader::Open(*store_, kShard, *entry);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->num_rows(), 55);
  EXPECT_EQ((*r)->deletions().ToVector(),
            (std::vector<uint32_t>{10, 11, 12, 13, 14}));   // ids 10..14 repeated at 50..54
  auto key = format::EncodeKey(*in.batches[1], {1, 0}, 2);  // ("row12", 12)
  ASSERT_TRUE(key.ok());
  EXPECT_EQ((*r)->Lookup(*key)->position, 52);
  EXPECT_FALSE((*r)->IsTombstone(52));  // no _tombstone column
}

TEST_F(SSTableTest, InvalidInputWritesNothing) {
  SSTableInput in;
  in.generation = 0;
  in.schema = KvSchema();
  in.key_columns = {0};
  in.batches = {KvBatch({{1, 1}})};
  EXPECT_TRUE(WriteSSTable(*store_, kShard, in).status().IsInvalid());
  in.generation = 1;
  in.key_columns = {};
  EXPECT_TRUE(WriteSSTable(*store_, kShard, in).status().IsInvalid());
  in.key_columns = {0};
  in.batches.push_back(strata::testing::MakeBatch(0, 1));  // other schema
  EXPECT_TRUE(WriteSSTable(*store_, kShard, in).status().IsInvalid());
  auto listed = store_->List("db/");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(SSTableTest, FailedPutRemovesPartialFilesAndRetrySucceeds) {
  auto faulty = std::make_shared<io::FaultInjectingStore>(store_);
  io::PutFault f;
  f.key_contains = kPkIndexFile;
  f.times = 1;
  faulty->AddFault(f);
  SSTableInput in;
  in.generation = 1;
  in.schema = KvSchema();
  in.key_columns = {0};
  in.batches = {KvBatch({{1, 1}, {2, 2}})};
  auto failed = WriteSSTable(*faulty, kShard, in);
  EXPECT_EQ(failed.status().code(), StatusCode::kIOError);
  auto listed = store_->List("db/");
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());  // data.arrow and deletions.bin removed again
  auto ok = WriteSSTable(*faulty, kShard, in);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(SSTableReader::Open(*store_, kShard, *ok).ok());

  // Fixed directory name taken -> AlreadyExists, the existing SSTable untouched.
  SSTableWriteOptions opts;
  opts.dir_name = ok->path();
  EXPECT_TRUE(WriteSSTable(*store_, kShard, in, opts).status().IsAlreadyExists());
  EXPECT_TRUE(SSTableReader::Open(*store_, kShard, *ok).ok());
}

TEST_F(SSTableTest, ReaderRejectsCorruptOrMismatchedFiles) {
  SSTableInput in;
  in.generation = 5;
  in.schema = KvSchema();
  in.key_columns = {0};
  in.batches = {KvBatch({{1, 1}, {1, 2}, {2, 3}})};
  auto entry = WriteSSTable(*store_, kShard, in);
  ASSERT_TRUE(entry.ok());
  const std::string dir = entry->path();

  format::SSTableEntry wrong = *entry;
  wrong.set_rows(4);
  EXPECT_EQ(SSTableReader::Open(*store_, kShard, wrong).status().code(), StatusCode::kCorruption);

  // Swap in a deletion vector that disagrees with the pk index.
  auto dv_key = SSTableFileKey(kShard, dir, kDeletionsFile);
  auto good_dv = store_->Get(dv_key);
  ASSERT_TRUE(good_dv.ok());
  format::DeletionVector bad_dv;
  bad_dv.Add(1);
  ASSERT_TRUE(store_->Put(dv_key, bad_dv.Serialize()).ok());
  EXPECT_EQ(SSTableReader::Open(*store_, kShard, dir).status().code(), StatusCode::kCorruption);
  ASSERT_TRUE(store_->Put(dv_key, *good_dv).ok());
  ASSERT_TRUE(SSTableReader::Open(*store_, kShard, dir).ok());

  auto bloom_key = SSTableFileKey(kShard, dir, kBloomFilterFile);
  auto good_bloom = store_->Get(bloom_key);
  ASSERT_TRUE(good_bloom.ok());
  ASSERT_TRUE(store_->Put(bloom_key, "junk").ok());
  EXPECT_EQ(SSTableReader::Open(*store_, kShard, dir).status().code(), StatusCode::kCorruption);
  ASSERT_TRUE(store_->Remove(bloom_key).ok());
  EXPECT_TRUE(SSTableReader::Open(*store_, kShard, dir).status().IsNotFound());
  ASSERT_TRUE(store_->Put(bloom_key, *good_bloom).ok());
  ASSERT_TRUE(SSTableReader::Open(*store_, kShard, dir).ok());

  auto data_key = SSTableFileKey(kShard, dir, kDataFile);
  auto data = store_->Get(data_key);
  ASSERT_TRUE(data.ok());
  ASSERT_TRUE(store_->Put(data_key, data->substr(0, data->size() / 2)).ok());
  EXPECT_FALSE(SSTableReader::Open(*store_, kShard, dir).ok());
}

}  // namespace
}  // namespace strata::sstable

namespace strata::sstable {
namespace {

TEST(PkIndex, EveryCorruptedByteOrTruncationIsRejected) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) keys.push_back(IdKey(i % 13));
  const std::string good = PkIndex::Build(keys).Serialize();
  for (size_t i = 0; i < good.size(); ++i) {
    std::string b = good;
    b[i] ^= 0x5a;
    EXPECT_EQ(PkIndex::Deserialize(b).status().code(), StatusCode::kCorruption) << i;
    EXPECT_EQ(PkIndex::Deserialize(good.substr(0, i)).status().code(), StatusCode::kCorruption)
        << i;
  }
  auto ok = PkIndex::Deserialize(good);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 13);
}

// On an object store (here the local store behind a wrapper, which the reader cannot map in
// place) the reader that opens an SSTable this process just wrote maps the local copy the
// writer made from its bytes (io/fetched_file.h Seed): no download back. Another process, or
// this one once the copy went, fetches it with ranged GETs.
TEST_F(SSTableTest, AnSSTableJustWrittenToAnObjectStoreOpensWithoutADownload) {
  auto remote = std::make_shared<io::FaultInjectingStore>(store_);
  SSTableInput in;
  in.generation = 2;
  in.schema = KvSchema();
  in.key_columns = {0};
  in.batches = {KvBatch({{1, 10}, {2, 20}, {3, 30}})};
  const io::FetchedFiles::Stats before = io::FetchedFiles::Global().stats();
  auto entry = WriteSSTable(*remote, kShard, in);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_EQ(io::FetchedFiles::Global().stats().seeded - before.seeded, 1);
  remote->ResetCounters();
  {
    auto r = SSTableReader::Open(*remote, kShard, *entry);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->num_rows(), 3);
    EXPECT_EQ(remote->stats().get_ranges, 0u);  // data.arrow came from the seeded copy
    EXPECT_EQ(remote->stats().heads, 0u);
    EXPECT_EQ(io::FetchedFiles::Global().stats().files_on_disk - before.files_on_disk, 1);
  }
  // The reader went, and its copy with it: the next open downloads.
  EXPECT_EQ(io::FetchedFiles::Global().stats().files_on_disk, before.files_on_disk);
  auto again = SSTableReader::Open(*remote, kShard, *entry);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->num_rows(), 3);
  EXPECT_EQ(remote->stats().get_ranges, 1u);
}

}  // namespace
}  // namespace strata::sstable
