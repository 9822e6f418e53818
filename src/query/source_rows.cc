#include "query/source_rows.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <optional>

#include "arrow/compute/gather.h"
#include "arrow/compute/take.h"
#include "common/strings.h"
#include "format/key_encoding.h"
#include "index/column_index.h"
#include "index/scalar/btree_index.h"
#include "query/filter/ast.h"

namespace strata::query {

namespace {

using filter::CompareOp;
using filter::Expr;
using filter::ExprKind;
using filter::Literal;

// Set bits of LSB-first `bits` in [0, n).
int64_t CountBits(const std::vector<uint8_t>& bits, int64_t n) {
  int64_t count = 0;
  const int64_t full = std::min<int64_t>(n >> 3, static_cast<int64_t>(bits.size()));
  for (int64_t i = 0; i < full; ++i) count += std::popcount(bits[static_cast<size_t>(i)]);
  if ((n & 7) != 0 && full < static_cast<int64_t>(bits.size())) {
    const unsigned mask = (1u << (n & 7)) - 1u;
    count += std::popcount(static_cast<unsigned>(bits[static_cast<size_t>(full)] & mask));
  }
  return count;
}

void SetBit(std::vector<uint8_t>& bits, int64_t i) {
  bits[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
}

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

void FlattenAnd(const filter::ExprPtr& e, std::vector<const Expr*>* out) {
  if (e->kind == ExprKind::kAnd) {
    for (const auto& c : e->children) FlattenAnd(c, out);
    return;
  }
  out->push_back(e.get());
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

std::string Plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void SortUnique(std::vector<int64_t>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

// Candidate positions of `source` for the conjuncts, from its key index, `_rowid` addresses
// or a BTree (a superset of the rows passing the filter); nullopt when none applies or the
// index would not narrow the rows down. `how` describes the pick for plans.
std::optional<std::vector<int64_t>> IndexCandidates(const arrow::Schema& schema,
                                                    const shard::SourceView& source,
                                                    const std::vector<const Expr*>& conjuncts,
                                                    std::string* how) {
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
      const auto [gen, pos] = DecodeRowId(static_cast<uint64_t>(l->int_value));
      if (gen == source.generation && pos < source.num_rows) out.push_back(pos);
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

// `batch` (storage schema) as a batch of the user schema (zero-copy).
arrow::RecordBatchPtr UserView(const arrow::SchemaPtr& schema, const arrow::RecordBatch& batch) {
  const int n = schema->num_fields();
  std::vector<arrow::ArrayDataPtr> cols(batch.columns().begin(), batch.columns().begin() + n);
  return std::make_shared<arrow::RecordBatch>(schema, batch.num_rows(), std::move(cols));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// SnapshotFilter

Result<SnapshotFilter> SnapshotFilter::Make(const shard::ShardSnapshot& shard,
                                            std::string_view sql) {
  SnapshotFilter out;
  STRATA_ASSIGN_OR_RETURN(out.expr_, filter::ParseAndBind(sql, *shard.schema));
  out.row_offset_base_.assign(shard.sources.size() + 1, 0);
  for (size_t s = 0; s < shard.sources.size(); ++s) {
    out.row_offset_base_[s + 1] = out.row_offset_base_[s] + shard.sources[s].live_rows;
  }
  return out;
}

int64_t SnapshotFilter::row_offset_base(uint32_t source) const {
  return source < row_offset_base_.size() ? row_offset_base_[source] : 0;
}

// ---------------------------------------------------------------------------------------
// AcceptedRows

Result<AcceptedRows> AcceptedRows::Make(const shard::ShardSnapshot& shard, uint32_t source_index,
                                        const SnapshotFilter& filter) {
  AcceptedRows out;
  const shard::SourceView& source = shard.sources.at(source_index);
  out.source_ = &source;
  if (filter.empty()) {
    out.count_ = source.live_rows;
    return out;
  }
  out.filtered_ = true;
  out.mask_.assign(static_cast<size_t>((source.num_rows + 7) / 8), 0);
  if (source.live_rows == 0) {
    out.plan_ = "no live rows";
    return out;
  }
  const filter::BoundExpr& expr = *filter.expr();
  const bool need_ids = expr.uses_row_id();
  const bool need_offsets = expr.uses_row_offset();
  std::vector<const Expr*> conjuncts;
  FlattenAnd(expr.expr(), &conjuncts);
  std::string how;
  std::optional<std::vector<int64_t>> candidates =
      IndexCandidates(*shard.schema, source, conjuncts, &how);
  if (candidates) {
    std::vector<int64_t> live;
    live.reserve(candidates->size());
    for (int64_t p : *candidates) {
      if (source.IsLive(p)) live.push_back(p);
    }
    // Gathering most of the rows costs more than evaluating the batches as they are.
    if (static_cast<int64_t>(live.size()) * 2 > source.num_rows) {
      how += " matched " + std::to_string(live.size()) + " rows, not selective";
      candidates.reset();
    } else {
      *candidates = std::move(live);
    }
  }
  std::vector<uint8_t> match;
  std::vector<uint64_t> ids, offsets;
  filter::RowContext ctx;
  int64_t offset_base = filter.row_offset_base(source_index);  // live rows before the batch
  if (candidates) {
    // Evaluate the whole filter on the candidate rows only, batch by batch.
    size_t next = 0;
    std::vector<int64_t> rows;
    for (size_t b = 0; b < source.batches.size() && next < candidates->size(); ++b) {
      const arrow::RecordBatch& batch = *source.batches[b];
      const int64_t start = source.batch_starts[b];
      const int64_t end = start + batch.num_rows();
      rows.clear();
      while (next < candidates->size() && (*candidates)[next] < end) {
        rows.push_back((*candidates)[next++] - start);
      }
      std::vector<uint8_t> live;  // needed for `_rowoffset` only
      if (need_offsets) live = source.LiveBits(b);
      if (!rows.empty()) {
        const int64_t m = static_cast<int64_t>(rows.size());
        std::vector<arrow::ArrayDataPtr> cols(batch.columns().begin(),
                                              batch.columns().begin() + shard.schema->num_fields());
        for (int c : expr.columns()) {
          STRATA_ASSIGN_OR_RETURN(cols[static_cast<size_t>(c)],
                                  arrow::compute::Take(*batch.column_data(c), rows.data(), m));
        }
        // Unread columns keep the source's arrays: the evaluator never touches them.
        arrow::RecordBatch picked(shard.schema, m, std::move(cols));
        ids.clear();
        offsets.clear();
        if (need_ids) {
          for (int64_t r : rows) ids.push_back(EncodeRowId(source.generation, start + r));
          ctx.row_ids = ids.data();
        }
        if (need_offsets) {
          for (int64_t r : rows) {
            offsets.push_back(static_cast<uint64_t>(offset_base + CountBits(live, r)));
          }
          ctx.row_offsets = offsets.data();
        }
        STRATA_RETURN_IF_ERROR(filter::EvaluateMask(expr, picked, ctx, &match));
        for (int64_t i = 0; i < m; ++i) {
          if (match[static_cast<size_t>(i)] != 0) {
            SetBit(out.mask_, start + rows[static_cast<size_t>(i)]);
            ++out.count_;
          }
        }
      }
      if (need_offsets) offset_base += CountBits(live, batch.num_rows());
    }
    out.plan_ = how + ": " + Plural(static_cast<int64_t>(candidates->size()), "candidate");
    return out;
  }
  int64_t evaluated = 0;
  for (size_t b = 0; b < source.batches.size(); ++b) {
    const arrow::RecordBatch& batch = *source.batches[b];
    const int64_t n = batch.num_rows();
    const int64_t start = source.batch_starts[b];
    const std::vector<uint8_t> live = source.LiveBits(b);
    const int64_t live_here = CountBits(live, n);
    if (live_here == 0) continue;
    if (need_ids) {
      ids.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        ids[static_cast<size_t>(i)] = EncodeRowId(source.generation, start + i);
      ctx.row_ids = ids.data();
    }
    if (need_offsets) {
      offsets.resize(static_cast<size_t>(n));
      int64_t acc = offset_base;
      for (int64_t i = 0; i < n; ++i) {
        offsets[static_cast<size_t>(i)] = static_cast<uint64_t>(acc);
        if (BitIsSet(live, i)) ++acc;
      }
      ctx.row_offsets = offsets.data();
    }
    offset_base += live_here;
    STRATA_RETURN_IF_ERROR(filter::EvaluateMask(expr, *UserView(shard.schema, batch), ctx, &match));
    evaluated += n;
    for (int64_t i = 0; i < n; ++i) {
      if (match[static_cast<size_t>(i)] != 0 && BitIsSet(live, i)) {
        SetBit(out.mask_, start + i);
        ++out.count_;
      }
    }
  }
  out.plan_ = (how.empty() ? std::string() : how + "; ") + "filter evaluated over " +
              Plural(evaluated, "row");
  return out;
}

std::vector<int64_t> AcceptedRows::Positions() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count_));
  if (filtered_) {
    for (size_t byte = 0; byte < mask_.size(); ++byte) {
      unsigned v = mask_[byte];
      while (v != 0) {
        const int bit = std::countr_zero(v);
        out.push_back(static_cast<int64_t>(byte) * 8 + bit);
        v &= v - 1;
      }
    }
    return out;
  }
  for (size_t b = 0; b < source_->batches.size(); ++b) {
    const std::vector<uint8_t> live = source_->LiveBits(b);
    const int64_t n = source_->batches[b]->num_rows();
    const int64_t start = source_->batch_starts[b];
    for (size_t byte = 0; byte < live.size(); ++byte) {
      unsigned v = live[byte];
      while (v != 0) {
        const int bit = std::countr_zero(v);
        const int64_t i = static_cast<int64_t>(byte) * 8 + bit;
        if (i < n) out.push_back(start + i);
        v &= v - 1;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Gathering

namespace {

// Column `col` (user schema index) of `hits`, gathered.
Result<arrow::ArrayDataPtr> GatherColumn(const shard::ShardSnapshot& shard, int col,
                                         const std::vector<SourceHit>& hits) {
  std::vector<arrow::compute::Span> spans;
  spans.reserve(hits.size());
  for (const SourceHit& hit : hits) {
    const shard::SourceView& source = shard.sources.at(hit.source);
    const auto [b, row] = source.Locate(hit.position);
    if (b < 0) {
      return Status::Invalid("internal: row " + std::to_string(hit.position) +
                             " is outside source '" + source.name + "'");
    }
    arrow::compute::AddSpan(
        &spans, {source.batches[static_cast<size_t>(b)]->column_data(col).get(), row, 1});
  }
  return arrow::compute::GatherSpans(shard.schema->field(col)->type, spans);
}

// A batch of the user schema over `hits` in which the columns `expr` reads are gathered
// (cached in `gathered`); the other columns hold placeholder arrays it never reads.
Result<arrow::RecordBatchPtr> GatherForExpr(const shard::ShardSnapshot& shard,
                                            const filter::BoundExpr& expr,
                                            const std::vector<SourceHit>& hits,
                                            std::map<int, arrow::ArrayDataPtr>* gathered) {
  const int nf = shard.schema->num_fields();
  std::vector<arrow::ArrayDataPtr> cols(static_cast<size_t>(nf));
  for (int c : expr.columns()) {
    auto it = gathered->find(c);
    if (it == gathered->end()) {
      STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, GatherColumn(shard, c, hits));
      it = gathered->emplace(c, std::move(col)).first;
    }
    cols[static_cast<size_t>(c)] = it->second;
  }
  for (int c = 0; c < nf; ++c) {
    if (cols[static_cast<size_t>(c)] != nullptr) continue;
    for (const auto& s : shard.sources) {
      if (!s.batches.empty()) {
        cols[static_cast<size_t>(c)] = s.batches[0]->column_data(c);
        break;
      }
    }
    if (cols[static_cast<size_t>(c)] == nullptr) {
      STRATA_ASSIGN_OR_RETURN(cols[static_cast<size_t>(c)],
                              arrow::compute::GatherSpans(shard.schema->field(c)->type, {}));
    }
  }
  return std::make_shared<arrow::RecordBatch>(shard.schema, static_cast<int64_t>(hits.size()),
                                              std::move(cols));
}

}  // namespace

Result<std::vector<arrow::ArrayDataPtr>> GatherSourceRows(const shard::ShardSnapshot& shard,
                                                          const Projection& projection,
                                                          const std::vector<SourceHit>& hits) {
  std::vector<arrow::ArrayDataPtr> columns;
  columns.reserve(projection.indices.size());
  std::map<int, arrow::ArrayDataPtr> gathered;
  std::vector<uint64_t> ids, offsets;
  for (size_t c = 0; c < projection.indices.size(); ++c) {
    const filter::BoundExprPtr expr =
        c < projection.exprs.size() ? projection.exprs[c] : filter::BoundExprPtr();
    if (expr == nullptr) {
      const int src = projection.indices[c];
      auto it = gathered.find(src);
      if (it == gathered.end()) {
        STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, GatherColumn(shard, src, hits));
        it = gathered.emplace(src, std::move(col)).first;
      }
      columns.push_back(it->second);
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr batch,
                            GatherForExpr(shard, *expr, hits, &gathered));
    filter::RowContext ctx;
    if (expr->uses_row_id()) {
      if (ids.empty()) ids = SourceRowIds(shard, hits);
      ctx.row_ids = ids.data();
    }
    if (expr->uses_row_offset()) {
      if (offsets.empty()) offsets = SourceRowOffsets(shard, hits);
      ctx.row_offsets = offsets.data();
    }
    STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr col, filter::Evaluate(*expr, *batch, ctx));
    columns.push_back(std::move(col));
  }
  return columns;
}

Result<std::vector<uint8_t>> FilterHits(const shard::ShardSnapshot& shard,
                                        const SnapshotFilter& filter,
                                        const std::vector<SourceHit>& hits) {
  std::vector<uint8_t> out(hits.size(), 1);
  if (filter.empty() || hits.empty()) return out;
  std::map<int, arrow::ArrayDataPtr> gathered;
  STRATA_ASSIGN_OR_RETURN(arrow::RecordBatchPtr batch,
                          GatherForExpr(shard, *filter.expr(), hits, &gathered));
  std::vector<uint64_t> ids, offsets;
  filter::RowContext ctx;
  if (filter.expr()->uses_row_id()) {
    ids = SourceRowIds(shard, hits);
    ctx.row_ids = ids.data();
  }
  if (filter.expr()->uses_row_offset()) {
    offsets = SourceRowOffsets(shard, hits);
    ctx.row_offsets = offsets.data();
  }
  STRATA_RETURN_IF_ERROR(filter::EvaluateMask(*filter.expr(), *batch, ctx, &out));
  return out;
}

std::vector<uint64_t> SourceRowIds(const shard::ShardSnapshot& shard,
                                   const std::vector<SourceHit>& hits) {
  std::vector<uint64_t> out;
  out.reserve(hits.size());
  for (const SourceHit& hit : hits) {
    out.push_back(EncodeRowId(shard.sources.at(hit.source).generation, hit.position));
  }
  return out;
}

std::vector<uint64_t> SourceRowOffsets(const shard::ShardSnapshot& shard,
                                       const std::vector<SourceHit>& hits) {
  std::vector<uint64_t> out;
  out.reserve(hits.size());
  // Live rows of all older sources, and per source the live rows of its earlier batches
  // (computed on first use).
  std::vector<int64_t> source_base(shard.sources.size() + 1, 0);
  for (size_t s = 0; s < shard.sources.size(); ++s) {
    source_base[s + 1] = source_base[s] + shard.sources[s].live_rows;
  }
  std::map<uint32_t, std::vector<std::pair<int64_t, std::vector<uint8_t>>>> batch_base;
  for (const SourceHit& hit : hits) {
    const shard::SourceView& source = shard.sources.at(hit.source);
    const auto [b, row] = source.Locate(hit.position);
    if (b < 0) {
      out.push_back(0);
      continue;
    }
    auto it = batch_base.find(hit.source);
    if (it == batch_base.end()) {
      // Per batch: live rows before it, and its live bitmap.
      std::vector<std::pair<int64_t, std::vector<uint8_t>>> bases(source.batches.size());
      int64_t acc = 0;
      for (size_t i = 0; i < source.batches.size(); ++i) {
        bases[i].first = acc;
        bases[i].second = source.LiveBits(i);
        acc += CountBits(bases[i].second, source.batches[i]->num_rows());
      }
      it = batch_base.emplace(hit.source, std::move(bases)).first;
    }
    const auto& base = it->second[static_cast<size_t>(b)];
    const int64_t rank = source_base[hit.source] + base.first + CountBits(base.second, row);
    out.push_back(static_cast<uint64_t>(rank));
  }
  return out;
}

std::shared_ptr<const shard::ShardSnapshot> ShardOf(const table::TableSnapshot& snapshot) {
  if (snapshot.shard) return snapshot.shard;
  auto shard = std::make_shared<shard::ShardSnapshot>();  // a failed snapshot: no rows
  shard->schema = snapshot.schema;
  shard->storage_schema = snapshot.schema;
  shard->visibility = std::make_shared<shard::Visibility>();
  return shard;
}

}  // namespace strata::query
