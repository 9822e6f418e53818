// Vectorized evaluation of bound filter / projection expressions: every node runs one kernel
// over the whole batch (column-at-a-time); kernels are templated on the C types they read.
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "arrow/builder.h"
#include "query/filter/bound_expr_internal.h"
#include "query/filter/evaluator.h"

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

Result<Datum> ToKindDatum(const Datum& d, Kind kind, Scale scale, const std::string& what) {
  STRATA_ASSIGN_OR_RETURN(ArrayDataPtr a, ToKind(d.data, kind, scale, what));
  return Datum{std::move(a), d.scalar};
}

Datum MakeBoolDatum(int64_t n, BufferPtr validity, BufferPtr bits, bool scalar) {
  return Datum{MakeArray(arrow::boolean(), n, {std::move(validity), std::move(bits)}), scalar};
}

int64_t RowsOf(const Datum& a, const Datum& b, const EvalContext& ctx) {
  return a.scalar && b.scalar ? 1 : ctx.n;
}

// ---- Comparison kernels -------------------------------------------------------------------

template <CompareOp op, typename L, typename R>
inline bool CompareValues(L a, R b) {
  if constexpr (std::is_integral_v<L> && std::is_integral_v<R>) {
    if constexpr (op == CompareOp::kEq) return std::cmp_equal(a, b);
    if constexpr (op == CompareOp::kNe) return std::cmp_not_equal(a, b);
    if constexpr (op == CompareOp::kLt) return std::cmp_less(a, b);
    if constexpr (op == CompareOp::kLe) return std::cmp_less_equal(a, b);
    if constexpr (op == CompareOp::kGt) return std::cmp_greater(a, b);
    if constexpr (op == CompareOp::kGe) return std::cmp_greater_equal(a, b);
  } else {
    if constexpr (op == CompareOp::kEq) return a == b;
    if constexpr (op == CompareOp::kNe) return a != b;
    if constexpr (op == CompareOp::kLt) return a < b;
    if constexpr (op == CompareOp::kLe) return a <= b;
    if constexpr (op == CompareOp::kGt) return a > b;
    if constexpr (op == CompareOp::kGe) return a >= b;
  }
  return false;
}

// Packs f(i) for i in [0, n) into a bitmap, 8 rows per output byte.
template <typename F>
BufferPtr PackBits(int64_t n, F f) {
  OutBuffer out(arrow::BytesForBits(n));
  uint8_t* o = out.data();
  const int64_t full = n / 8;
  for (int64_t b = 0; b < full; ++b) {
    uint8_t byte = 0;
    for (int k = 0; k < 8; ++k) byte |= static_cast<uint8_t>(f(b * 8 + k)) << k;
    o[b] = byte;
  }
  for (int64_t i = full * 8; i < n; ++i) {
    if (f(i)) arrow::SetBit(o, i);
  }
  return out.Finish();
}

template <CompareOp op, typename L, typename R, bool LS, bool RS>
BufferPtr CompareLoop(const L* l, const R* r, int64_t n) {
  return PackBits(n, [l, r](int64_t i) { return CompareValues<op>(l[LS ? 0 : i], r[RS ? 0 : i]); });
}

template <CompareOp op, typename L, typename R>
BufferPtr CompareTyped(const Datum& a, const Datum& b, int64_t n) {
  const L* l = a.data->buffers[1]->data_as<L>() + a.data->offset;
  const R* r = b.data->buffers[1]->data_as<R>() + b.data->offset;
  if (a.scalar && b.scalar) return CompareLoop<op, L, R, true, true>(l, r, n);
  if (a.scalar) return CompareLoop<op, L, R, true, false>(l, r, n);
  if (b.scalar) return CompareLoop<op, L, R, false, true>(l, r, n);
  return CompareLoop<op, L, R, false, false>(l, r, n);
}

// Byte equality of two short strings without a library call for the common first-byte miss.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  return n == 0 || (a[0] == b[0] && std::memcmp(a, b, n) == 0);
}

