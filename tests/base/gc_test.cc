// Tests of base::CollectGarbage (src/base/gc.h): one test per rule, with real file names
// written by the real writers (CommitTableManifest, ShardManifestStore, WriteSSTable,
// EncodeWalEntry), ages set with utimensat against a fixed `now_micros`, and a crash test that
// fails every remove of a run in turn (FaultInjectingStore::FailNthRemove).
#include "base/gc.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../io/forwarding_store.h"
#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "format/deletion_vector.h"
#include "format/shard_manifest.h"
#include "format/table_manifest.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "sstable/sstable_writer.h"
#include "wal/wal_entry.h"

namespace strata::base {
namespace {

constexpr char kTable[] = "db/t";
constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kHour = 3600 * kSecond;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kNow = 1'800'000'000LL * kSecond;  // 2027-01-15
constexpr int64_t kOld = kNow - 2 * kHour;           // older than orphan_min_age (1 h)
constexpr int64_t kYoung = kNow - 60 * kSecond;      // younger than it

// Schema (id int64 key, v int64, _tombstone bool) of the SSTables and WAL entries.
arrow::SchemaPtr KvSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::int64()),
      arrow::field("_tombstone", arrow::boolean(), false)});
}

arrow::RecordBatchPtr KvBatch(int64_t first, int64_t n) {
  arrow::RecordBatchBuilder b(KvSchema());
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(b.column(0)->AppendInt(i).ok());
    EXPECT_TRUE(b.column(1)->AppendInt(i * 10).ok());
    EXPECT_TRUE(b.column(2)->AppendBool(false).ok());
  }
  auto batch = b.Finish();
  EXPECT_TRUE(batch.ok());
  return *batch;
}

std::string ShardPrefix(const std::string& id) { return std::string(kTable) + "/_mem_wal/" + id; }

class GcTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(dir_.path()); }

  void Open(const std::string& root) {
    auto local = io::LocalObjectStore::Open(root);
    ASSERT_TRUE(local.ok());
    local_ = *local;
    root_ = root;
  }

  io::ObjectStore& store() { return *local_; }
  bool Exists(const std::string& key) { return local_->Head(key).ok(); }

  /// Every key under the table, sorted.
  std::vector<std::string> Keys(const std::string& under = kTable) {
    auto list = local_->List(under + std::string("/"));
    EXPECT_TRUE(list.ok());
    std::vector<std::string> out;
    for (const auto& o : *list) out.push_back(o.key);
    return out;
  }
  int64_t Bytes(const std::vector<std::string>& keys) {
    int64_t n = 0;
    for (const auto& k : keys) n += local_->Head(k)->size;
    return n;
  }

  void SetMtime(const std::string& key, int64_t micros) {
    struct timespec t[2];
    t[0].tv_sec = t[1].tv_sec = micros / kSecond;
    t[0].tv_nsec = t[1].tv_nsec = (micros % kSecond) * 1000;
    ASSERT_EQ(::utimensat(AT_FDCWD, (root_ + "/" + key).c_str(), t, 0), 0) << key;
  }
  /// Sets the mtime of every file under `under` (a folder key).
  void SetMtimeUnder(const std::string& under, int64_t micros) {
    for (const auto& k : Keys(under)) SetMtime(k, micros);
  }

  // --- Table manifests -----------------------------------------------------------------------
  format::TableManifest Manifest(uint64_t version, int64_t created_at, uint64_t base_version,
                                 std::vector<std::string> shard_ids = {"s0"}) {
    format::TableManifest m;
    m.set_version(version);
    m.set_created_at_micros(created_at);
    m.set_base_version(base_version);
    m.set_table_name("t");
    for (auto& id : shard_ids) m.add_shard_ids(id);
    return m;
  }
  void Commit(const format::TableManifest& m) {
    ASSERT_TRUE(format::CommitTableManifest(store(), kTable, m).ok()) << m.version();
  }
  std::string ManifestKey(uint64_t v) { return format::TableManifestKey(kTable, v); }

  // --- Base files ----------------------------------------------------------------------------
  /// A base fragment directory data/{dir}/ written by WriteSSTable; returns its file keys.
  std::vector<std::string> WriteFragment(const std::string& dir, int64_t first, int64_t rows) {
    sstable::SSTableInput input;
    input.generation = 1;
    input.schema = KvSchema();
    input.batches = {KvBatch(first, rows)};
    input.key_columns = {0};
    sstable::SSTableWriteOptions opts;
    opts.dir_name = dir;
    auto entry = sstable::WriteSSTable(store(), std::string(kTable) + "/data", input, opts);
    EXPECT_TRUE(entry.ok()) << entry.status().ToString();
    return Keys(std::string(kTable) + "/data/" + dir);
  }
  /// A deletion vector file at {table}/{rel}.
  void WriteDeletions(const std::string& rel, uint32_t row) {
    format::DeletionVector dv;
    dv.Add(row);
    ASSERT_TRUE(store().PutIfAbsent(std::string(kTable) + "/" + rel, dv.Serialize()).ok());
  }
  void WriteIndex(const std::string& rel) {
    ASSERT_TRUE(store().PutIfAbsent(std::string(kTable) + "/" + rel, "index bytes").ok());
  }
  static void AddFragment(format::TableManifest* m, const std::string& path,
                          const std::string& deletions = "") {
    auto* f = m->mutable_base()->add_fragments();
    f->set_path(path);
    f->set_rows(10);
    f->set_deletions_path(deletions);
    f->set_deleted_rows(deletions.empty() ? 0 : 1);
  }
  static void AddIndex(format::TableManifest* m, const std::string& path) {
    auto* idx = m->mutable_base()->add_indexes();
    idx->set_name("v_idx");
    idx->set_uuid("u");
    idx->set_path(path);
  }

  // --- Shards --------------------------------------------------------------------------------
  /// An SSTable of `generation` under the shard written by WriteSSTable in directory `dir`.
  format::SSTableEntry WriteShardSSTable(const std::string& shard, uint64_t generation,
                                         const std::string& dir) {
    sstable::SSTableInput input;
    input.generation = generation;
    input.schema = KvSchema();
    input.batches = {KvBatch(static_cast<int64_t>(generation) * 100, 5)};
    input.key_columns = {0};
    sstable::SSTableWriteOptions opts;
    opts.dir_name = dir;
    auto entry = sstable::WriteSSTable(store(), ShardPrefix(shard), input, opts);
    EXPECT_TRUE(entry.ok()) << entry.status().ToString();
    return entry.ok() ? *entry : format::SSTableEntry();
  }
  /// Commits the shard manifest (version 1) through ShardManifestStore and returns it.
  format::ShardManifest CommitShard(format::ShardManifest m) {
    format::ShardManifestStore ms(local_, ShardPrefix(m.shard_id()), m.shard_id());
    m.set_version(1);
    if (m.current_generation() == 0) m.set_current_generation(1);
    EXPECT_TRUE(ms.Commit(m).ok());
    auto loaded = ms.LoadLatest();
    EXPECT_TRUE(loaded.ok() && loaded->has_value());
    return **loaded;
  }
  /// A WAL entry of `rows` rows (0 = none) at `position`.
  void WriteWal(const std::string& shard, uint64_t position, int64_t rows, bool sentinel,
                uint64_t skip_from = 0, arrow::SchemaPtr schema = KvSchema()) {
    std::vector<arrow::RecordBatchPtr> batches;
    if (rows > 0) batches.push_back(KvBatch(static_cast<int64_t>(position) * 1000, rows));
    auto bytes = wal::EncodeWalEntry(*schema, batches, /*writer_epoch=*/1, /*generation=*/1,
                                     arrow::ipc::Compression::kNone, sentinel, skip_from);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    ASSERT_TRUE(store().PutIfAbsent(wal::WalEntryKey(ShardPrefix(shard), position), *bytes).ok());
  }
  /// A torn WAL entry (a data entry cut before its end-of-stream marker).
  void WriteTornWal(const std::string& shard, uint64_t position) {
    auto bytes =
        wal::EncodeWalEntry(*KvSchema(), {KvBatch(0, 3)}, 1, 1, arrow::ipc::Compression::kNone);
    ASSERT_TRUE(bytes.ok());
    ASSERT_TRUE(store()
                    .PutIfAbsent(wal::WalEntryKey(ShardPrefix(shard), position),
                                 bytes->substr(0, bytes->size() - 8))
                    .ok());
  }
  std::string WalKey(const std::string& shard, uint64_t position) {
    return wal::WalEntryKey(ShardPrefix(shard), position);
  }

  GcInput Input(const format::TableManifest& current, std::vector<format::ShardManifest> shards) {
    GcInput in;
    in.table_prefix = kTable;
    in.current = current;
    for (auto& s : shards) in.shards.push_back(GcShard{std::move(s)});
    in.now_micros = kNow;
    return in;
  }

  strata::testing::TempDir dir_;
  std::string root_;
  std::shared_ptr<io::LocalObjectStore> local_;
};

