// jit-llvm/llvm_lowering.cpp — LoopLowering's frame of a loop (llvm_lowering.h): the constructor
// (the function, runtime call declarations, alias tags), build() (slots in allocas, entry dispatch,
// exits, the budget and fault blocks), and the helpers per-op lowering shares: text counts, a
// text's pieces, list cells, common cases and the pure_step fallback.
#include "jit-llvm/llvm_lowering.h"

#include "base/assert.h"

namespace pure::jit::llvm_ir {

LoopLowering::LoopLowering(LLVMContext& ctx, Module& module, const vm::Function& fn, uint32_t loop_id, const std::string& name)
    : C(ctx), M(module), B(ctx), fn_(fn), loop_(fn.loops[loop_id]), loop_id_(loop_id) {
  i64 = Type::getInt64Ty(C);
  f64 = Type::getDoubleTy(C);
  ptr = PointerType::getUnqual(C);
  FunctionType* type = FunctionType::get(ptr, {ptr, ptr, ptr}, false);
  F = Function::Create(type, Function::ExternalLinkage, name, M);
  F->setDoesNotThrow();
  F->addParamAttr(0, Attribute::NoAlias);
  F->addParamAttr(1, Attribute::NoAlias);
  core = F->getArg(0);
  base = F->getArg(1);
  code_sym_ = new GlobalVariable(M, Type::getInt8Ty(C), true, GlobalValue::ExternalLinkage, nullptr, kCodeSymbol);
  faulted_sym_ = new GlobalVariable(M, Type::getInt8Ty(C), true, GlobalValue::ExternalLinkage, nullptr, kFaultedSymbol);
  step_fn = M.getOrInsertFunction("pure_step", FunctionType::get(ptr, {ptr, ptr, ptr}, false));
  cast<Function>(step_fn.getCallee())->setDoesNotThrow();
  // every runtime call of jit-common/runtime_calls.def, typed from its C++ declaration
#define PURE_RUNTIME_CALL(name, result, parameters, memory) \
declare_runtime(RuntimeCall::name, "pure_jit_" #name, function_type(C, &pure_jit_##name), Memory::memory);
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
  text_slot_.assign(fn.stack_need + 1u, false);
  for (uint16_t t : fn.text_slots)
    if (t < text_slot_.size()) text_slot_[t] = true;
  // Type-based alias classes: frame slots, the VMCore, event-list headers and their rows' cells
  // never overlap, so a store to a cell keeps a list's count and rows pointer in registers.
  MDBuilder md(C);
  MDNode* root = md.createTBAARoot("pure native memory");
  auto tag = [&](const char* name) {
    MDNode* type = md.createTBAAScalarTypeNode(name, root);
    return md.createTBAAStructTagNode(type, type, 0);
  };
  slot_tag_ = tag("frame slot");
  core_tag_ = tag("vm core");
  list_tag_ = tag("event list header");
  cell_tag_ = tag("event list cell");
  iter_tag_ = tag("iterator");
  text_tag_ = tag("text header");
  // The common cases (no fault, the fast path, budget left) are far the likelier: the register
  // allocator then keeps the slots in registers along them and spills on the slow paths.
  likely_ = md.createBranchWeights(2000, 1);
  unlikely_ = md.createBranchWeights(1, 2000);
}

void LoopLowering::build() {
  const std::vector<Instr>& code = fn_.code;
  in_region_.assign(code.size(), false);
  for (uint32_t b : loop_.blocks)
    for (uint32_t pc = fn_.blocks[b].start_pc; pc < fn_.blocks[b].end_pc; ++pc) in_region_[pc] = true;
  // the slots natively compiled instructions use
  slots_.assign(fn_.stack_need + 1, nullptr);
  std::vector<bool> used(fn_.stack_need + 1, false);
  for (uint32_t pc = 0; pc < code.size(); ++pc) {
    if (!in_region_[pc] || lowering_of(code[pc].op) != Lowering::Native) continue;
    const Instr& in = code[pc];
    // the operands that hold a value (ir/ops.def's KINDS), but for two runs whose slots the
    // lowering picks itself: ITER_NEXT's row (as wide as jit::iter_row_width says) and
    // ST_ITER's key cells, which stay in the frame for pure_jit_st_iter
    const uint32_t operand[3] = {in.a, in.b, in.c};
    for (int i = 0; i < 3; ++i)
      if (ir::op_kind(in.op, i) != ir::ValueKind::None && !(in.op == Op::ITER_NEXT && i == 0) &&
          !(in.op == Op::ST_ITER && i == 2))
        used.at(operand[i]) = true;
    if (in.op == Op::ITER_NEXT)
      for (uint32_t i = 0; i < jit::iter_row_width(code, pc); ++i) used.at(in.a + i) = true;
  }
  BasicBlock* entry = BasicBlock::Create(C, "entry", F);
  B.SetInsertPoint(entry);
  base_var_ = B.CreateAlloca(ptr, nullptr, "basevar");
  row_var_ = B.CreateAlloca(i64, nullptr, "rowvar");
  B.CreateStore(k(0), row_var_);
  row_known_ = jit::rows_known(fn_, in_region_);
  consts_ = jit::entry_constants(fn_);
  for (uint32_t s = 0; s < used.size(); ++s)
    if (used[s]) {
      slots_[s] = B.CreateAlloca(i64, nullptr, "s" + std::to_string(s));
      // an entry constant is the same in the frame wherever the loop runs: its value, never
      // stored back or reloaded (LLVM then folds it: `/ 2` becomes a shift)
      if (consts_.is(s)) B.CreateStore(k(consts_.value[s]), slots_[s]);
      else tracked_.push_back(s);
    }
  B.CreateStore(base, base_var_);
  // A list slot the loop reads and never writes holds the same live list wherever the loop
  // runs (it was set before the loop, as every read slot is): its pointer, loaded once here as
  // non-null and dereferenceable (the only load of the slot on entry, so no other load absorbs
  // the facts), lets LLVM hoist the list's header loads (count, rows, the narrow flag) out of a
  // loop that does not change them (sieve's and spectralnorm's loops).
  const std::vector<bool> written = jit::written_in(fn_, in_region_);
  list_ptr_.assign(slots_.size(), nullptr);
  MDNode* nonnull = MDNode::get(C, {});
  MDNode* bytes = MDNode::get(C, {ConstantAsMetadata::get(ConstantInt::get(i64, sizeof(rt::EventList)))});
  MDNode* aligned = MDNode::get(C, {ConstantAsMetadata::get(ConstantInt::get(i64, alignof(rt::EventList)))});
  for (uint16_t s : fn_.list_slots)
    if (s < slots_.size() && slots_[s] && !consts_.is(s) && !(s < written.size() && written[s])) {
      LoadInst* p = tagged(B.CreateLoad(ptr, slot_ptr(s), "list" + std::to_string(s)), slot_tag_);
      p->setMetadata(LLVMContext::MD_nonnull, nonnull);
      p->setMetadata(LLVMContext::MD_dereferenceable, bytes);
      p->setMetadata(LLVMContext::MD_align, aligned);  // so that its 8-byte fields load speculatively
      p->setAlignment(Align(8));
      list_ptr_[s] = p;
    }
  for (uint32_t s : tracked_)
    B.CreateStore(list_ptr_[s] ? B.CreatePtrToInt(list_ptr_[s], i64)
                               : static_cast<Value*>(tagged(B.CreateLoad(i64, slot_ptr(s)), slot_tag_)),
                  slots_[s]);
  // A slot no instruction of the loop writes (jit::written_in: natively or through pure_step) has
  // in the frame the value loaded above wherever the loop runs: loaded once, never stored back or
  // reloaded. Each exit and slow path stores only the others (fewer values live into the shared
  // exit block, whose merges grow with exits times slots: fannkuch's nest 27 slots, 30 exits).
  tracked_.erase(std::remove_if(tracked_.begin(), tracked_.end(), [&](uint32_t s) { return !(s < written.size() && written[s]); }),
                 tracked_.end());

  leave_bb_ = BasicBlock::Create(C, "leave", F);
  budget_bb_ = BasicBlock::Create(C, "budget", F);
  faulted_bb_ = BasicBlock::Create(C, "faulted", F);
  bb_.assign(code.size(), nullptr);
  for (uint32_t pc = 0; pc < code.size(); ++pc)
    if (in_region_[pc]) bb_[pc] = BasicBlock::Create(C, "pc" + std::to_string(pc), F);

  // enter at one of the LOOP / ITER_NEXT instructions that head the loop or a loop nested in
  // it (BackendKind::nested_entries: the tier publishes this code for those too). Every slot is
  // loaded from the frame above whichever it is, and the frame is the same: inner loops are
  // never in an inlined callee (vm/load.cpp: the callee has no LOOP).
  Value* ip = pc_offset(F->getArg(2));
  BasicBlock* unknown = BasicBlock::Create(C, "unknown_entry", F);
  SwitchInst* sw = B.CreateSwitch(ip, unknown);
  B.SetInsertPoint(unknown);  // never taken: the interpreter enters only at those
  B.CreateRet(F->getArg(2));

  B.SetInsertPoint(leave_bb_);
  leave_pc_ = B.CreatePHI(ptr, 4, "resume");
  store_back();
  B.CreateRet(leave_pc_);

  B.SetInsertPoint(budget_bb_);
  budget_pc_ = B.CreatePHI(ptr, 2, "budget_pc");
  store_back();
  B.CreateRet(B.CreateCall(step_fn, {core, base_var_, budget_pc_}));

  B.SetInsertPoint(faulted_bb_);
  B.CreateRet(pc_const(vm::kFaulted));

  // a loop with loops inside it enters them through hubs (dispatch_nested_entries); one without
  // is entered at its own heads
  if (copied_entries_fit() || !dispatch_nested_entries(sw, entry, ip)) {
    head_bb_ = bb_;
    for (uint32_t pc = 0; pc < code.size(); ++pc)
      if (in_region_[pc] && vm::heads_loop(fn_, code[pc], static_cast<uint32_t>(loop_id_))) sw->addCase(offset_of(pc), bb_[pc]);
  }
  for (uint32_t pc = 0; pc < code.size(); ++pc)
    if (in_region_[pc]) {
      B.SetInsertPoint(head_bb_[pc]);
      lower(pc);
    }
  if (head_bb_ != bb_) return;  // hubs made

  // Copies for small nests: a nested head enters a copy of what follows it up to this loop's own
  // head (the rest of that pass), which then goes on in the loop's code there.
  const std::vector<BasicBlock*> main_blocks = bb_;
  for (uint32_t head = 0; head < code.size(); ++head) {
    if (!in_region_[head] || !nested_head(head)) continue;
    const std::vector<bool> copied = rest_of_pass(head);
    for (uint32_t pc = 0; pc < code.size(); ++pc)
      if (copied[pc]) bb_[pc] = BasicBlock::Create(C, "in" + std::to_string(head) + "_pc" + std::to_string(pc), F);
    for (uint32_t pc = 0; pc < code.size(); ++pc)
      if (copied[pc]) {
        B.SetInsertPoint(bb_[pc]);
        lower(pc);
      }
    sw->addCase(offset_of(head), bb_[head]);
    bb_ = main_blocks;
  }
}

bool LoopLowering::nested_head(uint32_t pc) const {
  const Instr& in = fn_.code[pc];
  for (uint32_t l = 0; l < fn_.loops.size(); ++l)
    if (vm::heads_loop(fn_, in, l)) {
      if (l == static_cast<uint32_t>(loop_id_)) return false;
      for (int32_t x = static_cast<int32_t>(l); x >= 0; x = fn_.loops[static_cast<size_t>(x)].parent)
        if (x == loop_id_) return true;
      return false;
    }
  return false;
}

std::vector<bool> LoopLowering::rest_of_pass(uint32_t head) const {
  const std::vector<Instr>& code = fn_.code;
  std::vector<bool> copied(code.size(), false);
  std::vector<uint32_t> work{head};
  while (!work.empty()) {
    uint32_t pc = work.back();
    work.pop_back();
    if (pc >= code.size() || !in_region_[pc] || copied[pc] || vm::heads_loop(fn_, code[pc], static_cast<uint32_t>(loop_id_)))
      continue;
    copied[pc] = true;
    work.push_back(pc + 1);  // where it falls through, or a dead block when it never does
    if (ir::op_jumps(code[pc].op)) work.push_back(static_cast<uint32_t>(static_cast<int64_t>(pc) + code[pc].imm));
  }
  return copied;
}

// Copies of the rest of the pass for each nested head keep the nest's loops as LLVM compiled them
// before hubs, with nothing more on any path (sieve's nest at threshold 0: 1.13G instructions with
// copies, 1.27G with hubs, its inner loop then storing the step meter at every pass); they are
// used while all of them together are no larger than the loop itself, hubs past that (fannkuch's
// nest: copies 5 times the loop).
bool LoopLowering::copied_entries_fit() const {
  uint64_t loop_size = 0, copies = 0;
  for (uint32_t pc = 0; pc < fn_.code.size(); ++pc) {
    if (!in_region_[pc]) continue;
    ++loop_size;
    if (!nested_head(pc)) continue;
    const std::vector<bool> copied = rest_of_pass(pc);
    copies += static_cast<uint64_t>(std::count(copied.begin(), copied.end(), true));
  }
  return copies <= loop_size;
}

// Entered at a nested head, a loop's cycle would have two ways in: irreducible, so LLVM would
// keep none of it in registers (sieve's inner loop reloaded its list's bytes pointer and stored
// the step meter at every pass). So every loop of the nest with loops inside it gets a hub: the
// block its back edges and its way in from outside jump to (its header, for LLVM), which reads
// where the code was entered (`entered`, set once on entry to the head's pc offset), clears it,
// and goes on at the loop's header, or toward the head entered: to a head of its own (a rotated
// loop's LOOP at its latch, or a head before an inner loop), to the hub of the child holding it,
// or, for a head in the middle of a child with no loops inside it, to a copy of the rest of that
// child's pass (a rotated loop's LOOP and back jump), which goes on in the main code at the
// child's header or where it leaves the child. Every cycle keeps one way in, and what is copied is
// at most one innermost pass (the copies were of the rest of the enclosing loop's pass, for each
// nested head: fannkuch's outer loop 13,708 LLVM instructions, too large to compile). After the
// first pass `entered` is clear, and a hub costs one predictable branch a pass of its loop.
// False (nothing made): a nest of one loop, or a loop without a head.
bool LoopLowering::dispatch_nested_entries(SwitchInst* sw, BasicBlock* entry, Value* ip) {
  const std::vector<Instr>& code = fn_.code;
  const size_t loops = fn_.loops.size();
  const auto top = static_cast<uint32_t>(loop_id_);
  auto contains = [&](uint32_t outer, uint32_t inner) {  // outer is inner or encloses it
    for (int32_t x = static_cast<int32_t>(inner); x >= 0; x = fn_.loops[static_cast<size_t>(x)].parent)
      if (x == static_cast<int32_t>(outer)) return true;
    return false;
  };
  std::vector<bool> in_nest(loops, false), has_child(loops, false);
  for (uint32_t l = 0; l < loops; ++l) in_nest[l] = contains(top, l);
  for (uint32_t l = 0; l < loops; ++l)
    if (in_nest[l] && l != top) has_child[static_cast<size_t>(fn_.loops[l].parent)] = true;
  if (!has_child[top]) return false;
  // per pc of the region: the innermost loop of the nest holding it, whether it starts a loop's
  // header block, and the loop it heads (LOOP, ITER_NEXT), if any
  std::vector<uint32_t> innermost(code.size(), top);
  std::vector<bool> header_start(code.size(), false);
  std::vector<int64_t> heads(code.size(), -1);
  for (uint32_t l = 0; l < loops; ++l) {
    if (!in_nest[l]) continue;
    header_start.at(fn_.blocks[fn_.loops[l].header].start_pc) = true;
    for (uint32_t b : fn_.loops[l].blocks)
      for (uint32_t pc = fn_.blocks[b].start_pc; pc < fn_.blocks[b].end_pc; ++pc)
        if (fn_.loops[l].depth > fn_.loops[innermost[pc]].depth) innermost[pc] = l;
  }
  bool any = false;
  for (uint32_t pc = 0; pc < code.size(); ++pc)
    if (in_region_[pc])
      for (uint32_t l = 0; l < loops; ++l)
        if (in_nest[l] && vm::heads_loop(fn_, code[pc], l)) {
          heads[pc] = l;
          any = true;
        }
  if (!any) return false;

  head_bb_ = bb_;  // where each instruction is lowered; bb_ (the jump targets) gets the hubs
  std::vector<BasicBlock*> hub(loops, nullptr);
  for (uint32_t l = 0; l < loops; ++l)
    if (in_nest[l] && has_child[l]) {
      hub[l] = BasicBlock::Create(C, "hub" + std::to_string(l), F);
      bb_[fn_.blocks[fn_.loops[l].header].start_pc] = hub[l];
    }
  auto hub_of = [&](uint32_t pc) {  // the innermost loop with a hub holding pc
    uint32_t x = innermost[pc];
    while (!hub[x]) x = static_cast<uint32_t>(fn_.loops[x].parent);
    return x;
  };
  // Where hub(hub_of(h)) sends an entry at head h: h itself, or a copy of the rest of its pass
  // when h is in the middle of a child without a hub.
  auto copy_from = [&](uint32_t h) -> BasicBlock* {
    const uint32_t owner = hub_of(h);
    if (innermost[h] == owner || header_start[h]) return head_bb_[h];
    std::vector<bool> copied(code.size(), false);
    std::vector<uint32_t> work{h};
    while (!work.empty()) {
      uint32_t pc = work.back();
      work.pop_back();
      if (pc >= code.size() || !in_region_[pc] || copied[pc] || header_start[pc] || innermost[pc] == owner ||
          !contains(owner, innermost[pc]))
        continue;
      copied[pc] = true;
      work.push_back(pc + 1);  // where it falls through, or a dead block when it never does
      if (ir::op_jumps(code[pc].op)) work.push_back(static_cast<uint32_t>(static_cast<int64_t>(pc) + code[pc].imm));
    }
    const std::vector<BasicBlock*> main_blocks = bb_;
    for (uint32_t pc = 0; pc < code.size(); ++pc)
      if (copied[pc]) bb_[pc] = BasicBlock::Create(C, "in" + std::to_string(h) + "_pc" + std::to_string(pc), F);
    BasicBlock* start = bb_[h];
    for (uint32_t pc = 0; pc < code.size(); ++pc)
      if (copied[pc]) {
        B.SetInsertPoint(bb_[pc]);
        lower(pc);
      }
    bb_ = main_blocks;
    return start;
  };

  const int64_t none = -1;
  IRBuilder<> eb(entry, entry->begin());
  AllocaInst* entered = eb.CreateAlloca(i64, nullptr, "entered");
  B.SetInsertPoint(sw);
  B.CreateStore(ip, entered);
  std::vector<SwitchInst*> route(loops, nullptr);
  std::vector<LoadInst*> at(loops, nullptr);
  for (uint32_t l = 0; l < loops; ++l) {
    if (!hub[l]) continue;
    B.SetInsertPoint(hub[l]);
    at[l] = B.CreateLoad(i64, entered);
    B.CreateStore(k(none), entered);
    route[l] = B.CreateSwitch(at[l], head_bb_[fn_.blocks[fn_.loops[l].header].start_pc]);
  }
  std::vector<BasicBlock*> down(loops, nullptr);  // from the parent's hub to this one, `entered` kept
  for (uint32_t h = 0; h < code.size(); ++h) {
    if (heads[h] < 0) continue;
    sw->addCase(offset_of(h), hub[top]);
    const uint32_t owner = hub_of(h);
    route[owner]->addCase(offset_of(h), copy_from(h));
    for (uint32_t x = owner; x != top; x = static_cast<uint32_t>(fn_.loops[x].parent)) {
      const auto parent = static_cast<uint32_t>(fn_.loops[x].parent);
      if (!down[x]) {
        down[x] = BasicBlock::Create(C, "hub" + std::to_string(parent) + "_to" + std::to_string(x), F);
        IRBuilder<> tb(down[x]);
        tb.CreateStore(at[parent], entered);
        tb.CreateBr(hub[x]);
      }
      route[parent]->addCase(offset_of(h), down[x]);
    }
  }
  return true;
}

void LoopLowering::declare_runtime(RuntimeCall call, const char* name, FunctionType* type, Memory memory) {
  FunctionCallee f = M.getOrInsertFunction(name, type);
  cast<Function>(f.getCallee())->setDoesNotThrow();
  if (memory == Memory::none) cast<Function>(f.getCallee())->setDoesNotAccessMemory();
  runtime_[static_cast<size_t>(call)] = f;
}

Constant* LoopLowering::pc_const(const void* pc) const {
  if (pc == static_cast<const void*>(vm::kFaulted)) return faulted_sym_;
  const auto offset = static_cast<const Instr*>(pc) - fn_.code.data();
  PURE_ASSERT(offset >= 0 && static_cast<size_t>(offset) < fn_.code.size());
  return ConstantExpr::getGetElementPtr(Type::getInt8Ty(C), code_sym_, offset_of(static_cast<uint32_t>(offset)));
}

BasicBlock* LoopLowering::target(uint32_t pc) {
  if (pc < in_region_.size() && in_region_[pc]) return bb_[pc];
  for (auto& [p, b] : exits_)
    if (p == pc) return b;
  BasicBlock* b = BasicBlock::Create(C, "exit" + std::to_string(pc), F);
  IRBuilder<> eb(b);
  eb.CreateBr(leave_bb_);
  leave_pc_->addIncoming(pc_const(at(pc)), b);
  exits_.push_back({pc, b});
  return b;
}

BasicBlock* LoopLowering::leave_at(uint32_t pc) {
  BasicBlock* b = BasicBlock::Create(C, "fault" + std::to_string(pc), F);
  IRBuilder<> eb(b);
  eb.CreateBr(leave_bb_);
  leave_pc_->addIncoming(pc_const(at(pc)), b);
  return b;
}

void LoopLowering::spend_step(uint32_t pc, const Instr& in) {
  Value* steps_at = B.CreateConstInBoundsGEP1_64(Type::getInt8Ty(C), core, vm::kCoreStepsLeft);
  Value* steps = tagged(B.CreateLoad(i64, steps_at), core_tag_);
  BasicBlock* spent = BasicBlock::Create(C, "spent" + std::to_string(pc), F);
  BasicBlock* cont = BasicBlock::Create(C, "step" + std::to_string(pc), F);
  B.CreateCondBr(B.CreateICmpSGT(steps, k(0)), cont, spent, likely_);
  B.SetInsertPoint(spent);
  budget_pc_->addIncoming(pc_const(&in), spent);
  B.CreateBr(budget_bb_);
  B.SetInsertPoint(cont);
  tagged(B.CreateStore(B.CreateSub(steps, k(1)), steps_at), core_tag_);
}

void LoopLowering::checked_int(Intrinsic::ID id, uint32_t pc, Value* x, Value* y) {
  Value* r = B.CreateBinaryIntrinsic(id, x, y);
  check(B.CreateNot(B.CreateExtractValue(r, 1)), pc);
  set(fn_.code[pc].a, B.CreateExtractValue(r, 0));
  next(pc);
}

void LoopLowering::next_piece(uint32_t pc) {
  const Instr& in = fn_.code[pc];
  const std::string tag = std::to_string(pc);
  Value* steps_at = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), core, vm::kCoreStepsLeft);
  Value* steps = tagged(B.CreateLoad(i64, steps_at), core_tag_);
  BasicBlock* have = BasicBlock::Create(C, "piecestep" + tag, F);
  BasicBlock* spent = BasicBlock::Create(C, "piecespent" + tag, F);
  B.CreateCondBr(B.CreateICmpSGT(steps, k(0)), have, spent, likely_);
  B.SetInsertPoint(spent);
  lower_step(pc);
  B.SetInsertPoint(have);
  tagged(B.CreateStore(B.CreateSub(steps, k(1)), steps_at), core_tag_);
  const std::vector<uint32_t> a_b{in.a, in.b};
  store_slots(a_b, true);
  Value* r = B.CreateCall(runtime(RuntimeCall::iter_next_piece), {core, base, pc_const(&in)});
  BasicBlock* got = BasicBlock::Create(C, "piece" + tag, F);
  BasicBlock* other = BasicBlock::Create(C, "notpieces" + tag, F);
  BasicBlock* fault = BasicBlock::Create(C, "piecefault" + tag, F);
  SwitchInst* sw = B.CreateSwitch(r, fault, 3);
  sw->addCase(cast<ConstantInt>(k(1)), got);
  sw->addCase(cast<ConstantInt>(k(2)), other);
  sw->addCase(cast<ConstantInt>(k(3)), target(pc + static_cast<uint32_t>(in.imm)));  // A unchanged
  sw->setMetadata(LLVMContext::MD_prof, MDBuilder(C).createBranchWeights({1, 2000, 1, 1}));
  B.SetInsertPoint(fault);
  store_slots({in.a}, false);
  B.CreateBr(faulted_bb_);
  B.SetInsertPoint(other);
  Value* now = tagged(B.CreateLoad(i64, steps_at), core_tag_);
  tagged(B.CreateStore(B.CreateAdd(now, k(1)), steps_at), core_tag_);
  lower_step(pc);
  B.SetInsertPoint(got);
  if (in.a < slots_.size() && slots_[in.a] && !consts_.is(in.a))
    B.CreateStore(tagged(B.CreateLoad(i64, slot_ptr(in.a)), slot_tag_), slots_[in.a]);
  next(pc);
}

