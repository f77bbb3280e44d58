// tools/allocator.h — start-up settings of the allocator the shipped programs link (CMakeLists.txt:
// PURE_ALLOCATOR). Nothing here changes what a program prints; only how its memory is mapped.
// Include it in one source file of a program (it defines a start-up function).
#pragma once
#include <cstdlib>
#include <new>
#ifdef PURE_MIMALLOC
#include <mimalloc.h>
#endif

namespace pure::tools {

// With mimalloc: large OS pages, which on Linux means mimalloc asks for transparent huge pages
// (madvise) on the segments it maps from then on. A run that holds a hundred MB of texts and
// lists then takes one page fault per 2 MiB instead of one per 4 KiB: bench/kernels/textkeys (2M
// words, ~140 MB) went from ~30,000 minor faults and 30-60 ms of system time to 6,000-10,000
// faults and 20-40 ms (what mimalloc mapped before this ran keeps small pages; with
// MIMALLOC_LARGE_OS_PAGES=1 set at start, ~1,100 faults). Where the system lends no huge pages it
// falls back to small ones; the memory budget (runtime/memory.h) counts bytes, not pages, so it is
// not affected. MIMALLOC_LARGE_OS_PAGES in the environment (mimalloc's own switch) still decides
// when it is set. Run as a constructor of priority 101: after mimalloc's own start-up (a shared
// library's constructors run first), before the program's static objects.
__attribute__((constructor(101), used)) static void tune_allocator() {
#ifdef PURE_MIMALLOC
  if (!std::getenv("MIMALLOC_LARGE_OS_PAGES")) mi_option_set_enabled(mi_option_large_os_pages, true);
#endif
}

}  // namespace pure::tools

#ifdef PURE_MIMALLOC
// operator new that throws std::bad_alloc when the system refuses memory. The C build of mimalloc
// (Debian's libmimalloc.so.2) defines operator new in C: when an allocation fails it calls
// abort(), where the C++ standard (and libstdc++) throw. Running out of memory inside a call must
// be that call's runtime error (vm/driver.cpp turns std::bad_alloc into one), never SIGABRT (issue
// 31 item 8: under `ulimit -v`, a growing list ended pure-run with exit 134). The program's own
// definitions replace the library's everywhere; delete stays mimalloc's (mi_free frees both).
void* operator new(std::size_t n) {
  if (void* p = mi_new_nothrow(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = mi_new_nothrow(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = mi_new_aligned_nothrow(n, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = mi_new_aligned_nothrow(n, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
#endif
