// Inverted index of one text column (DESIGN.md §5 "full-text"): term -> postings (document =
// row position, term frequency, and token positions when FtsParams::with_position), plus each
// document's length in tokens. Null texts are not documents. Queries:
//   match, operator OR: documents holding any query term; AND: holding every query term;
//   phrase: documents holding the query terms at consecutive positions (needs with_position;
//     otherwise Invalid "phrase queries need an FTS index built with with_position");
//     precisely, every query token at the same offset from the first query token as in the
//     query text (as Lucene's PhraseQuery with position increments), so a word dropped from
//     the query (stop word, long token) leaves a gap of one, and a phrase without a dropped
//     word needs consecutive positions;
// scored with BM25 (index/fts/bm25.h), summed over the distinct query terms, with |d| = the
// document's indexed tokens (after stop words and long tokens are dropped), under corpus
// statistics supplied by the caller (a term missing from Bm25Stats::doc_freq counts df 0) (so
// scores can use statistics over all tiers); Stats() gives this index's own statistics for the
// query terms. Query text is tokenized with the index's own Tokenizer; a query whose every
// token is dropped (only stop words) matches nothing.
// Serialize writes the term dictionary (sorted), postings, document lengths, the FtsParams and
// an xxhash64 checksum (layout in inverted_index_io.cc). Limits: 2^32-2 documents per index,
// 2^32-1 positions per term.
// Thread-safety: `Impl::mu` (shared_mutex) guards the postings and lengths: AddColumn takes it
// exclusively (after `Impl::gate`, so a stream of queries cannot starve it), queries share it;
// AddColumn tokenizes before taking the lock, and a column becomes visible all at once. Every
// method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "index/fts/bm25.h"
#include "index/fts/tokenizer.h"

namespace strata::index {

/// A full-text query.
struct FtsQuery {
  enum class Kind { kMatch, kPhrase };
  Kind kind = Kind::kMatch;
  std::string text;          // raw query text (tokenized by the index's tokenizer)
  bool require_all = false;  // match only: AND instead of OR
};

/// One scored document.
struct ScoredDoc {
  int64_t position = 0;
  float score = 0.0f;
};

class InvertedIndex {
 public:
  /// Errors: as Tokenizer::Make.
  static Result<std::unique_ptr<InvertedIndex>> Make(const FtsParams& params);
  ~InvertedIndex();

  const FtsParams& params() const;
  const Tokenizer& tokenizer() const;

  /// Indexes rows [0, column.length) of a utf8 / large_utf8 column as documents first_position
  /// + i (nulls skipped). Errors: Invalid for another column type.
  Status AddColumn(const arrow::Array& column, int64_t first_position);

  /// The distinct final terms of `query` (after the tokenizer), in query order.
  std::vector<std::string> QueryTerms(const FtsQuery& query) const;
  /// This index's statistics for `terms`, counting only documents `live` accepts (all when
  /// unset): N, total tokens and df per term.
  Bm25Stats Stats(const std::vector<std::string>& terms,
                  const std::function<bool(int64_t)>& live = {}) const;
  /// As Stats, counting only documents at positions < `end_position`: the fast path for a
  /// source whose rows below its snapshot watermark are all live (no per-document liveness
  /// lookup; a MemTable's index may hold newer rows at or above the watermark).
  Bm25Stats StatsBelow(const std::vector<std::string>& terms, int64_t end_position) const;
  /// Every matching document accepted by `accept` (all when unset), scored with `stats`,
  /// sorted by score descending then position ascending; at most `limit` (< 0: all).
  /// Errors: Invalid for a phrase query on an index without positions.
  Result<std::vector<ScoredDoc>> Search(const FtsQuery& query, const Bm25Stats& stats,
                                        int64_t limit,
                                        const std::function<bool(int64_t)>& accept = {}) const;

  /// Documents indexed (non-null rows).
  int64_t num_docs() const;
  /// Approximate bytes held.
  int64_t memory_bytes() const;

  Result<std::string> Serialize() const;
  /// Errors: Corruption naming what failed.
  static Result<std::unique_ptr<InvertedIndex>> Deserialize(std::string_view bytes);

 private:
  struct Impl;
  explicit InvertedIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::index
