// Random identifiers for storage objects: shard ids and SSTable directory prefixes.
// Source of randomness: std::random_device seeding a per-thread std::mt19937_64.
// Thread-safety: safe from any thread.
#pragma once

#include <string>

namespace strata::format {

/// A random UUID v4 in its 36-character lowercase text form (RFC 4122 §4.4).
std::string RandomUuid();

/// `n` random lowercase hex digits (e.g. the {random8} prefix of SSTable directories).
std::string RandomHex(int n);

}  // namespace strata::format
