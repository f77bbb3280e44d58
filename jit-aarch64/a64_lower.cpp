// jit-aarch64/a64_lower.cpp — one loop of bytecode to AArch64 machine code with asmjit's
// a64::Assembler (see README.md for why the Assembler and not the Compiler).
//
// The Lowerer class and the register conventions are in a64_lowerer.h; this file holds the entry
// points, build() (the loop's layout: versions, dispatch, cold code) and the native function's
// frame and control flow.
#include "jit-aarch64/a64_lower.h"

#include "jit-aarch64/a64_lowerer.h"

#include "jit-common/runtime_calls.h"

namespace pure::jit::a64 {

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

bool Lowerer::build(std::string& error, LoopCodeInfo* info) {
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

void Lowerer::prologue() {
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

void Lowerer::epilogue() {
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

aj::Label Lowerer::target(uint32_t pc) {
  if (pc < in_region_.size() && in_region_[pc]) return labels_[version_][pc];
  auto it = exits_.find(pc);
  if (it != exits_.end()) return it->second;
  aj::Label l = as_.newLabel();
  exits_.emplace(pc, l);
  return l;
}

aj::Label Lowerer::leave_at(uint32_t pc) {
  auto it = exits_.find(pc);
  if (it != exits_.end()) return it->second;
  aj::Label l = as_.newLabel();
  exits_.emplace(pc, l);
  return l;
}

aj::Label Lowerer::undo_then_leave(uint32_t pc, std::function<void()> undo) {
  aj::Label l = as_.newLabel();
  cold_.push_back([this, l, pc, undo] {
    as_.bind(l);
    undo();
    keep(as_.b(leave_at(pc)));
  });
  return l;
}

void Lowerer::call_c(uint64_t fn) {
  for (size_t i = kGpCallee; i < gp_slots_.size(); ++i) keep(as_.str(gp_home(gp_slots_[i]), slot_mem(gp_slots_[i])));
  for (size_t i = kFpCallee; i < fp_slots_.size(); ++i) keep(as_.str(fp_home(fp_slots_[i]), slot_mem(fp_slots_[i])));
  store_walk();
  call(fn);
  for (size_t i = kGpCallee; i < gp_slots_.size(); ++i) keep(as_.ldr(gp_home(gp_slots_[i]), slot_mem(gp_slots_[i])));
  for (size_t i = kFpCallee; i < fp_slots_.size(); ++i) keep(as_.ldr(fp_home(fp_slots_[i]), slot_mem(fp_slots_[i])));
  load_walk();  // (pure_jit_st_iter_rows writes the walk it is given: its new cursor)
  load_caches();  // (caller-saved registers; x0/x1, the result, kept)
}

void Lowerer::count_text(A::Gp t, bool up) {
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

void Lowerer::step(uint32_t pc) {
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

void Lowerer::spend_step(uint32_t pc) {
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

aj::Label Lowerer::slow_path(uint32_t pc) {
  aj::Label l = as_.newLabel();
  cold_.push_back([this, l, pc, v = version_] {
    as_.bind(l);
    version_ = v;  // goes on in the version it came from
    step(pc);
  });
  return l;
}

// Entered at the head (LOOP, ITER_NEXT) of the loop or of any loop nested in it
// (BackendKind::nested_entries: the tier publishes a nest's code for its inner loops too). Unlike
// LLVM's, this code needs neither hubs nor copies for those: the registers are assigned for the
// whole loop, every pinned slot is loaded in the prologue whichever head it is, the second
// version's lists are checked before the dispatch, and what is kept between instructions (a map
// row, a walk's cursor) is known only after a head (rows_known stops at jump targets; a walk's
// ITER_NEXT entered with the interpreter's iterator takes the iterator's way out of line).
bool Lowerer::entered_at(uint32_t pc) const {
  const Instr& in = fn_.code[pc];
  if (in.op != Op::LOOP && in.op != Op::ITER_NEXT) return false;
  for (uint32_t l = 0; l < fn_.loops.size(); ++l) {
    if (!vm::heads_loop(fn_, in, l)) continue;
    for (int32_t x = static_cast<int32_t>(l); x >= 0; x = fn_.loops[static_cast<size_t>(x)].parent)
      if (x == loop_id_) return true;
    return false;
  }
  return false;
}

void Lowerer::dispatch(const std::vector<aj::Label>& labels) {
  // the loop's own heads first: entering there costs what it did before nests, and a nested
  // head is entered mostly once (the compile's first entry; then after a call or a fault)
  for (bool own : {true, false})
    for (uint32_t pc = 0; pc < fn_.code.size(); ++pc) {
      if (!in_region_[pc] || !entered_at(pc) || vm::heads_loop(fn_, fn_.code[pc], static_cast<uint32_t>(loop_id_)) != own)
        continue;
      keep(as_.mov(A::x9, addr(at(pc))));
      keep(as_.cmp(A::x2, A::x9));
      keep(as_.b(CC::kEQ, labels[pc]));
    }
  keep(as_.mov(A::x0, A::x2));  // never taken: the interpreter enters only at those
  keep(as_.b(done_));
}

bool emit_loop(aj::CodeHolder& code, const vm::Function& function, uint32_t loop, const CallTargets& calls,
               std::string& error, LoopCodeInfo* info) {
  Lowerer lowerer(code, function, loop, calls);
  return lowerer.build(error, info);
}

}  // namespace pure::jit::a64
