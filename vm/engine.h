// vm/engine.h — the engine seam: what an engine (the interpreter, the step driver, a JIT)
// implements and what native code may touch. Included by vm/ and by the JITs, never by hosts.
//
// The contract (docs/architecture.md, "The engine seam"):
//  * An Engine runs bytecode from a pc on a frame until the frame entered with no return pc
//    returns. A fault leaves it as a vm::Fault exception; the one driver loop (vm/driver.cpp)
//    catches it, rolls back the event it happened in, or ends the run with a RuntimeError.
//  * Native code is entered at a loop's LOOP or ITER_NEXT instruction, which it executes first
//    (spending the step exactly as the interpreter does), runs on the same frame and slots, and
//    returns the pc where the interpreter resumes: on leaving the loop, before an instruction
//    it does not compile, or at a fault (it may return the pc of the faulting instruction, which
//    the interpreter then executes and faults on with the same message). It never throws: what
//    it does not compile it may run with pure_step(), which reports a fault by returning kFaulted
//    with the fault left in the VM; native code then returns kFaulted too.
//  * Native code reads and writes the VM only through VMCore, a standard-layout struct at a
//    fixed place, and calls only the extern "C" functions below.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "vm/bytecode.h"

namespace pure::vm {

struct VM;
struct Iterator;  // vm/state.h; native code reads a leaf run's fields at iterator_layout()

// The VM fields native code touches, at fixed offsets.
struct VMCore {
  int64_t steps_left;   // the running invocation's budget; a step spent below zero is a fault
  Slot* stack_end;      // one past the last slot of the slot stack
  VM* vm;               // the machine, for the runtime calls
  uint32_t tier_up;     // nonzero: LOOP and ITER_NEXT count passes and enter native code
  uint32_t faulted;     // nonzero: pure_step caught a fault, kept in the VM until rethrown
  uint32_t tier_threshold;  // the Tier's threshold (below kLoopParked), read inline at every pass
  Iterator* iters;      // the iterator stack's array (VM::iters.data()), kept current when it grows
  std::atomic<uint32_t>* loop_hits;  // Program::loop_hits: by LOOP's A | B << 16, ITER_NEXT's C
};
static_assert(std::is_standard_layout_v<VMCore>);
inline constexpr size_t kCoreStepsLeft = offsetof(VMCore, steps_left);
inline constexpr size_t kCoreStackEnd = offsetof(VMCore, stack_end);
inline constexpr size_t kCoreIters = offsetof(VMCore, iters);

// Where native code finds the leaf run an ITER_NEXT serves inline (vm/exec.h), in bytes within
// an Iterator; iterator i is at core.iters + i * size. While run_left > 0, the next row is the
// `width` cells at `run`: ITER_NEXT copies them to its slots A.., advances run by width cells
// and counts run_left down. Anything else (run_left == 0) is ITER_NEXT's out-of-line path, where a
// nonzero byte at one_run says the rows are done.
struct IteratorLayout {
  uint32_t size, run, run_left, width, one_run;
};
IteratorLayout iterator_layout();

// Returned instead of a pc when a fault is pending in the VM (never executed).
extern const Instr kFaulted[1];

}  // namespace pure::vm

extern "C" {
// Executes exactly one instruction without throwing: the next pc, nullptr when the entry frame
// returned, or kFaulted with the fault kept in the VM. *base follows CALL and RET.
const pure::vm::Instr* pure_step(pure::vm::VMCore* core, pure::vm::Slot** base, const pure::vm::Instr* ip) noexcept;
}

namespace pure::vm {

// How a driver runs bytecode. run() returns when the frame entered with a null return pc
// returns; faults propagate as vm::Fault.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  virtual void run(VM& vm, Slot* base, const Instr* ip) = 0;
};

// The computed-goto interpreter (vm/interp.cpp). Enters native code at hot loops when the run's
// options carry a Tier.
Engine& interpreter();

// Runs one step() at a time through pure_step, as native code does for what it does not
// compile; counts the instructions. Tests run every program through it and the interpreter.
class StepEngine final : public Engine {
 public:
  const char* name() const override { return "step"; }
  void run(VM& vm, Slot* base, const Instr* ip) override;
  uint64_t instructions = 0;
};

// A JIT's hook for tier-up. The interpreter counts passes through each loop's LOOP/ITER_NEXT;
// when a loop reaches `threshold` passes it moves the loop's state from Interpreted to Queued and
// calls hot() once, on the running thread, which must not wait for the compile: the engine
// compiles elsewhere and publishes LoopInfo::entry (release) and state Compiled, or sets state
// Rejected to keep the loop interpreted.
class Tier {
 public:
  virtual ~Tier() = default;
  virtual void hot(const Program& program, const Function& function, uint32_t loop) = 0;
  uint32_t threshold = 1000;
};

// What a Tier calls when a loop's compile ends: publish its native code (the interpreter enters
// it at the loop's next pass) or keep it interpreted. Any thread.
inline void publish_loop(const LoopInfo& loop, NativeLoop entry) {
  loop.entry.store(entry, std::memory_order_release);
  loop.state.store(static_cast<uint8_t>(LoopState::Compiled), std::memory_order_release);
  loop.hits.store(kLoopNative, std::memory_order_release);
}
// Rejecting a loop counts Program::open_loops down; the last one marks every counter of the
// program kLoopRecheck, so that each VM still checking leaves its tier check off at its next loop
// pass (vm/driver.cpp). A loop is rejected at most once (hot() is called once per loop).
void reject_loop(const Program& program, const LoopInfo& loop);

}  // namespace pure::vm
