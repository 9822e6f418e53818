#include "wal/wal_entry.h"

#include <cstring>
#include <memory>

#include "arrow/ipc/reader.h"
#include "format/bit_reversed.h"

namespace strata::wal {
namespace {

constexpr char kSuffix[] = ".arrow";

Result<uint64_t> ParseMetaNumber(const arrow::KeyValueMetadata& md, const char* key,
                                 uint64_t position) {
  const std::string* v = md.Get(key);
  if (v == nullptr) {
    return Status::Corruption("WAL entry " + std::to_string(position) +
                              " has no schema metadata '" + key + "'");
  }
  if (v->empty() || v->size() > 20) {
    return Status::Corruption("WAL entry " + std::to_string(position) + " metadata '" + key +
                              "' is not a number: '" + v->substr(0, 32) + "'");
  }
  uint64_t out = 0;
  for (char c : *v) {
    if (c < '0' || c > '9') {
      return Status::Corruption("WAL entry " + std::to_string(position) + " metadata '" + key +
                                "' is not a number: '" + *v + "'");
    }
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return out;
}

}  // namespace

std::string WalDir(const std::string& shard_prefix) { return shard_prefix + "/wal/"; }

std::string WalEntryKey(const std::string& shard_prefix, uint64_t position) {
  return WalDir(shard_prefix) + format::ToBitReversed(position) + kSuffix;
}

std::optional<uint64_t> ParseWalEntryName(const std::string& name) {
  const size_t suffix_len = sizeof(kSuffix) - 1;
  if (name.size() != format::kBitReversedLength + suffix_len ||
      name.compare(format::kBitReversedLength, suffix_len, kSuffix) != 0) {
    return std::nullopt;
  }
  auto v = format::FromBitReversed(std::string_view(name).substr(0, format::kBitReversedLength));
  if (!v.ok()) return std::nullopt;
  return *v;
}

arrow::SchemaPtr WalEntrySchema(const arrow::Schema& schema, uint64_t writer_epoch,
                                uint64_t generation, bool fence_sentinel, uint64_t fence_skip_from,
                                const TxnTag& txn) {
  arrow::KeyValueMetadata md = schema.metadata();
  md.Set(kWriterEpochKey, std::to_string(writer_epoch));
  md.Set(kGenerationKey, std::to_string(generation));
  if (fence_sentinel) md.Set(kFenceSentinelKey, "true");
  if (fence_sentinel && fence_skip_from > 0) {
    md.Set(kFenceSkipFromKey, std::to_string(fence_skip_from));
  }
  if (!txn.empty()) {
    md.Set(kTxnIdKey, txn.id);
    md.Set(kTxnShardsKey, std::to_string(txn.shards));
  }
  return std::make_shared<arrow::Schema>(schema.fields(), std::move(md));
}

Result<std::string> EncodeWalEntry(const arrow::Schema& schema,
                                   const std::vector<arrow::RecordBatchPtr>& batches,
                                   uint64_t writer_epoch, uint64_t generation,
                                   arrow::ipc::Compression compression, bool fence_sentinel,
                                   uint64_t fence_skip_from, const TxnTag& txn) {
  if (!txn.empty() && (fence_sentinel || txn.shards < 2)) {
    return Status::Invalid("WAL entry of multi-shard write '" + txn.id + "': txn_shards is " +
                           std::to_string(txn.shards) +
                           (fence_sentinel ? " on a fence sentinel" : ", must be >= 2"));
  }
  arrow::SchemaPtr entry_schema =
      WalEntrySchema(schema, writer_epoch, generation, fence_sentinel, fence_skip_from, txn);
  std::vector<arrow::RecordBatchPtr> relabelled;
  relabelled.reserve(batches.size());
  for (const auto& b : batches) {
    relabelled.push_back(
        std::make_shared<arrow::RecordBatch>(entry_schema, b->num_rows(), b->columns()));
  }
  arrow::ipc::WriteOptions options;
  options.compression = compression;
  return arrow::ipc::WriteStream(*entry_schema, relabelled, options);
}

Result<WalEntry> DecodeWalEntry(uint64_t position, std::string bytes) {
  const std::string where = "WAL entry " + std::to_string(position);
  static constexpr unsigned char kEos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
  if (bytes.size() < sizeof(kEos) ||
      std::memcmp(bytes.data() + bytes.size() - sizeof(kEos), kEos, sizeof(kEos)) != 0) {
    return Status::Corruption(where + " is torn: " + std::to_string(bytes.size()) +
                              " bytes without the end-of-stream marker");
  }
  auto owner = std::make_shared<std::string>(std::move(bytes));
  auto buf = arrow::Buffer::Wrap(owner->data(), static_cast<int64_t>(owner->size()), owner);
  auto read = arrow::ipc::ReadStream(buf);
  if (!read.ok()) return Status::Corruption(where + ": " + read.status().ToString());
  WalEntry entry;
  entry.position = position;
  const arrow::KeyValueMetadata& md = read->schema->metadata();
  STRATA_ASSIGN_OR_RETURN(entry.writer_epoch, ParseMetaNumber(md, kWriterEpochKey, position));
  STRATA_ASSIGN_OR_RETURN(entry.generation, ParseMetaNumber(md, kGenerationKey, position));
  const std::string* fence = md.Get(kFenceSentinelKey);
  entry.fence_sentinel = fence != nullptr && *fence == "true";
  if (md.Get(kFenceSkipFromKey) != nullptr) {
    STRATA_ASSIGN_OR_RETURN(entry.fence_skip_from,
                            ParseMetaNumber(md, kFenceSkipFromKey, position));
    if (!entry.fence_sentinel || entry.fence_skip_from >= position) {
      return Status::Corruption(
          where + ": metadata 'fence_skip_from' = " + std::to_string(entry.fence_skip_from) +
          " must be below the position of a fence sentinel");
    }
  }
  if (const std::string* id = md.Get(kTxnIdKey); id != nullptr) {
    if (id->empty() || entry.fence_sentinel) {
      return Status::Corruption(where + ": metadata 'txn_id' is " +
                                (id->empty() ? "empty" : "set on a fence sentinel"));
    }
    entry.txn.id = *id;
    STRATA_ASSIGN_OR_RETURN(entry.txn.shards, ParseMetaNumber(md, kTxnShardsKey, position));
    if (entry.txn.shards < 2) {
      return Status::Corruption(where + ": metadata 'txn_shards' = " +
                                std::to_string(entry.txn.shards) + " must be >= 2");
    }
  } else if (md.Get(kTxnShardsKey) != nullptr) {
    return Status::Corruption(where + ": metadata 'txn_shards' without 'txn_id'");
  }
  // Strip the WAL keys so the entry schema compares equal to the table schema.
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto& kv : md.pairs()) {
    if (kv.first != kWriterEpochKey && kv.first != kGenerationKey &&
        kv.first != kFenceSentinelKey && kv.first != kFenceSkipFromKey && kv.first != kTxnIdKey &&
        kv.first != kTxnShardsKey) {
      kept.push_back(kv);
    }
  }
  entry.schema = std::make_shared<arrow::Schema>(read->schema->fields(),
                                                 arrow::KeyValueMetadata(std::move(kept)));
  for (const auto& b : read->batches) {
    if (b->num_columns() != entry.schema->num_fields()) {
      return Status::Corruption(where + ": a batch has " + std::to_string(b->num_columns()) +
                                " columns, the schema " +
                                std::to_string(entry.schema->num_fields()));
    }
    entry.num_rows += b->num_rows();
    entry.batches.push_back(
        std::make_shared<arrow::RecordBatch>(entry.schema, b->num_rows(), b->columns()));
  }
  return entry;
}

}  // namespace strata::wal
