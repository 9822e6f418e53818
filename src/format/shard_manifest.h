// Shard manifests (DESIGN.md §3-§4, after the Lance MemWAL specification): versioned,
// immutable protobuf files strata.format.ShardManifest at
// "{shard_prefix}/manifest/{bit_reversed_version}.binpb" (shard_prefix =
// "{table}/_mem_wal/{shard_id}"), plus "{shard_prefix}/manifest/version_hint.json" =
// {"version": N}, written best effort after each commit.
//
// Load = read the hint, then probe forward (Head of version+1, +2, ...) until a version is
// missing; without a usable hint (missing, unparsable, or naming a missing version) the
// manifest directory is listed and probing starts from the highest version found.
// Commit = put_if_absent of the next version: versions are gap-free and a lost race is an
// AlreadyExists error (the caller reloads and retries, or learns it was fenced).
//
// Thread-safety: ShardManifestStore is safe to use from many threads (it only keeps an atomic
// "highest version seen" hint); the ObjectStore must be thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "format/proto/shard_manifest.pb.h"
#include "io/object_store.h"

namespace strata::format {

/// "{shard_prefix}/manifest/".
std::string ShardManifestDir(const std::string& shard_prefix);
/// "{shard_prefix}/manifest/{ToBitReversed(version)}.binpb".
std::string ShardManifestKey(const std::string& shard_prefix, uint64_t version);
/// "{shard_prefix}/manifest/version_hint.json".
std::string ShardManifestHintKey(const std::string& shard_prefix);

/// Serialized bytes of `manifest` (deterministic protobuf serialization).
std::string SerializeShardManifest(const ShardManifest& manifest);
/// Parses manifest bytes; `expected_version` (when non-zero) must equal the version field.
/// Errors: Corruption naming the version and what failed.
Result<ShardManifest> ParseShardManifest(const std::string& bytes, uint64_t expected_version = 0);

class ShardManifestStore {
 public:
  /// Manifests of shard `shard_id` under `shard_prefix` ("{table}/_mem_wal/{shard_id}").
  ShardManifestStore(std::shared_ptr<io::ObjectStore> store, std::string shard_prefix,
                     std::string shard_id);

  const std::string& shard_prefix() const { return shard_prefix_; }
  const std::string& shard_id() const { return shard_id_; }

  /// The newest committed manifest, or nullopt when the shard has none.
  /// Errors: Corruption (newest version unparsable or its version field wrong); IOError.
  Result<std::optional<ShardManifest>> LoadLatest();

  /// Version `version`. Errors: NotFound; Corruption; IOError.
  Result<ShardManifest> Load(uint64_t version);

  /// Writes `next` as version next.version() (>= 1; the caller sets it to the loaded version
  /// + 1, or 1 for the first) with put_if_absent, sets created_at_micros when 0, then writes
  /// the hint (best effort: a hint failure is logged, not returned).
  /// Errors: AlreadyExists when that version is taken (lost race: reload, retry or give up);
  /// Invalid for version 0 or a shard_id different from this store's; IOError.
  Status Commit(const ShardManifest& next);

  /// Claims the shard for a new writer: loads the latest manifest (or starts from an empty one:
  /// epoch 0, current_generation 1, ACTIVE), commits a copy with writer_epoch + 1 and
  /// version + 1, retrying on lost races up to `max_attempts` times. Returns the committed
  /// manifest (its writer_epoch is the new writer's epoch).
  /// Errors: NotSupported when the shard is SEALED; IOError/Corruption; Internal after
  /// `max_attempts` lost races.
  Result<ShardManifest> Claim(int max_attempts = 32);

  /// Read-modify-commit as the writer of epoch `writer_epoch`: loads the latest manifest,
  /// fails Fenced when its writer_epoch differs (a newer writer claimed the shard), calls
  /// `edit` on a copy with version + 1 (edit may return an error to abort), commits it, and
  /// retries from the load on a lost race (up to `max_attempts`). Returns the committed
  /// manifest. Used by the flusher to publish SSTables.
  /// Errors: Fenced; NotFound when no manifest exists; from `edit`; IOError/Corruption;
  /// Internal after `max_attempts` lost races.
  Result<ShardManifest> Update(uint64_t writer_epoch,
                               const std::function<Status(ShardManifest&)>& edit,
                               int max_attempts = 32);

 private:
  Result<uint64_t> ProbeLatestVersion();

  const std::shared_ptr<io::ObjectStore> store_;
  const std::string shard_prefix_;
  const std::string shard_id_;
  std::atomic<uint64_t> highest_seen_{0};  // highest version known to exist (probe start)
};

}  // namespace strata::format
