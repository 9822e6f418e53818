#include "base/base_index_build.h"

#include <algorithm>
#include <cmath>

namespace strata::base {

namespace {

// Whether row `row` of fixed_size_list<float32> column `list` is a vector IVF can train on.
bool Trainable(const arrow::Array& list, const arrow::Array& child, int64_t row, int64_t dim,
               bool cosine) {
  if (list.IsNull(row)) return false;
  const int64_t first = (list.offset() + row) * dim;
  const float* v = child.raw_values<float>() + first;
  double norm = 0;
  for (int64_t d = 0; d < dim; ++d) {
    if (child.null_count() > 0 && child.IsNull(first + d)) return false;
    if (!std::isfinite(v[d])) return false;
    norm += static_cast<double>(v[d]) * v[d];
  }
  return !(cosine && norm == 0);
}

}  // namespace

Result<std::shared_ptr<index::ColumnIndex>> MakeBaseIndex(
    const index::IndexSpec& spec, const arrow::Schema& schema,
    const std::vector<arrow::RecordBatchPtr>& batches, int64_t capacity,
    const std::function<bool()>& abandon) {
  STRATA_ASSIGN_OR_RETURN(std::optional<index::BaseIvfDefinition> def, index::BaseIvfFor(spec));
  if (!def.has_value()) return index::ColumnIndex::Make(spec, schema, capacity);
  STRATA_RETURN_IF_ERROR(index::ValidateIndexSpec(spec, schema));
  const int column = schema.GetFieldIndex(spec.column);
  const int64_t dim = schema.field(column)->type->list_size();
  int64_t rows = 0;
  for (const auto& b : batches) rows += b->num_rows();
  index::IvfParams params = def->params;
  params.num_partitions = index::AutoPartitions(*def, rows);
  // As many rows as the training uses (k-means sample, more for PQ codebooks).
  const int64_t want = index::IvfTrainingRows(params, rows);
  const bool cosine = params.distance == index::DistanceType::kCosine;
  // Even stride over base order: row r is taken when floor(r * want / rows) advances.
  std::vector<float> sample;
  sample.reserve(static_cast<size_t>(std::max<int64_t>(want, 0) * dim));
  int64_t taken = 0, r = 0;
  for (const auto& b : batches) {
    const arrow::Array list = b->column(column);
    const arrow::Array child = list.child(0);
    for (int64_t i = 0; i < b->num_rows(); ++i, ++r) {
      const int64_t slot = rows > 0 ? (r * want) / rows : 0;
      if (slot < taken) continue;
      if (!Trainable(list, child, i, dim, cosine)) continue;  // the next row takes the slot
      const float* v = child.raw_values<float>() + (list.offset() + i) * dim;
      sample.insert(sample.end(), v, v + dim);
      taken = slot + 1;
    }
  }
  const int64_t n = static_cast<int64_t>(sample.size()) / dim;
  if (n == 0) {
    return Status::Invalid("index '" + spec.name + "': no vector of column '" + spec.column +
                           "' to train the " + spec.requested_type + " index on");
  }
  params.num_partitions = std::min(params.num_partitions, n);
  if (params.type == index::IvfType::kIvfPq && n < (int64_t{1} << params.nbits)) {
    // PQ codebooks have 2^nbits centroids per sub-vector: k-means needs that many rows. The
    // base is searched exactly until a later compaction brings them (then this is retried).
    return Status::Invalid("index '" + spec.name + "': IVF_PQ with num_bits " +
                           std::to_string(params.nbits) + " needs at least " +
                           std::to_string(int64_t{1} << params.nbits) +
                           " vectors to train, there are " + std::to_string(n));
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<index::IvfIndex> ivf,
                          index::IvfIndex::Train(dim, params, sample.data(), n, 42, abandon));
  return index::ColumnIndex::MakeIvf(spec, schema, std::move(ivf), rows);
}

bool NeedsRetrain(const index::ColumnIndex& idx, int64_t rows) {
  if (idx.ivf() == nullptr) return false;
  return rows >= kRetrainGrowth * std::max<int64_t>(idx.ivf_trained_rows(), 1);
}

}  // namespace strata::base
