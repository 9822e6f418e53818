// libFuzzer target: cli::VectorFile (the .npy / .fvecs / .bvecs reader of `strata import`) on
// arbitrary bytes, read as each of the three formats. Open must return a file or an
// Invalid/IOError status and never crash; an opened file's rows and dimension must account for
// every byte after the header (rows x row size = the data's size), and reading all its rows
// must return exactly rows x dim finite floats or an Invalid status naming a row.
// Seeds: fuzz/corpus/vector_file (.npy of f4, big-endian f8 in format 2.0, f2, i2, u1; an
// .fvecs and a .bvecs file).
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/vector_file.h"

namespace {

using strata::cli::VectorFile;
using strata::cli::VectorFileKind;

void Check(const std::string& path, VectorFileKind kind, int64_t size) {
  auto r = VectorFile::Open(path, kind);
  if (!r.ok()) {
    const auto code = r.status().code();
    if (code != strata::StatusCode::kInvalidArgument && code != strata::StatusCode::kIOError)
      std::abort();
    return;
  }
  VectorFile& f = *r;
  if (f.rows() < 0 || f.dim() < 0 || f.dim() > 65536) std::abort();
  if (f.rows() > 0 && f.dim() < 1) std::abort();
  if (f.OffsetAfter(f.rows()) != size && !(size == 0 && f.rows() == 0)) std::abort();
  std::vector<float> out;
  for (int64_t first = 0; first < f.rows(); first += 7) {
    const int64_t n = std::min<int64_t>(7, f.rows() - first);
    const strata::Status st = f.Read(first, n, &out);
    if (!st.ok()) {
      if (st.code() != strata::StatusCode::kInvalidArgument) std::abort();
      return;
    }
    if (static_cast<int64_t>(out.size()) != n * f.dim()) std::abort();
    for (float v : out) {
      if (!std::isfinite(v)) std::abort();
    }
  }
  // Rows outside the file are an error, not a read past its end.
  if (f.Read(f.rows(), 1, &out).ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr ? tmp : "/tmp") + "/strata-vector-file-fuzz-" +
           std::to_string(::getpid());
  }();
  FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) return 0;
  if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
  std::fclose(out);
  for (VectorFileKind kind :
       {VectorFileKind::kNpy, VectorFileKind::kFvecs, VectorFileKind::kBvecs}) {
    Check(path, kind, static_cast<int64_t>(size));
  }
  std::remove(path.c_str());
  return 0;
}
