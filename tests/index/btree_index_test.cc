#include "index/scalar/btree_index.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "arrow/builder.h"
#include "format/key_encoding.h"
#include "format/little_endian.h"

namespace strata::index {
namespace {

// --- A value model and a brute-force evaluator (SQL semantics, PostgreSQL float order) --------

enum class Kind { kInt64, kFloat64, kUtf8, kBool, kTimestamp };
using Lit = std::variant<int64_t, double, std::string, bool>;
using Value = std::optional<Lit>;  // nullopt = SQL null

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kInt64:
      return "int64";
    case Kind::kFloat64:
      return "float64";
    case Kind::kUtf8:
      return "utf8";
    case Kind::kBool:
      return "bool";
    case Kind::kTimestamp:
      return "timestamp";
  }
  return "?";
}

arrow::DataTypePtr TypeOf(Kind k) {
  switch (k) {
    case Kind::kInt64:
      return arrow::int64();
    case Kind::kFloat64:
      return arrow::float64();
    case Kind::kUtf8:
      return arrow::utf8();
    case Kind::kBool:
      return arrow::boolean();
    case Kind::kTimestamp:
      return arrow::timestamp(arrow::TimeUnit::kMicro, "UTC");
  }
  return nullptr;
}

int Sign(int64_t c) { return (c > 0) - (c < 0); }

// Three-way comparison of two non-null values of one kind. Floats: -0.0 == +0.0, NaN == NaN
// and NaN above everything else (PostgreSQL); strings: unsigned bytes.
int Cmp(const Lit& a, const Lit& b) {
  if (const auto* x = std::get_if<int64_t>(&a)) {
    const int64_t y = std::get<int64_t>(b);
    return *x < y ? -1 : (*x > y ? 1 : 0);
  }
  if (const auto* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    const bool xn = std::isnan(*x), yn = std::isnan(y);
    if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
    return *x < y ? -1 : (*x > y ? 1 : 0);
  }
  if (const auto* x = std::get_if<std::string>(&a)) {
    const std::string& y = std::get<std::string>(b);
    const size_t n = std::min(x->size(), y.size());
    const int c = n == 0 ? 0 : std::memcmp(x->data(), y.data(), n);
    if (c != 0) return Sign(c);
    return Sign(static_cast<int64_t>(x->size()) - static_cast<int64_t>(y.size()));
  }
  const bool x = std::get<bool>(a), y = std::get<bool>(b);
  return static_cast<int>(x) - static_cast<int>(y);
}

