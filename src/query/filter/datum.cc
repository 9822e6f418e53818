#include "query/filter/datum.h"

#include <cstring>
#include <limits>

namespace strata::query::filter::internal {

using arrow::BufferPtr;
using arrow::TypeId;

bool Datum::IsValid(int64_t i) const {
  const auto& a = *data;
  if (a.type->id() == TypeId::kNull) return false;
  if (a.buffers.empty() || a.buffers[0] == nullptr) return true;
  return arrow::GetBit(a.buffers[0]->data(), a.offset + Index(i));
}

BufferPtr RebaseBits(const BufferPtr& bits, int64_t offset, int64_t n) {
  const int64_t nbytes = arrow::BytesForBits(n);
  if (offset % 8 == 0) return bits->Slice(offset / 8, nbytes);
  OutBuffer out(nbytes);
  uint8_t* o = out.data();
  const uint8_t* s = bits->data();
  const int shift = static_cast<int>(offset % 8);
  const int64_t base = offset / 8;
  // Byte k of the result takes the high bits of source byte base+k and the low bits of the next.
  const int64_t src_bytes = arrow::BytesForBits(offset + n) - base;
  for (int64_t k = 0; k < nbytes; ++k) {
    uint8_t lo = static_cast<uint8_t>(s[base + k] >> shift);
    uint8_t hi = (k + 1 < src_bytes) ? static_cast<uint8_t>(s[base + k + 1] << (8 - shift)) : 0;
    o[k] = lo | hi;
  }
  // Clear bits past n so CountSetBits over whole bytes stays exact.
  if (n % 8 != 0) o[nbytes - 1] &= static_cast<uint8_t>((1u << (n % 8)) - 1);
  return out.Finish();
}

BufferPtr ValidityOf(const arrow::ArrayData& a) {
  if (a.type->id() == TypeId::kNull) return OutBuffer(arrow::BytesForBits(a.length)).Finish();
  if (a.buffers.empty() || a.buffers[0] == nullptr || a.null_count == 0) return nullptr;
  return RebaseBits(a.buffers[0], a.offset, a.length);
}

BufferPtr ValidityFor(const Datum& d, int64_t n) {
  if (!d.scalar) return ValidityOf(*d.data);
  if (d.IsValid(0)) return nullptr;
  return OutBuffer(arrow::BytesForBits(n)).Finish();
}

BufferPtr AndValidity(const BufferPtr& a, const BufferPtr& b, int64_t n) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  const int64_t nbytes = arrow::BytesForBits(n);
  OutBuffer out(nbytes);
  uint8_t* o = out.data();
  const uint8_t* x = a->data();
  const uint8_t* y = b->data();
  for (int64_t k = 0; k < nbytes; ++k) o[k] = x[k] & y[k];
  return out.Finish();
}

arrow::ArrayDataPtr MakeArray(const arrow::DataTypePtr& type, int64_t n,
                              std::vector<BufferPtr> buffers,
                              std::vector<arrow::ArrayDataPtr> children) {
  auto a = std::make_shared<arrow::ArrayData>();
  a->type = type;
  a->length = n;
  a->offset = 0;
  if (type->id() == TypeId::kNull) {
    a->null_count = n;
    return a;
  }
  if (!buffers.empty() && buffers[0] != nullptr) {
    a->null_count = n - arrow::CountSetBits(buffers[0]->data(), 0, n);
    if (a->null_count == 0) buffers[0] = nullptr;
  }
  a->buffers = std::move(buffers);
  a->children = std::move(children);
  return a;
}

