// hnswlib 0.6.2's saved-graph layout (HierarchicalNSW::saveIndex / loadIndex), written and read
// in memory. hnswlib itself only saves to and loads from a file path, so a checkpoint used to
// go through a temporary file, and its loadIndex asks the stream its position twice per
// element: 3.1-4.6 s to load 1.1M 128-d nodes at a restart (docs/COMPACTION.md "Recovery and
// failures"). The layout is hnswlib's (a fact taken from its headers, not its code): offsetLevel0_,
// max_elements_, cur_element_count, size_data_per_element_, label_offset_, offsetData_ (size_t
// each), maxlevel_ (int), enterpoint_node_ (tableint), maxM_, maxM0_, M_ (size_t), mult_
// (double), ef_construction_ (size_t), all host-endian; then the level-0 block
// (cur_element_count x size_data_per_element_ bytes); then per element a u32 byte count and
// that many bytes of upper-layer links (size_links_per_element_ per level above 0).
// Included by hnsw_index.cc only: hnswlib's types have internal linkage (hnswlib_internal.h).
// Thread-safety: SaveGraph reads `h` (callers hold HnswIndex's lock shared); LoadSavedGraph
// writes a graph no other thread sees yet.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <string_view>

#include "common/status.h"
#include "index/vector/hnswlib_internal.h"

