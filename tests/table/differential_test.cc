// Differential tests of the read path against an in-memory model (issue "Reads that stay fast
// as a table grows": they pin the read semantics the incremental read view must keep).
//
// Differential.PrimaryKey / Differential.RowId: a seeded random sequence of operations on a
// table opened through the catalog with small MemTables (seals and flushes all the time) and
// on a model (id -> rows): inserts of new ids, upserts of existing ids (a later row of a batch
// wins), deletes by key (Table::Delete), deletes by predicate and updates through
// ReadModifyWrite (the server's delete/ and update/ path: SnapshotFilter + MatchLiveRows),
// Flush, close + reopen from disk, and index creation (HNSW on vec, BTree on n, FTS on text)
// and removal partway. After EVERY step the table is read only through the query functions
// (query::Scan / CountRows / VectorSearch / FtsSearch) and compared with the model: full scan,
// counts with and without a filter, point lookups of a present and an absent id, a filtered
// scan, exact vector search (k = 5, with and without a filter; the HNSW answer is checked for
// liveness and distances), and FTS for one vocabulary word.
// Steps per table: STRATA_DIFF_STEPS (default 1,000; `make soak-diff` runs 50,000); seed:
// STRATA_DIFF_SEED (default fixed). A failure prints the seed, the step and the operations.
//
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../io/storage_test_util.h"
#include "arrow/builder.h"
#include "index/index_spec.h"
#include "memtable/hidden_columns.h"
#include "query/fts_search.h"
#include "query/matched_rows.h"
#include "query/scan.h"
#include "query/source_rows.h"
#include "query/vector_search.h"
#include "table/catalog.h"
#include "table/lsm_write_spec.h"
#include "table/primary_key.h"
#include "table_test_util.h"

