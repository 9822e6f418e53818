// BM25 scoring (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
// 2009), with the Lucene/tantivy IDF form, k1 = 1.2 and b = 0.75:
//   idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//   score(d, q) = sum over query terms t in d of
//                 idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
// N = documents (non-null texts), df = documents holding t, |d| = tokens of d, avgdl = mean
// |d|. The statistics are passed in by the caller, so that a query over several sources (tiers)
// can score every document with the statistics of all live sources.
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace strata::index {

inline constexpr double kBm25K1 = 1.2;
inline constexpr double kBm25B = 0.75;

/// Corpus statistics for one query.
struct Bm25Stats {
  int64_t num_docs = 0;      // N
  int64_t total_tokens = 0;  // sum of |d| over the N documents (avgdl = total / N)
  std::unordered_map<std::string, int64_t> doc_freq;  // df per query term

  /// Adds `other`'s counts to these (statistics of several sources).
  void Merge(const Bm25Stats& other);
  /// total_tokens / num_docs, 0 when num_docs is 0.
  double avg_doc_len() const;
};

/// idf(t) for a term in `df` of `num_docs` documents (0 when num_docs is 0).
double Bm25Idf(int64_t num_docs, int64_t df);
/// One term's contribution: idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl)).
/// 0 when tf <= 0; doc_len / avgdl counts as 1 when avg_doc_len <= 0.
double Bm25TermScore(double idf, int64_t tf, int64_t doc_len, double avg_doc_len);

}  // namespace strata::index
