#include "query/filtered_source_search.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

#include "index/vector/sq8_cache.h"
#include "query/filter_bits_cache.h"
#include "query/index_candidates.h"

namespace strata::query {

const char* FilteredPlanName(FilteredPlan p) {
  switch (p) {
    case FilteredPlan::kExact:
      return "exact";
    case FilteredPlan::kHnsw:
      return "filtered HNSW";
    case FilteredPlan::kPostfilter:
      return "HNSW + postfilter";
  }
  return "?";
}

namespace {

constexpr int64_t kSampleRows = 512;
// A filtered walk whose tested rows pass less often than kAntiCorrelation x the source's
// selectivity, over at least kMinTestsForCorrelation tests, is redone exactly (Graph). With a
// filter spread like the rows, 100 tests at 10% selectivity fall below a quarter (2 passes
// or fewer instead of 10) with probability about 0.002.
constexpr int64_t kMinTestsForCorrelation = 100;
constexpr double kAntiCorrelation = 0.25;
constexpr double kGraphMargin = 1.5;
// How many candidates ahead the exact plan prefetches a vector. Not tuned: the paired runs in
// docs/BENCHMARKS.md ("Filtered vector search", 128-d rows) used 4.
constexpr size_t kPrefetchAhead = 4;
// 8-bit codes for the exact plan (index/vector/sq8_cache.h): only for vectors of at least
// kMinCodedDim floats, plans expected to score at least kMinCodedRows rows, batches where the
// query scores at least kMinCodedRowsPerBatch rows (a cache lookup and the query's per-batch
// terms cost about a few rows' floats), and, to build them, batches of at least kMinCodedBatch
// rows of which queries scoring it from the floats have together scored at least
// 1 / kCodeBuildShare (building reads the whole batch once; Sq8Cache::GetOnDemand counts).
// Prefetching kCodeAhead rows ahead measured best among 0, 1, 2, 4, 8 (0 was 0.67x of
// 1-4, which were within noise) on Fashion-MNIST `label = 3`.
constexpr int64_t kMinCodedDim = 16;
constexpr int64_t kMinCodedRows = 256;
constexpr int64_t kMinCodedRowsPerBatch = 32;
constexpr size_t kCodeAhead = 2;
constexpr int64_t kCodeAheadBytes = 2 * 784;  // short rows: as many bytes ahead as 784-d rows
constexpr int64_t kMinCodedBatch = 64;
constexpr int64_t kCodeBuildShare = 32;

std::string Num(double v) {
  char buf[32];
  if (v >= 100 || v == std::floor(v)) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  }
  return buf;
}

class Runner {
 public:
  explicit Runner(const FilteredSourceQuery& q)
      : q_(q), src_(q.shard->sources.at(q.source)), n_(src_.num_rows) {
    // Batch layout for position -> vector without per-row Array copies.
    for (size_t b = 0; b < src_.batches.size() && src_.batch_starts[b] < n_; ++b) {
      starts_.push_back(src_.batch_starts[b]);
      lists_.push_back(src_.batches[b]->column(q_.vector_column));
      const arrow::Array& list = lists_.back();
      vectors_.push_back(list.child(0).raw_values<float>() + list.offset() * q_.dim);
      element_nulls_.push_back(list.child(0).null_count() != 0);
    }
    cosine_ = q_.distance == index::DistanceType::kCosine;
    // Batches of one size (every MemTable batch of a 1,000-row insert, say): Loc divides.
    if (!starts_.empty() && starts_.size() < static_cast<size_t>(n_)) {
      const int64_t rows = lists_[0].length();
      bool uniform = rows > 0;
      for (size_t b = 0; b < starts_.size() && uniform; ++b) {
        uniform = starts_[b] == static_cast<int64_t>(b) * rows;
      }
      if (uniform) uniform_rows_ = rows;
    }
  }

