// Readers of the text formats `strata import` takes: CSV (RFC 4180) and JSON Lines. Both read a
// file sequentially through a 1 MiB buffer, track the 1-based line number where each record
// starts and the byte offset just past it, and can start at a saved (offset, line) so that
// `--resume` skips acknowledged rows without re-reading them.
// CSV: the first record is the header (column names); fields separated by ',', optionally
// quoted with '"' (a quoted field may hold ',', newlines and "" for a quote); CRLF or LF line
// ends; a record with a different number of fields than the header is an error naming its line;
// empty lines are skipped. JSON Lines: one JSON object per line; blank lines are skipped.
// Errors are Invalid "FILE:LINE: ..." (malformed record) or IOError (cannot open or read).
// Thread-safety: one reader per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::cli {

/// Buffered sequential reader of one file, counting bytes consumed.
class FileBuffer {
 public:
  FileBuffer() = default;
  ~FileBuffer();
  FileBuffer(const FileBuffer&) = delete;
  FileBuffer& operator=(const FileBuffer&) = delete;

  Status Open(const std::string& path, int64_t offset);
  /// Next byte, or -1 at the end of the file (read errors are returned by status()).
  int Get() {
    if (pos_ == len_ && !Fill()) return -1;
    ++offset_;
    return static_cast<unsigned char>(buf_[pos_++]);
  }
  /// The next byte without consuming it, or -1.
  int Peek() {
    if (pos_ == len_ && !Fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  int64_t offset() const { return offset_; }
  const Status& status() const { return status_; }

 private:
  bool Fill();

  std::FILE* f_ = nullptr;
  std::string path_;
  std::vector<char> buf_;
  size_t pos_ = 0;
  size_t len_ = 0;
  int64_t offset_ = 0;
  Status status_;
};

struct CsvRecord {
  std::vector<std::string> fields;
  /// 1-based line where the record starts.
  int64_t line = 0;
};

class CsvReader {
 public:
  /// Opens `path` and reads the header. When `offset` > 0, continues at that byte offset
  /// (just past an earlier record) whose next record starts on line `line`.
  Status Open(const std::string& path, int64_t offset = 0, int64_t line = 0);
  const std::vector<std::string>& header() const { return header_; }
  /// Reads the next record into `out`; false at the end of the file.
  Result<bool> Next(CsvRecord* out);
  /// Byte offset just past the last record returned, and the line the next one starts on.
  int64_t offset() const { return in_.offset(); }
  int64_t next_line() const { return line_; }

 private:
  Result<bool> ReadRecord(std::vector<std::string>* fields, int64_t* start_line);

  std::string path_;
  FileBuffer in_;
  std::vector<std::string> header_;
  int64_t line_ = 1;
};

struct JsonlRecord {
  nlohmann::json row;
  int64_t line = 0;
};

class JsonlReader {
 public:
  Status Open(const std::string& path, int64_t offset = 0, int64_t line = 1);
  /// Next object; false at the end. A line that is not a JSON object is Invalid FILE:LINE.
  Result<bool> Next(JsonlRecord* out);
  int64_t offset() const { return in_.offset(); }
  int64_t next_line() const { return line_; }

 private:
  std::string path_;
  FileBuffer in_;
  std::string text_;
  int64_t line_ = 1;
};

}  // namespace strata::cli
