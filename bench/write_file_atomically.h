// Writes a whole file for the bench tools (knn_ground_truth, hnswlib_sweep): the text goes to
// `path` + ".tmp", which is then renamed over `path`, so a reader (a cached ground-truth file
// checked by the Node scripts) never sees a half-written file. Not fsynced: the outputs are
// caches and reports that can be recomputed. Thread-safety: a pure function of its arguments.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace strata::bench {

/// Returns false with `*error` naming the file and the failed step (open, write, rename).
inline bool WriteFileAtomically(const std::string& path, const std::string& text,
                                std::string* error) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) {
      *error = "cannot open " + tmp + " for writing";
      return false;
    }
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.close();
    if (!f) {
      *error = "write to " + tmp + " failed";
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    *error = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    return false;
  }
  return true;
}

}  // namespace strata::bench
