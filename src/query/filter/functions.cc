// Scalar functions of filter expressions (lower, upper, length, starts_with, regexp_match,
// array_has) and the LIKE kernel, each one pass over the batch.
#include <re2/re2.h>
#include <utf8proc.h>

#include <string>

#include "query/filter/bound_expr_internal.h"

namespace strata::query::filter::internal {

using arrow::ArrayData;
using arrow::ArrayDataPtr;
using arrow::BufferPtr;
using arrow::TypeId;

namespace {

int64_t RowsOf(const std::vector<Datum>& args, const EvalContext& ctx) {
  for (const Datum& d : args) {
    if (!d.scalar) return ctx.n;
  }
  return 1;
}

bool AllScalar(const std::vector<Datum>& args) {
  for (const Datum& d : args) {
    if (!d.scalar) return false;
  }
  return true;
}

BufferPtr AllValidity(const std::vector<Datum>& args, int64_t n) {
  BufferPtr v;
  for (const Datum& d : args) v = AndValidity(v, ValidityFor(d, n), n);
  return v;
}

template <typename F>
BufferPtr Bits(int64_t n, F f) {
  OutBuffer out(arrow::BytesForBits(n));
  uint8_t* o = out.data();
  for (int64_t i = 0; i < n; ++i) {
    if (f(i)) arrow::SetBit(o, i);
  }
  return out.Finish();
}

// Maps every code point of `s` through `f` (utf8proc case mapping); invalid bytes are copied.
void MapCase(std::string_view s, bool upper, std::string* out) {
  out->clear();
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    if (*p < 0x80) {
      char c = static_cast<char>(*p);
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      out->push_back(c);
      ++p;
      --left;
      continue;
    }
    utf8proc_int32_t cp;
    const utf8proc_ssize_t len = utf8proc_iterate(p, left, &cp);
    if (len <= 0) {
      out->push_back(static_cast<char>(*p));
      ++p;
      --left;
      continue;
    }
    const utf8proc_int32_t mapped = upper ? utf8proc_toupper(cp) : utf8proc_tolower(cp);
    utf8proc_uint8_t buf[4];
    const utf8proc_ssize_t w = utf8proc_encode_char(mapped, buf);
    out->append(reinterpret_cast<const char*>(buf), static_cast<size_t>(w));
    p += len;
    left -= len;
  }
}

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

Result<Datum> CaseMap(const Node& node, const Datum& s, int64_t n) {
  StringReader r(*s.data);
  StringWriter w(node.type->id() == TypeId::kLargeUtf8, n);
  BufferPtr validity = ValidityFor(s, n);
  std::string tmp;
  const bool upper = node.func == Func::kUpper;
  for (int64_t i = 0; i < n; ++i) {
    if (validity && !arrow::GetBit(validity->data(), i)) {
      w.AppendEmpty();
      continue;
    }
    MapCase(r(s.Index(i)), upper, &tmp);
    w.Append(tmp);
  }
  STRATA_ASSIGN_OR_RETURN(ArrayDataPtr out, w.Finish(node.type, validity));
  return Datum{std::move(out), s.scalar};
}

Result<Datum> Length(const Datum& s, int64_t n) {
  StringReader r(*s.data);
  OutBuffer values(n * 8);
  int64_t* o = values.data_as<int64_t>();
  for (int64_t i = 0; i < n; ++i) o[i] = CodePoints(r(s.Index(i)));
  return Datum{MakeArray(arrow::int64(), n, {ValidityFor(s, n), values.Finish()}), s.scalar};
}

Result<Datum> ArrayHas(const Node& node, const Datum& list, const Datum& needle_in, int64_t n) {
  const ArrayData& l = *list.data;
  const Kind kind = node.kinds[0];
  const std::string what = node.expr->ToString();
  STRATA_ASSIGN_OR_RETURN(ArrayDataPtr values, ToKind(l.children[0], kind, node.scale, what));
  STRATA_ASSIGN_OR_RETURN(ArrayDataPtr needle, ToKind(needle_in.data, kind, node.scale, what));
  const Datum nd{needle, needle_in.scalar};
  arrow::Array la(list.data);
  arrow::Array va(values);
  BufferPtr validity = AndValidity(ValidityFor(list, n), ValidityFor(nd, n), n);
  auto range_has = [&](int64_t i, auto eq) {
    const int64_t row = list.Index(i);
    const int64_t start = la.ListStart(row), end = la.ListEnd(row);
    for (int64_t j = start; j < end; ++j) {
      if (va.IsValid(j) && eq(j, nd.Index(i))) return true;
    }
    return false;
  };
  BufferPtr bits;
  if (kind == Kind::kString) {
    StringReader vr(*values), nr(*needle);
    bits = Bits(n, [&](int64_t i) {
      return range_has(i, [&](int64_t j, int64_t k) { return vr(j) == nr(k); });
    });
  } else if (kind == Kind::kFloat64) {
    const double* v = va.raw_values<double>();
    const double* x = arrow::Array(needle).raw_values<double>();
    bits = Bits(n, [&](int64_t i) {
      return range_has(i, [&](int64_t j, int64_t k) { return v[j] == x[k]; });
    });
  } else if (kind == Kind::kUInt64) {
    const uint64_t* v = va.raw_values<uint64_t>();
    const uint64_t* x = arrow::Array(needle).raw_values<uint64_t>();
    bits = Bits(n, [&](int64_t i) {
      return range_has(i, [&](int64_t j, int64_t k) { return v[j] == x[k]; });
    });
  } else {
    const int64_t* v = va.raw_values<int64_t>();
    const int64_t* x = arrow::Array(needle).raw_values<int64_t>();
    bits = Bits(n, [&](int64_t i) {
      return range_has(i, [&](int64_t j, int64_t k) { return v[j] == x[k]; });
    });
  }
  return Datum{MakeArray(arrow::boolean(), n, {validity, bits}), list.scalar && nd.scalar};
}

}  // namespace

