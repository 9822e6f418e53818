// Storage failures without a restart (issue 19): the free-space floor, the background reopen of
// a poisoned shard writer (table/writer_recovery.h), and a fault campaign: ENOSPC and EIO on
// each kind of put in turn (WAL entry, SSTable file, SSTable index file, shard manifest, table
// manifest, base fragment, base index checkpoint), a GC remove failure, a slow disk and a store
// failing for 5 s. Each case checks that the client saw only clear errors, that writes resume
// with no restart, and that every acknowledged row is present exactly once, before and after
// a reopen. Real filesystems: a tmpfs the test mounts (full, read-only at start and mid-run)
// when the test may mount; otherwise those cases are skipped and the simulated small disk
// below covers the same paths.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "io/fault_injecting_store.h"
#include "io/free_space.h"
#include "io/local_object_store.h"
#include "table/local_catalog.h"
#include "table/primary_key.h"

namespace strata::table {
namespace {

using namespace std::chrono_literals;

arrow::SchemaPtr PadSchema() {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("pad", arrow::utf8(), true)});
  return *DeclarePrimaryKey(s, {"id"});
}

// Rows [first, first + n) with a `pad_bytes` string each, of pseudo-random letters (LZ4 does
// not shrink them much, as it does not shrink vectors: SSTables take about the WAL's bytes).
arrow::RecordBatchPtr PadRows(int64_t first, int64_t n, size_t pad_bytes) {
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> pads;
  uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(first + 1);
  for (int64_t i = 0; i < n; ++i) {
    ids.push_back(first + i);
    std::string pad(pad_bytes, 'a');
    for (char& ch : pad) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      ch = static_cast<char>('a' + x % 26);
    }
    pads.push_back(std::move(pad));
  }
  return std::make_shared<arrow::RecordBatch>(
      PadSchema(), n,
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeUtf8Array(pads)});
}

// The live ids of `t`; a duplicate fails the test.
std::set<int64_t> LiveIds(Table& t) {
  std::set<int64_t> out;
  const TableSnapshot snap = t.Snapshot();
  for (const auto& b : strata::testing::Live(snap)) {
    arrow::Array id = b->column(0);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      EXPECT_TRUE(out.insert(id.Value<int64_t>(i)).second)
          << "duplicate id " << id.Value<int64_t>(i);
    }
  }
  EXPECT_EQ(snap.num_rows, static_cast<int64_t>(out.size()));
  return out;
}

std::string State(Table& t) { return t.DescribeShards().at(0).state; }

// Inserts 50-row batches of 4 KiB pads from *next until one fails (at most 2,000 batches);
// returns that error and records the acknowledged ids.
Status FillUntilRefused(Table& t, int64_t* next, std::set<int64_t>* acked) {
  for (int i = 0; i < 2000; ++i) {
    auto r = t.Insert({PadRows(*next, 50, 4096)});
    const int64_t first = *next;
    *next += 50;
    if (!r.ok()) return r.status();
    for (int64_t id = first; id < first + 50; ++id) acked->insert(id);
  }
  return Status::OK();
}

// Waits until the shard writer is open again (recovered); false after `limit`.
bool WaitOpen(Table& t, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (State(t) == "open") return true;
    std::this_thread::sleep_for(10ms);
  }
  return State(t) == "open";
}

