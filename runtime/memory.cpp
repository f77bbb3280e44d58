// runtime/memory.cpp — the per-thread memory meter (see memory.h).
#include "runtime/memory.h"

namespace pure::rt {
namespace {

// Plain thread-locals: a meter is only ever touched by the thread it is installed on.
constinit thread_local MemoryMeter* t_meter = nullptr;
constinit thread_local int t_no_throw = 0;

}  // namespace

MeterScope::MeterScope(MemoryMeter& meter) : previous_(t_meter) { t_meter = &meter; }
MeterScope::~MeterScope() { t_meter = previous_; }

MeterNoThrow::MeterNoThrow() { ++t_no_throw; }
MeterNoThrow::~MeterNoThrow() { --t_no_throw; }

void memory_charge(uint64_t bytes) {
  MemoryMeter* m = t_meter;
  if (!m) return;
  if (!m->fits(bytes) && t_no_throw == 0) throw MemoryBudgetSpent();
  m->add(bytes);
}

void memory_note(uint64_t bytes) {
  if (MemoryMeter* m = t_meter) m->add(bytes);
}

void memory_credit(uint64_t bytes) {
  if (MemoryMeter* m = t_meter) m->sub(bytes);
}

bool memory_over() {
  MemoryMeter* m = t_meter;
  return m && m->over();
}

const MemoryMeter* current_meter() { return t_meter; }

}  // namespace pure::rt
