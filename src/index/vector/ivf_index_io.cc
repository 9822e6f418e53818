// IvfIndex's serialisation (Serialize, Deserialize: our header around faiss::write_index's
// bytes, checked before and after FAISS reads them) and its deep copies (Clone, CloneEmpty).
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexScalarQuantizer.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>
#include <xxhash.h>

#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <string>

#include "format/little_endian.h"
#include "index/vector/ivf_index.h"
#include "index/vector/ivf_index_impl.h"

namespace strata::index {

namespace {

using ivf_internal::kMaxDim;
using ivf_internal::kMaxPartitions;
using ivf_internal::kMaxSampleRate;
using ivf_internal::MetricOf;

constexpr char kMagic[8] = {'S', 'T', 'R', 'I', 'V', 'F', '0', '1'};
constexpr uint32_t kVersion = 1;
// magic, version, type, distance, dim, num_partitions, num_sub_vectors, nbits, max_iterations,
// sample_rate, hnsw_m, ef_construction, size, payload length, checksum.
constexpr size_t kHeaderSize = 8 + 4 + 4 + 4 + 8 + 8 + 8 + 4 + 4 + 8 + 4 + 4 + 8 + 8 + 8;

uint64_t HeaderAndPayloadHash(std::string_view header_without_hash, std::string_view payload) {
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  XXH64_update(st, header_without_hash.data(), header_without_hash.size());
  XXH64_update(st, payload.data(), payload.size());
  const uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

// Checks that a FAISS index read back is the type and shape `p` / `dim` describe.
Status CheckLoaded(const faiss::Index* index, int64_t dim, const IvfParams& p, int64_t size) {
  const auto* ivf = dynamic_cast<const faiss::IndexIVF*>(index);
  if (ivf == nullptr) return Status::Corruption("IVF index bytes: FAISS index is not an IVF");
  bool type_ok = false;
  switch (p.type) {
    case IvfType::kIvfFlat:
      type_ok = dynamic_cast<const faiss::IndexIVFFlat*>(ivf) != nullptr;
      break;
    case IvfType::kIvfPq:
    case IvfType::kIvfHnswPq: {
      const auto* pq = dynamic_cast<const faiss::IndexIVFPQ*>(ivf);
      type_ok = pq != nullptr && static_cast<int64_t>(pq->pq.M) == p.num_sub_vectors &&
                static_cast<int>(pq->pq.nbits) == p.nbits;
      break;
    }
    case IvfType::kIvfSq:
    case IvfType::kIvfHnswSq:
      type_ok = dynamic_cast<const faiss::IndexIVFScalarQuantizer*>(ivf) != nullptr;
      break;
  }
  const bool hnsw = dynamic_cast<const faiss::IndexHNSW*>(ivf->quantizer) != nullptr;
  const bool flat = dynamic_cast<const faiss::IndexFlat*>(ivf->quantizer) != nullptr;
  if (!type_ok || (IvfTypeUsesHnsw(p.type) ? !hnsw : !flat)) {
    return Status::Corruption(std::string("IVF index bytes: FAISS index is not an ") +
                              IvfTypeName(p.type) + " index");
  }
  if (ivf->d != dim || static_cast<int64_t>(ivf->nlist) != p.num_partitions ||
      ivf->quantizer->d != dim || ivf->quantizer->ntotal != p.num_partitions ||
      ivf->ntotal != size || ivf->metric_type != MetricOf(p.distance) || !ivf->is_trained ||
      ivf->invlists == nullptr || ivf->invlists->nlist != ivf->nlist) {
    return Status::Corruption(
        "IVF index bytes: FAISS index (d " + std::to_string(ivf->d) + ", nlist " +
        std::to_string(ivf->nlist) + ", ntotal " + std::to_string(ivf->ntotal) +
        ") does not match the header (dim " + std::to_string(dim) + ", num_partitions " +
        std::to_string(p.num_partitions) + ", size " + std::to_string(size) + ")");
  }
  return Status::OK();
}

}  // namespace

Result<std::string> IvfIndex::Serialize() const {
  const Impl& m = *impl_;
  faiss::VectorIOWriter writer;
  int64_t size = 0;
  try {
    std::shared_lock<FairRwLock> lock(m.mu);
    size = m.ivf->ntotal;
    faiss::write_index(m.ivf.get(), &writer);
  } catch (const std::bad_alloc&) {
    return Status::Internal("IVF serialize could not allocate memory");
  } catch (const std::exception& e) {
    return Status::Internal(std::string("IVF serialize failed (FAISS): ") + e.what());
  }
  const std::string_view payload(reinterpret_cast<const char*>(writer.data.data()),
                                 writer.data.size());
  const IvfParams& p = m.params;
  std::string out;
  out.reserve(kHeaderSize + payload.size());
  out.append(kMagic, sizeof(kMagic));
  format::PutU32(&out, kVersion);
  format::PutU32(&out, static_cast<uint32_t>(p.type));
  format::PutU32(&out, static_cast<uint32_t>(p.distance));
  format::PutU64(&out, static_cast<uint64_t>(m.dim));
  format::PutU64(&out, static_cast<uint64_t>(p.num_partitions));
  format::PutU64(&out, static_cast<uint64_t>(p.num_sub_vectors));
  format::PutU32(&out, static_cast<uint32_t>(p.nbits));
  format::PutU32(&out, static_cast<uint32_t>(p.max_iterations));
  format::PutU64(&out, static_cast<uint64_t>(p.sample_rate));
  format::PutU32(&out, static_cast<uint32_t>(p.hnsw_m));
  format::PutU32(&out, static_cast<uint32_t>(p.ef_construction));
  format::PutU64(&out, static_cast<uint64_t>(size));
  format::PutU64(&out, static_cast<uint64_t>(payload.size()));
  format::PutU64(&out, HeaderAndPayloadHash(out, payload));
  out += payload;
  return out;
}

Result<std::unique_ptr<IvfIndex>> IvfIndex::Deserialize(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) {
    return Status::Corruption("IVF index bytes: " + std::to_string(bytes.size()) +
                              " bytes is shorter than the " + std::to_string(kHeaderSize) +
                              "-byte header");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("IVF index bytes: bad magic");
  }
  const char* p = bytes.data() + sizeof(kMagic);
  const uint32_t version = format::GetU32(p);
  const uint32_t type = format::GetU32(p + 4);
  const uint32_t distance = format::GetU32(p + 8);
  const uint64_t dim = format::GetU64(p + 12);
  const uint64_t num_partitions = format::GetU64(p + 20);
  const uint64_t num_sub_vectors = format::GetU64(p + 28);
  const uint32_t nbits = format::GetU32(p + 36);
  const uint32_t max_iterations = format::GetU32(p + 40);
  const uint64_t sample_rate = format::GetU64(p + 44);
  const uint32_t hnsw_m = format::GetU32(p + 52);
  const uint32_t ef_construction = format::GetU32(p + 56);
  const uint64_t size = format::GetU64(p + 60);
  const uint64_t payload_size = format::GetU64(p + 68);
  const uint64_t checksum = format::GetU64(p + 76);
  if (payload_size != bytes.size() - kHeaderSize) {
    return Status::Corruption("IVF index bytes: payload size " + std::to_string(payload_size) +
                              " does not match the " + std::to_string(bytes.size() - kHeaderSize) +
                              " bytes present");
  }
  const std::string_view payload = bytes.substr(kHeaderSize);
  if (HeaderAndPayloadHash(bytes.substr(0, kHeaderSize - 8), payload) != checksum) {
    return Status::Corruption("IVF index bytes: checksum mismatch");
  }
  if (version != kVersion) {
    return Status::Corruption("IVF index bytes: unsupported version " + std::to_string(version));
  }
  if (type > static_cast<uint32_t>(IvfType::kIvfHnswPq) ||
      distance > static_cast<uint32_t>(DistanceType::kDot) ||
      dim > static_cast<uint64_t>(kMaxDim) || num_partitions < 1 ||
      num_partitions > static_cast<uint64_t>(kMaxPartitions) || num_sub_vectors > dim ||
      nbits > 16 || max_iterations > 1000 || sample_rate > static_cast<uint64_t>(kMaxSampleRate) ||
      hnsw_m > 128 || ef_construction > 4096 ||
      size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status::Corruption("IVF index bytes: header field out of range");
  }
  IvfParams params;
  params.type = static_cast<IvfType>(type);
  params.distance = static_cast<DistanceType>(distance);
  params.num_partitions = static_cast<int64_t>(num_partitions);
  params.num_sub_vectors = static_cast<int64_t>(num_sub_vectors);
  params.nbits = static_cast<int>(nbits);
  params.max_iterations = static_cast<int>(max_iterations);
  params.sample_rate = static_cast<int64_t>(sample_rate);
  params.hnsw_m = static_cast<int>(hnsw_m);
  params.ef_construction = static_cast<int>(ef_construction);
  {
    const Status st = ValidateIvfParams(static_cast<int64_t>(dim), params);
    if (!st.ok()) return Status::Corruption("IVF index bytes: " + st.message());
    if (IvfTypeUsesPq(params.type) && params.num_sub_vectors < 1) {
      return Status::Corruption("IVF index bytes: PQ index without num_sub_vectors");
    }
  }
  std::unique_ptr<faiss::Index> index;
  try {
    faiss::VectorIOReader reader;
    reader.data.assign(reinterpret_cast<const uint8_t*>(payload.data()),
                       reinterpret_cast<const uint8_t*>(payload.data()) + payload.size());
    index.reset(faiss::read_index(&reader));
  } catch (const std::bad_alloc&) {
    return Status::Corruption("IVF index bytes: FAISS could not load them (out of memory)");
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("IVF index bytes: FAISS could not load them: ") +
                              e.what());
  }
  STRATA_RETURN_IF_ERROR(
      CheckLoaded(index.get(), static_cast<int64_t>(dim), params, static_cast<int64_t>(size)));
  auto impl = std::make_unique<Impl>();
  impl->dim = static_cast<int64_t>(dim);
  impl->params = params;
  impl->ivf.reset(static_cast<faiss::IndexIVF*>(index.release()));
  impl->size.store(static_cast<int64_t>(size));
  return std::unique_ptr<IvfIndex>(new IvfIndex(std::move(impl)));
}