template <CompareOp op, typename LOff>
BufferPtr CompareStringsScalar(const ArrayData& l, std::string_view rv, int64_t n) {
  const LOff* off = l.buffers[1]->data_as<LOff>() + l.offset;
  const char* bytes = reinterpret_cast<const char*>(l.buffers[2]->data());
  if constexpr (op == CompareOp::kEq || op == CompareOp::kNe) {
    const LOff len = static_cast<LOff>(rv.size());
    return PackBits(n, [&](int64_t i) {
      const bool eq = off[i + 1] - off[i] == len && SameBytes(bytes + off[i], rv.data(), rv.size());
      return op == CompareOp::kEq ? eq : !eq;
    });
  } else {
    return PackBits(n, [&](int64_t i) {
      const std::string_view v(bytes + off[i], static_cast<size_t>(off[i + 1] - off[i]));
      return CompareValues<op>(v, rv);
    });
  }
}

template <CompareOp op>
BufferPtr CompareStrings(const Datum& a, const Datum& b, int64_t n) {
  StringReader l(*a.data), r(*b.data);
  if (b.scalar && !a.scalar) {
    return l.large ? CompareStringsScalar<op, int64_t>(*a.data, r(0), n)
                   : CompareStringsScalar<op, int32_t>(*a.data, r(0), n);
  }
  return PackBits(n, [&](int64_t i) { return CompareValues<op>(l(a.Index(i)), r(b.Index(i))); });
}

template <CompareOp op>
BufferPtr CompareOpBits(const Datum& a, Kind ka, const Datum& b, Kind kb, int64_t n) {
  if (ka == Kind::kString) return CompareStrings<op>(a, b, n);
  if (ka == Kind::kFloat64) return CompareTyped<op, double, double>(a, b, n);
  if (ka == Kind::kUInt64) {
    if (kb == Kind::kUInt64) return CompareTyped<op, uint64_t, uint64_t>(a, b, n);
    return CompareTyped<op, uint64_t, int64_t>(a, b, n);
  }
  if (kb == Kind::kUInt64) return CompareTyped<op, int64_t, uint64_t>(a, b, n);
  return CompareTyped<op, int64_t, int64_t>(a, b, n);
}

Result<Datum> EvalCompare(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  STRATA_ASSIGN_OR_RETURN(Datum b, EvalNode(*node.children[1], ctx));
  const std::string what = node.expr->ToString();
  STRATA_ASSIGN_OR_RETURN(a, ToKindDatum(a, node.kinds[0], node.scale, what));
  STRATA_ASSIGN_OR_RETURN(b, ToKindDatum(b, node.kinds[1], node.scale, what));
  const int64_t n = RowsOf(a, b, ctx);
  BufferPtr validity = AndValidity(ValidityFor(a, n), ValidityFor(b, n), n);
  BufferPtr bits;
  switch (node.compare) {
    case CompareOp::kEq:
      bits = CompareOpBits<CompareOp::kEq>(a, node.kinds[0], b, node.kinds[1], n);
      break;
    case CompareOp::kNe:
      bits = CompareOpBits<CompareOp::kNe>(a, node.kinds[0], b, node.kinds[1], n);
      break;
    case CompareOp::kLt:
      bits = CompareOpBits<CompareOp::kLt>(a, node.kinds[0], b, node.kinds[1], n);
      break;
    case CompareOp::kLe:
      bits = CompareOpBits<CompareOp::kLe>(a, node.kinds[0], b, node.kinds[1], n);
      break;
    case CompareOp::kGt:
      bits = CompareOpBits<CompareOp::kGt>(a, node.kinds[0], b, node.kinds[1], n);
      break;
    case CompareOp::kGe:
      bits = CompareOpBits<CompareOp::kGe>(a, node.kinds[0], b, node.kinds[1], n);
      break;
  }
  return MakeBoolDatum(n, std::move(validity), std::move(bits), a.scalar && b.scalar);
}

// ---- Arithmetic kernels -------------------------------------------------------------------

