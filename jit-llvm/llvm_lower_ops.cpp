// jit-llvm/llvm_lower_ops.cpp — LoopLowering's per-op lowering (llvm_lowering.h): lower(pc), the
// LLVM IR of each instruction lowering_of calls native.
#include "jit-llvm/llvm_lowering.h"

namespace pure::jit::llvm_ir {

void LoopLowering::lower(uint32_t pc) {
  const Instr& in = fn_.code[pc];
  switch (lowering_of(in.op)) {
    case Lowering::Exit:
      B.CreateBr(leave_at(pc));
      return;
    case Lowering::Step: {
      std::vector<uint32_t> slots;
      if (step_slots(in, slots)) lower_step(pc, &slots);
      else lower_step(pc);
      return;
    }
    case Lowering::Native:
      break;
  }
  switch (in.op) {
    case Op::CONST: set(in.a, k(in.imm)); return next(pc);
    case Op::MOVE: set(in.a, get(in.b)); return next(pc);
    case Op::TAKE: {
      Value* v = get(in.b);
      set(in.a, v);
      set(in.b, k(0));
      return next(pc);
    }
    case Op::ADD_INT: return checked_int(Intrinsic::sadd_with_overflow, pc, get(in.b), get(in.c));
    case Op::SUB_INT: return checked_int(Intrinsic::ssub_with_overflow, pc, get(in.b), get(in.c));
    case Op::MUL_INT: return checked_int(Intrinsic::smul_with_overflow, pc, get(in.b), get(in.c));
    case Op::ADDI_INT: return checked_int(Intrinsic::sadd_with_overflow, pc, get(in.b), k(in.imm));
    case Op::DIV_INT: {
      Value* x = get(in.b);
      Value* y = get(in.c);
      Value* bad = B.CreateOr(B.CreateICmpEQ(y, k(0)),
                              B.CreateAnd(B.CreateICmpEQ(x, k(INT64_MIN)), B.CreateICmpEQ(y, k(-1))));
      check(B.CreateNot(bad), pc);
      set(in.a, B.CreateSDiv(x, y));
      return next(pc);
    }
    case Op::MOD_INT: {
      Value* x = get(in.b);
      Value* y = get(in.c);
      check(B.CreateICmpNE(y, k(0)), pc);
      Value* minus_one = B.CreateICmpEQ(y, k(-1));
      Value* r = B.CreateSRem(x, B.CreateSelect(minus_one, k(1), y));  // never INT64_MIN % -1
      set(in.a, r);
      return next(pc);
    }
    case Op::NEG_INT: {
      Value* x = get(in.b);
      check(B.CreateICmpNE(x, k(INT64_MIN)), pc);
      set(in.a, B.CreateSub(k(0), x));
      return next(pc);
    }
    case Op::ADD_NUM: set(in.a, B.CreateFAdd(num(in.b), num(in.c))); return next(pc);
    case Op::SUB_NUM: set(in.a, B.CreateFSub(num(in.b), num(in.c))); return next(pc);
    case Op::MUL_NUM: set(in.a, B.CreateFMul(num(in.b), num(in.c))); return next(pc);
    case Op::DIV_NUM: set(in.a, B.CreateFDiv(num(in.b), num(in.c))); return next(pc);
    case Op::MOD_NUM: set(in.a, B.CreateCall(runtime(RuntimeCall::fmod), {num(in.b), num(in.c)})); return next(pc);
    case Op::NEG_NUM: set(in.a, B.CreateFNeg(num(in.b))); return next(pc);
    case Op::EQ_INT: set(in.a, B.CreateICmpEQ(get(in.b), get(in.c))); return next(pc);
    case Op::NE_INT: set(in.a, B.CreateICmpNE(get(in.b), get(in.c))); return next(pc);
    case Op::LT_INT: set(in.a, B.CreateICmpSLT(get(in.b), get(in.c))); return next(pc);
    case Op::LE_INT: set(in.a, B.CreateICmpSLE(get(in.b), get(in.c))); return next(pc);
    case Op::EQ_NUM: set(in.a, B.CreateFCmpOEQ(num(in.b), num(in.c))); return next(pc);
    case Op::NE_NUM: set(in.a, B.CreateFCmpUNE(num(in.b), num(in.c))); return next(pc);
    case Op::LT_NUM: set(in.a, B.CreateFCmpOLT(num(in.b), num(in.c))); return next(pc);
    case Op::LE_NUM: set(in.a, B.CreateFCmpOLE(num(in.b), num(in.c))); return next(pc);
    case Op::NOT: set(in.a, B.CreateICmpEQ(get(in.b), k(0))); return next(pc);
    case Op::INT_TO_NUM: set(in.a, B.CreateSIToFP(get(in.b), f64)); return next(pc);
    case Op::NUM_TO_INT: {
      Value* x = num(in.b);
      Value* ok = B.CreateAnd(B.CreateFCmpOGE(x, ConstantFP::get(f64, -9223372036854775808.0)),
                              B.CreateFCmpOLT(x, ConstantFP::get(f64, 9223372036854775808.0)));
      check(ok, pc);
      set(in.a, B.CreateFPToSI(x, i64));
      return next(pc);
    }
    case Op::JUMP: B.CreateBr(target(pc + static_cast<uint32_t>(in.imm))); return;
    case Op::JUMP_IF: return branch(B.CreateICmpNE(get(in.b), k(0)), pc);
    case Op::JUMP_IFNOT: return branch(B.CreateICmpEQ(get(in.b), k(0)), pc);
    case Op::JLT_INT: return branch(B.CreateICmpSLT(get(in.b), get(in.c)), pc);
    case Op::JGE_INT: return branch(B.CreateICmpSGE(get(in.b), get(in.c)), pc);
    case Op::JLT_INT_K: return branch(B.CreateICmpSLT(get(in.b), k(static_cast<int16_t>(in.c))), pc);
    case Op::JGE_INT_K: return branch(B.CreateICmpSGE(get(in.b), k(static_cast<int16_t>(in.c))), pc);
    case Op::JEQ_INT: return branch(B.CreateICmpEQ(get(in.b), get(in.c)), pc);
    case Op::JNE_INT: return branch(B.CreateICmpNE(get(in.b), get(in.c)), pc);
    case Op::JLT_NUM: return branch(B.CreateFCmpOLT(num(in.b), num(in.c)), pc);
    case Op::JLE_NUM: return branch(B.CreateFCmpOLE(num(in.b), num(in.c)), pc);
    case Op::JNLT_NUM: return branch(B.CreateFCmpUGE(num(in.b), num(in.c)), pc);
    case Op::JNLE_NUM: return branch(B.CreateFCmpUGT(num(in.b), num(in.c)), pc);
    case Op::LOOP: {
      // exactly exec_LOOP: spend one step; below zero, the interpreter's own fault
      spend_step(pc, in);
      return next(pc);
    }
    case Op::LIST_COUNT:  // EventList::count(), whatever the list's kind
      set(in.a, layout_.ok ? header(i64, list(in.b), layout_.count) : B.CreateCall(runtime(RuntimeCall::list_count), {list(in.b)}));
      return next(pc);
    case Op::SEQ_GET: {
      if (is_text(in.a) && layout_.ok) {
        // a `seq text` (text1) in range: its cell in place, retained, slot A's old text released
        // (exec_SEQ_GET's copy_row_out); else pure_step
        Value* l = list(in.b);
        Value* pos = get(in.c);
        Value* ok = B.CreateAnd(B.CreateICmpNE(header(B.getInt8Ty(), l, layout_.text1), B.getInt8(0)),
                                B.CreateICmpULT(pos, header(i64, l, layout_.count)));
        common_case(ok, pc);
        Value* cell = tagged(B.CreateLoad(i64, B.CreateInBoundsGEP(i64, header(ptr, l, layout_.begin), pos)), cell_tag_);
        Value* old = get(in.a);
        retain_text(cell, pc);
        release_text(old, pc);
        set(in.a, cell);
        return next(pc);
      }
      if (layout_.ok && in.imm == 1) {  // lowered as a narrow list: its byte, read in place (EventList::get)
        Value* l = list(in.b);
        Value* pos = narrow_in_range(l, pc);
        Value* byte = tagged(B.CreateLoad(B.getInt8Ty(), B.CreateInBoundsGEP(B.getInt8Ty(), header(ptr, l, layout_.bytes), pos)), cell_tag_);
        set(in.a, B.CreateZExt(byte, i64));
        return next(pc);
      }
      if (layout_.ok) {  // a plain sequence's cell, read in place (EventList::at)
        set(in.a, tagged(B.CreateLoad(i64, plain_cell(pc)), cell_tag_));
        return next(pc);
      }
      Value* r = B.CreateCall(runtime(RuntimeCall::seq_get), {list(in.b), get(in.c)});
      common_case(B.CreateExtractValue(r, 1), pc);
      set(in.a, B.CreateExtractValue(r, 0));
      return next(pc);
    }
    case Op::SEQ_GET_FIELD: {
      Value* r = B.CreateCall(runtime(RuntimeCall::seq_get_field), {list(in.b), get(in.c), k(in.imm)});
      common_case(B.CreateExtractValue(r, 1), pc);
      set(in.a, B.CreateExtractValue(r, 0));
      return next(pc);
    }
    case Op::SEQ_SET:
      if (layout_.ok && in.imm == 1) {  // lowered as a narrow list: its byte, written in place (EventList::set_value)
        Value* l = list(in.b);
        Value* pos = narrow_in_range(l, pc);
        // a bool slot holds 0 or 1 (asserted by set_value): its low byte is the row
        Value* byte = B.CreateTrunc(get(in.a), B.getInt8Ty());
        tagged(B.CreateStore(byte, B.CreateInBoundsGEP(B.getInt8Ty(), header(ptr, l, layout_.bytes), pos)), cell_tag_);
        return next(pc);
      }
      if (layout_.ok) {  // a plain sequence's cell, written in place (EventList::at_mut)
        Value* cell = plain_cell(pc);
        tagged(B.CreateStore(get(in.a), cell), cell_tag_);
        return next(pc);
      }
      common_case(B.CreateCall(runtime(RuntimeCall::seq_set), {list(in.b), get(in.c), get(in.a)}), pc);
      return next(pc);
    case Op::SEQ_PUSH: {
      if (!layout_.ok) return lower_step(pc);
      if (is_text(in.a)) {
        // exactly EventList::push of a `seq text` (text1) with room: the cell in place, retained;
        // else pure_step
        Value* l = list(in.b);
        Value* count = header(i64, l, layout_.count);
        Value* ok = B.CreateAnd(B.CreateICmpNE(header(B.getInt8Ty(), l, layout_.text1), B.getInt8(0)),
                                B.CreateICmpSLT(count, header(i64, l, layout_.cap_rows)));
        common_case(ok, pc);
        Value* v = get(in.a);
        Value* begin = header(ptr, l, layout_.begin);
        tagged(B.CreateStore(v, B.CreateInBoundsGEP(i64, begin, count)), cell_tag_);
        Value* grown = B.CreateAdd(count, k(1));
        tagged(B.CreateStore(grown, field(l, layout_.count)), list_tag_);
        tagged(B.CreateStore(B.CreateInBoundsGEP(i64, begin, grown), field(l, layout_.end)), list_tag_);
        tagged(B.CreateStore(B.CreateAdd(header(i64, l, layout_.version), k(1)), field(l, layout_.version)), list_tag_);
        retain_text(v, pc);
        return next(pc);
      }
      // exactly EventList::push of a plain sequence with room (push_fits); else pure_step,
      // which grows the list (or faults) as the interpreter does
      Value* l = list(in.b);
      Value* count = header(i64, l, layout_.count);
      Value* ok = B.CreateAnd(is_plain(l), B.CreateICmpSLT(count, header(i64, l, layout_.cap_rows)));
      common_case(ok, pc);
      Value* begin = header(ptr, l, layout_.begin);
      tagged(B.CreateStore(get(in.a), B.CreateInBoundsGEP(i64, begin, count)), cell_tag_);
      Value* grown = B.CreateAdd(count, k(1));
      tagged(B.CreateStore(grown, field(l, layout_.count)), list_tag_);
      tagged(B.CreateStore(B.CreateInBoundsGEP(i64, begin, grown), field(l, layout_.end)), list_tag_);
      tagged(B.CreateStore(B.CreateAdd(header(i64, l, layout_.version), k(1)), field(l, layout_.version)), list_tag_);
      return next(pc);
    }
    case Op::ITER_NEXT: {
      // exec_ITER_NEXT's inline path: spend the step, then the next row of the iterator's leaf
      // run. An empty run of an iterator whose rows come in runs of `width` cells is refilled
      // through pure_jit_iter_refill (the interpreter's own vm::take_leaf_run). When the
      // budget is spent or the iterator is of another kind (rows with texts or of another
      // width, an event list, a live list an event may change), pure_step runs the whole
      // instruction: the same step, fault and message as the interpreter.
      uint32_t width = jit::iter_row_width(fn_.code, pc);
      // a text's pieces: the runtime call alone, without the run's inline path (another
      // iterator in the same slot then takes the call's answer 2 and pure_step)
      if (walks_pieces(in)) return next_piece(pc);
      if (!width) return lower_step(pc);
      Value* steps_at = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), core, vm::kCoreStepsLeft);
      Value* steps = tagged(B.CreateLoad(i64, steps_at), core_tag_);
      Value* iters = tagged(B.CreateLoad(ptr, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), core, vm::kCoreIters)), core_tag_);
      Value* it = B.CreateInBoundsGEP(B.getInt8Ty(), iters, B.CreateMul(get(in.b), k(iter_layout_.size)));
      Value* left_at = field(it, iter_layout_.run_left);
      Value* left = tagged(B.CreateLoad(i64, left_at), iter_tag_);
      Value* row_width = tagged(B.CreateLoad(B.getInt32Ty(), field(it, iter_layout_.width)), iter_tag_);
      Value* same_width = B.CreateICmpEQ(row_width, B.getInt32(width));
      Value* ok = B.CreateAnd(B.CreateAnd(B.CreateICmpSGT(steps, k(0)), B.CreateICmpNE(left, k(0))), same_width);
      BasicBlock* fast = BasicBlock::Create(C, "fast" + std::to_string(pc), F);
      BasicBlock* slow = BasicBlock::Create(C, "slow" + std::to_string(pc), F);
      BasicBlock* any = BasicBlock::Create(C, "anyrow" + std::to_string(pc), F);
      BasicBlock* runs = BasicBlock::Create(C, "runrow" + std::to_string(pc), F);
      BasicBlock* refill = BasicBlock::Create(C, "refill" + std::to_string(pc), F);
      BasicBlock* spent = BasicBlock::Create(C, "runspent" + std::to_string(pc), F);
      BasicBlock* got = BasicBlock::Create(C, "newrun" + std::to_string(pc), F);
      B.CreateCondBr(ok, fast, slow, likely_);
      B.SetInsertPoint(slow);
      B.CreateCondBr(same_width, runs, any);
      // an iterator whose rows come in runs of this width (vm/lists.cpp ST_ITER), its run
      // empty: with budget left, spend the step and take the next run (vm::take_leaf_run, as
      // the interpreter does), jumping to IMM when there is none
      B.SetInsertPoint(runs);
      B.CreateCondBr(B.CreateICmpSGT(steps, k(0)), refill, spent, likely_);
      B.SetInsertPoint(refill);
      tagged(B.CreateStore(B.CreateSub(steps, k(1)), steps_at), core_tag_);
      Value* taken = B.CreateCall(runtime(RuntimeCall::iter_refill), {it});
      B.CreateCondBr(B.CreateICmpNE(B.CreateExtractValue(taken, 1), k(0)), got,
                     target(pc + static_cast<uint32_t>(in.imm)));
      B.SetInsertPoint(got);
      Value* first = B.CreateIntToPtr(B.CreateExtractValue(taken, 0), ptr);
      for (uint32_t i = 0; i < width; ++i)
        set(in.a + i, tagged(B.CreateLoad(i64, B.CreateConstInBoundsGEP1_64(i64, first, i)), cell_tag_));
      next(pc);
      // the budget spent: pure_step raises the interpreter's fault; the instruction reads B
      // and writes A..A+width-1 or nothing
      B.SetInsertPoint(spent);
      std::vector<uint32_t> row_slots{in.b};
      for (uint32_t i = 0; i < width; ++i) row_slots.push_back(in.a + i);
      lower_step(pc, &row_slots);
      B.SetInsertPoint(any);  // another kind of iterator: its rows may hold texts, or more cells
      lower_step(pc);
      B.SetInsertPoint(fast);
      tagged(B.CreateStore(B.CreateSub(steps, k(1)), steps_at), core_tag_);
      Value* run_at = field(it, iter_layout_.run);
      Value* row = tagged(B.CreateLoad(ptr, run_at), iter_tag_);
      for (uint32_t i = 0; i < width; ++i)
        set(in.a + i, tagged(B.CreateLoad(i64, B.CreateConstInBoundsGEP1_64(i64, row, i)), cell_tag_));
      tagged(B.CreateStore(B.CreateConstInBoundsGEP1_64(i64, row, width), run_at), iter_tag_);
      tagged(B.CreateStore(B.CreateSub(left, k(1)), left_at), iter_tag_);
      return next(pc);
    }
    case Op::ST_ITER: {
      // vm::st_iter through its runtime call: the key slots in the frame before it, the
      // iterator's slot A read back after it; a fault leaves as pure_step's would
      std::vector<uint32_t> io;
      step_slots(in, io);
      store_slots(io, true);
      Value* done = B.CreateCall(runtime(RuntimeCall::st_iter), {core, base, pc_const(&in)});
      BasicBlock* cont = BasicBlock::Create(C, "iter" + std::to_string(pc), F);
      BasicBlock* faulted = BasicBlock::Create(C, "iterfault" + std::to_string(pc), F);
      B.CreateCondBr(B.CreateICmpNE(done, k(0)), cont, faulted, likely_);
      B.SetInsertPoint(faulted);
      store_slots(io, false);
      B.CreateBr(faulted_bb_);
      B.SetInsertPoint(cont);
      B.CreateStore(tagged(B.CreateLoad(i64, slot_ptr(in.a)), slot_tag_), slots_[in.a]);
      return next(pc);
    }
    case Op::ITER_END:  // vm::release_iterators: touches no slot, never faults
      B.CreateCall(runtime(RuntimeCall::iter_end), {core, get(in.b)});
      return next(pc);
    case Op::SEQ_SET_FIELD:
      common_case(B.CreateCall(runtime(RuntimeCall::seq_set_field), {list(in.b), get(in.c), k(in.imm), get(in.a)}), pc);
      return next(pc);
    // keyed lists, key in slot C (one cell): the row through pure_jit_map_row, or the one the
    // instruction before found (jit::rows_known); a longer key, a missing row or a text field:
    // pure_step (after which no row is known)
    case Op::MAP_ENSURE: case Op::MAP_GET_FIELD: case Op::MAP_SET_FIELD: {
      if (!layout_.ok || (in.op != Op::MAP_ENSURE && (in.imm < 0 || in.imm >= 64))) {
        B.CreateStore(k(0), row_var_);
        return lower_step(pc);
      }
      Value* l = list(in.b);
      Value* row;
      if (row_known_[pc]) {
        Value* known = B.CreateLoad(i64, row_var_);
        BasicBlock* from = B.GetInsertBlock();
        BasicBlock* find = BasicBlock::Create(C, "find" + std::to_string(pc), F);
        BasicBlock* have = BasicBlock::Create(C, "row" + std::to_string(pc), F);
        B.CreateCondBr(B.CreateICmpNE(known, k(0)), have, find, likely_);
        B.SetInsertPoint(find);
        Value* found = B.CreateCall(runtime(RuntimeCall::map_row), {l, get(in.c)});
        B.CreateBr(have);
        B.SetInsertPoint(have);
        PHINode* phi = B.CreatePHI(i64, 2, "row");
        phi->addIncoming(known, from);
        phi->addIncoming(found, find);
        row = phi;
      } else {
        row = B.CreateCall(runtime(RuntimeCall::map_row), {l, get(in.c)});
      }
      Value* ok = B.CreateICmpNE(row, k(0));
      if (in.op != Op::MAP_ENSURE)  // the field is not text (EventList::NativeLayout::text_cols)
        ok = B.CreateAnd(ok, B.CreateICmpEQ(B.CreateAnd(header(i64, l, layout_.text_cols), k(int64_t{1} << in.imm)), k(0)));
      {
        BasicBlock* fast = BasicBlock::Create(C, "fast" + std::to_string(pc), F);
        BasicBlock* slow = BasicBlock::Create(C, "slow" + std::to_string(pc), F);
        B.CreateCondBr(ok, fast, slow, likely_);
        B.SetInsertPoint(slow);
        B.CreateStore(k(0), row_var_);
        lower_step(pc);
        B.SetInsertPoint(fast);
      }
      B.CreateStore(row, row_var_);
      Value* at_field = B.CreateInBoundsGEP(i64, B.CreateIntToPtr(row, ptr), k(in.imm));
      if (in.op == Op::MAP_GET_FIELD) set(in.a, tagged(B.CreateLoad(i64, at_field), cell_tag_));
      if (in.op == Op::MAP_SET_FIELD) tagged(B.CreateStore(get(in.a), at_field), cell_tag_);
      return next(pc);
    }
    case Op::INT_TEXT: {  // a new text and slot A's old one released (runtime call); else pure_step
      Value* r = B.CreateCall(runtime(RuntimeCall::int_text), {get(in.b), get(in.a)});
      common_case(B.CreateExtractValue(r, 1), pc);
      set(in.a, B.CreateExtractValue(r, 0));
      return next(pc);
    }
    case Op::CALL_INLINED: {
      // exec_CALL_INLINED: the slot check first (a failing one leaves before the step, and the
      // interpreter spends it and faults), then the step as LOOP spends it
      Value* stack_end = tagged(B.CreateLoad(ptr, B.CreateConstInBoundsGEP1_64(Type::getInt8Ty(C), core, vm::kCoreStackEnd)), core_tag_);
      Value* frame_end = B.CreateConstInBoundsGEP1_64(i64, base, in.b);
      check(B.CreateICmpULE(B.CreatePtrToInt(frame_end, i64), B.CreatePtrToInt(stack_end, i64)), pc);
      spend_step(pc, in);
      return next(pc);
    }
    default:
      // lowering_of says Native only for the ops above; a release build that breaks that leaves
      // to the interpreter here, which runs the instruction itself
      PURE_ASSERT(!"jit-llvm: an op lowering_of calls native has no case in lower()");
      B.CreateBr(leave_at(pc));
      return;
  }
}

}  // namespace pure::jit::llvm_ir
