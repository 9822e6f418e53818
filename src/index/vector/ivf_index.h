// IVF (inverted file) vector indexes over float32 vectors of one column, built on FAISS (Debian
// libfaiss-dev 1.7.3; Johnson, Douze & Jégou, "Billion-scale similarity search with GPUs", 2017).
// An IVF index clusters the vectors with k-means into num_partitions partitions (the
// "coarse quantizer"), stores each vector's code in its partition's list, and answers a query
// by scanning the nprobes partitions whose centroids are nearest to the query. Product
// quantization: Jégou, Douze & Schmid, "Product quantization for nearest neighbor search",
// IEEE TPAMI 2011. HNSW: Malkov & Yashunin 2018.
//
// The five index types of the LanceDB SDK map onto FAISS as follows (codes per vector in
// bytes; d = dim):
//   IVF_FLAT    -> faiss::IndexIVFFlat: the raw vectors (4*d bytes), exact distances within the
//                  probed partitions.
//   IVF_PQ      -> faiss::IndexIVFPQ (by_residual, m = num_sub_vectors, nbits): each residual
//                  (vector - centroid) is cut into m sub-vectors, each coded by the nearest of
//                  2^nbits k-means centroids (m*nbits/8 bytes); polysemous training is off.
//   IVF_SQ      -> faiss::IndexIVFScalarQuantizer (QT_8bit, by_residual): one byte per
//                  dimension, each scaled within its trained [min, max] (d bytes).
//   IVF_HNSW_SQ -> IVF_SQ whose coarse quantizer is an faiss::IndexHNSWFlat (M = hnsw_m,
//   IVF_HNSW_PQ -> IVF_PQ  efConstruction = ef_construction) over the centroids instead of a
//                  flat scan of them (FAISS's "IVFx_HNSWm,SQ8" / "IVFx_HNSWm,PQ" recipes).
//                  k-means runs on a flat index and the centroids are then added to the HNSW
//                  (Level1Quantizer::quantizer_trains_alone = 2). Chosen over IndexHNSWSQ /
//                  IndexHNSWPQ wrapped in IndexIDMap because it keeps the IVF semantics the
//                  SDK's parameters name (num_partitions, nprobes), costs a graph over the
//                  centroids only (not one per vector: ~hnsw_m*2*4 bytes per row saved), and
//                  supports the IDSelector filter and incremental adds; the HNSW only speeds up
//                  picking the partitions, which matters for many partitions. Measured at 447
//                  partitions (bench/ivf_bench.cc, 200,000 x 128-d) it does not pay yet: same
//                  recall as IVF_SQ (0.974 vs 0.969), 38 vs 52 q/s, add 17.8 vs 3.5 s (FAISS
//                  assigns through the HNSW vector by vector instead of one BLAS product). The
//                  IndexHNSWSQ-in-IndexIDMap alternative was not measured.
//
// Distances follow LanceDB's `_distance` conventions (index/vector/distance.h):
//   l2     -> squared Euclidean (FAISS METRIC_L2);
//   cosine -> vectors (and queries) are normalised and indexed under L2 (METRIC_L2, spherical
//             k-means): for unit q and x, |q - x|^2 = 2 - 2 cos, so the answer is l2 / 2 =
//             1 - cos with the same order. Measured on the test's clustered 20,000 x 32-d set,
//             IVF_PQ (4 sub-vectors) recall@10 after refine 10: 0.68 under FAISS's
//             METRIC_INNER_PRODUCT on the unit vectors, 0.98 under METRIC_L2. Zero vectors have
//             no direction and are not indexed (like HnswIndex); a zero query is Invalid;
//   dot    -> inner product, answered as 1 - ip.
// Without refine the distances are those of the quantised codes (IVF_FLAT: exact; IVF_SQ / PQ:
// approximations) in the same convention; with refine they are recomputed exactly from the
// caller's vectors (ExactSearcher's values).
//
// Performance (bench/ivf_bench.cc): Debian's libfaiss 1.7.3 is built for baseline x86-64, so its
// distance kernels are the scalar ones (fvec_L2sqr_ref dominates a profile of IVF_FLAT search)
// and the SQ codec decodes one dimension at a time; our own AVX2 kernels (distance.h) are
// faster per vector, so IVF_FLAT / IVF_SQ scans cost more per probed vector than HnswIndex's.
// k-means runs on BLAS sgemm: with the reference libblas training was ~10x slower than with
// OpenBLAS (install-deps installs libopenblas0-openmp); on this VM OpenBLAS detects its
// PRESCOTT kernels unless OPENBLAS_CORETYPE=Haswell is set in the environment.
//
// Errors are values: FAISS throws faiss::FaissException (and std::bad_alloc); every entry
// point catches them and returns Invalid / Internal / Corruption as documented.
//
// Thread-safety: Search, Serialize, Clone and the const accessors may run from many threads at
// once; AddColumn is exclusive with them through an internal reader/writer lock, but holds it
// exclusively only to append the codes (the partition assignment and encoding run under the
// shared lock, so searches continue meanwhile). The lock is index/vector/fair_rw_lock.h's
// (HnswIndex's): std::shared_mutex (glibc's rwlock prefers readers) starved AddColumn for
// minutes under 4 threads searching in a loop (ConcurrentSearchesWhileAdding). FAISS search is
// const and keeps per-call state only (IndexIVF*::search, IndexHNSW::search with
// SearchParametersHNSW: no shared mutation). Every call runs FAISS with one OpenMP thread
// (omp_set_num_threads(1) for the calling thread, restored after): a single query gains nothing
// from a team and would spin one up per query, and Train / AddColumn with OpenMP teams were
// pathological on a loaded machine: libgomp's threads spin-wait (OMP_WAIT_POLICY active by
// default), and with 2 cores shared by a dozen busy processes the test suite's training took 27
// minutes of wall time instead of ~30 s (measured: the same run with OMP_WAIT_POLICY=passive took
// seconds). Index builds are background work in Strata (one per table at a time), so one thread
// each is the honest default; a caller wanting parallel k-means can run builds of several tables at
// once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/array.h"
#include "common/status.h"
#include "index/vector/distance.h"
#include "index/vector/hnsw_index.h"  // Neighbor

