// The importer of `strata import` (cli/import.h), shared by its two source files: import.cc
// (set-up, table creation, sending and acknowledging batches, the resume state, the summary)
// and import_readers.cc (one reader per input format cutting the file into batches).
// Internal to src/cli/; not a public interface.
// Thread-safety: one Importer per process, used by one thread (signal handlers only set a flag).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrow/type.h"
#include "cli/client.h"
#include "cli/import.h"
#include "cli/import_input.h"
#include "cli/import_state.h"
#include "cli/progress.h"

namespace strata::cli {

class Importer {
 public:
  explicit Importer(const ImportOptions& o) : o_(o), client_(o.client) {}

  int Run();

 private:
  Status Prepare();
  Status EnsureTable();
  Result<std::optional<arrow::SchemaPtr>> DescribeSchema();
  Result<arrow::SchemaPtr> SchemaForCreate();
  Status ImportText(const InputFile& f, FileProgress* fp);
  Status ImportArrow(const InputFile& f, FileProgress* fp);
  Status ImportVectors(const InputFile& f, FileProgress* fp);
  arrow::SchemaPtr VectorSchema(int64_t dim) const;
  Status CheckVectorTable() const;
  // The x-request-id of the batch that starts after the rows `fp` records: the import id, the
  // file's place in the state file and that row. A resumed import re-sends a batch in flight
  // under the same id, so the server's dedupe answers it without inserting it twice.
  std::string BatchRequestId(const FileProgress* fp) const;
  Status Send(const arrow::Schema& schema, const arrow::RecordBatchPtr& batch,
              const std::string& request_id);
  // After an acknowledged batch: records it, saves the state, updates the progress display.
  Status Acknowledged(FileProgress* fp, int64_t rows, int64_t file_bytes_done);
  bool ShouldStop() const;
  // Removes "{state file}.lock" when no state file is left (an unfinished import keeps both).
  void RemoveLockWithoutState() const;

  const ImportOptions& o_;
  RestClient client_;
  std::vector<InputFile> files_;
  std::string state_path_;
  ImportState state_;
  arrow::SchemaPtr schema_;
  bool created_ = false;
  std::unique_ptr<Progress> progress_;
  int64_t batch_rows_ = 0;   // --batch-rows, or the state file's on --resume
  int64_t batch_bytes_ = 0;  // --batch-bytes, or the state file's on --resume
  int64_t total_bytes_ = 0;
  int64_t bytes_before_file_ = 0;  // bytes of the files done before the current one
  int64_t file_bytes_ = 0;         // bytes of the current file done
  int64_t rows_sent_ = 0;          // rows acknowledged in this run
  int64_t rows_skipped_ = 0;       // rows acknowledged in earlier runs (--resume)
  int64_t batches_ = 0;            // batches acknowledged in this run
  int64_t wire_bytes_ = 0;         // IPC bytes sent
  int64_t retries_ = 0;
  bool in_doubt_ = false;
  bool last_replayed_ = false;  // the last batch sent was answered from the server's dedupe
  bool resumed_ = false;        // --resume found a state file (its ids are already chosen)
  int lock_fd_ = -1;  // flock'ed "{state file}.lock" (held until exit)  // an insert/ got no
                      // answer: it may have committed
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace strata::cli
