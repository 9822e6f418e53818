#include "index/fts/bm25.h"

#include <cmath>

namespace strata::index {

void Bm25Stats::Merge(const Bm25Stats& other) {
  num_docs += other.num_docs;
  total_tokens += other.total_tokens;
  for (const auto& [term, df] : other.doc_freq) doc_freq[term] += df;
}

double Bm25Stats::avg_doc_len() const {
  if (num_docs <= 0) return 0.0;
  return static_cast<double>(total_tokens) / static_cast<double>(num_docs);
}

double Bm25Idf(int64_t num_docs, int64_t df) {
  if (num_docs <= 0) return 0.0;
  if (df < 0) df = 0;
  const double n = static_cast<double>(num_docs);
  const double d = static_cast<double>(df);
  // (N - df + 0.5) / (df + 0.5) > -1 for any N >= 0, df >= 0, so the logarithm is finite.
  return std::log(1.0 + (n - d + 0.5) / (d + 0.5));
}

double Bm25TermScore(double idf, int64_t tf, int64_t doc_len, double avg_doc_len) {
  if (tf <= 0) return 0.0;
  const double f = static_cast<double>(tf);
  const double ratio = avg_doc_len > 0.0 ? static_cast<double>(doc_len) / avg_doc_len : 1.0;
  return idf * f * (kBm25K1 + 1.0) / (f + kBm25K1 * (1.0 - kBm25B + kBm25B * ratio));
}

}  // namespace strata::index
