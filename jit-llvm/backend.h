// jit-llvm/backend.h — private to jit-llvm/: what the tier (jit.cpp) asks of the LLVM backend
// (llvm_backend.cpp), without LLVM types, and which instructions are compiled natively.
#pragma once
#include <memory>
#include <string>

#include "vm/bytecode.h"

namespace pure::jit {

// How the lowering handles one instruction of a loop.
enum class Lowering : uint8_t {
  Native,  // machine code (faults leave to the interpreter at the instruction)
  Step,    // a call to pure_step, slots stored before and reloaded after
  Exit,    // leave to the interpreter at the instruction (calls, returns, fail)
};
Lowering lowering_of(vm::Op op);

class Backend {
 public:
  Backend();
  ~Backend();
  // Compiles loop `loop` of `function` (O2) and returns its entry, or null with `error` set.
  vm::NativeLoop compile(const vm::Function& function, uint32_t loop, std::string& error);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace pure::jit
