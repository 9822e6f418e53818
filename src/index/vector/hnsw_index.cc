#include "index/vector/hnsw_index.h"

#include "index/vector/fair_rw_lock.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <random>
#include <shared_mutex>
#include <thread>

#include "index/vector/hnsw_filtered_walk.h"
#include "index/vector/hnswlib_graph_io.h"
#include "index/vector/hnswlib_huge_pages.h"
#include "index/vector/hnswlib_internal.h"

#include "format/little_endian.h"

namespace strata::index {

// Filter selectivity crossover, measured by bench/hnsw_bench.cc: Fashion-MNIST, first 20,000
// training vectors (784-d), l2, k = 10, M 16, ef_construction 100, one thread, 200 t10k
// queries, filter = a pseudo-random subset of the rows. Filtered HNSW = Search with `accept`
// at the smallest ef in {10, 16, 32, ...} reaching recall@10 >= 0.95 against the exact answer
// over the accepted rows (ef = 10 suffices at every fraction: the over-fetch doubles the
// breadth until k accepted rows are found, which is what costs at low fractions); exact =
// ExactSearcher distances over the accepted rows only + TopK. The two alternate query by
// query (shared, loaded 2-core machine), best of 3 passes, microseconds per query:
//   fraction  rows   exact   filtered HNSW      (second run: exact / HNSW)
//     0.5%      94      89        11429           83 / 10784
//     1%       201     124         3911          206 /  6061
//     2%       396     149         2096          239 /  3355
//     5%       995     266         1098          820 /  2402
//    10%      1977     847         1113         1722 /  1482
//    12%      2363    1199          927         2451 /  1737
//    15%      2990    1647          963         3455 /  1512
//    20%      4027    2374          753         5031 /  1140
//    50%      9948    4991          343         9394 /   528
// The curves cross between 9% and 11% in both runs, so filters passing up to 10% of the
// indexed rows run exact; above that, filtered HNSW. (Full exact scan of 20,000 rows:
// 6.4 ms/query.)
const double kExactSearchMaxFraction = 0.10;

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'H', 'N', 'S', 'W', '1'};
constexpr uint32_t kVersion = 1;
// magic, version, distance, dim, m, ef_construction, count, payload size, checksum.
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 4 + 4 + 8 + 8 + 8;
constexpr int64_t kMaxDim = 65536;
// hnswlib's internal ids are 32-bit (tableint).
constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();
// AddColumn inserts in chunks of this many rows, each under the exclusive lock (searches
// interleave between chunks), with up to kAddColumnMaxThreads threads, and at least 16 rows per
// thread (fewer rows are not worth a thread start).
constexpr size_t kAddColumnChunkRows = 256;
constexpr size_t kAddColumnMaxThreads = 4;

// hnswlib's L2Space constructor stores the chosen SIMD kernel in a namespace-level function
// pointer, so two spaces constructed at once race on it: construct spaces under this mutex.
std::mutex& SpaceMutex() {
  static std::mutex mu;
  return mu;
}

std::unique_ptr<hnswlib::SpaceInterface<float>> MakeSpace(DistanceType distance, int64_t dim) {
  std::lock_guard<std::mutex> lock(SpaceMutex());
  if (distance == DistanceType::kL2) {
    return std::make_unique<hnswlib::L2Space>(static_cast<size_t>(dim));
  }
  return std::make_unique<hnswlib::InnerProductSpace>(static_cast<size_t>(dim));
}

Status CheckParams(int64_t dim, const HnswParams& p) {
  if (dim < 1 || dim > kMaxDim) {
    return Status::Invalid("HNSW dim " + std::to_string(dim) + " is out of range [1, " +
                           std::to_string(kMaxDim) + "]");
  }
  if (p.m < 2 || p.m > 128) {
    return Status::Invalid("HNSW m " + std::to_string(p.m) + " is out of range [2, 128]");
  }
  if (p.ef_construction < p.m || p.ef_construction > 4096) {
    return Status::Invalid("HNSW ef_construction " + std::to_string(p.ef_construction) +
                           " is out of range [m = " + std::to_string(p.m) + ", 4096]");
  }
  switch (p.distance) {
    case DistanceType::kL2:
    case DistanceType::kCosine:
    case DistanceType::kDot:
      return Status::OK();
  }
  return Status::Invalid("HNSW distance type " + std::to_string(static_cast<int>(p.distance)) +
                         " is unknown");
}

