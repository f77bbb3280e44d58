// jit-llvm/backend.h — private to jit-llvm/: the LLVM backend of the shared tier
// (jit-common/jit.h), without LLVM types, and which instructions it compiles natively.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "jit-common/jit.h"
#include "jit-common/runtime_calls.h"
#include "vm/bytecode.h"

namespace pure::jit {

// How the LLVM lowering handles one instruction of a loop.
Lowering lowering_of(vm::Op op);

class LlvmBackend final : public Backend {
 public:
  LlvmBackend();  // sets LLVM up (costly: the tier makes it on the compile thread)
  ~LlvmBackend() override;
  // Compiles loop `loop` of `function` (O2) and returns its entry, or null with `error` set.
  // Gives up soon (null, error "cancelled") once *cancel is set: between the lowering, each
  // optimisation pass and the machine code, so that a run that ends never waits for a whole
  // compile it will not use.
  vm::NativeLoop compile(const vm::Function& function, uint32_t loop, std::string& error,
                         const std::atomic<bool>* cancel = nullptr) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace pure::jit
