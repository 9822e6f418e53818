// IvfIndex: training, adding, searching and memory (serialisation and clones: ivf_index_io.cc;
// type names and parameter validation: ivf_params.cc; shared state: ivf_index_impl.h).
#include "index/vector/ivf_index.h"

#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexScalarQuantizer.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/HNSW.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/invlists/InvertedLists.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <random>

#include "index/vector/exact_search.h"
#include "index/vector/fair_rw_lock.h"
#include "index/vector/ivf_index_impl.h"

namespace strata::index {

namespace {

using faiss_idx_t = faiss::Index::idx_t;
using ivf_internal::kMaxPartitions;
using ivf_internal::MetricOf;

// AddColumn encodes this many rows at a time (bounds the temporary buffers).
constexpr int64_t kAddChunkRows = 65536;

// Runs FAISS (and OpenBLAS's OpenMP build, which asks omp_get_max_threads) on one OpenMP
// thread for the calling thread's scope: omp_set_num_threads sets the calling thread's own
// nthreads ICV in libgomp, so other threads are unaffected.
class OmpSingleThread {
 public:
  OmpSingleThread() : prev_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OmpSingleThread() { omp_set_num_threads(prev_); }
  OmpSingleThread(const OmpSingleThread&) = delete;
  OmpSingleThread& operator=(const OmpSingleThread&) = delete;

 private:
  int prev_;
};

// Abandoning a training: FAISS asks the process-wide InterruptCallback::instance between
// k-means iterations (Clustering) and blocks of distance computations (check() throws
// FaissException "computation interrupted"). Ours answers for the calling thread only, through
// a thread-local predicate set by Train, so one table's abandoned training does not stop
// another's. It is installed during static initialisation, before any thread runs: FAISS reads
// `instance` without a lock. FAISS's IVF search asks is_interrupted() once per search call (a
// mutex and a thread-local read: negligible next to the search).
thread_local const std::function<bool()>* t_abandon = nullptr;

struct AbandonCallback : faiss::InterruptCallback {
  bool want_interrupt() override { return t_abandon != nullptr && *t_abandon && (*t_abandon)(); }
};

const bool kAbandonCallbackInstalled = [] {
  faiss::InterruptCallback::instance.reset(new AbandonCallback());
  return true;
}();

// Sets t_abandon for the scope.
class AbandonScope {
 public:
  explicit AbandonScope(const std::function<bool()>* f) : prev_(t_abandon) { t_abandon = f; }
  ~AbandonScope() { t_abandon = prev_; }
  AbandonScope(const AbandonScope&) = delete;
  AbandonScope& operator=(const AbandonScope&) = delete;