// Rule 1: the newest retain_versions, the age window, tags and versions above `current` are
// kept, whichever keeps more; `current` always.
TEST_F(GcTest, TableManifestsKeepNewestAgeWindowTagsAndCurrent) {
  // Versions 1..12, version v created (12 - v) days before now, base_version 100 * v except
  // v4 (a tag change after v3: base_version stays 300). v13 was committed after the caller
  // loaded v12 (a racing commit).
  std::vector<format::TableManifest> ms;
  for (uint64_t v = 1; v <= 13; ++v) {
    const int64_t created = kNow - static_cast<int64_t>(12 - std::min<uint64_t>(v, 12)) * kDay;
    ms.push_back(Manifest(v, created, v == 4 ? 300 : 100 * v));
  }
  format::TableManifest& current = ms[11];
  (*current.mutable_tags())["a"].set_version(350);  // newest with base_version <= 350: v4
  (*current.mutable_tags())["b"].set_version(150);  // v1
  for (const auto& m : ms) Commit(m);
  ASSERT_TRUE(store().Put(std::string(kTable) + "/_versions/notes.txt", "not a manifest").ok());

  GcOptions opt;
  opt.retain_versions = 4;                  // 9, 10, 11, 12
  opt.retain_age = std::chrono::hours(48);  // 10, 11, 12
  auto stats = CollectGarbage(store(), Input(current, {}), opt);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->manifests_removed, 6);  // 2, 3, 5, 6, 7, 8
  EXPECT_EQ(stats->files_removed(), 6);
  std::set<uint64_t> present;
  for (uint64_t v = 1; v <= 13; ++v) {
    if (Exists(ManifestKey(v))) present.insert(v);
  }
  EXPECT_EQ(present, (std::set<uint64_t>{1, 4, 9, 10, 11, 12, 13}));
  EXPECT_TRUE(Exists(std::string(kTable) + "/_versions/notes.txt"));

  // The age window keeps more than the count: 10 stays, 9 goes.
  opt.retain_versions = 2;
  stats = CollectGarbage(store(), Input(current, {}), opt);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->manifests_removed, 1);
  EXPECT_FALSE(Exists(ManifestKey(9)));
  EXPECT_TRUE(Exists(ManifestKey(10)));

  // Nothing retained by count or age: current, the newer version and the tagged ones remain.
  opt.retain_versions = 0;
  opt.retain_age = std::chrono::seconds(0);
  stats = CollectGarbage(store(), Input(current, {}), opt);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->manifests_removed, 2);  // 10, 11
  present.clear();
  for (uint64_t v = 1; v <= 13; ++v) {
    if (Exists(ManifestKey(v))) present.insert(v);
  }
  EXPECT_EQ(present, (std::set<uint64_t>{1, 4, 12, 13}));
  EXPECT_GT(stats->bytes_removed, 0);
}

// Rule 2: base files of retained manifests stay; unreferenced ones go once older than
// orphan_min_age; a manifest newer than `current` protects its files.
TEST_F(GcTest, BaseFilesUnreferencedAndOldAreRemoved) {
  const auto frag_a = WriteFragment("aaaaaaaa_gen_1", 0, 10);
  const auto frag_b = WriteFragment("bbbbbbbb_gen_2", 10, 10);
  const auto frag_c = WriteFragment("cccccccc_gen_3", 20, 10);
  const auto frag_e = WriteFragment("eeeeeeee_gen_4", 30, 10);  // failed compaction, old
  const auto frag_d = WriteFragment("dddddddd_gen_5", 40, 10);  // compaction in flight, young
  const auto frag_f = WriteFragment("ffffffff_gen_6", 50, 10);  // named by racing v4 only
  WriteDeletions("_deletions/aaaaaaaa_gen_1-1.bin", 1);
  WriteDeletions("_deletions/aaaaaaaa_gen_1-2.bin", 2);
  WriteDeletions("_deletions/bbbbbbbb_gen_2-3.bin", 3);
  WriteIndex("_indices/u/0000000000000001.idx");
  WriteIndex("_indices/u/0000000000000002.idx");
  ASSERT_TRUE(store().Put(std::string(kTable) + "/data/stray.arrow", "leftover").ok());

  auto v1 = Manifest(1, kNow - 10 * kDay, 100);
  AddFragment(&v1, "aaaaaaaa_gen_1", "_deletions/aaaaaaaa_gen_1-1.bin");
  AddIndex(&v1, "_indices/u/0000000000000001.idx");
  // Each a different table version: an older manifest of the current table version does not
  // protect its fragments (BaseFilesOfPredecessorsOfTheCurrentVersionAreRemovedAtOnce).
  auto v2 = Manifest(2, kNow - 9 * kDay, 200);
  AddFragment(&v2, "aaaaaaaa_gen_1", "_deletions/aaaaaaaa_gen_1-2.bin");
  AddFragment(&v2, "bbbbbbbb_gen_2");
  AddIndex(&v2, "_indices/u/0000000000000002.idx");
  auto v3 = Manifest(3, kNow - 8 * kDay, 300);
  AddFragment(&v3, "bbbbbbbb_gen_2", "_deletions/bbbbbbbb_gen_2-3.bin");
  AddFragment(&v3, "cccccccc_gen_3");
  AddIndex(&v3, "_indices/u/0000000000000002.idx");
  auto v4 = v3;  // committed after the caller loaded v3
  v4.set_version(4);
  AddFragment(&v4, "ffffffff_gen_6");
  for (const auto* m : {&v1, &v2, &v3, &v4}) Commit(*m);
  SetMtimeUnder(kTable, kOld);
  SetMtimeUnder(std::string(kTable) + "/data/dddddddd_gen_5", kYoung);

  GcOptions opt;
  opt.retain_versions = 2;  // v2 and v3 (v4 is above current)
  opt.retain_age = std::chrono::hours(1);
  std::vector<std::string> expected_gone = frag_e;
  expected_gone.push_back(std::string(kTable) + "/data/stray.arrow");
  expected_gone.push_back(std::string(kTable) + "/_deletions/aaaaaaaa_gen_1-1.bin");
  expected_gone.push_back(std::string(kTable) + "/_indices/u/0000000000000001.idx");
  const int64_t expected_bytes = Bytes(expected_gone) + Bytes({ManifestKey(1)});

  auto stats = CollectGarbage(store(), Input(v3, {}), opt);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->manifests_removed, 1);
  EXPECT_EQ(stats->base_files_removed, static_cast<int64_t>(expected_gone.size()));
  EXPECT_EQ(stats->bytes_removed, expected_bytes);
  for (const auto& k : expected_gone) EXPECT_FALSE(Exists(k)) << k;
  for (const auto* frag : {&frag_a, &frag_b, &frag_c, &frag_d, &frag_f}) {
    ASSERT_FALSE(frag->empty());
    for (const auto& k : *frag) EXPECT_TRUE(Exists(k)) << k;
  }
  EXPECT_TRUE(Exists(std::string(kTable) + "/_deletions/aaaaaaaa_gen_1-2.bin"));
  EXPECT_TRUE(Exists(std::string(kTable) + "/_deletions/bbbbbbbb_gen_2-3.bin"));
  EXPECT_TRUE(Exists(std::string(kTable) + "/_indices/u/0000000000000002.idx"));

  // Once v2 goes (only current and v4 retained), fragment a and v2's files follow; d is still
  // young.
  opt.retain_versions = 1;
  stats = CollectGarbage(store(), Input(v3, {}), opt);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->manifests_removed, 1);
  EXPECT_EQ(stats->base_files_removed, static_cast<int64_t>(frag_a.size()) + 1);
  for (const auto& k : frag_a) EXPECT_FALSE(Exists(k)) << k;
  EXPECT_FALSE(Exists(std::string(kTable) + "/_deletions/aaaaaaaa_gen_1-2.bin"));
  for (const auto& k : frag_d) EXPECT_TRUE(Exists(k)) << k;
}

