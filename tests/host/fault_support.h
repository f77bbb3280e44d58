// tests/host/fault_support.h — the crash enumeration the fault tests share: at every fault point
// of a workload, each kind of fault, then a simulated machine crash in each of the given modes,
// and the test's checks on what the crash left. Depends on host/file_fault.h and doctest.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
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
template <class Workload, class Check>
void at_every_fault(uint64_t points, std::span<const CrashMode> crashes, Workload&& workload, Check&& check) {
  for (uint64_t point = 0; point < points; ++point)
    for (pure::host::Fault fault : kEveryFault)
      for (const CrashMode& crash : crashes) {
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

}  // namespace host_test