bool LoopLowering::operand_slots(const Instr& in, std::vector<uint32_t>& slots) const {
  const uint32_t operand[3] = {in.a, in.b, in.c};
  for (int i = 0; i < 3; ++i)
    switch (ir::op_mode(in.op, i)) {
      case ir::OperandMode::Read: case ir::OperandMode::Write: case ir::OperandMode::Modify:
        slots.push_back(operand[i]);
        break;
      case ir::OperandMode::ReadRun: case ir::OperandMode::WriteRun:
        // as long as a list's rows, which the bytecode does not say: every tracked slot from it on
        for (uint32_t s : tracked_)
          if (s >= operand[i]) slots.push_back(s);
        break;
      case ir::OperandMode::Unused: case ir::OperandMode::Constant: break;
      default: return false;  // a callee's frame or a position: any slot
    }
  return true;
}

bool LoopLowering::step_slots(const Instr& in, std::vector<uint32_t>& slots) {
  switch (in.op) {
    case Op::ST_ITER: {  // A = the iterator; the key cells at C.. (vm/lists.cpp store_op)
      slots.push_back(in.a);
      int64_t keys = in.imm > 0 ? in.imm : in.imm < 0 ? 2 : 0;
      for (int64_t i = 0; i < keys; ++i) slots.push_back(in.c + static_cast<uint32_t>(i));
      return true;
    }
    case Op::ITER_END: slots.push_back(in.b); return true;  // releases iterators, no slot
    default: return false;
  }
}

