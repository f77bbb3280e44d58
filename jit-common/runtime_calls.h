// jit-common/runtime_calls.h — the small no-throw runtime functions native code of every backend
// calls for event-list instructions (runtime_calls.cpp): each does the common case of one
// instruction (exactly as vm/exec.h does it) and reports whether it could; when not, native code
// runs the instruction through pure_step, which does the rest or faults with the interpreter's
// own message.
#pragma once
#include <cstdint>

namespace pure::jit {
// What the event-list runtime calls return: a cell, and whether the common case applied
// (returned in two registers: rax/rdx on x86-64, x0/x1 on AArch64).
struct CellResult {
  uint64_t value;
  uint64_t ok;
};
}  // namespace pure::jit

namespace pure::rt {
class EventList;
}
extern "C" {
pure::jit::CellResult pure_jit_seq_get(pure::rt::EventList* l, int64_t pos) noexcept;
pure::jit::CellResult pure_jit_seq_get_field(pure::rt::EventList* l, int64_t pos, int64_t field) noexcept;
uint64_t pure_jit_seq_set(pure::rt::EventList* l, int64_t pos, uint64_t value) noexcept;
uint64_t pure_jit_seq_set_field(pure::rt::EventList* l, int64_t pos, int64_t field, uint64_t value) noexcept;
int64_t pure_jit_list_count(pure::rt::EventList* l) noexcept;
double pure_jit_fmod(double a, double b) noexcept;
}
