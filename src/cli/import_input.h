// The input files of `strata import` (cli/import.h): their formats, detected from the
// extension or --format, and the whole-file readers and error shaping the importer shares.
//  - Format: CSV, JSON Lines, Arrow IPC (file or stream), .npy, .fvecs, .bvecs;
//  - InputFile: one file as given (path, size, mtime; for vector files rows, dimension and the
//    id of its first row);
//  - AtLine: turns a rows_json.h error "row R, ..." into "FILE:LINE: ...".
// Errors: Invalid naming the file for an unknown extension; IOError for unreadable files.
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arrow/ipc/reader.h"
#include "cli/vector_file.h"
#include "common/status.h"

namespace strata::cli {

enum class Format { kCsv, kJsonl, kArrow, kNpy, kFvecs, kBvecs };

bool IsVectorFormat(Format f);
VectorFileKind KindOf(Format f);
/// "csv", "jsonl", "arrow", "npy", "fvecs" or "bvecs".
const char* FormatName(Format f);

struct InputFile {
  std::string path;   // absolute
  std::string shown;  // as given on the command line
  Format format;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  // Vector files: rows, dimension and the id of the first row (ids run on across the files).
  int64_t rows = 0;
  int64_t dim = 0;
  int64_t first_id = 0;
  // Size or mtime differ from the state file's (a resumed text file is then re-read from its
  // start, skipping the acknowledged records).
  bool changed = false;
};

/// The format of `path`: `flag` when it names one (not "auto"), else from the extension.
Result<Format> DetectFormat(const std::string& path, const std::string& flag);

/// The whole file. Errors: IOError naming it.
Result<std::string> ReadWholeFile(const std::string& path);

/// An Arrow IPC file ("ARROW1" magic) or stream, read whole.
Result<arrow::ipc::ReadResult> ReadArrowInput(const std::string& path);

/// "row 3, column 'x': ..." (rows_json.h; row = index into `lines`) -> "FILE:LINE: column 'x':
/// ..."; other messages get "FILE: " in front.
Status AtLine(const Status& st, const std::string& path, const std::vector<int64_t>& lines);

}  // namespace strata::cli
