#include "base/gc.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "sstable/sstable_writer.h"
#include "wal/wal_entry.h"

namespace strata::base {
namespace {

constexpr char kVersionsDir[] = "/_versions/";
constexpr char kManifestSuffix[] = ".manifest";
constexpr char kMemWalDir[] = "/_mem_wal/";
constexpr const char* kBaseDirs[] = {"/data/", "/_deletions/", "/_indices/"};

/// Version of a "{decimal}.manifest" file name (no directory), or nullopt.
std::optional<uint64_t> ParseManifestFileName(std::string_view name) {
  const std::string_view suffix(kManifestSuffix);
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(0, name.size() - suffix.size());
  if (digits.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

/// True when the file's age is known and above `min_age_micros`.
bool OlderThan(const io::ObjectMeta& o, int64_t now_micros, int64_t min_age_micros) {
  return o.mtime_micros > 0 && now_micros - o.mtime_micros > min_age_micros;
}

std::string StatsText(const GcStats& s) {
  return "manifests " + std::to_string(s.manifests_removed) + ", base files " +
         std::to_string(s.base_files_removed) + ", WAL entries " +
         std::to_string(s.wal_entries_removed) + ", SSTable files " +
         std::to_string(s.sstable_files_removed) + ", orphan files " +
         std::to_string(s.orphan_files_removed) + ", " + std::to_string(s.bytes_removed) + " bytes";
}

/// A loaded table manifest file.
struct ManifestFile {
  io::ObjectMeta meta;
  format::TableManifest manifest;
};

/// Lists `_versions/` and loads every manifest not already in `*files` (keyed by version);
/// `in.current` is used for its own version when that file is listed. Files that are not
/// "{decimal}.manifest" are ignored.
Status LoadManifests(io::ObjectStore& store, const GcInput& in,
                     std::map<uint64_t, ManifestFile>* files, std::set<uint64_t>* listed) {
  const std::string dir = in.table_prefix + kVersionsDir;
  STRATA_ASSIGN_OR_RETURN(auto objects, store.List(dir));
  for (auto& o : objects) {
    const std::string_view name = std::string_view(o.key).substr(dir.size());
    if (name.find('/') != std::string_view::npos) continue;
    const auto version = ParseManifestFileName(name);
    if (!version) continue;
    if (listed != nullptr) listed->insert(*version);
    if (files->count(*version) > 0) continue;
    ManifestFile f;
    if (*version == in.current.version()) {
      f.manifest = in.current;
    } else {
      auto bytes = store.Get(o.key);
      if (!bytes.ok()) {
        if (bytes.status().IsNotFound()) continue;  // removed meanwhile
        return bytes.status();
      }
      if (!f.manifest.ParseFromString(*bytes) || f.manifest.version() != *version) {
        return Status::Corruption("table manifest '" + o.key +
                                  "' is not a valid TableManifest of its version; garbage "
                                  "collection needs every manifest's references");
      }
    }
    f.meta = std::move(o);
    files->emplace(*version, std::move(f));
  }
  return Status::OK();
}

/// Files referenced by retained manifests (rule 2) and the shard ids they name (rule 5).
struct References {
  std::set<std::string> fragment_dirs;  // "{prefix}/data/{path}/"
  std::set<std::string> files;          // exact keys: deletion vectors, index checkpoints
  std::set<std::string> shard_ids;

  // Index checkpoints of older manifests, not protected (see Add).
  std::set<std::string> superseded_checkpoints;

  // Fragment directories and deletion vectors that only older manifests of the current
  // table version name (see Add): removed whatever their age.
  std::set<std::string> superseded_dirs;
  std::set<std::string> superseded_files;

  /// `with_checkpoints` false (a manifest older than current): its index checkpoints are not
  /// protected. A checkpoint is derived data (an index over the fragments, rebuilt from them
  /// when missing), each one a full copy of a base index: keeping every retained version's
  /// would hold one copy per compaction for the whole retention.
  /// `with_base_files` false (an older manifest of the same table version and shards as
  /// current, i.e. a predecessor by compaction, base rewrite, tag or index change): its
  /// fragments and deletion vectors are not protected either. It holds the same rows as
  /// current, and it cannot be read back anyway: rule 4 removes the SSTables it needs once they
  /// are compacted. Without this a base rewrite's old fragments stayed for the whole retention.
  void Add(const std::string& prefix, const format::TableManifest& m, bool with_checkpoints,
           bool with_base_files = true) {
    for (const auto& f : m.base().fragments()) {
      if (!f.path().empty()) {
        (with_base_files ? fragment_dirs : superseded_dirs)
            .insert(prefix + "/data/" + f.path() + "/");
      }
      if (!f.deletions_path().empty()) {
        (with_base_files ? files : superseded_files).insert(prefix + "/" + f.deletions_path());
      }
    }
    for (const auto& idx : m.base().indexes()) {
      if (idx.path().empty()) continue;
      (with_checkpoints ? files : superseded_checkpoints).insert(prefix + "/" + idx.path());
    }
    for (const auto& id : m.shard_ids()) shard_ids.insert(id);
  }

  /// The directory of `dirs` (each ending in '/') that `key` lies under, if any.
  static bool UnderDir(const std::set<std::string>& dirs, const std::string& key) {
    // The directory is the longest listed prefix <= key that key starts with.
    auto it = dirs.upper_bound(key);
    if (it == dirs.begin()) return false;
    --it;
    return key.compare(0, it->size(), *it) == 0;
  }

  bool Referenced(const std::string& key) const {
    return files.count(key) > 0 || UnderDir(fragment_dirs, key);
  }
  /// Named only by older manifests of current's table version (committed, not in flight).
  bool Superseded(const std::string& key) const {
    return superseded_checkpoints.count(key) > 0 || superseded_files.count(key) > 0 ||
           UnderDir(superseded_dirs, key);
  }
};

enum class WalKind { kData, kSentinel, kUnknown, kGone };

/// Whether the WAL entry `o` at `position` is a fence sentinel (rule 3).
Result<WalKind> ClassifyWalEntry(io::ObjectStore& store, const io::ObjectMeta& o,
                                 uint64_t position) {
  if (o.size > kSentinelProbeMaxBytes) {
    // IPC stream framing (arrow/ipc/message.cc): 0xFFFFFFFF, int32 metadata length (8-aligned),
    // metadata; a schema message has no body. A data-less entry is exactly the schema message
    // and the 8-byte end-of-stream marker; anything longer holds record batches.
    auto head = store.GetRange(o.key, 0, 8);
    if (!head.ok()) {
      if (head.status().IsNotFound()) return WalKind::kGone;
      return head.status();
    }
    if (head->size() < 8) return WalKind::kUnknown;
    uint32_t marker = 0;
    int32_t length = 0;
    std::memcpy(&marker, head->data(), 4);
    std::memcpy(&length, head->data() + 4, 4);
    if (marker != 0xFFFFFFFFu || length <= 0) return WalKind::kUnknown;
    if (o.size != 8 + static_cast<int64_t>(length) + 8) return WalKind::kData;
  }
  auto bytes = store.Get(o.key);
  if (!bytes.ok()) {
    if (bytes.status().IsNotFound()) return WalKind::kGone;
    return bytes.status();
  }
  auto entry = wal::DecodeWalEntry(position, std::move(*bytes));
  if (!entry.ok()) return WalKind::kUnknown;
  return entry->fence_sentinel ? WalKind::kSentinel : WalKind::kData;
}

class Collector {
 public:
  Collector(io::ObjectStore& store, const GcInput& in, const GcOptions& opt)
      : store_(store),
        in_(in),
        opt_(opt),
        orphan_min_age_micros_(opt.orphan_min_age.count() * 1000000) {}

  Result<GcStats> Run() {
    STRATA_RETURN_IF_ERROR(Validate());
    Status st = Collect();
    if (!st.ok()) {
      spdlog::warn("GC of '{}' stopped: {}; removed so far: {}", in_.table_prefix, st.ToString(),
                   StatsText(stats_));
      return st;
    }
    spdlog::info("GC of '{}' (table manifest {}) removed {}", in_.table_prefix,
                 in_.current.version(), StatsText(stats_));
    return stats_;
  }

 private:
  Status Validate() const {
    if (in_.table_prefix.empty() || in_.table_prefix.back() == '/') {
      return Status::Invalid("GC table_prefix must be non-empty without a trailing '/', got '" +
                             in_.table_prefix + "'");
    }
    if (in_.current.version() == 0) {
      return Status::Invalid("GC needs the current table manifest (version >= 1)");
    }
    if (opt_.retain_versions < 0 || opt_.retain_age.count() < 0 ||
        opt_.orphan_min_age.count() < 0) {
      return Status::Invalid(
          "GC options retain_versions, retain_age and orphan_min_age must be >= 0");
    }
    for (const auto& s : in_.shards) {
      const std::string& id = s.manifest.shard_id();
      if (id.empty() || id.find('/') != std::string::npos || id == "." || id == "..") {
        return Status::Invalid("GC shard manifest has an invalid shard id '" + id + "'");
      }
    }
    return Status::OK();
  }

  Status Remove(const io::ObjectMeta& o, int64_t* counter) {
    STRATA_RETURN_IF_ERROR(store_.Remove(o.key));
    ++*counter;
    stats_.bytes_removed += o.size;
    return Status::OK();
  }

  Status Collect() {
    // Rule 1: choose the retained manifests (nothing is removed before all are loaded).
    std::map<uint64_t, ManifestFile> files;
    STRATA_RETURN_IF_ERROR(LoadManifests(store_, in_, &files, nullptr));
    const uint64_t current = in_.current.version();
    std::set<uint64_t> retained = {current};
    int64_t newest_kept = 1;  // current
    const int64_t age_floor = in_.now_micros - opt_.retain_age.count() * 1000000;
    for (auto it = files.rbegin(); it != files.rend(); ++it) {
      const uint64_t v = it->first;
      if (v > current) {
        retained.insert(v);  // committed after the caller loaded `current`
        continue;
      }
      if (v == current) continue;
      if (newest_kept < opt_.retain_versions) {
        retained.insert(v);
        ++newest_kept;
      }
      if (it->second.manifest.created_at_micros() >= age_floor) retained.insert(v);
    }
    for (const auto& [name, tag] : in_.current.tags()) {
      // The newest manifest whose base_version <= the tagged table version.
      for (auto it = files.rbegin(); it != files.rend(); ++it) {
        if (it->first <= current && it->second.manifest.base_version() <= tag.version()) {
          retained.insert(it->first);
          break;
        }
      }
    }

    // Remove the others, oldest first.
    for (const auto& [v, f] : files) {
      if (retained.count(v) > 0) continue;
      STRATA_RETURN_IF_ERROR(Remove(f.meta, &stats_.manifests_removed));
    }

    // Rule 2: references of every manifest still present, listed again so that one committed
    // since the first listing protects its files.
    std::set<uint64_t> listed;
    STRATA_RETURN_IF_ERROR(LoadManifests(store_, in_, &files, &listed));
    References refs;
    refs.Add(in_.table_prefix, in_.current, /*with_checkpoints=*/true);
    const auto same_rows_as_current = [&](const format::TableManifest& m) {
      return m.base_version() == in_.current.base_version() &&
             std::equal(m.shard_ids().begin(), m.shard_ids().end(), in_.current.shard_ids().begin(),
                        in_.current.shard_ids().end());
    };
    for (const auto& [v, f] : files) {
      if (retained.count(v) > 0 || listed.count(v) > 0) {
        refs.Add(in_.table_prefix, f.manifest, /*with_checkpoints=*/v >= current,
                 /*with_base_files=*/v >= current || !same_rows_as_current(f.manifest));
      }
    }
    for (const char* dir : kBaseDirs) {
      STRATA_ASSIGN_OR_RETURN(auto objects, store_.List(in_.table_prefix + dir));
      for (const auto& o : objects) {
        if (refs.Referenced(o.key)) continue;
        // A file only older manifests name was committed (not in flight): no age rule.
        if (!refs.Superseded(o.key) && !OlderThan(o, in_.now_micros, orphan_min_age_micros_)) {
          continue;
        }
        STRATA_RETURN_IF_ERROR(Remove(o, &stats_.base_files_removed));
      }
    }

    // Rules 3 and 4: WAL entries and SSTable directories of the current shards.
    const std::set<std::string> current_shards(in_.current.shard_ids().begin(),
                                               in_.current.shard_ids().end());
    for (const auto& shard : in_.shards) {
      if (current_shards.count(shard.manifest.shard_id()) == 0) {
        spdlog::warn("GC of '{}': shard '{}' is not a shard of table manifest {}; skipped",
                     in_.table_prefix, shard.manifest.shard_id(), current);
        continue;
      }
      STRATA_RETURN_IF_ERROR(CollectShard(shard.manifest));
    }

    // Rule 5: shard folders no retained manifest names.
    const std::string mem_wal = in_.table_prefix + kMemWalDir;
    STRATA_ASSIGN_OR_RETURN(auto children, store_.ListChildren(mem_wal));
    for (const auto& id : children) {
      if (refs.shard_ids.count(id) > 0) continue;
      STRATA_RETURN_IF_ERROR(CollectOrphanShard(mem_wal + id + "/"));
    }
    return Status::OK();
  }

  Status CollectShard(const format::ShardManifest& m) {
    const std::string shard_prefix = in_.table_prefix + kMemWalDir + m.shard_id();
    const std::string dir = shard_prefix + "/";
    STRATA_ASSIGN_OR_RETURN(auto objects, store_.List(dir));
    const uint64_t replay_after = m.replay_after_wal_entry_position();
    const std::set<uint64_t> skipped(m.skipped_wal_positions().begin(),
                                     m.skipped_wal_positions().end());
    std::set<std::string> referenced;
    for (const auto& e : m.sstables()) referenced.insert(e.path());
    uint64_t compacted = 0;
    const auto& cg = in_.current.base().compacted_generation();
    if (auto it = cg.find(m.shard_id()); it != cg.end()) compacted = it->second;

    std::map<std::string, std::vector<const io::ObjectMeta*>> sstable_dirs;
    for (const auto& o : objects) {
      const std::string rel = o.key.substr(dir.size());
      const size_t slash = rel.find('/');
      if (slash == std::string::npos) continue;  // a file directly in the shard folder: unknown
      const std::string segment = rel.substr(0, slash);
      const std::string rest = rel.substr(slash + 1);
      if (segment == "manifest") continue;  // shard manifests are never removed
      if (segment == "wal") {
        if (rest.find('/') != std::string::npos) continue;
        const auto position = wal::ParseWalEntryName(rest);
        if (!position || *position == 0 || *position > replay_after) continue;
        STRATA_ASSIGN_OR_RETURN(WalKind kind, ClassifyWalEntry(store_, o, *position));
        const bool remove =
            kind == WalKind::kData || (kind == WalKind::kUnknown && skipped.count(*position) > 0);
        if (kind == WalKind::kUnknown && !remove) {
          spdlog::warn("GC of '{}': WAL entry {} of shard '{}' cannot be decoded; kept",
                       in_.table_prefix, *position, m.shard_id());
        }
        if (remove) STRATA_RETURN_IF_ERROR(Remove(o, &stats_.wal_entries_removed));
        continue;
      }
      if (!sstable::ParseSSTableDirName(segment).ok()) continue;  // unknown: kept
      sstable_dirs[segment].push_back(&o);
    }

    for (const auto& [name, dir_files] : sstable_dirs) {
      if (referenced.count(name) > 0) continue;
      const uint64_t generation = *sstable::ParseSSTableDirName(name);
      bool remove = generation <= compacted;
      if (!remove) {
        remove = std::all_of(dir_files.begin(), dir_files.end(), [&](const io::ObjectMeta* f) {
          return OlderThan(*f, in_.now_micros, orphan_min_age_micros_);
        });
      }
      if (!remove) continue;
      for (const io::ObjectMeta* f : dir_files) {
        STRATA_RETURN_IF_ERROR(Remove(*f, &stats_.sstable_files_removed));
      }
    }
    return Status::OK();
  }

  Status CollectOrphanShard(const std::string& dir) {
    STRATA_ASSIGN_OR_RETURN(auto objects, store_.List(dir));
    if (objects.empty()) return Status::OK();
    for (const auto& o : objects) {
      if (!OlderThan(o, in_.now_micros, orphan_min_age_micros_)) return Status::OK();
    }
    // Shard manifests first, so no manifest is left naming files already removed.
    const std::string manifest_dir = dir + "manifest/";
    std::stable_partition(objects.begin(), objects.end(), [&](const io::ObjectMeta& o) {
      return o.key.compare(0, manifest_dir.size(), manifest_dir) == 0;
    });
    for (const auto& o : objects) {
      STRATA_RETURN_IF_ERROR(Remove(o, &stats_.orphan_files_removed));
    }
    return Status::OK();
  }

  io::ObjectStore& store_;
  const GcInput& in_;
  const GcOptions& opt_;
  const int64_t orphan_min_age_micros_;
  GcStats stats_;
};

}  // namespace

int64_t GcStats::files_removed() const {
  return manifests_removed + base_files_removed + wal_entries_removed + sstable_files_removed +
         orphan_files_removed;
}

Result<GcStats> CollectGarbage(io::ObjectStore& store, const GcInput& in, const GcOptions& opt) {
  return Collector(store, in, opt).Run();
}

}  // namespace strata::base
