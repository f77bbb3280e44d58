// jit-aarch64/a64_ops.cpp — the Lowerer's per-op emission (a64_lowerer.h): lower(pc), the
// AArch64 code of each instruction lowering_of calls native, in ops.def order of the cases.
#include "jit-aarch64/a64_lowerer.h"

namespace pure::jit::a64 {

void Lowerer::lower(uint32_t pc) {
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

}  // namespace pure::jit::a64
