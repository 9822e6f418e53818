#include "query/row_predicate.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <tuple>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "query/index_candidates.h"

namespace strata::query {

using filter::CompareOp;
using filter::Expr;
using filter::ExprKind;
using filter::Literal;

namespace {

enum class ColumnClass { kNone, kInteger, kDate, kTimestamp, kString, kBool };

ColumnClass Classify(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::TypeId::kInt8:
    case arrow::TypeId::kInt16:
    case arrow::TypeId::kInt32:
    case arrow::TypeId::kInt64:
    case arrow::TypeId::kUInt8:
    case arrow::TypeId::kUInt16:
    case arrow::TypeId::kUInt32:
      return ColumnClass::kInteger;
    case arrow::TypeId::kDate32:
      return ColumnClass::kDate;
    case arrow::TypeId::kTimestamp:
      return type.unit() == arrow::TimeUnit::kMicro ? ColumnClass::kTimestamp : ColumnClass::kNone;
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kLargeUtf8:
      return ColumnClass::kString;
    case arrow::TypeId::kBool:
      return ColumnClass::kBool;
    default:
      return ColumnClass::kNone;
  }
}

// Whether `lit` (not NULL) is a literal of the kind a column of class `cls` compares exactly.
bool LiteralFits(ColumnClass cls, const Literal& lit) {
  switch (cls) {
    case ColumnClass::kInteger:
      return lit.kind == Literal::Kind::kInt;
    case ColumnClass::kDate:
      return lit.kind == Literal::Kind::kDate;
    case ColumnClass::kTimestamp:
      return lit.kind == Literal::Kind::kTimestamp;
    case ColumnClass::kString:
      return lit.kind == Literal::Kind::kString;
    case ColumnClass::kBool:
      return lit.kind == Literal::Kind::kBool;
    case ColumnClass::kNone:
      return false;
  }
  return false;
}

int64_t IntOf(const Literal& lit) {
  return lit.kind == Literal::Kind::kBool ? (lit.bool_value ? 1 : 0) : lit.int_value;
}

int64_t IntValue(const arrow::Array& a, int64_t row) {
  switch (a.type_id()) {
    case arrow::TypeId::kInt8:
      return a.Value<int8_t>(row);
    case arrow::TypeId::kInt16:
      return a.Value<int16_t>(row);
    case arrow::TypeId::kInt32:
    case arrow::TypeId::kDate32:
      return a.Value<int32_t>(row);
    case arrow::TypeId::kUInt8:
      return a.Value<uint8_t>(row);
    case arrow::TypeId::kUInt16:
      return a.Value<uint16_t>(row);
    case arrow::TypeId::kUInt32:
      return a.Value<uint32_t>(row);
    case arrow::TypeId::kBool:
      return a.BoolValue(row) ? 1 : 0;
    default:  // kInt64, kTimestamp
      return a.Value<int64_t>(row);
  }
}

template <typename T>
bool Compare(const T& v, CompareOp op, const T& lit) {
  switch (op) {
    case CompareOp::kEq:
      return v == lit;
    case CompareOp::kNe:
      return v != lit;
    case CompareOp::kLt:
      return v < lit;
    case CompareOp::kLe:
      return v <= lit;
    case CompareOp::kGt:
      return v > lit;
    case CompareOp::kGe:
      return v >= lit;
  }
  return false;
}

}  // namespace

