// vm/interp.cpp — the switch interpreter and step(), both generated from vm/exec.h, so an
// instruction's meaning is written once.
#include "vm/exec.h"

namespace pure::vm {

const Instr* step(VM& vm, Slot*& s, const Instr* ip) {
  switch (ip->op) {
#define PURE_OP(name, doc) \
  case Op::name: return exec_##name(vm, s, ip);
#include "ir/ops.def"
#undef PURE_OP
    default: fault(ip, "bad instruction");
  }
}

// Runs until the frame that was entered with return_ip == nullptr returns (RET yields null).
void interpret(VM& vm, Slot* s, const Instr* ip) {
  for (;;) {
    switch (ip->op) {
#define PURE_OP(name, doc)          \
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
}

}  // namespace pure::vm
