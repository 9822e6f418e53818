// libFuzzer target: the Arrow IPC reader on arbitrary bytes. Both ReadStream and ReadFile must
// return a value or an error and never crash; every batch they return must validate, and its
// values must be readable (the reads below touch every buffer the way consumers do).
// Seeds: fuzz/corpus/ipc_reader (made with strata_ipc_tool write-sample and the LanceDB client).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "arrow/array.h"
#include "arrow/ipc/reader.h"

namespace {

using namespace strata::arrow;  // NOLINT

// Touches every value of `a` so the sanitizers see any out-of-bounds read.
uint64_t Touch(const Array& a) {
  uint64_t h = 0;
  const ArrayData& d = *a.data();
  if (a.type_id() == TypeId::kNull) return 0;  // no memory behind it, any length is valid
  for (int64_t i = 0; i < a.length(); ++i) {
    if (a.IsNull(i)) continue;
    switch (a.type_id()) {
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kBinary:
      case TypeId::kLargeBinary:
      case TypeId::kFixedSizeBinary:
      case TypeId::kDecimal128: {
        auto v = a.GetView(i);
        for (char c : v) h += static_cast<uint8_t>(c);
        break;
      }
      case TypeId::kBool:
        h += a.BoolValue(i);
        break;
      case TypeId::kList:
      case TypeId::kLargeList:
      case TypeId::kFixedSizeList:
        h += static_cast<uint64_t>(a.ListEnd(i) - a.ListStart(i));
        break;
      default: {
        const int w = d.type->bit_width() / 8;
        if (w > 0) h += d.buffers[1]->data()[(d.offset + i) * w + (w - 1)];
      }
    }
  }
  for (size_t j = 0; j < d.children.size(); ++j) h += Touch(a.child(static_cast<int>(j)));
  return h;
}

void Check(const strata::Result<ipc::ReadResult>& r) {
  if (!r.ok()) return;
  for (const auto& b : r->batches) {
    if (!b->Validate().ok()) std::abort();  // the reader must only return valid batches
    for (int c = 0; c < b->num_columns(); ++c) {
      volatile uint64_t sink = Touch(b->column(c));
      (void)sink;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ipc::ReadOptions options;
  options.max_buffer_bytes = int64_t{64} << 20;  // keep the fuzzer's memory bounded
  BufferPtr buf = Buffer::CopyFrom(data, static_cast<int64_t>(size));
  Check(ipc::ReadStream(buf, options));
  Check(ipc::ReadFile(buf, options));
  return 0;
}