// Checks that `v` holds `dim` finite floats; for cosine, writes v / |v| into `normalized`.
// `what` names the vector in errors ("vector for label 7", "query").
Status PrepareVector(const float* v, int64_t dim, DistanceType distance, const std::string& what,
                     std::vector<float>* normalized) {
  for (int64_t i = 0; i < dim; ++i) {
    if (!std::isfinite(v[i])) {
      return Status::Invalid(what + " element " + std::to_string(i) + " is not finite");
    }
  }
  if (distance != DistanceType::kCosine) return Status::OK();
  const float norm = std::sqrt(SquaredNorm(v, dim));
  if (!(norm > 0.0f) || !std::isfinite(norm)) {
    return Status::Invalid(what + " has zero (or overflowing) norm: cosine distance needs a " +
                           "non-zero vector");
  }
  normalized->resize(static_cast<size_t>(dim));
  const float inv = 1.0f / norm;
  for (int64_t i = 0; i < dim; ++i) (*normalized)[static_cast<size_t>(i)] = v[i] * inv;
  return Status::OK();
}

uint64_t HeaderAndPayloadHash(std::string_view header_without_hash, std::string_view payload) {
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  XXH64_update(st, header_without_hash.data(), header_without_hash.size());
  XXH64_update(st, payload.data(), payload.size());
  const uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

}  // namespace

struct HnswIndex::Impl {
  int64_t dim = 0;
  HnswParams params;
  // Declared before `hnsw`: hnswlib keeps a pointer to the space's dimension.
  std::unique_ptr<hnswlib::SpaceInterface<float>> space;
  // Guarded by `lock`: Search and Serialize hold it shared, Add and AddChunk exclusively
  // (hnswlib 0.6.2's searchKnn reads neighbour lists and the entry point without its per-node
  // locks, so an overlapping addPoint would be a data race). Under the exclusive lock AddChunk
  // runs several addPoint calls at once; hnswlib's own mutexes (per-node link locks, `global`,
  // cur_element_count_guard_) order those.
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  mutable FairRwLock lock;
  std::atomic<int64_t> size{0};
  std::atomic<int64_t> memory_bytes{0};
  int64_t upper_link_bytes = 0;  // guarded by `lock` (exclusive)

  // Recomputes memory_bytes from the capacity; caller holds `lock` exclusively (or owns *this).
  void UpdateMemory() {
    const int64_t cap = static_cast<int64_t>(hnsw->max_elements_);
    const int64_t per = static_cast<int64_t>(hnsw->size_data_per_element_);
    // level-0 block + linkLists_ pointer + element level + per-node lock + visited list slot
    // per allocated element, plus the upper-layer link blocks and the label map entries.
    const int64_t fixed = per + static_cast<int64_t>(sizeof(void*) + sizeof(int) +
                                                     sizeof(std::mutex) + sizeof(uint16_t));
    memory_bytes.store(cap * fixed + upper_link_bytes + size.load() * 32);
  }

  void CountUpperLinks(size_t internal_id) {
    const int level = hnsw->element_levels_[internal_id];
    if (level > 0) {
      upper_link_bytes += static_cast<int64_t>(hnsw->size_links_per_element_) * level + 1;
    }
  }

  // Grows the capacity (doubling, at least 16, up to kMaxElements) so that `more` vectors fit
  // beyond the current count. Caller holds `lock` exclusively. Errors: Invalid when full or
  // when the allocation fails.
  Status Reserve(int64_t more) {
    auto& h = *hnsw;
    const int64_t need = static_cast<int64_t>(h.cur_element_count) + more;
    if (need <= static_cast<int64_t>(h.max_elements_)) return Status::OK();
    if (need > kMaxElements) {
      return Status::Invalid("HNSW index is full: " + std::to_string(kMaxElements) +
                             " vectors is the limit");
    }
    int64_t grown = std::max<int64_t>(2 * static_cast<int64_t>(h.max_elements_), 16);
    while (grown < need) grown *= 2;
    grown = std::min(grown, kMaxElements);
    try {
      h.resizeIndex(static_cast<size_t>(grown));
      Level0OnHugePages(h, /*copy=*/false);
    } catch (const std::exception&) {
      return Status::Invalid("HNSW could not allocate memory to grow beyond " +
                             std::to_string(h.max_elements_) + " vectors");
    }
    UpdateMemory();
    return Status::OK();
  }

