#include "arrow/compute/filter.h"
#include "shard/shard_writer.h"

namespace strata::shard {

Result<std::vector<arrow::RecordBatchPtr>> LiveBatches(const ShardSnapshot& snapshot,
                                                       bool storage) {
  std::vector<arrow::RecordBatchPtr> out;
  const int user_cols = snapshot.schema->num_fields();
  for (const auto& source : snapshot.sources) {
    if (source.live_rows == 0) continue;
    for (size_t k = 0; k < source.batches.size(); ++k) {
      const arrow::RecordBatchPtr& batch = source.batches[k];
      if (batch->num_rows() == 0) continue;
      const std::vector<uint8_t> bits = source.LiveBits(k);
      int64_t kept = 0;
      for (int64_t i = 0; i < batch->num_rows(); ++i) kept += (bits[i >> 3] >> (i & 7)) & 1;
      if (kept == 0) continue;
      arrow::RecordBatchPtr live = batch;
      if (kept != batch->num_rows()) {
        STRATA_ASSIGN_OR_RETURN(live, arrow::compute::FilterBatch(*batch, bits.data(), 0));
      }
      if (!storage) {
        std::vector<arrow::ArrayDataPtr> cols(live->columns().begin(),
                                              live->columns().begin() + user_cols);
        live = std::make_shared<arrow::RecordBatch>(snapshot.schema, live->num_rows(), cols);
      }
      out.push_back(std::move(live));
    }
  }
  return out;
}

std::shared_ptr<ShardSnapshot> NarrowedView(const ShardSnapshot& whole,
                                            const std::function<bool(const SourceView&)>& keep) {
  auto out = std::make_shared<ShardSnapshot>();
  out->schema = whole.schema;
  out->storage_schema = whole.storage_schema;
  out->rowid_column = whole.rowid_column;
  out->last_wal_position = whole.last_wal_position;
  out->compacted_generation = whole.compacted_generation;
  out->base_epoch = whole.base_epoch;
  out->visibility = whole.visibility;
  out->index_specs = whole.index_specs;
  for (const auto& src : whole.sources) {
    if (!keep(src)) continue;
    out->num_rows += src.live_rows;
    out->sources.push_back(src);
  }
  return out;
}

std::shared_ptr<const ShardSnapshot> ViewOfBatches(arrow::SchemaPtr schema,
                                                   std::vector<arrow::RecordBatchPtr> batches) {
  auto shard = std::make_shared<ShardSnapshot>();
  shard->schema = schema;
  shard->storage_schema = schema;
  shard->visibility = std::make_shared<Visibility>();
  SourceView v;
  v.name = "batches";
  for (auto& b : batches) {
    if (b->num_rows() == 0) continue;
    v.batch_starts.push_back(v.num_rows);
    v.num_rows += b->num_rows();
    v.batches.push_back(std::move(b));
  }
  v.SetLiveRows({});
  shard->num_rows = v.num_rows;
  shard->sources.push_back(std::move(v));
  return shard;
}

}  // namespace strata::shard