namespace strata::table {
namespace {

constexpr int32_t kVecDim = 4;
using Vec = std::array<float, kVecDim>;

// One row's values; ordered so a set of rows can be compared as a sorted vector.
struct Row {
  int64_t id = 0;
  std::optional<int64_t> n;
  std::optional<std::string> text;
  Vec vec{};
  auto operator<=>(const Row&) const = default;
  bool operator==(const Row&) const = default;
};

std::string ToString(const Row& r) {
  std::ostringstream o;
  o << "{id=" << r.id << " n=" << (r.n ? std::to_string(*r.n) : "null")
    << " text=" << (r.text ? "'" + *r.text + "'" : "null") << " vec=[";
  for (int d = 0; d < kVecDim; ++d) o << (d ? "," : "") << r.vec[d];
  o << "]}";
  return o.str();
}

std::string ToString(const std::vector<Row>& rows, size_t max = 12) {
  std::string out = std::to_string(rows.size()) + " rows:";
  for (size_t i = 0; i < rows.size() && i < max; ++i) out += " " + ToString(rows[i]);
  if (rows.size() > max) out += " ...";
  return out;
}

// Stems of these are distinct and none is an English stop word.
const std::vector<std::string>& Vocabulary() {
  static const std::vector<std::string> words = {"apple",  "river",  "stone",  "cloud",
                                                 "tiger",  "lemon",  "piano",  "rocket",
                                                 "forest", "silver", "garden", "window"};
  return words;
}

bool HasWord(const Row& r, const std::string& word) {
  if (!r.text) return false;
  std::istringstream in(*r.text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// Squared L2, exact: vector elements are multiples of 0.5 in [0, 8), so every partial sum is
// a float without rounding (and equals what any summation order gives).
float L2(const Vec& a, const Vec& b) {
  double s = 0;
  for (int d = 0; d < kVecDim; ++d) s += (double(a[d]) - b[d]) * (double(a[d]) - b[d]);
  return static_cast<float>(s);
}

arrow::SchemaPtr UserSchema(bool keyed) {
  auto s = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
      arrow::field("id", arrow::int64(), /*nullable=*/false),
      arrow::field("n", arrow::int64()),
      arrow::field("text", arrow::utf8()),
      arrow::field("vec", arrow::fixed_size_list(arrow::field("item", arrow::float32()), kVecDim)),
  });
  if (!keyed) return s;
  auto k = DeclarePrimaryKey(s, {"id"});
  EXPECT_TRUE(k.ok()) << k.status().ToString();
  return *k;
}

arrow::RecordBatchPtr MakeRows(const arrow::SchemaPtr& schema, const std::vector<Row>& rows) {
  std::vector<std::optional<int64_t>> ids, ns;
  std::vector<std::optional<std::string>> texts;
  std::vector<float> vecs;
  for (const Row& r : rows) {
    ids.push_back(r.id);
    ns.push_back(r.n);
    texts.push_back(r.text);
    vecs.insert(vecs.end(), r.vec.begin(), r.vec.end());
  }
  return std::make_shared<arrow::RecordBatch>(
      schema, static_cast<int64_t>(rows.size()),
      std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(ids), arrow::MakeInt64Array(ns),
                                       arrow::MakeUtf8Array(texts),
                                       arrow::MakeVectorArray(vecs, kVecDim)});
}

// Row `i` of a batch holding (at least) columns id, n, text, vec by name.
Row RowAt(const arrow::RecordBatch& b, int64_t i) {
  const arrow::Schema& s = *b.schema();
  arrow::Array id = b.column(s.GetFieldIndex("id")), n = b.column(s.GetFieldIndex("n")),
               text = b.column(s.GetFieldIndex("text")), vec = b.column(s.GetFieldIndex("vec"));
  Row r;
  r.id = id.Value<int64_t>(i);
  if (n.IsValid(i)) r.n = n.Value<int64_t>(i);
  if (text.IsValid(i)) r.text = std::string(text.GetView(i));
  EXPECT_TRUE(vec.IsValid(i)) << "null vector for id " << r.id;
  const int64_t start = vec.ListStart(i);
  EXPECT_EQ(vec.ListEnd(i) - start, kVecDim);
  arrow::Array values = vec.child(0);
  for (int d = 0; d < kVecDim; ++d) r.vec[d] = values.Value<float>(start + d);
  return r;
}

std::vector<Row> RowsOf(const query::QueryResult& r) {
  std::vector<Row> out;
  for (const auto& b : r.batches) {
    for (int64_t i = 0; i < b->num_rows(); ++i) out.push_back(RowAt(*b, i));
  }
  return out;
}

// Column `name` of a query answer as values of T (float, uint64_t), in row order.
template <typename T>
std::vector<T> ColumnOf(const query::QueryResult& r, const std::string& name) {
  std::vector<T> out;
  for (const auto& b : r.batches) {
    const int idx = b->schema()->GetFieldIndex(name);
    EXPECT_GE(idx, 0) << "no column " << name;
    if (idx < 0) return out;
    arrow::Array a = b->column(idx);
    for (int64_t i = 0; i < a.length(); ++i) out.push_back(a.Value<T>(i));
  }
  return out;
}

std::vector<float> FloatColumn(const query::QueryResult& r, const std::string& name) {
  return ColumnOf<float>(r, name);
}

std::vector<uint64_t> UInt64Column(const query::QueryResult& r, const std::string& name) {
  return ColumnOf<uint64_t>(r, name);
}

[[maybe_unused]] void PrintTo(const Row& r, std::ostream* os) { *os << ToString(r); }

std::vector<Row> Sorted(std::vector<Row> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Rows in `got` and not in `want` (extra) and the reverse (missing), both sorted.
std::string Diff(const std::vector<Row>& got, const std::vector<Row>& want) {
  std::vector<Row> extra, missing;
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  return "got " + std::to_string(got.size()) + " rows, want " + std::to_string(want.size()) +
         "; extra " + ToString(extra) + "; missing " + ToString(missing);
}

// Sorted rows of a query answer equal the model's `want` (sorted).
#define EXPECT_SAME_ROWS(got_expr, want_expr, what)                                      \
  do {                                                                                   \
    const std::vector<Row> got_rows_ = Sorted(got_expr);                                 \
    const std::vector<Row> want_rows_ = (want_expr);                                     \
    EXPECT_TRUE(got_rows_ == want_rows_) << what << ": " << Diff(got_rows_, want_rows_); \
  } while (0)

// ------------------------------------------------------------------------------------------
// The model: every live row (several per id for tables without a primary key).

struct Model {
  bool keyed = true;
  std::multimap<int64_t, Row> rows;

  std::vector<Row> All() const {
    std::vector<Row> out;
    for (const auto& [id, r] : rows) out.push_back(r);
    return Sorted(out);
  }
  template <typename Pred>
  std::vector<Row> Where(Pred pred) const {
    std::vector<Row> out;
    for (const auto& [id, r] : rows) {
      if (pred(r)) out.push_back(r);
    }
    return Sorted(out);
  }
  void Put(const Row& r) {
    if (keyed) rows.erase(r.id);
    rows.emplace(r.id, r);
  }
  // Removes one row equal to `r`; false when there is none.
  bool RemoveOne(const Row& r) {
    auto [lo, hi] = rows.equal_range(r.id);
    for (auto it = lo; it != hi; ++it) {
      if (it->second == r) {
        rows.erase(it);
        return true;
      }
    }
    return false;
  }
};

// ------------------------------------------------------------------------------------------
// The randomised differential run.

int64_t StepsPerTable() {
  const char* env = std::getenv("STRATA_DIFF_STEPS");
  if (env != nullptr && std::atoll(env) > 0) return std::atoll(env);
  return 1000;
}

uint64_t BaseSeed() {
  const char* env = std::getenv("STRATA_DIFF_SEED");
  if (env != nullptr && *env != '\0') return std::strtoull(env, nullptr, 10);
  return 20250611;
}

shard::ShardWriterOptions SmallMemTables(int64_t max_rows) {
  shard::ShardWriterOptions o;
  o.max_memtable_rows = max_rows;  // seals (and flushes) every few steps
  o.max_frozen_memtables = 0;
  return o;
}

std::vector<index::IndexSpec> IndexSpecs() {
  index::IndexSpec hnsw;
  hnsw.kind = index::IndexKind::kHnsw;
  hnsw.column = "vec";
  hnsw.name = "vec_idx";
  hnsw.requested_type = "HNSW";
  hnsw.hnsw.distance = index::DistanceType::kL2;
  hnsw.hnsw.m = 8;
  hnsw.hnsw.ef_construction = 64;
  index::IndexSpec bt;
  bt.kind = index::IndexKind::kBTree;
  bt.column = "n";
  bt.name = "n_idx";
  bt.requested_type = "BTREE";
  index::IndexSpec fts;
  fts.kind = index::IndexKind::kFts;
  fts.column = "text";
  fts.name = "text_idx";
  fts.requested_type = "FTS";
  return {hnsw, bt, fts};
}

class DifferentialRun {
 public:
  /// `buckets` > 0: the table is created with a bucket LSM write spec of that many shards
  /// (docs/SHARDING.md; keyed tables only): every operation and check runs across shards.
  DifferentialRun(bool keyed, uint64_t seed, int64_t buckets = 0)
      : keyed_(keyed), seed_(seed), rng_(seed), schema_(UserSchema(keyed)), buckets_(buckets) {
    model_.keyed = keyed;
    max_memtable_rows_ = 50 + static_cast<int64_t>(rng_() % 151);  // 50..200
  }

  // Runs `steps` steps; stops at the first step that fails a check.
  void Run(int64_t steps) {
    Open(/*create=*/true);
    if (::testing::Test::HasFatalFailure()) return;
    const int64_t create_at = steps / 5, drop_at = steps * 4 / 5;
    using SteadyClock = std::chrono::steady_clock;
    for (step_ = 0; step_ < steps; ++step_) {
      const size_t logged = log_.size();
      const auto t0 = SteadyClock::now();
      if (step_ == create_at) {
        CreateIndexes();
      } else if (step_ == drop_at) {
        DropIndexes();
      } else {
        RandomOp();
      }
      const auto t1 = SteadyClock::now();
      if (!::testing::Test::HasFailure()) Verify();
      const auto t2 = SteadyClock::now();
      if (log_.size() > logged) {  // "step N: <kind> ..." -> seconds per kind
        const std::string& line = log_.back();
        const size_t from = line.find(": ") + 2;
        seconds_[line.substr(from, line.find(' ', from) - from)] +=
            std::chrono::duration<double>(t1 - t0).count();
      }
      (void)t2;
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << Reproduce();
        return;
      }
    }
    std::string times;
    for (const auto& [kind, sec] : seconds_)
      times += " " + kind + " " + std::to_string(sec).substr(0, 5) + "s";
    std::printf(
        "[figures] Differential %s seed %llu: %lld steps, %zu live rows at the end, "
        "max_memtable_rows %lld, %d flushes, %d restarts, %d explicit compactions, %d sstables "
        "and %lld base rows now; time by operation:%s\n",
        keyed_ ? "PrimaryKey" : "RowId", static_cast<unsigned long long>(seed_),
        static_cast<long long>(steps), model_.rows.size(),
        static_cast<long long>(max_memtable_rows_), flushes_, restarts_, compactions_,
        static_cast<int>(table_->DescribeShards().at(0).sstables.size()),
        static_cast<long long>(table_->DescribeBase() ? table_->DescribeBase()->rows : -1),
        times.c_str());
  }

 private:
  std::string Reproduce() const {
    std::string out = "seed " + std::to_string(seed_) +
                      " (STRATA_DIFF_SEED=" + std::to_string(seed_) + "), " +
                      (keyed_ ? "primary-key" : "_rowid") + " table, max_memtable_rows " +
                      std::to_string(max_memtable_rows_) + ", failed at step " +
                      std::to_string(step_) + "; operations:\n";
    const size_t first = log_.size() > 60 ? log_.size() - 60 : 0;
    if (first > 0) out += "  ... " + std::to_string(first) + " earlier operations\n";
    for (size_t i = first; i < log_.size(); ++i) out += "  " + log_[i] + "\n";
    return out;
  }

  void Log(std::string what) { log_.push_back("step " + std::to_string(step_) + ": " + what); }

  void Open(bool create) {
    catalog_.reset();
    auto c = Catalog::Open(dir_.path(), SmallMemTables(max_memtable_rows_));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    catalog_ = std::move(*c);
    std::optional<LsmWriteSpec> spec;
    if (buckets_ > 0) spec = strata::testing::BucketsOnId(buckets_);
    Result<std::shared_ptr<Table>> t =
        create ? catalog_->CreateTable("default", "diff", schema_, {}, CreateMode::kCreate, spec)
               : catalog_->GetTable("default", "diff");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table_ = *t;
    if (buckets_ > 0) {
      ASSERT_EQ(table_->DescribeShards().size(), static_cast<size_t>(buckets_));
    }
  }

  // --- random values ---
  int64_t Uniform(int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return Uniform(0, 99) < percent; }
  Vec RandomVec() {
    Vec v;
    for (float& x : v) x = 0.5f * static_cast<float>(Uniform(0, 15));
    return v;
  }
  std::optional<std::string> RandomText() {
    if (Chance(5)) return std::nullopt;
    std::string t;
    const int words = static_cast<int>(Uniform(1, 4));
    for (int w = 0; w < words; ++w) {
      if (w) t += ' ';
      t += Vocabulary()[static_cast<size_t>(Uniform(0, Vocabulary().size() - 1))];
    }
    return t;
  }
  std::optional<int64_t> RandomN() {
    if (Chance(5)) return std::nullopt;
    return Uniform(0, 99);
  }
  Row RandomRow(int64_t id) { return Row{id, RandomN(), RandomText(), RandomVec()}; }
  // A live id (model); nullopt when the table is empty.
  std::optional<int64_t> LiveId() {
    if (model_.rows.empty()) return std::nullopt;
    auto it = model_.rows.begin();
    std::advance(it, static_cast<long>(Uniform(0, static_cast<int64_t>(model_.rows.size()) - 1)));
    return it->first;
  }
  // An id no live row has: a deleted one when possible, else one never used.
  int64_t AbsentId() {
    for (int tries = 0; tries < 8 && next_id_ > 0; ++tries) {
      const int64_t id = Uniform(0, next_id_ - 1);
      if (model_.rows.count(id) == 0) return id;
    }
    return next_id_ + 1000;
  }

  // --- operations ---
  void RandomOp() {
    // Long runs (make soak-diff) keep the table near kMaxRows live rows: checks cost O(rows).
    constexpr size_t kMaxRows = 10000;
    if (model_.rows.size() > kMaxRows && Chance(50)) return DeleteByPredicate();
    const int64_t p = Uniform(0, 99);
    if (p < 24 || model_.rows.empty()) return InsertNew();
    if (p < 42) return Upsert();
    if (p < 54) return DeleteByKey();
    if (p < 60) return DeleteByPredicate();
    if (p < 72) return UpdateThroughReadModifyWrite(/*with_insert=*/false);
    if (p < 76) return UpdateThroughReadModifyWrite(/*with_insert=*/true);
    if (p < 84 && !keyed_) return DeleteOneByRowId();
    if (p < 90) return Flush();
    if (p < 93) return Compact();
    if (p < 96) return Restart();
    return InsertNew();
  }

  void Write(const std::vector<Row>& rows, const std::string& what) {
    Log(what + " " + ToString(rows, 6));
    auto v = table_->Insert({MakeRows(schema_, rows)});
    ASSERT_TRUE(v.ok()) << what << ": " << v.status().ToString();
    for (const Row& r : rows) model_.Put(r);  // later rows of the batch win (keyed)
  }

  void InsertNew() {
    std::vector<Row> rows;
    const int64_t n = Uniform(1, 30);
    for (int64_t i = 0; i < n; ++i) rows.push_back(RandomRow(next_id_++));
    Write(rows, "insert");
  }

  // Rows for existing ids (new versions; a duplicate row for tables without a key), some new
  // ids, and sometimes the same id twice in the batch (the later one wins).
  void Upsert() {
    std::vector<Row> rows;
    const int64_t n = Uniform(1, 20);
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> id = LiveId();
      rows.push_back(RandomRow(id && !Chance(15) ? *id : next_id_++));
    }
    if (Chance(20)) rows.push_back(RandomRow(rows.front().id));
    Write(rows, "upsert");
  }