// One arithmetic step; returns false on integer overflow; sets *null for a zero divisor.
template <typename T>
inline bool ArithStep(ArithOp op, T a, T b, T* out, bool* null) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case ArithOp::kAdd:
        *out = a + b;
        break;
      case ArithOp::kSub:
        *out = a - b;
        break;
      case ArithOp::kMul:
        *out = a * b;
        break;
      case ArithOp::kDiv:
        if (b == 0) {
          *null = true;
          *out = 0;
        } else {
          *out = a / b;
        }
        break;
      case ArithOp::kMod:
        if (b == 0) {
          *null = true;
          *out = 0;
        } else {
          *out = std::fmod(a, b);
        }
        break;
    }
    return true;
  } else {
    switch (op) {
      case ArithOp::kAdd:
        return !__builtin_add_overflow(a, b, out);
      case ArithOp::kSub:
        return !__builtin_sub_overflow(a, b, out);
      case ArithOp::kMul:
        return !__builtin_mul_overflow(a, b, out);
      case ArithOp::kDiv:
      case ArithOp::kMod:
        if (b == 0) {
          *null = true;
          *out = 0;
          return true;
        }
        if constexpr (std::is_signed_v<T>) {
          if (a == std::numeric_limits<T>::min() && b == -1) {
            if (op == ArithOp::kMod) {
              *out = 0;
              return true;
            }
            return false;
          }
        }
        *out = op == ArithOp::kDiv ? a / b : a % b;
        return true;
    }
    return true;
  }
}

template <typename T, bool LS, bool RS>
void ArithLoop(ArithOp op, const T* l, const T* r, int64_t n, T* out, uint8_t* zero_div,
               uint8_t* overflow) {
  switch (op) {
    case ArithOp::kAdd:
    case ArithOp::kSub:
    case ArithOp::kMul:
      // Tight loops the compiler vectorizes; overflow flags collected per row.
      for (int64_t i = 0; i < n; ++i) {
        bool null = false;
        overflow[i] = !ArithStep<T>(op, l[LS ? 0 : i], r[RS ? 0 : i], &out[i], &null);
      }
      break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        bool null = false;
        overflow[i] = !ArithStep<T>(op, l[LS ? 0 : i], r[RS ? 0 : i], &out[i], &null);
        zero_div[i] = null;
      }
      break;
  }
}

template <typename T>
Result<Datum> ArithTyped(const Node& node, const Datum& a, const Datum& b, int64_t n) {
  const T* l = a.data->buffers[1]->data_as<T>() + a.data->offset;
  const T* r = b.data->buffers[1]->data_as<T>() + b.data->offset;
  OutBuffer values(n * static_cast<int64_t>(sizeof(T)));
  T* out = values.data_as<T>();
  std::vector<uint8_t> zero_div(static_cast<size_t>(n), 0), overflow(static_cast<size_t>(n), 0);
  if (a.scalar && b.scalar) {
    ArithLoop<T, true, true>(node.arith, l, r, n, out, zero_div.data(), overflow.data());
  } else if (a.scalar) {
    ArithLoop<T, true, false>(node.arith, l, r, n, out, zero_div.data(), overflow.data());
  } else if (b.scalar) {
    ArithLoop<T, false, true>(node.arith, l, r, n, out, zero_div.data(), overflow.data());
  } else {
    ArithLoop<T, false, false>(node.arith, l, r, n, out, zero_div.data(), overflow.data());
  }
  BufferPtr validity = AndValidity(ValidityFor(a, n), ValidityFor(b, n), n);
  const uint8_t* vb = validity ? validity->data() : nullptr;
  const auto un = static_cast<size_t>(n);
  if (n > 0 && std::memchr(overflow.data(), 1, un) != nullptr) {
    for (int64_t i = 0; i < n; ++i) {
      if (overflow[static_cast<size_t>(i)] && (vb == nullptr || arrow::GetBit(vb, i))) {
        return Status::Invalid("integer overflow in '" + node.expr->ToString() + "'");
      }
    }
  }
  const bool any_zero = n > 0 && std::memchr(zero_div.data(), 1, un) != nullptr;
  if (any_zero) {
    OutBuffer v(arrow::BytesForBits(n));
    uint8_t* o = v.data();
    for (int64_t i = 0; i < n; ++i) {
      if (!zero_div[static_cast<size_t>(i)] && (vb == nullptr || arrow::GetBit(vb, i))) {
        arrow::SetBit(o, i);
      }
    }
    validity = v.Finish();
  }
  return Datum{MakeArray(node.type, n, {std::move(validity), values.Finish()}),
               a.scalar && b.scalar};
}