  // Inserts data[j] under label first_label + rows[j] for j < data.size(), from up to
  // kAddColumnMaxThreads threads (hnswlib 0.6.2's addPoint is safe to run concurrently once
  // the capacity is reserved and the labels are distinct and new: per-node link locks plus a
  // global lock for the entry point and top level). Takes `lock` exclusively for the whole
  // chunk, so no search overlaps it. Sets *added to the number inserted (all of them unless an
  // error is returned). Errors: Invalid (full, allocation failure, label already present, an
  // hnswlib exception: the first one seen).
  Status AddChunk(const std::vector<const float*>& data, const int64_t* rows, int64_t first_label,
                  int64_t* added) {
    *added = 0;
    const size_t count = data.size();
    if (count == 0) return Status::OK();
    std::unique_lock<FairRwLock> guard(lock);
    auto& h = *hnsw;
    for (size_t j = 0; j < count; ++j) {
      const int64_t label = first_label + rows[j];
      if (h.label_lookup_.count(static_cast<hnswlib::labeltype>(label)) != 0) {
        return Status::Invalid("HNSW label " + std::to_string(label) + " is already indexed");
      }
    }
    STRATA_RETURN_IF_ERROR(Reserve(static_cast<int64_t>(count)));

    // Levels are drawn here, on this thread, from hnswlib's own generator and distribution,
    // and passed to addPoint; while the threads run, mult_ is 0 so that addPoint's own draw
    // (hnswlib 0.6.2 always makes one, unlocked) yields level 0 and is overridden by ours. A
    // row whose level exceeds the graph's top level moves the entry point: those (about
    // log_M(n) of n rows) are inserted first, alone, so the concurrent inserts never write
    // enterpoint_node_ / maxlevel_ (which hnswlib reads outside its `global` lock). This also
    // covers the first row of an empty graph.
    std::vector<int> levels(count);
    for (size_t j = 0; j < count; ++j) levels[j] = h.getRandomLevel(h.mult_);
    std::vector<hnswlib::tableint> ids(count);
    std::vector<char> done(count, 0);  // element j written by the thread that inserted row j
    std::vector<size_t> rest;          // rows for the threads
    rest.reserve(count);
    std::atomic<bool> failed{false};
    std::mutex error_mu;
    Status first_error;  // guarded by error_mu
    auto fail = [&](Status st) {
      std::lock_guard<std::mutex> l(error_mu);
      if (first_error.ok()) first_error = std::move(st);
      failed.store(true);
    };
    // Inserts row j; never throws: an exception becomes the first error (or, if even building
    // that Status throws, just the `failed` flag, reported below as out of memory).
    auto insert_one = [&](size_t j) noexcept {
      const int64_t label = first_label + rows[j];
      try {
        try {
          ids[j] = h.addPoint(data[j], static_cast<hnswlib::labeltype>(label),
                              levels[j] > 0 ? levels[j] : -1);
          done[j] = 1;
        } catch (const std::bad_alloc&) {
          fail(Status::Invalid("HNSW could not allocate memory to insert label " +
                               std::to_string(label)));
        } catch (const std::exception& e) {
          fail(Status::Invalid(std::string("HNSW insert of label ") + std::to_string(label) +
                               " failed: " + e.what()));
        }
      } catch (...) {
        failed.store(true);
      }
    };
    // Nothing below throws (allocations are done), so mult_ is restored after the join.
    const double mult = h.mult_;
    h.mult_ = 0.0;
    for (size_t j = 0; j < count && !failed.load(); ++j) {
      if (levels[j] > h.maxlevel_) {
        insert_one(j);
      } else {
        rest.push_back(j);
      }
    }
    std::atomic<size_t> next{0};
    auto work = [&]() noexcept {
      for (;;) {
        if (failed.load(std::memory_order_relaxed)) return;
        const size_t i = next.fetch_add(1);
        if (i >= rest.size()) return;
        insert_one(rest[i]);
      }
    };
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const size_t threads = std::max<size_t>(
        1, std::min<size_t>({static_cast<size_t>(hw), kAddColumnMaxThreads, rest.size() / 16}));
    std::vector<std::thread> pool;
    if (threads > 1 && !failed.load()) {
      try {
        pool.reserve(threads - 1);
        for (size_t t = 0; t + 1 < threads; ++t) pool.emplace_back(work);
      } catch (const std::exception&) {
        // Could not start a thread: the ones started and this one share the work.
      }
    }
    work();  // this thread is one of the workers
    for (auto& t : pool) t.join();
    h.mult_ = mult;

    for (size_t j = 0; j < count; ++j) {
      if (!done[j]) continue;
      CountUpperLinks(ids[j]);
      ++*added;
    }
    size.fetch_add(*added);
    UpdateMemory();
    std::lock_guard<std::mutex> l(error_mu);
    if (failed.load() && first_error.ok()) {
      return Status::Invalid("HNSW insert failed: out of memory while reporting the error");
    }
    return first_error;
  }
};

