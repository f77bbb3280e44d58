// jit-llvm/jit.h — the x86-64 JIT: compiles hot loops of bytecode to machine code with LLVM 19.
// It plugs into the engine seam (vm/engine.h) as a vm::Tier: the interpreter hands it a loop at
// the threshold, one background thread compiles it, and the entry is published in the loop's
// LoopInfo::entry. No LLVM type appears here; LLVM lives in jit-llvm/llvm_backend.cpp only.
// Depends on vm/ (the seam); vm/ never depends on this.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "vm/engine.h"

namespace pure::jit {

struct Options {
  uint32_t threshold = 1000;     // loop passes before a loop is compiled (0: on first entry)
  // Compile on the interpreter's thread inside hot(), so tests see native code from the second
  // pass on. Tests only: a normal run never waits for a compile.
  bool synchronous = false;
  // A loop is compiled only when at least this share of its instructions is compiled natively
  // (the rest run through pure_step or leave to the interpreter); below it stays interpreted.
  // Measured (bench/run --clock cpu): textbuild's loop, 5 of 7 native (0.71) with INT_TEXT and
  // SEQ_PUSH through pure_step, ran 11% slower compiled (the compile costs more than the few
  // dispatches it saves); mandelbrot's and sieve's loops (0.93-1.0) run 1.1-4.3x faster.
  double min_native_share = 0.8;
};

struct Stats {
  uint32_t compiled = 0;            // loops with native code
  uint32_t rejected = 0;            // loops kept interpreted (too little native, or a failed compile)
  uint64_t instructions = 0;        // instructions of the compiled loops
  uint64_t native_instructions = 0;  // of those, compiled to machine code (not pure_step, not exits)
  double compile_ms = 0;            // thread CPU time of all compiles
  std::vector<double> loop_ms;      // per compiled loop, in the order they finished
};

// The LLVM tier. Destroying it cancels queued compiles and waits for the one in flight; its
// native code lives as long as it does, so it must outlive every run that uses it.
class Jit final : public vm::Tier {
 public:
  explicit Jit(const Options& options = {});
  ~Jit() override;
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;
  void hot(const vm::Program& program, const vm::Function& function, uint32_t loop) override;
  // Waits until every queued compile has finished (tests and benchmarks of compile time).
  void drain();
  // Cancels queued compiles and the one in flight (which gives up at its next phase: LLVM's
  // set-up, the lowering, an optimisation pass or the machine code) and waits for it; hot()
  // queues nothing after it. A run that ends as a loop gets hot does not wait for its compile.
  // Published code stays valid until the Jit is destroyed.
  void stop();
  Stats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The share of a loop's instructions that the backend compiles natively, as hot() measures it.
double native_share(const vm::Function& function, const vm::LoopInfo& loop);

}  // namespace pure::jit
