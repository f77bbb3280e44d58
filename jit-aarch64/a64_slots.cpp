// jit-aarch64/a64_slots.cpp — the Lowerer's register planning (a64_lowerer.h): which slots are
// pinned in which registers (weighted by loop depth), the second version's assumptions about its
// lists, and the moves that load, store, write back and reload slots around exits and calls.
#include "jit-aarch64/a64_lowerer.h"

namespace pure::jit::a64 {

bool Lowerer::read_after(uint32_t q, uint32_t s) const {
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

uint64_t Lowerer::weight_at(uint32_t pc) const {
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

void Lowerer::plan_registers(bool versions2) {
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

void Lowerer::assign_homes(LoopCodeInfo* info) {
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

A::Gp Lowerer::gp_home(uint32_t s) const {
  PURE_ASSERT(s < home_.size() && home_[s].kind == Home::Gp && home_[s].reg < gp_pinned_);
  return xreg(gp_reg_of(home_[s].reg));
}

A::Vec Lowerer::fp_home(uint32_t s) const {
  PURE_ASSERT(s < home_.size() && home_[s].kind == Home::Fp && home_[s].reg < kFpPinned);
  return dreg(fp_reg_of(home_[s].reg));
}

aj::arm::Mem Lowerer::slot_mem(uint32_t s) {
  uint32_t off = s * 8u;
  if (off <= 32760) return aj::arm::ptr(kBase, static_cast<int32_t>(off));
  keep(as_.mov(A::x17, off));
  return aj::arm::ptr(kBase, A::x17);
}

A::Gp Lowerer::gp_in(uint32_t s, A::Gp scratch) {
  switch (home_[s].kind) {
    case Home::Gp: return gp_home(s);
    case Home::Fp: keep(as_.fmov(scratch, fp_home(s))); return scratch;
    default: keep(as_.ldr(scratch, slot_mem(s))); return scratch;
  }
}

A::Vec Lowerer::fp_in(uint32_t s, A::Vec scratch) {
  switch (home_[s].kind) {
    case Home::Fp: return fp_home(s);
    case Home::Gp: keep(as_.fmov(scratch, gp_home(s))); return scratch;
    default: keep(as_.ldr(scratch, slot_mem(s))); return scratch;
  }
}

void Lowerer::gp_commit(uint32_t s, A::Gp r) {
  switch (home_[s].kind) {
    case Home::Gp: if (r.id() != gp_home(s).id()) keep(as_.mov(gp_home(s), r)); return;
    case Home::Fp: keep(as_.fmov(fp_home(s), r)); return;
    default: keep(as_.str(r, slot_mem(s))); return;
  }
}

void Lowerer::fp_commit(uint32_t s, A::Vec r) {
  switch (home_[s].kind) {
    case Home::Fp: if (r.id() != fp_home(s).id()) keep(as_.fmov(fp_home(s), r)); return;
    case Home::Gp: keep(as_.fmov(gp_home(s), r)); return;
    default: keep(as_.str(r, slot_mem(s))); return;
  }
}

void Lowerer::write_back() {
  keep(as_.str(kSteps, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreStepsLeft))));
  for (uint32_t s : gp_slots_) keep(as_.str(gp_home(s), slot_mem(s)));
  for (uint32_t s : fp_slots_) keep(as_.str(fp_home(s), slot_mem(s)));
  store_walk();
}

void Lowerer::store_walk() {
  if (reg_walk_) keep(as_.stp(kRun, kLeft, walk_mem(kWalkRun)));
}

void Lowerer::load_walk() {
  if (reg_walk_) keep(as_.ldp(kRun, kLeft, walk_mem(kWalkRun)));
}

void Lowerer::load_caches() {
  if (version_ != 1) return;
  for (const Cache& c : caches_) {
    A::Gp l = gp_in(c.slot, A::x9);
    keep(as_.ldr(c.count, aj::arm::ptr(l, static_cast<int32_t>(layout_.count))));
    keep(as_.ldr(c.data, aj::arm::ptr(l, static_cast<int32_t>(c.narrow ? layout_.bytes : layout_.begin))));
  }
}

void Lowerer::write_back_except(uint32_t skip) {
  keep(as_.str(kSteps, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreStepsLeft))));
  for (uint32_t s : gp_slots_)
    if (s != skip) keep(as_.str(gp_home(s), slot_mem(s)));
  for (uint32_t s : fp_slots_)
    if (s != skip) keep(as_.str(fp_home(s), slot_mem(s)));
  store_walk();
}

void Lowerer::reload_slot(uint32_t s) {
  if (home_[s].kind == Home::Gp) keep(as_.ldr(gp_home(s), slot_mem(s)));
  else if (home_[s].kind == Home::Fp) keep(as_.ldr(fp_home(s), slot_mem(s)));
}

void Lowerer::store_slot(uint32_t s) {
  if (home_[s].kind == Home::Gp) keep(as_.str(gp_home(s), slot_mem(s)));
  else if (home_[s].kind == Home::Fp) keep(as_.str(fp_home(s), slot_mem(s)));
}

void Lowerer::reload() {
  keep(as_.ldr(kSteps, aj::arm::ptr(kCore, static_cast<int32_t>(vm::kCoreStepsLeft))));
  for (uint32_t s : gp_slots_) keep(as_.ldr(gp_home(s), slot_mem(s)));
  for (uint32_t s : fp_slots_) keep(as_.ldr(fp_home(s), slot_mem(s)));
  load_walk();
  load_caches();
}

bool Lowerer::plan_plain_version() {
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

}  // namespace pure::jit::a64