// Rule 2, predecessors: fragments and deletion vectors that only older manifests of the
// current table version and shards name (a compaction's or a base rewrite's predecessors) are
// removed at once, young or not; an older table version (or other shards) still protects its
// files, and an unreferenced young file (in flight) stays.
TEST_F(GcTest, BaseFilesOfPredecessorsOfTheCurrentVersionAreRemovedAtOnce) {
  const auto frag_old = WriteFragment("aaaaaaaa_gen_1", 0, 10);   // v1 (another version)
  const auto frag_pre = WriteFragment("bbbbbbbb_gen_2", 0, 10);   // v2 (a predecessor)
  const auto frag_cur = WriteFragment("cccccccc_gen_2", 0, 10);   // v3 = current (rewritten)
  const auto frag_fly = WriteFragment("dddddddd_gen_3", 10, 10);  // in flight
  const auto frag_shd = WriteFragment("eeeeeeee_gen_1", 0, 10);   // v0: same version, other shard
  WriteDeletions("_deletions/bbbbbbbb_gen_2-2.bin", 1);
  auto v0 = Manifest(1, kNow - 60'000'000, 300, {"s9"});
  AddFragment(&v0, "eeeeeeee_gen_1");
  auto v1 = Manifest(2, kNow - 50'000'000, 200);
  AddFragment(&v1, "aaaaaaaa_gen_1");
  auto v2 = Manifest(3, kNow - 40'000'000, 300);
  AddFragment(&v2, "bbbbbbbb_gen_2", "_deletions/bbbbbbbb_gen_2-2.bin");
  auto v3 = Manifest(4, kNow - 30'000'000, 300);
  AddFragment(&v3, "cccccccc_gen_2");
  for (const auto* m : {&v0, &v1, &v2, &v3}) Commit(*m);
  SetMtimeUnder(kTable, kYoung);

  GcOptions opt;  // defaults: every version retained (7 days), orphans younger than 1 h kept
  auto stats = CollectGarbage(store(), Input(v3, {}), opt);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->manifests_removed, 0);
  EXPECT_EQ(stats->base_files_removed, static_cast<int64_t>(frag_pre.size()) + 1);
  for (const auto& k : frag_pre) EXPECT_FALSE(Exists(k)) << k;
  EXPECT_FALSE(Exists(std::string(kTable) + "/_deletions/bbbbbbbb_gen_2-2.bin"));
  for (const auto* frag : {&frag_old, &frag_cur, &frag_fly, &frag_shd}) {
    ASSERT_FALSE(frag->empty());
    for (const auto& k : *frag) EXPECT_TRUE(Exists(k)) << k;
  }
  for (uint64_t v = 1; v <= 4; ++v) EXPECT_TRUE(Exists(ManifestKey(v))) << v;
}

// Rule 2, index checkpoints: derived data, protected only by `current` (and newer manifests).
// A checkpoint that only older, still retained manifests name is removed at once (it was
// committed, so it is not in flight); an unreferenced young one may be in flight and stays.
TEST_F(GcTest, CheckpointsOfOlderRetainedManifestsAreRemovedAtOnce) {
  const auto frag = WriteFragment("aaaaaaaa_gen_1", 0, 10);
  WriteIndex("_indices/u/0000000000000001.idx");  // v1's
  WriteIndex("_indices/u/0000000000000002.idx");  // v2's (current)
  WriteIndex("_indices/u/0000000000000003.idx");  // a compaction in flight
  auto v1 = Manifest(1, kNow - 60'000'000, 100);
  AddFragment(&v1, "aaaaaaaa_gen_1");
  AddIndex(&v1, "_indices/u/0000000000000001.idx");
  auto v2 = Manifest(2, kNow - 30'000'000, 100);
  AddFragment(&v2, "aaaaaaaa_gen_1");
  AddIndex(&v2, "_indices/u/0000000000000002.idx");
  for (const auto* m : {&v1, &v2}) Commit(*m);
  SetMtimeUnder(kTable, kYoung);

  GcOptions opt;  // defaults: every version retained (7 days), orphans younger than 1 h kept
  auto stats = CollectGarbage(store(), Input(v2, {}), opt);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->manifests_removed, 0);
  EXPECT_EQ(stats->base_files_removed, 1);
  EXPECT_EQ(stats->bytes_removed, static_cast<int64_t>(std::string("index bytes").size()));
  EXPECT_FALSE(Exists(std::string(kTable) + "/_indices/u/0000000000000001.idx"));
  EXPECT_TRUE(Exists(std::string(kTable) + "/_indices/u/0000000000000002.idx"));
  EXPECT_TRUE(Exists(std::string(kTable) + "/_indices/u/0000000000000003.idx"));
  EXPECT_TRUE(Exists(ManifestKey(1)));
  for (const auto& k : frag) EXPECT_TRUE(Exists(k)) << k;
}

