// A fast path for parsing untrusted JSON request bodies: simdjson (Debian libsimdjson-dev,
// SIMD structural indexing, "Parsing Gigabytes of JSON per Second", Langdale & Lemire 2019)
// builds the document, which is then copied into an nlohmann::json tree for the code that
// reads request fields. nlohmann's own lexer reads one character at a time and parsed a 784-d
// query vector in about 50 us, 22% of a query's server CPU (docs/BENCHMARKS.md, issue 20).
//
// Semantics are those of nlohmann's parser for every document the fast path accepts:
// non-negative integers become number_unsigned, negative ones number_integer, others
// number_float; a repeated object key keeps its first position and its last value.
// Anything simdjson rejects (malformed JSON, integers beyond 64 bits, numbers out of double
// range, invalid UTF-8), and any document nesting deeper than `max_depth` (counted as
// CheckJsonDepth counts, common/json_guard.h), returns nullopt: the caller then parses with
// nlohmann, which reports the error with its byte position, or accepts what only it accepts.
// Thread-safety: safe from any thread (a parser per thread is reused for bodies up to 1 MiB;
// larger bodies use a parser of their own, freed after the call).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_guard.h"

namespace strata {

/// The document `text` holds, as an insertion-ordered tree (object keys keep the client's
/// order), or nullopt when the fast path does not accept it (see above).
std::optional<nlohmann::ordered_json> FastParseOrderedJson(std::string_view text,
                                                           int max_depth = kMaxJsonDepth);

/// As FastParseOrderedJson, and when the root is an object whose member `key` is a non-empty
/// array of numbers only, stores that array's elements into `*floats` (each number read as a
/// double, then rounded to float, as nlohmann's get<double>) and puts [0] in its place in the
/// tree: a 784-d query vector never becomes 784 nlohmann nodes, whose construction and
/// destruction cost more than the parse (measured: 9% of a query's server CPU). `*floats` is
/// cleared first and stays empty when there is no such member (a repeated key: the last one
/// counts, as in the tree).
std::optional<nlohmann::ordered_json> FastParseOrderedJsonWithFloats(std::string_view text,
                                                                     std::string_view key,
                                                                     std::vector<float>* floats,
                                                                     int max_depth = kMaxJsonDepth);

}  // namespace strata
