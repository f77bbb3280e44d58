// jit-aarch64/a64_lower.h — lowering one loop of bytecode to AArch64 machine code with asmjit's
// a64::Assembler. Host-independent: it only emits words into an asmjit CodeHolder, so the encoding
// tests (tests/a64) run on x86-64 too; a64_backend.cpp places the code in executable memory on
// AArch64. The addresses of the runtime functions native code calls are passed in, so a test can
// emit a loop with stand-in addresses.
#pragma once
#include <cstdint>
#include <string>

#include <asmjit/core.h>  // (asmjit's namespace is versioned: no forward declarations)

#include "jit-common/jit.h"
#include "vm/bytecode.h"

namespace pure::jit::a64 {

// How this backend handles one instruction of a loop (the tier's native-or-step decision).
Lowering lowering_of(vm::Op op);

// What native code calls: pure_step and the no-throw runtime calls (one field per row of
// jit-common/runtime_calls.def, named as the row). A test may leave some 0: iter_next_piece 0, a
// pieces' ITER_NEXT runs through pure_step; st_iter_rows or walk_materialize 0, native code walks
// no stored list itself.
struct CallTargets {
  uint64_t step = 0;  // pure_step
#define PURE_RUNTIME_CALL(name, result, parameters, memory) uint64_t name = 0;
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
};
CallTargets runtime_call_targets();  // the real addresses in this process

// How the registers were used, for tests and PURE_JIT_DEBUG.
struct LoopCodeInfo {
  uint32_t gp_pinned = 0;   // slots kept in general registers across the loop: x22..x28, then x4..x8
  uint32_t fp_pinned = 0;   // slots kept in floating-point registers: d8..d15, then d19..d31
  uint32_t memory_slots = 0;  // slots the native code reads and writes in the frame
};

// Emits loop `loop` of `function` into `code` (initialised for AArch64): a function with
// vm::NativeLoop's signature. False with `error` set when asmjit refuses an instruction.
bool emit_loop(asmjit::CodeHolder& code, const vm::Function& function, uint32_t loop, const CallTargets& calls,
               std::string& error, LoopCodeInfo* info = nullptr);

}  // namespace pure::jit::a64