std::optional<RowPredicate> RowPredicate::Compile(const arrow::Schema& schema, const Expr& expr) {
  std::vector<const Expr*> conjuncts;
  // FlattenAnd takes the shared pointer form; walk the tree directly.
  std::vector<const Expr*> stack = {&expr};
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (e->kind == ExprKind::kAnd) {
      for (auto it = e->children.rbegin(); it != e->children.rend(); ++it) {
        stack.push_back(it->get());
      }
    } else {
      conjuncts.push_back(e);
    }
  }
  RowPredicate out;
  for (const Expr* c : conjuncts) {
    Check check;
    const Expr* column = nullptr;
    if (auto cc = AsFilterColumnCompare(*c)) {
      column = cc->column;
      check.kind = Check::Kind::kCompare;
      check.op = cc->op;
    } else if ((c->kind == ExprKind::kIn && c->children.size() >= 2) ||
               (c->kind == ExprKind::kBetween && c->children.size() == 3)) {
      column = c->children[0].get();
      check.kind = c->kind == ExprKind::kIn ? Check::Kind::kIn : Check::Kind::kBetween;
      check.negated = c->negated;
      for (size_t i = 1; i < c->children.size(); ++i) {
        if (c->children[i]->kind != ExprKind::kLiteral) return std::nullopt;
      }
    } else if (c->kind == ExprKind::kIsNull && c->children.size() == 1) {
      column = c->children[0].get();
      check.kind = c->negated ? Check::Kind::kIsNotNull : Check::Kind::kIsNull;
    } else {
      return std::nullopt;
    }
    const int col = ResolveFilterColumn(schema, *column);
    if (col < 0) return std::nullopt;
    check.column = col;
    const ColumnClass cls = Classify(*schema.field(col)->type);
    if (cls == ColumnClass::kNone) return std::nullopt;
    check.is_string = cls == ColumnClass::kString;
    const auto fits = [cls](const Literal& l) { return LiteralFits(cls, l); };
    switch (check.kind) {
      case Check::Kind::kCompare: {
        const Literal& lit = *AsFilterColumnCompare(*c)->literal;
        if (lit.kind == Literal::Kind::kNull) {
          check.kind = Check::Kind::kNever;
          break;
        }
        if (!fits(lit)) return std::nullopt;
        if (cls == ColumnClass::kBool && check.op != CompareOp::kEq && check.op != CompareOp::kNe) {
          return std::nullopt;
        }
        if (check.is_string) {
          check.text = lit.string_value;
        } else {
          check.value = IntOf(lit);
        }
        break;
      }
      case Check::Kind::kIn:
        for (size_t i = 1; i < c->children.size(); ++i) {
          const Literal& lit = c->children[i]->literal;
          if (lit.kind == Literal::Kind::kNull) {
            check.in_has_null = true;
            continue;
          }
          if (!fits(lit)) return std::nullopt;
          if (check.is_string) {
            check.texts.push_back(lit.string_value);
          } else {
            check.values.push_back(IntOf(lit));
          }
        }
        std::sort(check.values.begin(), check.values.end());
        std::sort(check.texts.begin(), check.texts.end());
        break;
      case Check::Kind::kBetween: {
        const Literal& lo = c->children[1]->literal;
        const Literal& hi = c->children[2]->literal;
        if (lo.kind == Literal::Kind::kNull || hi.kind == Literal::Kind::kNull) {
          return std::nullopt;  // three-valued corner cases: leave them to the evaluator
        }
        if (!fits(lo) || !fits(hi) || cls == ColumnClass::kBool) return std::nullopt;
        if (check.is_string) {
          check.text = lo.string_value;
          check.text_high = hi.string_value;
        } else {
          check.value = IntOf(lo);
          check.high = IntOf(hi);
        }
        break;
      }
      default:
        break;
    }
    out.checks_.push_back(std::move(check));
  }
  out.key_ = out.MakeKey();
  // The columns as bound: a key never outlives a rename or a change of type.
  for (const Check& c : out.checks_) {
    out.key_ += schema.field(c.column)->ToString();
    out.key_.push_back(';');
  }
  return out;
}

