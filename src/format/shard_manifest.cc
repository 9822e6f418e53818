#include "format/shard_manifest.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/wall_clock.h"
#include "format/bit_reversed.h"

namespace strata::format {
namespace {

constexpr char kManifestSuffix[] = ".binpb";
constexpr uint64_t kMaxProbe = uint64_t{1} << 20;  // probing forward more than this = corrupt

/// Version of a "{64 bits}.binpb" file name (no directory), or nullopt.
std::optional<uint64_t> ParseManifestName(std::string_view name) {
  std::string_view suffix(kManifestSuffix);
  if (name.size() != kBitReversedLength + suffix.size()) return std::nullopt;
  if (name.substr(kBitReversedLength) != suffix) return std::nullopt;
  auto v = FromBitReversed(name.substr(0, kBitReversedLength));
  if (!v.ok()) return std::nullopt;
  return *v;
}

}  // namespace

std::string ShardManifestDir(const std::string& shard_prefix) {
  return shard_prefix + "/manifest/";
}

std::string ShardManifestKey(const std::string& shard_prefix, uint64_t version) {
  return ShardManifestDir(shard_prefix) + ToBitReversed(version) + kManifestSuffix;
}

std::string ShardManifestHintKey(const std::string& shard_prefix) {
  return ShardManifestDir(shard_prefix) + "version_hint.json";
}

std::string SerializeShardManifest(const ShardManifest& manifest) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream sos(&out);
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.SetSerializationDeterministic(true);
    manifest.SerializeToCodedStream(&cos);
  }
  return out;
}

Result<ShardManifest> ParseShardManifest(const std::string& bytes, uint64_t expected_version) {
  ShardManifest m;
  if (!m.ParseFromString(bytes)) {
    return Status::Corruption("shard manifest version " + std::to_string(expected_version) +
                              " is not a valid ShardManifest protobuf (" +
                              std::to_string(bytes.size()) + " bytes)");
  }
  if (expected_version != 0 && m.version() != expected_version) {
    return Status::Corruption("shard manifest file of version " + std::to_string(expected_version) +
                              " records version " + std::to_string(m.version()));
  }
  return m;
}

ShardManifestStore::ShardManifestStore(std::shared_ptr<io::ObjectStore> store,
                                       std::string shard_prefix, std::string shard_id)
    : store_(std::move(store)),
      shard_prefix_(std::move(shard_prefix)),
      shard_id_(std::move(shard_id)) {}

Result<ShardManifest> ShardManifestStore::Load(uint64_t version) {
  const std::string key = ShardManifestKey(shard_prefix_, version);
  STRATA_ASSIGN_OR_RETURN(std::string bytes, store_->Get(key));
  auto m = ParseShardManifest(bytes, version);
  if (!m.ok()) return m.status().WithContext("shard '" + shard_id_ + "'");
  return m;
}

Result<uint64_t> ShardManifestStore::ProbeLatestVersion() {
  // 1. Start: the highest version this process has seen, the hint, or a listing.
  uint64_t start = highest_seen_.load(std::memory_order_acquire);
  if (start == 0) {
    auto hint = store_->Get(ShardManifestHintKey(shard_prefix_));
    if (hint.ok()) {
      try {
        auto j = nlohmann::json::parse(*hint);
        if (j.is_object() && j.contains("version") && j["version"].is_number_unsigned()) {
          start = j["version"].get<uint64_t>();
        }
      } catch (const std::exception&) {
        spdlog::warn("shard '{}': unparsable manifest version hint ignored", shard_id_);
      }
    } else if (!hint.status().IsNotFound()) {
      return hint.status();
    }
  }
  if (start > 0) {
    auto head = store_->Head(ShardManifestKey(shard_prefix_, start));
    if (!head.ok()) {
      if (!head.status().IsNotFound()) return head.status();
      start = 0;  // stale hint (or garbage-collected version): fall back to a listing
    }
  }
  if (start == 0) {
    const std::string dir = ShardManifestDir(shard_prefix_);
    STRATA_ASSIGN_OR_RETURN(auto objects, store_->List(dir));
    for (const auto& o : objects) {
      std::string_view name(o.key);
      name.remove_prefix(dir.size());
      auto v = ParseManifestName(name);
      if (v && *v > start) start = *v;
    }
    if (start == 0) return uint64_t{0};
  }
  // 2. Probe forward until a version is missing.
  uint64_t v = start;
  for (uint64_t i = 0;; ++i) {
    if (i > kMaxProbe) {
      return Status::Corruption("shard '" + shard_id_ + "': more than " +
                                std::to_string(kMaxProbe) + " manifest versions after the hint");
    }
    auto head = store_->Head(ShardManifestKey(shard_prefix_, v + 1));
    if (!head.ok()) {
      if (head.status().IsNotFound()) break;
      return head.status();
    }
    ++v;
  }
  // Remember (monotonic max).
  uint64_t seen = highest_seen_.load();
  while (seen < v && !highest_seen_.compare_exchange_weak(seen, v)) {
  }
  return v;
}

