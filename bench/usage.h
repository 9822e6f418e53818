// What a benchmark's table takes: bytes on disk by kind of file (the layout of
// docs/COMPACTION.md: WAL, SSTables, manifests, base fragments, deletion vectors, base index
// checkpoints) and the process's resident memory (/proc/self/statm).
// Thread-safety: pure functions; DiskBytes tolerates files removed while it walks.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

namespace strata::bench {

/// Bytes of the regular files under `dir` by kind ("wal", "sstables", "manifests",
/// "base_data", "base_deletions", "base_index", "other") and "total".
inline std::map<std::string, int64_t> DiskBytes(const std::string& dir) {
  std::map<std::string, int64_t> out;
  // Garbage collection may remove files while this walks: skip what vanished.
  std::error_code walk;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, walk);
       !walk && it != std::filesystem::recursive_directory_iterator(); it.increment(walk)) {
    const auto& e = *it;
    std::error_code ec;
    if (!e.is_regular_file(ec) || ec) continue;
    const auto size = e.file_size(ec);
    if (ec) continue;
    const std::string p = e.path().string();
    std::string kind = "other";
    if (p.find("/_mem_wal/") != std::string::npos) {
      kind = p.find("/wal/") != std::string::npos        ? "wal"
             : p.find("/manifest/") != std::string::npos ? "manifests"
                                                         : "sstables";
    } else if (p.find("/data/") != std::string::npos) {
      kind = "base_data";
    } else if (p.find("/_deletions/") != std::string::npos) {
      kind = "base_deletions";
    } else if (p.find("/_indices/") != std::string::npos) {
      kind = "base_index";
    } else if (p.find("/_versions/") != std::string::npos) {
      kind = "manifests";
    }
    out[kind] += static_cast<int64_t>(size);
    out["total"] += static_cast<int64_t>(size);
  }
  return out;
}

/// ' kind N.N MB' for each kind.
inline std::string Describe(const std::map<std::string, int64_t>& bytes) {
  std::string s;
  for (const auto& [k, v] : bytes) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), " %s %.1f MB", k.c_str(), static_cast<double>(v) / 1e6);
    s += buf;
  }
  return s;
}

/// Resident set size of this process in bytes (file-backed mapped pages included); -1 when
/// /proc is unreadable.
inline int64_t ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE) : -1;
}

/// This process's resident bytes by kind from /proc/self/status (RssAnon: heap and anonymous
/// maps, what the process needs; RssFile: pages of mapped files such as the base data, clean
/// and evictable page cache; RssShmem); -1 each when unreadable.
struct ResidentSplit {
  int64_t anon = -1, file = -1, shmem = -1;
};
inline ResidentSplit ResidentBytesByKind() {
  ResidentSplit out;
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return out;
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long kb = 0;
    if (std::sscanf(line, "RssAnon: %llu kB", &kb) == 1) out.anon = static_cast<int64_t>(kb) * 1024;
    if (std::sscanf(line, "RssFile: %llu kB", &kb) == 1) out.file = static_cast<int64_t>(kb) * 1024;
    if (std::sscanf(line, "RssShmem: %llu kB", &kb) == 1) {
      out.shmem = static_cast<int64_t>(kb) * 1024;
    }
  }
  std::fclose(f);
  return out;
}

}  // namespace strata::bench
