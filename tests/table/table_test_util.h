// Helpers shared by the table tests: a scratch folder on /dev/shm and the bucket spec on `id`.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "table/lsm_write_spec.h"

namespace strata::testing {

// A temporary folder on /dev/shm when it exists (fsyncs there are free, and the differential
// tests flush and reopen thousands of times; what they check does not depend on the disk),
// else under the system temporary folder. Removed at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code ec;
    const bool shm =
        std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0;
    std::string tmpl =
        ((shm ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path()) /
         "strata-diff-XXXXXX")
            .string();
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr) << tmpl;
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A bucket LSM write spec of `n` buckets on the key column `id`.
inline table::LsmWriteSpec BucketsOnId(int64_t n) {
  table::LsmWriteSpec s;
  s.mode = table::ShardingMode::kBucket;
  s.column = "id";
  s.num_buckets = n;
  return s;
}

}  // namespace strata::testing
