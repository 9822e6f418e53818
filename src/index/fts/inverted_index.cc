#include "index/fts/inverted_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace strata::index {

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
// Internal document ids are uint32; the last value is kept free.
constexpr uint64_t kMaxDocs = std::numeric_limits<uint32_t>::max() - 1;

// Postings of one term, by ascending internal document id. Positions of posting i are
// positions[pos_start[i], pos_start[i] + tfs[i]) (with_position only), ascending.
struct PostingList {
  std::vector<uint32_t> docs;
  std::vector<uint32_t> tfs;
  std::vector<uint32_t> pos_start;
  std::vector<uint32_t> positions;

  int64_t bytes() const {
    return static_cast<int64_t>(
        (docs.capacity() + tfs.capacity() + pos_start.capacity() + positions.capacity()) *
        sizeof(uint32_t));
  }
};

// Estimated bytes of one dictionary entry besides its postings (hash node, bucket, string).
int64_t TermOverhead(const std::string& term) {
  return static_cast<int64_t>(sizeof(PostingList) + sizeof(std::string) + sizeof(uint32_t) +
                              3 * sizeof(void*) + (term.size() > 15 ? term.capacity() + 1 : 0));
}

// One document's terms, ready to merge: term, tf and positions (ascending).
struct DocTerms {
  int64_t position = 0;
  uint32_t length = 0;        // indexed tokens
  std::vector<Token> tokens;  // sorted by (term, position)
};

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

struct InvertedIndex::Impl {
  FtsParams params;
  std::shared_ptr<const Tokenizer> tokenizer;

  // glibc's rwlock prefers readers, so a steady stream of queries could starve AddColumn:
  // a writer first takes `gate` (new readers wait on it), then `mu` exclusively.
  mutable std::mutex gate;
  mutable std::shared_mutex mu;
  // Guarded by mu: term -> id into postings; postings by term id; per internal document id its
  // row position and length in indexed tokens; the sum of lengths; estimated bytes.
  std::unordered_map<std::string, uint32_t> term_ids;
  std::vector<PostingList> postings;
  std::vector<int64_t> doc_positions;
  std::vector<uint32_t> doc_lens;
  int64_t total_tokens = 0;
  int64_t memory = 0;

  std::shared_lock<std::shared_mutex> ReadLock() const {
    { std::lock_guard g(gate); }
    return std::shared_lock(mu);
  }
  std::unique_lock<std::shared_mutex> WriteLock() const {
    std::lock_guard g(gate);
    return std::unique_lock(mu);
  }

  int64_t DocBytes() const {
    return static_cast<int64_t>(doc_positions.capacity() * sizeof(int64_t) +
                                doc_lens.capacity() * sizeof(uint32_t));
  }
  const PostingList* Find(const std::string& term) const {
    auto it = term_ids.find(term);
    return it == term_ids.end() ? nullptr : &postings[it->second];
  }
};

InvertedIndex::InvertedIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InvertedIndex::~InvertedIndex() = default;

Result<std::unique_ptr<InvertedIndex>> InvertedIndex::Make(const FtsParams& params) {
  STRATA_ASSIGN_OR_RETURN(auto tokenizer, Tokenizer::Make(params));
  auto impl = std::make_unique<Impl>();
  impl->params = params;
  impl->tokenizer = std::move(tokenizer);
  impl->memory = static_cast<int64_t>(sizeof(Impl));
  return std::unique_ptr<InvertedIndex>(new InvertedIndex(std::move(impl)));
}

const FtsParams& InvertedIndex::params() const { return impl_->params; }
const Tokenizer& InvertedIndex::tokenizer() const { return *impl_->tokenizer; }

