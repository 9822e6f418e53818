// Exact k-nearest-neighbour ground truth for uint8 vectors (Fashion-MNIST pixels) under squared
// L2, in integer arithmetic: no float rounding, so the answer (and its tie order) is exact and
// reproducible. Used by bench/knn_ground_truth.cc (the `knn_ground_truth` tool behind
// `make bench-compare`) and by tests/bench/knn_ground_truth_test.cc.
//
// Algorithm: ||q - t||^2 = ||q||^2 + ||t||^2 - 2 q.t, all in int32 (at most 65025 per
// dimension, so dim <= 33025 fits). Vectors are widened to int16 and zero-padded to a multiple of
// 16; the dot products run as AVX2 vpmaddwd (16 int16 products summed pairwise into 8 int32
// lanes) in a 4-query x 2-train register tile, over cache-resident blocks (64 queries x 128
// training rows, ~300 KB for 784-d, inside a 1 MB L2), the usual blocked-GEMM layout. Each query
// keeps a bounded max-heap of (distance, id); candidates are ordered by (distance, id), so ties
// go to the smaller training id. Query chunks are handed out to std::threads through an atomic
// counter.
// Header-only (inline) so that tests, which link only strata_core, can include it.
// Thread-safety: pure functions; ExactKnnL2U8 runs its own threads and joins them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace strata::bench {

/// Exact top-k answer: `queries` rows of `k` neighbours, row-major, nearest first.
/// ids[q * k + j] is a training row id (as given in `candidates`), dist[q * k + j] its exact
/// squared L2 distance (sum of squared pixel differences).
struct KnnGroundTruth {
  int64_t queries = 0;
  int64_t k = 0;
  std::vector<int32_t> ids;
  std::vector<int64_t> dist;
};

namespace knn_detail {

constexpr int64_t kQueryChunk = 64;   // queries per work item (kept in L2)
constexpr int64_t kTrainBlock = 128;  // training rows per block (kept in L2)

/// Widens `rows` rows of `dim` bytes (row ids from `index`, or 0..rows-1 when null) to int16,
/// zero-padded to `padded` columns; also returns each row's squared norm.
inline void Widen(const uint8_t* src, int64_t dim, int64_t padded, const int32_t* index,
                  int64_t rows, std::vector<int16_t>* out, std::vector<int32_t>* norms) {
  out->assign(static_cast<size_t>(rows * padded), 0);
  norms->assign(static_cast<size_t>(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* s = src + (index != nullptr ? int64_t{index[r]} : r) * dim;
    int16_t* d = out->data() + r * padded;
    int32_t n = 0;
    for (int64_t i = 0; i < dim; ++i) {
      d[i] = s[i];
      n += int32_t{s[i]} * s[i];
    }
    (*norms)[static_cast<size_t>(r)] = n;
  }
}

#if defined(__AVX2__)
inline int32_t HorizontalSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}
#endif

/// out[i * 2 + j] = q_i . t_j for 4 query rows and 2 training rows of `padded` int16
/// (a multiple of 16).
inline void Dot4x2(const int16_t* q0, const int16_t* q1, const int16_t* q2, const int16_t* q3,
                   const int16_t* t0, const int16_t* t1, int64_t padded, int32_t out[8]) {
#if defined(__AVX2__)
  __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
          a30 = a00, a31 = a00;
  for (int64_t i = 0; i < padded; i += 16) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t0 + i));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t1 + i));
    __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q0 + i));
    a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(y, x0));
    a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(y, x1));
    y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q1 + i));
    a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(y, x0));
    a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(y, x1));
    y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q2 + i));
    a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(y, x0));
    a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(y, x1));
    y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q3 + i));
    a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(y, x0));
    a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(y, x1));
  }
  out[0] = HorizontalSum(a00);
  out[1] = HorizontalSum(a01);
  out[2] = HorizontalSum(a10);
  out[3] = HorizontalSum(a11);
  out[4] = HorizontalSum(a20);
  out[5] = HorizontalSum(a21);
  out[6] = HorizontalSum(a30);
  out[7] = HorizontalSum(a31);
#else
  const int16_t* q[4] = {q0, q1, q2, q3};
  for (int a = 0; a < 4; ++a) {
    int32_t s0 = 0, s1 = 0;
    for (int64_t i = 0; i < padded; ++i) {
      s0 += int32_t{q[a][i]} * t0[i];
      s1 += int32_t{q[a][i]} * t1[i];
    }
    out[a * 2] = s0;
    out[a * 2 + 1] = s1;
  }
#endif
}

