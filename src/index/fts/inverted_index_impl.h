// Internal to the FTS inverted index: the state of an InvertedIndex (inverted_index.h) and the
// limits shared by the files that implement it (inverted_index.cc: adding, statistics and
// search; inverted_index_io.cc: serialisation). Not a public interface: include only from
// those files.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "index/fts/inverted_index.h"

namespace strata::index {

namespace fts_internal {

// Internal document ids are uint32; the last value is kept free.
inline constexpr uint64_t kMaxDocs = std::numeric_limits<uint32_t>::max() - 1;

// Postings of one term, by ascending internal document id. Positions of posting i are
// positions[pos_start[i], pos_start[i] + tfs[i]) (with_position only), ascending.
struct PostingList {
  std::vector<uint32_t> docs;
  std::vector<uint32_t> tfs;
  std::vector<uint32_t> pos_start;
  std::vector<uint32_t> positions;

  int64_t bytes() const {
    return static_cast<int64_t>(
        (docs.capacity() + tfs.capacity() + pos_start.capacity() + positions.capacity()) *
        sizeof(uint32_t));
  }
};

// Estimated bytes of one dictionary entry besides its postings (hash node, bucket, string).
inline int64_t TermOverhead(const std::string& term) {
  return static_cast<int64_t>(sizeof(PostingList) + sizeof(std::string) + sizeof(uint32_t) +
                              3 * sizeof(void*) + (term.size() > 15 ? term.capacity() + 1 : 0));
}

}  // namespace fts_internal

struct InvertedIndex::Impl {
  FtsParams params;
  std::shared_ptr<const Tokenizer> tokenizer;

  // glibc's rwlock prefers readers, so a steady stream of queries could starve AddColumn:
  // a writer first takes `gate` (new readers wait on it), then `mu` exclusively.
  mutable std::mutex gate;
  mutable std::shared_mutex mu;
  // Guarded by mu: term -> id into postings; postings by term id; per internal document id its
  // row position and length in indexed tokens; the sum of lengths; estimated bytes.
  std::unordered_map<std::string, uint32_t> term_ids;
  std::vector<fts_internal::PostingList> postings;
  std::vector<int64_t> doc_positions;
  std::vector<uint32_t> doc_lens;
  int64_t total_tokens = 0;
  int64_t memory = 0;

  std::shared_lock<std::shared_mutex> ReadLock() const {
    { std::lock_guard g(gate); }
    return std::shared_lock(mu);
  }
  std::unique_lock<std::shared_mutex> WriteLock() const {
    std::lock_guard g(gate);
    return std::unique_lock(mu);
  }

  int64_t DocBytes() const {
    return static_cast<int64_t>(doc_positions.capacity() * sizeof(int64_t) +
                                doc_lens.capacity() * sizeof(uint32_t));
  }
  const fts_internal::PostingList* Find(const std::string& term) const {
    auto it = term_ids.find(term);
    return it == term_ids.end() ? nullptr : &postings[it->second];
  }
};

}  // namespace strata::index
