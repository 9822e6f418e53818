#include "wal/wal_writer.h"

#include <spdlog/spdlog.h>

#include <bit>

#include "wal/wal_entry.h"

namespace strata::wal {

struct PendingAppend {
  std::vector<arrow::RecordBatchPtr> batches;
  uint64_t generation = 0;
  WalWriter::OnDurable on_durable;
  int64_t bytes = 0;  // column-buffer bytes, for max_wal_entry_bytes
  bool fence_sentinel = false;
  uint64_t skip_from = 0;
  TxnTag txn;  // a multi-shard write's part: alone in its entry
  // Set by the leader under WalWriter::mu_.
  bool done = false;
  Status status;
  uint64_t position = 0;
};

namespace {

int64_t DataBytes(const arrow::ArrayData& data) {
  int64_t n = 0;
  for (const auto& b : data.buffers) {
    if (b) n += b->size();
  }
  for (const auto& c : data.children) {
    if (c) n += DataBytes(*c);
  }
  return n;
}

size_t HistogramBucket(uint64_t group_size) {
  // 1 -> 0, 2-3 -> 1, 4-7 -> 2, ..., >= 128 -> 7.
  size_t b = static_cast<size_t>(std::bit_width(group_size)) - 1;
  return b > 7 ? 7 : b;
}

}  // namespace

WalWriter::WalWriter(std::shared_ptr<io::ObjectStore> store, std::string shard_prefix,
                     arrow::SchemaPtr schema, uint64_t next_position, WalWriterOptions options)
    : store_(std::move(store)),
      shard_prefix_(std::move(shard_prefix)),
      schema_(std::move(schema)),
      options_(options),
      next_position_(next_position < 1 ? 1 : next_position),
      generation_(options.generation) {}

WalWriter::~WalWriter() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !writing_; });
  for (auto& p : queue_) {
    p->done = true;
    p->status = Status::Internal("WAL writer of '" + shard_prefix_ + "' was destroyed");
  }
  queue_.clear();
  cv_.notify_all();
}

Result<AppendHandle> WalWriter::EnqueueLocked(std::vector<arrow::RecordBatchPtr> batches,
                                              uint64_t generation, OnDurable on_durable,
                                              bool fence_sentinel, uint64_t skip_from, TxnTag txn) {
  if (!sticky_error_.ok()) return sticky_error_;
  if (generation < last_enqueued_generation_) {
    return Status::Invalid("WAL append of generation " + std::to_string(generation) +
                           " after generation " + std::to_string(last_enqueued_generation_) +
                           " of '" + shard_prefix_ + "': generations must not decrease");
  }
  last_enqueued_generation_ = generation;
  auto p = std::make_shared<PendingAppend>();
  for (const auto& b : batches) {
    for (const auto& c : b->columns()) p->bytes += DataBytes(*c);
  }
  p->batches = std::move(batches);
  p->generation = generation;
  p->on_durable = std::move(on_durable);
  p->fence_sentinel = fence_sentinel;
  p->txn = std::move(txn);
  p->skip_from = skip_from;
  queue_.push_back(p);
  return p;
}

Result<AppendHandle> WalWriter::Enqueue(std::vector<arrow::RecordBatchPtr> batches,
                                        uint64_t generation, OnDurable on_durable) {
  std::lock_guard<std::mutex> lock(mu_);
  return EnqueueLocked(std::move(batches), generation, std::move(on_durable), false, 0, {});
}

Result<AppendHandle> WalWriter::Enqueue(std::vector<arrow::RecordBatchPtr> batches,
                                        uint64_t generation, OnDurable on_durable, TxnTag txn) {
  if (txn.empty() || txn.shards < 2) {
    return Status::Invalid("WAL append of a multi-shard write needs a txn id and txn_shards >= 2");
  }
  std::lock_guard<std::mutex> lock(mu_);
  return EnqueueLocked(std::move(batches), generation, std::move(on_durable), false, 0,
                       std::move(txn));
}

Result<uint64_t> WalWriter::Wait(const AppendHandle& handle) {
  if (handle == nullptr) return Status::Invalid("WalWriter::Wait of a null handle");
  return WaitFor(handle);
}

Result<uint64_t> WalWriter::WaitFor(const AppendHandle& handle) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!handle->done) {
    if (!writing_ && !queue_.empty()) {
      WriteGroup(lock);
    } else {
      cv_.wait(lock);
    }
  }
  if (!handle->status.ok()) return handle->status;
  return handle->position;
}

Result<uint64_t> WalWriter::Append(const std::vector<arrow::RecordBatchPtr>& batches,
                                   uint64_t generation, const OnDurable& on_durable) {
  STRATA_ASSIGN_OR_RETURN(AppendHandle h, Enqueue(batches, generation, on_durable));
  return WaitFor(h);
}

