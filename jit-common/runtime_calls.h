// jit-common/runtime_calls.h — the small no-throw runtime functions native code of every backend
// calls for event-list instructions (runtime_calls.cpp), declared from their table
// (runtime_calls.def, which says what each does and how to add one): each does the common case of
// one instruction (exactly as vm/exec.h does it) and reports whether it could; when not, native
// code runs the instruction through pure_step, which does the rest or faults with the
// interpreter's own message. The stored-list loop calls run the VM's own code for their instruction.
#pragma once
#include <cstddef>
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
struct Text;
}
namespace pure::vm {
struct VMCore;
union Slot;
struct Instr;
struct Iterator;
}
extern "C" {
// A flat form's prefix walked by native code without an iterator (jit-aarch64): the run left, the
// ST_ITER that began the walk (null: no walk) and the row width its ITER_NEXT expects, in native
// code's own frame.
struct PureWalkSite;
struct PureNativeWalk {
  const uint64_t* run;
  uint64_t run_left;
  const pure::vm::Instr* ip;
  uint64_t width;
  PureWalkSite* site;  // null, or where one ST_ITER keeps what it needs to look its rows up itself
};
// One ST_ITER's lookup, filled by pure_jit_st_iter_rows when the rows came from a dense flat form
// (rt::ListReader::DenseRows; starts null until then): native code that knows the iterator stack
// is as deep at every pass of that ST_ITER (jit-aarch64: plan_walks) looks the next prefixes up
// itself while the meter is not over its limit (st_iter's other checks cannot change while it
// runs: the query's snapshot, the list, the width, the stack's room).
struct PureWalkSite {
  const uint32_t* starts;
  const void* meter;  // the thread's rt::MemoryMeter (MemoryMeter::native_layout), or one never over
  int64_t base;
  uint64_t span;
  const uint64_t* rows;
  uint64_t row_bytes;
  const pure::vm::Instr* ip;
  uint64_t unused;
};

// pure_jit_NAME for each row of runtime_calls.def.
#define PURE_RUNTIME_CALL(name, result, parameters, memory) result pure_jit_##name parameters noexcept;
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
}

namespace pure::jit {
// The runtime calls by name, in the table's order (LLVM keeps its declarations in an array by it).
enum class RuntimeCall : uint8_t {
#define PURE_RUNTIME_CALL(name, result, parameters, memory) name,
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
};
inline constexpr size_t kRuntimeCallCount = 0
#define PURE_RUNTIME_CALL(name, result, parameters, memory) +1
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
    ;
}  // namespace pure::jit
