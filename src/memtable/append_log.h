// AppendLog<T>: an append-only array that readers index without a lock while one writer
// appends, and LogView<T>: a read-only, random-access view of its first n elements (or of an
// owned std::vector) that copies nothing. A MemTable keeps its batches and their first row
// positions in AppendLogs, so a read view of a MemTable with 100,000 single-row batches costs
// O(1), not a copy of 100,000 pointers (shard/source_view.h).
//
// Storage: chunks of 256 elements allocated on demand behind a directory that grows by
// doubling; a published element never moves. Older directories are kept until destruction
// (at most as many pointers again as the newest holds).
// Thread-safety: Append / Truncate are for one writer (the owner's lock). An element may be
// read by any thread once the writer published it through a synchronising operation (the
// owner's lock, e.g. the MemTable watermark); Truncate must never cut below an element a
// reader may still index (the MemTable only truncates rows no reader can see).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace strata::memtable {

template <typename T>
class AppendLog {
 public:
  AppendLog() = default;
  AppendLog(const AppendLog&) = delete;
  AppendLog& operator=(const AppendLog&) = delete;

  /// Writer: appends `value` at index size().
  void Append(T value) {
    const size_t i = size_;
    const size_t chunk = i >> kChunkBits;
    Dir* d = dir_.load(std::memory_order_relaxed);
    if (d == nullptr || chunk >= d->capacity) {
      auto bigger = std::make_unique<Dir>();
      bigger->capacity = d == nullptr ? 4 : d->capacity * 2;
      bigger->chunks.reset(new std::atomic<T*>[bigger->capacity]);
      for (size_t c = 0; c < bigger->capacity; ++c) {
        bigger->chunks[c].store(c < chunks_.size() ? chunks_[c].get() : nullptr,
                                std::memory_order_relaxed);
      }
      d = bigger.get();
      dirs_.push_back(std::move(bigger));
      dir_.store(d, std::memory_order_release);
    }
    if (chunk >= chunks_.size()) {
      chunks_.emplace_back(new T[kChunkSize]);
      d->chunks[chunk].store(chunks_.back().get(), std::memory_order_release);
    }
    chunks_[chunk][i & (kChunkSize - 1)] = std::move(value);
    ++size_;
  }
  /// Writer: drops elements [n, size()) (no reader may index them).
  void Truncate(size_t n) {
    for (; size_ > n; --size_)
      chunks_[(size_ - 1) >> kChunkBits][(size_ - 1) & (kChunkSize - 1)] = T();
  }
  /// Writer: elements appended.
  size_t size() const { return size_; }

  /// Element `i` (must have been published to the caller).
  const T& At(size_t i) const {
    const Dir* d = dir_.load(std::memory_order_acquire);
    return d->chunks[i >> kChunkBits].load(std::memory_order_acquire)[i & (kChunkSize - 1)];
  }

 private:
  static constexpr size_t kChunkBits = 8;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  struct Dir {
    size_t capacity = 0;
    std::unique_ptr<std::atomic<T*>[]> chunks;
  };
  std::atomic<Dir*> dir_{nullptr};
  std::vector<std::unique_ptr<Dir>> dirs_;    // writer only
  std::vector<std::unique_ptr<T[]>> chunks_;  // writer only
  size_t size_ = 0;                           // writer only
};

/// A read-only list of T: the first n elements of a shared AppendLog, or an owned vector
/// (push_back appends to it; for lists built by hand). Copying a view copies one pointer (log
/// mode) or the vector (owned mode).
template <typename T>
class LogView {
 public:
  LogView() = default;
  LogView(std::shared_ptr<const AppendLog<T>> log, size_t n) : log_(std::move(log)), n_(n) {}

  size_t size() const { return log_ ? n_ : owned_.size(); }
  bool empty() const { return size() == 0; }
  const T& operator[](size_t i) const { return log_ ? log_->At(i) : owned_[i]; }
  const T& back() const { return (*this)[size() - 1]; }
  /// Owned mode only (a log view becomes owned, holding a copy of its elements, first).
  void push_back(T value) {
    if (log_) owned_ = ToVector();
    log_.reset();
    owned_.push_back(std::move(value));
  }
  std::vector<T> ToVector() const {
    if (!log_) return owned_;
    std::vector<T> out;
    out.reserve(n_);
    for (size_t i = 0; i < n_; ++i) out.push_back(log_->At(i));
    return out;
  }

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator() = default;
    const_iterator(const LogView* v, size_t i) : v_(v), i_(i) {}
    reference operator*() const { return (*v_)[i_]; }
    pointer operator->() const { return &(*v_)[i_]; }
    reference operator[](difference_type d) const { return (*v_)[i_ + d]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      auto t = *this;
      ++i_;
      return t;
    }
    const_iterator& operator--() {
      --i_;
      return *this;
    }
    const_iterator operator--(int) {
      auto t = *this;
      --i_;
      return t;
    }
    const_iterator& operator+=(difference_type d) {
      i_ += d;
      return *this;
    }
    const_iterator& operator-=(difference_type d) {
      i_ -= d;
      return *this;
    }
    friend const_iterator operator+(const_iterator a, difference_type d) { return a += d; }
    friend const_iterator operator+(difference_type d, const_iterator a) { return a += d; }
    friend const_iterator operator-(const_iterator a, difference_type d) { return a -= d; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.i_ == b.i_;
    }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
      return a.i_ <=> b.i_;
    }

   private:
    const LogView* v_ = nullptr;
    size_t i_ = 0;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  std::shared_ptr<const AppendLog<T>> log_;
  size_t n_ = 0;
  std::vector<T> owned_;
};

}  // namespace strata::memtable
