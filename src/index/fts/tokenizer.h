// Full-text tokenizer with the LanceDB FTS parameters (PROTOCOL.md §5.4, `Index.fts()`):
//   base_tokenizer "simple": split on every code point that is not a Unicode letter or number
//     (utf8proc categories L* and N*); "whitespace": split on Unicode white space only;
//   lower_case: Unicode lower-casing (utf8proc);
//   ascii_folding: decompose (NFKD) and drop combining marks, so "café" -> "cafe" (utf8proc);
//   remove_stop_words: drop the English stop words (the Lucene/tantivy English list) after
//     lower-casing and before stemming;
//   stem: Snowball English stemmer (Debian libstemmer: "running" -> "run");
//   max_token_length: tokens longer than this many bytes (before stemming) are dropped, as
//     tantivy's RemoveLongFilter does;
//   with_position: the index keeps token positions (phrase queries).
// Filter order per base token: max_token_length (on the raw bytes), ascii_folding, lower_case,
// remove_stop_words, stem. A token that folding leaves empty is dropped.
// Positions count every token produced by the base tokenizer (dropped stop words and long
// tokens still advance the position), so a phrase never matches across a removed word.
// Invalid UTF-8 bytes are treated as separators.
// Thread-safety: a Tokenizer is immutable and may be used from many threads at once (each
// call creates or borrows its own Snowball stemmer state).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::index {

/// Largest accepted FtsParams::max_token_length (bytes).
inline constexpr int kMaxTokenLengthLimit = 1024;

/// The FTS parameters of create_index (defaults are `Index.fts()`'s).
struct FtsParams {
  std::string base_tokenizer = "simple";  // "simple" | "whitespace"
  std::string language = "English";       // only English is supported
  bool with_position = false;
  int max_token_length = 40;  // bytes, in [1, 1024]
  bool lower_case = true;
  bool stem = true;
  bool remove_stop_words = true;
  bool ascii_folding = true;
};

/// One token: its final term and its position (0-based token ordinal in the text).
struct Token {
  std::string term;
  uint32_t position = 0;
};

class Tokenizer {
 public:
  /// Errors: NotSupported naming the field for another base_tokenizer or language; Invalid for
  /// max_token_length out of range.
  static Result<std::shared_ptr<const Tokenizer>> Make(const FtsParams& params);
  ~Tokenizer();

  const FtsParams& params() const;
  /// Tokens of `text` in order.
  std::vector<Token> Tokenize(std::string_view text) const;
  /// Whether `word` (already lower-cased) is an English stop word.
  static bool IsStopWord(std::string_view word);

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::index
