#include "index/fts/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace strata::index {
namespace {

std::vector<std::pair<std::string, uint32_t>> Tok(const FtsParams& p, std::string_view text) {
  auto t = Tokenizer::Make(p);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  std::vector<std::pair<std::string, uint32_t>> out;
  for (const Token& tok : (*t)->Tokenize(text)) out.emplace_back(tok.term, tok.position);
  return out;
}

using Pairs = std::vector<std::pair<std::string, uint32_t>>;

TEST(FtsTokenizerTest, DefaultPipeline) {
  FtsParams p;  // simple, lower_case, ascii_folding, stop words, stem
  // "The" and "are" are stop words but still advance the position.
  EXPECT_EQ(Tok(p, "The Runners are RUNNING, quickly!"),
            (Pairs{{"runner", 1}, {"run", 3}, {"quick", 4}}));
  EXPECT_EQ(Tok(p, "Café crème"), (Pairs{{"cafe", 0}, {"creme", 1}}));
  // Decomposed e + U+0301: the mark is a separator for "simple", folding gives the same term.
  EXPECT_EQ(Tok(p, "cafe\xCC\x81"), (Pairs{{"cafe", 0}}));
  EXPECT_TRUE(Tok(p, "").empty());
  EXPECT_TRUE(Tok(p, " ,.;-- ").empty());
}

TEST(FtsTokenizerTest, EachFilterCanBeTurnedOff) {
  FtsParams p;
  p.stem = false;
  p.remove_stop_words = false;
  p.lower_case = false;
  p.ascii_folding = false;
  EXPECT_EQ(Tok(p, "The Running Café"), (Pairs{{"The", 0}, {"Running", 1}, {"Café", 2}}));
  p.lower_case = true;
  EXPECT_EQ(Tok(p, "The ÉCOLE"), (Pairs{{"the", 0}, {"école", 1}}));
  p.ascii_folding = true;
  EXPECT_EQ(Tok(p, "The ÉCOLE"), (Pairs{{"the", 0}, {"ecole", 1}}));
  p.remove_stop_words = true;
  EXPECT_EQ(Tok(p, "The ÉCOLE"), (Pairs{{"ecole", 1}}));
}

TEST(FtsTokenizerTest, SimpleSplitsOnNonAlphanumericUnicode) {
  FtsParams p;
  p.stem = false;
  // Letters of any script and numbers are token characters; CJK ideographs are Lo.
  EXPECT_EQ(Tok(p, "straße_東京 42nd/x"),
            (Pairs{{"straße", 0}, {"東京", 1}, {"42nd", 2}, {"x", 3}}));
  // Invalid UTF-8 bytes separate tokens.
  EXPECT_EQ(Tok(p, std::string("ab\xFF"
                               "cd\xC3") +
                       "ef"),
            (Pairs{{"ab", 0}, {"cd", 1}, {"ef", 2}}));
}

TEST(FtsTokenizerTest, WhitespaceTokenizer) {
  FtsParams p;
  p.base_tokenizer = "whitespace";
  p.stem = false;
  // Punctuation stays in the token; NBSP (U+00A0) and ideographic space (U+3000) split.
  EXPECT_EQ(Tok(p,
                "Hello-World  foo,bar\xC2\xA0"
                "baz\xE3\x80\x80qux\tend"),
            (Pairs{{"hello-world", 0}, {"foo,bar", 1}, {"baz", 2}, {"qux", 3}, {"end", 4}}));
}

TEST(FtsTokenizerTest, MaxTokenLengthDropsLongTokensOnRawBytes) {
  FtsParams p;
  p.max_token_length = 5;
  // "toolong" (7 bytes) is dropped; "ééé" is 6 raw bytes (3 after folding) and is dropped too;
  // positions still advance.
  EXPECT_EQ(Tok(p, "short toolong ééé ok"), (Pairs{{"short", 0}, {"ok", 3}}));
  p.max_token_length = 7;
  EXPECT_EQ(Tok(p, "toolong"), (Pairs{{"toolong", 0}}));
}

TEST(FtsTokenizerTest, StopWordList) {
  const char* words[] = {"a",    "an",   "and",  "are",  "as",   "at",    "be",   "but",   "by",
                         "for",  "if",   "in",   "into", "is",   "it",    "no",   "not",   "of",
                         "on",   "or",   "such", "that", "the",  "their", "then", "there", "these",
                         "they", "this", "to",   "was",  "will", "with"};
  for (const char* w : words) EXPECT_TRUE(Tokenizer::IsStopWord(w)) << w;
  EXPECT_EQ(sizeof(words) / sizeof(words[0]), 33u);
  for (const char* w : {"", "The", "an apple", "apple", "yes", "thei", "wit"}) {
    EXPECT_FALSE(Tokenizer::IsStopWord(w)) << w;
  }
}

TEST(FtsTokenizerTest, MakeRejectsBadParameters) {
  FtsParams p;
  p.base_tokenizer = "ngram";
  auto r = Tokenizer::Make(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("base_tokenizer"), std::string::npos);

  p = FtsParams();
  p.language = "French";
  r = Tokenizer::Make(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("language"), std::string::npos);

  for (int bad : {0, -1, 1025}) {
    p = FtsParams();
    p.max_token_length = bad;
    r = Tokenizer::Make(p);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInvalid());
    EXPECT_NE(r.status().message().find("max_token_length"), std::string::npos);
  }
  p = FtsParams();
  p.max_token_length = 1024;
  EXPECT_TRUE(Tokenizer::Make(p).ok());
}

}  // namespace
}  // namespace strata::index
