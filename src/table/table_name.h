// Table and database names <-> directory names (DESIGN.md §3: {root}/{database}/{table}/).
// Names arrive as arbitrary UTF-8 ("a/b", "my table", "tä", "ns1$ns2$t"); the directory name
// is the name percent-encoded (RFC 3986 style, uppercase hex) except [A-Za-z0-9_.-], with the
// dots of "." and ".." encoded too, so encoding is injective and round-trips. When the encoded
// form would exceed 200 bytes (file systems allow 255 per segment), the directory name is
// "~" + the first 120 encoded bytes + "~" + 16 hex digits of the FNV-1a 64 hash of the name;
// such names are not decodable and the table manifest's table_name gives the name back.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace strata::table {

/// Longest table or database name, bytes.
inline constexpr size_t kMaxTableNameBytes = 256;

/// Checks a table/database name: 1..256 bytes, no control characters (0x00-0x1F, 0x7F).
/// `what` names the thing in the error ("table name", "database name").
Status ValidateTableName(const std::string& name, const char* what = "table name");

/// ValidateTableName, and refuses the names "." and ".." for a table being created or renamed:
/// a URL path cannot address them (clients and browsers resolve /v1/table/../ as "up one").
/// Existing tables of those names stay reachable by clients that do not normalise paths.
Status ValidateNewTableName(const std::string& name, const char* what = "table name");

/// Directory name of `name` (see the file comment).
std::string EncodeNameForDir(const std::string& name);

/// The name of a directory written by EncodeNameForDir; nullopt for hashed ("~...") or
/// malformed directory names.
std::optional<std::string> DecodeNameFromDir(const std::string& dir);

}  // namespace strata::table