Result<uint64_t> WalWriter::Append(const std::vector<arrow::RecordBatchPtr>& batches,
                                   const OnDurable& on_durable) {
  AppendHandle h;
  {
    std::lock_guard<std::mutex> lock(mu_);
    STRATA_ASSIGN_OR_RETURN(h, EnqueueLocked(batches, generation_, on_durable, false, 0, {}));
  }
  return WaitFor(h);
}

Status WalWriter::Sync() {
  AppendHandle last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty()) return sticky_error_;
    last = queue_.back();
  }
  auto r = WaitFor(last);
  return r.ok() ? Status::OK() : r.status();
}

Result<uint64_t> WalWriter::WriteFenceSentinel(uint64_t generation, uint64_t skip_from) {
  AppendHandle h;
  {
    std::lock_guard<std::mutex> lock(mu_);
    STRATA_ASSIGN_OR_RETURN(h, EnqueueLocked({}, generation, {}, true, skip_from, {}));
  }
  return WaitFor(h);
}

void WalWriter::WriteGroup(std::unique_lock<std::mutex>& lock) {
  writing_ = true;
  std::vector<AppendHandle> group;
  {
    const AppendHandle& front = queue_.front();
    group.push_back(front);
    if (!front->fence_sentinel && front->txn.empty() && options_.group_commit) {
      int64_t total = front->bytes;
      for (size_t i = 1; i < queue_.size(); ++i) {
        const AppendHandle& p = queue_[i];
        if (p->fence_sentinel || !p->txn.empty() || p->generation != front->generation ||
            total + p->bytes > options_.max_wal_entry_bytes) {
          break;
        }
        total += p->bytes;
        group.push_back(p);
      }
    }
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(group.size()));
  }
  const uint64_t position = next_position_;
  const AppendHandle& first = group.front();
  lock.unlock();

  // I/O without the lock: encode the group as one entry and put it.
  Status st;
  size_t encoded_bytes = 0;
  if (first->fence_sentinel && first->skip_from >= position) {
    st = Status::Invalid("fence sentinel at WAL position " + std::to_string(position) +
                         " cannot skip from position " + std::to_string(first->skip_from));
  } else {
    std::vector<arrow::RecordBatchPtr> all;
    for (const auto& p : group) all.insert(all.end(), p->batches.begin(), p->batches.end());
    auto bytes =
        EncodeWalEntry(*schema_, all, options_.writer_epoch, first->generation,
                       options_.compression, first->fence_sentinel, first->skip_from, first->txn);
    if (!bytes.ok()) {
      st = bytes.status().WithContext("WAL entry " + std::to_string(position) + " of '" +
                                      shard_prefix_ + "'");
    } else {
      encoded_bytes = bytes->size();
      st = store_->PutIfAbsent(WalEntryKey(shard_prefix_, position), *bytes);
    }
  }
  if (st.ok()) {
    for (const auto& p : group) {
      if (p->on_durable) p->on_durable(position);
    }
  }

  lock.lock();
  if (st.ok()) {
    ++next_position_;
    ++stats_.entries_written;
    ++stats_.fsyncs;
    stats_.bytes_written += encoded_bytes;
    if (first->fence_sentinel) {
      ++stats_.fence_sentinels;
    } else {
      stats_.appends += group.size();
      stats_.max_group_size = std::max<uint64_t>(stats_.max_group_size, group.size());
      ++stats_.group_size_histogram[HistogramBucket(group.size())];
    }
    for (const auto& p : group) {
      p->done = true;
      p->position = position;
    }
  } else {
    if (first->fence_sentinel && st.IsInvalid() && first->skip_from >= position) {
      // A bad skip_from argument: nothing was written; only the sentinel fails.
    } else if (st.IsAlreadyExists()) {
      sticky_error_ =
          Status::Fenced("WAL position " + std::to_string(position) + " of '" + shard_prefix_ +
                         "' is already taken: another writer owns the shard");
      st = sticky_error_;
    } else {
      sticky_error_ =
          Status::WriterPoisoned("WAL write of position " + std::to_string(position) + " of '" +
                                 shard_prefix_ + "' failed: " + st.ToString());
    }
    if (!sticky_error_.ok()) spdlog::error("{}", sticky_error_.message());
    for (const auto& p : group) {
      p->done = true;
      p->status = st;
    }
    if (!sticky_error_.ok()) {
      for (auto& p : queue_) {
        p->done = true;
        p->status = sticky_error_;
      }
      queue_.clear();
    }
  }
  writing_ = false;
  cv_.notify_all();
}

uint64_t WalWriter::next_position() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_position_;
}

uint64_t WalWriter::last_durable_position() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_position_ - 1;
}

void WalWriter::set_generation(uint64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  generation_ = generation;
}

WalWriterStats WalWriter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Status WalWriter::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sticky_error_;
}

}  // namespace strata::wal