namespace strata::index {

enum class IvfType { kIvfFlat, kIvfPq, kIvfSq, kIvfHnswSq, kIvfHnswPq };

/// "IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ".
const char* IvfTypeName(IvfType t);
/// Parses the names above, case-insensitively. Errors: Invalid naming the value.
Result<IvfType> ParseIvfType(std::string_view s);
/// True for IVF_PQ and IVF_HNSW_PQ.
bool IvfTypeUsesPq(IvfType t);

/// True for IVF_HNSW_SQ and IVF_HNSW_PQ.
bool IvfTypeUsesHnsw(IvfType t);

/// IVF build parameters. Zero means "choose": params() reports the resolved values.
struct IvfParams {
  IvfType type = IvfType::kIvfPq;
  DistanceType distance = DistanceType::kL2;
  /// In [1, 65536], or 0: round(sqrt(n)) for the n training rows passed to Train, clamped to
  /// [1, 65536]. Either way clamped to n (k-means needs a row per centroid).
  int64_t num_partitions = 0;
  /// PQ types only (ignored, resolved to 0, otherwise): in [1, dim] and dividing dim, or 0: the
  /// largest divisor of dim that is <= max(1, dim / 8) (dim 128 -> 16, 32 -> 4, 100 -> 10).
  int64_t num_sub_vectors = 0;
  /// PQ types only: bits per sub-vector code, in [1, 16] (FAISS ProductQuantizer). Training
  /// needs at least 2^nbits rows.
  int nbits = 8;
  /// k-means iterations (coarse quantizer and PQ codebooks), in [1, 1000].
  int max_iterations = 50;
  /// Training sample = min(n, sample_rate * num_partitions) rows for the partitions' k-means;
  /// PQ codebooks train on min(n, max(that, sample_rate * 2^nbits)) rows (LanceDB's rule, 65,536
  /// at the defaults); in [1, 1<<20].
  int64_t sample_rate = 256;
  /// IVF_HNSW_* only: HNSW degree over the centroids, in [2, 128].
  int hnsw_m = 16;
  /// IVF_HNSW_* only: HNSW construction breadth, in [hnsw_m, 4096].
  int ef_construction = 100;
};

/// Rows an IVF training uses out of `rows` usable ones, for params whose num_partitions is
/// resolved (>= 1): min(rows, max(sample_rate * num_partitions, 2^nbits for PQ)) for the
/// partitions' k-means, and for PQ types at least min(rows, sample_rate * 2^nbits) for the
/// codebooks (LanceDB's rule: 65,536 rows at the defaults). IvfIndex::Train samples this many;
/// callers that pre-sample (base/base_index_build.cc) must pass at least this many.
int64_t IvfTrainingRows(const IvfParams& p, int64_t rows);

/// Validates ranges for `dim` (in [1, 65536]). Errors: Invalid naming the field and its limit.
Status ValidateIvfParams(int64_t dim, const IvfParams& p);

class IvfIndex {
 public:
  ~IvfIndex();

  /// Trains on n row-major vectors (dim floats each; a sample or all rows): samples
  /// min(n, sample_rate * num_partitions) of them (more for PQ: see sample_rate) uniformly without
  /// replacement (std::mt19937_64 seeded with `seed`; the k-means seeds derive from it too, so a
  /// build is reproducible), runs k-means for the partitions, then trains the PQ / SQ codebooks on
  /// the residuals. Does NOT add the vectors. Under cosine, zero rows are left out of training.
  /// Errors: Invalid for n < 1, a null pointer, a non-finite element (naming the row), bad
  /// params (ValidateIvfParams), no usable row (cosine), PQ with fewer than 2^nbits rows, or a
  /// FAISS failure (naming it).
  /// `abandon` (optional) is asked between k-means iterations and distance blocks (FAISS's
  /// InterruptCallback, answered per training thread, so concurrent trainings are abandoned
  /// separately); once it returns true, training stops within one iteration's work and Train
  /// returns Cancelled. It runs on the calling thread and must not block.
  static Result<std::unique_ptr<IvfIndex>> Train(int64_t dim, IvfParams params,
                                                 const float* vectors, int64_t n,
                                                 uint64_t seed = 42,
                                                 const std::function<bool()>& abandon = {});

