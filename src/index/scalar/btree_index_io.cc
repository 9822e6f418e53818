// BTreeIndex::Serialize / Deserialize: the index as bytes (header, key type as an Arrow
// schema flatbuffer, then keys and positions; see btree_index.h) and back, validating every
// field of untrusted bytes.
#include <flatbuffers/flatbuffers.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "arrow/ipc/fbs/Schema_generated.h"
#include "arrow/ipc/schema_codec.h"
#include "format/key_encoding.h"
#include "format/little_endian.h"
#include "index/scalar/btree_index.h"
#include "index/scalar/btree_index_impl.h"

namespace strata::index {
namespace {

using btree_detail::kNodeOverhead;
using btree_detail::kNullKey;

namespace fb = org::apache::arrow::flatbuf;

constexpr char kMagic[8] = {'S', 'T', 'R', 'B', 'T', 'R', 'E', 'E'};
constexpr uint32_t kVersion = 1;
// Deepest schema nesting accepted when decoding (key types are flat).
constexpr int kMaxSchemaDepth = 4;

template <typename T>
std::string S(T v) {
  return std::to_string(v);
}

// Undoes the total-order float transform of key_encoding (width bits, sign bit on top) and
// checks the canonical forms: no -0.0, every NaN the canonical quiet NaN.
bool CanonicalFloatKey(uint64_t enc, int width, uint64_t canonical_nan, uint64_t exp_mask,
                       uint64_t frac_mask) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  const uint64_t bits = (enc & sign) ? (enc ^ sign) : (~enc & mask);
  if (bits == sign) return false;  // -0.0 is stored as +0.0
  const bool nan = (bits & exp_mask) == exp_mask && (bits & frac_mask) != 0;
  return !nan || bits == canonical_nan;
}

uint64_t BigEndian(std::string_view b) {
  uint64_t v = 0;
  for (char c : b) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

// True when `key` is a key format::AppendValueComponent can produce for a column of `type`.
bool ValidKey(const arrow::DataType& type, std::string_view key) {
  using arrow::TypeId;
  if (key == kNullKey) return true;
  if (key.empty() || key[0] != 0x01) return false;
  const std::string_view v = key.substr(1);
  switch (type.id()) {
    case TypeId::kNull:
      return false;
    case TypeId::kBool:
      return v.size() == 1 && (v[0] == 0 || v[0] == 1);
    case TypeId::kInt8:
    case TypeId::kUInt8:
      return v.size() == 1;
    case TypeId::kInt16:
    case TypeId::kUInt16:
      return v.size() == 2;
    case TypeId::kInt32:
    case TypeId::kUInt32:
    case TypeId::kDate32:
    case TypeId::kTime32:
      return v.size() == 4;
    case TypeId::kInt64:
    case TypeId::kUInt64:
    case TypeId::kDate64:
    case TypeId::kTime64:
    case TypeId::kTimestamp:
    case TypeId::kDuration:
      return v.size() == 8;
    case TypeId::kFloat16:
      return v.size() == 2 && CanonicalFloatKey(BigEndian(v), 16, 0x7E00, 0x7C00, 0x03FF);
    case TypeId::kFloat32:
      return v.size() == 4 &&
             CanonicalFloatKey(BigEndian(v), 32, 0x7FC00000u, 0x7F800000u, 0x007FFFFFu);
    case TypeId::kFloat64:
      return v.size() == 8 && CanonicalFloatKey(BigEndian(v), 64, 0x7FF8000000000000ull,
                                                0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull);
    case TypeId::kDecimal128:
      return v.size() == 16;
    case TypeId::kFixedSizeBinary:
      return v.size() == static_cast<size_t>(type.byte_width());
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kBinary:
    case TypeId::kLargeBinary: {
      // Bytes with 0x00 escaped as 0x00 0x01, then the terminator 0x00 0x00 at the very end.
      size_t i = 0;
      while (i < v.size()) {
        if (v[i] != 0) {
          ++i;
          continue;
        }
        if (i + 1 >= v.size()) return false;
        if (v[i + 1] == 0x01) {
          i += 2;
        } else if (v[i + 1] == 0x00) {
          return i + 2 == v.size();
        } else {
          return false;
        }
      }
      return false;  // no terminator
    }
    default:
      return false;
  }
}

// Bounds-checked little-endian reader over untrusted bytes.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }

  Status U32(const char* what, uint32_t* out) {
    STRATA_RETURN_IF_ERROR(Need(4, what));
    *out = format::GetU32(bytes_.data() + pos_);
    pos_ += 4;
    return Status::OK();
  }
  Status U64(const char* what, uint64_t* out) {
    STRATA_RETURN_IF_ERROR(Need(8, what));
    *out = format::GetU64(bytes_.data() + pos_);
    pos_ += 8;
    return Status::OK();
  }
  Status Bytes(uint64_t n, const char* what, std::string_view* out) {
    STRATA_RETURN_IF_ERROR(Need(n, what));
    *out = bytes_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return Status::OK();
  }

 private:
  Status Need(uint64_t n, const char* what) const {
    if (n > remaining()) {
      return Status::Corruption("btree index: " + std::string(what) + " at byte " + S(pos_) +
                                " needs " + std::to_string(n) + " bytes but only " +
                                S(remaining()) + " remain");
    }
    return Status::OK();
  }
  std::string_view bytes_;
  size_t pos_ = 0;
};

Status Corrupt(const std::string& what) { return Status::Corruption("btree index: " + what); }

}  // namespace

