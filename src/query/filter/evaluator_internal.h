// Internal to the filter evaluator: what evaluator.cc (ToKind, boolean logic, leaves and the
// EvalNode dispatch), evaluator_compare.cc (comparison and IN kernels) and evaluator_arith.cc
// (arithmetic kernels) share. Not part of the public API (evaluator.h is).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "query/filter/bound_expr_internal.h"

namespace strata::query::filter::internal {

inline Result<Datum> ToKindDatum(const Datum& d, Kind kind, Scale scale, const std::string& what) {
  STRATA_ASSIGN_OR_RETURN(arrow::ArrayDataPtr a, ToKind(d.data, kind, scale, what));
  return Datum{std::move(a), d.scalar};
}

inline Datum MakeBoolDatum(int64_t n, arrow::BufferPtr validity, arrow::BufferPtr bits,
                           bool scalar) {
  return Datum{MakeArray(arrow::boolean(), n, {std::move(validity), std::move(bits)}), scalar};
}

inline int64_t RowsOf(const Datum& a, const Datum& b, const EvalContext& ctx) {
  return a.scalar && b.scalar ? 1 : ctx.n;
}

// Packs f(i) for i in [0, n) into a bitmap, 8 rows per output byte.
template <typename F>
arrow::BufferPtr PackBits(int64_t n, F f) {
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

/// kCompare and kInSet nodes (evaluator_compare.cc).
Result<Datum> EvalCompare(const Node& node, const EvalContext& ctx);
Result<Datum> EvalInSet(const Node& node, const EvalContext& ctx);

/// kArith and kNegate nodes (evaluator_arith.cc).
Result<Datum> EvalArith(const Node& node, const EvalContext& ctx);
Result<Datum> EvalNegate(const Node& node, const EvalContext& ctx);

}  // namespace strata::query::filter::internal