HnswIndex::HnswIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HnswIndex::~HnswIndex() = default;

Result<std::unique_ptr<HnswIndex>> HnswIndex::Make(int64_t dim, HnswParams params,
                                                   int64_t initial_capacity) {
  STRATA_RETURN_IF_ERROR(CheckParams(dim, params));
  if (initial_capacity < 0 || initial_capacity > kMaxElements) {
    return Status::Invalid("HNSW initial_capacity " + std::to_string(initial_capacity) +
                           " is out of range [0, " + std::to_string(kMaxElements) + "]");
  }
  auto impl = std::make_unique<Impl>();
  impl->dim = dim;
  impl->params = params;
  try {
    impl->space = MakeSpace(params.distance, dim);
    impl->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(
        impl->space.get(), static_cast<size_t>(std::max<int64_t>(initial_capacity, 1)),
        static_cast<size_t>(params.m), static_cast<size_t>(params.ef_construction));
    Level0OnHugePages(*impl->hnsw, /*copy=*/false);
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("HNSW allocation for ") + std::to_string(initial_capacity) +
                           " vectors failed: " + e.what());
  }
  // Per-query breadth is passed as searchKnn's k (hnswlib uses max(ef_, k)), so the shared
  // ef_ stays at its minimum and is never written while searching.
  impl->hnsw->setEf(1);
  impl->UpdateMemory();
  return std::unique_ptr<HnswIndex>(new HnswIndex(std::move(impl)));
}

int64_t HnswIndex::dim() const { return impl_->dim; }
const HnswParams& HnswIndex::params() const { return impl_->params; }
int64_t HnswIndex::size() const { return impl_->size.load(); }
int64_t HnswIndex::memory_bytes() const { return impl_->memory_bytes.load(); }

Status HnswIndex::Add(int64_t label, const float* vector) {
  Impl& m = *impl_;
  if (label < 0) {
    return Status::Invalid("HNSW label " + std::to_string(label) + " is negative");
  }
  std::vector<float> normalized;
  STRATA_RETURN_IF_ERROR(PrepareVector(vector, m.dim, m.params.distance,
                                       "vector for label " + std::to_string(label), &normalized));
  const float* data = normalized.empty() ? vector : normalized.data();

  std::unique_lock<FairRwLock> lock(m.lock);
  auto& h = *m.hnsw;
  if (h.label_lookup_.count(static_cast<hnswlib::labeltype>(label)) != 0) {
    return Status::Invalid("HNSW label " + std::to_string(label) + " is already indexed");
  }
  try {
    if (h.cur_element_count >= h.max_elements_) {
      if (static_cast<int64_t>(h.max_elements_) >= kMaxElements) {
        return Status::Invalid("HNSW index is full: " + std::to_string(kMaxElements) +
                               " vectors is the limit");
      }
      const int64_t grown = std::min<int64_t>(
          kMaxElements, std::max<int64_t>(2 * static_cast<int64_t>(h.max_elements_), 16));
      h.resizeIndex(static_cast<size_t>(grown));
      Level0OnHugePages(h, /*copy=*/false);
      m.UpdateMemory();
    }
    const size_t id = h.addPoint(data, static_cast<hnswlib::labeltype>(label), -1);
    m.CountUpperLinks(id);
  } catch (const std::bad_alloc&) {
    return Status::Invalid("HNSW could not allocate memory to grow beyond " +
                           std::to_string(h.max_elements_) + " vectors");
  } catch (const std::exception& e) {
    return Status::Invalid(std::string("HNSW insert of label ") + std::to_string(label) +
                           " failed: " + e.what());
  }
  m.size.fetch_add(1);
  m.UpdateMemory();
  return Status::OK();
}

