// Comparison kernels (= != < <= > >= over numbers, temporals, strings and booleans) and IN
// with a constant list: both give a boolean bitmap over the batch (dispatched by EvalNode in
// evaluator.cc).
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "query/filter/evaluator_internal.h"

namespace strata::query::filter {

using arrow::ArrayData;
using arrow::BufferPtr;

namespace internal {
namespace {

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

}  // namespace

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

}  // namespace internal
}  // namespace strata::query::filter
