#include "arrow/buffer.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace strata::arrow {
namespace {

uint8_t* AlignedAlloc(int64_t capacity) {
  void* p =
      std::aligned_alloc(kBufferAlignment, static_cast<size_t>(std::max<int64_t>(capacity, 64)));
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<uint8_t*>(p);
}

struct AlignedFree {
  void operator()(const void* p) const { std::free(const_cast<void*>(p)); }
};

}  // namespace

std::shared_ptr<Buffer> Buffer::AllocateZeroed(int64_t size) {
  int64_t cap = PaddedLength(size);
  uint8_t* p = AlignedAlloc(cap);
  std::memset(p, 0, static_cast<size_t>(std::max<int64_t>(cap, 64)));
  std::shared_ptr<const void> owner(p, AlignedFree());
  return std::make_shared<Buffer>(p, size, std::move(owner));
}

std::shared_ptr<Buffer> Buffer::CopyFrom(const void* src, int64_t size) {
  int64_t cap = PaddedLength(size);
  uint8_t* p = AlignedAlloc(cap);
  if (size > 0) std::memcpy(p, src, static_cast<size_t>(size));
  std::memset(p + size, 0, static_cast<size_t>(std::max<int64_t>(cap, 64) - size));
  std::shared_ptr<const void> owner(p, AlignedFree());
  return std::make_shared<Buffer>(p, size, std::move(owner));
}

BufferBuilder::~BufferBuilder() { std::free(data_); }

BufferBuilder::BufferBuilder(BufferBuilder&& o) noexcept
    : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
  o.data_ = nullptr;
  o.size_ = o.capacity_ = 0;
}

BufferBuilder& BufferBuilder::operator=(BufferBuilder&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    size_ = o.size_;
    capacity_ = o.capacity_;
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  return *this;
}

void BufferBuilder::Reserve(int64_t additional) {
  int64_t need = size_ + additional;
  if (need <= capacity_) return;
  int64_t cap = std::max<int64_t>(PaddedLength(need), std::max<int64_t>(capacity_ * 2, 64));
  uint8_t* p = AlignedAlloc(cap);
  // Bytes past size_ stay uninitialized until written; Finish() zeroes the padding.
  if (size_ > 0) std::memcpy(p, data_, static_cast<size_t>(size_));
  std::free(data_);
  data_ = p;
  capacity_ = cap;
}

void BufferBuilder::AppendZeros(int64_t n) {
  if (n <= 0) return;
  Reserve(n);
  std::memset(data_ + size_, 0, static_cast<size_t>(n));
  size_ += n;
}

void BufferBuilder::Resize(int64_t n) {
  if (n > size_) {
    AppendZeros(n - size_);
  } else {
    size_ = n;
  }
}

BufferPtr BufferBuilder::Finish() {
  if (data_ == nullptr) Reserve(1);
  // Zero the padding so bytes written to IPC bodies are deterministic.
  std::memset(data_ + size_, 0, static_cast<size_t>(capacity_ - size_));
  std::shared_ptr<const void> owner(data_, AlignedFree());
  auto buf = std::make_shared<Buffer>(data_, size_, std::move(owner));
  data_ = nullptr;
  size_ = capacity_ = 0;
  return buf;
}

int64_t CountSetBits(const uint8_t* bits, int64_t offset, int64_t length) {
  int64_t n = 0;
  int64_t i = offset;
  int64_t end = offset + length;
  for (; i < end && (i & 7); ++i) n += GetBit(bits, i);
  for (; i + 64 <= end; i += 64) {
    uint64_t w;
    std::memcpy(&w, bits + (i >> 3), 8);
    n += __builtin_popcountll(w);
  }
  for (; i < end; ++i) n += GetBit(bits, i);
  return n;
}

}  // namespace strata::arrow
