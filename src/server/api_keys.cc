#include "server/api_keys.h"

#include <algorithm>
#include <cstdint>

namespace strata::server {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void AddKey(std::vector<std::string>& keys, std::string_view key) {
  key = Trim(key);
  if (key.empty()) return;
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.emplace_back(key);
}

}  // namespace

ApiKeys ApiKeys::FromFlagsAndEnv(const std::vector<std::string>& flag_keys, const char* env_value) {
  ApiKeys out;
  for (const std::string& k : flag_keys) AddKey(out.keys_, k);
  if (env_value != nullptr) {
    std::string_view rest(env_value);
    while (true) {
      const size_t comma = rest.find(',');
      AddKey(out.keys_, rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return out;
}

bool ConstantTimeEquals(std::string_view presented, std::string_view key) {
  if (key.empty()) return false;
  // Differences accumulate with OR; no branch depends on the bytes compared.
  uint64_t diff = static_cast<uint64_t>(presented.size()) ^ static_cast<uint64_t>(key.size());
  const size_t k = key.size();
  for (size_t i = 0; i < presented.size(); ++i) {
    diff |= static_cast<uint8_t>(presented[i]) ^ static_cast<uint8_t>(key[i % k]);
  }
  // Keep the compiler from turning the loop into an early-exit comparison.
  volatile uint64_t sink = diff;
  return sink == 0;
}

bool ApiKeys::Matches(std::string_view presented) const {
  if (presented.empty()) return false;
  bool any = false;
  for (const std::string& key : keys_) {
    any = ConstantTimeEquals(presented, key) | any;  // every key, no short-circuit
  }
  return any;
}

}  // namespace strata::server
