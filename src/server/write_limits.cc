#include "server/write_limits.h"

#include <algorithm>
#include <string>
#include <variant>

#include "query/filter/parser.h"

namespace strata::server {

namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

/// The size of the first non-null value in logical range [begin, end) of `d` (inside nested
/// lists and structs too) that is larger than `limit` bytes, or -1 when none is.
int64_t FirstOversized(const arrow::ArrayDataPtr& d, int64_t begin, int64_t end, int64_t limit) {
  if (d == nullptr || begin >= end) return -1;
  const arrow::Array a(d);
  const int64_t o = d->offset;
  switch (d->type->id()) {
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kBinary: {
      const int32_t* off = d->buffers[1]->data_as<int32_t>();
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = int64_t{off[o + i + 1]} - off[o + i];
        if (n > limit && a.IsValid(i)) return n;
      }
      return -1;
    }
    case arrow::TypeId::kLargeUtf8:
    case arrow::TypeId::kLargeBinary: {
      const int64_t* off = d->buffers[1]->data_as<int64_t>();
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = off[o + i + 1] - off[o + i];
        if (n > limit && a.IsValid(i)) return n;
      }
      return -1;
    }
    case arrow::TypeId::kFixedSizeBinary: {
      const int64_t n = d->type->byte_width();
      if (n <= limit) return -1;
      for (int64_t i = begin; i < end; ++i) {
        if (a.IsValid(i)) return n;
      }
      return -1;
    }
    case arrow::TypeId::kList: {
      const int32_t* off = d->buffers[1]->data_as<int32_t>();
      return FirstOversized(d->children.at(0), off[o + begin], off[o + end], limit);
    }
    case arrow::TypeId::kLargeList: {
      const int64_t* off = d->buffers[1]->data_as<int64_t>();
      return FirstOversized(d->children.at(0), off[o + begin], off[o + end], limit);
    }
    case arrow::TypeId::kFixedSizeList: {
      const int64_t size = d->type->list_size();
      return FirstOversized(d->children.at(0), (o + begin) * size, (o + end) * size, limit);
    }
    case arrow::TypeId::kStruct:
      for (const auto& child : d->children) {
        const int64_t n = FirstOversized(child, o + begin, o + end, limit);
        if (n >= 0) return n;
      }
      return -1;
    default:
      return -1;
  }
}

/// Whether `type` holds byte values (at any depth).
bool HoldsBytes(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kBinary:
    case arrow::TypeId::kLargeUtf8:
    case arrow::TypeId::kLargeBinary:
    case arrow::TypeId::kFixedSizeBinary:
      return true;
    default:
      for (const auto& c : type.children()) {
        if (c->type && HoldsBytes(*c->type)) return true;
      }
      return false;
  }
}

Status CheckVectorDims(const RequestLimits& limits, const arrow::DataType& type,
                       const std::string& path, std::string_view route) {
  if (type.id() == arrow::TypeId::kFixedSizeList) {
    const int64_t max = std::min(limits.max_vector_dim, RequestLimits::kHardMaxVectorDim);
    if (type.list_size() > max) {
      return Status::Invalid(std::string(route) + ": column " + Quote(path) + " has " +
                             std::to_string(type.list_size()) +
                             " dimensions; the vector dimension limit is " + std::to_string(max) +
                             " (strata serve --max-vector-dim)");
    }
  }
  for (const auto& c : type.children()) {
    if (c->type)
      STRATA_RETURN_IF_ERROR(CheckVectorDims(limits, *c->type, path + "." + c->name, route));
  }
  return Status::OK();
}

}  // namespace

Status CheckRowsPerWrite(const RequestLimits& limits, int64_t rows, std::string_view route) {
  if (rows > limits.max_rows_per_write) {
    return Status::Invalid(std::string(route) + ": " + std::to_string(rows) +
                           " rows exceed the limit of " +
                           std::to_string(limits.max_rows_per_write) +
                           " rows per write (strata serve --max-rows-per-write)");
  }
  return Status::OK();
}

