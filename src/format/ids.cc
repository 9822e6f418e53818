#include "format/ids.h"

#include <cstdint>
#include <random>

#include <unistd.h>

namespace strata::format {
namespace {

std::mt19937_64 Seeded() {
  std::random_device rd;
  std::seed_seq seq{rd(), rd(), rd(), rd()};
  return std::mt19937_64(seq);
}

// Per thread, reseeded in a forked child: a child's thread would otherwise repeat the ids its
// parent's thread draws next (and every child forked from one state would draw the same).
std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng = Seeded();
  thread_local pid_t owner = ::getpid();
  if (const pid_t pid = ::getpid(); pid != owner) {
    rng = Seeded();
    owner = pid;
  }
  return rng;
}

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

std::string RandomHex(int n) {
  std::string out;
  out.reserve(static_cast<size_t>(n));
  uint64_t bits = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 16 == 0) bits = Rng()();
    out.push_back(kHex[bits & 15]);
    bits >>= 4;
  }
  return out;
}

std::string RandomUuid() {
  std::string hex = RandomHex(32);
  hex[12] = '4';                                                  // version 4
  hex[16] = kHex[8 + (static_cast<unsigned char>(hex[16]) & 3)];  // variant 10xx
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

}  // namespace strata::format