/// Bounded max-heap of the k smallest (distance, id) pairs seen so far.
class TopK {
 public:
  explicit TopK(int64_t k) : k_(static_cast<size_t>(k)) { heap_.reserve(k_ + 1); }
  void Offer(int32_t d, int32_t id) {
    if (heap_.size() == k_) {
      const auto& w = heap_.front();
      if (d > w.first || (d == w.first && id >= w.second)) return;
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.back() = {d, id};
    } else {
      heap_.emplace_back(d, id);
    }
    std::push_heap(heap_.begin(), heap_.end());
  }
  /// Ascending by (distance, id); empties the heap.
  std::vector<std::pair<int32_t, int32_t>> TakeSorted() {
    std::sort_heap(heap_.begin(), heap_.end());
    return std::move(heap_);
  }

 private:
  size_t k_;
  std::vector<std::pair<int32_t, int32_t>> heap_;
};

}  // namespace knn_detail

/// Exact top-`k` squared-L2 neighbours of each of `n_queries` query rows (`queries`, row-major,
/// `dim` bytes each) among the training rows listed in `candidates` (row ids into `train`,
/// row-major, `dim` bytes each; any order), ties broken by the smaller id. Uses up to `threads`
/// threads (at least 1). Preconditions (the caller checks them): 1 <= dim <= 33025,
/// 1 <= k <= candidates.size(). Cost: n_queries * candidates.size() * dim multiply-adds.
inline KnnGroundTruth ExactKnnL2U8(const uint8_t* train, const std::vector<int32_t>& candidates,
                                   const uint8_t* queries, int64_t n_queries, int64_t dim,
                                   int64_t k, int threads) {
  using namespace knn_detail;  // NOLINT
  const int64_t padded = (dim + 15) / 16 * 16;
  // Candidates sorted ascending so that ids are monotone within a block (not needed for
  // correctness: the heap orders by (distance, id)).
  std::vector<int32_t> cand = candidates;
  std::sort(cand.begin(), cand.end());
  const int64_t nc = static_cast<int64_t>(cand.size());
  // Pad the candidate rows to an even count with a copy of the last row (its results are
  // dropped below), so the 2-row tile needs no tail loop.
  const int64_t nc_even = nc + (nc & 1);
  std::vector<int32_t> cand_even = cand;
  if (nc_even != nc) cand_even.push_back(cand.back());
  std::vector<int16_t> t16, q16;
  std::vector<int32_t> tn, qn;
  Widen(train, dim, padded, cand_even.data(), nc_even, &t16, &tn);
  // Queries padded to a multiple of 4 rows with zero rows (results dropped).
  const int64_t nq4 = (n_queries + 3) / 4 * 4;
  Widen(queries, dim, padded, nullptr, n_queries, &q16, &qn);
  q16.resize(static_cast<size_t>(nq4 * padded), 0);
  qn.resize(static_cast<size_t>(nq4), 0);

  KnnGroundTruth out;
  out.queries = n_queries;
  out.k = k;
  out.ids.assign(static_cast<size_t>(n_queries * k), -1);
  out.dist.assign(static_cast<size_t>(n_queries * k), -1);

  const int64_t chunks = (nq4 + kQueryChunk - 1) / kQueryChunk;
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    std::vector<TopK> tops;
    for (int64_t c; (c = next.fetch_add(1)) < chunks;) {
      const int64_t q_begin = c * kQueryChunk;
      const int64_t q_end = std::min(nq4, q_begin + kQueryChunk);
      tops.assign(static_cast<size_t>(q_end - q_begin), TopK(k));
      for (int64_t t_begin = 0; t_begin < nc_even; t_begin += kTrainBlock) {
        const int64_t t_end = std::min(nc_even, t_begin + kTrainBlock);
        for (int64_t q = q_begin; q < q_end; q += 4) {
          const int16_t* qp = q16.data() + q * padded;
          for (int64_t t = t_begin; t < t_end; t += 2) {
            const int16_t* tp = t16.data() + t * padded;
            int32_t dots[8];
            Dot4x2(qp, qp + padded, qp + 2 * padded, qp + 3 * padded, tp, tp + padded, padded,
                   dots);
            for (int a = 0; a < 4; ++a) {
              if (q + a >= n_queries) break;
              TopK& top = tops[static_cast<size_t>(q + a - q_begin)];
              const int32_t base = qn[static_cast<size_t>(q + a)];
              for (int b = 0; b < 2; ++b) {
                if (t + b >= nc) break;
                top.Offer(base + tn[static_cast<size_t>(t + b)] - 2 * dots[a * 2 + b],
                          cand_even[static_cast<size_t>(t + b)]);
              }
            }
          }
        }
      }
      for (int64_t q = q_begin; q < std::min(q_end, n_queries); ++q) {
        const auto sorted = tops[static_cast<size_t>(q - q_begin)].TakeSorted();
        for (size_t j = 0; j < sorted.size(); ++j) {
          out.dist[static_cast<size_t>(q * k) + j] = sorted[j].first;
          out.ids[static_cast<size_t>(q * k) + j] = sorted[j].second;
        }
      }
    }
  };
  const int n_threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, chunks)));
  std::vector<std::thread> pool;
  for (int i = 1; i < n_threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace strata::bench