Lit RandomLit(Kind k, std::mt19937_64& rng) {
  switch (k) {
    case Kind::kInt64: {
      const int r = static_cast<int>(rng() % 50);
      if (r == 0) return std::numeric_limits<int64_t>::min();
      if (r == 1) return std::numeric_limits<int64_t>::max();
      return static_cast<int64_t>(rng() % 41) - 20;
    }
    case Kind::kFloat64: {
      static const double kSpecial[] = {-std::numeric_limits<double>::infinity(),
                                        -1.5,
                                        -0.0,
                                        0.0,
                                        0.5,
                                        std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN(),
                                        -std::numeric_limits<double>::quiet_NaN(),
                                        std::numeric_limits<double>::denorm_min(),
                                        -std::numeric_limits<double>::denorm_min()};
      if (rng() % 3 == 0) return kSpecial[rng() % std::size(kSpecial)];
      return (static_cast<double>(rng() % 81) - 40.0) / 4.0;
    }
    case Kind::kUtf8: {
      static const char kAlphabet[] = {'\0', 'a', 'b', '\x7f'};
      std::string s(rng() % 4, ' ');
      for (char& c : s) c = kAlphabet[rng() % 4];
      return s;
    }
    case Kind::kBool:
      return rng() % 2 == 0;
    case Kind::kTimestamp:
      return int64_t{1'700'000'000'000'000} + (static_cast<int64_t>(rng() % 31) - 15) * 1'000'000;
  }
  return false;
}

Value RandomValue(Kind k, std::mt19937_64& rng, int null_percent = 15) {
  if (static_cast<int>(rng() % 100) < null_percent) return std::nullopt;
  return RandomLit(k, rng);
}

std::string Encode(Kind k, const Value& v) {
  std::string out;
  if (!v) {
    format::AppendNullComponent(&out);
    return out;
  }
  switch (k) {
    case Kind::kInt64:
    case Kind::kTimestamp:
      format::AppendSignedComponent(std::get<int64_t>(*v), 8, &out);
      break;
    case Kind::kFloat64:
      format::AppendFloat64Component(std::get<double>(*v), &out);
      break;
    case Kind::kUtf8:
      format::AppendBytesComponent(std::get<std::string>(*v), &out);
      break;
    case Kind::kBool:
      format::AppendBoolComponent(std::get<bool>(*v), &out);
      break;
  }
  return out;
}

// An array of `values` (with `pad` extra rows before and after, sliced away when pad > 0, so
// the index sees a non-zero offset).
arrow::Array MakeArray(Kind k, const std::vector<Value>& values, int pad = 0) {
  arrow::ArrayBuilder b(TypeOf(k));
  auto append = [&](const Value& v) {
    Status st;
    if (!v) {
      st = b.AppendNull();
    } else if (k == Kind::kInt64 || k == Kind::kTimestamp) {
      st = b.AppendInt(std::get<int64_t>(*v));
    } else if (k == Kind::kFloat64) {
      st = b.AppendDouble(std::get<double>(*v));
    } else if (k == Kind::kUtf8) {
      st = b.AppendBytes(std::get<std::string>(*v));
    } else {
      st = b.AppendBool(std::get<bool>(*v));
    }
    EXPECT_TRUE(st.ok()) << st.ToString();
  };
  for (int i = 0; i < pad; ++i) append(std::nullopt);
  for (const Value& v : values) append(v);
  std::mt19937_64 pad_rng(static_cast<uint64_t>(pad));
  for (int i = 0; i < pad; ++i) append(RandomLit(k, pad_rng));
  auto data = b.Finish();
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  arrow::Array a(*data);
  return pad > 0 ? a.Slice(pad, static_cast<int64_t>(values.size())) : a;
}

std::unique_ptr<BTreeIndex> MakeIndex(arrow::DataTypePtr type, const std::string& name) {
  auto r = BTreeIndex::Make(std::move(type), name);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

struct Row {
  int64_t pos;
  Value v;
};

template <typename Pred>
std::vector<int64_t> Brute(const std::vector<Row>& rows, Pred pred) {
  std::vector<int64_t> out;
  for (const Row& r : rows) {
    if (pred(r.v)) out.push_back(r.pos);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Compares every operator of `index` with the brute force over `rows` for `iterations` random
// literals.
void CheckAgainstBrute(const BTreeIndex& index, Kind k, const std::vector<Row>& rows,
                       std::mt19937_64& rng, int iterations) {
  SCOPED_TRACE(KindName(k));
  auto cmp_pred = [](const Lit& lit, auto op) {
    return [&lit, op](const Value& v) { return v.has_value() && op(Cmp(*v, lit)); };
  };
  ASSERT_EQ(index.size(), static_cast<int64_t>(rows.size()));
  EXPECT_EQ(index.IsNull(), Brute(rows, [](const Value& v) { return !v.has_value(); }));
  EXPECT_EQ(index.Equal(Encode(k, std::nullopt)), std::vector<int64_t>{});
  for (int it = 0; it < iterations; ++it) {
    const Lit a = RandomLit(k, rng);
    const Lit b = RandomLit(k, rng);
    const std::string ka = Encode(k, a), kb = Encode(k, b);
    SCOPED_TRACE(format::KeyToDebugString(ka) + " / " + format::KeyToDebugString(kb));
    EXPECT_EQ(index.Equal(ka), Brute(rows, cmp_pred(a, [](int c) { return c == 0; })));
    EXPECT_EQ(index.NotEqual(ka), Brute(rows, cmp_pred(a, [](int c) { return c != 0; })));
    EXPECT_EQ(index.Range(std::nullopt, KeyBound{ka, false}),
              Brute(rows, cmp_pred(a, [](int c) { return c < 0; })));
    EXPECT_EQ(index.Range(std::nullopt, KeyBound{ka, true}),
              Brute(rows, cmp_pred(a, [](int c) { return c <= 0; })));
    EXPECT_EQ(index.Range(KeyBound{ka, false}, std::nullopt),
              Brute(rows, cmp_pred(a, [](int c) { return c > 0; })));
    EXPECT_EQ(index.Range(KeyBound{ka, true}, std::nullopt),
              Brute(rows, cmp_pred(a, [](int c) { return c >= 0; })));
    // BETWEEN a AND b (empty when a > b), and the half-open variants.
    for (int mask = 0; mask < 4; ++mask) {
      const bool li = mask & 1, ui = mask & 2;
      auto want = Brute(rows, [&](const Value& v) {
        if (!v) return false;
        const int ca = Cmp(*v, a), cb = Cmp(*v, b);
        return (li ? ca >= 0 : ca > 0) && (ui ? cb <= 0 : cb < 0);
      });
      EXPECT_EQ(index.Range(KeyBound{ka, li}, KeyBound{kb, ui}), want) << "mask " << mask;
    }
    // IN over 0..5 literals, with duplicates and a null literal (ignored).
    std::vector<Lit> lits;
    std::vector<std::string> keys;
    const int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      lits.push_back(i > 0 && rng() % 4 == 0 ? lits[0] : RandomLit(k, rng));
      keys.push_back(Encode(k, lits.back()));
    }
    if (rng() % 3 == 0) keys.push_back(Encode(k, std::nullopt));
    EXPECT_EQ(index.In(keys), Brute(rows, [&](const Value& v) {
                return v && std::any_of(lits.begin(), lits.end(),
                                        [&](const Lit& l) { return Cmp(*v, l) == 0; });
              }));
  }
  EXPECT_EQ(index.Range(std::nullopt, std::nullopt),
            Brute(rows, [](const Value& v) { return v.has_value(); }));
}

// Random rows in `batches` batches with gaps between their positions, added out of order; one
// batch goes in as a slice (non-zero array offset).
std::unique_ptr<BTreeIndex> BuildRandom(Kind k, int n, int batches, std::mt19937_64& rng,
                                        std::vector<Row>* rows, int null_percent = 15) {
  auto made = BTreeIndex::Make(TypeOf(k), "col");
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<BTreeIndex> index = std::move(*made);
  struct Batch {
    int64_t first;
    std::vector<Value> values;
  };
  std::vector<Batch> bs;
  int64_t next = static_cast<int64_t>(rng() % 10);
  for (int b = 0; b < batches; ++b) {
    Batch batch;
    batch.first = next;
    const int len = n / batches + (b == batches - 1 ? n % batches : 0);
    for (int i = 0; i < len; ++i) batch.values.push_back(RandomValue(k, rng, null_percent));
    next += len + static_cast<int64_t>(rng() % 100);
    bs.push_back(std::move(batch));
  }
  std::shuffle(bs.begin(), bs.end(), rng);
  for (size_t b = 0; b < bs.size(); ++b) {
    const arrow::Array arr = MakeArray(k, bs[b].values, b == 0 ? 3 : 0);
    Status st = index->AddColumn(arr, bs[b].first);
    EXPECT_TRUE(st.ok()) << st.ToString();
    for (size_t i = 0; i < bs[b].values.size(); ++i) {
      rows->push_back({bs[b].first + static_cast<int64_t>(i), bs[b].values[i]});
    }
  }
  return index;
}

const Kind kKinds[] = {Kind::kInt64, Kind::kFloat64, Kind::kUtf8, Kind::kBool, Kind::kTimestamp};

TEST(BTreeIndex, EveryOperatorMatchesBruteForce) {
  for (Kind k : kKinds) {
    std::mt19937_64 rng(1234 + static_cast<int>(k));
    std::vector<Row> rows;
    auto index = BuildRandom(k, 3000, 5, rng, &rows);
    CheckAgainstBrute(*index, k, rows, rng, 150);
    EXPECT_GT(index->memory_bytes(), 3000 * 8);
  }
}

TEST(BTreeIndex, FloatZerosAndNaNsAreEqual) {
  auto index = MakeIndex(arrow::float64(), "f");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Value> values = {0.0,
                                     -0.0,
                                     nan,
                                     -nan,
                                     1.0,
                                     std::nullopt,
                                     -std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::infinity()};
  ASSERT_TRUE(index->AddColumn(MakeArray(Kind::kFloat64, values), 100).ok());
  EXPECT_EQ(index->Equal(Encode(Kind::kFloat64, -0.0)), (std::vector<int64_t>{100, 101}));
  EXPECT_EQ(index->Equal(Encode(Kind::kFloat64, 0.0)), (std::vector<int64_t>{100, 101}));
  EXPECT_EQ(index->Equal(Encode(Kind::kFloat64, nan)), (std::vector<int64_t>{102, 103}));
  // NaN sorts above +inf; nulls are excluded from every comparison.
  EXPECT_EQ(index->Range(KeyBound{Encode(Kind::kFloat64, 1.0), false}, std::nullopt),
            (std::vector<int64_t>{102, 103, 107}));
  EXPECT_EQ(index->Range(std::nullopt, KeyBound{Encode(Kind::kFloat64, 0.0), true}),
            (std::vector<int64_t>{100, 101, 106}));
  EXPECT_EQ(index->NotEqual(Encode(Kind::kFloat64, 0.0)),
            (std::vector<int64_t>{102, 103, 104, 106, 107}));
  EXPECT_EQ(index->IsNull(), std::vector<int64_t>{105});
}

TEST(BTreeIndex, BatchesWithOffsetsAndRepeats) {
  auto index = MakeIndex(arrow::int64(), "x");
  const std::vector<Value> a = {int64_t{5}, std::nullopt, int64_t{7}, int64_t{5}};
  const std::vector<Value> b = {int64_t{7}, int64_t{5}};
  ASSERT_TRUE(index->AddColumn(MakeArray(Kind::kInt64, a), 1000).ok());
  ASSERT_TRUE(index->AddColumn(MakeArray(Kind::kInt64, b), 10).ok());  // earlier positions later
  ASSERT_TRUE(index->AddColumn(MakeArray(Kind::kInt64, b, 2), 500).ok());  // a slice
  EXPECT_EQ(index->size(), 8);
  EXPECT_EQ(index->Equal(Encode(Kind::kInt64, int64_t{5})),
            (std::vector<int64_t>{11, 501, 1000, 1003}));
  EXPECT_EQ(index->Equal(Encode(Kind::kInt64, int64_t{7})), (std::vector<int64_t>{10, 500, 1002}));
  EXPECT_EQ(index->IsNull(), std::vector<int64_t>{1001});
  // Re-adding the same rows at the same positions changes nothing.
  ASSERT_TRUE(index->AddColumn(MakeArray(Kind::kInt64, a), 1000).ok());
  EXPECT_EQ(index->size(), 8);
  EXPECT_EQ(index->In({Encode(Kind::kInt64, int64_t{7}), Encode(Kind::kInt64, int64_t{5}),
                       Encode(Kind::kInt64, int64_t{7})}),
            (std::vector<int64_t>{10, 11, 500, 501, 1000, 1002, 1003}));
}

TEST(BTreeIndex, RejectsBadInput) {
  auto nested = BTreeIndex::Make(arrow::list(arrow::field("item", arrow::int32())), "tags");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(nested.status().message().find("tags"), std::string::npos);

  auto index = MakeIndex(arrow::int64(), "x");
  Status st = index->AddColumn(MakeArray(Kind::kUtf8, {std::string("a")}), 0);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("utf8"), std::string::npos);
  st = index->AddColumn(MakeArray(Kind::kInt64, {int64_t{1}}), -1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = index->AddColumn(MakeArray(Kind::kInt64, {int64_t{1}, int64_t{2}}),
                        std::numeric_limits<int64_t>::max());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(index->size(), 0);  // failed adds change nothing
  // A timestamp index rejects another unit.
  auto ts = MakeIndex(TypeOf(Kind::kTimestamp), "t");
  arrow::ArrayBuilder nb(arrow::timestamp(arrow::TimeUnit::kNano, "UTC"));
  ASSERT_TRUE(nb.AppendInt(1).ok());
  EXPECT_EQ(ts->AddColumn(arrow::Array(*nb.Finish()), 0).code(), StatusCode::kInvalidArgument);
}

TEST(BTreeIndex, SerializeRoundTripAnswersEqually) {
  for (Kind k : kKinds) {
    std::mt19937_64 rng(99 + static_cast<int>(k));
    std::vector<Row> rows;
    // 10,000 rows: several 4,096-entry pages, runs of one key crossing page boundaries.
    auto index = BuildRandom(k, 10000, 4, rng, &rows);
    auto bytes = index->Serialize();
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    auto back = BTreeIndex::Deserialize(*bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE((*back)->type()->Equals(*TypeOf(k))) << (*back)->type()->ToString();
    EXPECT_EQ((*back)->column_name(), "col");
    EXPECT_EQ((*back)->size(), index->size());
    CheckAgainstBrute(**back, k, rows, rng, 40);
    // Deterministic: the loaded index serializes to the same bytes.
    auto again = (*back)->Serialize();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *bytes);
    // The loaded index takes appends like the original.
    Value extra = RandomLit(k, rng);
    ASSERT_TRUE((*back)->AddColumn(MakeArray(k, {extra}), 1'000'000).ok());
    auto hits = (*back)->Equal(Encode(k, extra));
    ASSERT_FALSE(hits.empty());
    EXPECT_EQ(hits.back(), 1'000'000);
  }
}

TEST(BTreeIndex, EmptyAndAllNullRoundTrip) {
  auto empty = MakeIndex(arrow::utf8(), "s");
  auto bytes = empty->Serialize();
  ASSERT_TRUE(bytes.ok());
  auto back = BTreeIndex::Deserialize(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->size(), 0);
  EXPECT_TRUE((*back)->IsNull().empty());

  auto nulls = MakeIndex(arrow::null(), "n");
  arrow::ArrayBuilder nb(arrow::null());
  ASSERT_TRUE(nb.AppendNulls(5).ok());
  ASSERT_TRUE(nulls->AddColumn(arrow::Array(*nb.Finish()), 3).ok());
  auto nbytes = nulls->Serialize();
  ASSERT_TRUE(nbytes.ok());
  auto nback = BTreeIndex::Deserialize(*nbytes);
  ASSERT_TRUE(nback.ok()) << nback.status().ToString();
  EXPECT_EQ((*nback)->IsNull(), (std::vector<int64_t>{3, 4, 5, 6, 7}));
  EXPECT_TRUE((*nback)->Range(std::nullopt, std::nullopt).empty());
}

// A serialized int64 index of 6,000 rows (two pages) over few distinct values.
std::string SampleBytes() {
  std::mt19937_64 rng(7);
  std::vector<Row> rows;
  auto index = BuildRandom(Kind::kInt64, 6000, 3, rng, &rows);
  return *index->Serialize();
}

void FixChecksum(std::string* b) {
  const size_t n = b->size() - 8;
  std::string sum;
  format::PutU64(&sum, XXH64(b->data(), n, 0));
  b->replace(n, 8, sum);
}

TEST(BTreeIndex, EveryTruncationIsCorruption) {
  const std::string bytes = SampleBytes();
  ASSERT_GT(bytes.size(), 48000u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = BTreeIndex::Deserialize(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << "truncated to " << n;
    ASSERT_EQ(r.status().code(), StatusCode::kCorruption) << n << ": " << r.status().ToString();
  }
  // Trailing garbage too.
  EXPECT_EQ(BTreeIndex::Deserialize(bytes + "x").status().code(), StatusCode::kCorruption);
}

TEST(BTreeIndex, ByteFlipsAreCorruption) {
  const std::string bytes = SampleBytes();
  std::mt19937_64 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::string b = bytes;
    const size_t at = rng() % b.size();
    b[at] = static_cast<char>(b[at] ^ (1u << (rng() % 8)));
    auto r = BTreeIndex::Deserialize(b);
    ASSERT_FALSE(r.ok()) << "flip at " << at;
    ASSERT_EQ(r.status().code(), StatusCode::kCorruption) << at << ": " << r.status().ToString();
  }
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_NE(BTreeIndex::Deserialize(magic).status().message().find("magic"), std::string::npos);
  std::string sum = bytes;
  sum.back() = static_cast<char>(sum.back() ^ 1);
  EXPECT_NE(BTreeIndex::Deserialize(sum).status().message().find("checksum"), std::string::npos);
}

TEST(BTreeIndex, StructuralDamageWithValidChecksumIsCorruption) {
  const std::string bytes = SampleBytes();
  const size_t last_pos = bytes.size() - 16;  // the last position of the last group
  std::string b = bytes;
  b.replace(last_pos, 8, std::string(8, '\0'));  // position 0 after larger ones
  FixChecksum(&b);
  auto r = BTreeIndex::Deserialize(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("order"), std::string::npos) << r.status().ToString();

  b = bytes;
  b.replace(last_pos, 8, std::string(8, '\xff'));  // -1
  FixChecksum(&b);
  r = BTreeIndex::Deserialize(b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("negative"), std::string::npos) << r.status().ToString();

  b = bytes;
  b[8] = 2;  // version
  FixChecksum(&b);
  EXPECT_NE(BTreeIndex::Deserialize(b).status().message().find("version"), std::string::npos);

  // Random flips with a recomputed checksum: an error is Corruption; a success (a flip that
  // leaves a well-formed index, e.g. a changed position) still answers sorted, unique rows.
  std::mt19937_64 rng(5);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    b = bytes;
    const size_t at = rng() % (b.size() - 8);
    b[at] = static_cast<char>(b[at] ^ (1u << (rng() % 8)));
    FixChecksum(&b);
    auto d = BTreeIndex::Deserialize(b);
    if (!d.ok()) {
      ASSERT_EQ(d.status().code(), StatusCode::kCorruption) << d.status().ToString();
      ++rejected;
      continue;
    }
    auto all = (*d)->NotEqual(Encode(Kind::kInt64, int64_t{0}));
    ASSERT_TRUE(std::adjacent_find(all.begin(), all.end(), std::greater_equal<int64_t>()) ==
                all.end());
  }
  EXPECT_GT(rejected, 300);  // positions are most of the bytes; structure flips are caught
}

TEST(BTreeIndex, ConcurrentReadersDuringAppends) {
  constexpr int kBatches = 100;
  constexpr int kBatchRows = 500;
  std::mt19937_64 rng(3);
  std::vector<std::optional<int64_t>> values;
  for (int i = 0; i < kBatches * kBatchRows; ++i) {
    if (rng() % 10 == 0) {
      values.emplace_back(std::nullopt);
    } else {
      values.emplace_back(static_cast<int64_t>(rng() % 101) - 50);
    }
  }
  auto index = MakeIndex(arrow::int64(), "x");
  std::vector<arrow::Array> arrays;
  for (int b = 0; b < kBatches; ++b) {
    arrow::ArrayBuilder builder(arrow::int64());
    for (int i = b * kBatchRows; i < (b + 1) * kBatchRows; ++i) {
      const auto& v = values[static_cast<size_t>(i)];
      ASSERT_TRUE((v ? builder.AppendInt(*v) : builder.AppendNull()).ok());
    }
    auto data = builder.Finish();
    ASSERT_TRUE(data.ok());
    arrays.emplace_back(*data);
  }
  std::atomic<bool> done{false};
  std::atomic<int64_t> queries{0};
  // brute(pred) restricted to positions < limit.
  auto brute = [&](auto pred, int64_t limit) {
    std::vector<int64_t> out;
    for (int64_t p = 0; p < limit; ++p) {
      if (pred(values[static_cast<size_t>(p)])) out.push_back(p);
    }
    return out;
  };
  auto reader = [&](int seed) {
    std::mt19937_64 r(static_cast<uint64_t>(seed));
    while (!done.load()) {
      const int64_t lit = static_cast<int64_t>(r() % 101) - 50;
      std::string key;
      format::AppendSignedComponent(lit, 8, &key);
      const int op = static_cast<int>(r() % 3);
      auto pred = [&](const std::optional<int64_t>& v) {
        if (op == 0) return v.has_value() && *v == lit;
        if (op == 1) return v.has_value() && *v >= lit;
        return !v.has_value();
      };
      const int64_t before = index->size();
      const auto got = op == 0   ? index->Equal(key)
                       : op == 1 ? index->Range(KeyBound{key, true}, std::nullopt)
                                 : index->IsNull();
      const int64_t after = index->size();
      // The answer is a snapshot between the two sizes (batches are added whole).
      const auto low = brute(pred, before);
      const auto high = brute(pred, after);
      ASSERT_TRUE(std::includes(got.begin(), got.end(), low.begin(), low.end()));
      ASSERT_TRUE(std::includes(high.begin(), high.end(), got.begin(), got.end()));
      ASSERT_TRUE(std::adjacent_find(got.begin(), got.end(), std::greater_equal<int64_t>()) ==
                  got.end());
      queries.fetch_add(1);
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader, 100 + i);
  for (int b = 0; b < kBatches; ++b) {
    ASSERT_TRUE(index->AddColumn(arrays[static_cast<size_t>(b)], int64_t{b} * kBatchRows).ok());
  }
  done.store(true);
  for (auto& t : readers) t.join();
  EXPECT_GT(queries.load(), 0);
  EXPECT_EQ(index->size(), kBatches * kBatchRows);
  EXPECT_EQ(index->IsNull(), brute([](const std::optional<int64_t>& v) { return !v.has_value(); },
                                   kBatches * kBatchRows));
}

}  // namespace
}  // namespace strata::index
