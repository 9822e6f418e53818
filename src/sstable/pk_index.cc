#include "sstable/pk_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "format/little_endian.h"

namespace strata::sstable {
namespace {

using format::GetU32;
using format::GetU64;
using format::PutU32;
using format::PutU64;

constexpr char kMagic[4] = {'S', 'T', 'P', 'K'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 4 + 4 + 8;

}  // namespace

PkIndex PkIndex::Build(const std::vector<std::string>& row_keys, std::vector<int64_t>* superseded) {
  // Sort row positions by (key, position); the last of each equal-key run is the newest.
  std::vector<int64_t> order(row_keys.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    int c = row_keys[static_cast<size_t>(a)].compare(row_keys[static_cast<size_t>(b)]);
    return c != 0 ? c < 0 : a < b;
  });
  PkIndex idx;
  idx.offsets_.push_back(0);
  if (superseded != nullptr) superseded->clear();
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& k = row_keys[static_cast<size_t>(order[i])];
    bool last_of_run = i + 1 == order.size() || row_keys[static_cast<size_t>(order[i + 1])] != k;
    if (!last_of_run) {
      if (superseded != nullptr) superseded->push_back(order[i]);
      continue;
    }
    idx.blob_.append(k);
    idx.offsets_.push_back(idx.blob_.size());
    idx.positions_.push_back(order[i]);
  }
  if (superseded != nullptr) std::sort(superseded->begin(), superseded->end());
  return idx;
}

std::string_view PkIndex::key(int64_t i) const {
  size_t b = offsets_[static_cast<size_t>(i)];
  size_t e = offsets_[static_cast<size_t>(i) + 1];
  return std::string_view(blob_).substr(b, e - b);
}

std::optional<int64_t> PkIndex::Find(std::string_view k) const {
  int64_t lo = 0, hi = size();
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = key(mid).compare(k);
    if (c == 0) return positions_[static_cast<size_t>(mid)];
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return std::nullopt;
}

std::string PkIndex::Serialize() const {
  std::string out;
  const uint64_t n = positions_.size();
  out.reserve(kHeaderBytes + (n + 1) * 8 + n * 8 + blob_.size() + 8);
  out.append(kMagic, 4);
  PutU32(&out, kFormatVersion);
  PutU64(&out, n);
  for (uint64_t o : offsets_) PutU64(&out, o);
  if (offsets_.empty()) PutU64(&out, 0);
  for (int64_t p : positions_) PutU64(&out, static_cast<uint64_t>(p));
  out.append(blob_);
  PutU64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Result<PkIndex> PkIndex::Deserialize(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes + 8 + 8) {
    return Status::Corruption("pk index: " + std::to_string(bytes.size()) +
                              " bytes is too short for the header");
  }
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, 4) != 0) {
    return Status::Corruption("pk index: bad magic (expected \"STPK\")");
  }
  uint32_t version = GetU32(p + 4);
  if (version != kFormatVersion) {
    return Status::Corruption("pk index: unknown format version " + std::to_string(version));
  }
  uint64_t stored = GetU64(p + bytes.size() - 8);
  if (XXH64(p, bytes.size() - 8, 0) != stored) {
    return Status::Corruption("pk index: checksum mismatch");
  }
  uint64_t n = GetU64(p + 8);
  const uint64_t fixed = kHeaderBytes + 8 + 8;  // header, offsets[0], checksum
  if (n > (bytes.size() - fixed) / 16) {
    return Status::Corruption("pk index: key count " + std::to_string(n) + " does not fit in " +
                              std::to_string(bytes.size()) + " bytes");
  }
  const uint64_t blob_size = bytes.size() - fixed - 16 * n;
  PkIndex idx;
  idx.offsets_.resize(n + 1);
  idx.positions_.resize(n);
  const char* q = p + kHeaderBytes;
  for (uint64_t i = 0; i <= n; ++i) idx.offsets_[i] = GetU64(q + 8 * i);
  q += 8 * (n + 1);
  for (uint64_t i = 0; i < n; ++i) idx.positions_[i] = static_cast<int64_t>(GetU64(q + 8 * i));
  q += 8 * n;
  if (idx.offsets_[0] != 0 || idx.offsets_[n] != blob_size) {
    return Status::Corruption("pk index: key offsets do not span the " + std::to_string(blob_size) +
                              "-byte key blob");
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (idx.offsets_[i + 1] < idx.offsets_[i]) {
      return Status::Corruption("pk index: key offsets decrease at key " + std::to_string(i));
    }
    if (idx.positions_[i] < 0) {
      return Status::Corruption("pk index: negative row position at key " + std::to_string(i));
    }
  }
  idx.blob_.assign(q, blob_size);
  for (uint64_t i = 1; i < n; ++i) {
    if (!(idx.key(static_cast<int64_t>(i - 1)) < idx.key(static_cast<int64_t>(i)))) {
      return Status::Corruption("pk index: keys not strictly ascending at key " +
                                std::to_string(i));
    }
  }
  return idx;
}

}  // namespace strata::sstable