// A store with a capacity, like a small disk: a put that would take the bytes held past it
// fails with the text of ENOSPC and writes nothing. Removes give the space back.
class SmallDisk final : public io::ObjectStore {
 public:
  SmallDisk(std::shared_ptr<io::ObjectStore> inner, int64_t capacity)
      : inner_(std::move(inner)), capacity_(capacity) {}
  io::FreeSpaceFloor::Space Space() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {capacity_ - used_, capacity_};
  }
  void SetCapacity(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    capacity_ = bytes;
  }
  Status Put(const std::string& key, std::string_view data) override {
    return Write(key, data, false);
  }
  Status PutIfAbsent(const std::string& key, std::string_view data) override {
    return Write(key, data, true);
  }
  Result<std::string> Get(const std::string& key) override { return inner_->Get(key); }
  Result<std::string> GetRange(const std::string& key, int64_t offset, int64_t length) override {
    return inner_->GetRange(key, offset, length);
  }
  Result<io::ObjectMeta> Head(const std::string& key) override { return inner_->Head(key); }
  Result<std::vector<io::ObjectMeta>> List(const std::string& prefix) override {
    return inner_->List(prefix);
  }
  Result<std::vector<std::string>> ListChildren(const std::string& prefix) override {
    return inner_->ListChildren(prefix);
  }
  Status Remove(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    STRATA_RETURN_IF_ERROR(inner_->Remove(key));
    auto it = sizes_.find(key);
    if (it != sizes_.end()) {
      used_ -= it->second;
      sizes_.erase(it);
    }
    return Status::OK();
  }
  Status RenamePrefix(const std::string& from, const std::string& to) override {
    return inner_->RenamePrefix(from, to);
  }
  bool SupportsRenamePrefix() const override { return inner_->SupportsRenamePrefix(); }

 private:
  Status Write(const std::string& key, std::string_view data, bool if_absent) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.find(key);
    const int64_t old = it == sizes_.end() ? 0 : it->second;
    if (used_ - old + static_cast<int64_t>(data.size()) > capacity_) {
      return Status::IOError("write '" + key + "': No space left on device");
    }
    STRATA_RETURN_IF_ERROR(if_absent ? inner_->PutIfAbsent(key, data) : inner_->Put(key, data));
    used_ += static_cast<int64_t>(data.size()) - old;
    sizes_[key] = static_cast<int64_t>(data.size());
    return Status::OK();
  }

  const std::shared_ptr<io::ObjectStore> inner_;
  mutable std::mutex mu_;  // guards everything below
  int64_t capacity_;
  int64_t used_ = 0;
  std::map<std::string, int64_t> sizes_;
};

RecoveryOptions FastRecovery() {
  RecoveryOptions r;
  r.poll = 20ms;
  r.initial_backoff = 20ms;
  r.max_backoff = 200ms;
  return r;
}

// --- The free-space floor ------------------------------------------------------------------

TEST(StorageFailure, WritesRefusedAtTheFloorResumeOnceCompactionAndGcFreeSpace) {
  strata::testing::TempDir dir;
  auto disk = std::make_shared<SmallDisk>(*io::LocalObjectStore::Open(dir.path()), 24ll << 20);
  shard::ShardWriterOptions so;
  so.max_memtable_bytes = 2ll << 20;
  so.free_space = std::make_shared<io::FreeSpaceFloor>(
      [disk]() -> Result<io::FreeSpaceFloor::Space> { return disk->Space(); }, 6ll << 20,
      "the test disk");
  base::CompactionOptions co;
  co.background = false;              // the test compacts when it wants space back
  co.max_rows_per_compaction = 1000;  // each compaction writes ~4 MiB, under the floor
  LocalCatalog catalog(disk, so, co, FastRecovery());
  auto t = *catalog.CreateTable("default", "t", PadSchema(), {}, CreateMode::kCreate);

  std::set<int64_t> acked;
  int64_t next = 0;
  const Status refused = FillUntilRefused(*t, &next, &acked);
  ASSERT_EQ(refused.code(), StatusCode::kInsufficientStorage) << refused.ToString();
  EXPECT_NE(refused.message().find("below the floor of 6291456 bytes"), std::string::npos)
      << refused.message();
  EXPECT_GT(acked.size(), 1000u);
  // Refused up front: the writer is not poisoned, nothing of the refused batch was written,
  // and the next write is refused the same way.
  EXPECT_EQ(State(*t), "open");
  // (A background flush may free WAL space meanwhile: then the write is acknowledged and must
  // be there, and the floor is no longer crossed.)
  const Status at_floor = t->Insert({PadRows(next, 50, 4096)}).status();
  if (at_floor.ok()) {
    for (int64_t id = next; id < next + 50; ++id) acked.insert(id);
    next += 50;
  } else {
    EXPECT_EQ(at_floor.code(), StatusCode::kInsufficientStorage) << at_floor.ToString();
    EXPECT_TRUE(catalog.FreeSpace()->below);
    EXPECT_GE(catalog.FreeSpace()->refusals, 2u);
  }
  EXPECT_EQ(LiveIds(*t), acked);

  // Flush, compaction and GC run at the floor: GC frees the flushed WAL, each compaction
  // then moves SSTables into the base and GC removes them.
  ASSERT_TRUE(t->Flush(shard::Clock::now() + 30s).ok());
  auto gc = t->CollectGarbage();
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  int64_t freed = gc->bytes_removed;
  int compactions = 0;
  while (!t->DescribeShards().at(0).sstables.empty() && compactions < 20) {
    auto c = t->Compact(shard::Clock::now() + 30s);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ++compactions;
    gc = t->CollectGarbage();
    ASSERT_TRUE(gc.ok()) << gc.status().ToString();
    freed += gc->bytes_removed;
  }
  EXPECT_TRUE(t->DescribeShards().at(0).sstables.empty());
  EXPECT_GE(compactions, 2);
  EXPECT_GT(freed, 6ll << 20);
  auto again = t->Insert({PadRows(next, 50, 4096)});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (int64_t id = next; id < next + 50; ++id) acked.insert(id);
  EXPECT_FALSE(catalog.FreeSpace()->below);
  EXPECT_EQ(LiveIds(*t), acked);
}