  void DeleteByKey() {
    if (!keyed_) return DeleteOneByRowId();
    std::vector<std::optional<int64_t>> keys;
    std::set<int64_t> ids;
    const int64_t n = Uniform(1, 5);
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> id = LiveId();
      if (id) ids.insert(*id);
    }
    if (Chance(30)) ids.insert(AbsentId());  // deleting a missing key is a no-op
    std::string what = "delete keys";
    for (int64_t id : ids) {
      keys.push_back(id);
      what += " " + std::to_string(id);
    }
    Log(what);
    auto key_schema = std::make_shared<arrow::Schema>(
        std::vector<arrow::FieldPtr>{arrow::field("id", arrow::int64(), false)});
    auto batch = std::make_shared<arrow::RecordBatch>(
        key_schema, static_cast<int64_t>(keys.size()),
        std::vector<arrow::ArrayDataPtr>{arrow::MakeInt64Array(keys)});
    auto v = table_->Delete({batch});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    for (int64_t id : ids) model_.rows.erase(id);
  }

  // The server's delete/ path: tombstones for the live rows a predicate picks, as one
  // read-modify-write.
  void DeleteByPredicate() {
    const int64_t value = Uniform(0, 99);
    const bool by_id = Chance(50);
    const int64_t id = LiveId().value_or(0);
    const std::string predicate =
        by_id ? "id = " + std::to_string(id) : "n = " + std::to_string(value);
    auto pick = [&](const Row& r) { return by_id ? r.id == id : (r.n && *r.n == value); };
    Log("delete where " + predicate);
    const std::vector<Row> expected = model_.Where(pick);
    std::vector<Row> matched_rows;
    auto v = table_->ReadModifyWrite([&](const TableSnapshot& snap) -> Result<Mutation> {
      matched_rows.clear();
      STRATA_ASSIGN_OR_RETURN(auto filter, query::SnapshotFilter::Make(*snap.shard, predicate));
      STRATA_ASSIGN_OR_RETURN(auto matched, query::MatchLiveRows(*snap.shard, filter));
      std::vector<std::string> pk = snap.key_columns;
      if (pk.size() == 1 && pk[0] == memtable::kRowIdColumn) pk.clear();
      STRATA_ASSIGN_OR_RETURN(auto layout, memtable::MakeStorageLayout(snap.schema, pk));
      Mutation m;
      for (const auto& mb : matched) {
        std::vector<int64_t> all(static_cast<size_t>(mb.storage->num_rows()));
        for (size_t i = 0; i < all.size(); ++i) {
          all[i] = static_cast<int64_t>(i);
          matched_rows.push_back(RowAt(*mb.storage, static_cast<int64_t>(i)));
        }
        STRATA_ASSIGN_OR_RETURN(auto t, memtable::MakeTombstones(layout, *mb.storage, all));
        m.storage_rows.push_back(std::move(t));
      }
      return m;
    });
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_SAME_ROWS(matched_rows, expected, "rows the delete predicate matched");
    for (const Row& r : expected) model_.RemoveOne(r);
  }

  // The server's update/ path: the rows `id = X` (or `n = V`) get n + 1 (0 when null), a new
  // text and sometimes a new vector, keeping their key; optionally one new row in the same
  // mutation.
  void UpdateThroughReadModifyWrite(bool with_insert) {
    const bool by_id = Chance(75);
    const int64_t id = LiveId().value_or(0);
    const int64_t value = Uniform(0, 99);
    const std::string predicate =
        by_id ? "id = " + std::to_string(id) : "n = " + std::to_string(value);
    auto pick = [&](const Row& r) { return by_id ? r.id == id : (r.n && *r.n == value); };
    const std::optional<std::string> text = RandomText();
    const std::optional<Vec> vec = Chance(50) ? std::optional<Vec>(RandomVec()) : std::nullopt;
    std::optional<Row> inserted;
    if (with_insert) inserted = RandomRow(next_id_++);
    Log("update where " + predicate + " set n = n + 1, text = " + (text ? *text : "null") +
        (vec ? ", vec" : "") + (inserted ? ", insert " + ToString(*inserted) : ""));
    auto updated = [&](Row r) {
      r.n = r.n ? *r.n + 1 : 0;
      r.text = text;
      if (vec) r.vec = *vec;
      return r;
    };
    const std::vector<Row> expected = model_.Where(pick);
    std::vector<Row> matched_rows;
    auto v = table_->ReadModifyWrite([&](const TableSnapshot& snap) -> Result<Mutation> {
      matched_rows.clear();
      STRATA_ASSIGN_OR_RETURN(auto filter, query::SnapshotFilter::Make(*snap.shard, predicate));
      STRATA_ASSIGN_OR_RETURN(auto matched, query::MatchLiveRows(*snap.shard, filter));
      Mutation m;
      for (const auto& mb : matched) {
        const arrow::RecordBatch& rows = *mb.storage;
        std::vector<std::optional<int64_t>> ns;
        std::vector<std::optional<std::string>> texts;
        std::vector<float> vecs;
        for (int64_t i = 0; i < rows.num_rows(); ++i) {
          const Row old = RowAt(rows, i);
          matched_rows.push_back(old);
          const Row now = updated(old);
          ns.push_back(now.n);
          texts.push_back(now.text);
          vecs.insert(vecs.end(), now.vec.begin(), now.vec.end());
        }
        std::vector<arrow::ArrayDataPtr> columns = rows.columns();
        const arrow::Schema& s = *rows.schema();
        columns[static_cast<size_t>(s.GetFieldIndex("n"))] = arrow::MakeInt64Array(ns);
        columns[static_cast<size_t>(s.GetFieldIndex("text"))] = arrow::MakeUtf8Array(texts);
        columns[static_cast<size_t>(s.GetFieldIndex("vec"))] =
            arrow::MakeVectorArray(vecs, kVecDim);
        m.storage_rows.push_back(std::make_shared<arrow::RecordBatch>(
            rows.schema(), rows.num_rows(), std::move(columns)));
      }
      if (inserted) m.inserts.push_back(MakeRows(snap.schema, {*inserted}));
      return m;
    });
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_SAME_ROWS(matched_rows, expected, "rows the update predicate matched");
    for (const Row& r : expected) {
      ASSERT_TRUE(model_.RemoveOne(r));
      model_.Put(updated(r));
    }
    if (inserted) model_.Put(*inserted);
  }

  // Tables without a primary key: one row (of possibly several with its id) deleted by its
  // _rowid, either through Table::Delete with the hidden storage key or through the delete/
  // path with the predicate `_rowid = <address from a scan with_row_id>`.
  void DeleteOneByRowId() {
    std::optional<int64_t> id = LiveId();
    if (!id) return InsertNew();
    TableSnapshot snap = table_->Snapshot();
    if (Chance(50)) {
      auto filter = query::SnapshotFilter::Make(*snap.shard, "id = " + std::to_string(*id));
      ASSERT_TRUE(filter.ok()) << filter.status().ToString();
      auto matched = query::MatchLiveRows(*snap.shard, *filter);
      ASSERT_TRUE(matched.ok()) << matched.status().ToString();
      ASSERT_FALSE(matched->empty()) << "live id " << *id << " not matched";
      const auto& mb = matched->back();
      const int64_t i = mb.storage->num_rows() - 1;
      const Row victim = RowAt(*mb.storage, i);
      arrow::Array rowid = mb.storage->column(mb.storage->schema()->GetFieldIndex("_rowid"));
      const uint64_t key = rowid.Value<uint64_t>(i);
      Log("delete storage _rowid " + std::to_string(key) + " " + ToString(victim));
      auto key_schema = std::make_shared<arrow::Schema>(std::vector<arrow::FieldPtr>{
          arrow::field(memtable::kRowIdColumn, arrow::uint64(), false)});
      auto batch = std::make_shared<arrow::RecordBatch>(
          key_schema, 1, std::vector<arrow::ArrayDataPtr>{memtable::MakeRowIdArray(key, 1)});
      auto v = table_->Delete({batch});
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      ASSERT_TRUE(model_.RemoveOne(victim)) << "deleted row not in the model: " << ToString(victim);
      return;
    }
    query::ScanOptions o;
    o.filter = "id = " + std::to_string(*id);
    o.with_row_id = true;
    auto r = query::Scan(snap, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_GT(r->num_rows, 0);
    const std::vector<Row> rows = RowsOf(*r);
    const std::vector<uint64_t> addresses = UInt64Column(*r, query::kRowIdColumn);
    ASSERT_EQ(addresses.size(), rows.size());
    const size_t pick = static_cast<size_t>(Uniform(0, static_cast<int64_t>(rows.size()) - 1));
    const std::string predicate = "_rowid = " + std::to_string(addresses[pick]);
    Log("delete where " + predicate + " " + ToString(rows[pick]));
    int64_t deleted = 0;
    auto v = table_->ReadModifyWrite([&](const TableSnapshot& s) -> Result<Mutation> {
      deleted = 0;
      STRATA_ASSIGN_OR_RETURN(auto filter, query::SnapshotFilter::Make(*s.shard, predicate));
      STRATA_ASSIGN_OR_RETURN(auto matched, query::MatchLiveRows(*s.shard, filter));
      STRATA_ASSIGN_OR_RETURN(auto layout, memtable::MakeStorageLayout(s.schema, {}));
      Mutation m;
      for (const auto& mb : matched) {
        std::vector<int64_t> all;
        for (int64_t i = 0; i < mb.storage->num_rows(); ++i) {
          all.push_back(i);
          if (RowAt(*mb.storage, i) != rows[pick]) {
            return Status::Invalid("_rowid predicate picked " + ToString(RowAt(*mb.storage, i)));
          }
        }
        deleted += mb.storage->num_rows();
        STRATA_ASSIGN_OR_RETURN(auto t, memtable::MakeTombstones(layout, *mb.storage, all));
        m.storage_rows.push_back(std::move(t));
      }
      return m;
    });
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_EQ(deleted, 1) << predicate;
    ASSERT_TRUE(model_.RemoveOne(rows[pick]));
  }

  void Flush() {
    Log("flush");
    auto r = table_->Flush(shard::Clock::now() + std::chrono::seconds(60));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ++flushes_;
  }

  // One compaction of the published SSTables into the base (background compactions also run
  // on their own whenever 4 SSTables are waiting).
  void Compact() {
    auto r = table_->Compact(shard::Clock::now() + std::chrono::seconds(60));
    if (!r.ok() && r.status().IsAlreadyExists()) {
      Log("compact (busy: a background compaction runs)");
      return;
    }
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    Log("compact: " + std::to_string(r->compacted_generations.size()) + " SSTables, " +
        std::to_string(r->rows_written) + " rows written");
    ++compactions_;
  }

  void Restart() {
    Log("close + reopen");
    table_.reset();
    Open(/*create=*/false);
    ++restarts_;
  }

  void CreateIndexes() {
    Log("create indexes vec_idx (HNSW), n_idx (BTREE), text_idx (FTS)");
    for (const auto& spec : IndexSpecs()) {
      auto r = table_->CreateIndex(spec);
      ASSERT_TRUE(r.ok()) << spec.name << ": " << r.status().ToString();
    }
    indexed_ = true;
  }

  void DropIndexes() {
    Log("drop indexes");
    for (const auto& spec : IndexSpecs()) {
      ASSERT_TRUE(table_->DropIndex(spec.name).ok()) << spec.name;
    }
    indexed_ = false;
  }

  // --- the checks ---
  void Verify() {
    auto mark = std::chrono::steady_clock::now();
    auto lap = [&](const char* what) {  // check time by kind, for the [figures] line
      const auto now = std::chrono::steady_clock::now();
      seconds_[what] += std::chrono::duration<double>(now - mark).count();
      mark = now;
    };
    const TableSnapshot snap = table_->Snapshot();
    lap("(check: snapshot)");
    const std::vector<Row> all = model_.All();
    // Full scan.
    {
      auto r = query::Scan(snap, {});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const std::vector<Row> got = Sorted(RowsOf(*r));
      ASSERT_TRUE(got == all) << "full scan: " << Diff(got, all);
      EXPECT_EQ(r->num_rows, static_cast<int64_t>(all.size()));
    }
    lap("(check: scan)");
    // Counts.
    {
      auto c = query::CountRows(snap, std::nullopt);
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      EXPECT_EQ(*c, static_cast<int64_t>(all.size())) << "count";
      auto f = query::CountRows(snap, std::string("n > 50"));
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      EXPECT_EQ(*f, static_cast<int64_t>(
                        model_.Where([](const Row& r) { return r.n && *r.n > 50; }).size()))
          << "count n > 50";
    }
    lap("(check: count)");
    // Point lookups: a present and an absent id.
    {
      const int64_t present = LiveId().value_or(0), absent = AbsentId();
      for (int64_t id : {present, absent}) {
        query::ScanOptions o;
        o.filter = "id = " + std::to_string(id);
        auto r = query::Scan(snap, o);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        EXPECT_SAME_ROWS(RowsOf(*r), model_.Where([&](const Row& x) { return x.id == id; }),
                         "point lookup id = " << id);
      }
    }
    lap("(check: lookup)");
    // Filtered scan.
    {
      const int64_t k = Uniform(0, 100), m = Uniform(2, 4);
      query::ScanOptions o;
      o.filter = "n < " + std::to_string(k) + " AND id % " + std::to_string(m) + " = 0";
      auto r = query::Scan(snap, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_SAME_ROWS(RowsOf(*r),
                       model_.Where([&](const Row& x) { return x.n && *x.n < k && x.id % m == 0; }),
                       "scan where " << *o.filter);
    }
    lap("(check: filtered scan)");
    // Exact vector search (unfiltered and filtered), and the HNSW answer when indexed.
    const Vec q = RandomVec();
    CheckVectorSearch(snap, q, std::nullopt, /*exact=*/true);
    CheckVectorSearch(snap, q, std::string("n >= 30"), /*exact=*/true);
    if (indexed_) CheckVectorSearch(snap, q, std::nullopt, /*exact=*/false);
    lap("(check: vector)");
    // Full-text search for one word.
    if (indexed_) {
      const std::string word =
          Vocabulary()[static_cast<size_t>(Uniform(0, Vocabulary().size() - 1))];
      query::FtsSearchOptions o;
      o.query.text = word;
      o.columns = {"text"};
      o.k = static_cast<int64_t>(all.size()) + 10;
      auto r = query::FtsSearch(snap, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_SAME_ROWS(RowsOf(*r), model_.Where([&](const Row& x) { return HasWord(x, word); }),
                       "fts '" << word << "'");
      const std::vector<float> scores = FloatColumn(*r, query::kScoreColumn);
      for (size_t i = 0; i < scores.size(); ++i) {
        EXPECT_GT(scores[i], 0.0f) << "fts score " << i;
        if (i > 0) {
          EXPECT_LE(scores[i], scores[i - 1]) << "fts scores descend";
        }
      }
    }
    lap("(check: fts)");
  }

  // k = 5 nearest by squared L2. Exact: the distances equal the model's five smallest (row
  // order may differ only among equal distances), and every returned row is a distinct live
  // row with that distance. HNSW: min(k, candidates) distinct live rows with correct,
  // ascending distances (approximate, so not necessarily the five nearest).
  void CheckVectorSearch(const TableSnapshot& snap, const Vec& q,
                         const std::optional<std::string>& filter, bool exact) {
    constexpr int64_t kK = 5;
    query::VectorSearchOptions o;
    o.query.assign(q.begin(), q.end());
    o.column = "vec";
    o.k = kK;
    o.filter = filter;
    o.bypass_vector_index = exact;
    const std::string what = std::string(exact ? "exact" : "HNSW") + " vector search" +
                             (filter ? " where " + *filter : "");
    auto r = query::VectorSearch(snap, o);
    ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
    const std::vector<Row> candidates =
        model_.Where([&](const Row& x) { return !filter || (x.n && *x.n >= 30); });
    std::vector<float> want;
    for (const Row& x : candidates) want.push_back(L2(q, x.vec));
    std::sort(want.begin(), want.end());
    want.resize(std::min<size_t>(want.size(), kK));
    const std::vector<Row> got = RowsOf(*r);
    const std::vector<float> dist = FloatColumn(*r, query::kDistanceColumn);
    ASSERT_EQ(got.size(), want.size()) << what;
    ASSERT_EQ(dist.size(), got.size()) << what;
    if (exact) {
      EXPECT_EQ(dist, want) << what << " distances";
    }
    // Every returned row is a live candidate, returned at most as often as the model holds it.
    std::map<Row, int> returned;
    for (size_t i = 0; i < got.size(); ++i) {
      const Row& x = got[i];
      const bool candidate = !filter || (x.n && *x.n >= 30);
      int64_t held = 0;
      auto [lo, hi] = model_.rows.equal_range(x.id);
      for (auto it = lo; it != hi; ++it) held += it->second == x ? 1 : 0;
      EXPECT_TRUE(candidate && ++returned[x] <= held)
          << what << ": row " << i << " " << ToString(x)
          << " is not a live candidate (or returned twice)";
      EXPECT_EQ(dist[i], L2(q, got[i].vec)) << what << ": distance of row " << i;
      if (i > 0) {
        EXPECT_LE(dist[i - 1], dist[i]) << what << ": distances ascend";
      }
    }
  }

  const bool keyed_;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  arrow::SchemaPtr schema_;
  const int64_t buckets_;
  int64_t max_memtable_rows_ = 100;
  strata::testing::ScratchDir dir_;
  std::unique_ptr<Catalog> catalog_;
  std::shared_ptr<Table> table_;
  Model model_;
  int64_t next_id_ = 0;
  int64_t step_ = 0;
  bool indexed_ = false;
  int flushes_ = 0, restarts_ = 0, compactions_ = 0;
  std::vector<std::string> log_;
  std::map<std::string, double> seconds_;
};

TEST(Differential, PrimaryKey) {
  const uint64_t seed = BaseSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (STRATA_DIFF_SEED)");
  DifferentialRun(/*keyed=*/true, seed).Run(StepsPerTable());
}

// The same operations and checks on a table of 4 bucket shards (issue 16): rows of a key in
// one shard, writes across shards all or nothing, reads merging every shard and the one base.
TEST(Differential, FourBuckets) {
  const uint64_t seed = BaseSeed() + 2;
  SCOPED_TRACE("seed " + std::to_string(seed) + " (STRATA_DIFF_SEED=" + std::to_string(seed - 2) +
               ")");
  DifferentialRun(/*keyed=*/true, seed, /*buckets=*/4).Run(StepsPerTable());
}

TEST(Differential, RowId) {
  const uint64_t seed = BaseSeed() + 1;
  SCOPED_TRACE("seed " + std::to_string(seed) + " (STRATA_DIFF_SEED=" + std::to_string(seed - 1) +
               ")");
  DifferentialRun(/*keyed=*/false, seed).Run(StepsPerTable());
}

}  // namespace
}  // namespace strata::table
