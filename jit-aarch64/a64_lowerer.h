// jit-aarch64/a64_lowerer.h — folder-private: the Lowerer class that turns one loop of bytecode
// into AArch64 machine code, declared once for the files that define its parts:
//   a64_lower.cpp      the entry points (lowering_of, emit_loop), build(), the frame and control
//   a64_slots.cpp      register planning: where each slot lives, loading and storing it
//   a64_walks.cpp      stored-list walks: ST_ITER/ITER_NEXT without an iterator, pieces, sites
//   a64_ops.cpp        per-op emission: lower(pc), one case per native instruction
//
// The function has vm::NativeLoop's signature: x0 = VMCore*, x1 = the frame's slots, x2 = the pc it
// is entered at (one of the loop's LOOP/ITER_NEXT instructions); x0 = the pc where the interpreter
// resumes, or kFaulted. Fixed registers across the whole loop:
//   x19 core, x20 base (the frame), x21 the step budget (core->steps_left, kept in a register);
//   the hottest int-like slots in x22..x28 and then x4..x8, the hottest num slots in d8..d15 and
//   then d19..d31. The first of each are callee-saved and live across calls into C; the
//   caller-saved ones are stored around those calls. x15 and the pool's last caller-saved ones
//   (x8, x7, x6) may instead hold a walk's cursor and a list's count and rows (plan_registers).
//   x9..x14 and d16..d18 are scratch, x16/x17 call targets and large offsets.
// Every other slot a native instruction uses is read and written in the frame.
// Pinned slots and the budget are loaded at entry and written back at every exit and before every
// pure_step call (which may read or write any slot), and reloaded after it.
// Exits leave to the interpreter at a pc: the first pc outside the loop, an instruction that
// changes the frame (CALL, RET) or FAIL, or a faulting instruction (int overflow, division by
// zero, num to int out of range), which the interpreter executes again and faults on with its
// own message. A budget spent at a LOOP runs that LOOP through pure_step, which raises the
// interpreter's fault (returning its pc would enter this code again).
#pragma once
#include "jit-aarch64/a64_lower.h"

#include <asmjit/core.h>
#include <asmjit/arm/a64assembler.h>

#include <algorithm>
#include <functional>
#include <map>

#include "base/assert.h"
#include "jit-common/jit.h"
#include "jit-common/runtime_calls.h"
#include "runtime/event_list.h"
#include "runtime/memory.h"
#include "vm/engine.h"

namespace pure::jit::a64 {

using vm::Instr;
using vm::Op;
namespace aj = asmjit;
namespace A = asmjit::a64;
using CC = asmjit::arm::CondCode;

// The type a native instruction reads or writes an operand slot as: ir/ops.def's KINDS (Int: a
// general register, Num: a floating-point one, Any: either, None: no slot). ITER_NEXT's row and
// ST_ITER's key cells are this lowering's own (assign_homes).
using Use = ir::ValueKind;
struct Uses {
  Use a = Use::None, b = Use::None, c = Use::None;
};
inline Uses uses_of(Op op) { return {ir::op_kind(op, 0), ir::op_kind(op, 1), ir::op_kind(op, 2)}; }

// Registers for pinned slots: callee-saved ones first (they survive calls into C), then
// caller-saved ones, which are stored around such calls (and, like all, around pure_step).
constexpr int kGpCallee = 7, kGpPinned = 12;  // x22..x28, then x4..x8
constexpr int kFpCallee = 8, kFpPinned = 21;  // d8..d15, then d19..d31
constexpr int gp_reg_of(int i) { return i < kGpCallee ? 22 + i : 4 + (i - kGpCallee); }
constexpr int fp_reg_of(int i) { return i < kFpCallee ? 8 + i : 19 + (i - kFpCallee); }
// The pools as the comments above and at the top of the file say (x0..x3 stay free for the
// runtime calls' arguments, x9.. and d16..d18 for scratch).
static_assert(gp_reg_of(0) == 22 && gp_reg_of(kGpCallee - 1) == 28 && gp_reg_of(kGpCallee) == 4 &&
              gp_reg_of(kGpPinned - 1) == 8);
static_assert(fp_reg_of(0) == 8 && fp_reg_of(kFpCallee - 1) == 15 && fp_reg_of(kFpCallee) == 19 &&
              fp_reg_of(kFpPinned - 1) == 31);
const A::Gp kCore = A::x19, kBase = A::x20, kSteps = A::x21;

// Where a slot lives while native code runs.
struct Home {
  enum Kind : uint8_t { Memory, Gp, Fp } kind = Memory;
  uint8_t reg = 0;  // its place in the pool: gp_reg_of(reg) (x22.., then x4..) or fp_reg_of(reg) (d8.., then d19..)
};

// One loop's lowering: build() emits it into the CodeHolder given.
class Lowerer {
 public:
  Lowerer(aj::CodeHolder& code, const vm::Function& fn, uint32_t loop_id, const CallTargets& calls)
      : as_(&code), fn_(fn), loop_(fn.loops[loop_id]), loop_id_(loop_id), calls_(calls) {
    text_slot_.assign(fn.stack_need + 1u, false);
    for (uint16_t t : fn.text_slots)
      if (t < text_slot_.size()) text_slot_[t] = true;
  }

