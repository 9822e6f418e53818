// Immutable byte buffers with shared ownership, and a growable 64-byte-aligned builder.
// Arrow recommends 64-byte alignment and padding (Columnar format, "Buffer alignment and
// padding"); every buffer Strata allocates is aligned to and padded to 64 bytes.
// Thread-safety: a Buffer is immutable after construction and safe to share; BufferBuilder is
// single-threaded.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "common/status.h"

namespace strata::arrow {

inline constexpr int64_t kBufferAlignment = 64;

/// Rounds `n` bytes up to a multiple of 64.
inline int64_t PaddedLength(int64_t n) { return (n + 63) & ~int64_t{63}; }

/// A read-only view of `size` bytes, kept alive by `owner` (which may be the Buffer's own
/// allocation, a parent buffer for zero-copy slices, or an external object such as a request
/// body).
class Buffer {
 public:
  Buffer(const uint8_t* data, int64_t size, std::shared_ptr<const void> owner)
      : data_(data), size_(size), owner_(std::move(owner)) {}

  const uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }
  template <typename T>
  const T* data_as() const {
    return reinterpret_cast<const T*>(data_);
  }
  /// What keeps data() alive (an allocation, a mapping, a parent buffer's owner).
  const std::shared_ptr<const void>& owner() const { return owner_; }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(data_), static_cast<size_t>(size_)};
  }

  /// Zero-copy sub-range; the result keeps this buffer's memory alive. Caller guarantees
  /// offset + length <= size().
  std::shared_ptr<Buffer> Slice(int64_t offset, int64_t length) const {
    return std::make_shared<Buffer>(data_ + offset, length, owner_);
  }

  /// A new zero-filled, 64-byte-aligned buffer of `size` bytes (capacity padded to 64).
  static std::shared_ptr<Buffer> AllocateZeroed(int64_t size);
  /// A new aligned buffer holding a copy of `size` bytes from `src`.
  static std::shared_ptr<Buffer> CopyFrom(const void* src, int64_t size);
  /// Wraps memory owned by `owner` without copying.
  static std::shared_ptr<Buffer> Wrap(const void* data, int64_t size,
                                      std::shared_ptr<const void> owner) {
    return std::make_shared<Buffer>(static_cast<const uint8_t*>(data), size, std::move(owner));
  }

 private:
  const uint8_t* data_;
  int64_t size_;
  std::shared_ptr<const void> owner_;
};

using BufferPtr = std::shared_ptr<Buffer>;

/// Growable, 64-byte-aligned byte buffer. Finish() hands the bytes to an immutable Buffer
/// without copying and resets the builder.
class BufferBuilder {
 public:
  BufferBuilder() = default;
  ~BufferBuilder();
  BufferBuilder(const BufferBuilder&) = delete;
  BufferBuilder& operator=(const BufferBuilder&) = delete;
  BufferBuilder(BufferBuilder&& o) noexcept;
  BufferBuilder& operator=(BufferBuilder&& o) noexcept;

  /// Ensures capacity for `additional` more bytes.
  void Reserve(int64_t additional);
  /// Appends `n` bytes from `src` (`src` may be null when n == 0).
  void Append(const void* src, int64_t n) {
    if (n <= 0) return;
    Reserve(n);
    std::memcpy(data_ + size_, src, static_cast<size_t>(n));
    size_ += n;
  }
  template <typename T>
  void AppendValue(T v) {
    Append(&v, sizeof(T));
  }
  /// Appends `n` zero bytes.
  void AppendZeros(int64_t n);
  /// Sets the size to `n` bytes (new bytes are zero).
  void Resize(int64_t n);

  uint8_t* mutable_data() { return data_; }
  const uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }

  /// Transfers the bytes to a Buffer (zero padding up to a multiple of 64 bytes).
  BufferPtr Finish();

 private:
  uint8_t* data_ = nullptr;
  int64_t size_ = 0;
  int64_t capacity_ = 0;
};

/// Validity/boolean bitmap helpers (LSB bit order, as in the Arrow format).
inline bool GetBit(const uint8_t* bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }
inline void SetBit(uint8_t* bits, int64_t i) {
  bits[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
}
inline void ClearBit(uint8_t* bits, int64_t i) {
  bits[i >> 3] &= static_cast<uint8_t>(~(1u << (i & 7)));
}
inline int64_t BytesForBits(int64_t bits) { return (bits + 7) / 8; }
/// Number of set bits in [offset, offset + length).
int64_t CountSetBits(const uint8_t* bits, int64_t offset, int64_t length);

}  // namespace strata::arrow
