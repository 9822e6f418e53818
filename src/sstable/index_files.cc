#include "sstable/index_files.h"

#include <spdlog/spdlog.h>
#include <xxhash.h>

#include <cstdio>

#include "sstable/sstable_writer.h"

namespace strata::sstable {
namespace {

std::string EscapeName(const std::string& name) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

/// A path segment for `name`: escaped, and when that is longer than 120 bytes the first
/// escaped bytes (never splitting a %XX) plus the xxhash64 of the name, so any accepted name
/// fits the 255-byte segment limit of file systems (the uuid file name keeps it unique).
std::string NameSegment(const std::string& name) {
  std::string escaped = EscapeName(name);
  if (escaped.size() <= 120) return escaped;
  size_t cut = 96;
  while (cut > 0 && (escaped[cut - 1] == '%' || (cut > 1 && escaped[cut - 2] == '%'))) --cut;
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx",
                static_cast<unsigned long long>(XXH64(name.data(), name.size(), 0)));
  return escaped.substr(0, cut) + "~" + hash;
}

std::string IndicesPrefix(const std::string& shard_prefix, const std::string& dir_name) {
  return shard_prefix + "/" + dir_name + "/indices/";
}

}  // namespace

std::string IndexFileKey(const std::string& shard_prefix, const std::string& dir_name,
                         const index::IndexSpec& spec) {
  return IndicesPrefix(shard_prefix, dir_name) + NameSegment(spec.name) + "/" +
         NameSegment(spec.uuid) + ".idx";
}

Result<int64_t> WriteIndexFile(io::ObjectStore& store, const std::string& shard_prefix,
                               const std::string& dir_name, const index::ColumnIndex& index) {
  STRATA_ASSIGN_OR_RETURN(std::string bytes, index.Serialize());
  Status st = store.PutIfAbsent(IndexFileKey(shard_prefix, dir_name, index.spec()), bytes);
  if (st.IsAlreadyExists()) return int64_t{0};
  STRATA_RETURN_IF_ERROR(st);
  return static_cast<int64_t>(bytes.size());
}

Result<std::vector<std::shared_ptr<const index::ColumnIndex>>> LoadIndexFiles(
    io::ObjectStore& store, const std::string& shard_prefix, const std::string& dir_name,
    const arrow::Schema& schema) {
  STRATA_ASSIGN_OR_RETURN(auto objects, store.List(IndicesPrefix(shard_prefix, dir_name)));
  std::vector<std::shared_ptr<const index::ColumnIndex>> out;
  for (const auto& o : objects) {
    if (o.key.size() < 4 || o.key.compare(o.key.size() - 4, 4, ".idx") != 0) continue;
    auto bytes = store.Get(o.key);
    if (!bytes.ok()) {
      spdlog::error("index file {}: {}; the SSTable is scanned instead", o.key,
                    bytes.status().ToString());
      continue;
    }
    auto ci = index::ColumnIndex::Deserialize(*bytes, schema);
    if (!ci.ok()) {
      spdlog::error("index file {}: {}; the SSTable is scanned instead", o.key,
                    ci.status().ToString());
      continue;
    }
    out.push_back(std::move(*ci));
  }
  return out;
}

Status RemoveIndexFiles(io::ObjectStore& store, const std::string& shard_prefix,
                        const std::string& dir_name) {
  STRATA_ASSIGN_OR_RETURN(auto objects, store.List(IndicesPrefix(shard_prefix, dir_name)));
  for (const auto& o : objects) STRATA_RETURN_IF_ERROR(store.Remove(o.key));
  return Status::OK();
}

}  // namespace strata::sstable
