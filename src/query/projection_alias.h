// The list form of a computed column's name: "EXPR AS alias" (query/projection.h). Its own
// header so that its users do not depend on the projection's.
// Thread-safety: a pure function.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace strata::query {

/// "EXPR AS alias" (AS in any case, blanks around it, alias an identifier) -> {EXPR, alias}
/// (EXPR trimmed); nullopt when `text` does not end that way. The list form of a projection
/// naming its computed columns in the order given (an {alias: expr} object may reach the
/// server with its keys sorted: the LanceDB Node client sends them so).
std::optional<std::pair<std::string, std::string>> SplitTrailingAlias(const std::string& text);

}  // namespace strata::query
