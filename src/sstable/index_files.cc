#include "sstable/index_files.h"

#include <spdlog/spdlog.h>

#include "sstable/sstable_writer.h"

namespace strata::sstable {
namespace {

std::string EscapeName(const std::string& name) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '_' || c == '-';
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

std::string IndicesPrefix(const std::string& shard_prefix, const std::string& dir_name) {
  return shard_prefix + "/" + dir_name + "/indices/";
}

}  // namespace

std::string IndexFileKey(const std::string& shard_prefix, const std::string& dir_name,
                         const index::IndexSpec& spec) {
  return IndicesPrefix(shard_prefix, dir_name) + EscapeName(spec.name) + "/" +
         EscapeName(spec.uuid) + ".idx";
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
