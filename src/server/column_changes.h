// Schema evolution requests of PROTOCOL.md §5.3 (add_columns/, alter_columns/, drop_columns/):
// parsing their JSON bodies and planning the Table::RewriteColumns that applies them.
// Rules (every violation is Invalid naming the field; nothing changes):
//  - add_columns/ {"new_columns":[{"name","expression"}]}: each expression is SQL bound
//    against the current columns (query/filter/evaluator.h) and evaluated per row; the new
//    column has the expression's type and is nullable (later inserts may omit it). Refused: an
//    empty, duplicate or existing name, a reserved name (`_rowid`, `_distance`, `_score`,
//    `_rowoffset`, `_tombstone`, any case), an expression that does not parse or bind, a bare
//    NULL (use CAST(NULL AS type)), an expression reading `_rowid` / `_rowoffset` (the rewrite
//    gives rows new row ids).
//  - alter_columns/ {"alterations":[{"path", "rename"?, "nullable"?, "data_type"?}]}: `path`
//    is a top-level column, each at most once. `rename` refuses a clash with an existing or
//    another new name and reserved names; primary-key columns and index definitions follow
//    the rename (index names are kept). `nullable` true always works; false fails naming how
//    many nulls the column holds. `data_type` (a PROTOCOL §3 type object) converts the values
//    with filter::CastArray: a value that does not convert fails, and so does a lossy one
//    (every converted value must convert back to the original, except float -> narrower float,
//    which rounds); changing a vector (fixed_size_list) dimension, the type of a primary-key
//    column, or the type of an indexed column to one its index cannot hold is refused.
//  - drop_columns/ {"columns":[..]}: refuses unknown or repeated columns, primary-key columns
//    and dropping every column; index definitions on dropped columns are removed.
// Unknown JSON keys are ignored. Thread-safety: pure functions; the returned transforms are
// safe to call from one thread at a time (RewriteColumns calls them in order).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/type.h"
#include "common/status.h"
#include "table/table.h"

namespace strata::server {

struct NewColumn {
  std::string name;
  std::string expression;  // SQL
};

struct ColumnAlteration {
  std::string path;
  std::optional<std::string> rename;
  std::optional<bool> nullable;
  arrow::DataTypePtr data_type;  // null: unchanged
};

/// Parses an add_columns/ body. Errors: Invalid naming the bad field (new_columns[i].name ...).
Result<std::vector<NewColumn>> ParseAddColumns(std::string_view body);
/// Parses an alter_columns/ body (data_type through arrow::json::DataTypeFromJson).
Result<std::vector<ColumnAlteration>> ParseAlterColumns(std::string_view body);
/// Parses a drop_columns/ body.
Result<std::vector<std::string>> ParseDropColumns(std::string_view body);

/// The rewrite that adds `columns` to the table read in `source` (see the file comment).
Result<table::ColumnRewrite> PlanAddColumns(const std::vector<NewColumn>& columns,
                                            const table::RewriteSource& source);
/// The rewrite that applies `alterations`.
Result<table::ColumnRewrite> PlanAlterColumns(const std::vector<ColumnAlteration>& alterations,
                                              const table::RewriteSource& source);
/// The rewrite that drops `columns`.
Result<table::ColumnRewrite> PlanDropColumns(const std::vector<std::string>& columns,
                                             const table::RewriteSource& source);

}  // namespace strata::server