Result<int64_t> HnswIndex::AddColumn(const arrow::Array& column, int64_t first_label) {
  Impl& m = *impl_;
  const auto& type = column.type();
  if (type->id() != arrow::TypeId::kFixedSizeList ||
      type->value_type()->id() != arrow::TypeId::kFloat32 || type->list_size() != m.dim) {
    return Status::Invalid("HNSW column must be fixed_size_list<float32>[" + std::to_string(m.dim) +
                           "], got " + type->ToString());
  }
  if (first_label < 0) {
    return Status::Invalid("HNSW first_label " + std::to_string(first_label) + " is negative");
  }
  const arrow::Array values = column.child(0);
  const float* base = values.raw_values<float>();
  const bool element_nulls = values.null_count() > 0;
  const int64_t n = column.length();
  if (n > 0 && first_label > std::numeric_limits<int64_t>::max() - (n - 1)) {
    return Status::Invalid("HNSW first_label " + std::to_string(first_label) + " + " +
                           std::to_string(n) + " rows overflows int64");
  }
  auto row = [&](int64_t i) { return base + (column.offset() + i) * m.dim; };
  auto usable = [&](int64_t i) {
    if (column.IsNull(i)) return false;
    if (element_nulls) {
      const int64_t start = (column.offset() + i) * m.dim;
      for (int64_t j = 0; j < m.dim; ++j) {
        if (values.IsNull(start + j)) return false;
      }
    }
    if (m.params.distance == DistanceType::kCosine) {
      // A zero vector has no direction: like a null one it is not indexed (cosine only).
      if (!(SquaredNorm(row(i), m.dim) > 0.0f)) return false;
    }
    return true;
  };
  // Validate every row first so that bad input indexes nothing.
  std::vector<int64_t> rows;
  std::vector<float> scratch;
  for (int64_t i = 0; i < n; ++i) {
    if (!usable(i)) continue;
    STRATA_RETURN_IF_ERROR(PrepareVector(row(i), m.dim, m.params.distance,
                                         "vector at row " + std::to_string(i), &scratch));
    rows.push_back(i);
  }
  // Labels already present reject the batch before anything is indexed (label_lookup_ only
  // changes under the exclusive lock; each chunk checks again in case of a racing insert).
  {
    std::shared_lock<FairRwLock> lock(m.lock);
    for (const int64_t i : rows) {
      if (m.hnsw->label_lookup_.count(static_cast<hnswlib::labeltype>(first_label + i)) != 0) {
        return Status::Invalid("HNSW label " + std::to_string(first_label + i) + " (row " +
                               std::to_string(i) + ") is already indexed");
      }
    }
  }
  int64_t added = 0;
  std::vector<float> normalized;
  for (size_t c = 0; c < rows.size(); c += kAddColumnChunkRows) {
    const size_t count = std::min(rows.size() - c, kAddColumnChunkRows);
    // Cosine: the unit vectors are computed before the lock is taken and the threads start.
    std::vector<const float*> data(count);
    if (m.params.distance == DistanceType::kCosine) {
      normalized.resize(count * static_cast<size_t>(m.dim));
      for (size_t j = 0; j < count; ++j) {
        float* out = normalized.data() + j * static_cast<size_t>(m.dim);
        const float* v = row(rows[c + j]);
        const float inv = 1.0f / std::sqrt(SquaredNorm(v, m.dim));  // > 0: checked above
        for (int64_t d = 0; d < m.dim; ++d) out[d] = v[d] * inv;
        data[j] = out;
      }
    } else {
      for (size_t j = 0; j < count; ++j) data[j] = row(rows[c + j]);
    }
    int64_t chunk_added = 0;
    const Status st = m.AddChunk(data, rows.data() + c, first_label, &chunk_added);
    added += chunk_added;
    STRATA_RETURN_IF_ERROR(st);
  }
  return added;
}

