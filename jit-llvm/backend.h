// jit-llvm/backend.h — private to jit-llvm/: the LLVM backend of the shared tier
// (jit-common/jit.h), without LLVM types, and which instructions it compiles natively.
//
// Two parts: jit.cpp (library pure_jit_llvm, linked into the programs: the backend's name, its
// native-or-step decision and the loader) and the engine (llvm_backend.cpp, llvm_lowering.cpp,
// llvm_lower_ops.cpp) with all of LLVM, built as the shared object libpure_llvm_engine.so that the
// loader opens on the compile thread at the first compile.
// A program that compiles nothing never maps LLVM: no start-up relocations of its 47 MB and none of
// its pages resident (pure-serve idle: 30 MB resident with LLVM linked in, jit-llvm/README.md).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "jit-common/jit.h"
#include "jit-common/runtime_calls.h"
#include "vm/bytecode.h"
#include "vm/engine.h"

#define PURE_LLVM_ENGINE_EXPORT __attribute__((visibility("default")))

namespace pure::jit {

// What the program and the engine it loads must agree on: the layouts native code reads, the
// function record the lowering reads, and the op numbering. The loader refuses an engine whose
// pure_llvm_engine_abi() answers otherwise (one from another build of the project).
static_assert(static_cast<uint64_t>(vm::Op::Count) < (1u << 8) && sizeof(vm::Function) < (1u << 16) &&
              sizeof(vm::VMCore) < (1u << 16));
inline constexpr uint64_t kLlvmEngineAbi =
    (uint64_t{2} << 56) | (uint64_t{sizeof(vm::Instr)} << 48) | (uint64_t{sizeof(vm::Slot)} << 40) |
    (uint64_t{sizeof(vm::VMCore)} << 24) | (uint64_t{sizeof(vm::Function)} << 8) | static_cast<uint64_t>(vm::Op::Count);

// How the LLVM lowering handles one instruction of a loop.
Lowering lowering_of(vm::Op op);

class LlvmBackend final : public Backend {
 public:
  LlvmBackend();  // sets LLVM up (costly: the tier makes it on the compile thread)
  ~LlvmBackend() override;
  // Compiles loop `loop` of `function` (kLoopPasses) and returns its entry, or null with `error` set.
  // Gives up soon (null, error "cancelled") once *cancel is set: between the lowering, each
  // optimisation pass and the machine code, so that a run that ends never waits for a whole
  // compile it will not use.
  vm::NativeLoop compile(const vm::Function& function, uint32_t loop, std::string& error,
                         const std::atomic<bool>* cancel = nullptr) override;
  // Gives the engine's machine-code pages back (MADV_DONTNEED on its executable segment, which is
  // never written: the next compile faults them in again from the page cache). A server whose
  // loops have compiled would otherwise keep some 35 MB of LLVM resident that it no longer runs.
  void idle() override;
  // Whether the last compile's code came from the code cache (PURE_JIT_CACHE, code_cache.h).
  CacheUse last_cache_use() const override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace pure::jit