  Result<FilteredSourceResult> Run() {
    FilteredSourceResult out;
    if (q_.predicate != nullptr) {
      bound_ = q_.predicate->Bind(src_);
      bits_ = FilterBitsCache::Global().Get(q_.predicate->Key(), *bound_, src_, n_);
    } else if (q_.evaluated_key != nullptr && !q_.evaluated_key->empty()) {
      // A filter the predicate cannot compile (OR, LIKE, functions, arithmetic): its bits
      // come from the evaluator, once, for a filter queries repeat.
      // A row the filter cannot evaluate (an overflow, a failed CAST) that no query would
      // reach (a deleted row, one an index rules out) fails the bits, not the query: the
      // search goes on without them, as an uncached one does.
      Result<std::shared_ptr<const FilterBits>> bits = EvaluatedBits();
      if (bits.ok()) bits_ = std::move(*bits);
    }
    // Materialise index candidates only when few enough that exact over them could win: m
    // rows cost m; the graph about kGraphVisitCost x kVisitsPerBreadth x max(ef, want / s)
    // with s = m / rows, so below the selectivity where ef stops mattering they cross at
    // m* = sqrt(visit cost x want x rows), and the planner's graph margin moves that by
    // sqrt(kGraphMargin) (1.22). At 1,000,000 rows and 1% that is 20,900: the BTree's 9,750
    // rows are materialised and scored, where a limit of 4 x the graph floor (3,584) left the
    // planner the filtered graph (3,102 distances, 0.21x of unfiltered).
    const double graph_floor = kVisitsPerBreadth * static_cast<double>(std::max(q_.ef, q_.want));
    const double crossing =
        1.25 * std::sqrt(kGraphVisitCost * kVisitsPerBreadth * static_cast<double>(q_.want) *
                         static_cast<double>(std::max<int64_t>(1, src_.live_rows)));
    // In double, clamped to the source (ef and offset may be near INT64_MAX).
    const int64_t max_candidates =
        q_.hnsw == nullptr ? std::numeric_limits<int64_t>::max()
                           : static_cast<int64_t>(std::min(std::max(4 * graph_floor, crossing),
                                                           static_cast<double>(n_)));
    std::vector<const filter::Expr*> conjuncts;
    int64_t btree_count = -1;
    if (bits_ == nullptr) {
      FlattenAnd(q_.filter->expr()->expr(), &conjuncts);
      candidates_ = IndexCandidates(*q_.shard->schema, src_, conjuncts, &index_how_, max_candidates,
                                    &btree_count);
    }
    // Selectivity among the live rows.
    const double live = static_cast<double>(std::max<int64_t>(1, src_.live_rows));
    std::string measured;
    if (bits_ && src_.live_rows == src_.num_rows) {
      const int64_t passing = bits_->CountBelow(n_);
      s_ = static_cast<double>(passing) / static_cast<double>(std::max<int64_t>(1, n_));
      measured = "cached filter bits: " + std::to_string(passing) + " rows";
    } else if (bits_) {
      // The bits count dead rows too (a filter on a column that updates moved away from
      // would look as wide as before): sample the live rows instead, testing bits.
      const std::vector<int64_t> rows = SamplePositions(kSampleRows);
      int64_t pass = 0;
      for (const int64_t p : rows) pass += bits_->Test(p);
      s_ = rows.empty() ? 1.0 : static_cast<double>(pass) / static_cast<double>(rows.size());
      measured = "cached filter bits, sample of " + std::to_string(rows.size()) + " live rows";
    } else if (candidates_) {
      // One conjunct answered by an index (key, `_rowid`, BTree) is answered exactly.
      exact_candidates_ = conjuncts.size() == 1;
      s_ = std::min(1.0, static_cast<double>(candidates_->size()) / live);
      measured = index_how_ + ": " + std::to_string(candidates_->size()) + " rows";
    } else if (btree_count >= 0) {
      // The BTree stopped counting at its limit: a lower bound; the sample measures the rest.
      const double at_least = std::min(1.0, static_cast<double>(btree_count) / live);
      double sampled = 0;
      if (bound_) {
        sampled = Sample(kSampleRows);
      } else {
        STRATA_ASSIGN_OR_RETURN(sampled, SampleByEvaluation());
      }
      s_ = conjuncts.size() > 1 ? sampled : std::max(at_least, sampled);
      measured = index_how_ + ", sample of " + std::to_string(std::min(kSampleRows, n_)) + " rows";
    } else if (bound_) {
      s_ = Sample(kSampleRows);
      measured = "sample of " + std::to_string(std::min(kSampleRows, n_)) + " rows";
    } else {
      STRATA_ASSIGN_OR_RETURN(s_, SampleByEvaluation());
      measured = "evaluated sample of " + std::to_string(std::min(kSampleRows, n_)) + " rows";
    }
    const double m = s_ * live;
    // Costs, in distance computations.
    const double nd = static_cast<double>(n_);
    cost_exact_ = bits_         ? m * (1 + kPredicateCost)
                  : candidates_ ? static_cast<double>(candidates_->size()) * (1 + kPredicateCost)
                                : m + nd * (bound_ ? kPredicateCost : kEvaluateCost);
    const double inf = std::numeric_limits<double>::infinity();
    const double region =
        std::max(static_cast<double>(q_.ef), static_cast<double>(q_.want) / std::max(s_, 1e-9));
    double cost_hnsw = inf, cost_post = inf;
    if (q_.hnsw != nullptr) {
      const double visits = kGraphVisitCost * kVisitsPerBreadth * std::min(region, nd);
      // A compiled filter or cached bits test a row as it is reached; otherwise the filter
      // is evaluated over every row first, or the graph's results filtered afterwards.
      const bool cheap_test = bound_.has_value() || bits_ != nullptr;
      cost_hnsw = visits + (cheap_test ? 0 : nd * kEvaluateCost);
      if (!cheap_test) cost_post = visits + region * kEvaluateCost;
    }
    FilteredPlan plan = FilteredPlan::kExact;
    double best = cost_exact_;
    // The exact cost is certain; the graph's assumes the passing rows are spread like the
    // rows near the query (a filter anti-correlated with the query breaks that), so a graph
    // plan must be estimated at least kGraphMargin times cheaper to be chosen.
    if (cost_hnsw * kGraphMargin < best) {
      plan = FilteredPlan::kHnsw;
      best = cost_hnsw;
    }
    if (cost_post * kGraphMargin < cost_exact_ && cost_post < best) {
      plan = FilteredPlan::kPostfilter;
      best = cost_post;
    }
    if (q_.force && (*q_.force == FilteredPlan::kExact || q_.hnsw != nullptr)) plan = *q_.force;
    out.plan = std::string(FilteredPlanName(plan)) + " (selectivity " + Num(s_) + " from " +
               measured + "; est. cost exact " + Num(cost_exact_) +
               (q_.hnsw != nullptr ? ", filtered HNSW " + Num(cost_hnsw) : std::string()) +
               (cost_post < inf ? ", postfilter " + Num(cost_post) : std::string()) + ")";
    Result<std::vector<index::Neighbor>> found = plan == FilteredPlan::kExact ? Exact(&out.plan)
                                                 : plan == FilteredPlan::kHnsw
                                                     ? Graph(&out.plan)
                                                     : Postfilter(&out.plan);
    if (!found.ok()) return found.status();
    out.found = std::move(*found);
    return out;
  }

