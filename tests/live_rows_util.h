// Tests read every live row of a snapshot through shard::LiveBatches (the production read
// path never materialises them).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "shard/shard_writer.h"
#include "table/table.h"

namespace strata::testing {

inline std::vector<arrow::RecordBatchPtr> Live(const shard::ShardSnapshot& s,
                                               bool storage = false) {
  auto r = shard::LiveBatches(s, storage);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<arrow::RecordBatchPtr>{};
}

inline std::vector<arrow::RecordBatchPtr> Live(const table::TableSnapshot& s,
                                               bool storage = false) {
  if (s.shard == nullptr) return {};
  return Live(*s.shard, storage);
}

}  // namespace strata::testing