Status InvertedIndex::AddColumn(const arrow::Array& column, int64_t first_position) {
  const arrow::TypeId id = column.type_id();
  if (id != arrow::TypeId::kUtf8 && id != arrow::TypeId::kLargeUtf8) {
    return Status::Invalid("FTS index: column type " + column.type()->ToString() +
                           " is not utf8 or large_utf8");
  }
  // Tokenize outside the lock; readers keep running meanwhile.
  const bool with_position = impl_->params.with_position;
  std::vector<DocTerms> docs;
  docs.reserve(static_cast<size_t>(column.length() - column.null_count()));
  for (int64_t i = 0; i < column.length(); ++i) {
    if (column.IsNull(i)) continue;
    DocTerms d;
    d.position = first_position + i;
    d.tokens = impl_->tokenizer->Tokenize(column.GetView(i));
    if (d.tokens.size() > std::numeric_limits<uint32_t>::max()) {
      return Status::Invalid("FTS index: row " + std::to_string(d.position) + " has " +
                             std::to_string(d.tokens.size()) + " tokens, over the limit 2^32-1");
    }
    d.length = static_cast<uint32_t>(d.tokens.size());
    std::stable_sort(d.tokens.begin(), d.tokens.end(),
                     [](const Token& a, const Token& b) { return a.term < b.term; });
    docs.push_back(std::move(d));
  }

  Impl& m = *impl_;
  auto lock = m.WriteLock();
  if (m.doc_positions.size() + docs.size() > kMaxDocs) {
    return Status::Invalid("FTS index: " + std::to_string(m.doc_positions.size() + docs.size()) +
                           " documents exceed the limit " + std::to_string(kMaxDocs));
  }
  // Position offsets are uint32 per term: check before changing anything.
  if (with_position) {
    std::unordered_map<std::string_view, uint64_t> added;
    for (const DocTerms& d : docs) {
      for (const Token& t : d.tokens) ++added[t.term];
    }
    for (const auto& [term, n] : added) {
      auto it = m.term_ids.find(std::string(term));
      const uint64_t have = it == m.term_ids.end() ? 0 : m.postings[it->second].positions.size();
      if (have + n > std::numeric_limits<uint32_t>::max()) {
        return Status::Invalid("FTS index: term '" + std::string(term) +
                               "' would exceed 2^32-1 positions");
      }
    }
  }
  const int64_t doc_bytes_before = m.DocBytes();
  for (DocTerms& d : docs) {
    const uint32_t doc = static_cast<uint32_t>(m.doc_positions.size());
    m.doc_positions.push_back(d.position);
    m.doc_lens.push_back(d.length);
    m.total_tokens += d.length;
    size_t i = 0;
    while (i < d.tokens.size()) {
      size_t j = i + 1;
      while (j < d.tokens.size() && d.tokens[j].term == d.tokens[i].term) ++j;
      auto [it, inserted] = m.term_ids.try_emplace(std::move(d.tokens[i].term),
                                                   static_cast<uint32_t>(m.postings.size()));
      if (inserted) {
        m.postings.emplace_back();
        m.memory += TermOverhead(it->first);
      }
      PostingList& pl = m.postings[it->second];
      const int64_t before = pl.bytes();
      pl.docs.push_back(doc);
      pl.tfs.push_back(static_cast<uint32_t>(j - i));
      if (with_position) {
        pl.pos_start.push_back(static_cast<uint32_t>(pl.positions.size()));
        for (size_t k = i; k < j; ++k) pl.positions.push_back(d.tokens[k].position);
      }
      m.memory += pl.bytes() - before;
      i = j;
    }
  }
  m.memory += m.DocBytes() - doc_bytes_before;
  return Status::OK();
}

std::vector<std::string> InvertedIndex::QueryTerms(const FtsQuery& query) const {
  std::vector<std::string> terms;
  for (Token& t : impl_->tokenizer->Tokenize(query.text)) {
    if (std::find(terms.begin(), terms.end(), t.term) == terms.end()) {
      terms.push_back(std::move(t.term));
    }
  }
  return terms;
}