  bool build(std::string& error, LoopCodeInfo* info);

 private:
  A::Assembler as_;
  const vm::Function& fn_;
  const vm::LoopInfo& loop_;
  int64_t loop_id_;
  CallTargets calls_;
  std::vector<bool> in_region_;
  std::vector<Home> home_;
  std::vector<uint32_t> gp_slots_, fp_slots_;  // pinned, by register
  std::vector<aj::Label> labels_[2];  // per pc of the loop, per version (1: lists known plain or narrow)
  int version_ = 0;                   // the version being emitted
  // version 1: what a list slot's list is known to be (checked at entry); kAssumeMixed when the
  // loop's instructions expect both kinds of it, which assumes nothing
  enum : uint8_t { kAssumeNone, kAssumePlain, kAssumeNarrow, kAssumeMixed };
  std::vector<uint8_t> assume_;
  std::map<uint32_t, aj::Label> exits_;
  std::vector<std::function<void()>> cold_;
  aj::Label done_;
  aj::Error failed_ = aj::kErrorOk;
  uint32_t frame_size_ = 0, base_var_ = 0;
  std::vector<std::pair<int, int>> saved_gp_;  // register pairs saved by the prologue
  std::vector<std::pair<int, int>> saved_fp_;
  const rt::EventList::NativeLayout layout_ = rt::EventList::native_layout();
  const vm::IteratorLayout iter_ = vm::iterator_layout();
  std::vector<bool> text_slot_;  // the frame's text slots (Function::text_slots)
  std::vector<bool> row_known_;  // jit::rows_known: the MAP_* instruction reuses the row found before
  uint32_t row_var_ = 0;         // sp offset of the row the last MAP_* instruction found (0: none)
  // Walks native code does without an iterator (plan_walks): by the pc of their ST_ITER, ITER_NEXT
  // and ITER_END, the ST_ITER's pc. walk_var_: the PureNativeWalk in this code's frame (0: none).
  std::map<uint32_t, uint32_t> walk_of_, walk_q_;  // (walk_q_: by ST_ITER, its ITER_NEXT)
  uint32_t walk_var_ = 0, walk_x0_var_ = 0;
  // ST_ITERs that look their rows up themselves once their PureWalkSite is filled: by pc, the
  // site's sp offset (plan_walks: every ST_ITER of the loop is a walk's, and nothing else makes iterators)
  std::map<uint32_t, uint32_t> site_var_;
  static constexpr uint32_t kMaxSites = 4;
  const rt::MemoryMeter::NativeLayout meter_ = rt::MemoryMeter::native_layout();
  static constexpr int32_t kWalkRun = offsetof(PureNativeWalk, run), kWalkLeft = offsetof(PureNativeWalk, run_left),
                           kWalkIp = offsetof(PureNativeWalk, ip), kWalkWidth = offsetof(PureNativeWalk, width),
                           kWalkSite = offsetof(PureNativeWalk, site);
  bool walks(uint32_t pc) const { return walk_of_.count(pc) != 0; }
  // Registers outside the slots' pool (plan_registers), taken from x15 and then the caller-saved
  // end of the pool (x8, x7, ...). The walk's cursor when the loop has one walk (reg_walk_): its
  // run and run_left live in kRun and kLeft while it goes, and in the frame's PureNativeWalk only
  // where code leaves or calls (write_back, call_c; read back by reload and after call_c). While
  // no walk goes (walk ip 0: an iterator, or none), kLeft is 0, so that ITER_NEXT's one test of
  // kLeft sends both the walk's end and an iterator out of line. Cached lists (caches_): in the
  // second version, the count and the rows (a plain list's cells, a narrow list's bytes) of a
  // list slot nothing in the loop writes (jit::written_in) or pushes onto, read at that version's
  // entry and again after everything that could move or resize a list: a push onto any list (two
  // slots may hold one list), pure_step, a call into C.
  bool reg_walk_ = false;
  const A::Gp kRun = A::x15, kLeft = A::x8;
  struct Cache {
    uint32_t slot;
    bool narrow;
    A::Gp count, data;
  };
  std::vector<Cache> caches_;
  size_t gp_pinned_ = kGpPinned;     // the slots' pool: x22..x28, then x4 up to this many
  std::vector<bool> cell_needed_;    // per cell of the register walk's rows: loaded (cell_needed)
  const Cache* cache_of(uint32_t s) const {
    if (version_ != 1) return nullptr;
    for (const Cache& c : caches_)
      if (c.slot == s) return &c;
    return nullptr;
  }
  // Whether the register walk's ITER_NEXT loads cell i of its row into its slot: not when no
  // instruction can read that slot before it is written again (read_after; and it holds no text).
  bool cell_needed(const Instr&, uint32_t i) const { return !reg_walk_ || i >= cell_needed_.size() || cell_needed_[i]; }
  // Whether some way from the ITER_NEXT at q on (in the whole function: where native code leaves,
  // the interpreter goes on) may read slot s before an instruction that surely writes it. A run
  // read (ReadRun, a callee's frame, a position) is as long as the op says where it says
  // (ST_ITER's keys, JOIN_TEXT's texts, RET's values), else reaches every slot from its start; a
  // sure write is a Write or WriteRun starting at s of an op that does not jump (ITER_NEXT itself
  // writes no row when it jumps).
  bool read_after(uint32_t q, uint32_t s) const;
  bool is_text(uint32_t s) const { return s < text_slot_.size() && text_slot_[s]; }

