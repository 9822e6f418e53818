// Arrow IPC stream decode throughput (Google Benchmark). 100,000 rows of
// (id int64, text utf8, vector fixed_size_list<float32>[784]) in 10 batches, decoded from
// memory with ipc::ReadStream: uncompressed (zero-copy + validation) and LZ4_FRAME
// (decompression). bytes/s counts the uncompressed stream size for every variant, and
// BM_Memcpy copies the same number of bytes, so the ratios compare like with like.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "arrow/builder.h"
#include "arrow/ipc/reader.h"
#include "arrow/ipc/writer.h"

namespace {

using namespace strata::arrow;  // NOLINT

constexpr int64_t kRows = 100000;
constexpr int64_t kBatchRows = 10000;
constexpr int32_t kDim = 784;

struct Data {
  std::string plain;
  std::string lz4;
};

const Data& GetData() {
  static const Data data = [] {
    auto schema = std::make_shared<const Schema>(
        std::vector<FieldPtr>{field("id", int64()), field("text", utf8()),
                              field("vector", fixed_size_list(field("item", float32()), kDim))});
    std::vector<RecordBatchPtr> batches;
    uint32_t state = 12345;
    for (int64_t start = 0; start < kRows; start += kBatchRows) {
      RecordBatchBuilder b(schema);
      std::vector<float> vec(kDim);
      for (int64_t r = start; r < start + kBatchRows; ++r) {
        (void)b.column(0)->AppendInt(r);
        (void)b.column(1)->AppendBytes("document number " + std::to_string(r));
        // Pixel-like values (as in Fashion-MNIST): a few distinct levels, partly zero.
        for (int32_t k = 0; k < kDim; ++k) {
          state = state * 1664525u + 1013904223u;
          const uint32_t level = (state >> 24) % 16;
          vec[static_cast<size_t>(k)] = level < 8 ? 0.0f : static_cast<float>(level) / 15.0f;
        }
        (void)b.column(2)->child(0)->AppendFloats(vec.data(), kDim);
        (void)b.column(2)->AppendValid();
      }
      batches.push_back(b.Finish().value());
    }
    Data d;
    d.plain = ipc::WriteStream(*schema, batches).value();
    ipc::WriteOptions wo;
    wo.compression = ipc::Compression::kLz4Frame;
    d.lz4 = ipc::WriteStream(*schema, batches, wo).value();
    return d;
  }();
  return data;
}

void Decode(benchmark::State& state, const std::string& bytes) {
  BufferPtr buf = Buffer::CopyFrom(bytes.data(), static_cast<int64_t>(bytes.size()));
  for (auto _ : state) {
    auto r = ipc::ReadStream(buf);
    if (!r.ok() || r->batches.size() != kRows / kBatchRows) {
      state.SkipWithError(r.ok() ? "wrong batch count" : r.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(r->batches.back()->column_data(2).get());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(GetData().plain.size()));
  state.counters["stream_MB"] = static_cast<double>(bytes.size()) / 1e6;
}

void BM_DecodeUncompressed(benchmark::State& state) { Decode(state, GetData().plain); }
void BM_DecodeLz4(benchmark::State& state) { Decode(state, GetData().lz4); }

void BM_Memcpy(benchmark::State& state) {
  const std::string& src = GetData().plain;
  std::vector<char> dst(src.size());
  std::memset(dst.data(), 1, dst.size());  // fault the pages in before timing
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
}

BENCHMARK(BM_DecodeUncompressed)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DecodeLz4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
