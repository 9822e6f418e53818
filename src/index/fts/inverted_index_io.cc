// Serialisation of an InvertedIndex: the byte layout (at Serialize), Serialize, and
// Deserialize with its corruption checks.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "index/fts/inverted_index.h"
#include "index/fts/inverted_index_impl.h"

namespace strata::index {

using fts_internal::kMaxDocs;
using fts_internal::PostingList;
using fts_internal::TermOverhead;

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'F', 'T', 'S', '1'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kFlagWithPosition = 1u << 0;
constexpr uint32_t kFlagLowerCase = 1u << 1;
constexpr uint32_t kFlagStem = 1u << 2;
constexpr uint32_t kFlagRemoveStopWords = 1u << 3;
constexpr uint32_t kFlagAsciiFolding = 1u << 4;
constexpr uint32_t kKnownFlags = (1u << 5) - 1;
constexpr uint32_t kMaxParamString = 64;  // bytes of base_tokenizer / language

// ---- little-endian encoding -----------------------------------------------------------------

void PutU32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  out->append(b, 4);
}
void PutU64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  out->append(b, 8);
}
void PutBytes(std::string* out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

// Bounds-checked reader over the bytes before the checksum.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  size_t remaining() const { return b_.size() - pos_; }
  size_t pos() const { return pos_; }

  Status U32(const char* what, uint32_t* v) {
    if (remaining() < 4) return Truncated(what);
    uint32_t x = 0;
    for (int i = 0; i < 4; ++i)
      x |= static_cast<uint32_t>(static_cast<uint8_t>(b_[pos_ + i])) << (8 * i);
    pos_ += 4;
    *v = x;
    return Status::OK();
  }
  Status U64(const char* what, uint64_t* v) {
    if (remaining() < 8) return Truncated(what);
    uint64_t x = 0;
    for (int i = 0; i < 8; ++i)
      x |= static_cast<uint64_t>(static_cast<uint8_t>(b_[pos_ + i])) << (8 * i);
    pos_ += 8;
    *v = x;
    return Status::OK();
  }
  Status Bytes(const char* what, size_t n, std::string_view* v) {
    if (remaining() < n) return Truncated(what);
    *v = b_.substr(pos_, n);
    pos_ += n;
    return Status::OK();
  }
  Status String(const char* what, uint32_t max_len, std::string_view* v) {
    uint32_t n = 0;
    STRATA_RETURN_IF_ERROR(U32(what, &n));
    if (n > max_len) {
      return Status::Corruption(std::string("FTS index: ") + what + " length " + std::to_string(n) +
                                " exceeds " + std::to_string(max_len));
    }
    return Bytes(what, n, v);
  }

 private:
  Status Truncated(const char* what) const {
    return Status::Corruption(std::string("FTS index truncated reading ") + what + " at byte " +
                              std::to_string(pos_));
  }
  std::string_view b_;
  size_t pos_ = 0;
};

}  // namespace