Result<std::optional<ShardManifest>> ShardManifestStore::LoadLatest() {
  STRATA_ASSIGN_OR_RETURN(uint64_t v, ProbeLatestVersion());
  if (v == 0) return std::optional<ShardManifest>();
  STRATA_ASSIGN_OR_RETURN(ShardManifest m, Load(v));
  return std::optional<ShardManifest>(std::move(m));
}

Status ShardManifestStore::Commit(const ShardManifest& next) {
  if (next.version() == 0) {
    return Status::Invalid("shard manifest version must be >= 1, got 0");
  }
  if (next.shard_id() != shard_id_) {
    return Status::Invalid("shard manifest shard_id '" + next.shard_id() +
                           "' differs from the store's shard '" + shard_id_ + "'");
  }
  ShardManifest m = next;
  if (m.created_at_micros() == 0) m.set_created_at_micros(WallClockMicros());
  STRATA_RETURN_IF_ERROR(
      store_->PutIfAbsent(ShardManifestKey(shard_prefix_, m.version()), SerializeShardManifest(m)));
  uint64_t seen = highest_seen_.load();
  while (seen < m.version() && !highest_seen_.compare_exchange_weak(seen, m.version())) {
  }
  nlohmann::json hint = {{"version", m.version()}};
  Status hs = store_->Put(ShardManifestHintKey(shard_prefix_), hint.dump());
  if (!hs.ok()) {
    spdlog::warn("shard '{}': manifest version hint not written: {}", shard_id_, hs.ToString());
  }
  return Status::OK();
}

Result<ShardManifest> ShardManifestStore::Claim(int max_attempts) {
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    STRATA_ASSIGN_OR_RETURN(auto latest, LoadLatest());
    ShardManifest next;
    if (latest) {
      if (latest->status() == SHARD_STATUS_SEALED) {
        return Status::NotSupported("shard '" + shard_id_ + "' is sealed; it takes no writer");
      }
      next = *latest;
    } else {
      next.set_shard_id(shard_id_);
      next.set_version(0);
      next.set_writer_epoch(0);
      next.set_current_generation(1);
      next.set_status(SHARD_STATUS_ACTIVE);
    }
    next.set_version(next.version() + 1);
    next.set_writer_epoch(next.writer_epoch() + 1);
    next.set_created_at_micros(WallClockMicros());
    Status st = Commit(next);
    if (st.ok()) return next;
    if (!st.IsAlreadyExists()) return st;
    spdlog::debug("shard '{}': lost the claim race for version {}, retrying", shard_id_,
                  next.version());
  }
  return Status::Internal("shard '" + shard_id_ + "': claim lost " + std::to_string(max_attempts) +
                          " manifest races in a row");
}

Result<ShardManifest> ShardManifestStore::Update(uint64_t writer_epoch,
                                                 const std::function<Status(ShardManifest&)>& edit,
                                                 int max_attempts) {
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    STRATA_ASSIGN_OR_RETURN(auto latest, LoadLatest());
    if (!latest) {
      return Status::NotFound("shard '" + shard_id_ + "' has no manifest to update");
    }
    if (latest->writer_epoch() != writer_epoch) {
      return Status::Fenced("shard '" + shard_id_ + "' is owned by writer epoch " +
                            std::to_string(latest->writer_epoch()) + ", not " +
                            std::to_string(writer_epoch));
    }
    ShardManifest next = *latest;
    next.set_version(latest->version() + 1);
    next.set_created_at_micros(0);
    STRATA_RETURN_IF_ERROR(edit(next));
    // The edit may not change identity fields.
    next.set_version(latest->version() + 1);
    next.set_shard_id(shard_id_);
    next.set_writer_epoch(writer_epoch);
    if (next.created_at_micros() == 0) next.set_created_at_micros(WallClockMicros());
    Status st = Commit(next);
    if (st.ok()) return next;
    if (!st.IsAlreadyExists()) return st;
  }
  return Status::Internal("shard '" + shard_id_ + "': manifest update lost " +
                          std::to_string(max_attempts) + " races in a row");
}

}  // namespace strata::format