bool RowPredicate::Passes(const Check& c, const arrow::Array& a, int64_t row) {
  const bool null = a.IsNull(row);
  switch (c.kind) {
    case Check::Kind::kNever:
      return false;
    case Check::Kind::kIsNull:
      return null;
    case Check::Kind::kIsNotNull:
      return !null;
    default:
      break;
  }
  if (null) return false;
  if (c.is_string) {
    const std::string_view v = a.GetView(row);
    switch (c.kind) {
      case Check::Kind::kCompare:
        return Compare<std::string_view>(v, c.op, c.text);
      case Check::Kind::kIn: {
        const bool found = std::binary_search(c.texts.begin(), c.texts.end(), v);
        return c.negated ? !found && !c.in_has_null : found;
      }
      case Check::Kind::kBetween: {
        const bool in = v >= std::string_view(c.text) && v <= std::string_view(c.text_high);
        return in != c.negated;
      }
      default:
        return false;
    }
  }
  const int64_t v = IntValue(a, row);
  switch (c.kind) {
    case Check::Kind::kCompare:
      return Compare<int64_t>(v, c.op, c.value);
    case Check::Kind::kIn: {
      const bool found = std::binary_search(c.values.begin(), c.values.end(), v);
      return c.negated ? !found && !c.in_has_null : found;
    }
    case Check::Kind::kBetween: {
      const bool in = v >= c.value && v <= c.high;
      return in != c.negated;
    }
    default:
      return false;
  }
}

std::string RowPredicate::MakeKey() const {
  // Every field of every check, strings length-prefixed, so distinct checks never collide.
  std::string key;
  const auto add_int = [&key](int64_t v) { key.append(std::to_string(v)).push_back(','); };
  const auto add_text = [&key, &add_int](const std::string& t) {
    add_int(static_cast<int64_t>(t.size()));
    key.append(t);
  };
  for (const Check& c : checks_) {
    add_int(static_cast<int64_t>(c.kind));
    add_int(c.column);
    add_int(c.is_string);
    add_int(c.negated);
    add_int(static_cast<int64_t>(c.op));
    add_int(c.value);
    add_int(c.high);
    add_text(c.text);
    add_text(c.text_high);
    add_int(static_cast<int64_t>(c.values.size()));
    for (const int64_t v : c.values) add_int(v);
    add_int(static_cast<int64_t>(c.texts.size()));
    for (const std::string& t : c.texts) add_text(t);
    add_int(c.in_has_null);
    key.push_back(';');
  }
  return key;
}

RowPredicate::Bound RowPredicate::Bind(const shard::SourceView& source) const {
  Bound b;
  b.predicate_ = this;
  b.source_ = &source;
  b.columns_.resize(source.batches.size());
  for (size_t k = 0; k < source.batches.size(); ++k) {
    for (const Check& c : checks_) b.columns_[k].push_back(source.batches[k]->column(c.column));
  }
  return b;
}

bool RowPredicate::Bound::TestInBatch(size_t batch, int64_t row) const {
  const std::vector<arrow::Array>& cols = columns_[batch];
  for (size_t i = 0; i < predicate_->checks_.size(); ++i) {
    if (!Passes(predicate_->checks_[i], cols[i], row)) return false;
  }
  return true;
}

namespace {

// Rows r of [begin, end) with (lo <= v[r] <= hi) != negated, appended to *rows: a mask of
// 64 rows at a time in a loop the compiler vectorises, then the set bits.
template <typename T>
void SelectRange(const T* v, int64_t begin, int64_t end, int64_t lo, int64_t hi, bool negated,
                 std::vector<int64_t>* rows) {
  alignas(32) uint8_t pass[64];
  const uint8_t flip = negated ? 0xff : 0;
  for (int64_t at = begin; at < end; at += 64) {
    const int64_t n = std::min<int64_t>(64, end - at);
    const T* x = v + at;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t y = static_cast<int64_t>(x[i]);
      pass[i] = static_cast<uint8_t>(-static_cast<int>((y >= lo) & (y <= hi))) ^ flip;  // 0 / 0xff
    }
    uint64_t bits = 0;
#if defined(__AVX2__)
    if (n == 64) {
      const __m256i a = _mm256_load_si256(reinterpret_cast<const __m256i*>(pass));
      const __m256i b = _mm256_load_si256(reinterpret_cast<const __m256i*>(pass + 32));
      bits = static_cast<uint32_t>(_mm256_movemask_epi8(a)) |
             static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(b))) << 32;
    } else {
      for (int64_t i = 0; i < n; ++i) bits |= static_cast<uint64_t>(pass[i] & 1) << i;
    }
#else
    for (int64_t i = 0; i < n; ++i) bits |= static_cast<uint64_t>(pass[i] & 1) << i;