Bm25Stats InvertedIndex::Stats(const std::vector<std::string>& terms,
                               const std::function<bool(int64_t)>& live) const {
  const Impl& m = *impl_;
  Bm25Stats s;
  auto lock = m.ReadLock();
  if (!live) {
    s.num_docs = static_cast<int64_t>(m.doc_positions.size());
    s.total_tokens = m.total_tokens;
    for (const std::string& t : terms) {
      const PostingList* pl = m.Find(t);
      s.doc_freq[t] = pl == nullptr ? 0 : static_cast<int64_t>(pl->docs.size());
    }
    return s;
  }
  for (size_t d = 0; d < m.doc_positions.size(); ++d) {
    if (!live(m.doc_positions[d])) continue;
    ++s.num_docs;
    s.total_tokens += m.doc_lens[d];
  }
  for (const std::string& t : terms) {
    if (s.doc_freq.count(t) != 0) continue;
    int64_t df = 0;
    if (const PostingList* pl = m.Find(t)) {
      for (uint32_t d : pl->docs) df += live(m.doc_positions[d]) ? 1 : 0;
    }
    s.doc_freq[t] = df;
  }
  return s;
}

Bm25Stats InvertedIndex::StatsBelow(const std::vector<std::string>& terms,
                                    int64_t end_position) const {
  const Impl& m = *impl_;
  Bm25Stats s;
  auto lock = m.ReadLock();
  for (size_t d = 0; d < m.doc_positions.size(); ++d) {
    if (m.doc_positions[d] >= end_position) continue;
    ++s.num_docs;
    s.total_tokens += m.doc_lens[d];
  }
  for (const std::string& t : terms) {
    if (s.doc_freq.count(t) != 0) continue;
    int64_t df = 0;
    if (const PostingList* pl = m.Find(t)) {
      for (uint32_t d : pl->docs) df += m.doc_positions[d] < end_position ? 1 : 0;
    }
    s.doc_freq[t] = df;
  }
  return s;
}