// Rule 3: replayed WAL entries go, fence sentinels (small or large) stay forever, nothing above
// replay_after is touched, and an undecodable entry stays unless replay skips it.
TEST_F(GcTest, WalEntriesBelowReplayAfterExceptFenceSentinels) {
  // A schema with ~100 KB of metadata: its data-less sentinel is above kSentinelProbeMaxBytes.
  auto wide = std::make_shared<arrow::Schema>(
      KvSchema()->fields(), arrow::KeyValueMetadata({{"comment", std::string(100 * 1024, 'x')}}));
  WriteWal("s0", 1, 3, false);                  // data, replayed
  WriteTornWal("s0", 2);                        // torn, skipped by replay (listed)
  WriteWal("s0", 3, 0, true, /*skip_from=*/2);  // fence sentinel of a recovering writer
  WriteWal("s0", 4, 5000, false);               // large data entry
  WriteWal("s0", 5, 0, true, 0, wide);          // large fence sentinel
  WriteTornWal("s0", 6);                        // undecodable, not listed as skipped
  WriteWal("s0", 7, 2, false);                  // above replay_after
  WriteWal("s0", 8, 0, true);                   // above replay_after
  WriteTornWal("s0", 9);                        // above replay_after, skipped
  ASSERT_GT(local_->Head(WalKey("s0", 4))->size, kSentinelProbeMaxBytes);
  ASSERT_GT(local_->Head(WalKey("s0", 5))->size, kSentinelProbeMaxBytes);

  format::ShardManifest sm;
  sm.set_shard_id("s0");
  sm.set_writer_epoch(2);
  sm.set_replay_after_wal_entry_position(6);
  sm.add_skipped_wal_positions(2);
  sm.add_skipped_wal_positions(9);
  sm = CommitShard(sm);
  const auto v1 = Manifest(1, kNow, 100);
  Commit(v1);
  SetMtimeUnder(kTable, kOld);

  const int64_t expected_bytes = Bytes({WalKey("s0", 1), WalKey("s0", 2), WalKey("s0", 4)});
  auto stats = CollectGarbage(store(), Input(v1, {sm}), GcOptions{});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->wal_entries_removed, 3);
  EXPECT_EQ(stats->files_removed(), 3);
  EXPECT_EQ(stats->bytes_removed, expected_bytes);
  for (uint64_t p : {1, 2, 4}) EXPECT_FALSE(Exists(WalKey("s0", p))) << p;
  for (uint64_t p : {3, 5, 6, 7, 8, 9}) EXPECT_TRUE(Exists(WalKey("s0", p))) << p;
  EXPECT_EQ(Keys(ShardPrefix("s0") + "/manifest").size(), 2u);  // manifest + version hint

  // SlateDB #352: a fenced writer of epoch 1 that resumes after GC and appends at its next
  // slot (3, where the new writer's fence sentinel is) still finds it taken.
  auto late =
      wal::EncodeWalEntry(*KvSchema(), {KvBatch(0, 1)}, 1, 1, arrow::ipc::Compression::kNone);
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(store().PutIfAbsent(WalKey("s0", 3), *late).IsAlreadyExists());

  // A second run finds nothing more.
  stats = CollectGarbage(store(), Input(v1, {sm}), GcOptions{});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->files_removed(), 0);
}

