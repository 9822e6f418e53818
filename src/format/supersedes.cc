#include "format/supersedes.h"

#include <xxhash.h>

#include "format/little_endian.h"

namespace strata::format {

std::string Supersedes::Serialize() const {
  std::string out = "SUP1";
  PutU32(&out, static_cast<uint32_t>(generations.size()));
  for (const auto& [gen, dv] : generations) {
    PutU64(&out, gen);
    const std::string bits = dv.Serialize();
    PutU32(&out, static_cast<uint32_t>(bits.size()));
    out += bits;
  }
  PutU64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Result<Supersedes> Supersedes::Deserialize(std::string_view bytes) {
  auto bad = [](const std::string& what) { return Status::Corruption("supersedes.bin: " + what); };
  if (bytes.size() < 16 || bytes.substr(0, 4) != "SUP1") return bad("bad magic or too short");
  const size_t body = bytes.size() - 8;
  if (XXH64(bytes.data(), body, 0) != GetU64(bytes.data() + body)) return bad("checksum mismatch");
  const uint32_t count = GetU32(bytes.data() + 4);
  size_t at = 8;
  Supersedes out;
  for (uint32_t i = 0; i < count; ++i) {
    if (body - at < 12) return bad("entry " + std::to_string(i) + " truncated");
    const uint64_t gen = GetU64(bytes.data() + at);
    const uint32_t n = GetU32(bytes.data() + at + 8);
    at += 12;
    if (body - at < n) return bad("entry " + std::to_string(i) + " bitmap truncated");
    if (!out.generations.empty() && gen <= out.generations.back().first) {
      return bad("generations not ascending at entry " + std::to_string(i));
    }
    auto dv = DeletionVector::Deserialize(bytes.substr(at, n));
    if (!dv.ok()) return bad("entry " + std::to_string(i) + ": " + dv.status().message());
    out.generations.emplace_back(gen, std::move(*dv));
    at += n;
  }
  if (at != body) return bad(std::to_string(body - at) + " trailing bytes");
  return out;
}

uint64_t Supersedes::rows() const {
  uint64_t n = 0;
  for (const auto& g : generations) n += g.second.cardinality();
  return n;
}

}  // namespace strata::format
