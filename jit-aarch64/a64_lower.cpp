// jit-aarch64/a64_lower.cpp — one loop of bytecode to AArch64 machine code with asmjit's
// a64::Assembler (see README.md for why the Assembler and not the Compiler).
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

// The shared decision (jit-common: shared_lowering), and the int bitwise ops natively here
// (LLVM runs them through pure_step).
Lowering lowering_of(Op op) {
  switch (op) {
    case Op::AND_INT: case Op::OR_INT: case Op::XOR_INT: case Op::BNOT_INT: case Op::SHL_INT: case Op::SHR_INT:
      return Lowering::Native;
    default:
      return shared_lowering(op);
  }
}

CallTargets runtime_call_targets() {
  CallTargets t;
  t.step = reinterpret_cast<uint64_t>(&pure_step);
#define PURE_RUNTIME_CALL(name, result, parameters, memory) t.name = reinterpret_cast<uint64_t>(&pure_jit_##name);
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
  return t;
}

namespace {

// The type a native instruction reads or writes an operand slot as: ir/ops.def's KINDS (Int: a
// general register, Num: a floating-point one, Any: either, None: no slot). ITER_NEXT's row and
// ST_ITER's key cells are this lowering's own (assign_homes).
using Use = ir::ValueKind;
struct Uses {
  Use a = Use::None, b = Use::None, c = Use::None;
};
Uses uses_of(Op op) { return {ir::op_kind(op, 0), ir::op_kind(op, 1), ir::op_kind(op, 2)}; }

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

class Lowerer {
 public:
  Lowerer(aj::CodeHolder& code, const vm::Function& fn, uint32_t loop_id, const CallTargets& calls)
      : as_(&code), fn_(fn), loop_(fn.loops[loop_id]), loop_id_(loop_id), calls_(calls) {
    text_slot_.assign(fn.stack_need + 1u, false);
    for (uint16_t t : fn.text_slots)
      if (t < text_slot_.size()) text_slot_[t] = true;
  }

  bool build(std::string& error, LoopCodeInfo* info) {
    const std::vector<Instr>& code = fn_.code;
    in_region_.assign(code.size(), false);
    for (uint32_t b : loop_.blocks)
      for (uint32_t pc = fn_.blocks[b].start_pc; pc < fn_.blocks[b].end_pc; ++pc) in_region_[pc] = true;
    plan_walks();
    int versions = plan_plain_version() ? 2 : 1;
    plan_registers(versions == 2);
    assign_homes(info);
    row_known_ = rows_known(fn_, in_region_);
    for (int v = 0; v < versions; ++v) {
      labels_[v].resize(code.size());
      for (uint32_t pc = 0; pc < code.size(); ++pc)
        if (in_region_[pc]) labels_[v][pc] = as_.newLabel();
    }
    done_ = as_.newLabel();

    prologue();
    // the second version when every list it assumes plain is plain and every list it assumes
    // narrow is narrow (they stay the same lists: no instruction of the loop writes their slots),
    // else the general one
    aj::Label general = as_.newLabel();
    if (versions == 2) {
      for (uint32_t s = 0; s < assume_.size(); ++s) {
        if (assume_[s] != kAssumePlain && assume_[s] != kAssumeNarrow) continue;
        A::Gp l = gp_in(s, A::x9);
        uint32_t flag = assume_[s] == kAssumePlain ? layout_.plain : layout_.narrow;
        keep(as_.ldrb(A::w10, aj::arm::ptr(l, static_cast<int32_t>(flag))));
        keep(as_.cbz(A::w10, general));
      }
      version_ = 1;
      load_caches();
      version_ = 0;
      dispatch(labels_[1]);
    }
    as_.bind(general);
    dispatch(labels_[0]);

    for (int v = versions - 1; v >= 0; --v) {
      version_ = v;
      for (uint32_t pc = 0; pc < code.size(); ++pc)
        if (in_region_[pc]) {
          as_.bind(labels_[v][pc]);
          lower(pc);
        }
    }
    // cold code: exits, budget and slow paths
    for (size_t i = 0; i < cold_.size(); ++i) {
      std::function<void()> emit = std::move(cold_[i]);  // (it may add more)
      emit();
    }
    for (auto& [pc, label] : exits_) {
      as_.bind(label);
      write_back();
      as_.mov(A::x0, addr(at(pc)));
      as_.b(done_);
    }
    epilogue();
    if (failed_) {
      error = "asmjit: " + std::string(aj::DebugUtils::errorAsString(failed_));
      return false;
    }
    return true;
  }

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
  bool read_after(uint32_t q, uint32_t s) const {
    const std::vector<Instr>& code = fn_.code;
    std::vector<bool> seen(code.size() + 1, false);
    std::vector<uint32_t> todo = {q + 1, jump_target(q)};
    while (!todo.empty()) {
      uint32_t pc = todo.back();
      todo.pop_back();
      if (pc >= code.size() || seen[pc]) continue;
      seen[pc] = true;
      const Instr& in = code[pc];
      const uint16_t operands[3] = {in.a, in.b, in.c};
      bool killed = false;
      for (int i = 0; i < 3; ++i) {
        const uint32_t t = operands[i];
        switch (ir::op_mode(in.op, i)) {
          case ir::OperandMode::Read: case ir::OperandMode::Modify:
            if (t == s) return true;
            break;
          case ir::OperandMode::ReadRun: case ir::OperandMode::Frame: case ir::OperandMode::Position: {
            uint64_t end = UINT64_MAX;
            if (in.op == Op::ST_ITER && i == 2) end = t + st_iter_keys(in);
            if ((in.op == Op::JOIN_TEXT || in.op == Op::RET) && i == 1) end = t + in.c;
            if (t <= s && s < end) return true;
            break;
          }
          case ir::OperandMode::Write: case ir::OperandMode::WriteRun:
            if (t == s && !ir::op_jumps(in.op)) killed = true;
            break;
          default: break;
        }
      }
      if (killed) continue;
      if (ir::op_jumps(in.op)) todo.push_back(jump_target(pc));
      if (!ir::op_ends_block(in.op)) todo.push_back(pc + 1);
    }
    return false;
  }
  bool is_text(uint32_t s) const { return s < text_slot_.size() && text_slot_[s]; }

  const Instr* at(uint32_t pc) const { return fn_.code.data() + pc; }
  static uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }
  void keep(aj::Error e) {
    if (e && !failed_) failed_ = e;
  }

  // ---- where slots live ----------------------------------------------------------------------

  // The weight of an instruction of the loop: 1, times 8 per level of inner loop it is in.
  uint64_t weight_at(uint32_t pc) const {
    for (uint32_t b : loop_.blocks) {
      const vm::BlockInfo& block = fn_.blocks[b];
      if (pc < block.start_pc || pc >= block.end_pc) continue;
      uint32_t depth = block.loop >= 0 ? fn_.loops[static_cast<size_t>(block.loop)].depth : 1;
      uint64_t w = 1;
      for (uint32_t d = loop_.depth; d < depth && w < (1u << 24); ++d) w *= 8;
      return w;
    }
    return 1;
  }

  // The registers outside the slots' pool (reg_walk_, caches_: see there) and what is left for
  // slots. `versions2`: the loop gets its second version (plan_plain_version).
  void plan_registers(bool versions2) {
    const size_t n = fn_.stack_need + 1u;
    static constexpr int kSpare[] = {15, 8, 7, 6};
    size_t used = 0;
    reg_walk_ = walk_q_.size() == 1;
    if (reg_walk_) {
      used = 2;
      const uint32_t q = walk_q_.begin()->second;
      const Instr& in = fn_.code[q];
      for (uint32_t i = 0; i < iter_row_width(fn_.code, q); ++i)
        cell_needed_.push_back(is_text(in.a + i) || read_after(q, in.a + i));
    }
    if (versions2 && layout_.ok) {
      // the list slot of the most weight whose SEQ_GET/SEQ_SET the second version does in place
      const std::vector<bool> written = written_in(fn_, in_region_);
      std::vector<uint64_t> weight(n, 0);
      std::vector<bool> pushed(n, false);
      for (uint32_t pc = 0; pc < fn_.code.size(); ++pc) {
        if (!in_region_[pc]) continue;
        const Instr& in = fn_.code[pc];
        if (in.op == Op::SEQ_PUSH && in.b < n) pushed[in.b] = true;
        if ((in.op == Op::SEQ_GET || in.op == Op::SEQ_SET) && in.b < n) weight[in.b] += weight_at(pc);
      }
      uint32_t best = UINT32_MAX;
      for (uint32_t s = 0; s < n; ++s) {
        if (!weight[s] || pushed[s] || (s < written.size() && written[s])) continue;
        if (assume_[s] != kAssumePlain && assume_[s] != kAssumeNarrow) continue;
        if (best == UINT32_MAX || weight[s] > weight[best]) best = s;
      }
      if (best != UINT32_MAX && used + 2 <= std::size(kSpare)) {
        caches_.push_back(Cache{best, assume_[best] == kAssumeNarrow, xreg(kSpare[used]), xreg(kSpare[used + 1])});
        used += 2;
      }
    }
    gp_pinned_ = kGpPinned - (used > 0 ? used - 1 : 0);  // (x15 is not one of the pool's)
    // the pool keeps its callee-saved registers, and none it keeps is a spare one taken above
    PURE_ASSERT(gp_pinned_ >= static_cast<size_t>(kGpCallee) && gp_pinned_ <= static_cast<size_t>(kGpPinned));
    for (size_t i = 0; i < used; ++i)
      PURE_ASSERT(kSpare[i] == 15 || gp_reg_of(static_cast<int>(gp_pinned_) - 1) < kSpare[i]);
  }