TEST(StorageFailure, FloorDefaultsToTwoHundredFiftySixMebibytesOrFivePercent) {
  EXPECT_EQ(io::FreeSpaceFloor::DefaultFloor(1ll << 40), 256ll << 20);
  EXPECT_EQ(io::FreeSpaceFloor::DefaultFloor(40ll << 20), 2ll << 20);
  EXPECT_EQ(io::FreeSpaceFloor::DefaultFloor(0), 256ll << 20);
  // A defaulted floor is derived from the probed filesystem size.
  io::FreeSpaceFloor floor(
      []() -> Result<io::FreeSpaceFloor::Space> {
        return io::FreeSpaceFloor::Space{1ll << 20, 40ll << 20};
      },
      -1, "a 40 MiB disk");
  EXPECT_EQ(floor.Check().code(), StatusCode::kInsufficientStorage);
  EXPECT_EQ(floor.state().floor_bytes, 2ll << 20);
  // The default follows the filesystem when it grows.
  std::atomic<int64_t> total{40ll << 20};
  io::FreeSpaceFloor growing(
      [&total]() -> Result<io::FreeSpaceFloor::Space> {
        return io::FreeSpaceFloor::Space{1ll << 20, total.load()};
      },
      -1, "a growing disk");
  EXPECT_FALSE(growing.Check().ok());
  total = 1ll << 40;
  EXPECT_FALSE(growing.Check().ok());
  EXPECT_EQ(growing.state().floor_bytes, 256ll << 20);
  // A disabled floor refuses nothing but still reports the free space (Refresh).
  io::FreeSpaceFloor off(
      []() -> Result<io::FreeSpaceFloor::Space> {
        return io::FreeSpaceFloor::Space{5, 40ll << 20};
      },
      0, "a full disk, no floor");
  EXPECT_TRUE(off.Check().ok());
  off.Refresh();
  EXPECT_EQ(off.state().free_bytes, 5);
  EXPECT_FALSE(off.state().below);
  // A failing probe never refuses writes.
  io::FreeSpaceFloor broken(
      []() -> Result<io::FreeSpaceFloor::Space> { return Status::IOError("statvfs failed"); },
      1 << 20, "nowhere");
  EXPECT_TRUE(broken.Check().ok());
}

// --- Recovery of a poisoned writer ---------------------------------------------------------

TEST(StorageFailure, FullDiskWithoutAFloorIsNotReopenedUntilSpaceReturns) {
  strata::testing::TempDir dir;
  auto disk = std::make_shared<SmallDisk>(*io::LocalObjectStore::Open(dir.path()), 8ll << 20);
  shard::ShardWriterOptions so;  // no floor
  LocalCatalog catalog(disk, so, {}, FastRecovery());
  auto t = *catalog.CreateTable("default", "t", PadSchema(), {}, CreateMode::kCreate);
  std::set<int64_t> acked;
  int64_t next = 0;
  const Status failed = FillUntilRefused(*t, &next, &acked);
  EXPECT_NE(failed.message().find("No space left on device"), std::string::npos)
      << failed.ToString();
  // What is left takes no 1 MiB probe: no reopen that the next write would poison again.
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(State(*t), "poisoned");
  const WriterRecoveryInfo during = t->RecoveryInfo();
  EXPECT_EQ(during.recoveries, 0u);
  EXPECT_GE(during.attempts, 2u);
  EXPECT_NE(during.last_error.find("recovery probe write"), std::string::npos) << during.last_error;
  disk->SetCapacity(64ll << 20);
  ASSERT_TRUE(WaitOpen(*t));
  ASSERT_TRUE(t->Insert({PadRows(next, 50, 4096)}).ok());
  for (int64_t id = next; id < next + 50; ++id) acked.insert(id);
  EXPECT_EQ(LiveIds(*t), acked);
  EXPECT_EQ(t->RecoveryInfo().recoveries, 1u);
}

