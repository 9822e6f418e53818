// Test/bench helper: reads Fashion-MNIST image files (IDX format, gzip-compressed) as float32
// vectors of raw pixel values 0..255, 784 per image. IDX (LeCun's MNIST page): big-endian
// magic 0x00000803 (two zero bytes, type 0x08 = unsigned byte, 3 dimensions), then the three
// dimensions as big-endian uint32 (count, rows, cols), then count*rows*cols bytes.
// ReadIdxUbyte also returns the raw bytes of any ubyte IDX file, e.g. the label files (magic
// 0x00000801: one dimension, one uint8 class 0..9 per image).
// Decompression runs `gzip -dc` through popen (zlib is not linked into the project).
// Header-only so that tests and bench/ (which only link strata_core) can both include it.
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace strata::testing {

/// `count` images of `dim` float pixels, row-major.
struct IdxImages {
  int64_t count = 0;
  int64_t dim = 0;
  std::vector<float> pixels;
  const float* row(int64_t i) const { return pixels.data() + i * dim; }
};

/// The dataset folder: $STRATA_FASHION_MNIST_DIR, else the Debian-style install path.
inline std::string FashionMnistDir() {
  const char* env = std::getenv("STRATA_FASHION_MNIST_DIR");
  return env != nullptr && *env != '\0' ? env : "/usr/share/datasets/fashion-mnist";
}

/// Paths of the training and test image files.
inline std::string FashionMnistTrainPath() {
  return FashionMnistDir() + "/train-images-idx3-ubyte.gz";
}
inline std::string FashionMnistTestPath() {
  return FashionMnistDir() + "/t10k-images-idx3-ubyte.gz";
}

/// Paths of the training and test label files (IDX magic 0x00000801, one uint8 per image).
inline std::string FashionMnistTrainLabelsPath() {
  return FashionMnistDir() + "/train-labels-idx1-ubyte.gz";
}
inline std::string FashionMnistTestLabelsPath() {
  return FashionMnistDir() + "/t10k-labels-idx1-ubyte.gz";
}

/// True when both image files exist.
inline bool FashionMnistAvailable() {
  std::error_code ec;
  return std::filesystem::exists(FashionMnistTrainPath(), ec) &&
         std::filesystem::exists(FashionMnistTestPath(), ec);
}

/// Raw bytes of a gzip'd IDX file of unsigned bytes: `count` items of `item_size` bytes each
/// (item_size = product of the dimensions after the first; 1 for a label file), row-major.
struct IdxBytes {
  int64_t count = 0;
  int64_t item_size = 0;
  std::vector<uint8_t> bytes;
  const uint8_t* row(int64_t i) const { return bytes.data() + i * item_size; }
};

/// Reads the first `max_items` items (all when < 0) of the gzip'd IDX file at `path`, whose
/// magic must be 0x0000080N (type 0x08 = unsigned byte) with N = `dims` dimensions (3 for
/// images, 1 for labels). Returns false with `*error` set on a missing file, a short read or a
/// bad header.
inline bool ReadIdxUbyte(const std::string& path, int dims, int64_t max_items, IdxBytes* out,
                         std::string* error) {
  if (path.find('\'') != std::string::npos) {
    *error = "path holds a quote: " + path;
    return false;
  }
  if (dims < 1 || dims > 4) {
    *error = "IDX dimensions must be in [1, 4], got " + std::to_string(dims);
    return false;
  }
  const std::string cmd = "gzip -dc '" + path + "' 2>/dev/null";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) {
    *error = "cannot run " + cmd;
    return false;
  }
  auto be32 = [](const unsigned char* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
  };
  unsigned char header[4 + 4 * 4];
  const size_t header_size = 4 + 4 * static_cast<size_t>(dims);
  bool ok = std::fread(header, 1, header_size, f) == header_size;
  const uint32_t magic = 0x00000800u | static_cast<uint32_t>(dims);
  if (!ok) {
    *error = path + ": short IDX header (missing file or not gzip)";
  } else if (be32(header) != magic) {
    ok = false;
    *error = path + ": IDX magic is not 0x0000080" + std::to_string(dims) + " (ubyte, " +
             std::to_string(dims) + " dimension(s))";
  }
  if (ok) {
    const int64_t total = be32(header + 4);
    int64_t item_size = 1;
    for (int d = 1; d < dims; ++d) item_size *= be32(header + 4 + 4 * d);
    const int64_t n = max_items < 0 ? total : std::min(total, max_items);
    std::vector<uint8_t> bytes(static_cast<size_t>(n * item_size));
    if (std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      ok = false;
      *error = path + ": short IDX data";
    } else {
      out->count = n;
      out->item_size = item_size;
      out->bytes = std::move(bytes);
    }
  }
  char sink[1 << 16];
  while (std::fread(sink, 1, sizeof(sink), f) > 0) {
  }
  ::pclose(f);
  return ok;
}

/// Reads the first `max_images` images (all when < 0) of the gzip'd IDX image file at `path`
/// (magic 0x00000803) as float pixels. Returns false with `*error` set on a missing file, a
/// short read or a bad header.
inline bool ReadIdxImages(const std::string& path, int64_t max_images, IdxImages* out,
                          std::string* error) {
  IdxBytes raw;
  if (!ReadIdxUbyte(path, 3, max_images, &raw, error)) return false;
  out->count = raw.count;
  out->dim = raw.item_size;
  out->pixels.assign(raw.bytes.begin(), raw.bytes.end());
  return true;
}

/// Reads the first `train` training and `queries` test images of the Fashion-MNIST folder
/// `dir` as raw bytes (the bench tools' input). Returns false with `*error` naming the missing
/// file, a bad header, or a folder holding fewer images than asked for.
inline bool ReadFashionMnistBytes(const std::string& dir, int64_t train, int64_t queries,
                                  IdxBytes* train_img, IdxBytes* test_img, std::string* error) {
  for (const char* file : {"/train-images-idx3-ubyte.gz", "/t10k-images-idx3-ubyte.gz"}) {
    std::error_code ec;
    if (!std::filesystem::exists(dir + file, ec)) {
      *error = "no " + dir + file +
               " (set --dataset or $STRATA_FASHION_MNIST_DIR to the Fashion-MNIST folder)";
      return false;
    }
  }
  if (!ReadIdxUbyte(dir + "/train-images-idx3-ubyte.gz", 3, train, train_img, error) ||
      !ReadIdxUbyte(dir + "/t10k-images-idx3-ubyte.gz", 3, queries, test_img, error)) {
    return false;
  }
  if (train_img->count < train || test_img->count < queries) {
    *error = dir + " holds " + std::to_string(train_img->count) + " training and " +
             std::to_string(test_img->count) + " test images, fewer than " + std::to_string(train) +
             " / " + std::to_string(queries);
    return false;
  }
  if (train_img->item_size != test_img->item_size) {
    *error = dir + ": training and test images differ in size";
    return false;
  }
  return true;
}

}  // namespace strata::testing
