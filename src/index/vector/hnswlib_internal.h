// hnswlib 0.6.2 (Debian libhnswlib-dev, header-only) included with internal linkage.
//
// hnswlib 0.6.2's headers define non-inline functions and variables (cpuid, xgetbv,
// AVXCapable, hnswlib::L2SqrSIMD16Ext, ...), so two translation units that include
// <hnswlib/hnswlib.h> cannot be linked together ("multiple definition"). Including it here
// inside an unnamed namespace gives every translation unit its own private copy; the standard
// and intrinsics headers it uses are included first, at global scope, so their include guards
// keep them out of the namespace. Use `strata::index::hnswlib::...` (via this header) instead of
// including <hnswlib/hnswlib.h> anywhere in Strata, its tests or its benchmarks.
//
// Thread-safety: hnswlib's own (see hnsw_index.h for how HnswIndex locks around it); the
// L2Space / InnerProductSpace constructors write a namespace-level function pointer, so
// construct spaces under one mutex (HnswIndex does).
#pragma once

#include <assert.h>
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <deque>
#include <fstream>
#include <iostream>
#include <list>
#include <mutex>
#include <queue>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// Under AddressSanitizer, hnswlib's SSE paths are compiled out: 0.6.2's searchBaseLayer
// prefetches `*(datal + j + 1)`, one link past the end of a node's list, a 4-byte heap read
// beyond the allocation that ASan reports (fixed upstream after 0.6.2). It only feeds a prefetch
// address, so Release builds keep the SIMD code; ASan builds use the scalar distances.
#if defined(__SANITIZE_ADDRESS__) && defined(__SSE__)
#define STRATA_HNSWLIB_UNDEF_SSE 1
#pragma push_macro("__SSE__")
#pragma push_macro("__AVX__")
#pragma push_macro("__AVX512F__")
#undef __SSE__
#undef __AVX__
#undef __AVX512F__
#endif

namespace strata::index {
namespace {
#include <hnswlib/hnswlib.h>  // IWYU pragma: export
}  // namespace
}  // namespace strata::index

#ifdef STRATA_HNSWLIB_UNDEF_SSE
#pragma pop_macro("__AVX512F__")
#pragma pop_macro("__AVX__")
#pragma pop_macro("__SSE__")
#undef STRATA_HNSWLIB_UNDEF_SSE
#endif