// Rule 4: unreferenced SSTable directories go when compacted (any age) or, above the compacted
// generation, when all their files are old; referenced ones always stay.
TEST_F(GcTest, SSTableDirsCompactedOrAbandonedAreRemoved) {
  std::map<std::string, format::SSTableEntry> e;
  e["g1"] = WriteShardSSTable("s0", 1, "00000001_gen_1");   // compacted, young
  e["g2"] = WriteShardSSTable("s0", 2, "00000002_gen_2");   // compacted, old
  e["g3"] = WriteShardSSTable("s0", 3, "00000003_gen_3");   // compacted but still referenced
  e["g4"] = WriteShardSSTable("s0", 4, "00000004_gen_4");   // referenced
  e["g5a"] = WriteShardSSTable("s0", 5, "0000005a_gen_5");  // failed flush attempt, old
  e["g5"] = WriteShardSSTable("s0", 5, "00000005_gen_5");   // its retry, referenced
  e["g6"] = WriteShardSSTable("s0", 6, "00000006_gen_6");   // flush in progress, young
  e["g7"] = WriteShardSSTable("s0", 7, "00000007_gen_7");   // one young file: in progress

  format::ShardManifest sm;
  sm.set_shard_id("s0");
  sm.set_current_generation(6);
  for (const char* g : {"g3", "g4", "g5"}) *sm.add_sstables() = e[g];
  sm = CommitShard(sm);
  auto v1 = Manifest(1, kNow, 100);
  (*v1.mutable_base()->mutable_compacted_generation())["s0"] = 3;
  Commit(v1);
  SetMtimeUnder(kTable, kOld);
  SetMtimeUnder(ShardPrefix("s0") + "/00000001_gen_1", kYoung);
  SetMtimeUnder(ShardPrefix("s0") + "/00000006_gen_6", kYoung);
  SetMtime(sstable::SSTableFileKey(ShardPrefix("s0"), "00000007_gen_7", sstable::kDataFile),
           kYoung);

  auto files = [&](const std::string& dir) { return Keys(ShardPrefix("s0") + "/" + dir); };
  std::vector<std::string> gone;
  for (const char* d : {"00000001_gen_1", "00000002_gen_2", "0000005a_gen_5"}) {
    auto f = files(d);
    ASSERT_GE(f.size(), 4u);  // data, deletions, pk index, bloom filter (+ supersedes)
    gone.insert(gone.end(), f.begin(), f.end());
  }
  std::vector<std::string> kept;
  for (const char* d :
       {"00000003_gen_3", "00000004_gen_4", "00000005_gen_5", "00000006_gen_6", "00000007_gen_7"}) {
    auto f = files(d);
    kept.insert(kept.end(), f.begin(), f.end());
  }
  const int64_t expected_bytes = Bytes(gone);

  auto stats = CollectGarbage(store(), Input(v1, {sm}), GcOptions{});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->sstable_files_removed, static_cast<int64_t>(gone.size()));
  EXPECT_EQ(stats->files_removed(), static_cast<int64_t>(gone.size()));
  EXPECT_EQ(stats->bytes_removed, expected_bytes);
  for (const auto& k : gone) EXPECT_FALSE(Exists(k)) << k;
  for (const auto& k : kept) EXPECT_TRUE(Exists(k)) << k;
  EXPECT_EQ(Keys(ShardPrefix("s0") + "/manifest").size(), 2u);
}

// Rule 5: a shard folder no retained manifest names is removed whole (manifests included) once
// every file in it is old; one still being written, or one a retained manifest names, stays.
TEST_F(GcTest, OrphanShardFoldersAreRemovedWhenAllTheirFilesAreOld) {
  for (const char* id : {"s0", "s1", "s2", "s3"}) {
    format::ShardManifest sm;
    sm.set_shard_id(id);
    CommitShard(sm);
    WriteWal(id, 1, 0, true);
    WriteWal(id, 2, 3, false);
    WriteShardSSTable(id, 1, "00000001_gen_1");
  }
  auto v1 = Manifest(1, kNow - 30 * kDay, 100, {"s0", "s3"});  // retained by count
  auto v2 = Manifest(2, kNow - 20 * kDay, 200, {"s0"});        // removed
  auto v3 = Manifest(3, kNow - 10 * kDay, 300, {"s1"});        // current: an overwrite
  for (const auto* m : {&v1, &v2, &v3}) Commit(*m);
  SetMtimeUnder(kTable, kOld);
  SetMtime(WalKey("s2", 2), kYoung);  // s2: an overwrite still writing

  GcOptions opt;
  opt.retain_versions = 3;
  opt.retain_age = std::chrono::seconds(0);
  auto stats = CollectGarbage(store(), Input(v3, {}), opt);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->files_removed(), 0);  // s0 and s3 are named by v1/v2, s2 is young

  // With v1 and v2 gone, s0 and s3 are orphans: removed whole. s2 keeps its files.
  const auto s0 = Keys(ShardPrefix("s0"));
  const auto s3 = Keys(ShardPrefix("s3"));
  const auto s2 = Keys(ShardPrefix("s2"));
  opt.retain_versions = 1;
  const int64_t expected_bytes = Bytes(s0) + Bytes(s3) + Bytes({ManifestKey(1), ManifestKey(2)});
  stats = CollectGarbage(store(), Input(v3, {}), opt);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->manifests_removed, 2);
  EXPECT_EQ(stats->orphan_files_removed, static_cast<int64_t>(s0.size() + s3.size()));
  EXPECT_EQ(stats->bytes_removed, expected_bytes);
  EXPECT_TRUE(Keys(ShardPrefix("s0")).empty());
  EXPECT_TRUE(Keys(ShardPrefix("s3")).empty());
  EXPECT_EQ(Keys(ShardPrefix("s2")), s2);
  EXPECT_GE(s2.size(), 8u);  // 2 manifest files, 2 WAL entries, >= 4 SSTable files
  EXPECT_FALSE(Keys(ShardPrefix("s1")).empty());  // a current shard without a GcShard

  // Once s2's last file is old, it goes too.
  SetMtime(WalKey("s2", 2), kOld);
  stats = CollectGarbage(store(), Input(v3, {}), opt);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->orphan_files_removed, static_cast<int64_t>(s2.size()));
  EXPECT_TRUE(Keys(ShardPrefix("s2")).empty());
}