 private:
  const std::function<bool()>* prev_;
};

// An IDSelector that asks the caller's filter.
struct FunctionSelector : faiss::IDSelector {
  explicit FunctionSelector(const std::function<bool(int64_t)>* f) : fn(f) {}
  bool is_member(idx_t id) const override { return (*fn)(static_cast<int64_t>(id)); }
  const std::function<bool(int64_t)>* fn;
};

// Largest divisor of dim that is <= max(1, dim / 8).
int64_t DefaultSubVectors(int64_t dim) {
  const int64_t cap = std::max<int64_t>(1, dim / 8);
  for (int64_t m = cap; m > 1; --m) {
    if (dim % m == 0) return m;
  }
  return 1;
}

bool AllFinite(const float* v, int64_t dim) {
  for (int64_t i = 0; i < dim; ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

// Writes v / |v| into out (norm > 0 checked by the caller).
void NormalizeInto(const float* v, int64_t dim, float* out) {
  const float inv = 1.0f / std::sqrt(SquaredNorm(v, dim));
  for (int64_t i = 0; i < dim; ++i) out[i] = v[i] * inv;
}

// An untrained FAISS IVF index of p's type (p resolved). Throws what FAISS throws.
std::unique_ptr<faiss::IndexIVF> MakeFaissIndex(int64_t dim, const IvfParams& p) {
  const faiss::MetricType metric = MetricOf(p.distance);
  const auto d = static_cast<faiss::Index::idx_t>(dim);
  const auto nlist = static_cast<size_t>(p.num_partitions);
  std::unique_ptr<faiss::Index> quantizer;
  if (IvfTypeUsesHnsw(p.type)) {
    auto h = std::make_unique<faiss::IndexHNSWFlat>(static_cast<int>(dim), p.hnsw_m, metric);
    h->hnsw.efConstruction = p.ef_construction;
    quantizer = std::move(h);
  } else if (metric == faiss::METRIC_L2) {
    quantizer = std::make_unique<faiss::IndexFlatL2>(d);
  } else {
    quantizer = std::make_unique<faiss::IndexFlatIP>(d);
  }
  std::unique_ptr<faiss::IndexIVF> ivf;
  switch (p.type) {
    case IvfType::kIvfFlat:
      ivf = std::make_unique<faiss::IndexIVFFlat>(quantizer.get(), static_cast<size_t>(dim), nlist,
                                                  metric);
      break;
    case IvfType::kIvfPq:
    case IvfType::kIvfHnswPq: {
      auto pq = std::make_unique<faiss::IndexIVFPQ>(quantizer.get(), static_cast<size_t>(dim),
                                                    nlist, static_cast<size_t>(p.num_sub_vectors),
                                                    static_cast<size_t>(p.nbits), metric);
      pq->do_polysemous_training = false;
      pq->pq.cp.niter = p.max_iterations;
      pq->pq.cp.min_points_per_centroid = 1;  // no stderr warning on small samples
      pq->pq.cp.max_points_per_centroid = static_cast<int>(p.sample_rate);
      ivf = std::move(pq);
      break;
    }
    case IvfType::kIvfSq:
    case IvfType::kIvfHnswSq:
      ivf = std::make_unique<faiss::IndexIVFScalarQuantizer>(
          quantizer.get(), static_cast<size_t>(dim), nlist, faiss::ScalarQuantizer::QT_8bit, metric,
          /*encode_residual=*/true);
      break;
  }
  ivf->own_fields = true;
  quantizer.release();  // owned by ivf now
  return ivf;
}

// What the index costs in memory (see the header for what is counted).
int64_t EstimateMemory(const faiss::IndexIVF& ivf) {
  int64_t bytes = 0;
  if (const auto* al = dynamic_cast<const faiss::ArrayInvertedLists*>(ivf.invlists)) {
    for (size_t l = 0; l < al->nlist; ++l) {
      bytes += static_cast<int64_t>(al->codes[l].capacity() +
                                    al->ids[l].capacity() * sizeof(faiss_idx_t));
    }
    bytes += static_cast<int64_t>(al->nlist * 2 * sizeof(std::vector<uint8_t>));
  } else {
    bytes += static_cast<int64_t>(ivf.ntotal) *
             static_cast<int64_t>(ivf.code_size + sizeof(faiss_idx_t));
  }
  if (const auto* flat = dynamic_cast<const faiss::IndexFlatCodes*>(ivf.quantizer)) {
    bytes += static_cast<int64_t>(flat->codes.capacity());
  } else if (const auto* h = dynamic_cast<const faiss::IndexHNSW*>(ivf.quantizer)) {
    if (const auto* st = dynamic_cast<const faiss::IndexFlatCodes*>(h->storage)) {
      bytes += static_cast<int64_t>(st->codes.capacity());
    }
    bytes += static_cast<int64_t>(h->hnsw.neighbors.capacity() * sizeof(int32_t) +
                                  h->hnsw.levels.capacity() * sizeof(int) +
                                  h->hnsw.offsets.capacity() * sizeof(size_t));
  }
  if (const auto* pq = dynamic_cast<const faiss::IndexIVFPQ*>(&ivf)) {
    bytes += static_cast<int64_t>(pq->pq.centroids.size() * sizeof(float) +
                                  pq->precomputed_table.size() * sizeof(float));
  } else if (const auto* sq = dynamic_cast<const faiss::IndexIVFScalarQuantizer*>(&ivf)) {
    bytes += static_cast<int64_t>(sq->sq.trained.size() * sizeof(float));
  }
  return bytes;
}

}  // namespace

IvfIndex::IvfIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IvfIndex::~IvfIndex() = default;

int64_t IvfIndex::dim() const { return impl_->dim; }
const IvfParams& IvfIndex::params() const { return impl_->params; }
int64_t IvfIndex::size() const { return impl_->size.load(); }

int64_t IvfIndex::memory_bytes() const {
  std::shared_lock<FairRwLock> lock(impl_->mu);
  return EstimateMemory(*impl_->ivf);
}

Result<std::unique_ptr<IvfIndex>> IvfIndex::Train(int64_t dim, IvfParams params,
                                                  const float* vectors, int64_t n, uint64_t seed,
                                                  const std::function<bool()>& abandon) {
  (void)kAbandonCallbackInstalled;
  STRATA_RETURN_IF_ERROR(ValidateIvfParams(dim, params));
  if (n < 1) return Status::Invalid("IVF training needs at least 1 row, got " + std::to_string(n));
  if (vectors == nullptr) return Status::Invalid("IVF training vectors are null");
  const bool cosine = params.distance == DistanceType::kCosine;
  std::vector<int64_t> usable;
  usable.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* v = vectors + i * dim;
    if (!AllFinite(v, dim)) {
      return Status::Invalid("IVF training row " + std::to_string(i) + " has a non-finite element");
    }
    if (cosine && !(SquaredNorm(v, dim) > 0.0f)) continue;  // no direction
    usable.push_back(i);
  }
  const int64_t rows = static_cast<int64_t>(usable.size());
  if (rows == 0) {
    return Status::Invalid("IVF training: no non-zero row to train a cosine index on");
  }
  // Resolve the parameters left to us.
  if (params.num_partitions == 0) {
    params.num_partitions = std::clamp<int64_t>(
        static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(rows)))), 1,
        kMaxPartitions);
  }
  params.num_partitions = std::min(params.num_partitions, rows);
  int64_t needed = 1;
  if (IvfTypeUsesPq(params.type)) {
    if (params.num_sub_vectors == 0) params.num_sub_vectors = DefaultSubVectors(dim);
    needed = int64_t{1} << params.nbits;
    if (rows < needed) {
      return Status::Invalid(std::string(IvfTypeName(params.type)) + " with nbits " +
                             std::to_string(params.nbits) + " needs at least " +
                             std::to_string(needed) + " training rows, got " +
                             std::to_string(rows));
    }
  } else {
    params.num_sub_vectors = 0;
  }
  // The sample (IvfTrainingRows): the partitions' k-means takes kmeans_sample of it, the PQ
  // codebooks all of it. With few partitions the k-means sample alone is far too small for
  // 2^nbits centroids per sub-vector: on Fashion-MNIST 60k (7 partitions, 49 sub-vectors) it
  // was 1,792 rows, and recall@10 at refine 0 / 5 / 10 was 0.664 / 0.982 / 0.997 against
  // LanceDB's 0.696 / 0.990 / 0.999.
  const int64_t kmeans_sample =
      std::min(rows, std::max(params.sample_rate * params.num_partitions, needed));
  const int64_t sample = IvfTrainingRows(params, rows);
  std::mt19937_64 rng(seed);
  if (sample < rows) {
    for (int64_t i = 0; i < sample; ++i) {  // partial Fisher-Yates
      std::uniform_int_distribution<int64_t> pick(i, rows - 1);
      std::swap(usable[static_cast<size_t>(i)], usable[static_cast<size_t>(pick(rng))]);
    }
    usable.resize(static_cast<size_t>(sample));
    std::sort(usable.begin(), usable.end());
  }
  std::vector<float> train(static_cast<size_t>(sample * dim));
  for (int64_t i = 0; i < sample; ++i) {
    const float* v = vectors + usable[static_cast<size_t>(i)] * dim;
    float* out = train.data() + i * dim;
    if (cosine) {
      NormalizeInto(v, dim, out);
    } else {
      std::memcpy(out, v, static_cast<size_t>(dim) * sizeof(float));
    }
  }
  const int kmeans_seed = static_cast<int>(rng() & 0x7fffffff);
  auto impl = std::make_unique<Impl>();
  impl->dim = dim;
  impl->params = params;
  if (abandon && abandon()) return Status::Cancelled("IVF training abandoned before it began");
  try {
    OmpSingleThread single;  // see the header: no OpenMP teams on a shared machine
    AbandonScope scope(&abandon);
    impl->ivf = MakeFaissIndex(dim, params);
    if (auto* pq = dynamic_cast<faiss::IndexIVFPQ*>(impl->ivf.get())) {
      pq->pq.cp.seed = static_cast<int>(rng() & 0x7fffffff);
    }
    // k-means for the partitions on a flat L2 assigner (for cosine with unit-norm centroids, so
    // L2 and inner-product orders agree), then the centroids go into the coarse quantizer;
    // IndexIVF::train then sees a trained quantizer of nlist vectors and trains only the codes.
    faiss::ClusteringParameters cp;
    cp.niter = params.max_iterations;
    cp.seed = kmeans_seed;
    cp.spherical = cosine;
    cp.min_points_per_centroid = 1;  // no stderr warning on small samples
    // FAISS subsamples the k-means to kmeans_sample rows when the PQ sample is larger.
    cp.max_points_per_centroid = static_cast<int>(std::min<int64_t>(
        INT_MAX, std::max<int64_t>(params.sample_rate, kmeans_sample / params.num_partitions + 1)));
    faiss::Clustering clus(static_cast<int>(dim), static_cast<int>(params.num_partitions), cp);
    faiss::IndexFlatL2 assigner(static_cast<faiss_idx_t>(dim));
    clus.train(static_cast<faiss_idx_t>(sample), train.data(), assigner);
    impl->ivf->quantizer->add(static_cast<faiss_idx_t>(params.num_partitions),
                              clus.centroids.data());
    impl->ivf->train(static_cast<faiss_idx_t>(sample), train.data());
  } catch (const std::bad_alloc&) {
    return Status::Invalid("IVF training could not allocate memory");
  } catch (const std::exception& e) {
    if (abandon && abandon()) return Status::Cancelled("IVF training abandoned");
    return Status::Invalid(std::string("IVF training failed (FAISS): ") + e.what());
  }
  return std::unique_ptr<IvfIndex>(new IvfIndex(std::move(impl)));
}