  /// Indexes rows [0, column.length) of a fixed_size_list<float32>[dim] column under labels
  /// first_label + i. Null vectors, vectors holding a null element and (cosine) zero vectors
  /// are skipped. Every row is validated before any is indexed. Labels are not checked for
  /// duplicates (a label added twice is found twice: callers own their labels). Returns the
  /// number indexed. Errors: Invalid (column type/size, negative first_label, overflow,
  /// non-finite element naming the row), Internal for a FAISS failure.
  Result<int64_t> AddColumn(const arrow::Array& column, int64_t first_label);

  struct SearchOptions {
    int64_t k = 10;             // >= 1
    int64_t nprobes = 20;       // >= 1, partitions probed (clamped to num_partitions)
    int64_t refine_factor = 0;  // >= 0; 0: no refine; else k*refine_factor candidates re-ranked
    int64_t ef = 0;  // >= 0; IVF_HNSW_*: HNSW breadth over centroids (0: max(64, 2*nprobes),
                     // and never below nprobes); ignored by the other types
    /// The caller's estimate of the fraction of indexed labels `accept` admits (in [0, 1]).
    /// At kAcceptAfterScanMinFraction or more, `accept` is called on the candidates after
    /// the scan (k * max(1, refine_factor) / fraction * 1.25 + 16 of them) instead of on
    /// every scanned code, and the scan is repeated with it per code when fewer than
    /// k * max(1, refine_factor) candidates pass; the answer is then the same set of
    /// accepted labels as a per-code scan would rank first (up to PQ ties). Below it, and
    /// when accept is empty, the hint is ignored.
    double accept_fraction = 0.0;
  };
  /// See SearchOptions::accept_fraction.
  static constexpr double kAcceptAfterScanMinFraction = 0.5;
  /// The k nearest accepted labels, best first (ties: lower label first); fewer when fewer are
  /// indexed / accepted in the probed partitions. `accept` (may be empty) filters labels
  /// during the scan (a FAISS IDSelector in SearchParametersIVF::sel: rejected rows never take
  /// a slot), or after it (SearchOptions::accept_fraction). `vector_of(label)` returns the label's
  /// dim floats or nullptr (candidate dropped); it is required when refine_factor > 0 and then the
  /// distances are exact (distance.h). `query` has dim finite floats (cosine: any non-zero norm).
  /// Errors: Invalid (bad option, non-finite or zero-under-cosine query, refine without
  /// vector_of), Internal for a FAISS failure.
  Result<std::vector<Neighbor>> Search(
      const float* query, const SearchOptions& opts,
      const std::function<bool(int64_t)>& accept = {},
      const std::function<const float*(int64_t)>& vector_of = {}) const;

  int64_t dim() const;
  /// Resolved values (num_partitions and num_sub_vectors filled in; 0 for non-PQ types).
  const IvfParams& params() const;
  /// Vectors indexed.
  int64_t size() const;
  /// Estimate of the bytes held: list codes + ids (8 bytes each) at their vectors' capacity,
  /// centroids (num_partitions * dim * 4), codebooks (PQ: dim * 2^nbits * 4; SQ: 2 * dim * 4),
  /// IVF_PQ's precomputed residual tables (num_partitions * m * 2^nbits * 4, when FAISS uses
  /// them), the HNSW graph over the centroids (its neighbour table, 4 bytes per slot, plus
  /// levels and offsets), and a fixed overhead per partition (two std::vector headers).
  int64_t memory_bytes() const;

  /// The index as bytes: our header (magic "STRIVF01", version, type, distance, dim, resolved
  /// params, size, payload length), faiss::write_index's bytes (VectorIOWriter) and an xxhash64
  /// of header and payload. Errors: Internal for a FAISS failure.
  Result<std::string> Serialize() const;
  /// Inverse of Serialize. The checksum is verified before FAISS reads anything, so truncated
  /// or garbage bytes never reach FAISS's reader. Errors: Corruption naming what failed (size,
  /// magic, version, checksum, header field, FAISS load, index type/shape not matching the
  /// header).
  static Result<std::unique_ptr<IvfIndex>> Deserialize(std::string_view bytes);
  /// An independent deep copy (FAISS write_index / read_index through memory, under the shared
  /// lock): adding to the copy leaves this index unchanged.
  Result<std::unique_ptr<IvfIndex>> Clone() const;
  /// A copy holding the trained model (centroids, codebooks) but no vector (FAISS
  /// IndexIVF::reset on a Clone): a base rewrite re-adds its rows without training again.
  /// Errors: Clone's.
  Result<std::unique_ptr<IvfIndex>> CloneEmpty() const;

 private:
  struct Impl;
  explicit IvfIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::index
