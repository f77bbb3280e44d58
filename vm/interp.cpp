// vm/interp.cpp — the interpreter loop and step(), both generated from vm/exec.h, so an
// instruction's meaning is written once. With GCC or Clang the loop dispatches with a table of
// label addresses (one indirect jump per instruction, predicted per opcode); elsewhere it is a
// plain switch.
#include "vm/exec.h"

namespace pure::vm {

const Instr* step(VM& vm, Slot*& s, const Instr* ip) {
  switch (ip->op) {
#define PURE_OP(name, flags, inverse, doc) \
  case Op::name: return exec_##name(vm, s, ip);
#include "ir/ops.def"
#undef PURE_OP
    default: fault(ip, "bad instruction");
  }
}

// Runs until the frame that was entered with return_ip == nullptr returns (RET yields null).
void interpret(VM& vm, Slot* s, const Instr* ip) {
#if defined(__GNUC__)
  static const void* const labels[] = {
#define PURE_OP(name, flags, inverse, doc) &&op_##name,
#include "ir/ops.def"
#undef PURE_OP
  };
#define DISPATCH() goto* labels[static_cast<int>(ip->op)]
  DISPATCH();
#define PURE_OP(name, flags, inverse, doc)                      \
  op_##name : ip = exec_##name(vm, s, ip);      \
  if (Op::name == Op::RET && !ip) return;       \
  DISPATCH();
#include "ir/ops.def"
#undef PURE_OP
#undef DISPATCH
#else
  for (;;) {
    switch (ip->op) {
#define PURE_OP(name, flags, inverse, doc)          \
  case Op::name:                    \
    ip = exec_##name(vm, s, ip);    \
    if (Op::name == Op::RET && !ip) \
      return;                       \
    continue;
#include "ir/ops.def"
#undef PURE_OP
      default: fault(ip, "bad instruction");
    }
  }
#endif
}

}  // namespace pure::vm