// Layout (little-endian):
//   magic "STRAFTS1", u32 version (1), u32 flags (bit 0 with_position, 1 lower_case, 2 stem,
//   3 remove_stop_words, 4 ascii_folding), u32 max_token_length, u32 len + base_tokenizer,
//   u32 len + language,
//   u64 num_docs, num_docs x i64 row position, num_docs x u32 length,
//   u64 num_terms, then per term in ascending byte order: u32 len + term bytes, u32 n postings,
//     n x u32 document id (ascending), n x u32 tf (>= 1), and with_position: sum(tf) x u32
//     positions (ascending within each document),
//   u64 xxhash64 (seed 0) of every byte before it.
Result<std::string> InvertedIndex::Serialize() const {
  const Impl& m = *impl_;
  const FtsParams& p = m.params;
  std::string out;
  out.append(kMagic, sizeof(kMagic));
  PutU32(&out, kVersion);
  uint32_t flags = 0;
  if (p.with_position) flags |= kFlagWithPosition;
  if (p.lower_case) flags |= kFlagLowerCase;
  if (p.stem) flags |= kFlagStem;
  if (p.remove_stop_words) flags |= kFlagRemoveStopWords;
  if (p.ascii_folding) flags |= kFlagAsciiFolding;
  PutU32(&out, flags);
  PutU32(&out, static_cast<uint32_t>(p.max_token_length));
  PutBytes(&out, p.base_tokenizer);
  PutBytes(&out, p.language);

  auto lock = m.ReadLock();
  PutU64(&out, m.doc_positions.size());
  for (int64_t pos : m.doc_positions) PutU64(&out, static_cast<uint64_t>(pos));
  for (uint32_t len : m.doc_lens) PutU32(&out, len);

  std::vector<std::pair<std::string_view, uint32_t>> sorted;
  sorted.reserve(m.term_ids.size());
  for (const auto& [term, id] : m.term_ids) sorted.emplace_back(term, id);
  std::sort(sorted.begin(), sorted.end());
  PutU64(&out, sorted.size());
  for (const auto& [term, id] : sorted) {
    const PostingList& pl = m.postings[id];
    PutBytes(&out, term);
    PutU32(&out, static_cast<uint32_t>(pl.docs.size()));
    for (uint32_t d : pl.docs) PutU32(&out, d);
    for (uint32_t tf : pl.tfs) PutU32(&out, tf);
    if (p.with_position) {
      for (uint32_t pos : pl.positions) PutU32(&out, pos);
    }
  }
  PutU64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Result<std::unique_ptr<InvertedIndex>> InvertedIndex::Deserialize(std::string_view bytes) {
  constexpr size_t kMinSize = sizeof(kMagic) + 4 * 5 + 8 + 8 + 8;
  if (bytes.size() < kMinSize) {
    return Status::Corruption("FTS index is " + std::to_string(bytes.size()) +
                              " bytes, smaller than the minimum " + std::to_string(kMinSize));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("FTS index: bad magic");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) {
    stored |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[body.size() + i])) << (8 * i);
  }
  if (XXH64(body.data(), body.size(), 0) != stored) {
    return Status::Corruption("FTS index: checksum mismatch");
  }

  Reader r(body);
  std::string_view skip;
  STRATA_RETURN_IF_ERROR(r.Bytes("magic", sizeof(kMagic), &skip));
  uint32_t version = 0, flags = 0, max_len = 0;
  STRATA_RETURN_IF_ERROR(r.U32("version", &version));
  if (version != kVersion) {
    return Status::Corruption("FTS index: unknown version " + std::to_string(version) +
                              " (supported: " + std::to_string(kVersion) + ")");
  }
  STRATA_RETURN_IF_ERROR(r.U32("flags", &flags));
  if ((flags & ~kKnownFlags) != 0) {
    return Status::Corruption("FTS index: unknown flags " + std::to_string(flags));
  }
  STRATA_RETURN_IF_ERROR(r.U32("max_token_length", &max_len));
  std::string_view base_tokenizer, language;
  STRATA_RETURN_IF_ERROR(r.String("base_tokenizer", kMaxParamString, &base_tokenizer));
  STRATA_RETURN_IF_ERROR(r.String("language", kMaxParamString, &language));
  FtsParams params;
  params.base_tokenizer = std::string(base_tokenizer);
  params.language = std::string(language);
  params.max_token_length =
      max_len > static_cast<uint32_t>(kMaxTokenLengthLimit) ? 0 : static_cast<int>(max_len);
  params.with_position = (flags & kFlagWithPosition) != 0;
  params.lower_case = (flags & kFlagLowerCase) != 0;
  params.stem = (flags & kFlagStem) != 0;
  params.remove_stop_words = (flags & kFlagRemoveStopWords) != 0;
  params.ascii_folding = (flags & kFlagAsciiFolding) != 0;
  auto made = Make(params);
  if (!made.ok()) {
    return Status::Corruption("FTS index: bad parameters: " + made.status().message());
  }
  std::unique_ptr<InvertedIndex> index = std::move(made).value();
  Impl& m = *index->impl_;

  uint64_t num_docs = 0;
  STRATA_RETURN_IF_ERROR(r.U64("num_docs", &num_docs));
  if (num_docs > kMaxDocs || num_docs > r.remaining() / 12) {
    return Status::Corruption("FTS index: num_docs " + std::to_string(num_docs) +
                              " does not fit in the remaining " + std::to_string(r.remaining()) +
                              " bytes");
  }
  m.doc_positions.resize(num_docs);
  m.doc_lens.resize(num_docs);
  for (uint64_t d = 0; d < num_docs; ++d) {
    uint64_t v = 0;
    STRATA_RETURN_IF_ERROR(r.U64("document position", &v));
    m.doc_positions[d] = static_cast<int64_t>(v);
  }
  for (uint64_t d = 0; d < num_docs; ++d) {
    STRATA_RETURN_IF_ERROR(r.U32("document length", &m.doc_lens[d]));
    m.total_tokens += m.doc_lens[d];
  }

  uint64_t num_terms = 0;
  STRATA_RETURN_IF_ERROR(r.U64("num_terms", &num_terms));
  // Every term takes at least 4 (length) + 1 (byte) + 4 (count) + 8 (one posting) bytes.
  if (num_terms > r.remaining() / 17) {
    return Status::Corruption("FTS index: num_terms " + std::to_string(num_terms) +
                              " does not fit in the remaining " + std::to_string(r.remaining()) +
                              " bytes");
  }
  std::vector<uint64_t> tf_sum(num_docs, 0);  // per document, checked against its length
  m.term_ids.reserve(num_terms);
  m.postings.resize(num_terms);
  std::string_view prev;
  for (uint64_t t = 0; t < num_terms; ++t) {
    std::string_view term;
    STRATA_RETURN_IF_ERROR(r.String("term", std::numeric_limits<uint32_t>::max(), &term));
    if (term.empty()) return Status::Corruption("FTS index: empty term #" + std::to_string(t));
    if (t > 0 && !(prev < term)) {
      return Status::Corruption("FTS index: term #" + std::to_string(t) +
                                " is not after the previous term (dictionary must be sorted)");
    }
    prev = term;
    uint32_t n = 0;
    STRATA_RETURN_IF_ERROR(r.U32("posting count", &n));
    if (n == 0 || n > num_docs || static_cast<uint64_t>(n) * 8 > r.remaining()) {
      return Status::Corruption("FTS index: term #" + std::to_string(t) + " has " +
                                std::to_string(n) +
                                " postings (documents: " + std::to_string(num_docs) +
                                ", remaining bytes: " + std::to_string(r.remaining()) + ")");
    }
    PostingList& pl = m.postings[t];
    pl.docs.resize(n);
    pl.tfs.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      STRATA_RETURN_IF_ERROR(r.U32("posting document", &pl.docs[i]));
      if (pl.docs[i] >= num_docs || (i > 0 && pl.docs[i] <= pl.docs[i - 1])) {
        return Status::Corruption("FTS index: term #" + std::to_string(t) +
                                  " posting document ids must ascend below num_docs");
      }
    }
    uint64_t total_tf = 0;
    for (uint32_t i = 0; i < n; ++i) {
      STRATA_RETURN_IF_ERROR(r.U32("term frequency", &pl.tfs[i]));
      if (pl.tfs[i] == 0) {
        return Status::Corruption("FTS index: term #" + std::to_string(t) +
                                  " has a zero term frequency");
      }
      total_tf += pl.tfs[i];
      tf_sum[pl.docs[i]] += pl.tfs[i];
    }
    if (params.with_position) {
      if (total_tf > std::numeric_limits<uint32_t>::max() || total_tf * 4 > r.remaining()) {
        return Status::Corruption("FTS index: term #" + std::to_string(t) + " needs " +
                                  std::to_string(total_tf) + " positions, over the remaining " +
                                  std::to_string(r.remaining()) + " bytes");
      }
      pl.pos_start.resize(n);
      pl.positions.resize(total_tf);
      uint32_t k = 0;
      for (uint32_t i = 0; i < n; ++i) {
        pl.pos_start[i] = k;
        for (uint32_t j = 0; j < pl.tfs[i]; ++j, ++k) {
          STRATA_RETURN_IF_ERROR(r.U32("position", &pl.positions[k]));
          if (j > 0 && pl.positions[k] <= pl.positions[k - 1]) {
            return Status::Corruption("FTS index: term #" + std::to_string(t) +
                                      " positions must ascend within a document");
          }
        }
      }
    }
    auto [it, inserted] = m.term_ids.try_emplace(std::string(term), static_cast<uint32_t>(t));
    (void)inserted;  // sorted and strictly ascending: always new
    m.memory += TermOverhead(it->first) + pl.bytes();
  }
  if (r.remaining() != 0) {
    return Status::Corruption("FTS index: " + std::to_string(r.remaining()) +
                              " unexpected bytes after the postings");
  }
  for (uint64_t d = 0; d < num_docs; ++d) {
    if (tf_sum[d] != m.doc_lens[d]) {
      return Status::Corruption("FTS index: document #" + std::to_string(d) + " has length " +
                                std::to_string(m.doc_lens[d]) + " but its postings hold " +
                                std::to_string(tf_sum[d]) + " tokens");
    }
  }
  m.memory += m.DocBytes();
  return index;
}

}  // namespace strata::index