  const Instr* at(uint32_t pc) const { return fn_.code.data() + pc; }
  static uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }
  void keep(aj::Error e) {
    if (e && !failed_) failed_ = e;
  }

  // ---- where slots live ----------------------------------------------------------------------

  // The weight of an instruction of the loop: 1, times 8 per level of inner loop it is in.
  uint64_t weight_at(uint32_t pc) const;

  // The registers outside the slots' pool (reg_walk_, caches_: see there) and what is left for
  // slots. `versions2`: the loop gets its second version (plan_plain_version).
  void plan_registers(bool versions2);

  void assign_homes(LoopCodeInfo* info);

  // The key cells ST_ITER reads at C.. (vm/lists.cpp st_iter): a prefix, a range's two bounds, or none.
  static uint32_t st_iter_keys(const Instr& in) { return in.imm > 0 ? static_cast<uint32_t>(in.imm) : in.imm < 0 ? 2 : 0; }

  static A::Gp xreg(int i) { return A::x(static_cast<uint32_t>(i)); }
  static A::Vec dreg(int i) { return A::d(static_cast<uint32_t>(i)); }
  A::Gp gp_home(uint32_t s) const;
  A::Vec fp_home(uint32_t s) const;

  // The frame slot s, as a memory operand (large offsets through x17).
  aj::arm::Mem slot_mem(uint32_t s);
  // Slot s as a general register (its home, or loaded into scratch).
  A::Gp gp_in(uint32_t s, A::Gp scratch);
  A::Vec fp_in(uint32_t s, A::Vec scratch);
  // Where to compute a result for slot s; commit() puts it home.
  A::Gp gp_out(uint32_t s, A::Gp scratch) { return home_[s].kind == Home::Gp ? gp_home(s) : scratch; }
  void gp_commit(uint32_t s, A::Gp r);
  A::Vec fp_out(uint32_t s, A::Vec scratch) { return home_[s].kind == Home::Fp ? fp_home(s) : scratch; }
  void fp_commit(uint32_t s, A::Vec r);