// --- Serialization ------------------------------------------------------------------------------

Result<std::string> BTreeIndex::Serialize() const {
  flatbuffers::FlatBufferBuilder fbb;
  const arrow::Schema schema({arrow::field(impl_->column_name, impl_->type)});
  STRATA_ASSIGN_OR_RETURN(auto schema_off, arrow::ipc::internal::EncodeSchema(fbb, schema));
  fb::FinishSchemaBuffer(fbb, schema_off);

  struct PageInfo {
    uint64_t offset = 0;
    uint64_t bytes = 0;
    uint32_t entries = 0;
    std::string first_key;
  };
  std::vector<PageInfo> dir;
  std::string pages;
  uint64_t num_entries = 0;
  uint64_t num_keys = 0;
  {
    std::shared_lock lock(impl_->mu_);
    // Build pages: groups of (key, run of positions) until kPageEntries entries.
    std::string page;
    uint32_t page_entries = 0;
    uint32_t page_groups = 0;
    auto flush = [&] {
      if (page_entries == 0) return;
      std::string header;
      format::PutU32(&header, page_groups);
      dir.back().bytes = header.size() + page.size();
      dir.back().entries = page_entries;
      pages += header;
      pages += page;
      page.clear();
      page_entries = 0;
      page_groups = 0;
    };
    for (const auto& [key, positions] : impl_->map) {
      ++num_keys;
      size_t i = 0;
      while (i < positions.size()) {
        if (page_entries == 0) {
          PageInfo info;
          info.offset = pages.size();
          info.first_key = key;
          dir.push_back(std::move(info));
        }
        const size_t take = std::min<size_t>(positions.size() - i, kPageEntries - page_entries);
        format::PutU32(&page, static_cast<uint32_t>(key.size()));
        page += key;
        format::PutU32(&page, static_cast<uint32_t>(take));
        for (size_t j = i; j < i + take; ++j) {
          format::PutU64(&page, static_cast<uint64_t>(positions[j]));
        }
        i += take;
        page_entries += static_cast<uint32_t>(take);
        ++page_groups;
        num_entries += take;
        if (page_entries == kPageEntries) flush();
      }
    }
    flush();
  }

  std::string out;
  out.append(kMagic, sizeof(kMagic));
  format::PutU32(&out, kVersion);
  format::PutU32(&out, kPageEntries);
  format::PutU32(&out, static_cast<uint32_t>(fbb.GetSize()));
  out.append(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  format::PutU64(&out, num_entries);
  format::PutU64(&out, num_keys);
  format::PutU32(&out, static_cast<uint32_t>(dir.size()));
  for (const PageInfo& p : dir) {
    format::PutU64(&out, p.offset);
    format::PutU64(&out, p.bytes);
    format::PutU32(&out, p.entries);
    format::PutU32(&out, static_cast<uint32_t>(p.first_key.size()));
    out += p.first_key;
  }
  out += pages;
  format::PutU64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Result<std::unique_ptr<BTreeIndex>> BTreeIndex::Deserialize(std::string_view bytes) {
  constexpr size_t kMinSize = sizeof(kMagic) + 4 + 4 + 4 + 8 + 8 + 4 + 8;
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Corrupt("bad magic (not a Strata btree index; expected \"STRBTREE\")");
  }
  if (bytes.size() < kMinSize) {
    return Corrupt("size " + S(bytes.size()) + " bytes is below the minimum of " + S(kMinSize));
  }
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  const uint64_t stored_sum = format::GetU64(bytes.data() + body.size());
  const uint64_t sum = XXH64(body.data(), body.size(), 0);
  if (sum != stored_sum) {
    return Corrupt("checksum mismatch (xxhash64 of " + S(body.size()) + " bytes)");
  }

  Reader r(body);
  std::string_view skip;
  STRATA_RETURN_IF_ERROR(r.Bytes(sizeof(kMagic), "magic", &skip));
  uint32_t version = 0, page_capacity = 0, schema_len = 0;
  STRATA_RETURN_IF_ERROR(r.U32("version", &version));
  if (version != kVersion) {
    return Corrupt("version " + S(version) + " is not supported (expected " + S(kVersion) + ")");
  }
  STRATA_RETURN_IF_ERROR(r.U32("page capacity", &page_capacity));
  if (page_capacity == 0 || page_capacity > (uint32_t{1} << 20)) {
    return Corrupt("page capacity " + S(page_capacity) + " is outside [1, 1048576]");
  }
  STRATA_RETURN_IF_ERROR(r.U32("schema length", &schema_len));
  std::string_view schema_bytes;
  STRATA_RETURN_IF_ERROR(r.Bytes(schema_len, "schema", &schema_bytes));

  // Flatbuffers reads scalars in place: copy into 8-byte aligned memory before verifying.
  std::vector<uint64_t> aligned((schema_bytes.size() + 7) / 8 + 1);
  std::memcpy(aligned.data(), schema_bytes.data(), schema_bytes.size());
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = 64;
  vopts.max_tables = 10000;
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(aligned.data()),
                                 schema_bytes.size(), vopts);
  if (schema_bytes.empty() || !fb::VerifySchemaBuffer(verifier)) {
    return Corrupt("schema is not a valid Arrow Schema flatbuffer");
  }
  auto decoded = arrow::ipc::internal::DecodeSchema(fb::GetSchema(aligned.data()), kMaxSchemaDepth);
  if (!decoded.ok()) return Corrupt("schema: " + decoded.status().ToString());
  const arrow::SchemaPtr schema = *decoded;
  if (schema->num_fields() != 1) {
    return Corrupt("schema has " + S(schema->num_fields()) + " fields; expected 1");
  }
  auto made = Make(schema->field(0)->type, schema->field(0)->name);
  if (!made.ok()) return Corrupt("schema: " + made.status().ToString());
  std::unique_ptr<BTreeIndex> index = std::move(*made);
  const arrow::DataType& type = *index->impl_->type;

  uint64_t num_entries = 0, num_keys = 0;
  uint32_t num_pages = 0;
  STRATA_RETURN_IF_ERROR(r.U64("entry count", &num_entries));
  STRATA_RETURN_IF_ERROR(r.U64("key count", &num_keys));
  STRATA_RETURN_IF_ERROR(r.U32("page count", &num_pages));
  // Each directory entry takes >= 24 bytes and each page >= 4 + 4 + 4 + 8 bytes.
  if (num_pages > r.remaining() / 44) {
    return Corrupt("page count " + S(num_pages) + " does not fit in the " + S(r.remaining()) +
                   " remaining bytes");
  }
  if (num_keys > num_entries || (num_entries > 0) != (num_pages > 0) ||
      num_entries > uint64_t{num_pages} * page_capacity) {
    return Corrupt("counts disagree: " + S(num_entries) + " entries, " + S(num_keys) + " keys, " +
                   S(num_pages) + " pages of at most " + S(page_capacity) + " entries");
  }

  struct PageInfo {
    uint64_t offset;
    uint64_t bytes;
    uint32_t entries;
    std::string_view first_key;
  };
  std::vector<PageInfo> dir(num_pages);
  uint64_t expect_offset = 0;
  uint64_t dir_entries = 0;
  for (uint32_t p = 0; p < num_pages; ++p) {
    PageInfo& info = dir[p];
    uint32_t key_len = 0;
    STRATA_RETURN_IF_ERROR(r.U64("page directory offset", &info.offset));
    STRATA_RETURN_IF_ERROR(r.U64("page directory size", &info.bytes));
    STRATA_RETURN_IF_ERROR(r.U32("page directory entry count", &info.entries));
    STRATA_RETURN_IF_ERROR(r.U32("page directory key length", &key_len));
    STRATA_RETURN_IF_ERROR(r.Bytes(key_len, "page directory first key", &info.first_key));
    if (info.offset != expect_offset) {
      return Corrupt("page " + S(p) + " starts at offset " + S(info.offset) + "; expected " +
                     S(expect_offset) + " (pages are contiguous)");
    }
    if (info.entries == 0 || info.entries > page_capacity) {
      return Corrupt("page " + S(p) + " has " + S(info.entries) + " entries; expected 1.." +
                     S(page_capacity));
    }
    if (info.bytes > body.size()) {
      return Corrupt("page " + S(p) + " size " + S(info.bytes) + " exceeds the file");
    }
    expect_offset += info.bytes;
    dir_entries += info.entries;
  }
  if (dir_entries != num_entries) {
    return Corrupt("page directory holds " + S(dir_entries) + " entries; header says " +
                   S(num_entries));
  }
  if (expect_offset != r.remaining()) {
    return Corrupt("pages take " + S(expect_offset) + " bytes but " + S(r.remaining()) +
                   " bytes remain before the checksum");
  }

  // Read pages; (key, position) must be strictly increasing across the whole file.
  Impl& impl = *index->impl_;
  auto& map = impl.map;
  std::string_view prev_key;
  int64_t prev_pos = -1;
  bool have_prev = false;
  uint64_t keys_seen = 0;
  for (uint32_t p = 0; p < num_pages; ++p) {
    const PageInfo& info = dir[p];
    std::string_view page;
    STRATA_RETURN_IF_ERROR(r.Bytes(info.bytes, "page", &page));
    Reader pr(page);
    uint32_t groups = 0;
    STRATA_RETURN_IF_ERROR(pr.U32("page group count", &groups));
    if (groups == 0 || groups > info.entries) {
      return Corrupt("page " + S(p) + " has " + S(groups) + " key groups for " + S(info.entries) +
                     " entries");
    }
    uint64_t page_entries = 0;
    for (uint32_t g = 0; g < groups; ++g) {
      uint32_t key_len = 0, count = 0;
      std::string_view key;
      STRATA_RETURN_IF_ERROR(pr.U32("key length", &key_len));
      STRATA_RETURN_IF_ERROR(pr.Bytes(key_len, "key", &key));
      STRATA_RETURN_IF_ERROR(pr.U32("position count", &count));
      if (count == 0 || count > info.entries - page_entries) {
        return Corrupt("page " + S(p) + " group " + S(g) + " has " + S(count) +
                       " positions; the page directory allows " + S(info.entries - page_entries));
      }
      if (g == 0 && key != info.first_key) {
        return Corrupt("page " + S(p) + " first key differs from its page directory entry");
      }
      if (!ValidKey(type, key)) {
        return Corrupt("page " + S(p) + " group " + S(g) + " key " + format::KeyToDebugString(key) +
                       " is not a valid " + type.ToString() + " key");
      }
      const bool same_key = have_prev && key == prev_key;
      if (have_prev && !same_key && !(prev_key < key)) {
        return Corrupt("keys out of order at page " + S(p) + " group " + S(g));
      }
      if (same_key && g > 0) {
        return Corrupt("key repeated within page " + S(p) + " (group " + S(g) + ")");
      }
      std::string_view pos_bytes;
      STRATA_RETURN_IF_ERROR(pr.Bytes(uint64_t{count} * 8, "positions", &pos_bytes));
      std::vector<int64_t>* positions;
      if (same_key) {
        positions = &std::prev(map.end())->second;
      } else {
        ++keys_seen;
        impl.memory_bytes +=
            static_cast<int64_t>(sizeof(std::string) + sizeof(std::vector<int64_t>)) +
            kNodeOverhead + static_cast<int64_t>(key.size() > 15 ? key.size() + 1 : 0);
        positions = &map.emplace_hint(map.end(), std::string(key), std::vector<int64_t>{})->second;
        prev_pos = -1;
      }
      const size_t cap = positions->capacity();
      if (!same_key) positions->reserve(count);
      for (uint32_t i = 0; i < count; ++i) {
        const uint64_t u = format::GetU64(pos_bytes.data() + uint64_t{i} * 8);
        const auto pos = static_cast<int64_t>(u);
        if (pos < 0) {
          return Corrupt("page " + S(p) + " holds negative position " + S(pos));
        }
        if (pos <= prev_pos) {
          return Corrupt("positions out of order at page " + S(p) + " group " + S(g) +
                         " (position " + S(pos) + " after " + S(prev_pos) + ")");
        }
        positions->push_back(pos);
        prev_pos = pos;
      }
      impl.memory_bytes += static_cast<int64_t>((positions->capacity() - cap) * 8);
      prev_key = std::prev(map.end())->first;
      have_prev = true;
      page_entries += count;
    }
    if (page_entries != info.entries) {
      return Corrupt("page " + S(p) + " holds " + S(page_entries) +
                     " entries; its directory entry says " + S(info.entries));
    }
    if (pr.remaining() != 0) {
      return Corrupt("page " + S(p) + " has " + S(pr.remaining()) + " trailing bytes");
    }
  }
  if (keys_seen != num_keys) {
    return Corrupt("found " + S(keys_seen) + " distinct keys; header says " + S(num_keys));
  }
  impl.entries = static_cast<int64_t>(num_entries);
  return index;
}

}  // namespace strata::index
