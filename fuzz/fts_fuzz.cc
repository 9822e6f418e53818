// libFuzzer target: the full-text tokenizer and the inverted index deserializer on arbitrary
// bytes. The first byte picks the mode:
//   0: Tokenizer::Tokenize with FtsParams taken from byte 1 (flags) and byte 2 (max length);
//      every token must be non-empty, within 3 * 18 * max_token_length bytes (NFKD expands a
//      code point to at most 18), positions strictly ascending;
//   1: InvertedIndex::Deserialize on the rest (checksum and all);
//   2: the same with a valid xxhash64 appended, so the structural checks behind the checksum
//      are reached; a loaded index must answer queries and re-serialize to the same bytes;
//   3: index the text as documents split on '\n', then serialize, deserialize and compare.
// Deserialize must return a value or an error and never crash.
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/builder.h"
#include "index/fts/inverted_index.h"

namespace {

using strata::index::Bm25Stats;
using strata::index::FtsParams;
using strata::index::FtsQuery;
using strata::index::InvertedIndex;
using strata::index::Tokenizer;

FtsParams ParamsFrom(uint8_t flags, uint8_t len) {
  FtsParams p;
  p.base_tokenizer = (flags & 1) ? "whitespace" : "simple";
  p.with_position = (flags & 2) != 0;
  p.lower_case = (flags & 4) != 0;
  p.stem = (flags & 8) != 0;
  p.remove_stop_words = (flags & 16) != 0;
  p.ascii_folding = (flags & 32) != 0;
  p.max_token_length = 1 + len % 64;
  return p;
}

void ExerciseIndex(const InvertedIndex& idx, std::string_view query_text) {
  for (int kind = 0; kind < 3; ++kind) {
    FtsQuery q;
    q.text = std::string(query_text);
    q.kind = kind == 2 ? FtsQuery::Kind::kPhrase : FtsQuery::Kind::kMatch;
    q.require_all = kind == 1;
    const Bm25Stats s = idx.Stats(idx.QueryTerms(q));
    auto r = idx.Search(q, s, 10);
    if (r.ok()) {
      for (size_t i = 1; i < r->size(); ++i) {
        if ((*r)[i - 1].score < (*r)[i].score) std::abort();  // must be sorted
      }
    }
  }
}

void Tokenize(const uint8_t* data, size_t size) {
  if (size < 3) return;
  const FtsParams p = ParamsFrom(data[1], data[2]);
  auto t = Tokenizer::Make(p);
  if (!t.ok()) std::abort();
  const std::string_view text(reinterpret_cast<const char*>(data + 3), size - 3);
  const auto tokens = (*t)->Tokenize(text);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].term.empty()) std::abort();
    if (tokens[i].term.size() > static_cast<size_t>(p.max_token_length) * 18 * 3) std::abort();
    if (i > 0 && tokens[i].position <= tokens[i - 1].position) std::abort();
  }
}

void Deserialize(std::string_view bytes) {
  auto idx = InvertedIndex::Deserialize(bytes);
  if (!idx.ok()) return;
  ExerciseIndex(**idx, "a b");
  auto again = (*idx)->Serialize();
  if (!again.ok() || *again != bytes) std::abort();  // canonical form
}

void IndexAndRoundTrip(const uint8_t* data, size_t size) {
  if (size < 3) return;
  const FtsParams p = ParamsFrom(data[1], data[2]);
  std::vector<std::optional<std::string>> docs;
  std::string cur;
  for (size_t i = 3; i < size; ++i) {
    if (data[i] == '\n') {
      docs.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  docs.push_back(cur);
  auto idx = InvertedIndex::Make(p);
  if (!idx.ok()) std::abort();
  strata::arrow::Array col(strata::arrow::MakeUtf8Array(docs));
  if (!(*idx)->AddColumn(col, 0).ok()) std::abort();
  auto bytes = (*idx)->Serialize();
  if (!bytes.ok()) std::abort();
  auto back = InvertedIndex::Deserialize(*bytes);
  if (!back.ok()) std::abort();
  if ((*back)->num_docs() != (*idx)->num_docs()) std::abort();
  const std::string q = docs.front().value_or("");
  FtsQuery fq;
  fq.text = q;
  const auto terms = (*idx)->QueryTerms(fq);
  auto a = (*idx)->Search(fq, (*idx)->Stats(terms), -1);
  auto b = (*back)->Search(fq, (*back)->Stats(terms), -1);
  if (!a.ok() || !b.ok() || a->size() != b->size()) std::abort();
  for (size_t i = 0; i < a->size(); ++i) {
    if ((*a)[i].position != (*b)[i].position || (*a)[i].score != (*b)[i].score) std::abort();
  }
  // Every document matches its own terms (when it has any).
  if (!terms.empty() && a->empty()) std::abort();
  ExerciseIndex(**back, q);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0:
      Tokenize(data, size);
      break;
    case 1:
      Deserialize(rest);
      break;
    case 2: {
      std::string sealed(rest);
      const uint64_t h = XXH64(sealed.data(), sealed.size(), 0);
      for (int i = 0; i < 8; ++i) sealed.push_back(static_cast<char>((h >> (8 * i)) & 0xFF));
      Deserialize(sealed);
      break;
    }
    default:
      IndexAndRoundTrip(data, size);
  }
  return 0;
}