  // The frame in memory made current (before pure_step and at exits), and read back after.
  void write_back();
  // The register walk's cursor into the frame's PureNativeWalk, and back.
  void store_walk();
  void load_walk();
  // The second version's cached lists read again (their slots' values are current). Uses x9.
  void load_caches();
  // write_back() but for slot `skip`, which a runtime call has just written in the frame.
  void write_back_except(uint32_t skip);
  // Slot s read back from the frame into its register, if it has one.
  void reload_slot(uint32_t s);
  // Slot s stored to the frame from its register, if it has one.
  void store_slot(uint32_t s);

  void reload();

  // ---- frame of the native function -----------------------------------------------------------

  void prologue();
  void epilogue();

  // ---- control ------------------------------------------------------------------------------

  // The label control goes to for pc: inside the loop, or an exit that resumes the interpreter
  // there (also used for faults: the interpreter executes the instruction at pc again).
  aj::Label target(uint32_t pc);
  aj::Label leave_at(uint32_t pc);
  // Out of line: `undo` (which restores a register the instruction changed), then leave at pc.
  aj::Label undo_then_leave(uint32_t pc, std::function<void()> undo);
  void next(uint32_t pc) {
    // fall through when the next instruction is emitted right after this one
    if (pc + 1 < in_region_.size() && in_region_[pc + 1]) return;
    keep(as_.b(target(pc + 1)));
  }
  uint32_t jump_target(uint32_t pc) const { return pc + static_cast<uint32_t>(fn_.code[pc].imm); }
  // Conditional branch on flags to the jump target, else the next instruction.
  void branch(CC cc, uint32_t pc) {
    keep(as_.b(cc, target(jump_target(pc))));
    next(pc);
  }

  void call(uint64_t fn) {
    keep(as_.mov(A::x16, fn));
    keep(as_.blr(A::x16));
  }
  // A call into C that touches no frame slot (fmod, the runtime calls): the slots pinned in
  // caller-saved registers are stored before it and loaded after it (its arguments are already in
  // x0..x3 / d0..d1, its result in x0/x1 / d0 is left alone).
  void call_c(uint64_t fn);

  // text_retain (up) or text_release of the text in `t` (x12 or x14; null, or a store text: not
  // counted); a count that reaches zero frees the text through pure_jit_text_free, out of line.
  // Uses w13.
  void count_text(A::Gp t, bool up);

  // One instruction through pure_step: the frame in memory is current around the call.
  void step(uint32_t pc);
  // exactly EventList::push of one cell onto a sequence with room (push_fits): slot A's value
  // (returned: its home register or x12) stored at `count`, count, end and version advanced; no
  // room goes to slow. Uses x10, x11 and x13.
  A::Gp push_cell(const Instr& in, A::Gp l, aj::Label slow);