Result<int64_t> IvfIndex::AddColumn(const arrow::Array& column, int64_t first_label) {
  Impl& m = *impl_;
  const auto& type = column.type();
  if (type->id() != arrow::TypeId::kFixedSizeList ||
      type->value_type()->id() != arrow::TypeId::kFloat32 || type->list_size() != m.dim) {
    return Status::Invalid("IVF column must be fixed_size_list<float32>[" + std::to_string(m.dim) +
                           "], got " + type->ToString());
  }
  if (first_label < 0) {
    return Status::Invalid("IVF first_label " + std::to_string(first_label) + " is negative");
  }
  const int64_t n = column.length();
  if (n > 0 && first_label > std::numeric_limits<int64_t>::max() - (n - 1)) {
    return Status::Invalid("IVF first_label " + std::to_string(first_label) + " + " +
                           std::to_string(n) + " rows overflows int64");
  }
  const arrow::Array values = column.child(0);
  const float* base = values.raw_values<float>();
  const bool element_nulls = values.null_count() > 0;
  const bool cosine = m.params.distance == DistanceType::kCosine;
  auto row = [&](int64_t i) { return base + (column.offset() + i) * m.dim; };
  // Validate every row first so that bad input indexes nothing.
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n; ++i) {
    if (column.IsNull(i)) continue;
    if (element_nulls) {
      const int64_t start = (column.offset() + i) * m.dim;
      bool has_null = false;
      for (int64_t j = 0; j < m.dim && !has_null; ++j) has_null = values.IsNull(start + j);
      if (has_null) continue;
    }
    if (!AllFinite(row(i), m.dim)) {
      return Status::Invalid("IVF vector at row " + std::to_string(i) +
                             " has a non-finite element");
    }
    if (cosine && !(SquaredNorm(row(i), m.dim) > 0.0f)) continue;  // no direction
    rows.push_back(i);
  }
  int64_t added = 0;
  std::vector<float> buf;
  std::vector<faiss_idx_t> ids, lists;
  std::vector<uint8_t> codes;
  for (size_t c = 0; c < rows.size(); c += kAddChunkRows) {
    const size_t count = std::min(rows.size() - c, static_cast<size_t>(kAddChunkRows));
    buf.resize(count * static_cast<size_t>(m.dim));
    ids.resize(count);
    lists.resize(count);
    for (size_t j = 0; j < count; ++j) {
      const int64_t i = rows[c + j];
      float* out = buf.data() + j * static_cast<size_t>(m.dim);
      if (cosine) {
        NormalizeInto(row(i), m.dim, out);
      } else {
        std::memcpy(out, row(i), static_cast<size_t>(m.dim) * sizeof(float));
      }
      ids[j] = first_label + i;
    }
    try {
      {
        // The quantizer and codebooks are immutable after Train: assignment and encoding only
        // read them, so searches go on meanwhile.
        std::shared_lock<FairRwLock> lock(m.mu);
        OmpSingleThread single;
        codes.resize(count * m.ivf->code_size);
        m.ivf->quantizer->assign(static_cast<faiss_idx_t>(count), buf.data(), lists.data());
        m.ivf->encode_vectors(static_cast<faiss_idx_t>(count), buf.data(), lists.data(),
                              codes.data());
      }
      std::unique_lock<FairRwLock> lock(m.mu);
      for (size_t j = 0; j < count; ++j) {
        if (lists[j] < 0) continue;  // FAISS found no partition (cannot happen once trained)
        m.ivf->invlists->add_entry(static_cast<size_t>(lists[j]), ids[j],
                                   codes.data() + j * m.ivf->code_size);
        ++m.ivf->ntotal;
        ++added;
        m.size.fetch_add(1);
      }
    } catch (const std::bad_alloc&) {
      return Status::Invalid("IVF add could not allocate memory (" + std::to_string(added) +
                             " rows added)");
    } catch (const std::exception& e) {
      return Status::Internal(std::string("IVF add failed (FAISS): ") + e.what());
    }
  }
  return added;
}