Result<Datum> EvalFunction(const Node& node, std::vector<Datum> args, const EvalContext& ctx) {
  const int64_t n = RowsOf(args, ctx);
  const bool scalar = AllScalar(args);
  switch (node.func) {
    case Func::kLower:
    case Func::kUpper:
      return CaseMap(node, args[0], n);
    case Func::kLength:
      return Length(args[0], n);
    case Func::kStartsWith: {
      StringReader s(*args[0].data), p(*args[1].data);
      BufferPtr bits = Bits(n, [&](int64_t i) {
        const std::string_view prefix = p(args[1].Index(i));
        return s(args[0].Index(i)).substr(0, prefix.size()) == prefix;
      });
      return Datum{MakeArray(arrow::boolean(), n, {AllValidity(args, n), bits}), scalar};
    }
    case Func::kRegexpMatch: {
      StringReader s(*args[0].data);
      const re2::RE2& re = *node.regex;
      BufferPtr bits = Bits(n, [&](int64_t i) {
        const std::string_view v = s(args[0].Index(i));
        return re2::RE2::PartialMatch(re2::StringPiece(v.data(), v.size()), re);
      });
      return Datum{MakeArray(arrow::boolean(), n, {AllValidity(args, n), bits}), scalar};
    }
    case Func::kArrayHas:
      return ArrayHas(node, args[0], args[1], n);
  }
  return Status::Internal("filter: unknown function node");
}

Result<Datum> EvalLike(const Node& node, const Datum& text, const Datum& pattern,
                       const EvalContext& ctx) {
  const int64_t n = text.scalar && pattern.scalar ? 1 : ctx.n;
  BufferPtr validity = AndValidity(ValidityFor(text, n), ValidityFor(pattern, n), n);
  StringReader t(*text.data);
  BufferPtr bits;
  if (node.like != nullptr) {
    const LikePattern& like = *node.like;
    bits = Bits(n, [&](int64_t i) { return like.Match(t(text.Index(i))) != node.negated; });
  } else {
    StringReader p(*pattern.data);
    bits = Bits(n, [&](int64_t i) {
      return LikePattern(p(pattern.Index(i))).Match(t(text.Index(i))) != node.negated;
    });
  }
  return Datum{MakeArray(arrow::boolean(), n, {validity, bits}), text.scalar && pattern.scalar};
}

}  // namespace strata::query::filter::internal