  // ITER_NEXT at pc with its step spent (x21 >= 0): pure_jit_iter_next_piece, the interpreter's
  // iter_next for a text's pieces (the next piece into slot A, in place when it can be). Slots A
  // (the piece it reuses or releases) and B (the iterator's index) are in the frame for it; A is
  // read back after. 1: on to pc + 1; 3: no more pieces, to IMM; 2: not a text's pieces, to
  // `slow` (which gives the step back and runs pure_step); 0: a fault (the memory budget, after a
  // new piece was put in A): leave with the frame current, A as the call left it.
  void next_piece(uint32_t pc, aj::Label slow);

  // exec_LOOP's step: one spent; below zero, the interpreter's own fault through pure_step out of
  // line (the step given back first, for pure_step spends it again).
  void spend_step(uint32_t pc);

  // The instruction's common case did not apply: run it through pure_step out of line.
  aj::Label slow_path(uint32_t pc);

  // Enters at one of the LOOP / ITER_NEXT instructions of the loop or of a loop nested in it.
  void dispatch(const std::vector<aj::Label>& labels);
  bool entered_at(uint32_t pc) const;  // a head of the loop or of a loop nested in it

  // A second version of the loop that skips the plain check of SEQ_GET/SEQ_SET/SEQ_PUSH (and the
  // narrow check of SEQ_GET/SEQ_SET hinted narrow, IMM 1) is worth it when their lists cannot
  // change while the native code runs: no instruction of the loop runs through pure_step (which
  // may write any slot) or a field runtime call, and none writes the list's slot. Their slow
  // paths then only fault (out of range) or grow the list (SEQ_PUSH), neither of which writes a
  // slot; leaving and re-entering checks again.
  bool plan_plain_version();
  bool known_as(uint32_t s, uint8_t kind) const { return version_ == 1 && s < assume_.size() && assume_[s] == kind; }

  aj::arm::Mem walk_mem(int32_t field) const { return aj::arm::ptr(A::sp, static_cast<int32_t>(walk_var_) + field); }

  // Stored-list loops native code walks itself when the flat form has the prefix (no iterator
  // made and released per walk): an ST_ITER of a one-cell prefix whose slot A, from it until an
  // ITER_END of A, only one ITER_NEXT (of rows of known width) reads, where nothing else makes,
  // reads or counts iterators and the ST_ITER is not reached again. Every way on from it then
  // passes such an ITER_END (which ends the walk) or leaves native code (the epilogue makes the
  // iterator: the interpreter finds what it would have had).
  void plan_walks();

  // ---- instructions -------------------------------------------------------------------------

  // An ITER_NEXT's row of `width` cells at `from` into its slots A.. (from is not one of their
  // registers: x0 or x13).
  void copy_row(const Instr& in, uint32_t width, A::Gp from);

  // ITER_NEXT at pc on an iterator (slot B's), rows of `width` cells expected: the step spent
  // first (subs: below zero, given back out of line before pure_step, which spends it again and
  // faults); every way on from here but the slow one keeps it. inline_next: the next instruction
  // follows (else a branch to it).
  void iter_next_iterator(uint32_t pc, uint32_t width, bool inline_next);

  // The inline lookup of a flat-form site (filled by an earlier pass) that both ST_ITER forms
  // begin with: no site yet or the memory meter over its limit -> call_it; the prefix key (slot
  // key_slot) outside the dense index -> empty; else w10 / w11 are the first row and the end of
  // the key's rows (FlatList::rows_of), x9 their index entry.
  void site_lookup(int32_t site, uint32_t key_slot, aj::Label call_it, aj::Label empty);

  // The ST_ITER of the register walk (reg_walk_): the rows into kRun/kLeft, by the site's own
  // lookup once it is filled (as for a walk in the frame, below in lower()) or through
  // pure_jit_st_iter_rows (its cursor read back by call_c; 2, an iterator in slot A: kLeft 0).
  void st_iter_reg_walk(uint32_t pc);

  void lower(uint32_t pc);
};

}  // namespace pure::jit::a64
