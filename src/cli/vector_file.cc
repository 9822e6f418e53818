#include "cli/vector_file.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace strata::cli {

namespace {

constexpr int64_t kMaxDim = 65536;  // the server's hard vector dimension limit

uint32_t LittleU32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// IEEE 754 binary16 -> binary32.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: value = mant * 2^-24
      const float v = std::ldexp(static_cast<float>(mant), -24);
      std::memcpy(&bits, &v, 4);
      bits |= sign;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The value of `key` in the NPY header dict: the text after "'key':" up to the end of the
// value (a quoted string, a parenthesised tuple, or a word).
Result<std::string> DictValue(const std::string& header, const std::string& key,
                              const std::string& path) {
  size_t at = std::string::npos;
  for (const char q : {'\'', '"'}) {
    at = header.find(std::string(1, q) + key + std::string(1, q));
    if (at != std::string::npos) {
      at += key.size() + 2;
      break;
    }
  }
  if (at == std::string::npos) {
    return Status::Invalid(path + ": .npy header has no '" + key + "': " + header);
  }
  while (at < header.size() && (header[at] == ' ' || header[at] == ':')) ++at;
  if (at >= header.size()) return Status::Invalid(path + ": .npy header is cut after " + key);
  const char open = header[at];
  if (open == '\'' || open == '"') {
    const size_t end = header.find(open, at + 1);
    if (end == std::string::npos) return Status::Invalid(path + ": .npy header: bad " + key);
    return header.substr(at + 1, end - at - 1);
  }
  if (open == '(') {
    const size_t end = header.find(')', at);
    if (end == std::string::npos) return Status::Invalid(path + ": .npy header: bad " + key);
    return header.substr(at, end - at + 1);
  }
  size_t end = at;
  while (end < header.size() && std::isalnum(static_cast<unsigned char>(header[end]))) ++end;
  return header.substr(at, end - at);
}

// "(60000, 784)" -> {60000, 784}.
Result<std::vector<int64_t>> ParseShape(const std::string& tuple, const std::string& path) {
  std::vector<int64_t> dims;
  size_t i = 1;
  while (i < tuple.size()) {
    while (i < tuple.size() && (tuple[i] == ' ' || tuple[i] == ',')) ++i;
    if (i >= tuple.size() || tuple[i] == ')') break;
    if (!std::isdigit(static_cast<unsigned char>(tuple[i]))) {
      return Status::Invalid(path + ": .npy shape " + tuple + " is not a tuple of integers");
    }
    int64_t v = 0;
    while (i < tuple.size() && std::isdigit(static_cast<unsigned char>(tuple[i]))) {
      if (v > (int64_t{1} << 50))
        return Status::Invalid(path + ": .npy shape " + tuple + " overflows");
      v = v * 10 + (tuple[i] - '0');
      ++i;
    }
    dims.push_back(v);
  }
  return dims;
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(dims[i]);
  }
  return s + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

Result<VectorFile> VectorFile::Open(const std::string& path, VectorFileKind kind) {
  VectorFile f;
  f.path_ = path;
  f.kind_ = kind;
  f.in_.open(path, std::ios::binary);
  if (!f.in_) return Status::IOError("cannot open " + path);
  std::error_code ec;
  const int64_t size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) return Status::IOError("cannot stat " + path + ": " + ec.message());