void LoopLowering::count_text(Value* t, uint32_t pc, bool up) {
  std::string tag = std::to_string(pc) + (up ? "r" : "l");
  BasicBlock* counted = BasicBlock::Create(C, "count" + tag, F);
  BasicBlock* done = BasicBlock::Create(C, "counted" + tag, F);
  Value* p = B.CreateIntToPtr(t, ptr);
  BasicBlock* check = BasicBlock::Create(C, "vmtext" + tag, F);
  B.CreateCondBr(B.CreateICmpNE(t, k(0)), check, done, likely_);
  B.SetInsertPoint(check);
  Value* flags = tagged(B.CreateLoad(B.getInt16Ty(), field(p, layout_.text_flags)), text_tag_);
  B.CreateCondBr(B.CreateICmpEQ(B.CreateAnd(flags, B.getInt16(1)), B.getInt16(0)), counted, done, likely_);  // kTextStored
  B.SetInsertPoint(counted);
  Value* rc_at = field(p, layout_.text_rc);
  Value* rc = tagged(B.CreateLoad(B.getInt32Ty(), rc_at), text_tag_);
  Value* now = up ? B.CreateAdd(rc, B.getInt32(1)) : B.CreateSub(rc, B.getInt32(1));
  tagged(B.CreateStore(now, rc_at), text_tag_);
  if (up) {
    B.CreateBr(done);
  } else {
    BasicBlock* gone = BasicBlock::Create(C, "free" + tag, F);
    B.CreateCondBr(B.CreateICmpEQ(now, B.getInt32(0)), gone, done, unlikely_);
    B.SetInsertPoint(gone);
    B.CreateCall(runtime(RuntimeCall::text_free), {p});
    B.CreateBr(done);
  }
  B.SetInsertPoint(done);
}