Result<std::vector<Neighbor>> HnswIndex::Search(const float* query, int64_t k, int64_t ef,
                                                const std::function<bool(int64_t)>& accept) const {
  const Impl& m = *impl_;
  if (k < 1) return Status::Invalid("HNSW search k " + std::to_string(k) + " must be >= 1");
  if (ef < 1) return Status::Invalid("HNSW search ef " + std::to_string(ef) + " must be >= 1");
  std::vector<float> normalized;
  STRATA_RETURN_IF_ERROR(PrepareVector(query, m.dim, m.params.distance, "query", &normalized));
  const float* q = normalized.empty() ? query : normalized.data();

  std::shared_lock<FairRwLock> lock(m.lock);
  const auto& h = *m.hnsw;
  const int64_t n = static_cast<int64_t>(h.cur_element_count);
  std::vector<Neighbor> out;
  if (n == 0) return out;
  const int64_t breadth = std::min(std::max(ef, k), n);
  // Our walk over hnswlib's graph (hnsw_filtered_walk.h), not searchKnn: the same algorithm
  // (searchBaseLayerST), with `accept` applied as rows are admitted instead of to searchKnn's
  // answer, and with prefetching that made it 1.16-1.17x searchKnn's q/s (200,000 clustered
  // 128-d rows, base and L0 layouts, interleaved in one process; docs/BENCHMARKS.md).
  try {
    int64_t distances = 0;
    bool exhausted = false;
    out = FilteredWalk(h, q, static_cast<size_t>(breadth), accept,
                       std::numeric_limits<int64_t>::max(), &distances, &exhausted);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("HNSW search failed: ") + e.what());
  }
  if (static_cast<int64_t>(out.size()) > k) out.resize(static_cast<size_t>(k));
  return out;
}

Result<std::vector<Neighbor>> HnswIndex::FilteredSearch(const float* query, int64_t k,
                                                        int64_t breadth,
                                                        const std::function<bool(int64_t)>& accept,
                                                        int64_t max_distances,
                                                        FilteredSearchStats* stats) const {
  const Impl& m = *impl_;
  if (k < 1) return Status::Invalid("HNSW search k " + std::to_string(k) + " must be >= 1");
  if (breadth < 1) {
    return Status::Invalid("HNSW search ef " + std::to_string(breadth) + " must be >= 1");
  }
  std::vector<float> normalized;
  STRATA_RETURN_IF_ERROR(PrepareVector(query, m.dim, m.params.distance, "query", &normalized));
  const float* q = normalized.empty() ? query : normalized.data();
  FilteredSearchStats local;
  FilteredSearchStats& st = stats != nullptr ? *stats : local;
  st = {};
  const size_t ef = static_cast<size_t>(std::max(breadth, k));

  std::shared_lock<FairRwLock> lock(m.lock);
  const auto& h = *m.hnsw;
  std::vector<Neighbor> out;
  if (h.cur_element_count == 0) return out;
  out = FilteredWalk(h, q, ef, accept, max_distances, &st.distances, &st.budget_exhausted);
  if (static_cast<int64_t>(out.size()) > k) out.resize(static_cast<size_t>(k));
  return out;
}

Result<std::string> HnswIndex::Serialize() const {
  const Impl& m = *impl_;
  std::string payload;
  int64_t count = 0;
  try {
    std::shared_lock<FairRwLock> lock(m.lock);
    count = static_cast<int64_t>(m.hnsw->cur_element_count);
    SaveGraph(*m.hnsw, &payload);
  } catch (const std::exception& e) {
    return Status::IOError(std::string("HNSW serialize failed: ") + e.what());
  }
  std::string out;
  out.reserve(kHeaderSize + payload.size());
  out.append(kMagic, sizeof(kMagic));
  format::PutU32(&out, kVersion);
  format::PutU32(&out, static_cast<uint32_t>(m.params.distance));
  format::PutU64(&out, static_cast<uint64_t>(m.dim));
  format::PutU32(&out, static_cast<uint32_t>(m.params.m));
  format::PutU32(&out, static_cast<uint32_t>(m.params.ef_construction));
  format::PutU64(&out, static_cast<uint64_t>(count));
  format::PutU64(&out, static_cast<uint64_t>(payload.size()));
  format::PutU64(&out, HeaderAndPayloadHash(out, payload));
  out += payload;
  return out;
}