 private:
  // (batch, row in batch) of a position in [0, n_).
  std::pair<size_t, int64_t> Loc(int64_t position) const {
    if (uniform_rows_ > 0) {
      const size_t b = std::min(static_cast<size_t>(position / uniform_rows_), starts_.size() - 1);
      return {b, position - starts_[b]};
    }
    const size_t b =
        static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), position) -
                            starts_.begin()) -
        1;
    return {b, position - starts_[b]};
  }
  // The row's vector, or nullptr when exact search skips it (index::ExactSearcher::Scan): a
  // null vector, a null element, or a zero vector under cosine (no direction).
  const float* Vec(size_t b, int64_t row) const {
    const arrow::Array& list = lists_[b];
    if (list.null_count() != 0 && list.IsNull(row)) return nullptr;
    if (element_nulls_[b]) {
      const arrow::Array values = list.child(0);
      const int64_t start = (list.offset() + row) * q_.dim;
      for (int64_t j = 0; j < q_.dim; ++j) {
        if (values.IsNull(start + j)) return nullptr;
      }
    }
    const float* v = vectors_[b] + row * q_.dim;
    if (cosine_) {
      float norm = 0;
      for (int64_t j = 0; j < q_.dim; ++j) norm += v[j] * v[j];
      if (!(norm > 0.0f)) return nullptr;
    }
    return v;
  }
  bool InBounds(size_t b, int64_t row) const {
    if (!q_.in_bounds) return true;
    const float* v = Vec(b, row);
    return v != nullptr && q_.in_bounds(q_.searcher->Distance(v));
  }
  bool InBounds(int64_t position) const {
    if (!q_.in_bounds) return true;
    const auto [b, row] = Loc(position);
    return InBounds(b, row);
  }
  // Whether a live position passes the compiled filter (and the bounds).
  bool Passes(int64_t position) const {
    if (position < 0 || position >= n_ || !src_.IsLive(position)) return false;
    const auto [b, row] = Loc(position);
    return bound_->TestInBatch(b, row) && InBounds(b, row);
  }
  // About `samples` live positions, ascending: one per stratum of n / samples rows, at a
  // pseudo-random place in it (a fixed place aliases with periodic data: every 3rd row
  // flagged and a stride of 39).
  std::vector<int64_t> SamplePositions(int64_t samples) const {
    std::vector<int64_t> out;
    const int64_t step = std::max<int64_t>(1, n_ / samples);
    uint64_t x = 0x9e3779b97f4a7c15ull;  // xorshift64, fixed seed: plans are reproducible
    for (int64_t first = 0; first < n_; first += step) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const int64_t p =
          std::min(n_ - 1, first + static_cast<int64_t>(x % static_cast<uint64_t>(step)));
      if (src_.IsLive(p)) out.push_back(p);
    }
    return out;
  }
  // Fraction of sampled live rows passing the compiled filter (1 without live rows).
  double Sample(int64_t samples) const {
    const std::vector<int64_t> rows = SamplePositions(samples);
    int64_t pass = 0;
    size_t b = 0;
    for (int64_t p : rows) {
      while (b + 1 < starts_.size() && starts_[b + 1] <= p) ++b;
      if (bound_->TestInBatch(b, p - starts_[b])) ++pass;
    }
    return rows.empty() ? 1.0 : static_cast<double>(pass) / static_cast<double>(rows.size());
  }

  // The cached bits of the (not compiled) filter over [0, n_), or nullptr (FilterBitsCache).
  Result<std::shared_ptr<const FilterBits>> EvaluatedBits() const {
    const filter::BoundExpr& expr = *q_.filter->expr();
    return FilterBitsCache::Global().Get(
        *q_.evaluated_key, src_, n_,
        [&](int64_t from, int64_t to, std::vector<uint64_t>* words) -> Status {
          std::vector<uint8_t> match;
          for (size_t b = 0; b < src_.batches.size(); ++b) {
            const arrow::RecordBatch& batch = *src_.batches[b];
            const int64_t start = src_.batch_starts[b];
            if (start >= to) break;
            if (start + batch.num_rows() <= from) continue;
            STRATA_RETURN_IF_ERROR(
                filter::EvaluateMask(expr, *UserView(q_.shard->schema, batch), {}, &match));
            const int64_t hi = std::min(to, start + batch.num_rows());
            for (int64_t p = std::max(from, start); p < hi; ++p) {
              if (match[static_cast<size_t>(p - start)] != 0) {
                (*words)[static_cast<size_t>(p >> 6)] |= uint64_t{1} << (p & 63);
              }
            }
          }
          return Status::OK();
        });
  }

  // Fraction of sampled live rows passing filter::Evaluate.
  Result<double> SampleByEvaluation() const {
    std::vector<SourceHit> hits;
    for (int64_t p : SamplePositions(kSampleRows)) hits.push_back({q_.source, p});
    if (hits.empty()) return 1.0;
    STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> pass, FilterHits(*q_.shard, *q_.filter, hits));
    int64_t n = 0;
    for (uint8_t b : pass) n += b != 0;
    return static_cast<double>(n) / static_cast<double>(hits.size());
  }

  void Push(index::TopK* top, size_t b, int64_t row) const {
    const float* v = Vec(b, row);
    if (v == nullptr) return;
    const int64_t position = starts_[b] + row;
    const float d = q_.searcher->Distance(v);
    if (q_.in_bounds && !q_.in_bounds(d)) return;
    top->Push(position, d);
  }

  // Scores the passing rows of the exact plan, handed over batch by batch in ascending order.
  // A batch with 8-bit codes (index/vector/sq8_codes.h: a quarter of the bytes) gets distance
  // bounds; a row is rescored from its floats at Finish only when its lower bound is at most
  // the want-th smallest upper bound seen, so the result equals scoring every row from the
  // floats. Other batches are scored from the floats directly.
  class ExactScorer {
   public:
    ExactScorer(Runner* r, int64_t expected_rows) : r_(*r), top_(r->q_.want) {
      if (!UseCodes(*r, expected_rows)) return;
      // A query whose squared norm is subnormal-small defeats the bounds' rounding slack.
      const float n2 = index::SquaredNorm(r_.q_.query, r_.q_.dim);
      if (!(n2 >= 1e-30f)) return;
      use_codes_ = true;
      q_norm_ = std::sqrt(n2);
      sq8_.emplace(r_.q_.distance, r_.q_.query, q_norm_, r_.q_.dim);
    }
    // Rows (ascending) of batch b, all passing and live.
    void Batch(size_t b, const std::vector<int64_t>& rows) {
      if (rows.empty()) return;
      scored_ += static_cast<int64_t>(rows.size());
      std::shared_ptr<const index::Sq8Codes> codes;
      if (use_codes_ && static_cast<int64_t>(rows.size()) >= kMinCodedRowsPerBatch) {
        const int64_t batch_rows = r_.lists_[b].length();
        // Build codes only for batches queries read enough of to repay them soon: at once
        // when this query reads 1 / kCodeBuildShare of the batch, else once the queries that
        // scored it from the floats have together (a 1% filter: after about 4 queries).
        if (batch_rows >= kMinCodedBatch) {
          codes = index::Sq8Cache::Global().GetOnDemand(
              r_.lists_[b], r_.q_.dim, static_cast<int64_t>(rows.size()), kCodeBuildShare);
        }
      }
      if (codes == nullptr) {
        const char* base = reinterpret_cast<const char*>(r_.vectors_[b]);
        for (size_t i = 0; i < rows.size(); ++i) {
          if (i + kPrefetchAhead < rows.size()) {
            Prefetch(base + rows[i + kPrefetchAhead] * r_.q_.dim * 4, r_.q_.dim * 4);
          }
          r_.Push(&top_, b, rows[i]);
        }
        return;
      }
      ++coded_batches_;
      sq8_->Bind(*codes);
      const char* base = reinterpret_cast<const char*>(codes->code(0));
      for (size_t i = 0; i < rows.size(); ++i) {
        if (i + code_ahead_ < rows.size()) {
          Prefetch(base + rows[i + code_ahead_] * r_.q_.dim, r_.q_.dim);
        }
        const int64_t row = rows[i];
        if (!codes->IsCoded(row)) {
          rescore_.push_back({b, row});
          continue;
        }
        float lo, hi;
        sq8_->Bounds(row, &lo, &hi);
        if (hi < Threshold()) {
          if (static_cast<int64_t>(his_.size()) == r_.q_.want) {
            std::pop_heap(his_.begin(), his_.end());
            his_.pop_back();
          }
          his_.push_back(hi);
          std::push_heap(his_.begin(), his_.end());
        }
        // A NaN bound is rescored too (only a bound above the threshold rules a row out).
        if (lo > Threshold()) continue;
        pending_.push_back({b, row, lo});
      }
    }
    std::vector<index::Neighbor> Finish(std::string* plan) {
      const float t = Threshold();
      int64_t rescored = static_cast<int64_t>(rescore_.size());
      for (const auto& [b, row] : rescore_) r_.Push(&top_, b, row);
      for (const Pending& p : pending_) {
        if (p.lo > t) continue;
        ++rescored;
        r_.Push(&top_, p.b, p.row);
      }
      if (coded_batches_ > 0) {
        *plan += " (8-bit codes in " + std::to_string(coded_batches_) + " batches, " +
                 std::to_string(rescored) + " rescored)";
      }
      return top_.Sorted();
    }
    int64_t scored() const { return scored_; }

   private:
    // Codes pay where many rows are scored and each row is long: not for a few rows (a key
    // lookup), short vectors, or distance bounds (the threshold would count rows the bounds
    // drop).
    static bool UseCodes(const Runner& r, int64_t expected_rows) {
      return r.q_.dim >= kMinCodedDim && !r.q_.in_bounds && expected_rows >= kMinCodedRows &&
             r.q_.want > 0;
    }
    static void Prefetch(const char* p, int64_t bytes) {
      for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
    }
    float Threshold() const {
      return static_cast<int64_t>(his_.size()) < r_.q_.want ? std::numeric_limits<float>::infinity()
                                                            : his_.front();
    }
    struct Pending {
      size_t b;
      int64_t row;
      float lo;
    };
    Runner& r_;
    index::TopK top_;
    bool use_codes_ = false;
    const size_t code_ahead_ = std::max<size_t>(
        kCodeAhead, static_cast<size_t>(kCodeAheadBytes / std::max<int64_t>(1, r_.q_.dim)));
    float q_norm_ = 0;
    std::optional<index::Sq8Query> sq8_;
    std::vector<float> his_;  // max-heap of the want smallest upper bounds
    std::vector<Pending> pending_;
    std::vector<std::pair<size_t, int64_t>> rescore_;  // rows without a code
    int64_t scored_ = 0;
    int64_t coded_batches_ = 0;
  };

  Result<std::vector<index::Neighbor>> Exact(std::string* plan) {
    std::vector<int64_t> rows;
    if (bits_ && !bits_->positions) {
      ExactScorer scorer(this, static_cast<int64_t>(s_ * static_cast<double>(n_)));
      const bool all_live = src_.live_rows == src_.num_rows;
      for (size_t b = 0; b < starts_.size(); ++b) {
        const int64_t start = starts_[b];
        const int64_t end = std::min(start + lists_[b].length(), n_);
        rows.clear();
        // The set bits of [start, end), a word at a time.
        for (int64_t w = start >> 6; w << 6 < end; ++w) {
          uint64_t word = bits_->words[static_cast<size_t>(w)];
          if (word == 0) continue;
          if ((w << 6) < start) word &= ~uint64_t{0} << (start & 63);
          if ((w << 6) + 64 > end) word &= (uint64_t{1} << (end & 63)) - 1;
          while (word != 0) {
            const int64_t p = (w << 6) + std::countr_zero(word);
            word &= word - 1;
            if (all_live || src_.IsLive(p)) rows.push_back(p - start);
          }
        }
        scorer.Batch(b, rows);
      }
      *plan += "; scored " + std::to_string(scorer.scored()) + " rows of the cached filter bits";
      return scorer.Finish(plan);
    }
    if ((bits_ && bits_->positions) || (candidates_ && (bound_ || exact_candidates_))) {
      // Candidates ascend: walk the batches alongside, a batch's rows at a time.
      const bool from_bits = bits_ && bits_->positions;
      const std::vector<int64_t>& c = from_bits ? *bits_->positions : *candidates_;
      ExactScorer scorer(this, static_cast<int64_t>(c.size()));
      size_t b = 0;
      for (int64_t p : c) {
        if (p < 0 || p >= n_ || !src_.IsLive(p)) continue;
        if (starts_[b] + lists_[b].length() <= p) {
          scorer.Batch(b, rows);
          rows.clear();
          while (b + 1 < starts_.size() && starts_[b + 1] <= p) ++b;
        }
        const int64_t row = p - starts_[b];
        if (!from_bits && !exact_candidates_ && !bound_->TestInBatch(b, row)) continue;
        rows.push_back(row);
      }
      if (!starts_.empty()) scorer.Batch(b, rows);
      *plan += "; scored " + std::to_string(scorer.scored()) + " rows of " +
               (from_bits ? std::string("the cached filter bits") : index_how_);
      return scorer.Finish(plan);
    }
    if (bound_) {
      ExactScorer scorer(this, static_cast<int64_t>(s_ * static_cast<double>(n_)));
      for (size_t b = 0; b < starts_.size(); ++b) {
        const int64_t start = starts_[b];
        const int64_t batch_rows = std::min(src_.batches[b]->num_rows(), n_ - start);
        rows.clear();
        bound_->SelectInBatch(b, 0, batch_rows, &rows);
        if (src_.live_rows != src_.num_rows) {
          std::erase_if(rows, [&](int64_t r) { return !src_.IsLive(start + r); });
        }
        scorer.Batch(b, rows);
      }
      *plan += "; scored " + std::to_string(scorer.scored()) + " rows after a pass over " +
               std::to_string(n_);
      return scorer.Finish(plan);
    }
    STRATA_RETURN_IF_ERROR(EnsureAccepted());
    const std::vector<int64_t> positions = accepted_->Positions();
    ExactScorer scorer(this, static_cast<int64_t>(positions.size()));
    size_t b = 0;
    for (int64_t p : positions) {
      if (starts_[b] + lists_[b].length() <= p) {
        scorer.Batch(b, rows);
        rows.clear();
        while (b + 1 < starts_.size() && starts_[b + 1] <= p) ++b;
      }
      rows.push_back(p - starts_[b]);
    }
    if (!starts_.empty()) scorer.Batch(b, rows);
    *plan += "; scored " + std::to_string(scorer.scored()) + " rows (" +
             (accepted_->plan().empty() ? std::string("filter evaluated") : accepted_->plan()) +
             ")";
    return scorer.Finish(plan);
  }

  Status EnsureAccepted() {
    if (!accepted_) {
      STRATA_ASSIGN_OR_RETURN(AcceptedRows a, AcceptedRows::Make(*q_.shard, q_.source, *q_.filter));
      accepted_ = std::move(a);
    }
    return Status::OK();
  }

  Result<std::vector<index::Neighbor>> Graph(std::string* plan) {
    // Counts the rows the walk tests and those that pass, to tell an anti-correlated filter.
    int64_t tested = 0, passed = 0;
    std::function<bool(int64_t)> accept;
    if (bits_) {
      accept = [this, &tested, &passed](int64_t p) {
        ++tested;
        const bool ok = p < n_ && bits_->Test(p) && src_.IsLive(p) && InBounds(p);
        passed += ok;
        return ok;
      };
    } else if (bound_) {
      accept = [this, &tested, &passed](int64_t p) {
        ++tested;
        const bool ok = Passes(p);
        passed += ok;
        return ok;
      };
    } else {
      STRATA_RETURN_IF_ERROR(EnsureAccepted());
      accept = [this, &tested, &passed](int64_t p) {
        ++tested;
        const bool ok = accepted_->Test(p) && InBounds(p);
        passed += ok;
        return ok;
      };
    }
    const int64_t breadth = std::max<int64_t>(
        q_.want, static_cast<int64_t>(std::ceil(static_cast<double>(q_.ef) * s_)));
    const int64_t budget = static_cast<int64_t>(std::max(1000.0, 2 * cost_exact_));
    index::HnswIndex::FilteredSearchStats stats;
    STRATA_ASSIGN_OR_RETURN(
        std::vector<index::Neighbor> found,
        q_.hnsw->FilteredSearch(q_.query, q_.want, breadth, accept, budget, &stats));
    *plan += "; breadth " + std::to_string(breadth) + ", " + std::to_string(stats.distances) +
             " distances";
    if (stats.budget_exhausted || static_cast<int64_t>(found.size()) < q_.want) {
      *plan += stats.budget_exhausted ? ", budget " + std::to_string(budget) + " spent: exact"
                                      : ", " + std::to_string(found.size()) + " found: exact";
      return Exact(plan);
    }
    // The breadth assumes the passing rows are spread like the rows near the query. When the
    // rows the walk reached pass far less often than the source's rows do, the filter is
    // anti-correlated with the query's neighbourhood: the walk found passing rows, but
    // through few paths, and may have missed closer ones (a break test: clusters that fail
    // the filter around the query, recall@10 0.75-0.82). The exact plan answers that query.
    if (tested >= kMinTestsForCorrelation &&
        static_cast<double>(passed) < kAntiCorrelation * s_ * static_cast<double>(tested)) {
      *plan += ", " + std::to_string(passed) + " of " + std::to_string(tested) +
               " rows reached pass (anti-correlated): exact";
      return Exact(plan);
    }
    return found;
  }

  Result<std::vector<index::Neighbor>> Postfilter(std::string* plan) {
    const double nd = static_cast<double>(n_);
    int64_t breadth = static_cast<int64_t>(
        std::min(nd, std::max(static_cast<double>(q_.ef),
                              std::ceil(1.5 * static_cast<double>(q_.want) / std::max(s_, 1e-9)))));
    breadth = std::max<int64_t>(breadth, 1);
    for (int round = 0;; ++round) {
      STRATA_ASSIGN_OR_RETURN(std::vector<index::Neighbor> found,
                              q_.hnsw->Search(q_.query, breadth, breadth, [this](int64_t p) {
                                return src_.IsLive(p) && InBounds(p);
                              }));
      std::vector<SourceHit> hits;
      for (const index::Neighbor& nb : found) hits.push_back({q_.source, nb.label});
      STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> pass, FilterHits(*q_.shard, *q_.filter, hits));
      std::vector<index::Neighbor> kept;
      for (size_t i = 0; i < found.size() && static_cast<int64_t>(kept.size()) < q_.want; ++i) {
        if (pass[i] != 0) kept.push_back(found[i]);
      }
      if (static_cast<int64_t>(kept.size()) >= q_.want || breadth >= n_) {
        *plan += "; breadth " + std::to_string(breadth) + ", " + std::to_string(kept.size()) +
                 " of " + std::to_string(found.size()) + " candidates pass";
        return kept;
      }
      if (kVisitsPerBreadth * static_cast<double>(2 * breadth) > cost_exact_) {
        *plan += "; breadth " + std::to_string(breadth) + " found " + std::to_string(kept.size()) +
                 ": exact";
        return Exact(plan);
      }
      breadth = std::min<int64_t>(n_, breadth * 2);
    }
  }

  const FilteredSourceQuery& q_;
  const shard::SourceView& src_;
  const int64_t n_;
  std::vector<int64_t> starts_;        // first position of each batch below n_
  std::vector<arrow::Array> lists_;    // the vector column per batch
  std::vector<const float*> vectors_;  // its row 0's floats per batch
  std::vector<bool> element_nulls_;    // the batch's vectors hold null elements
  bool cosine_ = false;
  int64_t uniform_rows_ = 0;       // every batch but the last has this many rows (0: they differ)
  bool exact_candidates_ = false;  // candidates_ are exactly the passing rows
  std::optional<RowPredicate::Bound> bound_;
  std::shared_ptr<const FilterBits> bits_;  // the filter's passing rows, when cached
  std::optional<std::vector<int64_t>> candidates_;
  std::string index_how_;
  std::optional<AcceptedRows> accepted_;
  double s_ = 1.0;
  double cost_exact_ = 0;
};

}  // namespace

Result<FilteredSourceResult> SearchFilteredSource(const FilteredSourceQuery& q) {
  return Runner(q).Run();
}

}  // namespace strata::query
