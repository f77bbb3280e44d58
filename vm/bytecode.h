// vm/bytecode.h — bytecode: functions as arrays of 16-byte instructions over frame slots.
// The opcodes are ir/ops.def; this is their linear, register-allocated form.
// Depends on ir/ir.h (opcodes, descriptors) and runtime/ (texts, list shapes).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/event_list.h"

namespace pure::vm {

using Op = ir::Op;

// One instruction. A, B, C are slot numbers (or small operands, see ir/ops.def); IMM is a
// 64-bit immediate or, for jumps, the target pc.
struct Instr {
  Op op;
  uint16_t a, b, c;
  int64_t imm;
};
static_assert(sizeof(Instr) == 16);

// A slot: 8 bytes holding an int, a num, a bool or a counted pointer.
union Slot {
  int64_t i;
  double n;
  uint64_t u;
  rt::Text* t;
  rt::EventList* l;
  void* p;
};
static_assert(sizeof(Slot) == 8);

struct BlockInfo {
  uint32_t start_pc = 0;
  uint32_t end_pc = 0;  // one past the last instruction
  bool loop_header = false;
  bool loop_bearing = false;
};

struct Function {
  std::string name;
  FuncKind kind = FuncKind::Function;
  uint32_t line = 0;
  uint16_t param_slots = 0;
  uint16_t result_slots = 0;
  uint16_t frame_slots = 0;         // locals and temporaries; the call area follows
  uint16_t call_area = 0;
  std::vector<Instr> code;
  std::vector<Loc> locs;            // source position of each instruction
  std::vector<uint16_t> text_slots;  // released when the frame ends
  std::vector<uint16_t> list_slots;
  std::vector<uint8_t> result_kind;  // per result slot: 0 plain, 1 text, 2 list
  std::vector<BlockInfo> blocks;    // in code order; loop structure from the IR
  // A plain function owns no counted references (no text or list slots, results, or params)
  // and is not an event or query: calls to it take the short path in vm/exec.h.
  bool plain = false;
  uint32_t stack_need = 0;          // frame_slots + call_area
};

struct Program {
  std::string path;
  std::vector<Function> functions;
  std::vector<rt::Text*> texts;            // constants; flagged as store texts so VM counting skips them
  std::vector<std::unique_ptr<rt::ListShape>> shapes;   // event list shapes, by descriptor
  std::vector<std::string> shape_names;
  std::vector<std::vector<std::string>> shape_columns;
  std::vector<rt::ListSchema> stored;      // the module's stored lists
  std::vector<std::unique_ptr<rt::ListShape>> stored_shapes;  // same layouts as ListShape, for defaults
  int main = -1;
  ~Program();
};

// Turns IR into bytecode. Fails (with a message) only past implementation limits, e.g. a
// function with more than 65,000 slots.
std::unique_ptr<Program> load_program(const ir::Program& ir, std::string& error);

std::string dump_bytecode(const Program& p);

}  // namespace pure::vm
