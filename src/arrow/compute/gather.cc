#include "arrow/compute/gather.h"

#include <cstring>
#include <limits>
#include <string>

#include "arrow/buffer.h"

namespace strata::arrow::compute {

void AddSpan(std::vector<Span>* spans, Span span) {
  if (span.length <= 0) return;
  if (!spans->empty()) {
    Span& last = spans->back();
    if (last.source == span.source && last.start + last.length == span.start) {
      last.length += span.length;
      return;
    }
  }
  spans->push_back(span);
}

void CopyBitmap(const uint8_t* src, int64_t src_offset, uint8_t* dst, int64_t dst_offset,
                int64_t n) {
  int64_t i = 0;
  if ((src_offset & 7) == (dst_offset & 7)) {
    // Same phase: bit-copy up to a byte boundary, memcpy whole bytes, bit-copy the tail.
    for (; i < n && ((dst_offset + i) & 7) != 0; ++i) {
      if (GetBit(src, src_offset + i)) {
        SetBit(dst, dst_offset + i);
      } else {
        ClearBit(dst, dst_offset + i);
      }
    }
    const int64_t bytes = (n - i) / 8;
    if (bytes > 0) {
      std::memcpy(dst + (dst_offset + i) / 8, src + (src_offset + i) / 8,
                  static_cast<size_t>(bytes));
      i += bytes * 8;
    }
  }
  for (; i < n; ++i) {
    if (GetBit(src, src_offset + i)) {
      SetBit(dst, dst_offset + i);
    } else {
      ClearBit(dst, dst_offset + i);
    }
  }
}

void SetBitsTo1(uint8_t* dst, int64_t offset, int64_t n) {
  int64_t i = 0;
  for (; i < n && ((offset + i) & 7) != 0; ++i) SetBit(dst, offset + i);
  const int64_t bytes = (n - i) / 8;
  if (bytes > 0) {
    std::memset(dst + (offset + i) / 8, 0xff, static_cast<size_t>(bytes));
    i += bytes * 8;
  }
  for (; i < n; ++i) SetBit(dst, offset + i);
}

namespace {

// Validity of the result: nullptr when no row is null.
BufferPtr GatherValidity(const std::vector<Span>& spans, int64_t total, int64_t* null_count) {
  *null_count = 0;
  bool any = false;
  for (const Span& s : spans) {
    const ArrayData& a = *s.source;
    if (!a.buffers.empty() && a.buffers[0] != nullptr && a.null_count != 0) {
      any = true;
      break;
    }
  }
  if (!any) return nullptr;
  BufferBuilder bb;
  bb.Resize(BytesForBits(total));
  uint8_t* dst = bb.mutable_data();
  int64_t pos = 0;
  for (const Span& s : spans) {
    const ArrayData& a = *s.source;
    if (!a.buffers.empty() && a.buffers[0] != nullptr && a.null_count != 0) {
      CopyBitmap(a.buffers[0]->data(), a.offset + s.start, dst, pos, s.length);
    } else {
      SetBitsTo1(dst, pos, s.length);
    }
    pos += s.length;
  }
  *null_count = total - CountSetBits(dst, 0, total);
  if (*null_count == 0) return nullptr;
  return bb.Finish();
}

template <typename O>
Status GatherBinary(const std::vector<Span>& spans, int64_t total, ArrayData* out) {
  int64_t bytes = 0;
  for (const Span& s : spans) {
    const O* off = s.source->buffers[1]->data_as<O>() + s.source->offset + s.start;
    bytes += static_cast<int64_t>(off[s.length] - off[0]);
  }
  if (bytes > static_cast<int64_t>(std::numeric_limits<O>::max())) {
    return Status::Invalid("result of " + out->type->ToString() + " would hold " +
                           std::to_string(bytes) + " bytes, past the int32 offset limit " +
                           "2147483647; use the large type");
  }
  BufferBuilder offsets;
  offsets.Resize((total + 1) * static_cast<int64_t>(sizeof(O)));
  O* dst_off = reinterpret_cast<O*>(offsets.mutable_data());
  BufferBuilder data;
  data.Reserve(bytes);
  int64_t pos = 0;
  O cur = 0;
  dst_off[0] = 0;
  for (const Span& s : spans) {
    const O* off = s.source->buffers[1]->data_as<O>() + s.source->offset + s.start;
    const uint8_t* src = s.source->buffers[2]->data();
    data.Append(src + off[0], static_cast<int64_t>(off[s.length] - off[0]));
    for (int64_t i = 0; i < s.length; ++i) {
      cur = static_cast<O>(cur + (off[i + 1] - off[i]));
      dst_off[++pos] = cur;
    }
  }
  out->buffers.push_back(offsets.Finish());
  out->buffers.push_back(data.Finish());
  return Status::OK();
}

template <typename O>
Status GatherList(const std::vector<Span>& spans, int64_t total, ArrayData* out) {
  BufferBuilder offsets;
  offsets.Resize((total + 1) * static_cast<int64_t>(sizeof(O)));
  O* dst_off = reinterpret_cast<O*>(offsets.mutable_data());
  std::vector<Span> child_spans;
  int64_t pos = 0;
  int64_t cur = 0;
  dst_off[0] = 0;
  for (const Span& s : spans) {
    const O* off = s.source->buffers[1]->data_as<O>() + s.source->offset + s.start;
    const int64_t child_len = static_cast<int64_t>(off[s.length] - off[0]);
    if (cur + child_len > static_cast<int64_t>(std::numeric_limits<O>::max())) {
      return Status::Invalid("result of " + out->type->ToString() + " would hold more than " +
                             "2147483647 child values (int32 offsets); use large_list");
    }
    AddSpan(&child_spans,
            Span{s.source->children[0].get(), static_cast<int64_t>(off[0]), child_len});
    for (int64_t i = 0; i < s.length; ++i) {
      cur += static_cast<int64_t>(off[i + 1] - off[i]);
      dst_off[++pos] = static_cast<O>(cur);
    }
  }
  out->buffers.push_back(offsets.Finish());
  STRATA_ASSIGN_OR_RETURN(auto child, GatherSpans(out->type->value_type(), child_spans));
  out->children.push_back(std::move(child));
  return Status::OK();
}

}  // namespace

Result<ArrayDataPtr> GatherSpans(const DataTypePtr& type, const std::vector<Span>& spans) {
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  int64_t total = 0;
  for (const Span& s : spans) total += s.length;
  out->length = total;
  const TypeId id = type->id();
  if (id == TypeId::kNull) {
    out->null_count = total;
    return out;
  }
  out->buffers.push_back(GatherValidity(spans, total, &out->null_count));
  switch (id) {
    case TypeId::kBool: {
      BufferBuilder bb;
      bb.Resize(BytesForBits(total));
      int64_t pos = 0;
      for (const Span& s : spans) {
        CopyBitmap(s.source->buffers[1]->data(), s.source->offset + s.start, bb.mutable_data(), pos,
                   s.length);
        pos += s.length;
      }
      out->buffers.push_back(bb.Finish());
      return out;
    }
    case TypeId::kUtf8:
    case TypeId::kBinary:
      STRATA_RETURN_IF_ERROR(GatherBinary<int32_t>(spans, total, out.get()));
      return out;
    case TypeId::kLargeUtf8:
    case TypeId::kLargeBinary:
      STRATA_RETURN_IF_ERROR(GatherBinary<int64_t>(spans, total, out.get()));
      return out;
    case TypeId::kList:
      STRATA_RETURN_IF_ERROR(GatherList<int32_t>(spans, total, out.get()));
      return out;
    case TypeId::kLargeList:
      STRATA_RETURN_IF_ERROR(GatherList<int64_t>(spans, total, out.get()));
      return out;
    case TypeId::kFixedSizeList: {
      const int64_t size = type->list_size();
      std::vector<Span> child_spans;
      for (const Span& s : spans) {
        AddSpan(&child_spans, Span{s.source->children[0].get(), (s.source->offset + s.start) * size,
                                   s.length * size});
      }
      STRATA_ASSIGN_OR_RETURN(auto child, GatherSpans(type->value_type(), child_spans));
      out->children.push_back(std::move(child));
      return out;
    }
    case TypeId::kStruct: {
      const size_t nf = type->children().size();
      for (size_t j = 0; j < nf; ++j) {
        std::vector<Span> child_spans;
        child_spans.reserve(spans.size());
        for (const Span& s : spans) {
          AddSpan(&child_spans,
                  Span{s.source->children[j].get(), s.source->offset + s.start, s.length});
        }
        STRATA_ASSIGN_OR_RETURN(auto child, GatherSpans(type->children()[j]->type, child_spans));
        out->children.push_back(std::move(child));
      }
      return out;
    }
    default: {
      // Fixed-width values: ints, floats, temporal, decimal128, fixed_size_binary.
      const int64_t w = type->bit_width() / 8;
      BufferBuilder bb;
      bb.Reserve(total * w);
      for (const Span& s : spans) {
        bb.Append(s.source->buffers[1]->data() + (s.source->offset + s.start) * w, s.length * w);
      }
      out->buffers.push_back(bb.Finish());
      return out;
    }
  }
}

}  // namespace strata::arrow::compute
