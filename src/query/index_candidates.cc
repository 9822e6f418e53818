#include "query/index_candidates.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "common/strings.h"
#include "format/key_encoding.h"
#include "index/column_index.h"
#include "index/scalar/btree_index.h"
#include "query/source_rows.h"

namespace strata::query {

using filter::CompareOp;
using filter::Expr;
using filter::ExprKind;
using filter::Literal;

namespace {

// Schema index of a one-part column reference, as Bind resolves it (exact name, then a unique
// case-insensitive match), or -1.
int ResolveColumn(const arrow::Schema& schema, const Expr& e) {
  if (e.kind != ExprKind::kColumn || e.path.size() != 1) return -1;
  const int exact = schema.GetFieldIndex(e.path[0]);
  if (exact >= 0) return exact;
  int found = -1;
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (EqualsIgnoreCase(schema.field(i)->name, e.path[0])) {
      if (found >= 0) return -1;
      found = i;
    }
  }
  return found;
}

bool IsRowIdRef(const arrow::Schema& schema, const Expr& e) {
  return e.kind == ExprKind::kColumn && e.path.size() == 1 && ResolveColumn(schema, e) < 0 &&
         EqualsIgnoreCase(e.path[0], filter::kRowIdName);
}

// The key-encoded form (format/key_encoding.h, one component) of `lit` as a value of `type`,
// when the literal converts to the type exactly; nullopt otherwise (the caller then evaluates
// instead of using an index).
std::optional<std::string> EncodeLiteral(const arrow::DataType& type, const Literal& lit) {
  std::string out;
  switch (type.id()) {
    case arrow::TypeId::kInt8:
    case arrow::TypeId::kInt16:
    case arrow::TypeId::kInt32:
    case arrow::TypeId::kInt64: {
      if (lit.kind != Literal::Kind::kInt) return std::nullopt;
      const int bits = type.bit_width();
      if (bits < 64) {
        const int64_t hi = (int64_t{1} << (bits - 1)) - 1;
        if (lit.int_value > hi || lit.int_value < -hi - 1) return std::nullopt;
      }
      format::AppendSignedComponent(lit.int_value, bits / 8, &out);
      return out;
    }
    case arrow::TypeId::kUInt8:
    case arrow::TypeId::kUInt16:
    case arrow::TypeId::kUInt32:
    case arrow::TypeId::kUInt64: {
      if (lit.kind != Literal::Kind::kInt || lit.int_value < 0) return std::nullopt;
      const int bits = type.bit_width();
      if (bits < 64 && static_cast<uint64_t>(lit.int_value) >= (uint64_t{1} << bits)) {
        return std::nullopt;
      }
      format::AppendUnsignedComponent(static_cast<uint64_t>(lit.int_value), bits / 8, &out);
      return out;
    }
    case arrow::TypeId::kFloat32: {
      double v;
      if (lit.kind == Literal::Kind::kFloat) {
        v = lit.float_value;
      } else if (lit.kind == Literal::Kind::kInt && lit.int_value >= -(int64_t{1} << 24) &&
                 lit.int_value <= (int64_t{1} << 24)) {
        v = static_cast<double>(lit.int_value);
      } else {
        return std::nullopt;
      }
      const float f = static_cast<float>(v);
      if (static_cast<double>(f) != v) return std::nullopt;  // also NaN
      format::AppendFloat32Component(f, &out);
      return out;
    }
    case arrow::TypeId::kFloat64: {
      double v;
      if (lit.kind == Literal::Kind::kFloat) {
        v = lit.float_value;
      } else if (lit.kind == Literal::Kind::kInt && lit.int_value >= -(int64_t{1} << 53) &&
                 lit.int_value <= (int64_t{1} << 53)) {
        v = static_cast<double>(lit.int_value);
      } else {
        return std::nullopt;
      }
      if (v != v) return std::nullopt;
      format::AppendFloat64Component(v, &out);
      return out;
    }
    case arrow::TypeId::kUtf8:
    case arrow::TypeId::kLargeUtf8:
      if (lit.kind != Literal::Kind::kString) return std::nullopt;
      format::AppendBytesComponent(lit.string_value, &out);
      return out;
    case arrow::TypeId::kBool:
      if (lit.kind != Literal::Kind::kBool) return std::nullopt;
      format::AppendBoolComponent(lit.bool_value, &out);
      return out;
    case arrow::TypeId::kDate32:
      if (lit.kind != Literal::Kind::kDate || lit.int_value > std::numeric_limits<int32_t>::max() ||
          lit.int_value < std::numeric_limits<int32_t>::min()) {
        return std::nullopt;
      }
      format::AppendSignedComponent(lit.int_value, 4, &out);
      return out;
    case arrow::TypeId::kTimestamp:
      if (lit.kind != Literal::Kind::kTimestamp || type.unit() != arrow::TimeUnit::kMicro) {
        return std::nullopt;
      }
      format::AppendSignedComponent(lit.int_value, 8, &out);
      return out;
    default:
      return std::nullopt;
  }
}

// `col <op> literal` (or `literal <op> col`, flipped): the column expression, the operator
// as if the column were on the left, and the literal.
struct ColumnCompare {
  const Expr* column = nullptr;
  CompareOp op = CompareOp::kEq;
  const Literal* literal = nullptr;
};

CompareOp Flip(CompareOp op) {
  switch (op) {
    case CompareOp::kLt:
      return CompareOp::kGt;
    case CompareOp::kLe:
      return CompareOp::kGe;
    case CompareOp::kGt:
      return CompareOp::kLt;
    case CompareOp::kGe:
      return CompareOp::kLe;
    default:
      return op;
  }
}

std::optional<ColumnCompare> AsColumnCompare(const Expr& e) {
  if (e.kind != ExprKind::kCompare || e.children.size() != 2) return std::nullopt;
  const Expr& a = *e.children[0];
  const Expr& b = *e.children[1];
  if (a.kind == ExprKind::kColumn && b.kind == ExprKind::kLiteral) {
    return ColumnCompare{&a, e.compare, &b.literal};
  }
  if (b.kind == ExprKind::kColumn && a.kind == ExprKind::kLiteral) {
    return ColumnCompare{&b, Flip(e.compare), &a.literal};
  }
  return std::nullopt;
}

// `col IN (literals)` (not negated): the column and the literals.
bool AsColumnIn(const Expr& e, const Expr** column, std::vector<const Literal*>* literals) {
  if (e.kind != ExprKind::kIn || e.negated || e.children.size() < 2) return false;
  if (e.children[0]->kind != ExprKind::kColumn) return false;
  literals->clear();
  for (size_t i = 1; i < e.children.size(); ++i) {
    if (e.children[i]->kind != ExprKind::kLiteral) return false;
    literals->push_back(&e.children[i]->literal);
  }
  *column = e.children[0].get();
  return true;
}

void SortUnique(std::vector<int64_t>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

bool AsFilterColumnIn(const Expr& e, const Expr** column, std::vector<const Literal*>* literals) {
  return AsColumnIn(e, column, literals);
}

std::optional<std::string> EncodeFilterLiteral(const arrow::DataType& type, const Literal& lit) {
  return EncodeLiteral(type, lit);
}

int ResolveFilterColumn(const arrow::Schema& schema, const Expr& e) {
  return ResolveColumn(schema, e);
}

std::optional<FilterColumnCompare> AsFilterColumnCompare(const Expr& e) {
  auto c = AsColumnCompare(e);
  if (!c) return std::nullopt;
  return FilterColumnCompare{c->column, c->op, c->literal};
}

void FlattenAnd(const filter::ExprPtr& e, std::vector<const Expr*>* out) {
  if (e->kind == ExprKind::kAnd) {
    for (const auto& c : e->children) FlattenAnd(c, out);
    return;
  }
  out->push_back(e.get());
}

std::optional<std::vector<int64_t>> IndexCandidates(const arrow::Schema& schema,
                                                    const shard::SourceView& source,
                                                    const std::vector<const Expr*>& conjuncts,
                                                    std::string* how, int64_t max_btree_rows,
                                                    int64_t* btree_count) {
  // 1. Point lookup on the whole primary key.
  if (source.find_key && !source.key_columns.empty()) {
    const size_t nkey = source.key_columns.size();
    std::vector<const Expr*> eq(nkey, nullptr);  // conjunct `key_i = literal`
    std::vector<std::string> parts(nkey);
    std::vector<std::string> keys;
    const Expr* in_conjunct = nullptr;
    for (const Expr* c : conjuncts) {
      if (auto cc = AsColumnCompare(*c); cc && cc->op == CompareOp::kEq) {
        const int col = ResolveColumn(schema, *cc->column);
        for (size_t k = 0; k < nkey; ++k) {
          if (source.key_columns[k] != col || eq[k] != nullptr) continue;
          auto enc = EncodeLiteral(*schema.field(col)->type, *cc->literal);
          if (enc) {
            eq[k] = c;
            parts[k] = std::move(*enc);
          }
        }
        continue;
      }
      const Expr* column = nullptr;
      std::vector<const Literal*> literals;
      if (nkey == 1 && in_conjunct == nullptr && AsColumnIn(*c, &column, &literals) &&
          ResolveColumn(schema, *column) == source.key_columns[0]) {
        std::vector<std::string> encoded;
        bool ok = true;
        for (const Literal* l : literals) {
          if (l->kind == Literal::Kind::kNull) continue;  // matches nothing
          auto enc = EncodeLiteral(*schema.field(source.key_columns[0])->type, *l);
          if (!enc) {
            ok = false;
            break;
          }
          encoded.push_back(std::move(*enc));
        }
        if (ok) {
          in_conjunct = c;
          keys = std::move(encoded);
        }
      }
    }
    const bool all_eq = std::all_of(eq.begin(), eq.end(), [](const Expr* e) { return e; });
    if (all_eq || in_conjunct != nullptr) {
      std::string what;
      if (all_eq) {
        std::string key;
        for (size_t k = 0; k < nkey; ++k) {
          key += parts[k];
          what += (what.empty() ? "" : " AND ") + eq[k]->ToString();
        }
        keys = {std::move(key)};
      } else {
        what = in_conjunct->ToString();
      }
      std::vector<int64_t> out;
      for (const std::string& key : keys) {
        if (auto pos = source.find_key(key)) out.push_back(*pos);
      }
      SortUnique(&out);
      *how = "key lookup " + what;
      return out;
    }
  }
  // 2. `_rowid` addresses.
  for (const Expr* c : conjuncts) {
    std::vector<const Literal*> literals;
    std::string what;
    if (auto cc = AsColumnCompare(*c);
        cc && cc->op == CompareOp::kEq && IsRowIdRef(schema, *cc->column)) {
      literals.push_back(cc->literal);
    } else {
      const Expr* column = nullptr;
      if (!AsColumnIn(*c, &column, &literals) || !IsRowIdRef(schema, *column)) continue;
    }
    std::vector<int64_t> out;
    bool ok = true;
    for (const Literal* l : literals) {
      if (l->kind == Literal::Kind::kNull) continue;
      if (l->kind != Literal::Kind::kInt) {
        ok = false;  // e.g. a float literal: evaluate instead
        break;
      }
      if (l->int_value < 0) continue;  // no row has a negative address
      const int64_t pos = PositionOfRowId(source, static_cast<uint64_t>(l->int_value));
      if (pos >= 0) out.push_back(pos);
    }
    if (!ok) continue;
    SortUnique(&out);
    *how = "_rowid lookup " + c->ToString();
    return out;
  }
  // 3. A BTree on a conjunct: equality / IN / IS NULL first, then ranges, then != and
  // IS NOT NULL (rarely selective).
  struct Pick {
    int rank = 3;
    const Expr* conjunct = nullptr;
    const index::ColumnIndex* index = nullptr;
  };
  Pick best;
  for (const Expr* c : conjuncts) {
    int rank = 3;
    const Expr* column = nullptr;
    if (auto cc = AsColumnCompare(*c)) {
      column = cc->column;
      rank = cc->op == CompareOp::kEq ? 0 : cc->op == CompareOp::kNe ? 2 : 1;
    } else if (c->kind == ExprKind::kIn && !c->negated) {
      column = c->children[0].get();
      rank = 0;
    } else if (c->kind == ExprKind::kBetween && !c->negated) {
      column = c->children[0].get();
      rank = 1;
    } else if (c->kind == ExprKind::kIsNull) {
      column = c->children[0].get();
      rank = c->negated ? 2 : 0;
    }
    if (column == nullptr || rank >= best.rank) continue;
    const int col = ResolveColumn(schema, *column);
    if (col < 0) continue;
    const index::ColumnIndex* ci = source.FindIndex(col, index::IndexKind::kBTree);
    if (ci == nullptr || ci->btree() == nullptr) continue;
    best = {rank, c, ci};
  }
  if (best.conjunct == nullptr) return std::nullopt;
  const index::BTreeIndex& bt = *best.index->btree();
  const arrow::DataType& type = *schema.field(best.index->column())->type;
  const Expr& c = *best.conjunct;
  if (max_btree_rows < std::numeric_limits<int64_t>::max()) {
    // Count first: a broad conjunct is not worth materialising.
    const int64_t limit = max_btree_rows + 1;
    std::optional<int64_t> count;
    if (auto cc = AsColumnCompare(c)) {
      if (auto key = EncodeLiteral(type, *cc->literal)) {
        switch (cc->op) {
          case CompareOp::kEq:
            count = bt.CountIn({*key});
            break;
          case CompareOp::kNe:
            count = bt.CountNotEqual(*key, limit);
            break;
          case CompareOp::kLt:
            count = bt.CountRange(std::nullopt, index::KeyBound{*key, false}, limit);
            break;
          case CompareOp::kLe:
            count = bt.CountRange(std::nullopt, index::KeyBound{*key, true}, limit);
            break;
          case CompareOp::kGt:
            count = bt.CountRange(index::KeyBound{*key, false}, std::nullopt, limit);
            break;
          case CompareOp::kGe:
            count = bt.CountRange(index::KeyBound{*key, true}, std::nullopt, limit);
            break;
        }
      }
    } else if (c.kind == ExprKind::kBetween && c.children.size() == 3 &&
               c.children[1]->kind == ExprKind::kLiteral &&
               c.children[2]->kind == ExprKind::kLiteral) {
      auto lo = EncodeLiteral(type, c.children[1]->literal);
      auto hi = EncodeLiteral(type, c.children[2]->literal);
      if (lo && hi) {
        count = bt.CountRange(index::KeyBound{*lo, true}, index::KeyBound{*hi, true}, limit);
      }
    } else if (c.kind == ExprKind::kIsNull) {
      count = c.negated ? bt.CountRange(std::nullopt, std::nullopt, limit) : bt.CountIsNull();
    }
    if (count && *count > max_btree_rows) {
      if (btree_count != nullptr) *btree_count = *count;
      *how = "BTree '" + best.index->spec().name + "' " + c.ToString() +
             " matches >= " + std::to_string(*count) + " rows";
      return std::nullopt;
    }
  }
  std::vector<int64_t> out;
  if (auto cc = AsColumnCompare(c)) {
    auto key = EncodeLiteral(type, *cc->literal);
    if (!key) return std::nullopt;
    switch (cc->op) {
      case CompareOp::kEq:
        out = bt.Equal(*key);
        break;
      case CompareOp::kNe:
        out = bt.NotEqual(*key);
        break;
      case CompareOp::kLt:
        out = bt.Range(std::nullopt, index::KeyBound{*key, false});
        break;
      case CompareOp::kLe:
        out = bt.Range(std::nullopt, index::KeyBound{*key, true});
        break;
      case CompareOp::kGt:
        out = bt.Range(index::KeyBound{*key, false}, std::nullopt);
        break;
      case CompareOp::kGe:
        out = bt.Range(index::KeyBound{*key, true}, std::nullopt);
        break;
    }
  } else if (c.kind == ExprKind::kIn) {
    std::vector<std::string> keys;
    for (size_t i = 1; i < c.children.size(); ++i) {
      const Expr& e = *c.children[i];
      if (e.kind != ExprKind::kLiteral) return std::nullopt;
      if (e.literal.kind == Literal::Kind::kNull) continue;
      auto key = EncodeLiteral(type, e.literal);
      if (!key) return std::nullopt;
      keys.push_back(std::move(*key));
    }
    out = bt.In(keys);
  } else if (c.kind == ExprKind::kBetween) {
    if (c.children.size() != 3 || c.children[1]->kind != ExprKind::kLiteral ||
        c.children[2]->kind != ExprKind::kLiteral) {
      return std::nullopt;
    }
    auto lo = EncodeLiteral(type, c.children[1]->literal);
    auto hi = EncodeLiteral(type, c.children[2]->literal);
    if (!lo || !hi) return std::nullopt;
    out = bt.Range(index::KeyBound{*lo, true}, index::KeyBound{*hi, true});
  } else if (c.kind == ExprKind::kIsNull) {
    out = c.negated ? bt.Range(std::nullopt, std::nullopt) : bt.IsNull();
  }
  // A MemTable's index may hold rows past this snapshot.
  out.erase(std::lower_bound(out.begin(), out.end(), source.num_rows), out.end());
  *how = "BTree '" + best.index->spec().name + "' " + c.ToString();
  return out;
}

}  // namespace strata::query
