#include "format/table_manifest.h"

#include <memory>

#include "arrow/ipc/reader.h"
#include "arrow/ipc/writer.h"

namespace strata::format {
namespace {

constexpr const char* kVersionsDir = "/_versions/";
constexpr const char* kManifestSuffix = ".manifest";

/// Version number of a "{digits}.manifest" file name, or nullopt.
std::optional<uint64_t> ParseManifestName(std::string_view name) {
  std::string_view suffix(kManifestSuffix);
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  std::string_view digits = name.substr(0, name.size() - suffix.size());
  if (digits.empty() || digits.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

std::string TableManifestKey(const std::string& table_prefix, uint64_t version) {
  return table_prefix + kVersionsDir + std::to_string(version) + kManifestSuffix;
}

Result<std::optional<TableManifest>> LoadLatestTableManifest(io::ObjectStore& store,
                                                             const std::string& table_prefix) {
  const std::string dir = table_prefix + kVersionsDir;
  STRATA_ASSIGN_OR_RETURN(auto objects, store.List(dir));
  std::optional<uint64_t> best;
  for (const auto& o : objects) {
    std::string_view name(o.key);
    name.remove_prefix(dir.size());
    if (name.find('/') != std::string_view::npos) continue;
    auto v = ParseManifestName(name);
    if (v && (!best || *v > *best)) best = v;
  }
  if (!best) return std::optional<TableManifest>();
  const std::string key = TableManifestKey(table_prefix, *best);
  STRATA_ASSIGN_OR_RETURN(std::string bytes, store.Get(key));
  TableManifest m;
  if (!m.ParseFromString(bytes)) {
    return Status::Corruption("table manifest '" + key + "' is not a valid TableManifest");
  }
  if (m.version() != *best) {
    return Status::Corruption("table manifest '" + key + "' records version " +
                              std::to_string(m.version()));
  }
  return std::optional<TableManifest>(std::move(m));
}

Status CommitTableManifest(io::ObjectStore& store, const std::string& table_prefix,
                           const TableManifest& manifest) {
  std::string bytes;
  if (!manifest.SerializeToString(&bytes)) {
    return Status::Internal("cannot serialize table manifest version " +
                            std::to_string(manifest.version()));
  }
  return store.PutIfAbsent(TableManifestKey(table_prefix, manifest.version()), bytes);
}

Result<std::string> EncodeSchema(const arrow::Schema& schema) {
  return arrow::ipc::WriteStream(schema, {});
}

Result<arrow::SchemaPtr> DecodeSchema(const std::string& bytes) {
  auto owner = std::make_shared<std::string>(bytes);
  auto buf = arrow::Buffer::Wrap(owner->data(), static_cast<int64_t>(owner->size()), owner);
  auto read = arrow::ipc::ReadStream(buf);
  if (!read.ok()) {
    return Status::Corruption("table schema in manifest: " + read.status().ToString());
  }
  if (!read->batches.empty()) {
    return Status::Corruption("table schema in manifest carries record batches");
  }
  return read->schema;
}

}  // namespace strata::format
