// libFuzzer target: HnswIndex::Deserialize on arbitrary bytes (index/vector/hnsw_index.h; the
// graph part is index/vector/hnswlib_graph_io.h's reader). It must return an index or a
// Corruption error and never crash or allocate beyond what the bytes can describe. Each input
// is tried twice: as given (the size and checksum checks) and with the header's payload size
// and xxhash64 fixed up, so the fuzzer reaches the graph checks behind the checksum. A loaded
// index must answer a search with at most k sorted neighbours whose labels it holds, and its
// serialization must load again to an index of the same size.
// Seeds: fuzz/corpus/hnsw_deserialize (serialized l2, cosine and dot indexes of 0-60 rows).
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "index/vector/hnsw_index.h"

namespace {

using strata::index::HnswIndex;

// The header (hnsw_index.cc): magic 8, version 4, distance 4, dim 8, m 4, ef_construction 4,
// count 8, payload size 8 (at 40), xxhash64 of the rest (at 48); 56 bytes.
constexpr size_t kHeader = 56;

void Check(std::string_view bytes) {
  auto r = HnswIndex::Deserialize(bytes);
  if (!r.ok()) {
    if (r.status().code() != strata::StatusCode::kCorruption) std::abort();
    return;
  }
  const HnswIndex& index = **r;
  std::vector<float> q(static_cast<size_t>(index.dim()), 0.5f);
  auto found = index.Search(q.data(), 5, 16);
  if (found.ok()) {
    if (found->size() > 5) std::abort();
    for (size_t i = 0; i < found->size(); ++i) {
      if ((*found)[i].label < 0) std::abort();
      if (i > 0 && (*found)[i - 1].distance > (*found)[i].distance) std::abort();
    }
  }
  auto again = index.Serialize();
  if (!again.ok()) std::abort();
  auto back = HnswIndex::Deserialize(*again);
  if (!back.ok() || (*back)->size() != index.size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Check(bytes);
  if (size >= kHeader) {
    std::string fixed(bytes);
    const uint64_t payload = size - kHeader;
    std::memcpy(&fixed[40], &payload, 8);
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, fixed.data(), kHeader - 8);
    XXH64_update(st, fixed.data() + kHeader, payload);
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    std::memcpy(&fixed[48], &h, 8);
    Check(fixed);
  }
  return 0;
}