Result<Datum> EvalArith(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  STRATA_ASSIGN_OR_RETURN(Datum b, EvalNode(*node.children[1], ctx));
  const std::string what = node.expr->ToString();
  STRATA_ASSIGN_OR_RETURN(a, ToKindDatum(a, node.kinds[0], node.scale, what));
  STRATA_ASSIGN_OR_RETURN(b, ToKindDatum(b, node.kinds[0], node.scale, what));
  const int64_t n = RowsOf(a, b, ctx);
  switch (node.kinds[0]) {
    case Kind::kUInt64:
      return ArithTyped<uint64_t>(node, a, b, n);
    case Kind::kFloat64:
      return ArithTyped<double>(node, a, b, n);
    default:
      return ArithTyped<int64_t>(node, a, b, n);
  }
}

Result<Datum> EvalNegate(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  STRATA_ASSIGN_OR_RETURN(a, ToKindDatum(a, node.kinds[0], node.scale, node.expr->ToString()));
  const int64_t n = a.scalar ? 1 : ctx.n;
  auto zero = MakeNullArray(a.data->type, 1);
  zero->buffers[0] = nullptr;
  zero->null_count = 0;
  Node sub = node;
  sub.arith = ArithOp::kSub;
  if (node.kinds[0] == Kind::kFloat64) {
    return ArithTyped<double>(sub, Datum{zero, true}, a, n);
  }
  return ArithTyped<int64_t>(sub, Datum{zero, true}, a, n);
}

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

// ---- IN with a constant list ----------------------------------------------------------------

Result<Datum> EvalInSet(const Node& node, const EvalContext& ctx) {
  STRATA_ASSIGN_OR_RETURN(Datum a, EvalNode(*node.children[0], ctx));
  STRATA_ASSIGN_OR_RETURN(a, ToKindDatum(a, node.kinds[0], node.scale, node.expr->ToString()));
  const int64_t n = a.scalar ? 1 : ctx.n;
  const InSet& set = *node.in_set;
  const ArrayData& d = *a.data;
  BufferPtr bits;
  switch (node.kinds[0]) {
    case Kind::kString: {
      StringReader r(d);
      std::string key;
      bits = PackBits(n, [&](int64_t i) {
        const std::string_view v = r(i);
        key.assign(v.data(), v.size());
        return set.str.count(key) > 0;
      });
      break;
    }
    case Kind::kFloat64: {
      const double* v = d.buffers[1]->data_as<double>() + d.offset;
      bits = PackBits(n, [&](int64_t i) { return set.f64.count(v[i]) > 0; });
      break;
    }
    case Kind::kUInt64: {
      const uint64_t* v = d.buffers[1]->data_as<uint64_t>() + d.offset;
      bits = PackBits(n, [&](int64_t i) { return set.u64.count(v[i]) > 0; });
      break;
    }
    default: {
      const int64_t* v = d.buffers[1]->data_as<int64_t>() + d.offset;
      bits = PackBits(n, [&](int64_t i) { return set.i64.count(v[i]) > 0; });
      break;
    }
  }
  BufferPtr validity = ValidityOf(d);
  if (set.has_null) {
    // No match with a NULL in the list is NULL: valid only where matched.
    OutBuffer v(arrow::BytesForBits(n));
    for (int64_t k = 0; k < arrow::BytesForBits(n); ++k) {
      v.data()[k] = bits->data()[k] & (validity ? validity->data()[k] : 0xFF);
    }
    validity = v.Finish();
  }
  if (node.negated) {
    OutBuffer inv(arrow::BytesForBits(n));
    for (int64_t k = 0; k < arrow::BytesForBits(n); ++k) {
      inv.data()[k] = static_cast<uint8_t>(~bits->data()[k]);
    }
    bits = inv.Finish();
  }
  return MakeBoolDatum(n, std::move(validity), std::move(bits), a.scalar);
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
