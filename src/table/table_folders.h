// Where a table's files live: name -> folder (DESIGN.md §3; issue 17, rename on a store with
// no atomic prefix move).
//
// A table normally lives in its "plain" folder, {db_dir}/{EncodeNameForDir(name)}, and a
// rename on a local disk moves that folder (ObjectStore::RenamePrefix, one rename(2)). An
// object store cannot move a prefix atomically, so there a rename keeps the folder and commits
// the next manifest version naming the new name; that single put-if-absent is the rename's
// commit point. A "pointer" object tells where the renamed table now lives:
//
//   {db_dir}/~names/{EncodeNameForDir(name)}   body: "{folder}\n{name}" (folder: the last
//                                              segment; the name, as long names hash)
//
// written BEFORE that commit. The pointer is only a hint; the manifest decides:
// - Find(name): the plain folder, when its newest manifest names `name`; else the folder the
//   pointer names, when its newest manifest names `name`; else no such table. A plain folder
//   whose manifest names another table Y is Y's when Y's pointer names it (renamed away),
//   and otherwise still the plain folder's own table (a local rename that crashed between
//   its move and its manifest commit; that was the rule before pointers).
// - A table created while its plain folder holds a renamed-away table goes to a fresh folder
//   "~{encoded name, at most 100 bytes}~{16 hex digits}" with a pointer to it.
// So a crash before the commit leaves the old name in force (the pointer names a folder whose
// manifest does not name the new name); a crash after it leaves a stale pointer of the old
// name, which Find ignores. Renames, creates and drops of one name are serialised by the
// catalog's lock; two servers on one bucket are fenced per table by their writer epochs.
// Requests: Find costs the plain folder's manifest load, plus one GET of a pointer when the
// plain folder is not the answer; List adds one LIST of the pointers and one GET per pointer.
//
// Thread-safety: stateless besides the store; every method may be called from many threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "format/table_manifest.h"
#include "io/object_store.h"

namespace strata::table {

class TableFolders {
 public:
  /// The pointers' sub-folder of a database folder. Never an encoded table name: names encode
  /// '~' as "%7E" and hashed folders are "~{...}~{16 hex}".
  static constexpr const char* kPointerDir = "~names";

  explicit TableFolders(std::shared_ptr<io::ObjectStore> store) : store_(std::move(store)) {}

  /// The plain folder of `name`: "{EncodeNameForDir(database)}/{EncodeNameForDir(name)}".
  static std::string PlainPrefix(const std::string& database, const std::string& name);

  struct Found {
    std::string prefix;  // "{db_dir}/{folder}"
    format::TableManifest manifest;
  };
  /// Table `name`'s folder and newest manifest; nullopt when no table has that name.
  /// Errors: the store's; Corruption of a manifest.
  Result<std::optional<Found>> Find(const std::string& database, const std::string& name);

  /// Names of the tables of `database`, sorted, each once.
  Result<std::vector<std::string>> List(const std::string& database);

  /// The folder for a new table `name` (which Find does not know): the plain folder when no
  /// manifest is committed there; otherwise a fresh folder, with `name`'s pointer written to
  /// it (before the caller commits the table's first manifest).
  Result<std::string> PrefixForNewTable(const std::string& database, const std::string& name);

  /// Writes `name`'s pointer to the folder `prefix` (a "{db_dir}/{folder}" prefix).
  Status WritePointer(const std::string& database, const std::string& name,
                      const std::string& prefix);
  /// Removes `name`'s pointer when it names `prefix` (a stale pointer after a rename or drop).
  Status RemovePointerTo(const std::string& database, const std::string& name,
                         const std::string& prefix);

 private:
  /// The folder `name`'s pointer names ("" when there is none).
  Result<std::string> ReadPointer(const std::string& db_dir, const std::string& name);
  std::shared_ptr<io::ObjectStore> store_;
};

}  // namespace strata::table
