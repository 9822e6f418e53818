// The graph walk of every HNSW search (HnswIndex::Search and FilteredSearch; see hnsw_index.h
// for the algorithm and its source: hnswlib 0.6.2's searchBaseLayerST<has_deletions = true>
// with `accept` in place of the deletion mark, or no filter at all), over hnswlib's graph
// directly. Prefetching (visited marks of a node's neighbours, every line of each unseen
// neighbour's vector, the next node's neighbour list) made it 1.16-1.22x hnswlib's searchKnn
// and the previous walk, filtered or not (docs/BENCHMARKS.md "Filtered vector search").
// Included by hnsw_index.cc only: hnswlib's types have internal linkage (hnswlib_internal.h).
// Thread-safety: reads `h`; callers hold HnswIndex's lock shared (the visited list comes from
// hnswlib's pool, which is internally locked).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "index/vector/hnsw_index.h"
#include "index/vector/hnswlib_internal.h"

namespace strata::index {
namespace {

/// Greedy descent of the upper layers to the node closest to `q` (as searchKnn), then the
/// filtered best-first search of layer 0 keeping the `ef` best accepted labels. Counts each
/// distance in *distances and stops with *budget_exhausted once it reaches `max_distances`.
/// Returns the accepted neighbours found, closest first (ties: lower label first); `h` must
/// hold at least one element.
std::vector<Neighbor> FilteredWalk(const hnswlib::HierarchicalNSW<float>& h, const float* q,
                                   size_t ef, const std::function<bool(int64_t)>& accept,
                                   int64_t max_distances, int64_t* distances,
                                   bool* budget_exhausted) {
  using Pair = std::pair<float, uint32_t>;  // (distance, internal id)
  const auto dist = [&h, q, distances](uint32_t id) {
    ++*distances;
    return h.fstdistfunc_(q, h.getDataByInternalId(id), h.dist_func_param_);
  };
  // Upper layers: greedy descent to the closest node, as searchKnn does.
  uint32_t cur = static_cast<uint32_t>(h.enterpoint_node_);
  float cur_dist = dist(cur);
  for (int level = h.maxlevel_; level > 0; --level) {
    for (bool changed = true; changed;) {
      changed = false;
      unsigned int* links = h.get_linklist(cur, level);
      const int size = h.getListCount(links);
      const uint32_t* ids = reinterpret_cast<const uint32_t*>(links + 1);
      for (int i = 0; i < size; ++i) {
        const float d = dist(ids[i]);
        if (d < cur_dist) {
          cur_dist = d;
          cur = ids[i];
          changed = true;
        }
      }
    }
  }
  // Layer 0: `frontier` holds every reached node (closest first) for expansion, `best` the
  // accepted ones (worst first, at most ef).
  auto* visited = h.visited_list_pool_->getFreeVisitedList();
  struct Release {
    const hnswlib::HierarchicalNSW<float>& h;
    hnswlib::VisitedList* v;
    ~Release() { h.visited_list_pool_->releaseVisitedList(v); }
  } release{h, visited};
  const auto mark = visited->curV;
  auto* seen = visited->mass;
  std::priority_queue<Pair, std::vector<Pair>, std::greater<Pair>> frontier;
  std::priority_queue<Pair> best;
  std::vector<uint32_t> fresh;  // unseen neighbours of the node being expanded
  fresh.reserve(h.maxM0_);
  // Every cache line of a vector (and the label after it), not only the first, up to 1 KiB:
  // the distance then finds the row on its way instead of missing line after line (128-d:
  // 1.15-1.20x). Longer rows are compute-bound and the hardware prefetcher streams them
  // (784-d: 1.04-1.06x whether 1, 2 or all 3 KiB were prefetched).
  const size_t vector_bytes =
      std::min<size_t>(1024, h.label_offset_ - h.offsetData_ + sizeof(hnswlib::labeltype));
  const auto admit = [&](float d, uint32_t id) {
    if (!accept || accept(static_cast<int64_t>(h.getExternalLabel(id)))) {
      best.emplace(d, id);
      if (best.size() > ef) best.pop();
    }
  };
  seen[cur] = mark;
  frontier.emplace(cur_dist, cur);
  admit(cur_dist, cur);
  while (!frontier.empty()) {
    const auto [d, id] = frontier.top();
    if (best.size() == ef && d > best.top().first) break;
    if (*distances >= max_distances) {
      *budget_exhausted = true;
      break;
    }
    frontier.pop();
    unsigned int* links = h.get_linklist0(id);
    const int size = h.getListCount(links);
    const uint32_t* ids = reinterpret_cast<const uint32_t*>(links + 1);
    // The unseen neighbours first, each vector prefetched, then their distances: the misses
    // of one node's neighbours overlap instead of following one another.
    // The visited marks of all neighbours first (hnswlib's searchBaseLayerST prefetches them
    // too): the marks are 2 bytes per node, scattered over rows x 2 bytes.
    for (int i = 0; i < size; ++i) __builtin_prefetch(seen + ids[i]);
    fresh.clear();
    for (int i = 0; i < size; ++i) {
      const uint32_t next = ids[i];
      if (seen[next] == mark) continue;
      seen[next] = mark;
      fresh.push_back(next);
      const char* v = h.getDataByInternalId(next);
      for (size_t off = 0; off < vector_bytes; off += 64) __builtin_prefetch(v + off);
    }
    for (const uint32_t next : fresh) {
      const float nd = dist(next);
      if (best.size() < ef || nd < best.top().first) {
        frontier.emplace(nd, next);
        admit(nd, next);
      }
    }
    // The next node to expand is known now: fetch its neighbour list (count + maxM0 ids, 2-3
    // cache lines) while the loop's bookkeeping runs.
    if (!frontier.empty()) {
      const char* next_links =
          reinterpret_cast<const char*>(h.get_linklist0(frontier.top().second));
      __builtin_prefetch(next_links);
      __builtin_prefetch(next_links + 64);
      __builtin_prefetch(next_links + 128);
    }
  }
  std::vector<Neighbor> out;
  out.reserve(best.size());
  while (!best.empty()) {
    out.push_back({static_cast<int64_t>(h.getExternalLabel(best.top().second)), best.top().first});
    best.pop();
  }
  std::sort(out.begin(), out.end(), [](const Neighbor& a, const Neighbor& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.label < b.label);
  });
  return out;
}

}  // namespace
}  // namespace strata::index