TEST(StorageFailure, PoisonedWriterWhoseShardAnotherServerClaimedBecomesFenced) {
  strata::testing::TempDir dir;
  auto local = *io::LocalObjectStore::Open(dir.path());
  auto faults = std::make_shared<io::FaultInjectingStore>(local);
  LocalCatalog a(faults, {}, {}, FastRecovery());
  auto ta = *a.CreateTable("default", "t", PadSchema(), {PadRows(0, 10, 8)}, CreateMode::kCreate);
  faults->SetFailAllPuts(true);
  EXPECT_FALSE(ta->Insert({PadRows(10, 10, 8)}).ok());
  EXPECT_EQ(State(*ta), "poisoned");
  // A second server takes the shard over while the first is poisoned, and writes.
  LocalCatalog b(local, {}, {}, FastRecovery());
  auto tb = *b.GetTable("default", "t");
  ASSERT_TRUE(tb->Insert({PadRows(20, 10, 8)}).ok());
  // The store heals: the first server must not claim the shard back.
  faults->SetFailAllPuts(false);
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (State(*ta) != "fenced" && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(State(*ta), "fenced");
  EXPECT_EQ(ta->RecoveryInfo().recoveries, 0u);
  EXPECT_EQ(ta->Insert({PadRows(30, 10, 8)}).status().code(), StatusCode::kFenced);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(State(*tb), "open");
  ASSERT_TRUE(tb->Insert({PadRows(40, 10, 8)}).ok());
  EXPECT_EQ(LiveIds(*tb).size(), 30u);
}

TEST(StorageFailure, ServerWhoseShardAnotherServerClaimedIsFencedWithoutAWrite) {
  strata::testing::TempDir dir;
  auto local = *io::LocalObjectStore::Open(dir.path());
  RecoveryOptions checking = FastRecovery();
  checking.owner_check = 50ms;
  LocalCatalog a(local, {}, {}, checking);
  auto ta = *a.CreateTable("default", "t", PadSchema(), {PadRows(0, 10, 8)}, CreateMode::kCreate);
  std::this_thread::sleep_for(300ms);  // several owner checks while a owns the shard
  EXPECT_EQ(State(*ta), "open");
  // A second server claims the shard; the first one writes nothing.
  LocalCatalog b(local, {}, {}, FastRecovery());
  auto tb = *b.GetTable("default", "t");
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (State(*ta) != "fenced" && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(State(*ta), "fenced");
  EXPECT_EQ(ta->Insert({PadRows(10, 10, 8)}).status().code(), StatusCode::kFenced);
  EXPECT_EQ(LiveIds(*ta).size(), 10u);  // reads keep working (as of the fence)
  ASSERT_TRUE(tb->Insert({PadRows(20, 10, 8)}).ok());
  EXPECT_EQ(LiveIds(*tb).size(), 20u);
  EXPECT_EQ(State(*tb), "open");
}

TEST(StorageFailure, WithoutOwnerChecksOnlyAWriteFindsTheFence) {
  strata::testing::TempDir dir;
  auto local = *io::LocalObjectStore::Open(dir.path());
  RecoveryOptions no_checks = FastRecovery();
  no_checks.owner_check = 0ms;
  LocalCatalog a(local, {}, {}, no_checks);
  auto ta = *a.CreateTable("default", "t", PadSchema(), {PadRows(0, 10, 8)}, CreateMode::kCreate);
  LocalCatalog b(local, {}, {}, FastRecovery());
  auto tb = *b.GetTable("default", "t");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(State(*ta), "open");
  EXPECT_EQ(ta->Insert({PadRows(10, 10, 8)}).status().code(), StatusCode::kFenced);
  EXPECT_EQ(State(*ta), "fenced");
}

TEST(StorageFailure, TableThatFailsToOpenIsReportedAndOpenedInTheBackground) {
  strata::testing::TempDir dir;
  auto local = *io::LocalObjectStore::Open(dir.path());
  {
    LocalCatalog first(local, {}, {}, FastRecovery());
    ASSERT_TRUE(
        first.CreateTable("default", "t", PadSchema(), {PadRows(0, 10, 8)}, CreateMode::kCreate)
            .ok());
  }
  auto faults = std::make_shared<io::FaultInjectingStore>(local);
  faults->SetFailAllPuts(true, Status::IOError("create: Read-only file system"));
  LocalCatalog catalog(faults, {}, {}, FastRecovery());
  auto failed = catalog.GetTable("default", "t");
  ASSERT_FALSE(failed.ok());
  auto failures = catalog.OpenFailures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].name, "t");
  EXPECT_NE(failures[0].status.message().find("Read-only file system"), std::string::npos);
  EXPECT_TRUE(catalog.OpenTables().empty());
  faults->SetFailAllPuts(false);
  const auto end = std::chrono::steady_clock::now() + 5s;  // first retry after 1 s
  while (!catalog.OpenFailures().empty() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(catalog.OpenFailures().empty());
  ASSERT_EQ(catalog.OpenTables().size(), 1u);  // opened by the supervisor, no request
  EXPECT_EQ(LiveIds(*catalog.OpenTables()[0].table).size(), 10u);
}

struct Campaign {
  strata::testing::TempDir dir;
  std::shared_ptr<io::FaultInjectingStore> faults =
      std::make_shared<io::FaultInjectingStore>(*io::LocalObjectStore::Open(dir.path()));
  std::unique_ptr<LocalCatalog> catalog;
  std::shared_ptr<Table> table;
  std::string shard_prefix;

  std::mutex mu;            // guards acked, attempted, errors
  std::set<int64_t> acked;  // ids of acknowledged inserts
  int64_t attempted = 0;    // ids below this were sent
  std::map<StatusCode, int> errors;
  std::atomic<bool> stop{false};

  static shard::ShardWriterOptions Shard() {
    shard::ShardWriterOptions so;
    so.max_memtable_rows = 300;  // a flush every 6 batches
    so.flush_retries = 2;
    so.flush_retry_backoff = 20ms;
    so.write_stall_timeout = 2000ms;
    return so;
  }
  static base::CompactionOptions Compaction() {
    base::CompactionOptions co;
    co.l0_trigger_count = 2;
    co.poll_interval = 50ms;
    co.min_checkpoint_rows = 200;
    co.gc_interval = std::chrono::seconds(1);
    return co;
  }
  void Open(bool create, bool background = true) {
    table.reset();
    catalog.reset();
    base::CompactionOptions co = Compaction();
    co.background = background;
    catalog = std::make_unique<LocalCatalog>(faults, Shard(), co, FastRecovery());
    auto t = create ? catalog->CreateTable("default", "t", PadSchema(), {}, CreateMode::kCreate)
                    : catalog->GetTable("default", "t");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table = *t;
    shard_prefix = "default/t/_mem_wal/" + table->DescribeShards().at(0).shard_id;
  }
  // Inserts 50-row batches until stopped, recording what was acknowledged and every error.
  void Writer() {
    while (!stop.load()) {
      int64_t first;
      {
        std::lock_guard<std::mutex> lock(mu);
        first = attempted;
        attempted += 50;
      }
      auto r = table->Insert({PadRows(first, 50, 64)});
      std::lock_guard<std::mutex> lock(mu);
      if (r.ok()) {
        for (int64_t id = first; id < first + 50; ++id) acked.insert(id);
      } else {
        ++errors[r.status().code()];
      }
      std::this_thread::sleep_for(2ms);
    }
  }
  // Every acknowledged id exactly once; ids present but never acknowledged were at least sent
  // (a failed put whose WAL entry landed: an unknown outcome).
  void Check(const std::string& when) {
    SCOPED_TRACE(when);
    const std::set<int64_t> live = LiveIds(*table);
    std::lock_guard<std::mutex> lock(mu);
    for (int64_t id : acked) ASSERT_TRUE(live.count(id)) << "acknowledged id " << id << " lost";
    for (int64_t id : live) ASSERT_LT(id, attempted) << "id never sent";
  }
};

TEST(StorageFailure, PoisonedWriterRecoversByItselfAfterTheStoreFailsForFiveSeconds) {
  Campaign c;
  ASSERT_NO_FATAL_FAILURE(c.Open(true));
  std::thread writer([&] { c.Writer(); });
  std::this_thread::sleep_for(300ms);
  c.faults->SetFailAllPuts(true, Status::IOError("write: Input/output error"));
  std::this_thread::sleep_for(500ms);
  // Poisoned: writes fail with a clear error, reads go on, recovery keeps trying.
  EXPECT_EQ(State(*c.table), "poisoned");
  EXPECT_EQ(c.table->Insert({PadRows(1 << 30, 1, 8)}).status().code(), StatusCode::kWriterPoisoned);
  const size_t acked_before = [&] {
    std::lock_guard<std::mutex> lock(c.mu);
    return c.acked.size();
  }();
  EXPECT_EQ(LiveIds(*c.table).size(), acked_before);
  std::this_thread::sleep_for(4500ms);
  const WriterRecoveryInfo during = c.table->RecoveryInfo();
  EXPECT_GE(during.attempts, 5u);  // 20, 40, 80, 160, 200 ms ... within 5 s
  EXPECT_EQ(during.recoveries, 0u);
  EXPECT_NE(during.last_error.find("recovery probe"), std::string::npos) << during.last_error;
  EXPECT_EQ(State(*c.table), "poisoned");

  const auto healed = std::chrono::steady_clock::now();
  c.faults->SetFailAllPuts(false);
  ASSERT_TRUE(WaitOpen(*c.table));
  const auto reopened_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - healed)
                               .count();
  EXPECT_LT(reopened_ms, 2000);  // max_backoff 200 ms + one reopen
  std::this_thread::sleep_for(300ms);
  c.stop = true;
  writer.join();
  EXPECT_EQ(c.table->RecoveryInfo().recoveries, 1u);
  EXPECT_GT(c.errors[StatusCode::kWriterPoisoned], 0);
  for (const auto& [code, n] : c.errors) {
    EXPECT_TRUE(code == StatusCode::kWriterPoisoned || code == StatusCode::kIOError)
        << StatusCodeName(code) << " x" << n;
  }
  {
    std::lock_guard<std::mutex> lock(c.mu);
    EXPECT_GT(c.acked.size(), acked_before) << "writes resumed without a restart";
  }
  ASSERT_NO_FATAL_FAILURE(c.Check("after recovery"));
  ASSERT_NO_FATAL_FAILURE(c.Open(false));
  ASSERT_NO_FATAL_FAILURE(c.Check("after a reopen"));
}