Value* LoopLowering::plain_cell(uint32_t pc) {
  const Instr& in = fn_.code[pc];
  Value* l = list(in.b);
  Value* pos = get(in.c);
  Value* in_range = B.CreateICmpULT(pos, header(i64, l, layout_.count));
  common_case(B.CreateAnd(is_plain(l), in_range), pc);
  return B.CreateInBoundsGEP(i64, header(ptr, l, layout_.begin), pos);
}

Value* LoopLowering::narrow_in_range(Value* l, uint32_t pc) {
  Value* pos = get(fn_.code[pc].c);
  Value* ok = B.CreateAnd(is_narrow(l), B.CreateICmpULT(pos, header(i64, l, layout_.count)));
  check(ok, pc);
  return pos;
}

void LoopLowering::common_case(Value* ok, uint32_t pc) {
  BasicBlock* fast = BasicBlock::Create(C, "fast" + std::to_string(pc), F);
  BasicBlock* slow = BasicBlock::Create(C, "slow" + std::to_string(pc), F);
  if (ok->getType() != B.getInt1Ty()) ok = B.CreateICmpNE(ok, k(0));
  B.CreateCondBr(ok, fast, slow, likely_);
  B.SetInsertPoint(slow);
  lower_step(pc);
  B.SetInsertPoint(fast);
}

