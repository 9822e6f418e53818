// The primary key a table schema declares, by the Lance field-metadata convention
// (lance-format/lance, lance_core::datatypes LANCE_UNENFORCED_PRIMARY_KEY and
// LANCE_UNENFORCED_PRIMARY_KEY_POSITION):
//   `lance-schema:unenforced-primary-key` = a true value (true, 1, yes; case-insensitive)
//     marks a field as a key column (false, 0, no: not a key; any other value is an error);
//   `lance-schema:unenforced-primary-key:position` = a 1-based integer orders the columns of
//     a composite key; fields with a position come first, by position, then the marked fields
//     without one, in schema order. A position alone (no flag) also marks the field.
// Strata enforces the key (DESIGN.md §1): rows with an equal key replace each other, newest
// wins. This is the ONE place a table's key is derived from its schema: LocalTable::Create
// and LocalTable::Overwrite call PrimaryKeyOf on the new schema, and the create/ route's
// `?primary_key=a,b` goes through DeclarePrimaryKey, which writes the same metadata.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "arrow/type.h"
#include "common/status.h"

namespace strata::table {

/// Field-metadata key marking a primary-key column (Lance convention).
inline constexpr char kPrimaryKeyMetadataKey[] = "lance-schema:unenforced-primary-key";
/// Field-metadata key giving the 1-based position of a column in a composite key.
inline constexpr char kPrimaryKeyPositionMetadataKey[] =
    "lance-schema:unenforced-primary-key:position";

/// The key columns `schema` declares through field metadata, in key order; empty when none
/// (the table then uses the hidden `_rowid`). Errors (Invalid, naming the column): a flag
/// value that is neither true nor false, a position that is not an integer >= 1, two columns
/// with the same position, a flag of false with a position, a key marked on a nested field
/// (key columns must be top-level), a column whose type cannot be a key
/// (format::ValidateKeyType: scalars only, no lists, structs or vectors).
Result<std::vector<std::string>> PrimaryKeyOf(const arrow::Schema& schema);

/// `schema` with `columns` (key order) declared as its primary key: each key field gets the
/// flag `true` and its 1-based position. Errors (Invalid, naming the column): an empty list or
/// name, an unknown column, a column listed twice, a type that cannot be a key, and a schema
/// whose metadata already declares a different key.
Result<arrow::SchemaPtr> DeclarePrimaryKey(const arrow::SchemaPtr& schema,
                                           const std::vector<std::string>& columns);

/// Splits the `primary_key` query parameter "a,b" into names (spaces around names trimmed).
/// Errors: Invalid for an empty name (e.g. "a,,b" or "").
Result<std::vector<std::string>> ParsePrimaryKeyList(std::string_view text);

}  // namespace strata::table