Result<std::vector<Neighbor>> IvfIndex::Search(
    const float* query, const SearchOptions& opts, const std::function<bool(int64_t)>& accept,
    const std::function<const float*(int64_t)>& vector_of) const {
  const Impl& m = *impl_;
  if (opts.k < 1)
    return Status::Invalid("IVF search k " + std::to_string(opts.k) + " must be >= 1");
  if (opts.nprobes < 1) {
    return Status::Invalid("IVF search nprobes " + std::to_string(opts.nprobes) + " must be >= 1");
  }
  if (opts.refine_factor < 0) {
    return Status::Invalid("IVF search refine_factor " + std::to_string(opts.refine_factor) +
                           " must be >= 0");
  }
  if (opts.ef < 0) {
    return Status::Invalid("IVF search ef " + std::to_string(opts.ef) + " must be >= 0");
  }
  if (opts.refine_factor > 0 && !vector_of) {
    return Status::Invalid("IVF search refine_factor > 0 needs vector_of");
  }
  if (query == nullptr) return Status::Invalid("IVF search query is null");
  if (!AllFinite(query, m.dim)) return Status::Invalid("IVF query has a non-finite element");
  std::vector<float> normalized;
  const float* q = query;
  if (m.params.distance == DistanceType::kCosine) {
    if (!(SquaredNorm(query, m.dim) > 0.0f)) {
      return Status::Invalid("IVF query has zero norm: cosine distance needs a non-zero vector");
    }
    normalized.resize(static_cast<size_t>(m.dim));
    NormalizeInto(query, m.dim, normalized.data());
    q = normalized.data();
  }
  int64_t fetch = opts.k;
  if (opts.refine_factor > 0) {
    fetch = opts.k > std::numeric_limits<int64_t>::max() / opts.refine_factor
                ? std::numeric_limits<int64_t>::max()
                : opts.k * opts.refine_factor;
  }
  std::vector<Neighbor> out;
  {
    std::shared_lock<FairRwLock> lock(m.mu);
    const int64_t total = m.ivf->ntotal;
    if (total == 0) return out;
    fetch = std::min(fetch, total);
    faiss::SearchParametersIVF sp;
    sp.nprobe = static_cast<size_t>(std::min(opts.nprobes, m.params.num_partitions));
    FunctionSelector selector(&accept);
    faiss::SearchParametersHNSW hp;
    if (IvfTypeUsesHnsw(m.params.type)) {
      const int64_t np = static_cast<int64_t>(sp.nprobe);
      const int64_t ef = opts.ef > 0 ? std::max(opts.ef, np) : std::max<int64_t>(64, 2 * np);
      hp.efSearch = static_cast<int>(std::min<int64_t>(ef, INT_MAX));
      sp.quantizer_params = &hp;
    }
    // The `want` best labels of the probed partitions (all of them when `filtered`, else
    // accepted ones only), distances converted; how many FAISS returned in `*returned`.
    const auto scan = [&](int64_t want, bool filtered, int64_t* returned) -> Status {
      sp.sel = filtered ? &selector : nullptr;
      std::vector<float> dist(static_cast<size_t>(want));
      std::vector<faiss_idx_t> labels(static_cast<size_t>(want));
      try {
        OmpSingleThread single;
        m.ivf->search(1, q, static_cast<faiss_idx_t>(want), dist.data(), labels.data(), &sp);
      } catch (const std::bad_alloc&) {
        return Status::Internal("IVF search could not allocate memory");
      } catch (const std::exception& e) {
        return Status::Internal(std::string("IVF search failed (FAISS): ") + e.what());
      }
      out.clear();
      out.reserve(static_cast<size_t>(want));
      *returned = 0;
      for (int64_t i = 0; i < want; ++i) {
        if (labels[static_cast<size_t>(i)] < 0) continue;  // fewer than want found
        ++*returned;
        const float d = dist[static_cast<size_t>(i)];
        float converted = d;                                                   // l2: squared
        if (m.params.distance == DistanceType::kCosine) converted = 0.5f * d;  // 1 - cos
        if (m.params.distance == DistanceType::kDot) converted = 1.0f - d;     // 1 - ip
        out.push_back({static_cast<int64_t>(labels[static_cast<size_t>(i)]), converted});
      }
      return Status::OK();
    };
    int64_t returned = 0;
    if (!accept) {
      STRATA_RETURN_IF_ERROR(scan(fetch, /*filtered=*/false, &returned));
    } else if (opts.accept_fraction >= kAcceptAfterScanMinFraction) {
      // Most labels pass: scan without the selector (whose per-code call is a random memory
      // access into the caller's liveness; 61% of a 500k-row query's time when called per
      // code), over-fetching by 1/fraction plus slack, then test only the candidates. When
      // fewer than `fetch` pass although the scan was cut at its limit, scan again with it.
      const double inflated =
          std::ceil(static_cast<double>(fetch) / opts.accept_fraction * 1.25) + 16.0;
      const int64_t want = std::min<int64_t>(
          total, inflated >= static_cast<double>(total) ? total : static_cast<int64_t>(inflated));
      STRATA_RETURN_IF_ERROR(scan(want, /*filtered=*/false, &returned));
      size_t kept = 0;
      for (const Neighbor& nb : out) {
        if (static_cast<int64_t>(kept) == fetch) break;
        if (accept(nb.label)) out[kept++] = nb;
      }
      out.resize(kept);
      if (static_cast<int64_t>(kept) < fetch && returned == want) {
        STRATA_RETURN_IF_ERROR(scan(fetch, /*filtered=*/true, &returned));
      }
    } else {
      STRATA_RETURN_IF_ERROR(scan(fetch, /*filtered=*/true, &returned));
    }
  }
  if (opts.refine_factor > 0) {
    STRATA_ASSIGN_OR_RETURN(ExactSearcher exact,
                            ExactSearcher::Make(query, m.dim, m.params.distance));
    size_t kept = 0;
    for (const Neighbor& nb : out) {
      const float* v = vector_of(nb.label);
      if (v == nullptr) continue;
      out[kept++] = {nb.label, exact.Distance(v)};
    }
    out.resize(kept);
  }
  std::sort(out.begin(), out.end(), [](const Neighbor& a, const Neighbor& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.label < b.label);
  });
  if (static_cast<int64_t>(out.size()) > opts.k) out.resize(static_cast<size_t>(opts.k));
  return out;
}

}  // namespace strata::index
