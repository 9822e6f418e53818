#include "index/fts/tokenizer.h"

#include <libstemmer.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>

namespace strata::index {

namespace {

// The Lucene / tantivy English stop word list (33 words), sorted for binary search.
constexpr std::array<std::string_view, 33> kStopWords = {
    "a",   "an",    "and",  "are",   "as",    "at",   "be",   "but", "by",  "for",  "if",
    "in",  "into",  "is",   "it",    "no",    "not",  "of",   "on",  "or",  "such", "that",
    "the", "their", "then", "there", "these", "they", "this", "to",  "was", "will", "with"};

bool IsAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Simple tokenizer: a code point is part of a token when it is a Unicode letter or number.
bool IsWordChar(utf8proc_int32_t cp) {
  if (cp < 0x80) {
    return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
  }
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

// Whitespace tokenizer: Unicode White_Space (Zs, Zl, Zp plus the C0 / C1 white space controls).
bool IsWhiteSpace(utf8proc_int32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85) return true;
  if (cp < 0x80) return false;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      return true;
    default:
      return false;
  }
}

void AppendCodePoint(utf8proc_int32_t cp, std::string* out) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
  out->append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// Unicode lower-casing, code point by code point (utf8proc_tolower). `s` is valid UTF-8.
void LowerCase(std::string* s) {
  if (IsAscii(*s)) {
    for (char& c : *s) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return;
  }
  std::string out;
  out.reserve(s->size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s->data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s->size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) break;  // cannot happen: tokens are built from decoded code points
    AppendCodePoint(utf8proc_tolower(cp), &out);
    p += n;
    left -= n;
  }
  *s = std::move(out);
}

// ASCII folding: compatibility decomposition (NFKD) with the marks stripped.
void AsciiFold(std::string* s) {
  if (IsAscii(*s)) return;
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(s->data()),
      static_cast<utf8proc_ssize_t>(s->size()), &out,
      static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT | UTF8PROC_STRIPMARK));
  if (n >= 0 && out != nullptr)
    s->assign(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
}

// One Snowball English stemmer per thread: an sb_stemmer holds mutable state and is not
// thread-safe, and every Tokenizer uses the same algorithm and encoding.
struct ThreadStemmer {
  sb_stemmer* stemmer = sb_stemmer_new("english", "UTF_8");
  ~ThreadStemmer() {
    if (stemmer != nullptr) sb_stemmer_delete(stemmer);
  }
};

sb_stemmer* GetThreadStemmer() {
  thread_local ThreadStemmer holder;
  return holder.stemmer;
}

void Stem(std::string* s) {
  sb_stemmer* st = GetThreadStemmer();
  if (st == nullptr) return;  // allocation failure: keep the unstemmed term
  const sb_symbol* out = sb_stemmer_stem(st, reinterpret_cast<const sb_symbol*>(s->data()),
                                         static_cast<int>(s->size()));
  if (out == nullptr) return;
  const int n = sb_stemmer_length(st);
  if (n > 0) s->assign(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

struct Tokenizer::Impl {
  FtsParams params;
  bool whitespace = false;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Result<std::shared_ptr<const Tokenizer>> Tokenizer::Make(const FtsParams& params) {
  if (params.base_tokenizer != "simple" && params.base_tokenizer != "whitespace") {
    return Status::NotSupported("FTS base_tokenizer '" + params.base_tokenizer +
                                "' is not supported (supported: simple, whitespace)");
  }
  if (!EqualsIgnoreAsciiCase(params.language, "English")) {
    return Status::NotSupported("FTS language '" + params.language +
                                "' is not supported (supported: English)");
  }
  if (params.max_token_length < 1 || params.max_token_length > kMaxTokenLengthLimit) {
    return Status::Invalid("FTS max_token_length must be in [1, " +
                           std::to_string(kMaxTokenLengthLimit) + "], got " +
                           std::to_string(params.max_token_length));
  }
  if (params.stem && GetThreadStemmer() == nullptr) {
    return Status::Internal("cannot create the Snowball English stemmer");
  }
  auto impl = std::make_unique<Impl>();
  impl->params = params;
  impl->whitespace = params.base_tokenizer == "whitespace";
  return std::shared_ptr<const Tokenizer>(new Tokenizer(std::move(impl)));
}

const FtsParams& Tokenizer::params() const { return impl_->params; }

bool Tokenizer::IsStopWord(std::string_view word) {
  return std::binary_search(kStopWords.begin(), kStopWords.end(), word);
}

std::vector<Token> Tokenizer::Tokenize(std::string_view text) const {
  const FtsParams& p = impl_->params;
  std::vector<Token> tokens;
  uint32_t position = 0;
  std::string term;

  // Runs the filters on one base token and advances the position.
  auto emit = [&](std::string_view raw) {
    const uint32_t pos = position;
    if (position < std::numeric_limits<uint32_t>::max()) ++position;
    if (raw.size() > static_cast<size_t>(p.max_token_length)) return;
    term.assign(raw);
    if (p.ascii_folding) AsciiFold(&term);
    if (p.lower_case) LowerCase(&term);
    if (term.empty()) return;
    if (p.remove_stop_words && IsStopWord(term)) return;
    if (p.stem) Stem(&term);
    if (term.empty()) return;
    tokens.push_back(Token{term, pos});
  };

  const auto* base = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const utf8proc_ssize_t size = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t i = 0;
  utf8proc_ssize_t start = -1;  // start of the current token, -1 when outside one
  while (i < size) {
    utf8proc_int32_t cp = -1;
    utf8proc_ssize_t n;
    if (base[i] < 0x80) {
      cp = base[i];
      n = 1;
    } else {
      n = utf8proc_iterate(base + i, size - i, &cp);
    }
    bool in_token;
    if (n <= 0) {
      n = 1;  // invalid UTF-8 byte: a separator
      in_token = false;
    } else {
      in_token = impl_->whitespace ? !IsWhiteSpace(cp) : IsWordChar(cp);
    }
    if (in_token) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      emit(text.substr(static_cast<size_t>(start), static_cast<size_t>(i - start)));
      start = -1;
    }
    i += n;
  }
  if (start >= 0) emit(text.substr(static_cast<size_t>(start)));
  return tokens;
}

}  // namespace strata::index