struct FaultCase {
  const char* what;
  const char* key_contains;  // under the table prefix ("" = the shard prefix + "_gen_")
  Status error;
};

TEST(StorageFailure, FaultCampaignOnEveryKindOfPut) {
  const Status enospc = Status::IOError("write: No space left on device");
  const Status eio = Status::IOError("fsync: Input/output error");
  const std::vector<std::pair<const char*, const char*>> kinds = {
      {"WAL entry", "/wal/"},
      {"SSTable file", "_gen_"},
      {"SSTable index file", "/indices/"},
      {"shard manifest", "/manifest/"},
      {"table manifest", "/_versions/"},
      {"base fragment", "/data/"},
      {"base index checkpoint", "/_indices/"},
  };
  for (const auto& [what, contains] : kinds) {
    for (const Status& error : {enospc, eio}) {
      SCOPED_TRACE(std::string(what) + " / " + error.message());
      Campaign c;
      ASSERT_NO_FATAL_FAILURE(c.Open(true));
      index::IndexSpec btree;
      btree.name = "id_idx";
      btree.column = "id";
      btree.kind = index::IndexKind::kBTree;
      ASSERT_TRUE(c.table->CreateIndex(btree).ok());
      std::thread writer([&] { c.Writer(); });
      std::this_thread::sleep_for(300ms);
      io::PutFault fault;
      fault.key_contains = contains;
      if (std::string(contains) == "_gen_") fault.key_prefix = c.shard_prefix;
      fault.error = error;
      const int id = c.faults->AddFault(fault);
      std::this_thread::sleep_for(1000ms);  // past the flush retries (20 + 40 ms)
      c.faults->RemoveFault(id);
      const bool recovered = WaitOpen(*c.table);
      std::this_thread::sleep_for(300ms);
      c.stop = true;
      writer.join();
      ASSERT_TRUE(recovered) << "still " << State(*c.table);
      // Writes work again, and compaction catches up.
      ASSERT_TRUE(c.table->Insert({PadRows(1 << 30, 1, 8)}).ok());
      {
        std::lock_guard<std::mutex> lock(c.mu);
        c.acked.insert(1 << 30);
        c.attempted = (1 << 30) + 1;
      }
      ASSERT_TRUE(c.table->Flush(shard::Clock::now() + 30s).ok());
      for (int i = 0; i < 100 && c.table->DescribeShards().at(0).sstables.size() > 2; ++i) {
        std::this_thread::sleep_for(50ms);
      }
      for (const auto& [code, n] : c.errors) {
        EXPECT_TRUE(code == StatusCode::kWriterPoisoned || code == StatusCode::kIOError)
            << StatusCodeName(code) << " x" << n;
      }
      EXPECT_GT(c.faults->stats().puts_injected, 0u);
      ASSERT_NO_FATAL_FAILURE(c.Check("after the fault"));
      ASSERT_NO_FATAL_FAILURE(c.Open(false));
      ASSERT_NO_FATAL_FAILURE(c.Check("after a reopen"));
    }
  }
}