Result<std::unique_ptr<IvfIndex>> IvfIndex::Clone() const {
  const Impl& m = *impl_;
  auto impl = std::make_unique<Impl>();
  impl->dim = m.dim;
  impl->params = m.params;
  try {
    faiss::VectorIOReader reader;
    {
      faiss::VectorIOWriter writer;
      std::shared_lock<FairRwLock> lock(m.mu);
      faiss::write_index(m.ivf.get(), &writer);
      reader.data = std::move(writer.data);
    }
    std::unique_ptr<faiss::Index> index(faiss::read_index(&reader));
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(index.get());
    if (ivf == nullptr) return Status::Internal("IVF clone: FAISS read back a non-IVF index");
    index.release();
    impl->ivf.reset(ivf);
  } catch (const std::bad_alloc&) {
    return Status::Internal("IVF clone could not allocate memory");
  } catch (const std::exception& e) {
    return Status::Internal(std::string("IVF clone failed (FAISS): ") + e.what());
  }
  impl->size.store(impl->ivf->ntotal);
  return std::unique_ptr<IvfIndex>(new IvfIndex(std::move(impl)));
}

Result<std::unique_ptr<IvfIndex>> IvfIndex::CloneEmpty() const {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<IvfIndex> copy, Clone());
  try {
    copy->impl_->ivf->reset();
  } catch (const std::exception& e) {
    return Status::Internal(std::string("IVF reset failed (FAISS): ") + e.what());
  }
  copy->impl_->size.store(0);
  return copy;
}

}  // namespace strata::index