arrow::ArrayDataPtr MakeNullArray(const arrow::DataTypePtr& type, int64_t n) {
  BufferPtr validity = OutBuffer(arrow::BytesForBits(n)).Finish();
  switch (type->id()) {
    case TypeId::kNull:
      return MakeArray(type, n, {});
    case TypeId::kBool:
      return MakeArray(type, n, {validity, OutBuffer(arrow::BytesForBits(n)).Finish()});
    case TypeId::kUtf8:
    case TypeId::kBinary:
      return MakeArray(type, n, {validity, OutBuffer((n + 1) * 4).Finish(), OutBuffer(0).Finish()});
    case TypeId::kLargeUtf8:
    case TypeId::kLargeBinary:
      return MakeArray(type, n, {validity, OutBuffer((n + 1) * 8).Finish(), OutBuffer(0).Finish()});
    // Nested layouts: zero offsets over an empty child (lists), list_size null child values
    // per row (fixed_size_list), a null child per field (struct).
    case TypeId::kList:
      return MakeArray(type, n, {validity, OutBuffer((n + 1) * 4).Finish()},
                       {MakeNullArray(type->value_type(), 0)});
    case TypeId::kLargeList:
      return MakeArray(type, n, {validity, OutBuffer((n + 1) * 8).Finish()},
                       {MakeNullArray(type->value_type(), 0)});
    case TypeId::kFixedSizeList:
      return MakeArray(type, n, {validity},
                       {MakeNullArray(type->value_type(), n * type->list_size())});
    case TypeId::kStruct: {
      std::vector<arrow::ArrayDataPtr> children;
      for (const auto& f : type->children()) children.push_back(MakeNullArray(f->type, n));
      return MakeArray(type, n, {validity}, std::move(children));
    }
    default:
      return MakeArray(type, n, {validity, OutBuffer(n * type->bit_width() / 8).Finish()});
  }
}

arrow::ArrayDataPtr Broadcast(const Datum& d, int64_t n) {
  if (!d.scalar) return d.data;
  const auto& type = d.data->type;
  if (!d.IsValid(0)) return MakeNullArray(type, n);
  switch (type->id()) {
    case TypeId::kBool: {
      const bool v = arrow::GetBit(d.data->buffers[1]->data(), d.data->offset);
      OutBuffer bits(arrow::BytesForBits(n));
      std::memset(bits.data(), v ? 0xFF : 0, static_cast<size_t>(arrow::BytesForBits(n)));
      return MakeArray(type, n, {nullptr, bits.Finish()});
    }
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8: {
      const std::string_view v = StringReader(*d.data)(0);
      StringWriter w(type->id() == TypeId::kLargeUtf8, n);
      for (int64_t i = 0; i < n; ++i) w.Append(v);
      auto r = w.Finish(type, nullptr);
      return r.ok() ? *r : MakeNullArray(type, n);
    }
    default: {
      const int64_t width = type->bit_width() / 8;
      OutBuffer values(n * width);
      const uint8_t* src = d.data->buffers[1]->data() + d.data->offset * width;
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(values.data() + i * width, src, static_cast<size_t>(width));
      }
      return MakeArray(type, n, {nullptr, values.Finish()});
    }
  }
}

StringReader::StringReader(const arrow::ArrayData& a)
    : offsets(a.buffers[1]->data()),
      bytes(reinterpret_cast<const char*>(a.buffers[2]->data())),
      offset(a.offset),
      large(a.type->id() == TypeId::kLargeUtf8 || a.type->id() == TypeId::kLargeBinary) {}

StringWriter::StringWriter(bool large, int64_t n) : large_(large), n_(n) {
  offsets_.Reserve((n + 1) * (large ? 8 : 4));
  if (large) {
    offsets_.AppendValue<int64_t>(0);
  } else {
    offsets_.AppendValue<int32_t>(0);
  }
}

void StringWriter::Append(std::string_view s) {
  data_.Append(s.data(), static_cast<int64_t>(s.size()));
  if (large_) {
    offsets_.AppendValue<int64_t>(data_.size());
  } else {
    offsets_.AppendValue<int32_t>(static_cast<int32_t>(data_.size()));
  }
}

Result<arrow::ArrayDataPtr> StringWriter::Finish(const arrow::DataTypePtr& type,
                                                 BufferPtr validity) {
  if (!large_ && data_.size() > std::numeric_limits<int32_t>::max()) {
    return Status::Invalid("string result of " + std::to_string(data_.size()) +
                           " bytes passes the utf8 limit of 2147483647 bytes");
  }
  return MakeArray(type, n_, {std::move(validity), offsets_.Finish(), data_.Finish()});
}

}  // namespace strata::query::filter::internal
