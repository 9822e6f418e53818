#include "table/local_catalog.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/wall_clock.h"
#include "format/table_manifest.h"
#include "io/local_object_store.h"
#include "table/table_folders.h"
#include "table/table_name.h"

namespace strata::table {

Result<std::unique_ptr<Catalog>> Catalog::Open(const std::string& root_dir,
                                               shard::ShardWriterOptions shard_options,
                                               base::CompactionOptions compaction,
                                               RecoveryOptions recovery) {
  STRATA_ASSIGN_OR_RETURN(auto store, io::LocalObjectStore::Open(root_dir));
  return Open(std::shared_ptr<io::ObjectStore>(std::move(store)), std::move(shard_options),
              compaction, recovery);
}

Result<std::unique_ptr<Catalog>> Catalog::Open(std::shared_ptr<io::ObjectStore> store,
                                               shard::ShardWriterOptions shard_options,
                                               base::CompactionOptions compaction,
                                               RecoveryOptions recovery) {
  return std::unique_ptr<Catalog>(
      new LocalCatalog(std::move(store), std::move(shard_options), compaction, recovery));
}

LocalCatalog::LocalCatalog(std::shared_ptr<io::ObjectStore> store,
                           shard::ShardWriterOptions shard_options,
                           base::CompactionOptions compaction, RecoveryOptions recovery)
    : store_(std::move(store)),
      folders_(store_),
      shard_options_(std::move(shard_options)),
      compaction_(compaction),
      recovery_(recovery) {
  supervisor_ = std::make_unique<TableSupervisor>(
      [this] {
        std::lock_guard<std::mutex> lock(mu_);
        std::vector<std::shared_ptr<LocalTable>> out;
        out.reserve(open_.size());
        for (const auto& [key, t] : open_) out.push_back(t);
        return out;
      },
      [this] { RetryFailedOpens(); }, shard_options_.free_space, recovery);
}

LocalCatalog::~LocalCatalog() { supervisor_.reset(); }

void LocalCatalog::RetryFailedOpens() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, std::string>> due;
  for (const auto& [key, f] : open_failures_) {
    if (f.next_retry <= now) due.push_back(key);
  }
  for (const auto& [database, name] : due) {
    auto t = GetLocked(database, name);
    if (t.ok()) spdlog::info("table '{}' of database '{}' opened", name, database);
  }
}

std::vector<TableOpenFailure> LocalCatalog::OpenFailures() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TableOpenFailure> out;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [key, f] : open_failures_) {
    out.push_back({key.first, key.second, f.status,
                   std::chrono::duration_cast<std::chrono::milliseconds>(now - f.since).count()});
  }
  return out;
}

std::optional<io::FreeSpaceState> LocalCatalog::FreeSpace() const {
  if (shard_options_.free_space == nullptr) return std::nullopt;
  return shard_options_.free_space->state();
}

std::string LocalCatalog::TablePrefix(const std::string& database, const std::string& name) {
  return TableFolders::PlainPrefix(database, name);
}

Result<std::vector<std::string>> LocalCatalog::ListTables(const std::string& database) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(database, "database name"));
  return folders_.List(database);
}

Result<std::shared_ptr<LocalTable>> LocalCatalog::GetLocked(
    const std::string& database, const std::string& name,
    std::optional<TableFolders::Found> known) {
  auto key = std::make_pair(database, name);
  auto it = open_.find(key);
  if (it != open_.end()) return it->second;
  if (dropping_.count(key) != 0) {
    return Status::NotFound("table '" + name + "' not found (it is being dropped)");
  }
  auto opened = OpenLocked(database, name, std::move(known));
  if (opened.ok() || opened.status().IsNotFound()) {
    open_failures_.erase(key);
    return opened;
  }
  const auto now = std::chrono::steady_clock::now();
  auto [f, fresh] = open_failures_.try_emplace(key);
  if (fresh) {
    f->second.since = now;
    f->second.backoff = std::chrono::milliseconds(1000);
    spdlog::error("table '{}' of database '{}' cannot be opened: {}; retried in the background",
                  name, database, opened.status().ToString());
  } else {
    f->second.backoff = std::min(f->second.backoff * 2,
                                 std::max(recovery_.max_backoff, std::chrono::milliseconds(1000)));
  }
  f->second.status = opened.status();
  f->second.next_retry = now + f->second.backoff;
  return opened;
}