Status CheckSchemaLimits(const RequestLimits& limits, const arrow::Schema& schema,
                         std::string_view route) {
  for (const auto& f : schema.fields()) {
    if (f->type) STRATA_RETURN_IF_ERROR(CheckVectorDims(limits, *f->type, f->name, route));
  }
  return Status::OK();
}

Status CheckStringValues(const RequestLimits& limits,
                         const std::vector<arrow::RecordBatchPtr>& batches,
                         std::string_view route) {
  const int64_t limit = limits.max_string_bytes;
  int64_t first_row = 0;
  for (const auto& batch : batches) {
    if (batch == nullptr) continue;
    const arrow::Schema& schema = *batch->schema();
    for (int c = 0; c < batch->num_columns(); ++c) {
      const arrow::ArrayDataPtr& data = batch->column_data(c);
      if (!HoldsBytes(*data->type)) continue;
      if (FirstOversized(data, 0, batch->num_rows(), limit) < 0) continue;
      // Some value is too large: find its row (only on this error path).
      for (int64_t r = 0; r < batch->num_rows(); ++r) {
        const int64_t n = FirstOversized(data, r, r + 1, limit);
        if (n < 0) continue;
        return Status::Invalid(std::string(route) + ": row " + std::to_string(first_row + r) +
                               ", column " + Quote(schema.field(c)->name) + " holds a value of " +
                               std::to_string(n) + " bytes; the limit is " + std::to_string(limit) +
                               " bytes per string or binary value (strata serve "
                               "--max-string-bytes)");
      }
    }
    first_row += batch->num_rows();
  }
  return Status::OK();
}

Status CheckWrite(const RequestLimits& limits, const arrow::Schema* schema,
                  const std::vector<arrow::RecordBatchPtr>& batches, std::string_view route) {
  int64_t rows = 0;
  for (const auto& b : batches) rows += b ? b->num_rows() : 0;
  STRATA_RETURN_IF_ERROR(CheckRowsPerWrite(limits, rows, route));
  if (schema != nullptr) STRATA_RETURN_IF_ERROR(CheckSchemaLimits(limits, *schema, route));
  return CheckStringValues(limits, batches, route);
}

Status CheckFilterBytes(const RequestLimits& limits, std::string_view text, std::string_view what) {
  const int64_t max = std::min<int64_t>(
      limits.max_filter_bytes, static_cast<int64_t>(query::filter::ParseOptions{}.max_length));
  if (static_cast<int64_t>(text.size()) > max) {
    return Status::Invalid(std::string(what) + " is " + std::to_string(text.size()) +
                           " bytes long; the filter length limit is " + std::to_string(max) +
                           " bytes (strata serve --max-filter-bytes)");
  }
  return Status::OK();
}

Status CheckQueryLimits(const RequestLimits& limits, const QueryRequest& request) {
  auto check_k = [&](int64_t k, const char* kind) -> Status {
    if (k > limits.max_k) {
      return Status::Invalid(std::string("k of ") + std::to_string(k) + " for a " + kind +
                             " exceeds the limit of " + std::to_string(limits.max_k) +
                             " (strata serve --max-k)");
    }
    return Status::OK();
  };
  const std::optional<std::string>* filter = nullptr;
  if (const auto* vs = std::get_if<query::VectorSearchOptions>(&request.plan)) {
    STRATA_RETURN_IF_ERROR(check_k(vs->k, "vector search"));
    filter = &vs->filter;
  } else if (const auto* fts = std::get_if<query::FtsSearchOptions>(&request.plan)) {
    STRATA_RETURN_IF_ERROR(check_k(fts->k, "full-text search"));
    filter = &fts->filter;
  } else if (const auto* scan = std::get_if<query::ScanOptions>(&request.plan)) {
    filter = &scan->filter;  // a plain scan's limit is not capped
  }
  if (filter != nullptr && filter->has_value()) {
    STRATA_RETURN_IF_ERROR(CheckFilterBytes(limits, **filter, "filter"));
  }
  return Status::OK();
}

}  // namespace strata::server
