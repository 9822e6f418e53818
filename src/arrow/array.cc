#include "arrow/array.h"

namespace strata::arrow {

std::string_view Array::GetView(int64_t i) const {
  const auto& d = *data_;
  const int64_t j = d.offset + i;
  switch (d.type->id()) {
    case TypeId::kUtf8:
    case TypeId::kBinary: {
      const int32_t* off = d.buffers[1]->data_as<int32_t>();
      return {reinterpret_cast<const char*>(d.buffers[2]->data()) + off[j],
              static_cast<size_t>(off[j + 1] - off[j])};
    }
    case TypeId::kLargeUtf8:
    case TypeId::kLargeBinary: {
      const int64_t* off = d.buffers[1]->data_as<int64_t>();
      return {reinterpret_cast<const char*>(d.buffers[2]->data()) + off[j],
              static_cast<size_t>(off[j + 1] - off[j])};
    }
    case TypeId::kFixedSizeBinary: {
      const int64_t w = d.type->byte_width();
      return {reinterpret_cast<const char*>(d.buffers[1]->data()) + j * w, static_cast<size_t>(w)};
    }
    case TypeId::kDecimal128:
      return {reinterpret_cast<const char*>(d.buffers[1]->data()) + j * 16, 16};
    default:
      return {};
  }
}

int64_t Array::ListStart(int64_t i) const {
  const auto& d = *data_;
  const int64_t j = d.offset + i;
  switch (d.type->id()) {
    case TypeId::kList:
      return d.buffers[1]->data_as<int32_t>()[j];
    case TypeId::kLargeList:
      return d.buffers[1]->data_as<int64_t>()[j];
    case TypeId::kFixedSizeList:
      return j * d.type->list_size();
    default:
      return 0;
  }
}

int64_t Array::ListEnd(int64_t i) const {
  const auto& d = *data_;
  const int64_t j = d.offset + i;
  switch (d.type->id()) {
    case TypeId::kList:
      return d.buffers[1]->data_as<int32_t>()[j + 1];
    case TypeId::kLargeList:
      return d.buffers[1]->data_as<int64_t>()[j + 1];
    case TypeId::kFixedSizeList:
      return (j + 1) * d.type->list_size();
    default:
      return 0;
  }
}

Array Array::Slice(int64_t offset, int64_t length) const {
  auto d = std::make_shared<ArrayData>(*data_);
  d->offset = data_->offset + offset;
  d->length = length;
  if (d->type->id() == TypeId::kNull) {
    d->null_count = length;
  } else if (data_->null_count == 0) {
    d->null_count = 0;
  } else {
    d->null_count = ComputeNullCount(*d);
  }
  return Array(std::move(d));
}

int64_t ComputeNullCount(const ArrayData& data) {
  if (data.type->id() == TypeId::kNull) return data.length;
  if (data.buffers.empty() || data.buffers[0] == nullptr) return 0;
  return data.length - CountSetBits(data.buffers[0]->data(), data.offset, data.length);
}

ArrayDataPtr RecordBatch::GetColumnByName(const std::string& name) const {
  int i = schema_->GetFieldIndex(name);
  return i < 0 ? nullptr : columns_[static_cast<size_t>(i)];
}

std::shared_ptr<RecordBatch> RecordBatch::Slice(int64_t offset, int64_t length) const {
  std::vector<ArrayDataPtr> cols;
  cols.reserve(columns_.size());
  for (const auto& c : columns_) cols.push_back(Array(c).Slice(offset, length).data());
  return std::make_shared<RecordBatch>(schema_, length, std::move(cols));
}

Status RecordBatch::Validate() const {
  if (static_cast<int>(columns_.size()) != schema_->num_fields()) {
    return Status::Invalid("record batch has " + std::to_string(columns_.size()) +
                           " columns but its schema has " + std::to_string(schema_->num_fields()) +
                           " fields");
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    const auto& f = *schema_->fields()[i];
    if (columns_[i]->length != num_rows_) {
      return Status::Invalid("column '" + f.name + "' has " + std::to_string(columns_[i]->length) +
                             " rows, batch has " + std::to_string(num_rows_));
    }
    if (!columns_[i]->type->Equals(*f.type)) {
      return Status::Invalid("column '" + f.name + "' has type " + columns_[i]->type->ToString() +
                             " but its field says " + f.type->ToString());
    }
    STRATA_RETURN_IF_ERROR(ValidateArray(*columns_[i]).WithContext("column '" + f.name + "'"));
  }
  return Status::OK();
}

}  // namespace strata::arrow
