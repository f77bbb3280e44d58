// runtime/memory.cpp — the per-thread memory meter (see memory.h).
#include "runtime/memory.h"

#include <cstddef>

namespace pure::rt {
namespace detail {

// Plain thread-locals: a meter is only ever touched by the thread it is installed on.
constinit thread_local MemoryMeter* t_meter = nullptr;
constinit thread_local int t_no_throw = 0;

void budget_spent() { throw MemoryBudgetSpent(); }

}  // namespace detail

MemoryMeter::NativeLayout MemoryMeter::native_layout() {
  return {static_cast<uint32_t>(offsetof(MemoryMeter, limit_)), static_cast<uint32_t>(offsetof(MemoryMeter, used_))};
}

MeterScope::MeterScope(MemoryMeter& meter) : previous_(detail::t_meter) { detail::t_meter = &meter; }
MeterScope::~MeterScope() { detail::t_meter = previous_; }

MeterNoThrow::MeterNoThrow() { ++detail::t_no_throw; }
MeterNoThrow::~MeterNoThrow() { --detail::t_no_throw; }

}  // namespace pure::rt
