// tests/host/fault_support.h — the crash enumeration the fault tests share: at every fault point
// of a workload, each kind of fault, then a simulated machine crash in each of the given modes,
// and the test's checks on what the crash left. Depends on host/file_fault.h and doctest.
//
// PURE_FAULT_STRIDE=N (the sanitizer builds' ctest sets it; unset means 1) samples the
// enumeration: at fault point p, combination c (of fault kind and crash mode) runs only when
// (p + c) % N == 0: one pair in N, rotating, so that every combination runs at many points (and
// every point runs when there are at least N combinations). The Release stage enumerates every pair. Under ThreadSanitizer each owner run costs about 90 times
// what it does in Release, and the whole enumeration took over 300 s there.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <span>

#include "host/file_fault.h"

namespace host_test {

// How a simulated machine crash treats what was not synced (FaultFileSystem::crash): bytes of
// unsynced appends kept (a torn prefix), whether they come back as zeros, and which unsynced
// directory changes survive (0 none, 1 or 2 either half).
struct CrashMode {
  uint64_t keep;
  bool zeros;
  int namespace_pick;
};

inline constexpr pure::host::Fault kEveryFault[] = {pure::host::Fault::Fail, pure::host::Fault::ShortWrite,
                                                     pure::host::Fault::Crash, pure::host::Fault::TearCrash};

// For each fault point below points, each fault and each crash mode: a fresh file system armed
// with the fault, workload(fs), the crash, then check(fs, what workload returned). The point,
// the fault and the crash mode are captured for any check that fails.
// The stride from PURE_FAULT_STRIDE: 1 (every pair) unless it is a number from 2 to 64.
inline uint64_t fault_stride() {
  const char* text = std::getenv("PURE_FAULT_STRIDE");
  if (text == nullptr) return 1;
  char* end = nullptr;
  unsigned long n = std::strtoul(text, &end, 10);
  return (end != text && *end == '\0' && n >= 2 && n <= 64) ? n : 1;
}

// Whether combination `combination` runs at fault point `point` under the stride.
inline bool sampled(uint64_t point, uint64_t combination) { return (point + combination) % fault_stride() == 0; }

// Says, once per enumeration, that it is sampled (a reader of the log must not take it for all).
inline void note_stride(uint64_t points) {
  if (fault_stride() > 1) MESSAGE("PURE_FAULT_STRIDE=" << fault_stride() << ": one (fault, crash mode) pair in " << fault_stride() << ", rotating, over " << points << " fault points");
}

template <class Workload, class Check>
void at_every_fault(uint64_t points, std::span<const CrashMode> crashes, Workload&& workload, Check&& check) {
  note_stride(points);
  for (uint64_t point = 0; point < points; ++point) {
    uint64_t combination = 0;
    for (pure::host::Fault fault : kEveryFault)
      for (const CrashMode& crash : crashes) {
        if (!sampled(point, combination++)) continue;
        CAPTURE(point);
        CAPTURE(static_cast<int>(fault));
        CAPTURE(crash.keep);
        CAPTURE(crash.zeros);
        CAPTURE(crash.namespace_pick);
        pure::host::FaultFileSystem fs;
        fs.arm(point, fault);
        auto outcome = workload(fs);
        fs.crash(crash.keep, crash.zeros, crash.namespace_pick);
        check(fs, outcome);
      }
  }
}

}  // namespace host_test
