#include "table/table_folders.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "table/table_name.h"

namespace strata::table {
namespace {

std::string LastSegment(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  return slash == std::string::npos ? prefix : prefix.substr(slash + 1);
}

std::string PointerKey(const std::string& db_dir, const std::string& name) {
  return db_dir + "/" + TableFolders::kPointerDir + "/" + EncodeNameForDir(name);
}

}  // namespace

std::string TableFolders::PlainPrefix(const std::string& database, const std::string& name) {
  return EncodeNameForDir(database) + "/" + EncodeNameForDir(name);
}

Result<std::string> TableFolders::ReadPointer(const std::string& db_dir, const std::string& name) {
  auto body = store_->Get(PointerKey(db_dir, name));
  if (!body.ok()) {
    if (body.status().IsNotFound()) return std::string();
    return body.status();
  }
  const size_t nl = body->find('\n');
  if (nl == std::string::npos || body->substr(nl + 1) != name) return std::string();
  return body->substr(0, nl);
}

Result<std::optional<TableFolders::Found>> TableFolders::Find(const std::string& database,
                                                              const std::string& name) {
  const std::string db_dir = EncodeNameForDir(database);
  const std::string plain = PlainPrefix(database, name);
  STRATA_ASSIGN_OR_RETURN(auto manifest, format::LoadLatestTableManifest(*store_, plain));
  if (manifest) {
    if (manifest->table_name() == name)
      return std::optional<Found>(Found{plain, std::move(*manifest)});
    if (DecodeNameFromDir(EncodeNameForDir(name)).has_value()) {
      // A plain folder naming another table: renamed away when that table's pointer names
      // this folder; otherwise a local rename that crashed before its manifest commit.
      STRATA_ASSIGN_OR_RETURN(std::string other, ReadPointer(db_dir, manifest->table_name()));
      if (other != LastSegment(plain))
        return std::optional<Found>(Found{plain, std::move(*manifest)});
    }
  }
  STRATA_ASSIGN_OR_RETURN(std::string folder, ReadPointer(db_dir, name));
  if (folder.empty() || folder == LastSegment(plain)) return std::optional<Found>();
  const std::string prefix = db_dir + "/" + folder;
  if (io::ValidateKey(prefix).ok()) {
    STRATA_ASSIGN_OR_RETURN(auto pointed, format::LoadLatestTableManifest(*store_, prefix));
    if (pointed && pointed->table_name() == name)
      return std::optional<Found>(Found{prefix, std::move(*pointed)});
  }
  return std::optional<Found>();
}

Result<std::vector<std::string>> TableFolders::List(const std::string& database) {
  const std::string db_dir = EncodeNameForDir(database);
  STRATA_ASSIGN_OR_RETURN(auto dirs, store_->ListChildren(db_dir + "/"));
  // name -> folder of every pointer, and the folders some pointer names.
  std::map<std::string, std::string> pointers;
  std::set<std::string> pointed;
  if (std::binary_search(dirs.begin(), dirs.end(), std::string(kPointerDir))) {
    STRATA_ASSIGN_OR_RETURN(auto objects, store_->List(db_dir + "/" + kPointerDir + "/"));
    for (const auto& o : objects) {
      auto body = store_->Get(o.key);
      if (!body.ok()) {
        if (body.status().IsNotFound()) continue;  // removed meanwhile
        return body.status();
      }
      const size_t nl = body->find('\n');
      if (nl == std::string::npos) continue;  // not a pointer
      pointers[body->substr(nl + 1)] = body->substr(0, nl);
      pointed.insert(body->substr(0, nl));
    }
  }
  std::set<std::string> names;
  for (const auto& dir : dirs) {
    if (dir == kPointerDir) continue;
    const std::string prefix = db_dir + "/" + dir;
    auto decoded = DecodeNameFromDir(dir);
    if (decoded && pointed.count(dir) == 0) {
      // A table exists once a manifest is committed (creates in flight and drops do not count).
      STRATA_ASSIGN_OR_RETURN(auto versions, store_->List(prefix + "/_versions/"));
      if (!versions.empty()) names.insert(std::move(*decoded));
      continue;
    }
    if (!decoded && (dir.empty() || dir[0] != '~')) continue;
    auto m = format::LoadLatestTableManifest(*store_, prefix);
    if (!m.ok() || !m->has_value()) continue;
    const std::string& named = (*m)->table_name();
    auto p = pointers.find(named);
    if (EncodeNameForDir(named) == dir || (p != pointers.end() && p->second == dir)) {
      names.insert(named);
    } else if (decoded) {
      names.insert(std::move(*decoded));  // a local rename that crashed before its commit
    }
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::string> TableFolders::PrefixForNewTable(const std::string& database,
                                                    const std::string& name) {
  const std::string plain = PlainPrefix(database, name);
  STRATA_ASSIGN_OR_RETURN(auto manifest, format::LoadLatestTableManifest(*store_, plain));
  if (!manifest) return plain;
  // The plain folder holds a table renamed away: a fresh folder, pointed to.
  std::string encoded = EncodeNameForDir(name);
  if (encoded.size() > 100) encoded.resize(100);
  std::random_device rd;
  const uint64_t nonce =
      (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(nonce));
  const std::string prefix = EncodeNameForDir(database) + "/~" + encoded + "~" + hex;
  STRATA_RETURN_IF_ERROR(WritePointer(database, name, prefix));
  return prefix;
}

Status TableFolders::WritePointer(const std::string& database, const std::string& name,
                                  const std::string& prefix) {
  return store_->Put(PointerKey(EncodeNameForDir(database), name),
                     LastSegment(prefix) + "\n" + name);
}

Status TableFolders::RemovePointerTo(const std::string& database, const std::string& name,
                                     const std::string& prefix) {
  const std::string db_dir = EncodeNameForDir(database);
  STRATA_ASSIGN_OR_RETURN(std::string folder, ReadPointer(db_dir, name));
  if (folder.empty() || folder != LastSegment(prefix)) return Status::OK();
  return store_->Remove(PointerKey(db_dir, name));
}

}  // namespace strata::table
