// ValidateArray (declared in arrow/array.h): layout checks for arrays from untrusted input,
// following the Arrow columnar format specification ("Physical memory layout").
#include <string>

#include "arrow/array.h"

namespace strata::arrow {
namespace {

constexpr int kMaxValidateDepth = 64;
// Lengths and offsets above this cannot describe real memory and would overflow products.
constexpr int64_t kMaxLength = int64_t{1} << 50;

std::string S(int64_t v) { return std::to_string(v); }

Status CheckBufferSize(const ArrayData& d, int index, int64_t needed, const char* what) {
  const BufferPtr& b = d.buffers[static_cast<size_t>(index)];
  const int64_t have = b == nullptr ? 0 : b->size();
  if (needed > 0 && (b == nullptr || b->data() == nullptr)) {
    return Status::Corruption(std::string(what) + " buffer is missing; " + S(needed) +
                              " bytes are needed for offset " + S(d.offset) + " + length " +
                              S(d.length));
  }
  if (have < needed) {
    return Status::Corruption(std::string(what) + " buffer has " + S(have) + " bytes; " +
                              S(needed) + " are needed for offset " + S(d.offset) + " + length " +
                              S(d.length) + " of " + d.type->ToString());
  }
  return Status::OK();
}

template <typename OffsetT>
Status CheckOffsets(const ArrayData& d, int64_t* last_out) {
  const int64_t end = d.offset + d.length;
  *last_out = 0;
  if (end == 0 && (d.buffers[1] == nullptr || d.buffers[1]->size() == 0)) return Status::OK();
  STRATA_RETURN_IF_ERROR(
      CheckBufferSize(d, 1, (end + 1) * static_cast<int64_t>(sizeof(OffsetT)), "offsets"));
  const OffsetT* off = d.buffers[1]->data_as<OffsetT>();
  int64_t prev = static_cast<int64_t>(off[d.offset]);
  if (prev < 0) {
    return Status::Corruption("first offset " + S(prev) + " of " + d.type->ToString() +
                              " is negative");
  }
  for (int64_t i = d.offset + 1; i <= end; ++i) {
    const int64_t cur = static_cast<int64_t>(off[i]);
    if (cur < prev) {
      return Status::Corruption("offsets of " + d.type->ToString() + " decrease at index " +
                                S(i - d.offset) + " (" + S(prev) + " then " + S(cur) + ")");
    }
    prev = cur;
  }
  *last_out = prev;
  return Status::OK();
}

Status Validate(const ArrayData& d, int depth) {
  if (depth > kMaxValidateDepth) {
    return Status::Corruption("array nesting deeper than " + S(kMaxValidateDepth) + " levels");
  }
  if (d.type == nullptr) return Status::Corruption("array has no type");
  const DataType& t = *d.type;
  if (d.length < 0 || d.offset < 0 || d.length > kMaxLength || d.offset > kMaxLength) {
    return Status::Corruption("array of " + t.ToString() + " has length " + S(d.length) +
                              " and offset " + S(d.offset) + "; both must be in [0, 2^50]");
  }
  if (d.null_count < 0 || d.null_count > d.length) {
    return Status::Corruption("array of " + t.ToString() + " has null_count " + S(d.null_count) +
                              " outside [0, length " + S(d.length) + "]");
  }
  const int64_t end = d.offset + d.length;

  if (t.id() == TypeId::kNull) {
    if (!d.buffers.empty()) {
      return Status::Corruption("null array has " + S(static_cast<int64_t>(d.buffers.size())) +
                                " buffers, expected 0");
    }
    if (d.null_count != d.length) {
      return Status::Corruption("null array has null_count " + S(d.null_count) + " but length " +
                                S(d.length));
    }
    if (!d.children.empty()) return Status::Corruption("null array has children");
    return Status::OK();
  }

  if (static_cast<int>(d.buffers.size()) != t.num_buffers()) {
    return Status::Corruption("array of " + t.ToString() + " has " +
                              S(static_cast<int64_t>(d.buffers.size())) + " buffers, expected " +
                              S(t.num_buffers()));
  }
  // Validity bitmap and null count.
  if (d.buffers[0] != nullptr) {
    STRATA_RETURN_IF_ERROR(CheckBufferSize(d, 0, BytesForBits(end), "validity"));
    const int64_t nulls = d.length - CountSetBits(d.buffers[0]->data(), d.offset, d.length);
    if (nulls != d.null_count) {
      return Status::Corruption("array of " + t.ToString() + " says null_count " + S(d.null_count) +
                                " but its validity bitmap has " + S(nulls) + " nulls");
    }
  } else if (d.null_count != 0) {
    return Status::Corruption("array of " + t.ToString() + " has null_count " + S(d.null_count) +
                              " but no validity bitmap");
  }

  const size_t want_children = t.id() == TypeId::kStruct ? t.children().size()
                               : t.is_list_like()        ? 1
                                                         : 0;
  if (d.children.size() != want_children) {
    return Status::Corruption("array of " + t.ToString() + " has " +
                              S(static_cast<int64_t>(d.children.size())) + " children, expected " +
                              S(static_cast<int64_t>(want_children)));
  }
  for (size_t j = 0; j < d.children.size(); ++j) {
    const auto& c = d.children[j];
    if (c == nullptr || c->type == nullptr) {
      return Status::Corruption("child " + S(static_cast<int64_t>(j)) + " of " + t.ToString() +
                                " is missing");
    }
    if (!c->type->Equals(*t.children()[j]->type)) {
      return Status::Corruption("child " + S(static_cast<int64_t>(j)) + " of " + t.ToString() +
                                " has type " + c->type->ToString());
    }
  }

  switch (t.id()) {
    case TypeId::kUtf8:
    case TypeId::kBinary:
    case TypeId::kLargeUtf8:
    case TypeId::kLargeBinary: {
      int64_t last = 0;
      if (t.id() == TypeId::kUtf8 || t.id() == TypeId::kBinary) {
        STRATA_RETURN_IF_ERROR(CheckOffsets<int32_t>(d, &last));
      } else {
        STRATA_RETURN_IF_ERROR(CheckOffsets<int64_t>(d, &last));
      }
      return CheckBufferSize(d, 2, last, "data");
    }
    case TypeId::kList:
    case TypeId::kLargeList: {
      int64_t last = 0;
      if (t.id() == TypeId::kList) {
        STRATA_RETURN_IF_ERROR(CheckOffsets<int32_t>(d, &last));
      } else {
        STRATA_RETURN_IF_ERROR(CheckOffsets<int64_t>(d, &last));
      }
      const ArrayData& c = *d.children[0];
      if (c.length < last) {
        return Status::Corruption(t.ToString() + " offsets reach " + S(last) +
                                  " but the child array has length " + S(c.length));
      }
      return Validate(c, depth + 1).WithContext("list child");
    }
    case TypeId::kFixedSizeList: {
      const ArrayData& c = *d.children[0];
      const int64_t size = t.list_size();
      if (size < 0) return Status::Corruption("fixed_size_list has negative size " + S(size));
      int64_t need = 0;
      if (__builtin_mul_overflow(end, size, &need) || c.length < need) {
        return Status::Corruption(t.ToString() + " with offset " + S(d.offset) + " + length " +
                                  S(d.length) + " needs " + S(end) + " * " + S(size) +
                                  " child values; the child has " + S(c.length));
      }
      return Validate(c, depth + 1).WithContext("fixed_size_list child");
    }
    case TypeId::kStruct: {
      for (size_t j = 0; j < d.children.size(); ++j) {
        const ArrayData& c = *d.children[j];
        const std::string& name = t.children()[j]->name;
        if (c.length < end) {
          return Status::Corruption("struct field '" + name + "' has length " + S(c.length) +
                                    "; the struct needs " + S(end));
        }
        STRATA_RETURN_IF_ERROR(Validate(c, depth + 1).WithContext("struct field '" + name + "'"));
      }
      return Status::OK();
    }
    default: {
      // Fixed width (bool, numbers, temporal, decimal128, fixed_size_binary).
      int64_t bits = 0;
      if (__builtin_mul_overflow(end, static_cast<int64_t>(t.bit_width()), &bits)) {
        return Status::Corruption("array of " + t.ToString() + " is too long: " + S(end));
      }
      return CheckBufferSize(d, 1, BytesForBits(bits), "values");
    }
  }
}

}  // namespace

Status ValidateArray(const ArrayData& data) { return Validate(data, 1); }

}  // namespace strata::arrow
