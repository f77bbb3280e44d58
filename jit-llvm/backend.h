// jit-llvm/backend.h — private to jit-llvm/: what the tier (jit.cpp) asks of the LLVM backend
// (llvm_backend.cpp), without LLVM types, and which instructions are compiled natively.
#pragma once
#include <atomic>
#include <cstdint>
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

// What the event-list runtime calls return: a cell, and whether the common case applied
// (returned in two registers, as LLVM's {i64, i64}).
struct CellResult {
  uint64_t value;
  uint64_t ok;
};

class Backend {
 public:
  Backend();
  ~Backend();
  // Compiles loop `loop` of `function` (O2) and returns its entry, or null with `error` set.
  // Gives up soon (null, error "cancelled") once *cancel is set: between the lowering, each
  // optimisation pass and the machine code, so that a run that ends never waits for a whole
  // compile it will not use.
  vm::NativeLoop compile(const vm::Function& function, uint32_t loop, std::string& error,
                         const std::atomic<bool>* cancel = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
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
