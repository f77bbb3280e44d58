// vm/bytecode.h — bytecode: functions as arrays of 16-byte instructions over frame slots.
// The opcodes are ir/ops.def; this is their linear, register-allocated form.
// Depends on ir/ir.h (opcodes, descriptors) and runtime/ (texts, list shapes).
#pragma once
#include <atomic>
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

// The one slot a CALL_PLAIN writes that its operand columns do not show (ir/ops.def): the result
// sent straight to slot IMM >> 48 when IMM >> 34 & 1; -1 for any other instruction or when the
// result goes back to A.
inline int32_t plain_call_result_slot(const Instr& in) {
  const uint64_t imm = static_cast<uint64_t>(in.imm);
  return in.op == Op::CALL_PLAIN && ((imm >> 34) & 1) ? static_cast<int32_t>(imm >> 48) : -1;
}

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
  int32_t loop = -1;              // innermost loop holding the block (index into Function::loops)
  std::vector<uint32_t> succs;    // blocks control can go to next (jump targets, fall-through)
};

struct VMCore;
// Native code for one loop (see vm/engine.h): runs on the frame `base` from `ip`, one of the
// loop's entry pcs, and returns the pc where the interpreter resumes (or kFaulted).
using NativeLoop = const Instr* (*)(VMCore* core, Slot* base, const Instr* ip);

// A loop's pass counter (see LoopInfo::hits), an element of Program::loop_hits.
struct LoopCounter {
  std::atomic<uint32_t>* at = nullptr;
  uint32_t load(std::memory_order order = std::memory_order_seq_cst) const { return at->load(order); }
  void store(uint32_t v, std::memory_order order = std::memory_order_seq_cst) const { at->store(v, order); }
};

// A natural loop of the final layout (ir/layout.cpp), in bytecode blocks. The loop's id is its
// index in Function::loops; the LOOP instructions that spend its steps carry the id in IMM and
// the loop's program-wide index (LoopInfo::index) in A (low 16 bits) and B (high 16 bits); an
// ITER_NEXT that heads it carries the index in C (A, B and IMM are taken), so that both find the
// loop's pass counter with one load: VMCore::loop_hits[index] (see kNoLoopIndex).
struct LoopInfo {
  uint32_t header = 0;              // the block every back edge jumps to
  int32_t parent = -1;              // the enclosing loop, or -1
  uint32_t depth = 1;               // 1 for an outermost loop
  std::vector<uint32_t> blocks;     // every block of the loop, in code order
  std::vector<uint32_t> latches;    // blocks that jump back to the header
  std::vector<uint32_t> exits;      // blocks outside the loop that its blocks lead to
  // Tier-up: the only parts of a Program written after loading, by engines (any thread).
  // hits: the passes counted while the loop is interpreted, or kLoopParked (queued or rejected:
  // nothing to count) or kLoopNative (compiled: enter its entry). The interpreter reads it inline
  // at every pass and calls out of line only at the threshold or to enter native code. The
  // counters of all loops of a program are one array, Program::loop_hits, so that a LOOP or an
  // ITER_NEXT finds its own with one load: VMCore::loop_hits[index].
  LoopCounter hits;
  uint32_t index = 0;  // program-wide, from 1: this loop's element of Program::loop_hits
  mutable std::atomic<uint8_t> state{0};         // LoopState
  mutable std::atomic<NativeLoop> entry{nullptr};  // compiled code, published with release order
};
enum class LoopState : uint8_t { Interpreted, Queued, Compiled, Rejected };
inline constexpr uint32_t kLoopParked = UINT32_MAX - 1;
inline constexpr uint32_t kLoopNative = UINT32_MAX;
// Every loop of the program is rejected (Program::open_loops is 0): the counter sends the
// interpreter out of line once more, where tier_up() turns that VM's tier check off. Above any
// threshold (VMCore::tier_threshold is at most kLoopParked - 1), so the inline check never counts it.
inline constexpr uint32_t kLoopRecheck = UINT32_MAX - 2;

// The index of no loop: Program::loop_hits[0] holds kLoopParked for ever, so the tier check
// passes it by as a parked loop, without a test of its own. A LOOP or ITER_NEXT that heads no loop
// (the copy of a rotated loop's test in front of the loop; LOOP's IMM is -1 then) carries it, and
// so does an ITER_NEXT heading a loop whose index does not fit in C's 16 bits (more than 65535
// loops before it in the program): that loop is never counted there, so it stays interpreted
// unless a loop around it is compiled (speed only, never a result).
inline constexpr uint32_t kNoLoopIndex = 0;

