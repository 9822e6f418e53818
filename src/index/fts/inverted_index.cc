#include "index/fts/inverted_index.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "index/fts/inverted_index_impl.h"

namespace strata::index {

using fts_internal::kMaxDocs;
using fts_internal::PostingList;
using fts_internal::TermOverhead;

namespace {

// One document's terms, ready to merge: term, tf and positions (ascending).
struct DocTerms {
  int64_t position = 0;
  uint32_t length = 0;        // indexed tokens
  std::vector<Token> tokens;  // sorted by (term, position)
};

}  // namespace

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

}  // namespace strata::index
