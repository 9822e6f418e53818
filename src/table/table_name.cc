#include "table/table_name.h"

#include <cstdint>
#include <cstdio>

namespace strata::table {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";
constexpr size_t kMaxPlainDirBytes = 200;
constexpr size_t kHashedPrefixBytes = 120;

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lowercase is never produced, so it is not accepted (keeps decoding canonical)
}

uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

Status ValidateTableName(const std::string& name, const char* what) {
  if (name.empty()) return Status::Invalid(std::string(what) + " is empty");
  if (name.size() > kMaxTableNameBytes) {
    return Status::Invalid(std::string(what) + " is " + std::to_string(name.size()) +
                           " bytes, longer than the limit of " +
                           std::to_string(kMaxTableNameBytes));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7F) {
      char code[8];
      std::snprintf(code, sizeof(code), "0x%02X", c);
      return Status::Invalid(std::string(what) + " contains control character " + code +
                             " at byte " + std::to_string(i));
    }
  }
  return Status::OK();
}

Status ValidateNewTableName(const std::string& name, const char* what) {
  STRATA_RETURN_IF_ERROR(ValidateTableName(name, what));
  if (name == "." || name == "..") {
    return Status::Invalid(std::string(what) + " '" + name +
                           "' is not allowed: a URL path cannot address it (/v1/table/" + name +
                           "/ resolves to a parent path)");
  }
  return Status::OK();
}

std::string EncodeNameForDir(const std::string& name) {
  std::string out;
  const bool all_dots = name == "." || name == "..";
  for (unsigned char c : name) {
    if (IsUnreserved(c) && !(all_dots && c == '.')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (out.size() <= kMaxPlainDirBytes) return out;
  size_t cut = kHashedPrefixBytes;
  // Do not cut inside a %XX escape.
  if (out[cut - 1] == '%') {
    cut -= 1;
  } else if (out[cut - 2] == '%') {
    cut -= 2;
  }
  std::string hash(16, '0');
  uint64_t h = Fnv1a64(name);
  for (int i = 15; i >= 0; --i, h >>= 4) hash[static_cast<size_t>(i)] = kHex[h & 15];
  std::string hashed;
  hashed.reserve(cut + 18);
  hashed.push_back('~');
  hashed.append(out, 0, cut);
  hashed.push_back('~');
  hashed.append(hash);
  return hashed;
}

std::optional<std::string> DecodeNameFromDir(const std::string& dir) {
  if (dir.empty() || dir[0] == '~' || dir.size() > kMaxPlainDirBytes) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < dir.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(dir[i]);
    if (c == '%') {
      if (i + 2 >= dir.size()) return std::nullopt;
      int hi = HexValue(dir[i + 1]), lo = HexValue(dir[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (IsUnreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      return std::nullopt;
    }
  }
  // Only canonical encodings decode (so two directories never map to one name).
  if (EncodeNameForDir(out) != dir) return std::nullopt;
  return out;
}

}  // namespace strata::table