Result<std::shared_ptr<LocalTable>> LocalCatalog::OpenLocked(
    const std::string& database, const std::string& name,
    std::optional<TableFolders::Found> known) {
  auto key = std::make_pair(database, name);
  // The folder whose newest manifest names the table (table/table_folders.h).
  std::optional<TableFolders::Found> found = std::move(known);
  if (!found) {
    STRATA_ASSIGN_OR_RETURN(found, folders_.Find(database, name));
  }
  if (!found) return Status::NotFound("table '" + name + "' not found");
  STRATA_ASSIGN_OR_RETURN(auto table,
                          LocalTable::Open(store_, found->prefix, name, std::move(found->manifest),
                                           shard_options_, compaction_));
  open_.emplace(key, table);
  return table;
}

Result<std::shared_ptr<Table>> LocalCatalog::GetTable(const std::string& database,
                                                      const std::string& name) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(database, "database name"));
  STRATA_RETURN_IF_ERROR(ValidateTableName(name));
  std::lock_guard<std::mutex> lock(mu_);
  STRATA_ASSIGN_OR_RETURN(auto t, GetLocked(database, name));
  return std::shared_ptr<Table>(std::move(t));
}

Result<std::shared_ptr<Table>> LocalCatalog::CreateTable(
    const std::string& database, const std::string& name, arrow::SchemaPtr schema,
    const std::vector<arrow::RecordBatchPtr>& batches, CreateMode mode,
    const std::optional<LsmWriteSpec>& lsm_spec) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(database, "database name"));
  STRATA_RETURN_IF_ERROR(ValidateNewTableName(name));
  if (schema == nullptr) return Status::Invalid("table schema is missing");
  std::lock_guard<std::mutex> lock(mu_);
  if (dropping_.count(std::make_pair(database, name)) != 0) {
    return Status::AlreadyExists("table '" + name +
                                 "' is still being dropped; create it again once the drop "
                                 "has finished");
  }
  auto existing = GetLocked(database, name);
  if (existing.ok()) {
    switch (mode) {
      case CreateMode::kCreate:
        return Status::AlreadyExists("table '" + name + "' already exists");
      case CreateMode::kExistOk:
        return std::shared_ptr<Table>(*existing);
      case CreateMode::kOverwrite: {
        STRATA_RETURN_IF_ERROR((*existing)->Overwrite(schema, batches).status());
        if (lsm_spec) STRATA_RETURN_IF_ERROR((*existing)->SetLsmWriteSpec(lsm_spec));
        return std::shared_ptr<Table>(*existing);
      }
    }
  }
  if (!existing.status().IsNotFound()) return existing.status();
  STRATA_ASSIGN_OR_RETURN(std::string prefix, folders_.PrefixForNewTable(database, name));
  STRATA_ASSIGN_OR_RETURN(auto table, LocalTable::Create(store_, prefix, name, schema, batches,
                                                         shard_options_, compaction_, lsm_spec));
  open_.emplace(std::make_pair(database, name), table);
  return std::shared_ptr<Table>(std::move(table));
}

Status LocalCatalog::DropTable(const std::string& database, const std::string& name) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(database, "database name"));
  STRATA_RETURN_IF_ERROR(ValidateTableName(name));
  const auto key = std::make_pair(database, name);
  std::shared_ptr<LocalTable> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto table = GetLocked(database, name);
    if (!table.ok()) {
      if (!table.status().IsNotFound()) {
        // A table that cannot be opened (corrupt) can still be dropped: remove its files.
        auto found = folders_.Find(database, name);
        if (found.ok() && found->has_value()) {
          const std::string prefix = (*found)->prefix;
          STRATA_ASSIGN_OR_RETURN(auto objects, store_->List(prefix + "/"));
          for (const auto& o : objects) STRATA_RETURN_IF_ERROR(store_->Remove(o.key));
          return folders_.RemovePointerTo(database, name, prefix);
        }
      }
      return table.status();
    }
    dropped = std::move(*table);
    open_.erase(key);
    dropping_.insert(key);
  }
  // Without mu_ (see the header): the table's own lock orders its writers against the drop.
  Status st = dropped->Drop();
  if (st.ok()) st = folders_.RemovePointerTo(database, name, dropped->prefix());
  dropped.reset();
  std::lock_guard<std::mutex> lock(mu_);
  dropping_.erase(key);
  return st;
}