  void assign_homes(LoopCodeInfo* info) {
    size_t n = fn_.stack_need + 1u;
    home_.assign(n, Home{});
    std::vector<uint64_t> weight(n, 0);
    std::vector<uint8_t> ints(n, 0), nums(n, 0), used(n, 0);
    std::vector<std::pair<uint16_t, uint16_t>> moves;
    for (uint32_t b : loop_.blocks) {
      const vm::BlockInfo& block = fn_.blocks[b];
      uint32_t depth = block.loop >= 0 ? fn_.loops[static_cast<size_t>(block.loop)].depth : 1;
      uint64_t w = 1;
      for (uint32_t d = loop_.depth; d < depth && w < (1u << 24); ++d) w *= 8;  // inner loops run more
      for (uint32_t pc = block.start_pc; pc < block.end_pc; ++pc) {
        const Instr& in = fn_.code[pc];
        if (lowering_of(in.op) != Lowering::Native) continue;
        Uses u = uses_of(in.op);
        auto note = [&](uint16_t s, Use use) {
          if (use == Use::None || s >= n) return;
          used[s] = 1;
          weight[s] += w;
          if (use == Use::Int) ints[s] = 1;
          if (use == Use::Num) nums[s] = 1;
        };
        if (in.op == Op::ITER_NEXT) {
          // reads the iterator's number in B, writes the row's cells to A.. (any type); the
          // register walk's reads neither B nor the cells no instruction reads
          bool reg = reg_walk_ && walks(pc);
          if (!reg) note(in.b, Use::Int);
          for (uint32_t i = 0; i < iter_row_width(fn_.code, pc); ++i)
            if (!reg || cell_needed(in, i)) note(static_cast<uint16_t>(in.a + i), Use::Any);
          continue;
        }
        if (in.op == Op::ST_ITER) {
          // writes the iterator's number to A (the register walk's only out of line), reads the
          // key cells C.. (any type)
          if (!(reg_walk_ && walks(pc))) note(in.a, Use::Int);
          for (uint32_t i = 0; i < st_iter_keys(in); ++i) note(static_cast<uint16_t>(in.c + i), Use::Any);
          continue;
        }
        note(in.a, u.a);
        if ((in.op == Op::SEQ_GET || in.op == Op::SEQ_SET) && !caches_.empty() && in.b == caches_[0].slot) {
          // a cached list: its slot is read only by the first version and to fill the cache (a
          // register only if one is left)
          used[in.b] = 1;
          ints[in.b] = 1;
        } else {
          note(in.b, u.b);
        }
        note(in.c, u.c);
        if (in.op == Op::MOVE || in.op == Op::TAKE) moves.push_back({in.a, in.b});
      }
    }
    // a slot only moved takes the type of what it is moved from or to
    for (int round = 0; round < 3; ++round)
      for (auto [x, y] : moves) {
        if (!ints[x] && !nums[x]) ints[x] = ints[y], nums[x] = nums[y];
        if (!ints[y] && !nums[y]) ints[y] = ints[x], nums[y] = nums[x];
      }
    std::vector<uint32_t> order;
    for (uint32_t s = 0; s < n; ++s)
      if (used[s]) order.push_back(s);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return weight[x] > weight[y]; });
    uint32_t memory = 0;
    for (uint32_t s : order) {
      bool num = nums[s] && !ints[s], gp = !nums[s];
      if (num && fp_slots_.size() < kFpPinned) {
        home_[s] = Home{Home::Fp, static_cast<uint8_t>(fp_slots_.size())};
        fp_slots_.push_back(s);
      } else if (gp && gp_slots_.size() < gp_pinned_) {
        home_[s] = Home{Home::Gp, static_cast<uint8_t>(gp_slots_.size())};
        gp_slots_.push_back(s);
      } else {
        ++memory;
      }
    }
    // every pinned slot's home is its place in gp_slots_ / fp_slots_, within the pool
    PURE_ASSERT(gp_slots_.size() <= gp_pinned_ && fp_slots_.size() <= static_cast<size_t>(kFpPinned));
    for (size_t i = 0; i < gp_slots_.size(); ++i) PURE_ASSERT(home_[gp_slots_[i]].kind == Home::Gp && home_[gp_slots_[i]].reg == i);
    for (size_t i = 0; i < fp_slots_.size(); ++i) PURE_ASSERT(home_[fp_slots_[i]].kind == Home::Fp && home_[fp_slots_[i]].reg == i);
    if (info) *info = LoopCodeInfo{static_cast<uint32_t>(gp_slots_.size()), static_cast<uint32_t>(fp_slots_.size()), memory};
  }

  // The key cells ST_ITER reads at C.. (vm/lists.cpp st_iter): a prefix, a range's two bounds, or none.
  static uint32_t st_iter_keys(const Instr& in) { return in.imm > 0 ? static_cast<uint32_t>(in.imm) : in.imm < 0 ? 2 : 0; }

  static A::Gp xreg(int i) { return A::x(static_cast<uint32_t>(i)); }
  static A::Vec dreg(int i) { return A::d(static_cast<uint32_t>(i)); }
  A::Gp gp_home(uint32_t s) const {
    PURE_ASSERT(s < home_.size() && home_[s].kind == Home::Gp && home_[s].reg < gp_pinned_);
    return xreg(gp_reg_of(home_[s].reg));
  }
  A::Vec fp_home(uint32_t s) const {
    PURE_ASSERT(s < home_.size() && home_[s].kind == Home::Fp && home_[s].reg < kFpPinned);
    return dreg(fp_reg_of(home_[s].reg));
  }

  // The frame slot s, as a memory operand (large offsets through x17).
  aj::arm::Mem slot_mem(uint32_t s) {
    uint32_t off = s * 8u;
    if (off <= 32760) return aj::arm::ptr(kBase, static_cast<int32_t>(off));
    keep(as_.mov(A::x17, off));
    return aj::arm::ptr(kBase, A::x17);
  }
  // Slot s as a general register (its home, or loaded into scratch).
  A::Gp gp_in(uint32_t s, A::Gp scratch) {
    switch (home_[s].kind) {
      case Home::Gp: return gp_home(s);
      case Home::Fp: keep(as_.fmov(scratch, fp_home(s))); return scratch;
      default: keep(as_.ldr(scratch, slot_mem(s))); return scratch;
    }
  }
  A::Vec fp_in(uint32_t s, A::Vec scratch) {
    switch (home_[s].kind) {
      case Home::Fp: return fp_home(s);
      case Home::Gp: keep(as_.fmov(scratch, gp_home(s))); return scratch;
      default: keep(as_.ldr(scratch, slot_mem(s))); return scratch;
    }
  }
  // Where to compute a result for slot s; commit() puts it home.
  A::Gp gp_out(uint32_t s, A::Gp scratch) { return home_[s].kind == Home::Gp ? gp_home(s) : scratch; }
  void gp_commit(uint32_t s, A::Gp r) {
    switch (home_[s].kind) {
      case Home::Gp: if (r.id() != gp_home(s).id()) keep(as_.mov(gp_home(s), r)); return;
      case Home::Fp: keep(as_.fmov(fp_home(s), r)); return;
      default: keep(as_.str(r, slot_mem(s))); return;
    }
  }
  A::Vec fp_out(uint32_t s, A::Vec scratch) { return home_[s].kind == Home::Fp ? fp_home(s) : scratch; }
  void fp_commit(uint32_t s, A::Vec r) {
    switch (home_[s].kind) {
      case Home::Fp: if (r.id() != fp_home(s).id()) keep(as_.fmov(fp_home(s), r)); return;
      case Home::Gp: keep(as_.fmov(gp_home(s), r)); return;
      default: keep(as_.str(r, slot_mem(s))); return;
    }
  }

  // The frame in memory made current (before pure_step and at exits), and read back after.
  void write_back() {
    keep(as_.str(kSteps, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreStepsLeft))));
    for (uint32_t s : gp_slots_) keep(as_.str(gp_home(s), slot_mem(s)));
    for (uint32_t s : fp_slots_) keep(as_.str(fp_home(s), slot_mem(s)));
    store_walk();
  }
  // The register walk's cursor into the frame's PureNativeWalk, and back.
  void store_walk() {
    if (reg_walk_) keep(as_.stp(kRun, kLeft, walk_mem(kWalkRun)));
  }
  void load_walk() {
    if (reg_walk_) keep(as_.ldp(kRun, kLeft, walk_mem(kWalkRun)));
  }
  // The second version's cached lists read again (their slots' values are current). Uses x9.
  void load_caches() {
    if (version_ != 1) return;
    for (const Cache& c : caches_) {
      A::Gp l = gp_in(c.slot, A::x9);
      keep(as_.ldr(c.count, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
      keep(as_.ldr(c.data, aj::arm::ptr(l, static_cast<int32_t>(c.narrow ? layout_.bytes : layout_.begin))));
    }
  }
  // write_back() but for slot `skip`, which a runtime call has just written in the frame.
  void write_back_except(uint32_t skip) {
    keep(as_.str(kSteps, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreStepsLeft))));
    for (uint32_t s : gp_slots_)
      if (s != skip) keep(as_.str(gp_home(s), slot_mem(s)));
    for (uint32_t s : fp_slots_)
      if (s != skip) keep(as_.str(fp_home(s), slot_mem(s)));
    store_walk();
  }
  // Slot s read back from the frame into its register, if it has one.
  void reload_slot(uint32_t s) {
    if (home_[s].kind == Home::Gp) keep(as_.ldr(gp_home(s), slot_mem(s)));
    else if (home_[s].kind == Home::Fp) keep(as_.ldr(fp_home(s), slot_mem(s)));
  }
  // Slot s stored to the frame from its register, if it has one.
  void store_slot(uint32_t s) {
    if (home_[s].kind == Home::Gp) keep(as_.str(gp_home(s), slot_mem(s)));
    else if (home_[s].kind == Home::Fp) keep(as_.str(fp_home(s), slot_mem(s)));
  }

  void reload() {
    keep(as_.ldr(kSteps, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreStepsLeft))));
    for (uint32_t s : gp_slots_) keep(as_.ldr(gp_home(s), slot_mem(s)));
    for (uint32_t s : fp_slots_) keep(as_.ldr(fp_home(s), slot_mem(s)));
    load_walk();
    load_caches();
  }

  // ---- frame of the native function -----------------------------------------------------------

  void prologue() {
    // callee-saved registers this code uses: x19..x21 always, x22.. and d8.. as pinned
    std::vector<int> gp = {19, 20, 21};
    for (size_t i = 0; i < gp_slots_.size() && i < kGpCallee; ++i) gp.push_back(22 + static_cast<int>(i));
    if (gp.size() % 2) gp.push_back(gp.back() + 1 <= 28 ? gp.back() + 1 : 18);
    for (size_t i = 0; i < gp.size(); i += 2) saved_gp_.push_back({gp[i], gp[i + 1]});
    std::vector<int> fp;
    for (size_t i = 0; i < fp_slots_.size() && i < kFpCallee; ++i) fp.push_back(8 + static_cast<int>(i));
    if (fp.size() % 2) fp.push_back(fp.back() + 1);
    for (size_t i = 0; i < fp.size(); i += 2) saved_fp_.push_back({fp[i], fp[i + 1]});
    base_var_ = 16 + 16 * static_cast<uint32_t>(saved_gp_.size() + saved_fp_.size());
    row_var_ = base_var_ + 8;
    frame_size_ = base_var_ + 16;
    if (!walk_of_.empty()) {
      static_assert(sizeof(PureNativeWalk) == 40 && offsetof(PureNativeWalk, run_left) == offsetof(PureNativeWalk, run) + 8);
      walk_var_ = frame_size_;
      walk_x0_var_ = frame_size_ + 40;
      frame_size_ += 48;
      static_assert(sizeof(PureWalkSite) == 64 && offsetof(PureWalkSite, starts) == 0 && offsetof(PureWalkSite, meter) == 8 &&
                    offsetof(PureWalkSite, span) == offsetof(PureWalkSite, base) + 8 &&
                    offsetof(PureWalkSite, row_bytes) == offsetof(PureWalkSite, rows) + 8);
      for (auto& [pc, var] : site_var_) {
        var = frame_size_;
        frame_size_ += 64;
      }
    }
    keep(as_.stp(A::x29, A::x30, aj::arm::ptr_pre(A::sp, -static_cast<int32_t>(frame_size_))));
    keep(as_.mov(A::x29, A::sp));
    int32_t off = 16;
    for (auto [r1, r2] : saved_gp_) keep(as_.stp(xreg(r1), xreg(r2), aj::arm::ptr(A::sp, off))), off += 16;
    for (auto [r1, r2] : saved_fp_) keep(as_.stp(dreg(r1), dreg(r2), aj::arm::ptr(A::sp, off))), off += 16;
    keep(as_.str(A::x1, aj::arm::ptr(A::sp, static_cast<int32_t>(base_var_))));  // pure_step's Slot**
    keep(as_.str(A::xzr, aj::arm::ptr(A::sp, static_cast<int32_t>(row_var_))));  // no row known
    if (walk_var_) keep(as_.str(A::xzr, walk_mem(kWalkIp)));  // no walk
    if (walk_var_) keep(as_.str(A::xzr, walk_mem(kWalkSite)));
    if (reg_walk_) keep(as_.stp(A::xzr, A::xzr, walk_mem(kWalkRun)));  // kLeft 0 while no walk goes
    for (auto& [pc, var] : site_var_) keep(as_.str(A::xzr, aj::arm::ptr(A::sp, static_cast<int32_t>(var))));  // no lookup yet
    keep(as_.mov(kCore, A::x0));
    keep(as_.mov(kBase, A::x1));
    reload();
  }
  void epilogue() {
    as_.bind(done_);
    if (walk_var_) {
      // leaving in the middle of a walk (an exit, a fault, pure_step going on elsewhere): the
      // interpreter gets the iterator it would have had (the frame is current: every way here
      // writes it back first)
      aj::Label none = as_.newLabel();
      keep(as_.ldr(A::x9, walk_mem(kWalkIp)));
      keep(as_.cbz(A::x9, none));
      keep(as_.str(A::x0, aj::arm::ptr(A::sp, static_cast<int32_t>(walk_x0_var_))));
      keep(as_.mov(A::x0, kCore));
      keep(as_.mov(A::x1, kBase));
      keep(as_.add(A::x2, A::sp, walk_var_));
      call(calls_.walk_materialize);
      keep(as_.ldr(A::x0, aj::arm::ptr(A::sp, static_cast<int32_t>(walk_x0_var_))));
      as_.bind(none);
    }
    int32_t off = 16;
    for (auto [r1, r2] : saved_gp_) keep(as_.ldp(xreg(r1), xreg(r2), aj::arm::ptr(A::sp, off))), off += 16;
    for (auto [r1, r2] : saved_fp_) keep(as_.ldp(dreg(r1), dreg(r2), aj::arm::ptr(A::sp, off))), off += 16;
    keep(as_.ldp(A::x29, A::x30, aj::arm::ptr_post(A::sp, static_cast<int32_t>(frame_size_))));
    keep(as_.ret(A::x30));
  }

  // ---- control ------------------------------------------------------------------------------

  // The label control goes to for pc: inside the loop, or an exit that resumes the interpreter
  // there (also used for faults: the interpreter executes the instruction at pc again).
  aj::Label target(uint32_t pc) {
    if (pc < in_region_.size() && in_region_[pc]) return labels_[version_][pc];
    auto it = exits_.find(pc);
    if (it != exits_.end()) return it->second;
    aj::Label l = as_.newLabel();
    exits_.emplace(pc, l);
    return l;
  }
  aj::Label leave_at(uint32_t pc) {
    auto it = exits_.find(pc);
    if (it != exits_.end()) return it->second;
    aj::Label l = as_.newLabel();
    exits_.emplace(pc, l);
    return l;
  }
  // Out of line: `undo` (which restores a register the instruction changed), then leave at pc.
  aj::Label undo_then_leave(uint32_t pc, std::function<void()> undo) {
    aj::Label l = as_.newLabel();
    cold_.push_back([this, l, pc, undo] {
      as_.bind(l);
      undo();
      keep(as_.b(leave_at(pc)));
    });
    return l;
  }
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
  void call_c(uint64_t fn) {
    for (size_t i = kGpCallee; i < gp_slots_.size(); ++i) keep(as_.str(gp_home(gp_slots_[i]), slot_mem(gp_slots_[i])));
    for (size_t i = kFpCallee; i < fp_slots_.size(); ++i) keep(as_.str(fp_home(fp_slots_[i]), slot_mem(fp_slots_[i])));
    store_walk();
    call(fn);
    for (size_t i = kGpCallee; i < gp_slots_.size(); ++i) keep(as_.ldr(gp_home(gp_slots_[i]), slot_mem(gp_slots_[i])));
    for (size_t i = kFpCallee; i < fp_slots_.size(); ++i) keep(as_.ldr(fp_home(fp_slots_[i]), slot_mem(fp_slots_[i])));
    load_walk();  // (pure_jit_st_iter_rows writes the walk it is given: its new cursor)
    load_caches();  // (caller-saved registers; x0/x1, the result, kept)
  }

  // text_retain (up) or text_release of the text in `t` (x12 or x14; null, or a store text: not
  // counted); a count that reaches zero frees the text through pure_jit_text_free, out of line.
  // Uses w13.
  void count_text(A::Gp t, bool up) {
    aj::Label done = as_.newLabel();
    keep(as_.cbz(t, done));
    keep(as_.ldrh(A::w13, aj::arm::ptr(t, static_cast<int32_t>(layout_.text_flags))));
    keep(as_.tst(A::w13, 1));  // kTextStored
    keep(as_.b(CC::kNE, done));
    keep(as_.ldr(A::w13, aj::arm::ptr(t, static_cast<int32_t>(layout_.text_rc))));
    if (up) {
      keep(as_.add(A::w13, A::w13, 1));
      keep(as_.str(A::w13, aj::arm::ptr(t, static_cast<int32_t>(layout_.text_rc))));
    } else {
      aj::Label gone = as_.newLabel();
      keep(as_.subs(A::w13, A::w13, 1));
      keep(as_.str(A::w13, aj::arm::ptr(t, static_cast<int32_t>(layout_.text_rc))));
      keep(as_.b(CC::kEQ, gone));
      cold_.push_back([this, gone, done, t] {
        as_.bind(gone);
        keep(as_.mov(A::x0, t));
        call_c(calls_.text_free);
        keep(as_.b(done));
      });
    }
    as_.bind(done);
  }

  // One instruction through pure_step: the frame in memory is current around the call.
  void step(uint32_t pc) {
    const Instr& in = fn_.code[pc];
    write_back();
    keep(as_.mov(A::x0, kCore));
    keep(as_.add(A::x1, A::sp, base_var_));
    keep(as_.mov(A::x2, addr(&in)));
    call(calls_.step);
    keep(as_.mov(A::x9, addr(vm::kFaulted)));
    keep(as_.cmp(A::x0, A::x9));
    keep(as_.b(CC::kEQ, done_));  // the fault is kept in the VM; the frame is current
    reload();
    keep(as_.mov(A::x9, addr(at(pc + 1))));
    keep(as_.cmp(A::x0, A::x9));
    keep(as_.b(CC::kEQ, target(pc + 1)));
    if (ir::op_jumps(in.op) && in.imm != 1) {
      keep(as_.mov(A::x9, addr(at(jump_target(pc)))));
      keep(as_.cmp(A::x0, A::x9));
      keep(as_.b(CC::kEQ, target(jump_target(pc))));
    }
    keep(as_.b(done_));  // elsewhere: the frame is current, resume there
  }
  // exactly EventList::push of one cell onto a sequence with room (push_fits): slot A's value
  // (returned: its home register or x12) stored at `count`, count, end and version advanced; no
  // room goes to slow. Uses x10, x11 and x13.
  A::Gp push_cell(const Instr& in, A::Gp l, aj::Label slow) {
    const A::Gp s2 = A::x10, s3 = A::x11;
    keep(as_.ldr(s2, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
    keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.cap_rows))));
    keep(as_.cmp(s2, s3));
    keep(as_.b(CC::kGE, slow));
    keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.begin))));
    A::Gp v = gp_in(in.a, A::x12);
    keep(as_.str(v, aj::arm::ptr(s3, s2, aj::arm::lsl(3))));
    keep(as_.add(s2, s2, 1));
    keep(as_.str(s2, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
    keep(as_.add(s3, s3, s2, aj::arm::lsl(3)));
    keep(as_.str(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.end))));
    keep(as_.ldr(A::x13, aj::arm::ptr(l, static_cast<int32_t>(layout_.version))));
    keep(as_.add(A::x13, A::x13, 1));
    keep(as_.str(A::x13, aj::arm::ptr(l, static_cast<int32_t>(layout_.version))));
    return v;
  }

  // ITER_NEXT at pc with its step spent (x21 >= 0): pure_jit_iter_next_piece, the interpreter's
  // iter_next for a text's pieces (the next piece into slot A, in place when it can be). Slots A
  // (the piece it reuses or releases) and B (the iterator's index) are in the frame for it; A is
  // read back after. 1: on to pc + 1; 3: no more pieces, to IMM; 2: not a text's pieces, to
  // `slow` (which gives the step back and runs pure_step); 0: a fault (the memory budget, after a
  // new piece was put in A): leave with the frame current, A as the call left it.
  void next_piece(uint32_t pc, aj::Label slow) {
    const Instr& in = fn_.code[pc];
    aj::Label faulted = as_.newLabel();
    store_slot(in.a);
    store_slot(in.b);
    keep(as_.mov(A::x0, kCore));
    keep(as_.mov(A::x1, kBase));
    keep(as_.mov(A::x2, addr(&in)));
    call_c(calls_.iter_next_piece);
    keep(as_.cbz(A::x0, faulted));
    keep(as_.cmp(A::x0, 2));
    keep(as_.b(CC::kEQ, slow));
    reload_slot(in.a);
    keep(as_.cmp(A::x0, 3));
    keep(as_.b(CC::kEQ, target(jump_target(pc))));
    keep(as_.b(target(pc + 1)));
    cold_.push_back([this, faulted, a = in.a] {
      as_.bind(faulted);
      write_back_except(a);
      keep(as_.mov(A::x0, addr(vm::kFaulted)));
      keep(as_.b(done_));
    });
  }

  // exec_LOOP's step: one spent; below zero, the interpreter's own fault through pure_step out of
  // line (the step given back first, for pure_step spends it again).
  void spend_step(uint32_t pc) {
    aj::Label spent = as_.newLabel();
    keep(as_.subs(kSteps, kSteps, 1));
    keep(as_.b(CC::kLT, spent));
    cold_.push_back([this, spent, pc] {
      as_.bind(spent);
      keep(as_.add(kSteps, kSteps, 1));
      write_back();
      keep(as_.mov(A::x0, kCore));
      keep(as_.add(A::x1, A::sp, base_var_));
      keep(as_.mov(A::x2, addr(at(pc))));
      call(calls_.step);
      keep(as_.b(done_));  // kFaulted (or, if the budget was refilled meanwhile, where to go on)
    });
  }

  // The instruction's common case did not apply: run it through pure_step out of line.
  aj::Label slow_path(uint32_t pc) {
    aj::Label l = as_.newLabel();
    cold_.push_back([this, l, pc, v = version_] {
      as_.bind(l);
      version_ = v;  // goes on in the version it came from
      step(pc);
    });
    return l;
  }

  // Enters at one of the loop's LOOP / ITER_NEXT instructions.
  void dispatch(const std::vector<aj::Label>& labels) {
    for (uint32_t pc = 0; pc < fn_.code.size(); ++pc) {
      if (!in_region_[pc]) continue;
      const Instr& in = fn_.code[pc];
      if (!vm::heads_loop(fn_, in, static_cast<uint32_t>(loop_id_))) continue;
      keep(as_.mov(A::x9, addr(at(pc))));
      keep(as_.cmp(A::x2, A::x9));
      keep(as_.b(CC::kEQ, labels[pc]));
    }
    keep(as_.mov(A::x0, A::x2));  // never taken: the interpreter enters only at those
    keep(as_.b(done_));
  }

  // A second version of the loop that skips the plain check of SEQ_GET/SEQ_SET/SEQ_PUSH (and the
  // narrow check of SEQ_GET/SEQ_SET hinted narrow, IMM 1) is worth it when their lists cannot
  // change while the native code runs: no instruction of the loop runs through pure_step (which
  // may write any slot) or a field runtime call, and none writes the list's slot. Their slow
  // paths then only fault (out of range) or grow the list (SEQ_PUSH), neither of which writes a
  // slot; leaving and re-entering checks again.
  bool plan_plain_version() {
    size_t n = fn_.stack_need + 1u;
    assume_.assign(n, kAssumeNone);
    if (!layout_.ok) return false;
    std::vector<bool> written(n, false);
    std::vector<std::pair<uint16_t, uint8_t>> lists;  // slot, what the instruction expects
    for (uint32_t pc = 0; pc < fn_.code.size(); ++pc) {
      if (!in_region_[pc]) continue;
      const Instr& in = fn_.code[pc];
      Lowering how = lowering_of(in.op);
      if (how == Lowering::Step || in.op == Op::SEQ_GET_FIELD || in.op == Op::SEQ_SET_FIELD ||
          in.op == Op::MAP_ENSURE || in.op == Op::MAP_GET_FIELD || in.op == Op::MAP_SET_FIELD || in.op == Op::INT_TEXT ||
          ((in.op == Op::SEQ_GET || in.op == Op::SEQ_PUSH) && is_text(in.a)))
        return false;
      if (how != Lowering::Native) continue;
      // The stored-list loop's instructions write only their own slots: ST_ITER the iterator's
      // number in A (pure_jit_st_iter), ITER_NEXT the row's cells A.. (inline, refilled, or
      // through pure_step, which writes those same slots: jit::iter_row_width), ITER_END none.
      if (in.op == Op::ITER_NEXT) {
        uint32_t width = iter_row_width(fn_.code, pc);
        if (!width) return false;  // all of it through pure_step
        for (uint32_t i = 0; i < width; ++i)
          if (in.a + i < n) written[in.a + i] = true;
        continue;
      }
      if (in.op == Op::ST_ITER) {
        if (in.a < n) written[in.a] = true;
        continue;
      }
      if (in.op == Op::ITER_END) continue;
      bool writes_a = uses_of(in.op).a != Use::None && in.op != Op::SEQ_SET && in.op != Op::SEQ_PUSH;
      if (writes_a && in.a < n) written[in.a] = true;
      if (in.op == Op::TAKE && in.b < n) written[in.b] = true;
      if (in.op == Op::SEQ_GET || in.op == Op::SEQ_SET || in.op == Op::SEQ_PUSH)
        lists.push_back({in.b, in.op != Op::SEQ_PUSH && in.imm == 1 ? kAssumeNarrow : kAssumePlain});
    }
    for (auto [s, kind] : lists)
      if (s < n && !written[s]) assume_[s] = assume_[s] == kAssumeNone || assume_[s] == kind ? kind : uint8_t{kAssumeMixed};
    bool any = false;
    for (uint8_t kind : assume_) any = any || kind == kAssumePlain || kind == kAssumeNarrow;
    return any;
  }
  bool known_as(uint32_t s, uint8_t kind) const { return version_ == 1 && s < assume_.size() && assume_[s] == kind; }

  aj::arm::Mem walk_mem(int32_t field) const { return aj::arm::ptr(A::sp, static_cast<int32_t>(walk_var_) + field); }

  // Stored-list loops native code walks itself when the flat form has the prefix (no iterator
  // made and released per walk): an ST_ITER of a one-cell prefix whose slot A, from it until an
  // ITER_END of A, only one ITER_NEXT (of rows of known width) reads, where nothing else makes,
  // reads or counts iterators and the ST_ITER is not reached again. Every way on from it then
  // passes such an ITER_END (which ends the walk) or leaves native code (the epilogue makes the
  // iterator: the interpreter finds what it would have had).
  void plan_walks() {
    if (!calls_.st_iter_rows || !calls_.walk_materialize) return;
    const std::vector<Instr>& code = fn_.code;
    for (uint32_t p = 0; p < code.size(); ++p) {
      if (!in_region_[p] || code[p].op != Op::ST_ITER || code[p].imm != 1) continue;
      const uint32_t a = code[p].a;
      uint32_t q = UINT32_MAX;
      std::vector<uint32_t> ends, todo = {p + 1};
      std::vector<bool> seen(code.size() + 1, false);
      bool ok = true;
      while (ok && !todo.empty()) {
        uint32_t pc = todo.back();
        todo.pop_back();
        if (pc >= code.size() || seen[pc] || !in_region_[pc]) continue;  // (outside: an exit)
        seen[pc] = true;
        const Instr& in = code[pc];
        if (in.op == Op::ITER_END && in.b == a) {
          ends.push_back(pc);
          continue;
        }
        if (pc == p) ok = false;
        if (in.op == Op::ITER_NEXT && in.b == a && (q == UINT32_MAX || q == pc)) {
          q = pc;
        } else {
          if (in.op == Op::ST_ITER || in.op == Op::LIST_ITER || in.op == Op::SLICE_ITER || in.op == Op::ITER_NEXT ||
              in.op == Op::ITER_END)
            ok = false;
          for (int i = 0; i < 3; ++i)
            if (ir::op_is_slot(in.op, i) && (i == 0 ? in.a : i == 1 ? in.b : in.c) == a) ok = false;
        }
        if (lowering_of(in.op) == Lowering::Exit) continue;  // native code leaves there
        if (ir::op_jumps(in.op)) todo.push_back(jump_target(pc));
        if (!ir::op_ends_block(in.op)) todo.push_back(pc + 1);
      }
      if (!ok || q == UINT32_MAX || ends.empty() || !iter_row_width(code, q)) continue;
      walk_q_[p] = q;
      walk_of_[p] = p;
      walk_of_[q] = p;
      for (uint32_t r : ends) walk_of_[r] = p;
    }
    // The iterator stack is as deep at every pass of a walk's ST_ITER when the loop makes no
    // iterator but its walks' (a walk's range holds no ST_ITER, and a walk that got a real
    // iterator releases it at its ITER_END): st_iter's room check then answers the same each
    // time, and a site's lookup stays valid while this code runs.
    bool only_walks = !walk_q_.empty() && walk_q_.size() <= kMaxSites;
    for (uint32_t pc = 0; pc < code.size() && only_walks; ++pc) {
      if (!in_region_[pc]) continue;
      Op op = code[pc].op;
      if (op == Op::LIST_ITER || op == Op::SLICE_ITER || (op == Op::ST_ITER && !walk_q_.count(pc))) only_walks = false;
    }
    if (only_walks)
      for (auto& [p, q] : walk_q_) site_var_[p] = 0;
  }

  // ---- instructions -------------------------------------------------------------------------

  // An ITER_NEXT's row of `width` cells at `from` into its slots A.. (from is not one of their
  // registers: x0 or x13).
  void copy_row(const Instr& in, uint32_t width, A::Gp from) {
    for (uint32_t i = 0; i < width; ++i) {
      uint32_t slot = in.a + i;
      aj::arm::Mem cell = aj::arm::ptr(from, static_cast<int32_t>(8 * i));
      if (home_[slot].kind == Home::Fp) {
        keep(as_.ldr(fp_home(slot), cell));
      } else {
        A::Gp r = gp_out(slot, A::x14);
        keep(as_.ldr(r, cell));
        gp_commit(slot, r);
      }
    }
  }

  // ITER_NEXT at pc on an iterator (slot B's), rows of `width` cells expected: the step spent
  // first (subs: below zero, given back out of line before pure_step, which spends it again and
  // faults); every way on from here but the slow one keeps it. inline_next: the next instruction
  // follows (else a branch to it).
  void iter_next_iterator(uint32_t pc, uint32_t width, bool inline_next) {
    const Instr& in = fn_.code[pc];
    const A::Gp s1 = A::x9, s2 = A::x10, s3 = A::x11;
    aj::Label slow = as_.newLabel();
    cold_.push_back([this, slow, pc, v = version_] {
      as_.bind(slow);
      version_ = v;
      keep(as_.add(kSteps, kSteps, 1));
      step(pc);
    });
    // another width (a text's pieces have none): with the step spent, pure_jit_iter_next_piece
    // if there is one to call, else the slow path
    aj::Label other = slow;
    if (calls_.iter_next_piece) {
      other = as_.newLabel();
      cold_.push_back([this, other, slow, pc, v = version_] {
        as_.bind(other);
        version_ = v;
        next_piece(pc, slow);
      });
    }
    aj::Label refill = as_.newLabel();
    keep(as_.ldr(s1, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreIters))));
    A::Gp index = gp_in(in.b, s2);
    if ((iter_.size & (iter_.size - 1)) == 0) {
      keep(as_.add(s1, s1, index, aj::arm::lsl(static_cast<uint32_t>(__builtin_ctz(iter_.size)))));  // the iterator
    } else {
      keep(as_.mov(s3, static_cast<uint64_t>(iter_.size)));
      keep(as_.mul(s3, index, s3));
      keep(as_.add(s1, s1, s3));  // the iterator
    }
    keep(as_.subs(kSteps, kSteps, 1));
    keep(as_.b(CC::kLT, slow));
    // run and run_left side by side: one ldp and one stp (x13 = run, x12 = run_left)
    bool pair = iter_.run_left == iter_.run + 8 && iter_.run % 8 == 0 && iter_.run <= 504;
    if (pair) {
      keep(as_.ldp(A::x13, A::x12, aj::arm::ptr(s1, static_cast<int32_t>(iter_.run))));
    } else {
      keep(as_.ldr(A::x12, aj::arm::ptr(s1, static_cast<int32_t>(iter_.run_left))));
    }
    keep(as_.cbz(A::x12, refill));
    keep(as_.ldr(A::w10, aj::arm::ptr(s1, static_cast<int32_t>(iter_.width))));
    keep(as_.cmp(A::w10, width));
    keep(as_.b(CC::kNE, other));
    if (!pair) keep(as_.ldr(A::x13, aj::arm::ptr(s1, static_cast<int32_t>(iter_.run))));
    copy_row(in, width, A::x13);
    keep(as_.add(A::x13, A::x13, 8 * width));
    keep(as_.sub(A::x12, A::x12, 1));
    if (pair) {
      keep(as_.stp(A::x13, A::x12, aj::arm::ptr(s1, static_cast<int32_t>(iter_.run))));
    } else {
      keep(as_.str(A::x13, aj::arm::ptr(s1, static_cast<int32_t>(iter_.run))));
      keep(as_.str(A::x12, aj::arm::ptr(s1, static_cast<int32_t>(iter_.run_left))));
    }
    if (inline_next) next(pc);
    else keep(as_.b(target(pc + 1)));
    cold_.push_back([this, refill, other, pc, width, v = version_] {
      // the run is empty: for an iterator whose rows come in runs of this width (vm/lists.cpp
      // st_iter), the step spent, the next run (x0 = its first row, x1 = 0 when the rows are
      // done; the iterator's run is set for the rest)
      as_.bind(refill);
      version_ = v;
      const Instr& in = fn_.code[pc];
      keep(as_.ldr(A::w13, aj::arm::ptr(A::x9, static_cast<int32_t>(iter_.width))));
      keep(as_.cmp(A::w13, width));
      keep(as_.b(CC::kNE, other));
      // the whole walk was one run (a flat form's prefix): done, as take_leaf_run would say
      keep(as_.ldrb(A::w13, aj::arm::ptr(A::x9, static_cast<int32_t>(iter_.one_run))));
      keep(as_.cbnz(A::w13, target(jump_target(pc))));
      keep(as_.mov(A::x0, A::x9));
      call_c(calls_.iter_refill);
      keep(as_.cbz(A::x1, target(jump_target(pc))));
      copy_row(in, width, A::x0);
      keep(as_.b(target(pc + 1)));
    });
  }

  // The inline lookup of a flat-form site (filled by an earlier pass) that both ST_ITER forms
  // begin with: no site yet or the memory meter over its limit -> call_it; the prefix key (slot
  // key_slot) outside the dense index -> empty; else w10 / w11 are the first row and the end of
  // the key's rows (FlatList::rows_of), x9 their index entry.
  void site_lookup(int32_t site, uint32_t key_slot, aj::Label call_it, aj::Label empty) {
    keep(as_.ldr(A::x9, aj::arm::ptr(A::sp, site)));
    keep(as_.cbz(A::x9, call_it));
    keep(as_.ldr(A::x10, aj::arm::ptr(A::sp, site + 8)));
    keep(as_.ldr(A::x11, aj::arm::ptr(A::x10, static_cast<int32_t>(meter_.limit))));
    keep(as_.ldr(A::x12, aj::arm::ptr(A::x10, static_cast<int32_t>(meter_.used))));
    keep(as_.cmp(A::x12, A::x11));
    keep(as_.b(CC::kGT, call_it));
    A::Gp key = gp_in(key_slot, A::x14);
    keep(as_.ldp(A::x10, A::x11, aj::arm::ptr(A::sp, site + static_cast<int32_t>(offsetof(PureWalkSite, base)))));
    keep(as_.sub(A::x10, key, A::x10));
    keep(as_.cmp(A::x10, A::x11));
    keep(as_.b(CC::kHS, empty));
    keep(as_.add(A::x9, A::x9, A::x10, aj::arm::lsl(2)));
    keep(as_.ldp(A::w10, A::w11, aj::arm::ptr(A::x9)));
  }

  // The ST_ITER of the register walk (reg_walk_): the rows into kRun/kLeft, by the site's own
  // lookup once it is filled (as for a walk in the frame, below in lower()) or through
  // pure_jit_st_iter_rows (its cursor read back by call_c; 2, an iterator in slot A: kLeft 0).
  void st_iter_reg_walk(uint32_t pc) {
    const Instr& in = fn_.code[pc];
    aj::Label faulted = as_.newLabel();
    auto call_rows = [this, pc, faulted] {
      const Instr& in = fn_.code[pc];
      for (uint32_t i = 0; i < st_iter_keys(in); ++i) store_slot(in.c + i);
      keep(as_.mov(A::x0, kCore));
      keep(as_.mov(A::x1, kBase));
      keep(as_.mov(A::x2, addr(&in)));
      keep(as_.mov(A::x3, static_cast<uint64_t>(iter_row_width(fn_.code, walk_q_.at(pc)))));
      keep(as_.str(A::x3, walk_mem(kWalkWidth)));
      keep(as_.add(A::x3, A::sp, walk_var_));
      call_c(calls_.st_iter_rows);
      keep(as_.cbz(A::x0, faulted));
      reload_slot(in.a);
      keep(as_.cmp(A::x0, 2));
      keep(as_.csel(kLeft, A::xzr, kLeft, CC::kEQ));
    };
    cold_.push_back([this, faulted, a = in.a] {
      as_.bind(faulted);
      write_back_except(a);
      keep(as_.mov(A::x0, addr(vm::kFaulted)));
      keep(as_.b(done_));
    });
    if (!site_var_.count(pc)) {
      call_rows();
      return next(pc);
    }
    const uint32_t width = iter_row_width(fn_.code, walk_q_.at(pc));
    const int32_t site = static_cast<int32_t>(site_var_.at(pc));
    aj::Label call_it = as_.newLabel(), empty = as_.newLabel(), begun = as_.newLabel();
    site_lookup(site, in.c, call_it, empty);
    keep(as_.sub(kLeft, A::x11, A::x10));
    // the first row: rows + first * row_bytes, where row_bytes is width cells (pure_jit_st_iter_rows
    // fills the site only for a dense form of the walk's width)
    keep(as_.ldr(A::x13, aj::arm::ptr(A::sp, site + static_cast<int32_t>(offsetof(PureWalkSite, rows)))));
    const uint32_t row_bytes = 8 * width;
    if ((row_bytes & (row_bytes - 1)) == 0) {
      keep(as_.add(kRun, A::x13, A::x10, aj::arm::lsl(static_cast<uint32_t>(__builtin_ctz(row_bytes)))));
    } else {
      keep(as_.mov(A::x12, static_cast<uint64_t>(row_bytes)));
      keep(as_.madd(kRun, A::x10, A::x12, A::x13));
    }
    as_.bind(begun);
    keep(as_.ldr(A::x9, aj::arm::ptr(A::sp, site + static_cast<int32_t>(offsetof(PureWalkSite, ip)))));
    keep(as_.str(A::x9, walk_mem(kWalkIp)));
    next(pc);
    cold_.push_back([this, empty, begun, call_it, call_rows, pc, site, v = version_] {
      version_ = v;
      as_.bind(empty);  // no rows with this key
      keep(as_.mov(kLeft, 0));
      keep(as_.b(begun));
      as_.bind(call_it);
      keep(as_.add(A::x9, A::sp, static_cast<uint32_t>(site)));
      keep(as_.str(A::x9, walk_mem(kWalkSite)));
      call_rows();
      keep(as_.b(target(pc + 1)));
    });
  }

  void lower(uint32_t pc) {
    const Instr& in = fn_.code[pc];
    switch (lowering_of(in.op)) {
      case Lowering::Exit: keep(as_.b(leave_at(pc))); return;
      case Lowering::Step: step(pc); return;
      case Lowering::Native: break;
    }
    const A::Gp s1 = A::x9, s2 = A::x10, s3 = A::x11;
    const A::Vec f1 = A::d16, f2 = A::d17;
    switch (in.op) {
      case Op::CONST: {
        if (home_[in.a].kind == Home::Fp) {
          if (in.imm == 0) keep(as_.fmov(fp_home(in.a), A::xzr));
          else keep(as_.mov(s1, static_cast<uint64_t>(in.imm))), keep(as_.fmov(fp_home(in.a), s1));
          return next(pc);
        }
        A::Gp r = gp_out(in.a, s1);
        keep(as_.mov(r, static_cast<uint64_t>(in.imm)));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::MOVE: case Op::TAKE: {
        if (in.a != in.b) {
          if (home_[in.a].kind == Home::Fp) {
            A::Vec v = fp_in(in.b, f1);
            fp_commit(in.a, v);
          } else {
            A::Gp v = gp_in(in.b, s1);
            gp_commit(in.a, v);
          }
        }
        if (in.op == Op::TAKE) {
          switch (home_[in.b].kind) {
            case Home::Gp: keep(as_.mov(gp_home(in.b), 0)); break;
            case Home::Fp: keep(as_.fmov(fp_home(in.b), A::xzr)); break;
            default: keep(as_.str(A::xzr, slot_mem(in.b))); break;
          }
        }
        return next(pc);
      }
      case Op::ADD_INT: case Op::SUB_INT: {
        A::Gp x = gp_in(in.b, s1), y = gp_in(in.c, s2);
        bool add = in.op == Op::ADD_INT;
        if (home_[in.a].kind == Home::Gp && in.a == in.b && in.a != in.c) {
          // a += c in its register: on overflow the wrapped sum is undone (exactly, modulo 2^64)
          // before leaving, so the interpreter sees the operands it faults on
          A::Gp r = gp_home(in.a);
          keep(add ? as_.adds(r, r, y) : as_.subs(r, r, y));
          keep(as_.b(CC::kVS, undo_then_leave(pc, [this, r, y, add] { keep(add ? as_.sub(r, r, y) : as_.add(r, r, y)); })));
          return next(pc);
        }
        A::Gp r = in.a != in.b && in.a != in.c ? gp_out(in.a, s3) : s3;
        keep(add ? as_.adds(r, x, y) : as_.subs(r, x, y));
        keep(as_.b(CC::kVS, leave_at(pc)));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::ADDI_INT: {
        A::Gp x = gp_in(in.b, s1);
        bool small = in.imm > -4096 && in.imm < 4096;
        if (home_[in.a].kind == Home::Gp && in.a == in.b && small) {
          // a += k in its register, undone on overflow as above
          A::Gp r = gp_home(in.a);
          int64_t k = in.imm;
          keep(k >= 0 ? as_.adds(r, r, k) : as_.subs(r, r, -k));
          keep(as_.b(CC::kVS, undo_then_leave(pc, [this, r, k] { keep(k >= 0 ? as_.sub(r, r, k) : as_.add(r, r, -k)); })));
          return next(pc);
        }
        A::Gp r = in.a != in.b ? gp_out(in.a, s3) : s3;
        if (in.imm >= 0 && in.imm < 4096) keep(as_.adds(r, x, in.imm));
        else if (small) keep(as_.subs(r, x, -in.imm));
        else keep(as_.mov(s2, static_cast<uint64_t>(in.imm))), keep(as_.adds(r, x, s2));
        keep(as_.b(CC::kVS, leave_at(pc)));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::MUL_INT: {
        // the 128-bit product fits in 64 bits when its high half is the sign of its low half
        A::Gp x = gp_in(in.b, s1), y = gp_in(in.c, s2);
        keep(as_.mul(s3, x, y));
        keep(as_.smulh(A::x12, x, y));
        keep(as_.cmp(A::x12, s3, aj::arm::asr(63)));
        keep(as_.b(CC::kNE, leave_at(pc)));
        gp_commit(in.a, s3);
        return next(pc);
      }
      case Op::DIV_INT: case Op::MOD_INT: {
        A::Gp x = gp_in(in.b, s1), y = gp_in(in.c, s2);
        keep(as_.cbz(y, leave_at(pc)));  // division by zero: the interpreter's message
        if (in.op == Op::DIV_INT) {
          // INT64_MIN / -1 overflows (sdiv would give INT64_MIN)
          aj::Label ok = as_.newLabel();
          keep(as_.cmn(y, 1));
          keep(as_.b(CC::kNE, ok));
          keep(as_.mov(s3, static_cast<uint64_t>(INT64_MIN)));
          keep(as_.cmp(x, s3));
          keep(as_.b(CC::kEQ, leave_at(pc)));
          as_.bind(ok);
          A::Gp r = gp_out(in.a, s3);
          keep(as_.sdiv(r, x, y));
          gp_commit(in.a, r);
        } else {
          // x - (x / y) * y; INT64_MIN % -1: sdiv gives INT64_MIN and the msub wraps to 0, as
          // the interpreter's result 0
          keep(as_.sdiv(s3, x, y));
          A::Gp r = gp_out(in.a, A::x12);
          keep(as_.msub(r, s3, y, x));
          gp_commit(in.a, r);
        }
        return next(pc);
      }
      case Op::NEG_INT: {
        A::Gp x = gp_in(in.b, s1);
        A::Gp r = in.a != in.b ? gp_out(in.a, s3) : s3;
        keep(as_.negs(r, x));
        keep(as_.b(CC::kVS, leave_at(pc)));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::AND_INT: case Op::OR_INT: case Op::XOR_INT: {
        A::Gp x = gp_in(in.b, s1), y = gp_in(in.c, s2);
        A::Gp r = gp_out(in.a, s3);
        keep(in.op == Op::AND_INT ? as_.and_(r, x, y) : in.op == Op::OR_INT ? as_.orr(r, x, y) : as_.eor(r, x, y));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::BNOT_INT: {
        A::Gp x = gp_in(in.b, s1);
        A::Gp r = gp_out(in.a, s3);
        keep(as_.mvn(r, x));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::SHL_INT: case Op::SHR_INT: {
        A::Gp x = gp_in(in.b, s1), y = gp_in(in.c, s2);
        keep(as_.cmp(y, 64));  // unsigned: a negative count is out of range too
        keep(as_.b(CC::kHS, leave_at(pc)));
        A::Gp r = gp_out(in.a, s3);
        keep(in.op == Op::SHL_INT ? as_.lsl(r, x, y) : as_.asr(r, x, y));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::ADD_NUM: case Op::SUB_NUM: case Op::MUL_NUM: case Op::DIV_NUM: {
        // separate roundings, never a fused multiply-add (the interpreter's bytes)
        A::Vec x = fp_in(in.b, f1), y = fp_in(in.c, f2);
        A::Vec r = fp_out(in.a, A::d18);
        switch (in.op) {
          case Op::ADD_NUM: keep(as_.fadd(r, x, y)); break;
          case Op::SUB_NUM: keep(as_.fsub(r, x, y)); break;
          case Op::MUL_NUM: keep(as_.fmul(r, x, y)); break;
          default: keep(as_.fdiv(r, x, y)); break;
        }
        fp_commit(in.a, r);
        return next(pc);
      }
      case Op::MOD_NUM: {
        A::Vec x = fp_in(in.b, f1), y = fp_in(in.c, f2);
        keep(as_.fmov(A::d1, y));
        keep(as_.fmov(A::d0, x));
        call_c(calls_.fmod);  // std::fmod
        fp_commit(in.a, A::d0);
        return next(pc);
      }
      case Op::NEG_NUM: {
        A::Vec x = fp_in(in.b, f1);
        A::Vec r = fp_out(in.a, A::d18);
        keep(as_.fneg(r, x));
        fp_commit(in.a, r);
        return next(pc);
      }
      case Op::EQ_INT: case Op::NE_INT: case Op::LT_INT: case Op::LE_INT: {
        A::Gp x = gp_in(in.b, s1), y = gp_in(in.c, s2);
        keep(as_.cmp(x, y));
        CC cc = in.op == Op::EQ_INT ? CC::kEQ : in.op == Op::NE_INT ? CC::kNE : in.op == Op::LT_INT ? CC::kLT : CC::kLE;
        A::Gp r = gp_out(in.a, s3);
        keep(as_.cset(r, aj::Imm(static_cast<int>(cc))));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::EQ_NUM: case Op::NE_NUM: case Op::LT_NUM: case Op::LE_NUM: {
        // after fcmp, unordered (NaN) sets C and V: EQ, MI (less) and LS (less or equal) are
        // false for it and NE is true, as C's == < <= and !=
        A::Vec x = fp_in(in.b, f1), y = fp_in(in.c, f2);
        keep(as_.fcmp(x, y));
        CC cc = in.op == Op::EQ_NUM ? CC::kEQ : in.op == Op::NE_NUM ? CC::kNE : in.op == Op::LT_NUM ? CC::kMI : CC::kLS;
        A::Gp r = gp_out(in.a, s3);
        keep(as_.cset(r, aj::Imm(static_cast<int>(cc))));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::NOT: {
        A::Gp x = gp_in(in.b, s1);
        keep(as_.cmp(x, 0));
        A::Gp r = gp_out(in.a, s3);
        keep(as_.cset(r, aj::Imm(static_cast<int>(CC::kEQ))));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::INT_TO_NUM: {
        A::Gp x = gp_in(in.b, s1);
        A::Vec r = fp_out(in.a, A::d18);
        keep(as_.scvtf(r, x));
        fp_commit(in.a, r);
        return next(pc);
      }
      case Op::NUM_TO_INT: {
        // in range when -2^63 <= x < 2^63 (NaN is not: b.lt and b.ge see unordered as lt)
        A::Vec x = fp_in(in.b, f1);
        keep(as_.mov(s2, uint64_t{0xC3E0000000000000}));  // -2^63
        keep(as_.fmov(f2, s2));
        keep(as_.fcmp(x, f2));
        keep(as_.b(CC::kLT, leave_at(pc)));
        keep(as_.mov(s2, uint64_t{0x43E0000000000000}));  // 2^63
        keep(as_.fmov(f2, s2));
        keep(as_.fcmp(x, f2));
        keep(as_.b(CC::kGE, leave_at(pc)));
        A::Gp r = gp_out(in.a, s3);
        keep(as_.fcvtzs(r, x));
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::JUMP: keep(as_.b(target(jump_target(pc)))); return;
      case Op::JUMP_IF: case Op::JUMP_IFNOT: {
        A::Gp x = gp_in(in.b, s1);
        keep(in.op == Op::JUMP_IF ? as_.cbnz(x, target(jump_target(pc))) : as_.cbz(x, target(jump_target(pc))));
        return next(pc);
      }
      case Op::JLT_INT: case Op::JGE_INT: case Op::JEQ_INT: case Op::JNE_INT: {
        A::Gp x = gp_in(in.b, s1), y = gp_in(in.c, s2);
        keep(as_.cmp(x, y));
        return branch(in.op == Op::JLT_INT ? CC::kLT : in.op == Op::JGE_INT ? CC::kGE : in.op == Op::JEQ_INT ? CC::kEQ : CC::kNE, pc);
      }
      case Op::JLT_INT_K: case Op::JGE_INT_K: {
        A::Gp x = gp_in(in.b, s1);
        int64_t k = static_cast<int16_t>(in.c);
        if (k == 0 && jump_target(pc) < in_region_.size() && in_region_[jump_target(pc)]) {
          // against 0: the sign bit (tbnz / tbz, whose reach of 32 KiB a loop's code stays within)
          aj::Label to = target(jump_target(pc));
          keep(in.op == Op::JLT_INT_K ? as_.tbnz(x, 63, to) : as_.tbz(x, 63, to));
          return next(pc);
        }
        if (k >= 0 && k < 4096) keep(as_.cmp(x, k));
        else if (k < 0 && k > -4096) keep(as_.cmn(x, -k));
        else keep(as_.mov(s2, static_cast<uint64_t>(k))), keep(as_.cmp(x, s2));
        return branch(in.op == Op::JLT_INT_K ? CC::kLT : CC::kGE, pc);
      }
      case Op::JLT_NUM: case Op::JLE_NUM: case Op::JNLT_NUM: case Op::JNLE_NUM: {
        A::Vec x = fp_in(in.b, f1), y = fp_in(in.c, f2);
        keep(as_.fcmp(x, y));
        // MI: less (ordered); LS: less or equal (ordered); PL and HI: their negations, taken for NaN
        CC cc = in.op == Op::JLT_NUM ? CC::kMI : in.op == Op::JLE_NUM ? CC::kLS : in.op == Op::JNLT_NUM ? CC::kPL : CC::kHI;
        return branch(cc, pc);
      }
      case Op::LOOP: {
        // exactly exec_LOOP
        spend_step(pc);
        return next(pc);
      }
      case Op::LIST_COUNT: {
        A::Gp l = gp_in(in.b, s1);
        A::Gp r = gp_out(in.a, s3);
        if (layout_.ok) {
          keep(as_.ldr(r, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
        } else {
          keep(as_.mov(A::x0, l));
          call_c(calls_.list_count);
          keep(as_.mov(r, A::x0));
        }
        gp_commit(in.a, r);
        return next(pc);
      }
      case Op::SEQ_GET: case Op::SEQ_SET: {
        if (!layout_.ok) return step(pc);
        if (in.op == Op::SEQ_GET && is_text(in.a)) {
          // a `seq text` (text1) in range: its cell in place, retained, then slot A's old text
          // released (exec_SEQ_GET's copy_row_out); else pure_step
          aj::Label slow = slow_path(pc);
          A::Gp l = gp_in(in.b, s1), pos = gp_in(in.c, s2);
          keep(as_.ldrb(A::w11, aj::arm::ptr(l, static_cast<int32_t>(layout_.text1))));
          keep(as_.cbz(A::w11, slow));
          keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
          keep(as_.cmp(pos, s3));
          keep(as_.b(CC::kHS, slow));
          keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.begin))));
          keep(as_.ldr(A::x12, aj::arm::ptr(s3, pos, aj::arm::lsl(3))));
          A::Gp old = gp_in(in.a, A::x14);
          if (old.id() != 14) keep(as_.mov(A::x14, old));
          count_text(A::x12, true);
          gp_commit(in.a, A::x12);
          count_text(A::x14, false);
          return next(pc);
        }
        if (in.imm == 1) {
          // lowered as a narrow list (one byte a row): checked narrow and in range, its byte in
          // place (EventList::get / set_value; a bool slot holds 0 or 1, so its low byte is the
          // row); else pure_step does the rest or faults, as for a plain list
          aj::Label slow = slow_path(pc);
          if (const Cache* c = cache_of(in.b)) {
            // the list's count and bytes in registers (the second version's cache)
            A::Gp pos = gp_in(in.c, s2);
            keep(as_.cmp(pos, c->count));
            keep(as_.b(CC::kHS, slow));
            if (in.op == Op::SEQ_GET) {
              A::Gp r = home_[in.a].kind == Home::Gp ? gp_home(in.a) : A::Gp(A::x12);
              keep(as_.ldrb(r.w(), aj::arm::ptr(c->data, pos)));
              gp_commit(in.a, r);
            } else {
              A::Gp v = gp_in(in.a, A::x12);
              keep(as_.strb(v.w(), aj::arm::ptr(c->data, pos)));
            }
            return next(pc);
          }
          A::Gp l = gp_in(in.b, s1), pos = gp_in(in.c, s2);
          if (!known_as(in.b, kAssumeNarrow)) {
            keep(as_.ldrb(A::w11, aj::arm::ptr(l, static_cast<int32_t>(layout_.narrow))));
            keep(as_.cbz(A::w11, slow));
          }
          keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
          keep(as_.cmp(pos, s3));
          keep(as_.b(CC::kHS, slow));
          keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.bytes))));
          if (in.op == Op::SEQ_GET) {
            A::Gp r = home_[in.a].kind == Home::Gp ? gp_home(in.a) : A::Gp(A::x12);
            keep(as_.ldrb(r.w(), aj::arm::ptr(s3, pos)));  // zero-extends into the x register
            gp_commit(in.a, r);
          } else {
            A::Gp v = gp_in(in.a, A::x12);
            keep(as_.strb(v.w(), aj::arm::ptr(s3, pos)));
          }
          return next(pc);
        }
        // a plain sequence (one non-text cell per row) in range: its cell in place (the checks of
        // exec_SEQ_GET / exec_SEQ_SET); else pure_step does the rest or faults
        aj::Label slow = slow_path(pc);
        A::Gp pos = gp_in(in.c, s2), rows = s3;
        if (const Cache* c = cache_of(in.b)) {
          // the list's count and cells in registers (the second version's cache)
          keep(as_.cmp(pos, c->count));
          keep(as_.b(CC::kHS, slow));
          rows = c->data;
        } else {
          A::Gp l = gp_in(in.b, s1);
          if (!known_as(in.b, kAssumePlain)) {
            keep(as_.ldrb(A::w11, aj::arm::ptr(l, static_cast<int32_t>(layout_.plain))));
            keep(as_.cbz(A::w11, slow));
          }
          keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
          keep(as_.cmp(pos, s3));
          keep(as_.b(CC::kHS, slow));
          keep(as_.ldr(s3, aj::arm::ptr(l, static_cast<int32_t>(layout_.begin))));
        }
        if (in.op == Op::SEQ_GET) {
          if (home_[in.a].kind == Home::Fp) {
            keep(as_.ldr(fp_home(in.a), aj::arm::ptr(rows, pos, aj::arm::lsl(3))));
          } else {
            A::Gp r = gp_out(in.a, A::x12);
            keep(as_.ldr(r, aj::arm::ptr(rows, pos, aj::arm::lsl(3))));
            gp_commit(in.a, r);
          }
        } else if (home_[in.a].kind == Home::Fp) {
          keep(as_.str(fp_home(in.a), aj::arm::ptr(rows, pos, aj::arm::lsl(3))));
        } else {
          A::Gp v = gp_in(in.a, A::x12);
          keep(as_.str(v, aj::arm::ptr(rows, pos, aj::arm::lsl(3))));
        }
        return next(pc);
      }
      case Op::SEQ_PUSH: {
        if (!layout_.ok) return step(pc);
        if (is_text(in.a)) {
          // exactly EventList::push of a `seq text` (text1) with room: the cell in place, retained;
          // else pure_step
          aj::Label slow = slow_path(pc);
          A::Gp l = gp_in(in.b, s1);
          keep(as_.ldrb(A::w11, aj::arm::ptr(l, static_cast<int32_t>(layout_.text1))));
          keep(as_.cbz(A::w11, slow));
          A::Gp v = push_cell(in, l, slow);
          if (v.id() != 12) keep(as_.mov(A::x12, v));
          count_text(A::x12, true);
          return next(pc);
        }
        // exactly EventList::push of a plain sequence with room (push_fits); else pure_step,
        // which grows the list (or faults) as the interpreter does
        aj::Label slow = slow_path(pc);
        A::Gp l = gp_in(in.b, s1);
        if (!known_as(in.b, kAssumePlain)) {
          keep(as_.ldrb(A::w11, aj::arm::ptr(l, static_cast<int32_t>(layout_.plain))));
          keep(as_.cbz(A::w11, slow));
        }
        // (a cached list pushed onto under another slot keeps its cache: the count only grows, so
        // an older one sends the new rows' positions to pure_step, after which the cache is
        // read again; the rows move only when pure_step grows the list)
        push_cell(in, l, slow);
        return next(pc);
      }
      case Op::SEQ_GET_FIELD: case Op::SEQ_SET_FIELD: {
        // a column that is not text, in range: a runtime call (x0 = list, x1 = pos, x2 = field);
        // else pure_step
        aj::Label slow = slow_path(pc);
        A::Gp l = gp_in(in.b, s1), pos = gp_in(in.c, s2);
        if (in.op == Op::SEQ_SET_FIELD) {
          A::Gp v = gp_in(in.a, A::x3);
          if (v.id() != 3) keep(as_.mov(A::x3, v));
        }
        keep(as_.mov(A::x0, l));
        keep(as_.mov(A::x1, pos));
        keep(as_.mov(A::x2, static_cast<uint64_t>(in.imm)));
        if (in.op == Op::SEQ_GET_FIELD) {
          call_c(calls_.seq_get_field);
          keep(as_.cbz(A::x1, slow));
          gp_commit(in.a, A::x0);
        } else {
          call_c(calls_.seq_set_field);
          keep(as_.cbz(A::x0, slow));
        }
        return next(pc);
      }
      case Op::MAP_ENSURE: case Op::MAP_GET_FIELD: case Op::MAP_SET_FIELD: {
        // a keyed list, its one-cell key in slot C: the row through pure_jit_map_row (x0 = list,
        // x1 = key), or the one the instruction before found (jit::rows_known), kept at row_var_; a
        // field that is not text (NativeLayout::text_cols) in place. A longer key, a missing row or
        // a text field: pure_step, after which no row is known
        aj::Label slow = as_.newLabel();
        cold_.push_back([this, slow, pc, v = version_] {
          as_.bind(slow);
          version_ = v;
          keep(as_.str(A::xzr, aj::arm::ptr(A::sp, static_cast<int32_t>(row_var_))));
          step(pc);
        });
        if (!layout_.ok || (in.op != Op::MAP_ENSURE && (in.imm < 0 || in.imm >= 64))) {
          keep(as_.b(slow));
          return;
        }
        aj::Label have = as_.newLabel();
        if (row_known_[pc]) {
          keep(as_.ldr(A::x12, aj::arm::ptr(A::sp, static_cast<int32_t>(row_var_))));
          keep(as_.cbnz(A::x12, have));
        }
        {
          A::Gp l = gp_in(in.b, s1), key = gp_in(in.c, s2);
          keep(as_.mov(A::x0, l));
          keep(as_.mov(A::x1, key));
          call_c(calls_.map_row);
          keep(as_.mov(A::x12, A::x0));
        }
        as_.bind(have);
        keep(as_.cbz(A::x12, slow));
        if (in.op != Op::MAP_ENSURE) {
          A::Gp l = gp_in(in.b, s1);
          keep(as_.ldr(A::x13, aj::arm::ptr(l, static_cast<int32_t>(layout_.text_cols))));
          keep(as_.tst(A::x13, uint64_t{1} << in.imm));
          keep(as_.b(CC::kNE, slow));
        }
        keep(as_.str(A::x12, aj::arm::ptr(A::sp, static_cast<int32_t>(row_var_))));
        aj::arm::Mem cell = aj::arm::ptr(A::x12, static_cast<int32_t>(8 * in.imm));
        if (in.op == Op::MAP_GET_FIELD) {
          if (home_[in.a].kind == Home::Fp) {
            keep(as_.ldr(fp_home(in.a), cell));
          } else {
            A::Gp r = gp_out(in.a, A::x14);
            keep(as_.ldr(r, cell));
            gp_commit(in.a, r);
          }
        } else if (in.op == Op::MAP_SET_FIELD) {
          if (home_[in.a].kind == Home::Fp) {
            keep(as_.str(fp_home(in.a), cell));
          } else {
            A::Gp v = gp_in(in.a, A::x14);
            keep(as_.str(v, cell));
          }
        }
        return next(pc);
      }
      case Op::INT_TEXT: {
        // pure_jit_int_text (x0 = the int, x1 = slot A's old text): the new text, the old released;
        // else pure_step (the memory budget's fault)
        aj::Label slow = slow_path(pc);
        A::Gp v = gp_in(in.b, s1), old = gp_in(in.a, s2);
        keep(as_.mov(A::x0, v));
        keep(as_.mov(A::x1, old));
        call_c(calls_.int_text);
        keep(as_.cbz(A::x1, slow));
        gp_commit(in.a, A::x0);
        return next(pc);
      }
      case Op::CALL_INLINED: {
        // exec_CALL_INLINED: the slot check first (a failing one leaves before the step: the
        // interpreter spends it and faults), then the step as LOOP spends it
        keep(as_.ldr(s1, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreStackEnd))));
        keep(as_.mov(s2, static_cast<uint64_t>(in.b) * 8u));
        keep(as_.add(s2, kBase, s2));
        keep(as_.cmp(s2, s1));
        keep(as_.b(CC::kHI, leave_at(pc)));
        spend_step(pc);
        return next(pc);
      }
      case Op::ITER_NEXT: {
        // exec_ITER_NEXT's inline path: with budget left and rows of the width the loop's slots
        // expect, spend the step and copy the next row out of the run; an empty run is refilled
        // through pure_jit_iter_refill (vm::take_leaf_run, as the interpreter does), jumping to
        // IMM when there are no more rows; a text's pieces (no width) go through
        // pure_jit_iter_next_piece. Anything else (budget spent, another kind of iterator) runs
        // the whole instruction through pure_step: the interpreter's step, fault and message
        uint32_t width = iter_row_width(fn_.code, pc);
        if (!width && calls_.iter_next_piece) {
          // no rows of a width known here: the step spent as below, then a text's pieces
          // (TEXT_ITER) through pure_jit_iter_next_piece
          aj::Label slow = as_.newLabel();
          keep(as_.subs(kSteps, kSteps, 1));
          keep(as_.b(CC::kLT, slow));
          next_piece(pc, slow);
          cold_.push_back([this, slow, pc, v = version_] {
            as_.bind(slow);
            version_ = v;
            keep(as_.add(kSteps, kSteps, 1));
            step(pc);
          });
          return;
        }
        if (!width) return step(pc);
        if (walks(pc) && reg_walk_) {
          // the loop's one walk, its cursor in kRun/kLeft: the step spent, then the next row (only
          // the cells some instruction reads); kLeft 0 is the walk's end or no walk (an iterator),
          // told apart out of line by the walk's ip
          aj::Label spent = as_.newLabel(), empty = as_.newLabel(), iterator = as_.newLabel();
          keep(as_.subs(kSteps, kSteps, 1));
          keep(as_.b(CC::kLT, spent));
          keep(as_.cbz(kLeft, empty));
          for (uint32_t i = 0; i < width; ++i) {
            if (!cell_needed(in, i)) continue;
            uint32_t slot = in.a + i;
            aj::arm::Mem cell = aj::arm::ptr(kRun, static_cast<int32_t>(8 * i));
            if (home_[slot].kind == Home::Fp) {
              keep(as_.ldr(fp_home(slot), cell));
            } else {
              A::Gp r = gp_out(slot, A::x14);
              keep(as_.ldr(r, cell));
              gp_commit(slot, r);
            }
          }
          keep(as_.add(kRun, kRun, 8 * width));
          keep(as_.sub(kLeft, kLeft, 1));
          next(pc);
          cold_.push_back([this, spent, empty, iterator, pc, width, v = version_] {
            version_ = v;
            // the budget spent: a walk leaves here (the iterator made on the way out, and the
            // interpreter's ITER_NEXT faults); an iterator's ITER_NEXT runs its own way
            as_.bind(spent);
            keep(as_.add(kSteps, kSteps, 1));
            keep(as_.ldr(A::x9, walk_mem(kWalkIp)));
            keep(as_.cbnz(A::x9, leave_at(pc)));
            keep(as_.b(iterator));
            // no row left: a walk's rows are done (on to IMM, or past it when it is the walk's
            // ITER_END, which would only clear the ip); else the iterator's way, the step given back
            as_.bind(empty);
            keep(as_.ldr(A::x9, walk_mem(kWalkIp)));
            aj::Label other = as_.newLabel();
            keep(as_.cbz(A::x9, other));
            uint32_t to = jump_target(pc);
            auto w = walk_of_.find(to);
            if (to + 1 < in_region_.size() && in_region_[to] && in_region_[to + 1] && fn_.code[to].op == Op::ITER_END &&
                w != walk_of_.end() && w->second == walk_of_.at(pc)) {
              keep(as_.str(A::xzr, walk_mem(kWalkIp)));
              keep(as_.b(target(to + 1)));
            } else {
              keep(as_.b(target(to)));
            }
            as_.bind(other);
            keep(as_.add(kSteps, kSteps, 1));
            as_.bind(iterator);
            iter_next_iterator(pc, width, false);
          });
          return;
        }
        if (walks(pc)) {
          // a walk of native code's own (ST_ITER found the rows): the same step, and the next row
          // from the frame's run; with the budget spent, leave here (the iterator is made on the
          // way out, and the interpreter's ITER_NEXT faults)
          aj::Label iterator = as_.newLabel(), spent = as_.newLabel();
          keep(as_.ldr(s1, walk_mem(kWalkIp)));
          keep(as_.cbz(s1, iterator));
          keep(as_.subs(kSteps, kSteps, 1));
          keep(as_.b(CC::kLT, spent));
          keep(as_.ldp(A::x13, A::x12, walk_mem(kWalkRun)));
          keep(as_.cbz(A::x12, target(jump_target(pc))));
          copy_row(in, width, A::x13);
          keep(as_.add(A::x13, A::x13, 8 * width));
          keep(as_.sub(A::x12, A::x12, 1));
          keep(as_.stp(A::x13, A::x12, walk_mem(kWalkRun)));
          keep(as_.b(target(pc + 1)));
          cold_.push_back([this, spent, pc] {
            as_.bind(spent);
            keep(as_.add(kSteps, kSteps, 1));
            keep(as_.b(leave_at(pc)));
          });
          as_.bind(iterator);
        }
        iter_next_iterator(pc, width, true);
        return;
      }
      case Op::ST_ITER: {
        // vm::st_iter through pure_jit_st_iter: the key slots in the frame before it, the
        // iterator's slot A read back after it (the call writes no other slot); a fault leaves
        // with the frame current but for A, which the call wrote
        if (reg_walk_ && walks(pc)) return st_iter_reg_walk(pc);
        if (site_var_.count(pc)) {
          // the site's lookup (filled by an earlier pass): with the meter not over its limit, the
          // dense index read as FlatList::rows_of reads it, into the walk; else the call below
          const int32_t site = static_cast<int32_t>(site_var_.at(pc));
          aj::Label call_it = as_.newLabel(), empty = as_.newLabel(), begun = as_.newLabel();
          site_lookup(site, in.c, call_it, empty);
          keep(as_.sub(A::x11, A::x11, A::x10));
          keep(as_.ldp(A::x13, A::x12, aj::arm::ptr(A::sp, site + static_cast<int32_t>(offsetof(PureWalkSite, rows)))));
          keep(as_.mul(A::x10, A::x10, A::x12));
          keep(as_.add(A::x13, A::x13, A::x10));
          keep(as_.stp(A::x13, A::x11, walk_mem(kWalkRun)));
          as_.bind(begun);
          keep(as_.ldr(A::x9, aj::arm::ptr(A::sp, site + static_cast<int32_t>(offsetof(PureWalkSite, ip)))));
          keep(as_.str(A::x9, walk_mem(kWalkIp)));
          keep(as_.b(target(pc + 1)));
          cold_.push_back([this, empty, begun] {
            as_.bind(empty);  // no rows with this key
            keep(as_.str(A::xzr, walk_mem(kWalkLeft)));
            keep(as_.b(begun));
          });
          as_.bind(call_it);
          keep(as_.add(A::x9, A::sp, static_cast<uint32_t>(site)));
          keep(as_.str(A::x9, walk_mem(kWalkSite)));
        }
        for (uint32_t i = 0; i < st_iter_keys(in); ++i) store_slot(in.c + i);
        aj::Label faulted = as_.newLabel();
        keep(as_.mov(A::x0, kCore));
        keep(as_.mov(A::x1, kBase));
        keep(as_.mov(A::x2, addr(&in)));
        if (walks(pc)) {
          // pure_jit_st_iter_rows: the rows into the frame's walk (1), or an iterator in slot A (2)
          // (four arguments: x4..x8 may hold slots, which call_c stores and loads around the call)
          keep(as_.mov(A::x3, static_cast<uint64_t>(iter_row_width(fn_.code, walk_q_.at(pc)))));
          keep(as_.str(A::x3, walk_mem(kWalkWidth)));
          keep(as_.add(A::x3, A::sp, walk_var_));
          call_c(calls_.st_iter_rows);
        } else {
          call_c(calls_.st_iter);
        }
        keep(as_.cbz(A::x0, faulted));
        reload_slot(in.a);
        cold_.push_back([this, faulted, a = in.a] {
          as_.bind(faulted);
          write_back_except(a);
          keep(as_.mov(A::x0, addr(vm::kFaulted)));
          keep(as_.b(done_));
        });
        return next(pc);
      }
      case Op::ITER_END: {
        // vm::release_iterators through pure_jit_iter_end: touches no slot, never faults
        aj::Label iterator = as_.newLabel();
        if (walks(pc)) {
          // the end of a walk of native code's own: nothing to release (the register walk's kLeft
          // 0 again: no walk goes)
          keep(as_.ldr(s1, walk_mem(kWalkIp)));
          keep(as_.cbz(s1, iterator));
          keep(as_.str(A::xzr, walk_mem(kWalkIp)));
          if (reg_walk_) keep(as_.mov(kLeft, 0));
          keep(as_.b(target(pc + 1)));
        }
        as_.bind(iterator);
        A::Gp down_to = gp_in(in.b, s1);
        keep(as_.mov(A::x1, down_to));
        keep(as_.mov(A::x0, kCore));
        call_c(calls_.iter_end);
        return next(pc);
      }
      default:
        // lowering_of says Native only for the ops above; a release build that breaks that leaves
        // to the interpreter here, which runs the instruction itself
        PURE_ASSERT(!"jit-aarch64: an op lowering_of calls native has no case in lower()");
        keep(as_.b(leave_at(pc)));
        return;
    }
  }
};

}  // namespace

bool emit_loop(aj::CodeHolder& code, const vm::Function& function, uint32_t loop, const CallTargets& calls,
               std::string& error, LoopCodeInfo* info) {
  Lowerer lowerer(code, function, loop, calls);
  return lowerer.build(error, info);
}

}  // namespace pure::jit::a64
