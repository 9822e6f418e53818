#include "query/shard_pruning.h"

#include <algorithm>
#include <optional>
#include <set>

#include "arrow/builder.h"
#include "format/bucket_hash.h"
#include "query/filter/parser.h"
#include "query/index_candidates.h"

namespace strata::query {

namespace {

using filter::Expr;
using filter::Literal;

// A one-row array of `type` holding `lit`'s value; nullopt when the builder cannot take it.
std::optional<arrow::Array> OneRow(const arrow::DataTypePtr& type, const Literal& lit) {
  arrow::ArrayBuilder b(type);
  Status st;
  switch (lit.kind) {
    case Literal::Kind::kBool:
      st = b.AppendBool(lit.bool_value);
      break;
    case Literal::Kind::kInt:
      st = type->id() == arrow::TypeId::kFloat32 || type->id() == arrow::TypeId::kFloat64
               ? b.AppendDouble(static_cast<double>(lit.int_value))
               : b.AppendInt(lit.int_value);
      break;
    case Literal::Kind::kFloat:
      st = b.AppendDouble(lit.float_value);
      break;
    case Literal::Kind::kString:
      st = b.AppendBytes(lit.string_value);
      break;
    case Literal::Kind::kDate:
    case Literal::Kind::kTimestamp:
      st = b.AppendInt(lit.int_value);
      break;
    case Literal::Kind::kNull:
      return std::nullopt;
  }
  if (!st.ok()) return std::nullopt;
  auto data = b.Finish();
  if (!data.ok()) return std::nullopt;
  return arrow::Array(*data);
}

// The bucket of the column value equal to `lit` (EncodeFilterLiteral said one exists): hashed
// directly for the usual key types (int64, int32, utf8), else through a one-row array, as
// format::BucketOfValue hashes a row. nullopt when the value cannot be built.
Result<std::optional<int32_t>> BucketOfLiteral(const arrow::DataTypePtr& type, const Literal& lit,
                                               int32_t num_buckets) {
  const arrow::TypeId id = type->id();
  if (lit.kind == Literal::Kind::kInt && id == arrow::TypeId::kInt64) {
    return std::optional<int32_t>(
        format::BucketOf(format::BucketHashInt64(lit.int_value), num_buckets));
  }
  if (lit.kind == Literal::Kind::kInt && id == arrow::TypeId::kInt32) {
    // In range: EncodeFilterLiteral refuses a literal no int32 equals.
    return std::optional<int32_t>(format::BucketOf(
        format::BucketHashInt32(static_cast<int32_t>(lit.int_value)), num_buckets));
  }
  if (lit.kind == Literal::Kind::kString &&
      (id == arrow::TypeId::kUtf8 || id == arrow::TypeId::kLargeUtf8)) {
    return std::optional<int32_t>(
        format::BucketOf(format::BucketHashBytes(lit.string_value), num_buckets));
  }
  std::optional<arrow::Array> one = OneRow(type, lit);
  if (!one) return std::optional<int32_t>();
  STRATA_ASSIGN_OR_RETURN(int32_t b, format::BucketOfValue(*one, 0, num_buckets));
  return std::optional<int32_t>(b);
}

}  // namespace

Result<ShardSelection> SelectShards(const table::LsmWriteSpec& spec, const arrow::Schema& schema,
                                    const filter::ExprPtr& filter, bool describe) {
  ShardSelection out;
  const bool bucket = spec.mode == table::ShardingMode::kBucket && spec.num_buckets > 1;
  const bool identity = spec.mode == table::ShardingMode::kIdentity;
  if (filter == nullptr || (!bucket && !identity)) return out;
  const int col = schema.GetFieldIndex(spec.column);
  if (col < 0) return out;
  const arrow::DataTypePtr& type = schema.field(col)->type;
  std::vector<const Expr*> conjuncts;
  FlattenAnd(filter, &conjuncts);
  std::optional<std::set<int64_t>> buckets;
  std::optional<std::set<std::string>> keys;
  for (const Expr* c : conjuncts) {
    std::vector<const Literal*> literals;
    const Expr* column = nullptr;
    if (auto cc = AsFilterColumnCompare(*c); cc && cc->op == filter::CompareOp::kEq) {
      column = cc->column;
      literals = {cc->literal};
    } else if (!AsFilterColumnIn(*c, &column, &literals)) {
      continue;
    }
    if (ResolveFilterColumn(schema, *column) != col) continue;
    std::set<int64_t> these_buckets;
    std::set<std::string> these_keys;
    bool exact = true;
    for (const Literal* l : literals) {
      if (l->kind == Literal::Kind::kNull) continue;  // = NULL matches no row
      std::optional<std::string> key = EncodeFilterLiteral(*type, *l);
      if (!key) {
        exact = false;  // cannot tell which rows it equals: this conjunct narrows nothing
        break;
      }
      if (identity) {
        these_keys.insert(std::move(*key));
        continue;
      }
      STRATA_ASSIGN_OR_RETURN(std::optional<int32_t> b,
                              BucketOfLiteral(type, *l, static_cast<int32_t>(spec.num_buckets)));
      if (!b) {
        exact = false;
        break;
      }
      these_buckets.insert(*b);
    }
    if (!exact) continue;
    if (describe) out.how += (out.how.empty() ? "" : "; ") + c->ToString();
    if (identity) {
      if (!keys) {
        keys = std::move(these_keys);
      } else {
        std::set<std::string> both;
        std::set_intersection(keys->begin(), keys->end(), these_keys.begin(), these_keys.end(),
                              std::inserter(both, both.end()));
        keys = std::move(both);
      }
    } else if (!buckets) {
      buckets = std::move(these_buckets);
    } else {
      std::set<int64_t> both;
      std::set_intersection(buckets->begin(), buckets->end(), these_buckets.begin(),
                            these_buckets.end(), std::inserter(both, both.end()));
      buckets = std::move(both);
    }
  }
  if (!buckets && !keys) {
    out.how.clear();
    return out;
  }
  out.all = false;
  if (buckets) {
    out.buckets.assign(buckets->begin(), buckets->end());
    if (!describe) return out;
    std::string list;
    for (int64_t b : out.buckets) list += (list.empty() ? "" : ", ") + std::to_string(b);
    out.how += " -> " + std::string(out.buckets.size() == 1 ? "bucket " : "buckets ") +
               (list.empty() ? "none" : list) + " of " + std::to_string(spec.num_buckets);
  } else {
    out.identity_keys.assign(keys->begin(), keys->end());
    if (!describe) return out;
    const size_t n = out.identity_keys.size();
    out.how += " -> " + std::to_string(n) + (n == 1 ? " value" : " values");
  }
  return out;
}

table::TableSnapshot PruneShards(const table::TableSnapshot& snapshot,
                                 const std::optional<std::string>& filter, std::string* plan) {
  if (snapshot.sharding == nullptr || snapshot.num_shards <= 1 || snapshot.shard == nullptr ||
      snapshot.schema == nullptr) {
    return snapshot;
  }
  const table::LsmWriteSpec& spec = *snapshot.sharding;
  auto all = [&] {
    return "shards: " + std::to_string(snapshot.num_shards) + " of " +
           std::to_string(snapshot.num_shards) + " read";
  };
  ShardSelection sel;
  // `_rowoffset` counts ALL the snapshot's live rows: a narrowed snapshot would number them
  // differently.
  if (filter && filter->find("_rowoffset") != std::string::npos) {
    if (plan != nullptr) *plan = all() + " (the filter reads _rowoffset)";
    return snapshot;
  }
  if (filter) {
    auto parsed = filter::ParseExpression(*filter);
    if (!parsed.ok()) return snapshot;  // the query itself reports the parse error
    auto selected = SelectShards(spec, *snapshot.schema, *parsed, plan != nullptr);
    if (!selected.ok()) return snapshot;
    sel = std::move(*selected);
  }
  const bool identity = spec.mode == table::ShardingMode::kIdentity;
  if (sel.all || (spec.mode != table::ShardingMode::kBucket && !identity) ||
      (identity && snapshot.shard_values == nullptr)) {
    if (plan != nullptr) *plan = all() + " (no equality or IN on " + spec.column + ")";
    return snapshot;
  }
  if (identity) {
    // The shards holding the values (a value no shard holds has no row outside the base).
    sel.buckets.clear();
    const auto& values = *snapshot.shard_values;
    for (size_t i = 0; i < values.size(); ++i) {
      if (std::binary_search(sel.identity_keys.begin(), sel.identity_keys.end(), values[i])) {
        sel.buckets.push_back(static_cast<int64_t>(i));
      }
    }
  }
  table::TableSnapshot out = snapshot;
  const auto* views = snapshot.shard_views.get();
  if (sel.buckets.size() == 1 && views != nullptr && sel.buckets[0] >= 0 &&
      sel.buckets[0] < static_cast<int64_t>(views->size())) {
    // The one shard's view the table built with the snapshot: nothing to copy.
    out.shard = (*views)[static_cast<size_t>(sel.buckets[0])];
  } else {
    const std::set<int64_t> keep(sel.buckets.begin(), sel.buckets.end());
    out.shard = shard::NarrowedView(*snapshot.shard, [&](const shard::SourceView& src) {
      return src.shard < 0 || keep.count(src.shard) > 0;  // the shared base always
    });
  }
  out.num_rows = out.shard->num_rows;
  // A narrowed snapshot is pruned for good: pruning it again must not bring a shard back.
  out.shard_views = nullptr;
  out.sharding = nullptr;
  if (plan != nullptr) {
    *plan = "shards: " + std::to_string(sel.buckets.size()) + " of " +
            std::to_string(snapshot.num_shards) + " read: " + sel.how;
  }
  return out;
}

}  // namespace strata::query