namespace strata::index {
namespace {

/// Bytes of the saved graph's header (the 13 fields above).
constexpr size_t kSavedGraphHeaderBytes = 6 * sizeof(size_t) + sizeof(int) + sizeof(uint32_t) +
                                          3 * sizeof(size_t) + sizeof(double) + sizeof(size_t);

// Appends `h` to *out in the layout above.
void SaveGraph(const hnswlib::HierarchicalNSW<float>& h, std::string* out) {
  const size_t count = h.cur_element_count;
  size_t links = 0;
  for (size_t i = 0; i < count; ++i) {
    links +=
        sizeof(uint32_t) + h.size_links_per_element_ * static_cast<size_t>(h.element_levels_[i]);
  }
  out->reserve(out->size() + 128 + count * h.size_data_per_element_ + links);
  const auto pod = [out](const auto& v) {
    out->append(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  pod(h.offsetLevel0_);
  pod(h.max_elements_);
  pod(h.cur_element_count);
  pod(h.size_data_per_element_);
  pod(h.label_offset_);
  pod(h.offsetData_);
  pod(h.maxlevel_);
  pod(h.enterpoint_node_);
  pod(h.maxM_);
  pod(h.maxM0_);
  pod(h.M_);
  pod(h.mult_);
  pod(h.ef_construction_);
  out->append(h.data_level0_memory_, count * h.size_data_per_element_);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t bytes = h.element_levels_[i] > 0
                               ? static_cast<uint32_t>(h.size_links_per_element_ *
                                                       static_cast<size_t>(h.element_levels_[i]))
                               : 0;
    pod(bytes);
    if (bytes > 0) out->append(h.linkLists_[i], bytes);
  }
}

// Reads a graph in the layout above from `payload` into `h`, a graph constructed empty
// (cur_element_count 0) with the same space, M and ef_construction and room for every saved
// element. Every field is checked against `h` and every size against the payload's bounds:
// Corruption names the first that does not match (h then holds the elements read so far,
// which its destructor frees). std::bad_alloc when a link list cannot be allocated.
Status LoadSavedGraph(std::string_view payload, hnswlib::HierarchicalNSW<float>& h) {
  size_t at = 0;
  bool short_read = false;
  const auto pod = [&](auto* out) {
    if (payload.size() - at < sizeof(*out)) {
      short_read = true;
      return;
    }
    std::memcpy(out, payload.data() + at, sizeof(*out));
    at += sizeof(*out);
  };
  size_t offset_level0 = 0, max_elements = 0, count = 0, per = 0, label_offset = 0, offset_data = 0,
         max_m = 0, max_m0 = 0, m = 0, efc = 0;
  int max_level = 0;
  hnswlib::tableint entry = 0;
  double mult = 0;
  pod(&offset_level0);
  pod(&max_elements);
  pod(&count);
  pod(&per);
  pod(&label_offset);
  pod(&offset_data);
  pod(&max_level);
  pod(&entry);
  pod(&max_m);
  pod(&max_m0);
  pod(&m);
  pod(&mult);
  pod(&efc);
  if (short_read) return Status::Corruption("HNSW index bytes: graph header truncated");
  const auto mismatch = [](const char* field, size_t got, size_t want) {
    return Status::Corruption("HNSW index bytes: graph " + std::string(field) + " " +
                              std::to_string(got) + ", expected " + std::to_string(want));
  };
  if (offset_level0 != h.offsetLevel0_) return mismatch("offsetLevel0", offset_level0, 0);
  if (per != h.size_data_per_element_) {
    return mismatch("size_data_per_element", per, h.size_data_per_element_);
  }
  if (label_offset != h.label_offset_)
    return mismatch("label_offset", label_offset, h.label_offset_);
  if (offset_data != h.offsetData_) return mismatch("offsetData", offset_data, h.offsetData_);
  if (max_m != h.maxM_) return mismatch("maxM", max_m, h.maxM_);
  if (max_m0 != h.maxM0_) return mismatch("maxM0", max_m0, h.maxM0_);
  if (m != h.M_) return mismatch("M", m, h.M_);
  if (efc != h.ef_construction_) return mismatch("ef_construction", efc, h.ef_construction_);
  if (count > h.max_elements_) return mismatch("element count", count, h.max_elements_);
  if (!(mult > 0) || !std::isfinite(mult)) return Status::Corruption("HNSW index bytes: bad mult");
  if (count > 0 && (entry >= count || max_level < 0)) {
    return Status::Corruption("HNSW index bytes: entry point " + std::to_string(entry) +
                              " or top level " + std::to_string(max_level) + " out of range");
  }
  if ((payload.size() - at) / per < count) {
    return Status::Corruption("HNSW index bytes: level-0 block truncated");
  }
  std::memcpy(h.data_level0_memory_, payload.data() + at, count * per);
  at += count * per;
  h.label_lookup_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t bytes = 0;
    pod(&bytes);
    if (short_read)
      return Status::Corruption("HNSW index bytes: links of element " + std::to_string(i) +
                                " truncated");
    if (bytes % h.size_links_per_element_ != 0 || payload.size() - at < bytes) {
      return Status::Corruption("HNSW index bytes: links of element " + std::to_string(i) +
                                " have a bad size " + std::to_string(bytes));
    }
    const int level = static_cast<int>(bytes / h.size_links_per_element_);
    if (level > max_level) {
      return Status::Corruption("HNSW index bytes: element " + std::to_string(i) +
                                " is above the top level");
    }
    h.element_levels_[i] = level;
    h.linkLists_[i] = nullptr;
    if (bytes > 0) {
      h.linkLists_[i] = static_cast<char*>(std::malloc(bytes));
      if (h.linkLists_[i] == nullptr) throw std::bad_alloc();
      std::memcpy(h.linkLists_[i], payload.data() + at, bytes);
      at += bytes;
    }
    // Counted as they are set: the destructor frees linkLists_[0 .. cur_element_count).
    h.cur_element_count = i + 1;
    // Labels are row positions (int64, >= 0), one element each.
    const hnswlib::labeltype label = h.getExternalLabel(static_cast<hnswlib::tableint>(i));
    if (label > static_cast<hnswlib::labeltype>(std::numeric_limits<int64_t>::max()) ||
        !h.label_lookup_.emplace(label, static_cast<hnswlib::tableint>(i)).second) {
      return Status::Corruption("HNSW index bytes: element " + std::to_string(i) +
                                " has a negative or repeated label");
    }
    if (h.isMarkedDeleted(static_cast<hnswlib::tableint>(i))) ++h.num_deleted_;
  }
  if (at != payload.size()) {
    return Status::Corruption("HNSW index bytes: " + std::to_string(payload.size() - at) +
                              " bytes after the graph");
  }
  // Every neighbour list: at most maxM0_ (level 0) or maxM_ (above) entries, each an element
  // of the graph that has the list's level (a search follows them without checks, and reads
  // a neighbour's own list at that level: the fuzzer found a level-1 link to a level-0
  // element read past that element's links, 2026-12-05).
  const auto links_ok = [&](hnswlib::linklistsizeint* list, size_t max, int level) {
    const size_t n = h.getListCount(list);
    if (n > max) return false;
    const auto* ids = reinterpret_cast<const hnswlib::tableint*>(list + 1);
    for (size_t j = 0; j < n; ++j) {
      if (ids[j] >= count || h.element_levels_[ids[j]] < level) return false;
    }
    return true;
  };
  for (size_t i = 0; i < count; ++i) {
    const auto id = static_cast<hnswlib::tableint>(i);
    bool ok = links_ok(h.get_linklist0(id), h.maxM0_, 0);
    for (int level = 1; ok && level <= h.element_levels_[i]; ++level) {
      ok = links_ok(h.get_linklist(id, level), h.maxM_, level);
    }
    if (!ok) {
      return Status::Corruption("HNSW index bytes: a neighbour list of element " +
                                std::to_string(i) +
                                " is too long or names a missing element or one below its level");
    }
  }
  if (count > 0 && h.element_levels_[entry] != max_level) {
    return Status::Corruption("HNSW index bytes: the entry point is not on the top level");
  }
  h.maxlevel_ = max_level;
  h.enterpoint_node_ = entry;
  h.mult_ = mult;
  h.revSize_ = 1.0 / mult;
  return Status::OK();
}

}  // namespace
}  // namespace strata::index
