// The Catalog over an ObjectStore (DESIGN.md §3): tables live at
// {root}/{database_dir}/{table_dir}/ where the directory names come from EncodeNameForDir.
// A directory is a table once it holds a committed manifest. Tables are opened lazily (first
// GetTable/CreateTable replays the WAL) and then cached; ListTables reads the store, so a
// restart finds every table.
// Locking: `mu_` guards open_ and serialises create / get-open / drop (so two creators of one
// name cannot both win); table operations themselves run under each table's own lock. A drop
// takes the table out of open_ and marks it in dropping_ under mu_, then stops the table and
// removes its files WITHOUT mu_ (stopping waits for the table's background threads, e.g. an
// IVF training that cannot be interrupted: other tables must not wait for it); meanwhile the
// name answers NotFound to get, and create / rename onto it are refused.
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/object_store.h"
#include "table/catalog.h"
#include "table/local_table.h"
#include "table/supervisor.h"
#include "table/table_folders.h"

namespace strata::table {

class LocalCatalog : public Catalog {
 public:
  /// Starts the supervisor (table/supervisor.h): free-space floor refresh and the recovery of
  /// poisoned shard writers.
  explicit LocalCatalog(std::shared_ptr<io::ObjectStore> store,
                        shard::ShardWriterOptions shard_options = {},
                        base::CompactionOptions compaction = {}, RecoveryOptions recovery = {});
  /// Stops the supervisor before the tables close.
  ~LocalCatalog() override;

  Result<std::vector<std::string>> ListTables(const std::string& database) override;
  Result<std::shared_ptr<Table>> CreateTable(
      const std::string& database, const std::string& name, arrow::SchemaPtr schema,
      const std::vector<arrow::RecordBatchPtr>& batches, CreateMode mode,
      const std::optional<LsmWriteSpec>& lsm_spec = std::nullopt) override;
  Result<std::shared_ptr<Table>> GetTable(const std::string& database,
                                          const std::string& name) override;
  Status DropTable(const std::string& database, const std::string& name) override;
  /// Closes the table and renames it. On a local disk it moves the folder to the new name's
  /// plain folder (ObjectStore::RenamePrefix) and commits a manifest with the new table_name
  /// there; a crash between the move and that commit leaves a manifest naming the old table in
  /// the new folder, which GetTable accepts for plain (decodable) folder names, where the
  /// folder name is authoritative. On a store without an atomic move (S3) the table keeps its
  /// folder: a pointer to it is written, then the manifest naming the new name is committed
  /// (the commit point; table/table_folders.h). Either way the table reopens (WAL replay).
  Status RenameTable(const std::string& database, const std::string& from,
                     const std::string& to) override;
  /// Defined in local_catalog_metrics.cc; takes mu_.
  std::vector<OpenTable> OpenTables() override;
  std::optional<io::FreeSpaceState> FreeSpace() const override;
  std::vector<TableOpenFailure> OpenFailures() override;

  /// Object-store prefix of a table: "{EncodeNameForDir(database)}/{EncodeNameForDir(name)}".
  static std::string TablePrefix(const std::string& database, const std::string& name);

 private:
  /// The open table, opening it from its manifest when needed; a failed open (other than
  /// NotFound) is recorded in open_failures_. Caller holds mu_.
  /// `known`: the table's folder and newest manifest when the caller has them (a rename just
  /// committed it), so the open does not load them again.
  Result<std::shared_ptr<LocalTable>> GetLocked(
      const std::string& database, const std::string& name,
      std::optional<TableFolders::Found> known = std::nullopt);
  Result<std::shared_ptr<LocalTable>> OpenLocked(const std::string& database,
                                                 const std::string& name,
                                                 std::optional<TableFolders::Found> known);
  /// The supervisor's tick: opens again the tables whose open failed, each after its backoff
  /// (1 s doubling up to the recovery's max_backoff), so /readyz recovers with no request.
  void RetryFailedOpens();

  /// A failed open: since the first failure, the newest error, the next retry.
  struct OpenFailure {
    Status status;
    std::chrono::steady_clock::time_point since;
    std::chrono::steady_clock::time_point next_retry;
    std::chrono::milliseconds backoff{0};
  };

  const std::shared_ptr<io::ObjectStore> store_;
  TableFolders folders_;  // stateless besides store_
  const shard::ShardWriterOptions shard_options_;
  const base::CompactionOptions compaction_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<LocalTable>> open_;  // mu_
  std::set<std::pair<std::string, std::string>> dropping_;  // mu_: drops running without mu_
  std::map<std::pair<std::string, std::string>, OpenFailure> open_failures_;  // mu_
  const RecoveryOptions recovery_;
  /// Declared last: destroyed (thread joined) first.
  std::unique_ptr<TableSupervisor> supervisor_;
};

}  // namespace strata::table
