#include "arrow/ipc/compression.h"

#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace strata::arrow::ipc::internal {

const char* CompressionName(Compression codec) {
  switch (codec) {
    case Compression::kLz4Frame:
      return "LZ4_FRAME";
    case Compression::kZstd:
      return "ZSTD";
    case Compression::kNone:
      return "NONE";
  }
  return "?";
}

Status CompressBuffer(Compression codec, const uint8_t* data, int64_t size, std::string* out) {
  const size_t n = static_cast<size_t>(size);
  const size_t start = out->size();
  if (codec == Compression::kLz4Frame) {
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.contentSize = n;
    const size_t bound = LZ4F_compressFrameBound(n, &prefs);
    out->resize(start + bound);
    const size_t got = LZ4F_compressFrame(out->data() + start, bound, data, n, &prefs);
    if (LZ4F_isError(got)) {
      out->resize(start);
      return Status::Internal(std::string("LZ4F_compressFrame failed: ") + LZ4F_getErrorName(got));
    }
    out->resize(start + got);
    return Status::OK();
  }
  if (codec == Compression::kZstd) {
    const size_t bound = ZSTD_compressBound(n);
    out->resize(start + bound);
    const size_t got = ZSTD_compress(out->data() + start, bound, data, n, 1);
    if (ZSTD_isError(got)) {
      out->resize(start);
      return Status::Internal(std::string("ZSTD_compress failed: ") + ZSTD_getErrorName(got));
    }
    out->resize(start + got);
    return Status::OK();
  }
  out->append(reinterpret_cast<const char*>(data), n);
  return Status::OK();
}

namespace {

struct Lz4Ctx {
  LZ4F_dctx* ctx = nullptr;
  ~Lz4Ctx() {
    if (ctx != nullptr) LZ4F_freeDecompressionContext(ctx);
  }
};

}  // namespace

Result<BufferPtr> DecompressBuffer(Compression codec, const uint8_t* data, int64_t size,
                                   int64_t uncompressed_size) {
  if (uncompressed_size < 0 || size < 0) {
    return Status::Corruption("negative compressed buffer size");
  }
  // Refuse impossible sizes before allocating: LZ4 expands at most ~255x, and a zstd frame that
  // records its content size must agree with the prefix.
  if (codec == Compression::kLz4Frame && uncompressed_size / 256 > size + 65536) {
    return Status::Corruption("LZ4_FRAME buffer of " + std::to_string(size) +
                              " bytes cannot hold " + std::to_string(uncompressed_size) +
                              " uncompressed bytes");
  }
  if (codec == Compression::kZstd) {
    const unsigned long long content = ZSTD_getFrameContentSize(data, static_cast<size_t>(size));
    if (content == ZSTD_CONTENTSIZE_ERROR) {
      return Status::Corruption("ZSTD buffer does not start with a valid frame header");
    }
    if (content != ZSTD_CONTENTSIZE_UNKNOWN &&
        content != static_cast<unsigned long long>(uncompressed_size)) {
      return Status::Corruption("ZSTD frame holds " + std::to_string(content) +
                                " bytes, the length prefix says " +
                                std::to_string(uncompressed_size));
    }
  }
  // Uninitialized 64-byte-aligned allocation (every byte is written by the decompressor; the
  // padding is zeroed) rather than AllocateZeroed, which would touch the memory twice.
  const int64_t capacity = std::max<int64_t>(PaddedLength(uncompressed_size), 64);
  auto* dst = static_cast<uint8_t*>(std::aligned_alloc(64, static_cast<size_t>(capacity)));
  if (dst == nullptr) {
    return Status::Internal("cannot allocate " + std::to_string(capacity) + " bytes");
  }
  std::memset(dst + uncompressed_size, 0, static_cast<size_t>(capacity - uncompressed_size));
  std::shared_ptr<const void> owner(dst, [](const void* q) { std::free(const_cast<void*>(q)); });
  BufferPtr out = Buffer::Wrap(dst, uncompressed_size, std::move(owner));
  const size_t want = static_cast<size_t>(uncompressed_size);
  if (codec == Compression::kLz4Frame) {
    Lz4Ctx c;
    size_t rc = LZ4F_createDecompressionContext(&c.ctx, LZ4F_VERSION);
    if (LZ4F_isError(rc)) return Status::Internal("LZ4F_createDecompressionContext failed");
    LZ4F_decompressOptions_t dopts{};
    dopts.stableDst = 1;  // dst is one flat buffer: no internal window copies
    size_t in_pos = 0;
    size_t out_pos = 0;
    const size_t in_size = static_cast<size_t>(size);
    while (true) {
      size_t src_n = in_size - in_pos;
      size_t dst_n = want - out_pos;
      rc = LZ4F_decompress(c.ctx, dst + out_pos, &dst_n, data + in_pos, &src_n, &dopts);
      if (LZ4F_isError(rc)) {
        return Status::Corruption(std::string("LZ4_FRAME buffer does not decompress: ") +
                                  LZ4F_getErrorName(rc));
      }
      in_pos += src_n;
      out_pos += dst_n;
      if (rc == 0) break;  // frame complete
      if (src_n == 0 && dst_n == 0) {
        // No progress: input exhausted or output full before the frame ended.
        return Status::Corruption("LZ4_FRAME buffer is truncated or larger than its declared " +
                                  std::to_string(uncompressed_size) + " bytes");
      }
    }
    if (out_pos != want) {
      return Status::Corruption("LZ4_FRAME buffer decompressed to " + std::to_string(out_pos) +
                                " bytes, header says " + std::to_string(uncompressed_size));
    }
    return out;
  }
  if (codec == Compression::kZstd) {
    const size_t got = ZSTD_decompress(dst, want, data, static_cast<size_t>(size));
    if (ZSTD_isError(got)) {
      return Status::Corruption(std::string("ZSTD buffer does not decompress: ") +
                                ZSTD_getErrorName(got));
    }
    if (got != want) {
      return Status::Corruption("ZSTD buffer decompressed to " + std::to_string(got) +
                                " bytes, header says " + std::to_string(uncompressed_size));
    }
    return out;
  }
  return Status::Invalid("DecompressBuffer called without a codec");
}

}  // namespace strata::arrow::ipc::internal