TEST(StorageFailure, GcRemoveFailureIsRetriedAndLosesNothing) {
  Campaign c;
  ASSERT_NO_FATAL_FAILURE(c.Open(true, /*background=*/false));
  for (int64_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(c.table->Insert({PadRows(i * 50, 50, 64)}).ok());
    for (int64_t id = i * 50; id < i * 50 + 50; ++id) c.acked.insert(id);
  }
  c.attempted = 1000;
  ASSERT_TRUE(c.table->Flush(shard::Clock::now() + 30s).ok());
  auto compacted = c.table->Compact(shard::Clock::now() + 30s);
  ASSERT_TRUE(compacted.ok()) << compacted.status().ToString();
  // Garbage now: the flushed WAL and the compacted SSTables. The first remove fails: the pass
  // stops with that error; the next pass removes everything.
  c.faults->FailNthRemove(1, Status::IOError("unlink: Input/output error"));
  auto first = c.table->CollectGarbage();
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.status().message().find("unlink: Input/output error"), std::string::npos);
  EXPECT_EQ(c.faults->stats().removes_injected, 1u);
  auto second = c.table->CollectGarbage();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_GT(second->files_removed(), 10);
  EXPECT_EQ(State(*c.table), "open");
  ASSERT_NO_FATAL_FAILURE(c.Check("after GC"));
  ASSERT_NO_FATAL_FAILURE(c.Open(false));
  ASSERT_NO_FATAL_FAILURE(c.Check("after a reopen"));
}

