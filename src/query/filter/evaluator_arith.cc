// Arithmetic kernels (+ - * / % with overflow checks and NULL for a zero divisor) and unary
// minus (dispatched by EvalNode in evaluator.cc).
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "query/filter/evaluator_internal.h"

namespace strata::query::filter {

using arrow::BufferPtr;

namespace internal {
namespace {

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

}  // namespace

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

}  // namespace internal
}  // namespace strata::query::filter
