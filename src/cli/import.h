// `strata import`: loads CSV, JSON Lines, Arrow IPC (file or stream) and vector files (.npy,
// .fvecs, .bvecs: cli/vector_file.h, with generated ids) into a table through the REST API of a
// running server (README.md "Command-line client").
//  - The table is created when missing (create/?mode=exist_ok with a schema and 0 rows): its
//    schema comes from --schema (LanceDB schema JSON, PROTOCOL.md §3), else the Arrow file's
//    schema, else {id int64, vector fixed_size_list<float32>[D]} for vector files (primary key
//    id unless --primary-key), else is inferred from the first rows of the first file
//    (cli/infer_schema.h).
//    An existing table is appended to under its describe/ schema.
//  - Rows are sent in batches (--batch-rows, --batch-bytes of input, whichever fills first;
//    Arrow and vector files count their average bytes per row) as
//    LZ4-compressed Arrow IPC streams on insert/; a batch is built completely before it is
//    sent, so a malformed row (reported as FILE:LINE) fails the import with nothing of its
//    batch committed. 503/429 answers (backpressure) are retried with a backoff.
//  - After each acknowledged batch the state file (cli/import_state.h) records the rows done
//    per file; `--resume` continues after them. SIGINT/SIGTERM stop after the batch in flight.
//    Exactly once: each batch carries x-request-id "strata-import-{import id}-{file}-{first
//    row}" (the import id is chosen by the first run and kept in the state file, with the
//    batch sizes). A batch in flight when the import died (which the server may have
//    committed: the window is the whole round trip) is re-sent by --resume under the same id, and
//    the server answers it from its request-id dedupe (server/request_dedupe.h) without inserting
//    it again, as long as that server has not restarted and --dedupe-ttl-s (600 s) has not
//    passed. Beyond that a table with a primary key (--primary-key at creation) absorbs the
//    re-sent batch as an upsert; a table without one would get it twice.
// Thread-safety: RunImport is called once per process (it installs signal handlers).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/client.h"

namespace strata::cli {

struct ImportOptions {
  ClientOptions client;
  std::string table;
  std::vector<std::string> files;
  /// auto (from the extension: .csv, .jsonl/.ndjson/.json, .arrow/.arrows/.ipc/.feather,
  /// .npy, .fvecs, .bvecs), csv, jsonl, arrow, npy, fvecs or bvecs.
  std::string format = "auto";
  /// Vector files (cli/vector_file.h): the table gets columns `id_column` (int64, row i of the
  /// files in order gets id_start + i) and `vector_column` (fixed_size_list<float32>[D]).
  std::string id_column = "id";
  std::string vector_column = "vector";
  int64_t id_start = 0;
  /// --id-start was given: needed to append vector files to a table that has rows.
  bool id_start_given = false;
  std::string schema_file;
  /// Comma-separated primary-key columns declared when the import creates the table.
  std::string primary_key;
  int64_t batch_rows = 10000;
  int64_t batch_bytes = int64_t{32} << 20;
  /// --batch-rows / --batch-bytes were given (a --resume with other values than the state
  /// file's is refused; without them the state file's are used).
  bool batch_rows_given = false;
  bool batch_bytes_given = false;
  bool resume = false;
  std::string state_file;
  /// Test hook: stop (exit 5, state saved) after this many batches were acknowledged.
  int64_t stop_after_batches = 0;
  /// Test hook: exit at once with code 137 (like a SIGKILL) when the server has acknowledged
  /// this many batches, before the state file records the last one.
  int64_t crash_after_batches = 0;
  bool json = false;
  bool quiet = false;
};

/// Runs the import; returns the process exit code (cli/exit_codes.h) after printing the
/// summary (stdout) or the error (stderr).
int RunImport(const ImportOptions& options);

/// Registers `import` on `app`; its callback stores RunImport's result in *exit_code.
void AddImportCommand(CLI::App& app, int* exit_code);

}  // namespace strata::cli
