// Test helpers for S3ObjectStore: a store on the radosgw named by the environment
// (STRATA_S3_ENDPOINT etc., as printed by scripts/s3-local start) under a prefix unique to the
// test, whose objects are removed at scope exit.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "io/s3_object_store.h"

namespace strata::testing {

inline bool S3Configured() { return std::getenv("STRATA_S3_ENDPOINT") != nullptr; }

inline constexpr const char* kS3SkipMessage =
    "STRATA_S3_ENDPOINT is not set: run `make test-s3`, or "
    "eval \"$(scripts/s3-local start DIR)\" first";

/// A fresh prefix: "strata-tests/{pid}-{random}-{n}".
inline std::string UniqueS3Prefix() {
  static std::atomic<int> counter{0};
  static const uint64_t salt = std::random_device{}();
  return "strata-tests/" + std::to_string(::getpid()) + "-" + std::to_string(salt % 1000000) + "-" +
         std::to_string(counter.fetch_add(1));
}

/// The S3 store of the environment under a unique prefix; objects left under it are removed
/// when this goes out of scope. `store` is null (and the test should skip) when S3 is not
/// configured; Open failures are test failures.
class ScopedS3Store {
 public:
  explicit ScopedS3Store(io::S3Options overrides = {}) {
    if (!S3Configured()) return;
    overrides.prefix = UniqueS3Prefix();
    auto options = io::S3OptionsFromEnv(overrides);
    EXPECT_TRUE(options.ok()) << options.status().ToString();
    if (!options.ok()) return;
    auto opened = io::S3ObjectStore::Open(*options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (opened.ok()) store = *opened;
  }
  ~ScopedS3Store() {
    if (store == nullptr) return;
    store->fault_for_test = nullptr;
    auto left = store->List("");
    if (!left.ok()) return;
    for (const auto& m : *left) (void)store->Remove(m.key);
  }
  std::shared_ptr<io::S3ObjectStore> store;
};

}  // namespace strata::testing
