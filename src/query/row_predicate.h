// A filter compiled into per-row checks over a read source's Arrow arrays, so filtered vector
// search can test the rows a graph search reaches one at a time (and sample a source to measure
// a filter's selectivity: filtered_source_search.cc) without evaluating the filter over every
// row first.
//
// Compiles when every top-level AND conjunct of the filter is one of:
//   col <op> literal  (either side; =, !=, <, <=, >, >=)  integer columns (int8..int64,
//                     uint8..uint32) with an integer literal, date32 with a date literal,
//                     timestamp[us] with a timestamp literal, utf8 / large_utf8 with a string
//                     literal (byte order), bool with a bool literal (= and != only)
//   col [NOT] IN (literals), col [NOT] BETWEEN lit AND lit   same column and literal types
//   col IS [NOT] NULL                                         any of the column types above
// Anything else (OR, functions, arithmetic, float columns, casts, LIKE, `_rowid`, a literal of
// another kind) does not compile: callers evaluate the filter with filter::Evaluate instead.
// SQL semantics as filter::Evaluate: a NULL value fails every check except IS NULL; a NULL
// literal makes a comparison fail; NULL list elements of IN never match (NOT IN with a NULL
// element fails every row). Comparisons are exact (int64 arithmetic, byte-wise strings), so the
// answer equals the evaluator's (tests/query/row_predicate_test.cc compares them).
// Thread-safety: immutable after Compile/Bind; Test is const and may run on many threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrow/array.h"
#include "arrow/type.h"
#include "query/filter/ast.h"
#include "shard/source_view.h"

namespace strata::query {

class RowPredicate {
 public:
  /// The compiled form of `expr` bound to the user `schema`, or nullopt when some conjunct is
  /// not a supported shape (see above).
  static std::optional<RowPredicate> Compile(const arrow::Schema& schema, const filter::Expr& expr);

  /// The predicate over one source: per-batch pointers to the columns it reads. `source`
  /// must outlive it.
  class Bound {
   public:
    /// Whether row (batch, row-in-batch) passes (liveness not checked).
    bool TestInBatch(size_t batch, int64_t row) const;
    /// Whether position `position` passes (false out of [0, num_rows); liveness not checked).
    bool Test(int64_t position) const;
    /// Appends the rows of [begin, end) of `batch` that pass, ascending (liveness not
    /// checked): TestInBatch over the range, with a branch-free typed loop for the first
    /// check when it is an integer comparison, BETWEEN or IN of one value over a column
    /// without nulls.
    void SelectInBatch(size_t batch, int64_t begin, int64_t end, std::vector<int64_t>* rows) const;

   private:
    friend class RowPredicate;
    const RowPredicate* predicate_ = nullptr;
    const shard::SourceView* source_ = nullptr;
    std::vector<std::vector<arrow::Array>> columns_;  // [batch][check]
  };
  Bound Bind(const shard::SourceView& source) const;
  /// A canonical form of the checks: two predicates with equal keys pass the same rows of a
  /// source (query/filter_bits_cache.h keys on it). Not meant for display.
  const std::string& Key() const { return key_; }

 private:
  struct Check {
    enum class Kind { kCompare, kIn, kBetween, kIsNull, kIsNotNull, kNever };
    Kind kind = Kind::kCompare;
    int column = -1;
    bool is_string = false;
    bool negated = false;  // NOT IN / NOT BETWEEN
    filter::CompareOp op = filter::CompareOp::kEq;
    int64_t value = 0, high = 0;     // compare / BETWEEN bounds (integers)
    std::string text, text_high;     // the same for strings
    std::vector<int64_t> values;     // IN, sorted
    std::vector<std::string> texts;  // IN, sorted
    bool in_has_null = false;        // IN list held a NULL
  };
  static bool Passes(const Check& c, const arrow::Array& column, int64_t row);
  std::string MakeKey() const;

  std::vector<Check> checks_;
  std::string key_;  // MakeKey(), set by Compile
};

}  // namespace strata::query
