// API keys of `strata serve` (PROTOCOL.md §0 rule 2): `--api-key KEY` (repeatable) and the
// environment variable STRATA_API_KEYS (comma-separated), united. When at least one key is
// set, every route but `GET /healthz` needs the header `x-api-key` equal to one of them
// (401 unauthorized otherwise); with no key set the header is ignored (the LanceDB client
// always sends one).
// Keys are compared in constant time with respect to their contents: the work depends only on
// the length of the presented value and the number of keys, never on where the first
// differing byte is or on a key's length, and every key is compared (no early exit).
// Keys are never logged and never appear in error messages.
// Thread-safety: immutable after construction; Matches may run on many threads at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::server {

/// The HTTP header carrying the key.
inline constexpr const char* kApiKeyHeader = "x-api-key";
/// The environment variable listing keys, comma-separated.
inline constexpr const char* kApiKeysEnv = "STRATA_API_KEYS";

class ApiKeys {
 public:
  ApiKeys() = default;
  /// The union of `flag_keys` and the comma-separated `env_value` (may be null). Empty
  /// entries are ignored; surrounding spaces and tabs of each entry are trimmed; duplicates
  /// are kept once.
  static ApiKeys FromFlagsAndEnv(const std::vector<std::string>& flag_keys, const char* env_value);

  /// True when at least one key is configured (requests then need a matching x-api-key).
  bool enabled() const { return !keys_.empty(); }
  /// Number of distinct keys.
  size_t size() const { return keys_.size(); }

  /// True when `presented` equals one of the keys; false when no key is configured or
  /// `presented` is empty. Constant time as described above.
  bool Matches(std::string_view presented) const;

 private:
  std::vector<std::string> keys_;  // distinct, non-empty
};

/// Constant-time equality of `presented` and a non-empty `key`: the loop runs over
/// presented.size() bytes whatever the contents, comparing byte i with key[i % key.size()],
/// and the lengths are folded into the result instead of checked first.
bool ConstantTimeEquals(std::string_view presented, std::string_view key);

}  // namespace strata::server