struct Function {
  std::string name;
  FuncKind kind = FuncKind::Function;
  uint32_t line = 0;
  uint16_t param_slots = 0;
  uint16_t result_slots = 0;
  uint16_t frame_slots = 0;         // locals and temporaries; the call area follows
  uint16_t call_area = 0;           // argument slots of calls, and the slots of inlined calls' code
  std::vector<Instr> code;
  std::vector<Loc> locs;            // source position of each instruction
  std::vector<uint16_t> text_slots;  // released when the frame ends
  std::vector<uint16_t> list_slots;
  std::vector<uint8_t> result_kind;  // per result slot: 0 plain, 1 text, 2 list
  std::vector<BlockInfo> blocks;    // in code order; tile the code
  std::vector<LoopInfo> loops;      // sized once at load (LoopInfo cannot move)
  std::vector<std::string> param_names;
  std::vector<ir::ValueType> param_types;
  ir::ValueType result_type;        // Void when the function returns nothing
  // A plain function owns no counted references (no text or list slots, results, or params)
  // and is not an event or query: calls to it take the short path in vm/exec.h.
  bool plain = false;
  // Slots that hold one value wherever the function's loops run: the literals the compiler
  // computes once on entry for the loops (ir/lower_exprs.cpp, constant()) and the constants of inlined
  // leaves the loader put there (load.cpp, inline_leaves), each kept only if its one write in the
  // whole function is that CONST, outside every loop (checked at load). Engines may use the value
  // where a loop reads the slot, and need not store it back.
  std::vector<std::pair<uint16_t, int64_t>> entry_constants;
  uint32_t stack_need = 0;          // frame_slots + call_area: every slot the code uses
  // What a call of this function checks the slot stack for: stack_need without the slots of
  // inlined calls (at most limits::kInlineSlots, which the slot stack keeps spare past its end),
  // so that inlining never changes where a stack overflow happens.
  uint32_t overflow_need = 0;
  // Leaf inlining (ir/inline.cpp, run by the loader): the calls whose callee's code the loader
  // copied into this function, and per instruction 0 (the function's own) or 1 + the index in
  // `inlined` of the call it was copied from; empty when nothing was inlined. A fault there
  // reports the callee's frame on top of this one, as the call would have (vm/driver.cpp).
  using InlinedCall = ir::InlinedCall;
  std::vector<InlinedCall> inlined;
  std::vector<uint16_t> inlined_from;
  const InlinedCall* inlined_call(uint32_t pc) const {
    return pc < inlined_from.size() && inlined_from[pc] ? &inlined[inlined_from[pc] - 1] : nullptr;
  }
};

// Whether `in` (an instruction of `fn`) heads loop `loop` of fn: a LOOP with the loop's id in IMM,
// or an ITER_NEXT with the loop's program-wide index in C. Native code is entered at exactly these
// (vm/engine.h), so the JITs' entry dispatch asks this.
inline bool heads_loop(const Function& fn, const Instr& in, uint32_t loop) {
  if (in.op == ir::Op::LOOP) return in.imm == static_cast<int64_t>(loop);
  return in.op == ir::Op::ITER_NEXT && in.c != kNoLoopIndex && in.c == fn.loops[loop].index;
}

struct Program {
  std::string path;
  std::vector<Function> functions;
  std::vector<rt::Text*> texts;            // constants; flagged as store texts so VM counting skips them
  std::vector<std::unique_ptr<rt::ListShape>> shapes;   // event list shapes, by descriptor
  std::vector<std::string> shape_names;
  std::vector<std::vector<std::string>> shape_columns;
  std::vector<std::vector<std::vector<std::string>>> shape_members;  // per shape, per column: an enum's members, or empty
  std::vector<rt::ListSchema> stored;      // the module's stored lists
  std::vector<std::unique_ptr<rt::ListShape>> stored_shapes;  // same layouts as ListShape, for defaults
  int main = -1;
  // Every loop's pass counter (LoopInfo::hits), by LoopInfo::index; written by engines (any thread).
  // Element kNoLoopIndex (0) is no loop's and holds kLoopParked for ever.
  std::unique_ptr<std::atomic<uint32_t>[]> loop_hits;
  uint32_t loop_count = 0;  // loops of all functions: loop_hits has loop_count + 1 elements
  // Tier-up (vm/driver.cpp): the loops not rejected, i.e. interpreted (never hot yet), queued or
  // compiled. reject_loop counts it down; Rejected is final, so once it is 0 it stays 0, no loop
  // can reach native code any more, and a VM with a Tier stops checking loops (core.tier_up = 0):
  // at the loop it passes next, or when it is made (the next invocation).
  mutable std::atomic<uint32_t> open_loops{0};
  mutable std::atomic<uint32_t> tier_stops{0};  // VMs that turned their tier check off that way
  ~Program();
};

// Turns IR into bytecode. Fails (with a message) only past implementation limits, e.g. a
// function with more than limits::kFrameSlots (60,000) slots; pure-run meets that limit in lowering.
struct LoadOptions {
  bool inline_calls = true;  // leaf inlining (load.cpp); tests turn it off to compare
};
std::unique_ptr<Program> load_program(const ir::Program& ir, std::string& error, const LoadOptions& options = {});

std::string dump_bytecode(const Program& p);

}  // namespace pure::vm
