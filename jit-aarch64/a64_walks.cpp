// jit-aarch64/a64_walks.cpp — the Lowerer's stored-list walks (a64_lowerer.h): planning which
// ST_ITER/ITER_NEXT/ITER_END loops native code walks without an iterator, copying rows into slots,
// the iterator and pieces paths of ITER_NEXT, and ST_ITER's per-site lookups.
#include "jit-aarch64/a64_lowerer.h"

namespace pure::jit::a64 {

A::Gp Lowerer::push_cell(const Instr& in, A::Gp l, aj::Label slow) {
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

void Lowerer::next_piece(uint32_t pc, aj::Label slow) {
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

void Lowerer::plan_walks() {
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

void Lowerer::copy_row(const Instr& in, uint32_t width, A::Gp from) {
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

void Lowerer::iter_next_iterator(uint32_t pc, uint32_t width, bool inline_next) {
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

void Lowerer::site_lookup(int32_t site, uint32_t key_slot, aj::Label call_it, aj::Label empty) {
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

void Lowerer::st_iter_reg_walk(uint32_t pc) {
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

}  // namespace pure::jit::a64
