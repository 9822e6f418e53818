// Files of bare vectors for `strata import`: NumPy `.npy` arrays and the TEXMEX `.fvecs` /
// `.bvecs` formats (the SIFT/GIST benchmark sets). A vector file holds a matrix of N rows of
// dimension D and nothing else; the import gives row i the id `first_id + i`.
//
// Formats (facts from their specifications; no code taken):
//  - .npy (NumPy's "NPY format", versions 1.0, 2.0 and 3.0): the magic "\x93NUMPY", a major and
//    a minor version byte, the header length (uint16 little-endian in 1.0, uint32 in 2.0/3.0),
//    then an ASCII (3.0: UTF-8) Python dict literal such as
//    {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 784), } padded with spaces and a
//    final '\n'; the array's bytes follow in C order. Accepted: 2-D shapes (N, D), C order,
//    dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 in either byte order ('<', '>', '|', '=').
//  - .fvecs: per vector an int32 (little-endian) D, then D float32; .bvecs: an int32 D, then D
//    uint8. Every vector must have the first vector's D.
// Values are converted to float32 (float64 and 64-bit integers rounded to nearest; the
// conversion of an integer above 2^24 may round). NaN and infinities are refused with their
// row and element (a query vector could never reach them), so an import fails before it sends
// a batch holding one.
// Errors: IOError when the file cannot be read; Invalid naming the file and what is wrong (bad
// magic, unsupported version or dtype, Fortran order, a shape that is not 2-D, D outside
// [1, 65536], a size that does not match the header, a vector whose D differs (with its row)).
// Thread-safety: one reader per thread.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::cli {

enum class VectorFileKind { kNpy, kFvecs, kBvecs };

class VectorFile {
 public:
  /// Opens `path` and checks its header and size.
  static Result<VectorFile> Open(const std::string& path, VectorFileKind kind);

  int64_t rows() const { return rows_; }
  int64_t dim() const { return dim_; }
  /// Byte offset just past row `row` (row in [0, rows()]), for progress.
  int64_t OffsetAfter(int64_t row) const;
  /// Reads rows [first, first + n) as float32, row-major, into *out (n * dim() floats).
  Status Read(int64_t first, int64_t n, std::vector<float>* out);

  VectorFile(VectorFile&&) = default;
  VectorFile& operator=(VectorFile&&) = default;

 private:
  VectorFile() = default;
  Status NotFinite(int64_t row, int64_t element, float v) const;

  std::string path_;
  VectorFileKind kind_ = VectorFileKind::kNpy;
  std::ifstream in_;
  int64_t rows_ = 0;
  int64_t dim_ = 0;
  int64_t data_offset_ = 0;  // first row's first byte
  int64_t row_bytes_ = 0;    // bytes per row in the file (fvecs/bvecs: with the 4-byte D)
  char type_ = 'f';          // npy: 'f' float, 'i' signed, 'u' unsigned
  int item_size_ = 4;        // bytes per element
  bool swap_ = false;        // npy: big-endian elements
  std::vector<char> buf_;    // raw bytes of the rows being read
};

}  // namespace strata::cli
