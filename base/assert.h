// base/assert.h — PURE_ASSERT: invariants at layer boundaries, checked loudly (TigerBeetle's
// style) in Debug, sanitizer and fuzz builds (PURE_CHECKS=1), compiled out in Release.
// Depends on nothing; every layer may include it.
#pragma once
#include <cstdio>
#include <cstdlib>

#ifndef PURE_CHECKS
#define PURE_CHECKS 0
#endif

namespace pure {
[[noreturn]] inline void assert_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: internal invariant broken: %s\n", file, line, what);
  std::abort();
}
}  // namespace pure

#if PURE_CHECKS
#define PURE_ASSERT(cond) ((cond) ? static_cast<void>(0) : ::pure::assert_failed(#cond, __FILE__, __LINE__))
#else
#define PURE_ASSERT(cond) static_cast<void>(sizeof(!(cond)))  // type-checked, never evaluated
#endif