  if (kind == VectorFileKind::kNpy) {
    unsigned char pre[12] = {0};
    f.in_.read(reinterpret_cast<char*>(pre), 10);
    if (f.in_.gcount() < 10 || std::memcmp(pre, "\x93NUMPY", 6) != 0) {
      return Status::Invalid(path + ": not a .npy file (no \\x93NUMPY magic)");
    }
    const int major = pre[6];
    int64_t header_len = 0;
    int64_t prefix = 10;
    if (major == 1) {
      header_len = pre[8] | pre[9] << 8;
    } else if (major == 2 || major == 3) {
      f.in_.read(reinterpret_cast<char*>(pre + 10), 2);
      if (f.in_.gcount() < 2) return Status::Invalid(path + ": .npy file is cut in its header");
      header_len = LittleU32(pre + 8);
      prefix = 12;
    } else {
      return Status::Invalid(path + ": .npy format version " + std::to_string(major) + "." +
                             std::to_string(pre[7]) + " is not supported (1.0, 2.0, 3.0)");
    }
    if (prefix + header_len > size) {
      return Status::Invalid(path + ": .npy header length " + std::to_string(header_len) +
                             " runs past the end of the file");
    }
    std::string header(static_cast<size_t>(header_len), '\0');
    f.in_.read(header.data(), header_len);
    if (f.in_.gcount() < header_len) return Status::IOError("cannot read " + path);
    STRATA_ASSIGN_OR_RETURN(std::string descr, DictValue(header, "descr", path));
    STRATA_ASSIGN_OR_RETURN(std::string fortran, DictValue(header, "fortran_order", path));
    STRATA_ASSIGN_OR_RETURN(std::string shape_text, DictValue(header, "shape", path));
    if (fortran != "False") {
      return Status::Invalid(path +
                             ": .npy array is in Fortran order; save it in C order "
                             "(numpy.ascontiguousarray) to import it");
    }
    const auto bad_dtype = [&] {
      return Status::Invalid(path + ": .npy dtype '" + descr +
                             "' is not supported (float16/32/64 or 8-64-bit integers)");
    };
    if (descr.size() < 3) return bad_dtype();
    const char order = descr[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') return bad_dtype();
    f.type_ = descr[1];
    const std::string width = descr.substr(2);
    if (width != "1" && width != "2" && width != "4" && width != "8") return bad_dtype();
    f.item_size_ = width[0] - '0';
    const bool ok_type = (f.type_ == 'f' && f.item_size_ >= 2) || f.type_ == 'i' || f.type_ == 'u';
    if (!ok_type) return bad_dtype();
    f.swap_ = order == '>' && f.item_size_ > 1;
    STRATA_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseShape(shape_text, path));
    if (dims.size() != 2) {
      return Status::Invalid(path + ": .npy shape " + ShapeText(dims) +
                             " is not 2-D (rows, dimension)");
    }
    f.rows_ = dims[0];
    f.dim_ = dims[1];
    if (f.dim_ < 1 || f.dim_ > kMaxDim) {
      return Status::Invalid(path + ": vector dimension " + std::to_string(f.dim_) +
                             " is outside [1, " + std::to_string(kMaxDim) + "]");
    }
    f.data_offset_ = prefix + header_len;
    f.row_bytes_ = f.dim_ * f.item_size_;
    const int64_t want = f.data_offset_ + f.rows_ * f.row_bytes_;
    if (f.rows_ > (int64_t{1} << 50) / f.row_bytes_ || want != size) {
      return Status::Invalid(path + ": .npy shape " + ShapeText(dims) + " of '" + descr +
                             "' needs " + std::to_string(want) + " bytes, the file has " +
                             std::to_string(size));
    }
    return f;
  }

  // .fvecs / .bvecs: the first vector's D fixes the record size.
  f.type_ = kind == VectorFileKind::kFvecs ? 'f' : 'u';
  f.item_size_ = kind == VectorFileKind::kFvecs ? 4 : 1;
  const char* ext = kind == VectorFileKind::kFvecs ? ".fvecs" : ".bvecs";
  if (size == 0) return f;  // no vectors
  unsigned char d[4];
  f.in_.read(reinterpret_cast<char*>(d), 4);
  if (f.in_.gcount() < 4) return Status::Invalid(path + ": " + ext + " file is cut in row 0");
  const int64_t dim = static_cast<int32_t>(LittleU32(d));
  if (dim < 1 || dim > kMaxDim) {
    return Status::Invalid(path + ": " + ext + " row 0 has dimension " + std::to_string(dim) +
                           ", outside [1, " + std::to_string(kMaxDim) + "]");
  }
  f.dim_ = dim;
  f.row_bytes_ = 4 + dim * f.item_size_;
  f.data_offset_ = 0;
  if (size % f.row_bytes_ != 0) {
    return Status::Invalid(path + ": " + ext + " file of " + std::to_string(size) +
                           " bytes is not a whole number of " + std::to_string(f.row_bytes_) +
                           "-byte rows of dimension " + std::to_string(dim) +
                           " (a cut file, or rows of different dimensions)");
  }
  f.rows_ = size / f.row_bytes_;
  return f;
}

