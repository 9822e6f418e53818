#include "shard/shard_writer.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "shard/batch_conformance.h"

namespace strata::shard {

std::string ShardPrefix(const std::string& table_prefix, const std::string& shard_id) {
  return table_prefix + "/_mem_wal/" + shard_id;
}

namespace {

Status ValidateShardId(const std::string& id) {
  if (id.empty() || id.size() > 128) {
    return Status::Invalid("shard id must be 1 to 128 characters, got " +
                           std::to_string(id.size()));
  }
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return Status::Invalid("shard id '" + id + "' may only hold [A-Za-z0-9_-]");
  }
  return Status::OK();
}

/// Moves the torn entry at `position` aside so its position can be written again.
Status QuarantineEntry(io::ObjectStore& store, const std::string& shard_prefix, uint64_t position) {
  const std::string key = wal::WalEntryKey(shard_prefix, position);
  auto bytes = store.Get(key);
  if (!bytes.ok()) return bytes.status().IsNotFound() ? Status::OK() : bytes.status();
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  const std::string dest = shard_prefix + "/wal_quarantine/" + std::to_string(position) + "." +
                           std::to_string(micros) + ".arrow";
  STRATA_RETURN_IF_ERROR(store.Put(dest, *bytes));
  spdlog::warn("moved torn WAL entry '{}' ({} bytes) to '{}'", key, bytes->size(), dest);
  return store.Remove(key);
}

}  // namespace

Result<std::unique_ptr<ShardWriter>> ShardWriter::Open(std::shared_ptr<io::ObjectStore> store,
                                                       std::string table_prefix,
                                                       std::string shard_id,
                                                       arrow::SchemaPtr schema,
                                                       ShardWriterOptions options) {
  STRATA_RETURN_IF_ERROR(ValidateShardId(shard_id));
  if (schema == nullptr) return Status::Invalid("shard schema is null");
  STRATA_RETURN_IF_ERROR(ValidateTableSchema(*schema));
  std::unique_ptr<ShardWriter> w(new ShardWriter());
  w->store_ = std::move(store);
  w->shard_id_ = std::move(shard_id);
  w->shard_prefix_ = ShardPrefix(table_prefix, w->shard_id_);
  w->schema_ = std::move(schema);
  w->memtable_ = std::make_unique<memtable::MemTable>(w->schema_);

  ShardWriter* self = w.get();
  auto visit = [self](wal::WalEntry&& entry) -> Status {
    if (!entry.schema->Equals(*self->schema_)) {
      return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                self->shard_prefix_ + "' has schema " + entry.schema->ToString() +
                                ", the table has " + self->schema_->ToString());
    }
    auto conformed = ConformBatches(self->schema_, entry.batches);
    if (!conformed.ok()) {
      return Status::Corruption("WAL entry " + std::to_string(entry.position) + " of '" +
                                self->shard_prefix_ + "': " + conformed.status().message());
    }
    self->memtable_->Append(*conformed, entry.position);
    return Status::OK();
  };
  STRATA_ASSIGN_OR_RETURN(w->replay_,
                          wal::WalReader::Replay(*w->store_, w->shard_prefix_, 1, visit));
  const auto& r = w->replay_;
  if (r.torn_position) {
    STRATA_RETURN_IF_ERROR(QuarantineEntry(*w->store_, w->shard_prefix_, *r.torn_position));
  } else if (r.max_position_present > r.last_position) {
    return Status::Corruption("WAL of '" + w->shard_prefix_ + "' has a gap: position " +
                              std::to_string(r.last_position + 1) +
                              " is missing but entries up to " +
                              std::to_string(r.max_position_present) + " exist");
  }
  if (r.entries > 0) {
    spdlog::info("replayed {} WAL entries ({} rows) of '{}'", r.entries, r.rows, w->shard_prefix_);
  }
  w->wal_ = std::make_unique<wal::WalWriter>(w->store_, w->shard_prefix_, w->schema_,
                                             r.last_position + 1, options.wal);
  return w;
}

Result<PutResult> ShardWriter::Put(const std::vector<arrow::RecordBatchPtr>& batches) {
  STRATA_ASSIGN_OR_RETURN(auto conformed, ConformBatches(schema_, batches));
  PutResult result;
  for (const auto& b : conformed) result.num_rows += b->num_rows();
  if (result.num_rows == 0) {
    STRATA_RETURN_IF_ERROR(wal_->health());
    auto snap = memtable_->Snapshot();
    result.wal_position = snap.last_wal_position;
    result.first_row_position = snap.num_rows;
    return result;
  }
  STRATA_ASSIGN_OR_RETURN(result.wal_position, wal_->Append(conformed, [&](uint64_t position) {
    result.first_row_position = memtable_->Append(conformed, position);
  }));
  return result;
}

Status ShardWriter::RemoveShardFiles(io::ObjectStore& store, const std::string& table_prefix,
                                     const std::string& shard_id) {
  STRATA_RETURN_IF_ERROR(ValidateShardId(shard_id));
  STRATA_ASSIGN_OR_RETURN(auto objects, store.List(ShardPrefix(table_prefix, shard_id) + "/"));
  for (const auto& o : objects) STRATA_RETURN_IF_ERROR(store.Remove(o.key));
  return Status::OK();
}

}  // namespace strata::shard
