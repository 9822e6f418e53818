#include "table/writer_config.h"

#include <charconv>
#include <functional>

namespace strata::table {
namespace {

struct IntOption {
  const char* key;
  int64_t min;
  int64_t max;
  std::function<void(int64_t, shard::ShardWriterOptions*)> apply;
};

constexpr int64_t kTiB = int64_t{1} << 40;

const std::vector<IntOption>& IntOptions() {
  static const std::vector<IntOption> options = {
      {"max_memtable_rows", 1, kTiB,
       [](int64_t v, shard::ShardWriterOptions* o) { o->max_memtable_rows = v; }},
      {"max_memtable_bytes", 1024, kTiB,
       [](int64_t v, shard::ShardWriterOptions* o) { o->max_memtable_bytes = v; }},
      {"max_memtable_age_ms", 1, (int64_t{1} << 31) - 1,
       [](int64_t v, shard::ShardWriterOptions* o) {
         o->max_memtable_age = std::chrono::milliseconds(v);
       }},
      {"max_unflushed_bytes", 1024, int64_t{1} << 50,
       [](int64_t v, shard::ShardWriterOptions* o) { o->max_unflushed_bytes = v; }},
      {"max_frozen_memtables", 0, int64_t{1} << 20,
       [](int64_t v, shard::ShardWriterOptions* o) { o->max_frozen_memtables = v; }},
      {"write_stall_timeout_ms", 1, (int64_t{1} << 31) - 1,
       [](int64_t v, shard::ShardWriterOptions* o) {
         o->write_stall_timeout = std::chrono::milliseconds(v);
       }},
  };
  return options;
}

std::string KnownKeys() {
  std::string out;
  for (const auto& k : WriterConfigKeys()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

/// Applies one key (options may be null: validate only).
Status ApplyOne(const std::string& key, const std::string& value,
                shard::ShardWriterOptions* options) {
  const std::string field = "writer_config_defaults." + key;
  if (key == "durable_write") {
    if (value != "true" && value != "false") {
      return Status::Invalid(field + " must be 'true' or 'false', got '" + value + "'");
    }
    if (options != nullptr) options->durable_write = value == "true";
    return Status::OK();
  }
  for (const auto& o : IntOptions()) {
    if (key != o.key) continue;
    int64_t v = 0;
    const char* end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, v);
    if (value.empty() || ec != std::errc() || ptr != end || v < o.min || v > o.max) {
      return Status::Invalid(field + " must be an integer in [" + std::to_string(o.min) + ", " +
                             std::to_string(o.max) + "], got '" + value + "'");
    }
    if (options != nullptr) o.apply(v, options);
    return Status::OK();
  }
  return Status::Invalid(field +
                         " is not a writer option this server knows (known: " + KnownKeys() + ")");
}

}  // namespace

const std::vector<std::string>& WriterConfigKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"durable_write"};
    for (const auto& o : IntOptions()) k.emplace_back(o.key);
    return k;
  }();
  return keys;
}

Status ValidateWriterConfig(const std::map<std::string, std::string>& config) {
  for (const auto& [key, value] : config) STRATA_RETURN_IF_ERROR(ApplyOne(key, value, nullptr));
  return Status::OK();
}

Status ApplyWriterConfig(const std::map<std::string, std::string>& config,
                         shard::ShardWriterOptions* options) {
  STRATA_RETURN_IF_ERROR(ValidateWriterConfig(config));
  for (const auto& [key, value] : config) STRATA_RETURN_IF_ERROR(ApplyOne(key, value, options));
  return Status::OK();
}

}  // namespace strata::table
