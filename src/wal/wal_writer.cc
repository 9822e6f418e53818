#include "wal/wal_writer.h"

#include <spdlog/spdlog.h>

#include "wal/wal_entry.h"

namespace strata::wal {

WalWriter::WalWriter(std::shared_ptr<io::ObjectStore> store, std::string shard_prefix,
                     arrow::SchemaPtr schema, uint64_t next_position, WalWriterOptions options)
    : store_(std::move(store)),
      shard_prefix_(std::move(shard_prefix)),
      schema_(std::move(schema)),
      next_position_(next_position < 1 ? 1 : next_position),
      options_(options) {}

Result<uint64_t> WalWriter::Append(const std::vector<arrow::RecordBatchPtr>& batches,
                                   const OnDurable& on_durable) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sticky_error_.ok()) return sticky_error_;
  STRATA_ASSIGN_OR_RETURN(std::string bytes,
                          EncodeWalEntry(*schema_, batches, options_.writer_epoch,
                                         options_.generation, options_.compression));
  const uint64_t position = next_position_;
  const std::string key = WalEntryKey(shard_prefix_, position);
  Status st = store_->PutIfAbsent(key, bytes);
  if (!st.ok()) {
    if (st.IsAlreadyExists()) {
      sticky_error_ =
          Status::Fenced("WAL position " + std::to_string(position) + " of '" + shard_prefix_ +
                         "' is already taken: another writer owns the shard");
      spdlog::error("{}", sticky_error_.message());
      return sticky_error_;
    }
    // Did anything land under the final name? If so (or if we cannot tell) the outcome is
    // unknown and the in-memory state may no longer match the log.
    auto head = store_->Head(key);
    if (head.ok() || !head.status().IsNotFound()) {
      sticky_error_ =
          Status::WriterPoisoned("WAL write of position " + std::to_string(position) + " of '" +
                                 shard_prefix_ + "' has an unknown outcome: " + st.ToString());
      spdlog::error("{}", sticky_error_.message());
      return sticky_error_;
    }
    return st.WithContext("WAL write of position " + std::to_string(position));
  }
  ++next_position_;
  ++stats_.entries_written;
  ++stats_.appends;
  stats_.bytes_written += bytes.size();
  if (on_durable) on_durable(position);
  return position;
}

uint64_t WalWriter::next_position() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_position_;
}

void WalWriter::set_generation(uint64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.generation = generation;
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