#endif
    while (bits != 0) {
      rows->push_back(at + std::countr_zero(bits));
      bits &= bits - 1;
    }
  }
}

}  // namespace

void RowPredicate::Bound::SelectInBatch(size_t batch, int64_t begin, int64_t end,
                                        std::vector<int64_t>* rows) const {
  const std::vector<Check>& checks = predicate_->checks_;
  const std::vector<arrow::Array>& cols = columns_[batch];
  const size_t first = rows->size();
  size_t done = 0;  // checks already applied to the rows appended
  if (!checks.empty() && !checks[0].is_string && cols[0].null_count() == 0 &&
      cols[0].type_id() != arrow::TypeId::kBool) {
    const Check& c = checks[0];
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    std::optional<std::tuple<int64_t, int64_t, bool>> range;  // lo, hi, negated
    if (c.kind == Check::Kind::kBetween) {
      range.emplace(c.value, c.high, c.negated);
    } else if (c.kind == Check::Kind::kIn && c.values.size() == 1 && !c.negated) {
      range.emplace(c.values[0], c.values[0], false);
    } else if (c.kind == Check::Kind::kCompare) {
      const int64_t v = c.value;
      switch (c.op) {
        case CompareOp::kEq:
          range.emplace(v, v, false);
          break;
        case CompareOp::kNe:
          range.emplace(v, v, true);
          break;
        case CompareOp::kLt:
          range = v == kMin ? std::make_tuple(int64_t{1}, int64_t{0}, false)
                            : std::make_tuple(kMin, v - 1, false);
          break;
        case CompareOp::kLe:
          range.emplace(kMin, v, false);
          break;
        case CompareOp::kGt:
          range = v == kMax ? std::make_tuple(int64_t{1}, int64_t{0}, false)
                            : std::make_tuple(v + 1, kMax, false);
          break;
        case CompareOp::kGe:
          range.emplace(v, kMax, false);
          break;
      }
    }
    if (range) {
      const auto [lo, hi, neg] = *range;
      const arrow::Array& a = cols[0];
      switch (a.type_id()) {
        case arrow::TypeId::kInt8:
          SelectRange(a.raw_values<int8_t>(), begin, end, lo, hi, neg, rows);
          break;
        case arrow::TypeId::kInt16:
          SelectRange(a.raw_values<int16_t>(), begin, end, lo, hi, neg, rows);
          break;
        case arrow::TypeId::kInt32:
        case arrow::TypeId::kDate32:
          SelectRange(a.raw_values<int32_t>(), begin, end, lo, hi, neg, rows);
          break;
        case arrow::TypeId::kUInt8:
          SelectRange(a.raw_values<uint8_t>(), begin, end, lo, hi, neg, rows);
          break;
        case arrow::TypeId::kUInt16:
          SelectRange(a.raw_values<uint16_t>(), begin, end, lo, hi, neg, rows);
          break;
        case arrow::TypeId::kUInt32:
          SelectRange(a.raw_values<uint32_t>(), begin, end, lo, hi, neg, rows);
          break;
        default:  // kInt64, kTimestamp
          SelectRange(a.raw_values<int64_t>(), begin, end, lo, hi, neg, rows);
          break;
      }
      done = 1;
    }
  }
  if (done == 0) {
    for (int64_t r = begin; r < end; ++r) {
      if (TestInBatch(batch, r)) rows->push_back(r);
    }
    return;
  }
  // The other checks over the rows the first one kept, in place.
  size_t kept = first;
  for (size_t i = first; i < rows->size(); ++i) {
    const int64_t r = (*rows)[i];
    bool pass = true;
    for (size_t k = done; k < checks.size() && pass; ++k) pass = Passes(checks[k], cols[k], r);
    if (pass) (*rows)[kept++] = r;
  }
  rows->resize(kept);
}

bool RowPredicate::Bound::Test(int64_t position) const {
  const auto [b, row] = source_->Locate(position);
  if (b < 0 || static_cast<size_t>(b) >= columns_.size()) return false;
  return TestInBatch(static_cast<size_t>(b), row);
}

}  // namespace strata::query