TEST(StorageFailure, SlowDiskIsABoundedWaitNotAnError) {
  Campaign c;
  ASSERT_NO_FATAL_FAILURE(c.Open(true));
  // Every WAL put takes 300 ms, past a 100 ms write-stall timeout: puts wait for their entry.
  c.faults->DelayPutsContaining("/wal/", 300ms);
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = c.table->Insert({PadRows(i * 50, 50, 64)});
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GE(ms, 290);
    EXPECT_LT(ms, 5000);
    for (int64_t id = i * 50; id < i * 50 + 50; ++id) c.acked.insert(id);
  }
  c.attempted = 150;
  EXPECT_EQ(State(*c.table), "open");
  ASSERT_NO_FATAL_FAILURE(c.Check("slow disk"));
}

// --- Real filesystems (tmpfs), when this process may mount --------------------------------

class Tmpfs {
 public:
  explicit Tmpfs(int64_t bytes) {
    mounted_ = ::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0,
                       ("size=" + std::to_string(bytes)).c_str()) == 0;
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& path() const { return dir_.path(); }
  bool Remount(const std::string& opts) {
    return ::mount("tmpfs", dir_.path().c_str(), "tmpfs",
                   MS_REMOUNT | (opts == "ro" ? MS_RDONLY : 0),
                   opts == "ro" ? nullptr : opts.c_str()) == 0;
  }

 private:
  strata::testing::TempDir dir_;
  bool mounted_ = false;
};