// An ObjectStore that cannot tell modification times (mtime_micros = 0).
class NoMtimeStore final : public strata::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<io::ObjectMeta> Head(const std::string& k) override {
    STRATA_ASSIGN_OR_RETURN(auto m, inner()->Head(k));
    m.mtime_micros = 0;
    return m;
  }
  Result<std::vector<io::ObjectMeta>> List(const std::string& p) override {
    STRATA_ASSIGN_OR_RETURN(auto list, inner()->List(p));
    for (auto& m : list) m.mtime_micros = 0;
    return list;
  }
};

// Ages: an unknown modification time counts as young, so no age rule removes the file; the
// rules that do not depend on age (manifests, compacted SSTables, WAL) still apply.
TEST_F(GcTest, UnknownModificationTimeIsNeverOld) {
  const auto frag = WriteFragment("eeeeeeee_gen_4", 0, 10);  // unreferenced base
  WriteShardSSTable("s0", 1, "00000001_gen_1");              // compacted
  WriteShardSSTable("s0", 9, "00000009_gen_9");              // abandoned flush
  WriteWal("s0", 1, 2, false);                               // replayed
  format::ShardManifest orphan;
  orphan.set_shard_id("s9");
  CommitShard(orphan);  // orphan folder
  format::ShardManifest sm;
  sm.set_shard_id("s0");
  sm.set_replay_after_wal_entry_position(1);
  sm = CommitShard(sm);
  auto v1 = Manifest(1, kNow - 30 * kDay, 100);
  auto v2 = Manifest(2, kNow, 100);
  (*v2.mutable_base()->mutable_compacted_generation())["s0"] = 1;
  Commit(v1);
  Commit(v2);
  SetMtimeUnder(kTable, kOld);  // old on disk, but the store below does not say so

  NoMtimeStore blind(local_);
  GcOptions opt;
  opt.retain_versions = 1;
  opt.retain_age = std::chrono::seconds(0);
  const auto compacted = Keys(ShardPrefix("s0") + "/00000001_gen_1");
  auto stats = CollectGarbage(blind, Input(v2, {sm}), opt);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->manifests_removed, 1);
  EXPECT_EQ(stats->wal_entries_removed, 1);
  EXPECT_EQ(stats->sstable_files_removed, static_cast<int64_t>(compacted.size()));
  EXPECT_EQ(stats->base_files_removed, 0);
  EXPECT_EQ(stats->orphan_files_removed, 0);
  for (const auto& k : frag) EXPECT_TRUE(Exists(k)) << k;
  EXPECT_FALSE(Keys(ShardPrefix("s0") + "/00000009_gen_9").empty());
  EXPECT_FALSE(Keys(ShardPrefix("s9")).empty());
}

TEST_F(GcTest, InvalidInputAndCorruptManifestRemoveNothing) {
  auto v1 = Manifest(1, kNow - 30 * kDay, 100);
  auto v2 = Manifest(2, kNow - 20 * kDay, 100);
  auto v3 = Manifest(3, kNow, 100);
  for (const auto* m : {&v1, &v2, &v3}) Commit(*m);
  GcOptions none;
  none.retain_versions = 0;
  none.retain_age = std::chrono::seconds(0);

  GcInput in = Input(v3, {});
  in.table_prefix = "";
  EXPECT_TRUE(CollectGarbage(store(), in, none).status().IsInvalid());
  in = Input(format::TableManifest(), {});
  EXPECT_TRUE(CollectGarbage(store(), in, none).status().IsInvalid());
  GcOptions negative = none;
  negative.retain_versions = -1;
  EXPECT_TRUE(CollectGarbage(store(), Input(v3, {}), negative).status().IsInvalid());
  format::ShardManifest bad;
  bad.set_shard_id("a/b");
  EXPECT_TRUE(CollectGarbage(store(), Input(v3, {bad}), none).status().IsInvalid());

  ASSERT_TRUE(store().Put(ManifestKey(2), "not a protobuf \xff\xff").ok());
  auto st = CollectGarbage(store(), Input(v3, {}), none);
  EXPECT_EQ(st.status().code(), StatusCode::kCorruption) << st.status().ToString();
  for (uint64_t v : {1, 2, 3}) EXPECT_TRUE(Exists(ManifestKey(v))) << v;
}

