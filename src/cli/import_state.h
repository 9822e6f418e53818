// The resume state of `strata import`: per input file, how many rows (and, for text files,
// which byte offset and line) the server has acknowledged. Written after every acknowledged
// batch (temporary file, fsync, rename: a crash leaves the old or the new state, never a torn
// one), read by `--resume`, removed when the import completes.
// Default location: `.strata-import-{database}-{table}.json` in the current directory (names
// with '/' or other unsafe characters are escaped), or `--state-file PATH`.
// Format (JSON): {"url","database","table","id_start","import_id","batch_rows","batch_bytes",
// "files":[{"path","size","mtime_ns","rows","offset","line","batches","complete","first_id"}]}.
// `import_id` names the import in the x-request-id of its batches (cli/import.h), and the batch
// sizes are kept so that a resumed import re-sends a batch in flight with the same rows.
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::cli {

struct FileProgress {
  std::string path;  // absolute
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t rows = 0;       // rows acknowledged
  int64_t offset = 0;     // text files: byte offset just past the last acknowledged row
  int64_t line = 1;       // text files: line the next row starts on
  int64_t batches = 0;    // batches acknowledged
  int64_t first_id = -1;  // vector files: the id of its first row (-1: not a vector file)
  bool complete = false;
};

struct ImportState {
  std::string url;
  std::string database;
  std::string table;
  /// Vector files: the id of the first file's first row (-1: not a vector import).
  int64_t id_start = -1;
  /// 32 hex digits chosen by the first run ("" in state files of older versions).
  std::string import_id;
  /// --batch-rows and --batch-bytes of the first run (0: not recorded).
  int64_t batch_rows = 0;
  int64_t batch_bytes = 0;
  std::vector<FileProgress> files;

  /// The entry for `path`, or nullptr.
  FileProgress* Find(const std::string& path);
};

std::string DefaultStatePath(const std::string& database, const std::string& table);
/// nullopt when the file does not exist; Invalid when it is not a state file.
Result<std::optional<ImportState>> LoadImportState(const std::string& path);
Status SaveImportState(const std::string& path, const ImportState& state);

}  // namespace strata::cli