void LoopLowering::lower_step(uint32_t pc, const std::vector<uint32_t>* only) {
  const Instr& in = fn_.code[pc];
  std::vector<uint32_t> operands;
  if (!only && operand_slots(in, operands)) only = &operands;
  std::vector<uint32_t> some;
  if (only)
    for (uint32_t s : *only)
      if (s < slots_.size() && slots_[s] && !consts_.is(s) && std::find(some.begin(), some.end(), s) == some.end())
        some.push_back(s);
  auto store = [&](bool in_some) {
    for (uint32_t s : tracked_)
      if ((std::find(some.begin(), some.end(), s) != some.end()) == in_some)
        tagged(B.CreateStore(B.CreateLoad(i64, slots_[s]), slot_ptr(s)), slot_tag_);
  };
  if (only) store(true);
  else store_back();
  Value* nextpc = B.CreateCall(step_fn, {core, base_var_, pc_const(&in)});
  BasicBlock* ok = BasicBlock::Create(C, "stepped" + std::to_string(pc), F);
  BasicBlock* faulted = faulted_bb_;
  if (only) {
    // the frame current for the interpreter's fault: the slots the call had are read back (it
    // may have written them), then every tracked slot is stored from the one shared block, so a
    // slow path costs its operands, not the loop's every slot (compile time grew with slow paths
    // times tracked slots: issue 36)
    faulted = BasicBlock::Create(C, "stepfault" + std::to_string(pc), F);
    IRBuilder<>::InsertPointGuard guard(B);
    B.SetInsertPoint(faulted);
    for (uint32_t s : some) B.CreateStore(tagged(B.CreateLoad(i64, slot_ptr(s)), slot_tag_), slots_[s]);
    if (!store_faulted_bb_) {
      store_faulted_bb_ = BasicBlock::Create(C, "store_faulted", F);
      B.SetInsertPoint(store_faulted_bb_);
      store_back();
      B.CreateBr(faulted_bb_);
      B.SetInsertPoint(faulted);
    }
    B.CreateBr(store_faulted_bb_);
  }
  B.CreateCondBr(B.CreateICmpEQ(nextpc, pc_const(vm::kFaulted)), faulted, ok, unlikely_);
  B.SetInsertPoint(ok);
  if (only) {
    for (uint32_t s : some) B.CreateStore(tagged(B.CreateLoad(i64, slot_ptr(s)), slot_tag_), slots_[s]);
  } else {
    reload();
  }
  BasicBlock* other = BasicBlock::Create(C, "elsewhere" + std::to_string(pc), F);
  SwitchInst* sw = B.CreateSwitch(pc_offset(nextpc), other);
  auto add = [&](uint32_t to) {
    sw->addCase(offset_of(to), target(to));
  };
  if (pc + 1 < fn_.code.size()) add(pc + 1);
  if (ir::op_jumps(in.op) && in.imm != 1) add(pc + static_cast<uint32_t>(in.imm));
  B.SetInsertPoint(other);
  leave_pc_->addIncoming(nextpc, other);
  B.CreateBr(leave_bb_);
}

}  // namespace pure::jit::llvm_ir