// Rule 6: a scene with garbage of every kind; the run fails at its k-th remove for every k.
// After each failure every file of every table manifest still present exists (and every file
// the full run keeps), and a rerun reaches exactly the state of an uninterrupted run.
class GcCrashTest : public GcTest {
 protected:
  struct Scene {
    format::TableManifest current;
    format::ShardManifest shard;
  };
  Scene Build() {
    Scene s;
    WriteFragment("aaaaaaaa_gen_1", 0, 10);
    WriteFragment("bbbbbbbb_gen_2", 10, 10);
    WriteFragment("eeeeeeee_gen_9", 20, 10);  // abandoned compaction output
    WriteDeletions("_deletions/aaaaaaaa_gen_1-1.bin", 1);
    WriteDeletions("_deletions/aaaaaaaa_gen_1-2.bin", 2);
    WriteIndex("_indices/u/0000000000000001.idx");
    WriteIndex("_indices/u/0000000000000002.idx");
    auto v1 = Manifest(1, kNow - 30 * kDay, 100);
    AddFragment(&v1, "aaaaaaaa_gen_1", "_deletions/aaaaaaaa_gen_1-1.bin");
    AddIndex(&v1, "_indices/u/0000000000000001.idx");
    auto v2 = Manifest(2, kNow - 20 * kDay, 100);
    AddFragment(&v2, "aaaaaaaa_gen_1", "_deletions/aaaaaaaa_gen_1-2.bin");
    AddIndex(&v2, "_indices/u/0000000000000002.idx");
    auto v3 = Manifest(3, kNow - 10 * kDay, 100);
    AddFragment(&v3, "bbbbbbbb_gen_2");
    AddIndex(&v3, "_indices/u/0000000000000002.idx");
    (*v3.mutable_base()->mutable_compacted_generation())["s0"] = 2;
    for (const auto* m : {&v1, &v2, &v3}) Commit(*m);

    WriteShardSSTable("s0", 1, "00000001_gen_1");
    WriteShardSSTable("s0", 2, "00000002_gen_2");
    auto g3 = WriteShardSSTable("s0", 3, "00000003_gen_3");
    WriteShardSSTable("s0", 4, "00000004_gen_4");  // abandoned
    WriteWal("s0", 1, 2, false);
    WriteWal("s0", 2, 0, true);
    WriteWal("s0", 3, 2, false);
    WriteWal("s0", 4, 2, false);
    format::ShardManifest sm;
    sm.set_shard_id("s0");
    sm.set_replay_after_wal_entry_position(3);
    *sm.add_sstables() = g3;
    s.shard = CommitShard(sm);
    format::ShardManifest orphan;
    orphan.set_shard_id("s9");
    CommitShard(orphan);
    WriteWal("s9", 1, 1, false);
    SetMtimeUnder(kTable, kOld);
    s.current = v3;
    return s;
  }
  static GcOptions Options() {
    GcOptions opt;
    opt.retain_versions = 1;
    opt.retain_age = std::chrono::seconds(0);
    return opt;
  }
  /// Files every table manifest present names are all present.
  void ExpectManifestsComplete() {
    for (const auto& key : Keys(std::string(kTable) + "/_versions")) {
      format::TableManifest m;
      ASSERT_TRUE(m.ParseFromString(*local_->Get(key))) << key;
      for (const auto& f : m.base().fragments()) {
        EXPECT_FALSE(Keys(std::string(kTable) + "/data/" + f.path()).empty()) << key;
        if (!f.deletions_path().empty()) {
          EXPECT_TRUE(Exists(std::string(kTable) + "/" + f.deletions_path())) << key;
        }
      }
      for (const auto& i : m.base().indexes()) {
        EXPECT_TRUE(Exists(std::string(kTable) + "/" + i.path())) << key;
      }
    }
  }
};

TEST_F(GcCrashTest, FailedRemoveAtEveryStepLeavesNothingReferencedMissingAndRerunFinishes) {
  // Reference: an uninterrupted run.
  Scene scene = Build();
  const auto before = Keys();
  auto full = CollectGarbage(store(), Input(scene.current, {scene.shard}), Options());
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const auto after = Keys();
  const int64_t total = full->files_removed();
  EXPECT_EQ(total, static_cast<int64_t>(before.size() - after.size()));
  EXPECT_EQ(full->manifests_removed, 2);
  EXPECT_EQ(full->wal_entries_removed, 2);  // 1 and 3; the sentinel at 2 and 4 (above) stay
  EXPECT_GT(full->base_files_removed, 0);
  EXPECT_GT(full->sstable_files_removed, 0);
  EXPECT_GT(full->orphan_files_removed, 0);

  for (int64_t k = 1; k <= total; ++k) {
    SCOPED_TRACE("remove " + std::to_string(k) + " of " + std::to_string(total) + " fails");
    strata::testing::TempDir dir;
    Open(dir.path());
    scene = Build();
    ASSERT_EQ(Keys(), before);
    io::FaultInjectingStore faulty(local_);
    faulty.FailNthRemove(k);
    auto failed = CollectGarbage(faulty, Input(scene.current, {scene.shard}), Options());
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.status().message(), "injected fault: nth remove");
    EXPECT_EQ(faulty.stats().removes, static_cast<uint64_t>(k));
    const auto mid = Keys();
    EXPECT_EQ(static_cast<int64_t>(before.size() - mid.size()), k - 1);
    for (const auto& key : after) {
      EXPECT_TRUE(std::binary_search(mid.begin(), mid.end(), key)) << key;
    }
    ExpectManifestsComplete();

    auto rerun = CollectGarbage(faulty, Input(scene.current, {scene.shard}), Options());
    ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
    EXPECT_EQ(rerun->files_removed(), total - (k - 1));
    EXPECT_EQ(Keys(), after);  // keys are relative to the root: equal across scenes
    ExpectManifestsComplete();
  }
  Open(dir_.path());
}

}  // namespace
}  // namespace strata::base
