// Vectorized evaluation of bound filter / projection expressions: every node runs one kernel
// over the whole batch (column-at-a-time); kernels are templated on the C types they read.
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "arrow/builder.h"
#include "query/filter/bound_expr_internal.h"
#include "query/filter/evaluator.h"
#include "query/filter/evaluator_internal.h"

namespace strata::query::filter {

using arrow::ArrayData;
using arrow::ArrayDataPtr;
using arrow::BufferPtr;
using arrow::TypeId;

namespace internal {
namespace {

// ---- ToKind: operand conversion ------------------------------------------------------------

template <typename Out, typename In, typename F>
ArrayDataPtr ConvertValues(const ArrayData& a, const arrow::DataTypePtr& out_type, F f) {
  OutBuffer values(a.length * static_cast<int64_t>(sizeof(Out)));
  Out* o = values.data_as<Out>();
  const In* in = a.buffers[1]->data_as<In>() + a.offset;
  for (int64_t i = 0; i < a.length; ++i) o[i] = f(in[i]);
  return MakeArray(out_type, a.length, {ValidityOf(a), values.Finish()});
}

// Shares a's buffers under another type of the same physical width.
ArrayDataPtr Retype(const ArrayDataPtr& a, const arrow::DataTypePtr& type) {
  if (a->type->Equals(*type)) return a;
  auto out = std::make_shared<ArrayData>(*a);
  out->type = type;
  return out;
}

template <typename Out>
Result<ArrayDataPtr> IntegersTo(const ArrayDataPtr& ap, const arrow::DataTypePtr& out_type) {
  const ArrayData& a = *ap;
  switch (a.type->id()) {
    case TypeId::kInt8:
      return ConvertValues<Out, int8_t>(a, out_type, [](int8_t v) { return static_cast<Out>(v); });
    case TypeId::kInt16:
      return ConvertValues<Out, int16_t>(a, out_type,
                                         [](int16_t v) { return static_cast<Out>(v); });
    case TypeId::kInt32:
      return ConvertValues<Out, int32_t>(a, out_type,
                                         [](int32_t v) { return static_cast<Out>(v); });
    case TypeId::kInt64:
      if constexpr (std::is_same_v<Out, int64_t>) return Retype(ap, out_type);
      return ConvertValues<Out, int64_t>(a, out_type,
                                         [](int64_t v) { return static_cast<Out>(v); });
    case TypeId::kUInt8:
      return ConvertValues<Out, uint8_t>(a, out_type,
                                         [](uint8_t v) { return static_cast<Out>(v); });
    case TypeId::kUInt16:
      return ConvertValues<Out, uint16_t>(a, out_type,
                                          [](uint16_t v) { return static_cast<Out>(v); });
    case TypeId::kUInt32:
      return ConvertValues<Out, uint32_t>(a, out_type,
                                          [](uint32_t v) { return static_cast<Out>(v); });
    case TypeId::kUInt64:
      if constexpr (std::is_same_v<Out, uint64_t>) return Retype(ap, out_type);
      return ConvertValues<Out, uint64_t>(a, out_type,
                                          [](uint64_t v) { return static_cast<Out>(v); });
    case TypeId::kFloat16:
      return ConvertValues<Out, uint16_t>(
          a, out_type, [](uint16_t v) { return static_cast<Out>(arrow::HalfBitsToFloat(v)); });
    case TypeId::kFloat32:
      return ConvertValues<Out, float>(a, out_type, [](float v) { return static_cast<Out>(v); });
    case TypeId::kFloat64:
      if constexpr (std::is_same_v<Out, double>) return Retype(ap, out_type);
      return ConvertValues<Out, double>(a, out_type, [](double v) { return static_cast<Out>(v); });
    case TypeId::kBool: {
      OutBuffer values(a.length * static_cast<int64_t>(sizeof(Out)));
      Out* o = values.data_as<Out>();
      const uint8_t* bits = a.buffers[1]->data();
      for (int64_t i = 0; i < a.length; ++i) o[i] = arrow::GetBit(bits, a.offset + i) ? 1 : 0;
      return MakeArray(out_type, a.length, {ValidityOf(a), values.Finish()});
    }
    default:
      return Status::Internal("filter: cannot read " + a.type->ToString() + " as a number");
  }
}

// First valid row i where pred(value) holds, or -1.
template <typename T, typename P>
int64_t FindValid(const ArrayData& a, P pred) {
  const T* v = a.buffers[1]->data_as<T>() + a.offset;
  const uint8_t* valid = a.buffers.empty() || !a.buffers[0] ? nullptr : a.buffers[0]->data();
  for (int64_t i = 0; i < a.length; ++i) {
    if (pred(v[i]) && (valid == nullptr || arrow::GetBit(valid, a.offset + i))) return i;
  }
  return -1;
}

}  // namespace

Result<ArrayDataPtr> ToKind(const ArrayDataPtr& a, Kind kind, Scale scale,
                            const std::string& what) {
  switch (kind) {
    case Kind::kInt64:
      if (a->type->id() == TypeId::kUInt64) {
        const int64_t bad = FindValid<uint64_t>(
            *a, [](uint64_t v) { return v > static_cast<uint64_t>(INT64_MAX); });
        if (bad >= 0) {
          return Status::Invalid("integer overflow in '" + what + "': uint64 value " +
                                 std::to_string(arrow::Array(a).Value<uint64_t>(bad)) +
                                 " does not fit int64");
        }
      }
      return IntegersTo<int64_t>(a, arrow::int64());
    case Kind::kUInt64:
      if (a->type->is_signed_integer()) {
        // Only non-negative values reach here (the binder reads int literals >= 0 as uint64).
        switch (a->type->id()) {
          case TypeId::kInt64:
            if (FindValid<int64_t>(*a, [](int64_t v) { return v < 0; }) >= 0) {
              return Status::Invalid("integer overflow in '" + what +
                                     "': a negative value does not fit uint64");
            }
            break;
          default:
            break;
        }
      }
      return IntegersTo<uint64_t>(a, arrow::uint64());
    case Kind::kFloat64:
      return IntegersTo<double>(a, arrow::float64());
    case Kind::kTemporal: {
      const Scale from = ScaleOf(*a->type);
      if (a->type->id() == TypeId::kDate32) {
        return ConvertValues<int64_t, int32_t>(
            *a, arrow::int64(), [from, scale](int32_t v) { return ScaleUp(v, from, scale); });
      }
      if (from == scale) return Retype(a, arrow::int64());
      if (static_cast<int>(from) < static_cast<int>(scale)) {
        return ConvertValues<int64_t, int64_t>(
            *a, arrow::int64(), [from, scale](int64_t v) { return ScaleUp(v, from, scale); });
      }
      return ConvertValues<int64_t, int64_t>(
          *a, arrow::int64(), [from, scale](int64_t v) { return ScaleDown(v, from, scale); });
    }
    case Kind::kString:
      return a;
  }
  return a;
}

namespace {

// ---- Boolean logic (SQL three-valued) -----------------------------------------------------

// Value and validity bytes of a bool datum over n rows, bit 0 = row 0.
struct BoolBytes {
  BufferPtr values;  // masked: a null row has value 0
  BufferPtr valid;   // never null here
};

BoolBytes ToBoolBytes(const Datum& d, int64_t n) {
  const int64_t nbytes = arrow::BytesForBits(n);
  if (d.scalar) {
    const bool valid = d.IsValid(0);
    const bool v = valid && arrow::GetBit(d.data->buffers[1]->data(), d.data->offset);
    OutBuffer vals(nbytes), val(nbytes);
    std::memset(vals.data(), v ? 0xFF : 0, static_cast<size_t>(nbytes));
    std::memset(val.data(), valid ? 0xFF : 0, static_cast<size_t>(nbytes));
    return {vals.Finish(), val.Finish()};
  }
  BufferPtr values = RebaseBits(d.data->buffers[1], d.data->offset, n);
  BufferPtr valid = ValidityOf(*d.data);
  if (valid == nullptr) {
    OutBuffer all(nbytes);
    std::memset(all.data(), 0xFF, static_cast<size_t>(nbytes));
    return {values, all.Finish()};
  }
  OutBuffer masked(nbytes);
  for (int64_t k = 0; k < nbytes; ++k) masked.data()[k] = values->data()[k] & valid->data()[k];
  return {masked.Finish(), valid};
}

Result<Datum> EvalAndOr(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  STRATA_ASSIGN_OR_RETURN(Datum b, EvalNode(*node.children[1], ctx));
  const int64_t n = RowsOf(a, b, ctx);
  const int64_t nbytes = arrow::BytesForBits(n);
  BoolBytes x = ToBoolBytes(a, n), y = ToBoolBytes(b, n);
  const uint8_t *xv = x.values->data(), *xm = x.valid->data();
  const uint8_t *yv = y.values->data(), *ym = y.valid->data();
  OutBuffer vals(nbytes), valid(nbytes);
  uint8_t *ov = vals.data(), *om = valid.data();
  if (node.op == NodeOp::kAnd) {
    // Valid when both are valid or either is a valid FALSE.
    for (int64_t k = 0; k < nbytes; ++k) {
      ov[k] = xv[k] & yv[k];
      om[k] = (xm[k] & ym[k]) | (xm[k] & ~xv[k]) | (ym[k] & ~yv[k]);
    }
  } else {
    // Valid when both are valid or either is a TRUE.
    for (int64_t k = 0; k < nbytes; ++k) {
      ov[k] = xv[k] | yv[k];
      om[k] = (xm[k] & ym[k]) | xv[k] | yv[k];
    }
  }
  if (n % 8 != 0) om[nbytes - 1] &= static_cast<uint8_t>((1u << (n % 8)) - 1);
  return MakeBoolDatum(n, valid.Finish(), vals.Finish(), a.scalar && b.scalar);
}

Result<Datum> EvalNot(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  const int64_t n = a.scalar ? 1 : ctx.n;
  const int64_t nbytes = arrow::BytesForBits(n);
  BufferPtr values = RebaseBits(a.data->buffers[1], a.data->offset, n);
  OutBuffer out(nbytes);
  for (int64_t k = 0; k < nbytes; ++k) out.data()[k] = static_cast<uint8_t>(~values->data()[k]);
  return MakeBoolDatum(n, ValidityOf(*a.data), out.Finish(), a.scalar);
}

Result<Datum> EvalIsNull(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  const int64_t n = a.scalar ? 1 : ctx.n;
  const int64_t nbytes = arrow::BytesForBits(n);
  BufferPtr valid = ValidityOf(*a.data);
  OutBuffer out(nbytes);
  uint8_t* o = out.data();
  for (int64_t k = 0; k < nbytes; ++k) {
    const uint8_t v = valid ? valid->data()[k] : 0xFF;
    o[k] = node.negated ? v : static_cast<uint8_t>(~v);
  }
  return MakeBoolDatum(n, nullptr, out.Finish(), a.scalar);
}

// ---- Leaves --------------------------------------------------------------------------------

// The struct child `index` of `s` as a top-level array of s's rows (a null struct row makes
// the field null).
ArrayDataPtr StructField(const ArrayData& s, int index) {
  const ArrayData& c = *s.children.at(static_cast<size_t>(index));
  auto out = std::make_shared<ArrayData>(c);
  out->offset = c.offset + s.offset;
  out->length = s.length;
  const bool struct_nulls = !s.buffers.empty() && s.buffers[0] != nullptr && s.null_count != 0;
  const bool child_nulls = !c.buffers.empty() && c.buffers[0] != nullptr;
  if (c.type->id() == TypeId::kNull) {
    out->null_count = s.length;
    return out;
  }
  if (!struct_nulls && !child_nulls) {
    out->null_count = 0;
    return out;
  }
  // Validity over [0, out->offset + length) with bits before the offset cleared.
  const int64_t total = out->offset + s.length;
  OutBuffer v(arrow::BytesForBits(total));
  uint8_t* o = v.data();
  int64_t nulls = 0;
  for (int64_t i = 0; i < s.length; ++i) {
    bool ok = true;
    if (struct_nulls) ok = arrow::GetBit(s.buffers[0]->data(), s.offset + i);
    if (ok && child_nulls) ok = arrow::GetBit(c.buffers[0]->data(), out->offset + i);
    if (ok) {
      arrow::SetBit(o, out->offset + i);
    } else {
      ++nulls;
    }
  }
  if (out->buffers.empty()) out->buffers.resize(1);
  out->buffers[0] = v.Finish();
  out->null_count = nulls;
  return out;
}

Result<Datum> EvalColumn(const Node& node, const EvalContext& ctx) {
  if (ctx.batch == nullptr) return Status::Internal("filter: column read while folding");
  ArrayDataPtr a = ctx.batch->column_data(node.column);
  for (int index : node.field_path) a = StructField(*a, index);
  return Datum{std::move(a), false};
}

Result<Datum> EvalHidden(const Node& node, const EvalContext& ctx) {
  const bool is_id = node.op == NodeOp::kRowId;
  const uint64_t* src = ctx.rows == nullptr ? nullptr
                        : is_id             ? ctx.rows->row_ids
                                            : ctx.rows->row_offsets;
  if (src == nullptr) {
    return Status::Invalid(std::string("filter: '") + (is_id ? kRowIdName : kRowOffsetName) +
                           "' is referenced but the reader supplied no values for it");
  }
  return Datum{
      MakeArray(arrow::uint64(), ctx.n, {nullptr, arrow::Buffer::CopyFrom(src, ctx.n * 8)}), false};
}

Result<Datum> EvalCastNode(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  // Appends, not "'" + ... chains: GCC 12 -O3 reports a false -Wrestrict on those.
  std::string what(1, '\'');
  what.append(node.expr->ToString()).push_back('\'');
  STRATA_ASSIGN_OR_RETURN(ArrayDataPtr out, CastArray(a.data, node.type, what));
  return Datum{std::move(out), a.scalar};
}

}  // namespace

Result<Datum> EvalNode(const Node& node, const EvalContext& ctx) {
  switch (node.op) {
    case NodeOp::kLiteral:
      return Datum{node.literal, true};
    case NodeOp::kColumn:
      return EvalColumn(node, ctx);
    case NodeOp::kRowId:
    case NodeOp::kRowOffset:
      return EvalHidden(node, ctx);
    case NodeOp::kNot:
      return EvalNot(node, ctx);
    case NodeOp::kNegate:
      return EvalNegate(node, ctx);
    case NodeOp::kAnd:
    case NodeOp::kOr:
      return EvalAndOr(node, ctx);
    case NodeOp::kCompare:
      return EvalCompare(node, ctx);
    case NodeOp::kArith:
      return EvalArith(node, ctx);
    case NodeOp::kIsNull:
      return EvalIsNull(node, ctx);
    case NodeOp::kInSet:
      return EvalInSet(node, ctx);
    case NodeOp::kLike: {
      STRATA_ASSIGN_OR_RETURN(Datum text, EvalNode(*node.children[0], ctx));
      STRATA_ASSIGN_OR_RETURN(Datum pattern, EvalNode(*node.children[1], ctx));
      return EvalLike(node, text, pattern, ctx);
    }
    case NodeOp::kCast:
      return EvalCastNode(node, ctx);
    case NodeOp::kFunction: {
      std::vector<Datum> args;
      for (const auto& c : node.children) {
        STRATA_ASSIGN_OR_RETURN(Datum d, EvalNode(*c, ctx));
        args.push_back(std::move(d));
      }
      return EvalFunction(node, std::move(args), ctx);
    }
  }
  return Status::Internal("filter: unknown bound node");
}

}  // namespace internal

namespace {

Status CheckBatch(const internal::BoundExprImpl& e, const arrow::RecordBatch& batch,
                  const RowContext& context) {
  for (size_t i = 0; i < e.columns().size(); ++i) {
    const int c = e.columns()[i];
    if (c >= batch.num_columns() || c >= batch.schema()->num_fields()) {
      return Status::Invalid("filter: the batch has " + std::to_string(batch.num_columns()) +
                             " columns; the expression '" + e.expr()->ToString() +
                             "' reads column " + std::to_string(c));
    }
    const auto& a = batch.column_data(c);
    if (!a->type->Equals(*e.column_types()[i]) || a->length != batch.num_rows()) {
      return Status::Invalid("filter: column '" + batch.schema()->field(c)->name + "' is " +
                             a->type->ToString() + " in the batch but was bound as " +
                             e.column_types()[i]->ToString());
    }
  }
  if (e.uses_row_id() && context.row_ids == nullptr) {
    return Status::Invalid(std::string("filter: '") + kRowIdName +
                           "' is referenced but the reader supplied no values for it");
  }
  if (e.uses_row_offset() && context.row_offsets == nullptr) {
    return Status::Invalid(std::string("filter: '") + kRowOffsetName +
                           "' is referenced but the reader supplied no values for it");
  }
  return Status::OK();
}

}  // namespace

Result<ArrayDataPtr> Evaluate(const BoundExpr& expr, const arrow::RecordBatch& batch,
                              const RowContext& context) {
  const auto* e = dynamic_cast<const internal::BoundExprImpl*>(&expr);
  if (e == nullptr) return Status::Internal("filter: Evaluate on a foreign BoundExpr");
  STRATA_RETURN_IF_ERROR(CheckBatch(*e, batch, context));
  internal::EvalContext ctx{&batch, &context, batch.num_rows()};
  STRATA_ASSIGN_OR_RETURN(internal::Datum d, internal::EvalNode(e->root(), ctx));
  ArrayDataPtr out = internal::Broadcast(d, batch.num_rows());
  if (out->type->id() == TypeId::kNull && e->type()->id() != TypeId::kNull) {
    out = internal::MakeNullArray(e->type(), batch.num_rows());
  }
  return out;
}

Status EvaluateMask(const BoundExpr& expr, const arrow::RecordBatch& batch,
                    const RowContext& context, std::vector<uint8_t>* mask) {
  if (expr.type()->id() != TypeId::kBool) {
    return Status::Invalid("filter: '" + expr.expr()->ToString() + "' is " +
                           expr.type()->ToString() + ", not boolean");
  }
  STRATA_ASSIGN_OR_RETURN(ArrayDataPtr out, Evaluate(expr, batch, context));
  const int64_t n = batch.num_rows();
  mask->assign(static_cast<size_t>(n), 0);
  // Re-based to bit 0 (zero-copy for the kernels' offset-0 results), then 8 rows per byte.
  BufferPtr bits = internal::RebaseBits(out->buffers[1], out->offset, n);
  BufferPtr valid = internal::ValidityOf(*out);
  const uint8_t* b = bits->data();
  const uint8_t* v = valid ? valid->data() : nullptr;
  uint8_t* m = mask->data();
  const int64_t full = n / 8;
  for (int64_t k = 0; k < full; ++k) {
    const uint8_t x = v ? static_cast<uint8_t>(b[k] & v[k]) : b[k];
    for (int j = 0; j < 8; ++j) m[k * 8 + j] = (x >> j) & 1;
  }
  for (int64_t i = full * 8; i < n; ++i) {
    m[i] = static_cast<uint8_t>(arrow::GetBit(b, i) && (!v || arrow::GetBit(v, i)));
  }
  return Status::OK();
}

}  // namespace strata::query::filter
