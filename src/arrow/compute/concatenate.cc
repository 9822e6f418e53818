#include "arrow/compute/concatenate.h"

#include <string>

#include "arrow/compute/gather.h"

namespace strata::arrow::compute {

Result<ArrayDataPtr> Concatenate(const std::vector<ArrayDataPtr>& arrays) {
  if (arrays.empty()) return Status::Invalid("concatenate: no arrays given");
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i] == nullptr) {
      return Status::Invalid("concatenate: array " + std::to_string(i) + " is null");
    }
    if (!arrays[i]->type->Equals(*arrays[0]->type)) {
      return Status::Invalid("concatenate: array " + std::to_string(i) + " has type " +
                             arrays[i]->type->ToString() + " but array 0 has type " +
                             arrays[0]->type->ToString());
    }
  }
  std::vector<Span> spans;
  spans.reserve(arrays.size());
  for (const auto& a : arrays) AddSpan(&spans, Span{a.get(), 0, a->length});
  return GatherSpans(arrays[0]->type, spans);
}

Result<RecordBatchPtr> ConcatenateBatches(const std::vector<RecordBatchPtr>& batches) {
  if (batches.empty()) return Status::Invalid("concatenate: no record batches given");
  for (size_t b = 0; b < batches.size(); ++b) {
    if (batches[b] == nullptr) {
      return Status::Invalid("concatenate: record batch " + std::to_string(b) + " is null");
    }
    if (!batches[b]->schema()->Equals(*batches[0]->schema())) {
      return Status::Invalid("concatenate: record batch " + std::to_string(b) + " has schema {" +
                             batches[b]->schema()->ToString() + "} but batch 0 has {" +
                             batches[0]->schema()->ToString() + "}");
    }
  }
  const auto& schema = batches[0]->schema();
  int64_t rows = 0;
  for (const auto& b : batches) rows += b->num_rows();
  std::vector<ArrayDataPtr> cols;
  for (int i = 0; i < schema->num_fields(); ++i) {
    std::vector<ArrayDataPtr> parts;
    parts.reserve(batches.size());
    for (const auto& b : batches) parts.push_back(b->column_data(i));
    auto r = Concatenate(parts);
    if (!r.ok()) return r.status().WithContext("column '" + schema->field(i)->name + "'");
    cols.push_back(std::move(r).value());
  }
  return std::make_shared<RecordBatch>(schema, rows, std::move(cols));
}

}  // namespace strata::arrow::compute