Result<std::unique_ptr<HnswIndex>> HnswIndex::Deserialize(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) {
    return Status::Corruption("HNSW index bytes: " + std::to_string(bytes.size()) +
                              " bytes is shorter than the " + std::to_string(kHeaderSize) +
                              "-byte header");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("HNSW index bytes: bad magic");
  }
  const char* p = bytes.data() + sizeof(kMagic);
  const uint32_t version = format::GetU32(p);
  const uint32_t distance = format::GetU32(p + 4);
  const uint64_t dim = format::GetU64(p + 8);
  const uint32_t m = format::GetU32(p + 16);
  const uint32_t efc = format::GetU32(p + 20);
  const uint64_t count = format::GetU64(p + 24);
  const uint64_t payload_size = format::GetU64(p + 32);
  const uint64_t checksum = format::GetU64(p + 40);
  if (payload_size != bytes.size() - kHeaderSize) {
    return Status::Corruption("HNSW index bytes: payload size " + std::to_string(payload_size) +
                              " does not match the " + std::to_string(bytes.size() - kHeaderSize) +
                              " bytes present");
  }
  const std::string_view payload = bytes.substr(kHeaderSize);
  if (HeaderAndPayloadHash(bytes.substr(0, kHeaderSize - 8), payload) != checksum) {
    return Status::Corruption("HNSW index bytes: checksum mismatch");
  }
  if (version != kVersion) {
    return Status::Corruption("HNSW index bytes: unsupported version " + std::to_string(version));
  }
  if (distance > static_cast<uint32_t>(DistanceType::kDot)) {
    return Status::Corruption("HNSW index bytes: unknown distance type " +
                              std::to_string(distance));
  }
  if (count > static_cast<uint64_t>(kMaxElements) || dim > static_cast<uint64_t>(kMaxDim) ||
      m > 128 || efc > 4096) {
    return Status::Corruption("HNSW index bytes: header field out of range");
  }
  HnswParams params;
  params.distance = static_cast<DistanceType>(distance);
  params.m = static_cast<int>(m);
  params.ef_construction = static_cast<int>(efc);
  {
    const Status st = CheckParams(static_cast<int64_t>(dim), params);
    if (!st.ok()) return Status::Corruption("HNSW index bytes: " + st.message());
  }

  {
    // The graph's level-0 block alone holds `count` elements of this size: a count the bytes
    // cannot hold is refused before it sizes any allocation.
    const uint64_t per =
        2ull * m * sizeof(uint32_t) + sizeof(uint32_t) + dim * sizeof(float) + sizeof(uint64_t);
    if (payload.size() < kSavedGraphHeaderBytes ||
        (payload.size() - kSavedGraphHeaderBytes) / per < count) {
      return Status::Corruption("HNSW index bytes: " + std::to_string(payload.size()) +
                                " graph bytes cannot hold " + std::to_string(count) +
                                " elements of " + std::to_string(per) + " bytes");
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->dim = static_cast<int64_t>(dim);
  impl->params = params;
  try {
    impl->space = MakeSpace(params.distance, impl->dim);
    // Room for growth so the loaded index keeps accepting Add (it grows further by doubling).
    const size_t capacity = static_cast<size_t>(std::max<uint64_t>(count + count / 2, 1024));
    impl->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(
        impl->space.get(), capacity, static_cast<size_t>(m), static_cast<size_t>(efc));
    Level0OnHugePages(*impl->hnsw, /*copy=*/false);
    STRATA_RETURN_IF_ERROR(LoadSavedGraph(payload, *impl->hnsw));
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("HNSW index bytes: could not load the graph: ") +
                              e.what());
  }
  auto& h = *impl->hnsw;
  if (h.cur_element_count != count) {
    return Status::Corruption("HNSW index bytes: graph holds " +
                              std::to_string(h.cur_element_count) + " elements, the header says " +
                              std::to_string(count));
  }
  h.setEf(1);
  impl->size.store(static_cast<int64_t>(count));
  for (size_t i = 0; i < h.cur_element_count; ++i) impl->CountUpperLinks(i);
  impl->UpdateMemory();
  return std::unique_ptr<HnswIndex>(new HnswIndex(std::move(impl)));
}

}  // namespace strata::index