Status LocalCatalog::RenameTable(const std::string& database, const std::string& from,
                                 const std::string& to) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(database, "database name"));
  STRATA_RETURN_IF_ERROR(ValidateTableName(from));
  STRATA_RETURN_IF_ERROR(ValidateNewTableName(to, "new table name"));
  std::lock_guard<std::mutex> lock(mu_);
  if (dropping_.count(std::make_pair(database, to)) != 0) {
    return Status::AlreadyExists("table '" + to + "' is still being dropped");
  }
  STRATA_ASSIGN_OR_RETURN(auto table, GetLocked(database, from));
  if (from == to) return Status::AlreadyExists("table '" + to + "' already exists");
  auto target = GetLocked(database, to);
  if (target.ok()) return Status::AlreadyExists("table '" + to + "' already exists");
  if (!target.status().IsNotFound()) return target.status();
  const std::string from_prefix = table->prefix();
  const std::string to_prefix = TablePrefix(database, to);
  // A local disk moves the folder to the new name's plain folder (one atomic rename). An
  // object store cannot: the table keeps its folder and the manifest commit below renames it,
  // found by a pointer (table/table_folders.h). The plain folder of `to` may hold a table
  // renamed away from it; then it is not moved onto either.
  STRATA_ASSIGN_OR_RETURN(auto to_plain, format::LoadLatestTableManifest(*store_, to_prefix));
  const bool may_move =
      store_->SupportsRenamePrefix() && !to_plain && from_prefix == TablePrefix(database, from);
  if (may_move) {
    // Leftovers of a create that crashed before its manifest committed (not a table).
    STRATA_ASSIGN_OR_RETURN(auto leftovers, store_->List(to_prefix + "/"));
    for (const auto& o : leftovers) STRATA_RETURN_IF_ERROR(store_->Remove(o.key));
  }

  STRATA_RETURN_IF_ERROR(table->CloseForRename());
  open_.erase(std::make_pair(database, from));
  std::string folder = to_prefix;
  Status moved =
      may_move ? store_->RenamePrefix(from_prefix, to_prefix) : Status::NotSupported("no move");
  if (moved.code() == StatusCode::kNotSupported) {
    folder = from_prefix;
    if (folder != to_prefix) {
      Status pointed = folders_.WritePointer(database, to, folder);
      if (!pointed.ok())
        return pointed.WithContext("rename of table '" + from + "' to '" + to + "'");
    }
  } else if (!moved.ok()) {
    // Nothing moved: the next GetTable reopens the table under its old name.
    return moved.WithContext("rename of table '" + from + "' to '" + to + "'");
  }
  STRATA_ASSIGN_OR_RETURN(auto manifest, format::LoadLatestTableManifest(*store_, folder));
  if (!manifest) {
    return Status::Internal("table '" + to + "': no manifest after moving '" + from_prefix + "'");
  }
  // Without a move, the newest manifest must still name `from`: another server on the same
  // bucket may have renamed or dropped the table since this one opened it.
  if (folder == from_prefix && manifest->table_name() != from) {
    return Status::Fenced("rename of table '" + from + "' to '" + to +
                          "': another server renamed it to '" + manifest->table_name() +
                          "' meanwhile (table version " + std::to_string(manifest->version()) +
                          "); nothing was changed");
  }
  format::TableManifest m = std::move(*manifest);
  m.set_version(m.version() + 1);
  m.set_table_name(to);
  m.set_created_at_micros(WallClockMicros());
  // The rename's commit point (a put-if-absent of the next version).
  Status committed = format::CommitTableManifest(*store_, folder, m);
  if (committed.IsAlreadyExists()) {
    return Status::Fenced("rename of table '" + from + "' to '" + to +
                          "': another server committed table version " +
                          std::to_string(m.version()) + " first; nothing was changed");
  }
  STRATA_RETURN_IF_ERROR(committed);
  if (folder == from_prefix) {
    Status stale = folders_.RemovePointerTo(database, from, folder);
    if (!stale.ok()) {
      spdlog::warn("rename of table '{}' to '{}': its old pointer stays (ignored by lookups): {}",
                   from, to, stale.ToString());
    }
  }
  // The rename is committed. The old table object is still held (`table`), so the reopen
  // maps the data files it maps, not second copies (io/fetched_file.h). A failed reopen does
  // not undo the rename: it is recorded like any failed open and retried in the background.
  auto reopened = GetLocked(database, to, TableFolders::Found{folder, std::move(m)});
  if (!reopened.ok()) {
    spdlog::error("table '{}' renamed to '{}', but it could not be reopened yet: {}", from, to,
                  reopened.status().ToString());
  }
  return Status::OK();
}

}  // namespace strata::table