Result<std::vector<ScoredDoc>> InvertedIndex::Search(
    const FtsQuery& query, const Bm25Stats& stats, int64_t limit,
    const std::function<bool(int64_t)>& accept) const {
  const Impl& m = *impl_;
  const bool phrase = query.kind == FtsQuery::Kind::kPhrase;
  if (phrase && !m.params.with_position) {
    return Status::Invalid("phrase queries need an FTS index built with with_position");
  }
  std::vector<ScoredDoc> out;
  if (limit == 0) return out;
  const std::vector<Token> tokens = m.tokenizer->Tokenize(query.text);
  if (tokens.empty()) return out;

  // Distinct terms, and for every query token the index of its distinct term.
  std::vector<std::string> terms;
  std::vector<size_t> token_term(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    auto it = std::find(terms.begin(), terms.end(), tokens[i].term);
    token_term[i] = static_cast<size_t>(it - terms.begin());
    if (it == terms.end()) terms.push_back(tokens[i].term);
  }
  const size_t nt = terms.size();
  std::vector<double> idf(nt);
  for (size_t t = 0; t < nt; ++t) {
    auto it = stats.doc_freq.find(terms[t]);
    idf[t] = Bm25Idf(stats.num_docs, it == stats.doc_freq.end() ? 0 : it->second);
  }
  const double avgdl = stats.avg_doc_len();

  auto lock = m.ReadLock();
  std::vector<const PostingList*> lists(nt);
  for (size_t t = 0; t < nt; ++t) lists[t] = m.Find(terms[t]);
  std::vector<size_t> cur(nt, 0);  // cursor into lists[t]->docs

  auto score_doc = [&](uint32_t doc, const std::vector<size_t>& present) {
    double score = 0.0;
    for (size_t t : present) {
      score += Bm25TermScore(idf[t], lists[t]->tfs[cur[t]], m.doc_lens[doc], avgdl);
    }
    out.push_back(ScoredDoc{m.doc_positions[doc], static_cast<float>(score)});
  };

  std::vector<size_t> present;
  present.reserve(nt);
  if (!phrase && !query.require_all) {
    // OR: merge the sorted posting lists.
    while (true) {
      uint32_t min_doc = std::numeric_limits<uint32_t>::max();
      for (size_t t = 0; t < nt; ++t) {
        if (lists[t] != nullptr && cur[t] < lists[t]->docs.size()) {
          min_doc = std::min(min_doc, lists[t]->docs[cur[t]]);
        }
      }
      if (min_doc == std::numeric_limits<uint32_t>::max()) break;
      present.clear();
      for (size_t t = 0; t < nt; ++t) {
        if (lists[t] != nullptr && cur[t] < lists[t]->docs.size() &&
            lists[t]->docs[cur[t]] == min_doc) {
          present.push_back(t);
        }
      }
      if (!accept || accept(m.doc_positions[min_doc])) score_doc(min_doc, present);
      for (size_t t : present) ++cur[t];
    }
  } else {
    // AND (and the candidates of a phrase): drive with the shortest list, skip in the others.
    for (const PostingList* pl : lists) {
      if (pl == nullptr) return out;
    }
    std::vector<size_t> order(nt);
    for (size_t t = 0; t < nt; ++t) order[t] = t;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return lists[a]->docs.size() < lists[b]->docs.size(); });
    present = order;
    const PostingList& lead = *lists[order[0]];
    for (size_t i = 0; i < lead.docs.size(); ++i) {
      const uint32_t doc = lead.docs[i];
      cur[order[0]] = i;
      bool all = true;
      for (size_t k = 1; k < nt && all; ++k) {
        const size_t t = order[k];
        const auto& docs = lists[t]->docs;
        auto it =
            std::lower_bound(docs.begin() + static_cast<std::ptrdiff_t>(cur[t]), docs.end(), doc);
        cur[t] = static_cast<size_t>(it - docs.begin());
        if (it == docs.end()) {
          // No later document can hold this term: done.
          i = lead.docs.size();
          all = false;
        } else if (*it != doc) {
          all = false;
        }
      }
      if (!all) continue;
      if (accept && !accept(m.doc_positions[doc])) continue;
      if (phrase && tokens.size() > 1) {
        // Token i must sit at p + (query position i - query position 0) for some p.
        auto positions_of = [&](size_t t) {
          const PostingList& pl = *lists[t];
          const uint32_t* begin = pl.positions.data() + pl.pos_start[cur[t]];
          return std::make_pair(begin, begin + pl.tfs[cur[t]]);
        };
        const auto [first_b, first_e] = positions_of(token_term[0]);
        bool matched = false;
        for (const uint32_t* p = first_b; p != first_e && !matched; ++p) {
          matched = true;
          for (size_t q = 1; q < tokens.size() && matched; ++q) {
            const uint64_t want =
                static_cast<uint64_t>(*p) + (tokens[q].position - tokens[0].position);
            const auto [b, e] = positions_of(token_term[q]);
            const uint32_t* f = std::lower_bound(
                b, e, want, [](uint32_t x, uint64_t w) { return static_cast<uint64_t>(x) < w; });
            matched = f != e && *f == want;
          }
        }
        if (!matched) continue;
      }
      score_doc(doc, present);
    }
  }

  auto better = [](const ScoredDoc& a, const ScoredDoc& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.position < b.position;
  };
  if (limit > 0 && static_cast<size_t>(limit) < out.size()) {
    std::partial_sort(out.begin(), out.begin() + limit, out.end(), better);
    out.resize(static_cast<size_t>(limit));
  } else {
    std::sort(out.begin(), out.end(), better);
  }
  return out;
}

int64_t InvertedIndex::num_docs() const {
  auto lock = impl_->ReadLock();
  return static_cast<int64_t>(impl_->doc_positions.size());
}

int64_t InvertedIndex::memory_bytes() const {
  auto lock = impl_->ReadLock();
  return impl_->memory;
}

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
