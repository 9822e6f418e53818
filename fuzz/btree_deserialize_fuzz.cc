// libFuzzer target: BTreeIndex::Deserialize on arbitrary bytes. It must return an index or a
// Corruption error and never crash. Each input is tried twice: as given (exercises the size,
// magic and checksum checks) and with its last 8 bytes replaced by the correct xxhash64 of
// the rest, so the fuzzer reaches the schema, page directory, key and order checks behind the
// checksum. A loaded index must answer every query with sorted, unique positions, and its
// serialization must load to the same answers.
// Seeds: fuzz/corpus/btree_deserialize (serialized int64, utf8, float64 and bool indexes).
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "format/little_endian.h"
#include "index/scalar/btree_index.h"

namespace {

using strata::index::BTreeIndex;
using strata::index::KeyBound;

void CheckSorted(const std::vector<int64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i - 1] >= v[i]) std::abort();
  }
}

void Check(std::string_view bytes) {
  auto r = BTreeIndex::Deserialize(bytes);
  if (!r.ok()) {
    if (r.status().code() != strata::StatusCode::kCorruption) std::abort();
    return;
  }
  const BTreeIndex& index = **r;
  const std::string k(bytes.substr(0, std::min<size_t>(bytes.size(), 9)));
  CheckSorted(index.IsNull());
  CheckSorted(index.Equal(k));
  CheckSorted(index.NotEqual(k));
  CheckSorted(index.Range(KeyBound{k, true}, std::nullopt));
  CheckSorted(index.Range(std::nullopt, std::nullopt));
  CheckSorted(index.In({k, std::string("\x01", 1)}));
  // Re-serializing gives the canonical form, which loads to the same answers and re-serializes
  // to itself.
  auto canon = index.Serialize();
  if (!canon.ok()) std::abort();
  auto back = BTreeIndex::Deserialize(*canon);
  if (!back.ok()) std::abort();
  if ((*back)->size() != index.size() || (*back)->IsNull() != index.IsNull() ||
      (*back)->Range(std::nullopt, std::nullopt) != index.Range(std::nullopt, std::nullopt)) {
    std::abort();
  }
  auto again = (*back)->Serialize();
  if (!again.ok() || *again != *canon) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  Check(raw);
  if (size >= 8) {
    std::string fixed(raw);
    std::string sum;
    strata::format::PutU64(&sum, XXH64(fixed.data(), size - 8, 0));
    fixed.replace(size - 8, 8, sum);
    Check(fixed);
  }
  return 0;
}