TEST(StorageFailure, RealFullFilesystemPoisonsThenRecoversWhenSpaceReturns) {
  Tmpfs fs(8ll << 20);
  if (!fs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (no CAP_SYS_ADMIN)";
  shard::ShardWriterOptions so;
  so.flush_retries = 1;
  so.flush_retry_backoff = 10ms;
  auto catalog = Catalog::Open(fs.path(), so, {}, FastRecovery());  // no floor: hit ENOSPC
  ASSERT_TRUE(catalog.ok());
  auto t = *(*catalog)->CreateTable("default", "t", PadSchema(), {}, CreateMode::kCreate);
  std::set<int64_t> acked;
  int64_t next = 0;
  const Status failed = FillUntilRefused(*t, &next, &acked);
  EXPECT_NE(failed.message().find("No space left on device"), std::string::npos)
      << failed.ToString();
  EXPECT_TRUE(failed.code() == StatusCode::kIOError || failed.code() == StatusCode::kWriterPoisoned)
      << failed.ToString();
  // (The writer may already be open again: a probe and a fence sentinel fit in what is left,
  // and the next large write poisons it again. Without a floor that is all it can do.)
  EXPECT_EQ(LiveIds(*t), acked);
  ASSERT_TRUE(fs.Remount("size=64m"));
  ASSERT_TRUE(WaitOpen(*t));
  ASSERT_TRUE(t->Insert({PadRows(next, 50, 4096)}).ok());
  for (int64_t id = next; id < next + 50; ++id) acked.insert(id);
  EXPECT_EQ(LiveIds(*t), acked);
}

TEST(StorageFailure, RealFilesystemWithAFloorRefusesBeforeItIsFull) {
  Tmpfs fs(16ll << 20);
  if (!fs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (no CAP_SYS_ADMIN)";
  shard::ShardWriterOptions so;
  so.free_space = io::FreeSpaceFloor::ForDirectory(fs.path(), 4ll << 20);
  auto catalog = Catalog::Open(fs.path(), so, {}, FastRecovery());
  ASSERT_TRUE(catalog.ok());
  auto t = *(*catalog)->CreateTable("default", "t", PadSchema(), {}, CreateMode::kCreate);
  int64_t next = 0;
  std::set<int64_t> acked;
  const Status refused = FillUntilRefused(*t, &next, &acked);
  EXPECT_EQ(refused.code(), StatusCode::kInsufficientStorage) << refused.ToString();
  EXPECT_EQ(State(*t), "open");  // never poisoned: the floor kept the headroom
  ASSERT_TRUE(fs.Remount("size=64m"));
  ASSERT_TRUE(t->Insert({PadRows(next, 50, 4096)}).ok());  // no restart, no wait
  for (int64_t id = next; id < next + 50; ++id) acked.insert(id);
  EXPECT_EQ(LiveIds(*t), acked);
}

TEST(StorageFailure, ReadOnlyDataDirectoryAtStartAndMidRun) {
  Tmpfs fs(64ll << 20);
  if (!fs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (no CAP_SYS_ADMIN)";
  std::set<int64_t> acked;
  {
    auto catalog = Catalog::Open(fs.path(), {}, {}, FastRecovery());
    auto t = *(*catalog)->CreateTable("default", "t", PadSchema(), {PadRows(0, 50, 64)},
                                      CreateMode::kCreate);
    for (int64_t id = 0; id < 50; ++id) acked.insert(id);
  }
  // Read-only at start: opening the table (a new writer epoch) fails with a clear error; once
  // writable, the next request opens it (no restart).
  ASSERT_TRUE(fs.Remount("ro"));
  auto catalog = Catalog::Open(fs.path(), {}, {}, FastRecovery());
  ASSERT_TRUE(catalog.ok());
  auto ro = (*catalog)->GetTable("default", "t");
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("Read-only file system"), std::string::npos)
      << ro.status().ToString();
  ASSERT_TRUE(fs.Remount("rw"));
  auto t = (*catalog)->GetTable("default", "t");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(LiveIds(**t), acked);
  // Read-only mid-run: the next write poisons the writer; reads go on; rw -> writes resume.
  ASSERT_TRUE(fs.Remount("ro"));
  auto failed = (*t)->Insert({PadRows(50, 50, 64)});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(State(**t), "poisoned");
  EXPECT_EQ(LiveIds(**t), acked);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(State(**t), "poisoned");  // the probe write fails while read-only
  ASSERT_TRUE(fs.Remount("rw"));
  ASSERT_TRUE(WaitOpen(**t));
  ASSERT_TRUE((*t)->Insert({PadRows(100, 50, 64)}).ok());
  for (int64_t id = 100; id < 150; ++id) acked.insert(id);
  const std::set<int64_t> live = LiveIds(**t);
  for (int64_t id : acked) EXPECT_TRUE(live.count(id)) << id;
  EXPECT_LE(live.size(), acked.size() + 50);  // the failed batch only if its entry landed
}

}  // namespace
}  // namespace strata::table
