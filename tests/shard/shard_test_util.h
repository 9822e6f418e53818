// Helpers for the ShardWriter tests: a shard over a FaultInjectingStore wrapping a local
// store in a temporary directory, small option sets, and readers of live ids.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../io/storage_test_util.h"
#include "../live_rows_util.h"
#include "arrow/builder.h"
#include "io/fault_injecting_store.h"
#include "io/local_object_store.h"
#include "shard/shard_writer.h"

namespace strata::shard::testing {

inline constexpr char kTable[] = "default/t";
inline constexpr char kShardId[] = "s1";

/// A local store in a temp dir, wrapped by a fault injector.
struct ShardFixture {
  strata::testing::TempDir dir;
  std::shared_ptr<io::LocalObjectStore> local = *io::LocalObjectStore::Open(dir.path());
  std::shared_ptr<io::FaultInjectingStore> faults =
      std::make_shared<io::FaultInjectingStore>(local);

  Result<std::unique_ptr<ShardWriter>> Open(ShardWriterOptions o = {}) {
    return ShardWriter::Open(faults, kTable, kShardId, strata::testing::TestSchema(), o);
  }
  std::unique_ptr<ShardWriter> OpenOrDie(ShardWriterOptions o = {}) {
    auto w = Open(std::move(o));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }
  std::string shard_prefix() const { return ShardPrefix(kTable, kShardId); }
};

/// Live ids of the writer's snapshot, sorted.
inline std::vector<int64_t> SortedIds(const ShardWriter& w) {
  auto snap = w.Snapshot();
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  if (!snap.ok()) return {};
  auto ids = strata::testing::Ids(strata::testing::Live(**snap));
  std::sort(ids.begin(), ids.end());
  return ids;
}

inline Deadline In(std::chrono::milliseconds ms) { return Clock::now() + ms; }

/// A primary-key table (id int64 key, v int64 nullable) for the liveness and Apply tests.
inline arrow::SchemaPtr KvSchema() {
  return std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::int64(), true)});
}

inline arrow::RecordBatchPtr KvRows(const std::vector<int64_t>& ids,
                                    const std::vector<std::optional<int64_t>>& vs) {
  std::vector<std::optional<int64_t>> idv(ids.begin(), ids.end());
  return std::make_shared<arrow::RecordBatch>(
      KvSchema(), static_cast<int64_t>(ids.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(idv), arrow::MakeInt64Array(vs)});
}

/// Storage rows of the kv table: (id, v, tombstone).
inline arrow::RecordBatchPtr KvStorage(const ShardWriter& w, const std::vector<int64_t>& ids,
                                       const std::vector<std::optional<int64_t>>& vs,
                                       const std::vector<bool>& tombstones) {
  arrow::RecordBatchBuilder b(w.storage_schema());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(b.column(0)->AppendInt(ids[i]).ok());
    EXPECT_TRUE((vs[i] ? b.column(1)->AppendInt(*vs[i]) : b.column(1)->AppendNull()).ok());
    EXPECT_TRUE(b.column(2)->AppendBool(tombstones[i]).ok());
  }
  return *b.Finish();
}

inline Result<std::unique_ptr<ShardWriter>> OpenKv(ShardFixture& f, ShardWriterOptions o = {}) {
  o.primary_key = {"id"};
  return ShardWriter::Open(f.faults, kTable, kShardId, KvSchema(), o);
}

inline std::map<int64_t, std::optional<int64_t>> KvMap(const ShardWriter& w) {
  std::map<int64_t, std::optional<int64_t>> out;
  auto snap = *w.Snapshot();
  for (const auto& b : strata::testing::Live(*snap)) {
    arrow::Array id = b->column(0), v = b->column(1);
    for (int64_t i = 0; i < b->num_rows(); ++i) {
      EXPECT_EQ(out.count(id.Value<int64_t>(i)), 0u) << "duplicate key " << id.Value<int64_t>(i);
      out[id.Value<int64_t>(i)] =
          v.IsNull(i) ? std::nullopt : std::optional<int64_t>(v.Value<int64_t>(i));
    }
  }
  return out;
}

}  // namespace strata::shard::testing