Status VectorFile::NotFinite(int64_t row, int64_t element, float v) const {
  return Status::Invalid(path_ + ": row " + std::to_string(row) + ", element " +
                         std::to_string(element) + " is " + (std::isnan(v) ? "NaN" : "infinite") +
                         " (or out of float32 range); vectors must be finite");
}

int64_t VectorFile::OffsetAfter(int64_t row) const { return data_offset_ + row * row_bytes_; }

Status VectorFile::Read(int64_t first, int64_t n, std::vector<float>* out) {
  if (first < 0 || n < 0 || first + n > rows_) {
    return Status::Invalid(path_ + ": rows [" + std::to_string(first) + ", " +
                           std::to_string(first + n) + ") are outside the file's " +
                           std::to_string(rows_));
  }
  buf_.resize(static_cast<size_t>(n * row_bytes_));
  in_.clear();
  in_.seekg(OffsetAfter(first));
  in_.read(buf_.data(), n * row_bytes_);
  if (in_.gcount() != n * row_bytes_) return Status::IOError("cannot read " + path_);
  out->resize(static_cast<size_t>(n * dim_));
  const bool texmex = kind_ != VectorFileKind::kNpy;
  for (int64_t r = 0; r < n; ++r) {
    const unsigned char* row = reinterpret_cast<const unsigned char*>(buf_.data()) + r * row_bytes_;
    if (texmex) {
      const int64_t d = static_cast<int32_t>(LittleU32(row));
      if (d != dim_) {
        return Status::Invalid(path_ + ": row " + std::to_string(first + r) + " has dimension " +
                               std::to_string(d) + ", the file's first row " +
                               std::to_string(dim_));
      }
      row += 4;
    }
    float* dst = out->data() + r * dim_;
    if (type_ == 'f' && item_size_ == 4 && !swap_) {
      std::memcpy(dst, row, static_cast<size_t>(dim_) * 4);
      for (int64_t j = 0; j < dim_; ++j) {
        if (!std::isfinite(dst[j])) return NotFinite(first + r, j, dst[j]);
      }
      continue;
    }
    for (int64_t j = 0; j < dim_; ++j) {
      // The element's bytes as a little-endian integer of item_size_ bytes.
      const unsigned char* e = row + j * item_size_;
      uint64_t raw = 0;
      for (int k = 0; k < item_size_; ++k) {
        raw |= uint64_t{e[swap_ ? item_size_ - 1 - k : k]} << (8 * k);
      }
      float v = 0;
      if (type_ == 'f') {
        if (item_size_ == 2) {
          v = HalfToFloat(static_cast<uint16_t>(raw));
        } else if (item_size_ == 4) {
          const uint32_t bits = static_cast<uint32_t>(raw);
          std::memcpy(&v, &bits, 4);
        } else {
          double dv;
          std::memcpy(&dv, &raw, 8);
          v = static_cast<float>(dv);
        }
      } else if (type_ == 'i') {
        // Sign-extend from item_size_ bytes.
        const int shift = 64 - 8 * item_size_;
        v = static_cast<float>(static_cast<int64_t>(raw << shift) >> shift);
      } else {
        v = static_cast<float>(raw);
      }
      if (!std::isfinite(v)) return NotFinite(first + r, j, v);
      dst[j] = v;
    }
  }
  return Status::OK();
}

}  // namespace strata::cli
