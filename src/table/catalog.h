// The table catalog: databases (folders under the data root) holding tables (folders under
// the database, DESIGN.md §3). Opening the catalog replays every table's WAL.
// Thread-safety: all methods are safe to call concurrently.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "common/status.h"
#include "shard/shard_writer.h"
#include "table/table.h"
#include "table/writer_recovery.h"

namespace strata::table {

enum class CreateMode { kCreate, kOverwrite, kExistOk };

/// A table whose open failed (a storage error, a corrupt manifest): not serving (/readyz).
struct TableOpenFailure {
  std::string database;
  std::string name;
  Status status;         // the newest failure
  int64_t since_ms = 0;  // milliseconds since the first failure
};

/// One table the catalog holds open (OpenTables()).
struct OpenTable {
  std::string database;
  std::string name;
  std::shared_ptr<Table> table;
};

class Catalog {
 public:
  virtual ~Catalog() = default;

  /// Opens (creating if missing) the data root `root_dir`; every table's shard writer uses
  /// `shard_options` (MemTable sizes, durability, backpressure; the primary key comes from
  /// each table's manifest) and every table's base `compaction` (triggers, limits).
  /// Errors: IOError.
  /// `recovery`: how a poisoned shard writer is reopened in the background
  /// (table/writer_recovery.h). `shard_options.free_space`: the store's free-space floor.
  static Result<std::unique_ptr<Catalog>> Open(const std::string& root_dir,
                                               shard::ShardWriterOptions shard_options = {},
                                               base::CompactionOptions compaction = {},
                                               RecoveryOptions recovery = {});
  /// The same on an already opened object store (an S3 bucket, io/s3_object_store.h).
  static Result<std::unique_ptr<Catalog>> Open(std::shared_ptr<io::ObjectStore> store,
                                               shard::ShardWriterOptions shard_options = {},
                                               base::CompactionOptions compaction = {},
                                               RecoveryOptions recovery = {});

  /// Table names of `database`, sorted ascending (empty when the database does not exist).
  virtual Result<std::vector<std::string>> ListTables(const std::string& database) = 0;

  /// Creates table `name` with `schema` and initial rows `batches` (may be empty).
  /// kCreate on an existing table: AlreadyExists ("table 'x' already exists").
  /// kExistOk on an existing table: returns the existing table unchanged.
  /// kOverwrite: replaces schema and rows.
  /// `lsm_spec` (checked by the caller: ValidateLsmWriteSpec): a new table
  /// is created with it in its first manifest (one commit: a table never exists without the
  /// spec it was created with); kOverwrite sets it after the overwrite (SetLsmWriteSpec, a
  /// second commit); kExistOk leaves an existing table's spec unchanged.
  /// Errors: Invalid for a bad name (empty, longer than 256 bytes, control characters) or
  /// batches that do not match the schema.
  virtual Result<std::shared_ptr<Table>> CreateTable(
      const std::string& database, const std::string& name, arrow::SchemaPtr schema,
      const std::vector<arrow::RecordBatchPtr>& batches, CreateMode mode,
      const std::optional<LsmWriteSpec>& lsm_spec = std::nullopt) = 0;

  /// The open table. Errors: NotFound ("table 'x' not found").
  virtual Result<std::shared_ptr<Table>> GetTable(const std::string& database,
                                                  const std::string& name) = 0;

  /// Removes the table and its files. Errors: NotFound.
  virtual Status DropTable(const std::string& database, const std::string& name) = 0;

  /// Renames table `from` of `database` to `to` (rename/): the table's files move atomically
  /// (one directory rename), the open table is closed first (later calls through an old handle
  /// fail NotFound) and reopened under the new name; the rename survives restarts.
  /// Errors: Invalid for a bad name (as CreateTable); NotFound when `from` does not exist;
  /// AlreadyExists ("table 'b' already exists") when `to` exists (or equals `from`);
  /// NotSupported when the object store cannot move folders atomically; IOError.
  virtual Status RenameTable(const std::string& database, const std::string& from,
                             const std::string& to) = 0;

  /// The tables opened so far (by a create, a lookup or a write) and not dropped, sorted by
  /// database then name; tables on disk never touched since start are not listed (GET
  /// /metrics). Default: none.
  virtual std::vector<OpenTable> OpenTables() { return {}; }

  /// Tables whose last open failed (other than NotFound), retried in the background until an
  /// open succeeds. Default: none.
  virtual std::vector<TableOpenFailure> OpenFailures() { return {}; }

  /// The store's free-space floor state (null when the store has none).
  virtual std::optional<io::FreeSpaceState> FreeSpace() const { return std::nullopt; }
};

}  // namespace strata::table
