// jit-llvm/llvm_backend.cpp — the only translation unit that includes LLVM: lowers one loop of
// bytecode to LLVM IR, runs the O2 pipeline and links it with ORC's LLJIT.
//
// The native function has vm::NativeLoop's signature: (VMCore* core, Slot* base, const Instr* ip)
// -> the pc where the interpreter resumes. The slots the natively compiled instructions use live
// in allocas (SSA values after SROA/mem2reg): loaded from the frame at entry, stored back at
// every exit and around every pure_step call (which reads and writes the frame in memory).
// Exits: to a block outside the loop (its first pc), to an instruction that leaves to the
// interpreter (CALL, RET, FAIL), and to a faulting instruction (overflow, division by zero, num
// to int out of range), which the interpreter executes again and faults on with the same message.
// A spent budget at a LOOP runs that LOOP through pure_step, which raises the interpreter's own
// fault (returning the LOOP's pc would enter this native code again at once).
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SmallVectorMemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "base/assert.h"
#include "jit-llvm/backend.h"
#include "runtime/event_list.h"
#include "vm/engine.h"

namespace pure::jit {

using vm::Instr;
using vm::Op;

namespace {

using namespace llvm;
using llvm::Module;  // not pure::Module
using llvm::Type;    // not pure::Type

// The LLVM type of a C++ type in a runtime call's signature (jit-common/runtime_calls.def): the
// types that table may use. A call with another type fails to compile here.
template <typename T>
struct LlvmType;
template <>
struct LlvmType<void> {
  static Type* get(LLVMContext& c) { return Type::getVoidTy(c); }
};
template <>
struct LlvmType<double> {
  static Type* get(LLVMContext& c) { return Type::getDoubleTy(c); }
};
template <>
struct LlvmType<int64_t> {
  static Type* get(LLVMContext& c) { return Type::getInt64Ty(c); }
};
template <>
struct LlvmType<uint64_t> {
  static Type* get(LLVMContext& c) { return Type::getInt64Ty(c); }
};
template <typename T>
struct LlvmType<T*> {
  static Type* get(LLVMContext& c) { return PointerType::getUnqual(c); }
};
template <>
struct LlvmType<CellResult> {  // two registers
  static Type* get(LLVMContext& c) { return StructType::get(c, {Type::getInt64Ty(c), Type::getInt64Ty(c)}); }
};
template <typename R, typename... P>
FunctionType* function_type(LLVMContext& c, R (*)(P...) noexcept) {
  return FunctionType::get(LlvmType<R>::get(c), {LlvmType<P>::get(c)...}, false);
}

Constant* pc_const(Type* ptr, Type* i64, const void* pc) {
  return ConstantExpr::getIntToPtr(ConstantInt::get(i64, reinterpret_cast<uintptr_t>(pc)), ptr);
}

class LoopLowering {
 public:
  LoopLowering(LLVMContext& ctx, Module& module, const vm::Function& fn, uint32_t loop_id, const std::string& name)
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

  void build() {
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
    Value* ip = B.CreatePtrToInt(F->getArg(2), i64);
    BasicBlock* unknown = BasicBlock::Create(C, "unknown_entry", F);
    SwitchInst* sw = B.CreateSwitch(ip, unknown);
    std::vector<uint32_t> nested_heads;
    for (uint32_t pc = 0; pc < code.size(); ++pc) {
      if (!in_region_[pc]) continue;
      const Instr& in = code[pc];
      if (vm::heads_loop(fn_, in, static_cast<uint32_t>(loop_id_)))
        sw->addCase(ConstantInt::get(cast<IntegerType>(i64), reinterpret_cast<uintptr_t>(&in)), bb_[pc]);
      else if (enters(in))
        nested_heads.push_back(pc);
    }
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
    B.CreateRet(pc_const(ptr, i64, vm::kFaulted));

    for (uint32_t pc = 0; pc < code.size(); ++pc)
      if (in_region_[pc]) {
        B.SetInsertPoint(bb_[pc]);
        lower(pc);
      }

    // A nested head enters a copy of what follows it up to this loop's own head (the rest of
    // that pass), which then goes on in the loop's code there. Entered in the middle, the loop's
    // cycle would have two ways in: irreducible, so LLVM would keep none of it in registers (sieve's
    // inner loop reloaded its list's bytes pointer and stored the step meter at every pass).
    const std::vector<BasicBlock*> main_blocks = bb_;
    for (uint32_t head : nested_heads) {
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
      for (uint32_t pc = 0; pc < code.size(); ++pc)
        if (copied[pc]) bb_[pc] = BasicBlock::Create(C, "in" + std::to_string(head) + "_pc" + std::to_string(pc), F);
      for (uint32_t pc = 0; pc < code.size(); ++pc)
        if (copied[pc]) {
          B.SetInsertPoint(bb_[pc]);
          lower(pc);
        }
      sw->addCase(ConstantInt::get(cast<IntegerType>(i64), reinterpret_cast<uintptr_t>(&code[head])), bb_[head]);
      bb_ = main_blocks;
    }
  }

 private:
  LLVMContext& C;
  Module& M;
  IRBuilder<> B;
  const vm::Function& fn_;
  const vm::LoopInfo& loop_;
  int64_t loop_id_;
  Type *i64, *f64, *ptr;
  Function* F;
  Value *core, *base;
  FunctionCallee step_fn;
  FunctionCallee runtime_[kRuntimeCallCount];  // by RuntimeCall
  FunctionCallee runtime(RuntimeCall call) const { return runtime_[static_cast<size_t>(call)]; }
  // What a runtime call may touch (runtime_calls.def's MEMORY column).
  enum class Memory { memory, none };
  void declare_runtime(RuntimeCall call, const char* name, FunctionType* type, Memory memory) {
    FunctionCallee f = M.getOrInsertFunction(name, type);
    cast<Function>(f.getCallee())->setDoesNotThrow();
    if (memory == Memory::none) cast<Function>(f.getCallee())->setDoesNotAccessMemory();
    runtime_[static_cast<size_t>(call)] = f;
  }
  AllocaInst* row_var_ = nullptr;  // the keyed-list row the last MAP_* instruction found (jit::rows_known)
  std::vector<bool> row_known_;
  jit::EntryConstants consts_;  // slots that are constants in the loop (jit::entry_constants)
  std::vector<Value*> list_ptr_;  // per slot: a list the loop never replaces, loaded at entry
  std::vector<bool> text_slot_;  // the frame's text slots (Function::text_slots)
  bool is_text(uint32_t s) const { return s < text_slot_.size() && text_slot_[s]; }
  AllocaInst* base_var_ = nullptr;
  std::vector<AllocaInst*> slots_;
  std::vector<uint32_t> tracked_;
  std::vector<bool> in_region_;
  std::vector<BasicBlock*> bb_;
  std::vector<std::pair<uint32_t, BasicBlock*>> exits_;
  BasicBlock *leave_bb_, *budget_bb_, *faulted_bb_;
  PHINode *leave_pc_, *budget_pc_;
  const rt::EventList::NativeLayout layout_ = rt::EventList::native_layout();
  const vm::IteratorLayout iter_layout_ = vm::iterator_layout();
  MDNode *slot_tag_, *core_tag_, *list_tag_, *cell_tag_, *iter_tag_, *text_tag_;
  MDNode *likely_, *unlikely_;
  template <class I>
  I* tagged(I* i, MDNode* t) {
    i->setMetadata(LLVMContext::MD_tbaa, t);
    return i;
  }

  const Instr* at(uint32_t pc) const { return fn_.code.data() + pc; }
  // Whether `in` heads this loop or one nested in it.
  bool enters(const Instr& in) const {
    for (uint32_t l = 0; l < fn_.loops.size(); ++l)
      if (vm::heads_loop(fn_, in, l)) {
        for (int32_t x = static_cast<int32_t>(l); x >= 0; x = fn_.loops[static_cast<size_t>(x)].parent)
          if (x == loop_id_) return true;
        return false;
      }
    return false;
  }
  Value* slot_ptr(uint32_t s) { return B.CreateConstInBoundsGEP1_64(i64, base, s); }
  void store_back() {
    for (uint32_t s : tracked_) tagged(B.CreateStore(B.CreateLoad(i64, slots_[s]), slot_ptr(s)), slot_tag_);
  }
  void reload() {
    for (uint32_t s : tracked_) B.CreateStore(tagged(B.CreateLoad(i64, slot_ptr(s)), slot_tag_), slots_[s]);
  }
  Value* get(uint32_t s) { return B.CreateLoad(i64, slots_[s]); }
  Value* num(uint32_t s) { return B.CreateBitCast(get(s), f64); }
  void set(uint32_t s, Value* v) {
    if (v->getType() == f64) v = B.CreateBitCast(v, i64);
    else if (v->getType() != i64) v = B.CreateZExt(v, i64);
    B.CreateStore(v, slots_[s]);
  }
  Value* k(int64_t v) { return ConstantInt::get(i64, static_cast<uint64_t>(v), true); }

  // The block control goes to at pc: inside the loop, or an exit that resumes the interpreter.
  BasicBlock* target(uint32_t pc) {
    if (pc < in_region_.size() && in_region_[pc]) return bb_[pc];
    for (auto& [p, b] : exits_)
      if (p == pc) return b;
    BasicBlock* b = BasicBlock::Create(C, "exit" + std::to_string(pc), F);
    IRBuilder<> eb(b);
    eb.CreateBr(leave_bb_);
    leave_pc_->addIncoming(pc_const(ptr, i64, at(pc)), b);
    exits_.push_back({pc, b});
    return b;
  }
  // Leaves to the interpreter at pc (it executes that instruction next).
  BasicBlock* leave_at(uint32_t pc) {
    BasicBlock* b = BasicBlock::Create(C, "fault" + std::to_string(pc), F);
    IRBuilder<> eb(b);
    eb.CreateBr(leave_bb_);
    leave_pc_->addIncoming(pc_const(ptr, i64, at(pc)), b);
    return b;
  }
  void next(uint32_t pc) { B.CreateBr(target(pc + 1)); }
  void branch(Value* cond, uint32_t pc) {
    const Instr& in = fn_.code[pc];
    B.CreateCondBr(cond, target(pc + static_cast<uint32_t>(in.imm)), target(pc + 1));
  }
  // exec_LOOP's step: one step spent, or (none left) the budget exit at pc, where the interpreter
  // spends it and faults with its own message.
  void spend_step(uint32_t pc, const Instr& in) {
    Value* steps_at = B.CreateConstInBoundsGEP1_64(Type::getInt8Ty(C), core, vm::kCoreStepsLeft);
    Value* steps = tagged(B.CreateLoad(i64, steps_at), core_tag_);
    BasicBlock* spent = BasicBlock::Create(C, "spent" + std::to_string(pc), F);
    BasicBlock* cont = BasicBlock::Create(C, "step" + std::to_string(pc), F);
    B.CreateCondBr(B.CreateICmpSGT(steps, k(0)), cont, spent, likely_);
    B.SetInsertPoint(spent);
    budget_pc_->addIncoming(pc_const(ptr, i64, &in), spent);
    B.CreateBr(budget_bb_);
    B.SetInsertPoint(cont);
    tagged(B.CreateStore(B.CreateSub(steps, k(1)), steps_at), core_tag_);
  }
  // Goes on at the next instruction when ok, else leaves at pc.
  void check(Value* ok, uint32_t pc) {
    BasicBlock* cont = BasicBlock::Create(C, "ok" + std::to_string(pc), F);
    B.CreateCondBr(ok, cont, leave_at(pc), likely_);
    B.SetInsertPoint(cont);
  }
  void checked_int(Intrinsic::ID id, uint32_t pc, Value* x, Value* y) {
    Value* r = B.CreateBinaryIntrinsic(id, x, y);
    check(B.CreateNot(B.CreateExtractValue(r, 1)), pc);
    set(fn_.code[pc].a, B.CreateExtractValue(r, 0));
    next(pc);
  }

  void lower(uint32_t pc) {
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
        Value* done = B.CreateCall(runtime(RuntimeCall::st_iter), {core, base, pc_const(ptr, i64, &in)});
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

  // Whether a TEXT_ITER of the function makes the iterator in slot B of `in` (an ITER_NEXT): a
  // loop over a text's pieces, whatever its row width looks like (`for w in t.split(" ")` reads
  // as width 1; a pieces iterator has width 0 and no run).
  bool walks_pieces(const Instr& in) const {
    for (const Instr& from : fn_.code)
      if (from.op == Op::TEXT_ITER && from.a == in.b) return true;
    return false;
  }
  // ITER_NEXT at pc over a text's pieces (jit-aarch64's next_piece, the same contract): the step
  // spent here (none left: the whole instruction through pure_step, which faults as the
  // interpreter does), slots A (the piece before, which the call writes over in place or
  // releases) and B (the iterator) stored, pure_jit_iter_next_piece (vm::iter_next itself), slot A
  // read back. 1: on to pc + 1; 3: no more pieces, to IMM; 2: not a text's pieces after all: the
  // step given back and the instruction through pure_step; 0: the memory budget's fault after a
  // new piece was put in A: leave with the frame current but for A, which the call left as it is.
  void next_piece(uint32_t pc) {
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
    Value* r = B.CreateCall(runtime(RuntimeCall::iter_next_piece), {core, base, pc_const(ptr, i64, &in)});
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

  // The slots an instruction run through pure_step reads or writes, for the few whose set is
  // known here (the loop's stored-list walks); false: any slot (store and reload them all).
  static bool step_slots(const Instr& in, std::vector<uint32_t>& slots) {
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

  // Stores the tracked slots in `which` (or, with in_which false, all the others) to the frame.
  void store_slots(const std::vector<uint32_t>& which, bool in_which) {
    for (uint32_t s : tracked_)
      if ((std::find(which.begin(), which.end(), s) != which.end()) == in_which)
        tagged(B.CreateStore(B.CreateLoad(i64, slots_[s]), slot_ptr(s)), slot_tag_);
  }
  Value* list(uint32_t s) { return s < list_ptr_.size() && list_ptr_[s] ? list_ptr_[s] : B.CreateIntToPtr(get(s), ptr); }
  // text_retain / text_release of a text in a register (null, or a store text: not counted); a
  // count that reaches zero frees the text through pure_jit_text_free
  void retain_text(Value* t, uint32_t pc) { count_text(t, pc, true); }
  void release_text(Value* t, uint32_t pc) { count_text(t, pc, false); }
  void count_text(Value* t, uint32_t pc, bool up) {
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
  // A field of an EventList, at its byte offset (EventList::NativeLayout).
  Value* field(Value* l, uint32_t offset) { return B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), l, offset); }
  Value* header(Type* t, Value* l, uint32_t offset) { return tagged(B.CreateLoad(t, field(l, offset)), list_tag_); }
  Value* is_plain(Value* l) { return B.CreateICmpNE(header(B.getInt8Ty(), l, layout_.plain), B.getInt8(0)); }
  Value* is_narrow(Value* l) { return B.CreateICmpNE(header(B.getInt8Ty(), l, layout_.narrow), B.getInt8(0)); }
  // The cell at position C of the sequence B when B is plain and C in range (the checks of
  // exec_SEQ_GET / exec_SEQ_SET); else the instruction runs through pure_step, which does the
  // rest or faults with the interpreter's message (a narrow list, one byte a row, is never plain).
  Value* plain_cell(uint32_t pc) {
    const Instr& in = fn_.code[pc];
    Value* l = list(in.b);
    Value* pos = get(in.c);
    Value* in_range = B.CreateICmpULT(pos, header(i64, l, layout_.count));
    common_case(B.CreateAnd(is_plain(l), in_range), pc);
    return B.CreateInBoundsGEP(i64, header(ptr, l, layout_.begin), pos);
  }
  // Position C of the narrow list l, going on here when l is narrow and C in range; else leaves
  // to the interpreter at pc, which runs the instruction (and faults when C is out of range).
  // No call on the way: a loop whose list instructions all take this path calls nothing, so
  // LLVM may keep the step meter and the frame slots in registers across its passes.
  Value* narrow_in_range(Value* l, uint32_t pc) {
    Value* pos = get(fn_.code[pc].c);
    Value* ok = B.CreateAnd(is_narrow(l), B.CreateICmpULT(pos, header(i64, l, layout_.count)));
    check(ok, pc);
    return pos;
  }
  // Goes on here when the runtime call's common case applied (ok != 0); else runs the
  // instruction through pure_step, which does the rest or raises the interpreter's fault.
  void common_case(Value* ok, uint32_t pc) {
    BasicBlock* fast = BasicBlock::Create(C, "fast" + std::to_string(pc), F);
    BasicBlock* slow = BasicBlock::Create(C, "slow" + std::to_string(pc), F);
    if (ok->getType() != B.getInt1Ty()) ok = B.CreateICmpNE(ok, k(0));
    B.CreateCondBr(ok, fast, slow, likely_);
    B.SetInsertPoint(slow);
    lower_step(pc);
    B.SetInsertPoint(fast);
  }

  // One instruction through pure_step: the frame in memory is current around the call. With
  // `only`, the instruction reads and writes no slot but those (and does not change the frame):
  // only they are stored before the call and reloaded after it; a fault stores the rest.
  void lower_step(uint32_t pc, const std::vector<uint32_t>* only = nullptr) {
    const Instr& in = fn_.code[pc];
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
    Value* nextpc = B.CreateCall(step_fn, {core, base_var_, pc_const(ptr, i64, &in)});
    BasicBlock* ok = BasicBlock::Create(C, "stepped" + std::to_string(pc), F);
    BasicBlock* faulted = faulted_bb_;
    if (only) {
      faulted = BasicBlock::Create(C, "stepfault" + std::to_string(pc), F);
      IRBuilder<>::InsertPointGuard guard(B);
      B.SetInsertPoint(faulted);
      store(false);
      B.CreateBr(faulted_bb_);
    }
    B.CreateCondBr(B.CreateICmpEQ(nextpc, pc_const(ptr, i64, vm::kFaulted)), faulted, ok, unlikely_);
    B.SetInsertPoint(ok);
    if (only) {
      for (uint32_t s : some) B.CreateStore(tagged(B.CreateLoad(i64, slot_ptr(s)), slot_tag_), slots_[s]);
    } else {
      reload();
    }
    BasicBlock* other = BasicBlock::Create(C, "elsewhere" + std::to_string(pc), F);
    SwitchInst* sw = B.CreateSwitch(B.CreatePtrToInt(nextpc, i64), other);
    auto add = [&](uint32_t to) {
      sw->addCase(ConstantInt::get(cast<IntegerType>(i64), reinterpret_cast<uintptr_t>(at(to))), target(to));
    };
    if (pc + 1 < fn_.code.size()) add(pc + 1);
    if (ir::op_jumps(in.op) && in.imm != 1) add(pc + static_cast<uint32_t>(in.imm));
    B.SetInsertPoint(other);
    leave_pc_->addIncoming(nextpc, other);
    B.CreateBr(leave_bb_);
  }
};

}  // namespace

namespace {
// The code generator of every compile: one legacy pass pipeline (addPassesToEmitMC) on the
// backend's one TargetMachine, built at the first compile and run again on each module, in place
// of ORC's SimpleCompiler, which builds the pipeline again per module. Each run starts afresh:
// the pipeline's machine-module pass resets its MCContext at the end of a run and the printer its
// object streamer, so nothing of one module is left in the next (tests/jit: loops compiled one
// after another by one backend). The object file is written into `object` and copied out.
class ReusedCompiler final : public orc::IRCompileLayer::IRCompiler {
 public:
  explicit ReusedCompiler(TargetMachine& machine)
      : IRCompiler(orc::irManglingOptionsFromTargetOptions(machine.Options)), machine_(machine), out_(object_) {}
  Expected<std::unique_ptr<MemoryBuffer>> operator()(Module& module) override {
    if (!built_) {
      MCContext* context = nullptr;
      if (machine_.addPassesToEmitMC(passes_, context, out_))
        return make_error<StringError>("the target cannot emit machine code", inconvertibleErrorCode());
      built_ = true;
    }
    object_.clear();
    passes_.run(module);
    auto buffer = MemoryBuffer::getMemBufferCopy(StringRef(object_.data(), object_.size()),
                                                 module.getModuleIdentifier() + "-jitted-objectbuffer");
    object_.clear();
    return buffer;
  }

 private:
  TargetMachine& machine_;
  legacy::PassManager passes_;
  SmallVector<char, 0> object_;
  raw_svector_ostream out_;
  bool built_ = false;
};
}  // namespace

struct LlvmBackend::State {
  std::mutex lock;
  std::unique_ptr<orc::LLJIT> jit;
  // the optimiser's cost model and the code generator (ReusedCompiler): one subtarget for both
  std::unique_ptr<TargetMachine> machine;
  // The O2 pipeline's builder and analysis managers, made at the first compile and kept: a compile
  // builds the pipeline, runs it and then clears the managers' results (a module of its own each).
  struct Optimiser {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    PassInstrumentationCallbacks callbacks;
    std::unique_ptr<PassBuilder> pb;
    const std::atomic<bool>* cancel = nullptr;  // the running compile's
  };
  std::unique_ptr<Optimiser> optimiser;
  std::string setup_error;
  uint64_t next_id = 0;
  void* kept_next = nullptr;  // see ~LlvmBackend
  // the engine's read-only segments (its code, read-only data, symbols and unwind tables), page
  // aligned: what idle() gives back
  std::vector<std::pair<uintptr_t, uintptr_t>> read_only;
};

// The engine is a shared object loaded at the first compile, so its static objects (LLVM's command
// line options and registries among them) are made after, and destroyed at exit before, any
// tier made earlier: a Jit that is itself a static object (tests/jit's) outlives them. Such a
// late backend keeps its LLVM state instead of tearing it down among destroyed statics, on a
// chain of plain pointers (no destructor; reachable, so no leak report) the process's end frees.
namespace {
std::atomic<bool> engine_statics_alive{false};
struct EngineStatics {
  EngineStatics() { engine_statics_alive.store(true); }
  ~EngineStatics() { engine_statics_alive.store(false); }
} engine_statics;
void* kept_at_exit = nullptr;  // the last State kept, its kept_next the one before
}  // namespace

namespace {
// The page-aligned ranges of the read-only loadable segments (code, and the read-only data before
// it) of the object this function is in: the engine. The writable segment, and the part of it made
// read-only after relocation (RELRO), hold relocated data: never in these ranges.
int find_engine_segments(dl_phdr_info* info, size_t, void* data) {
  auto* ranges = static_cast<std::vector<std::pair<uintptr_t, uintptr_t>>*>(data);
  const auto here = reinterpret_cast<uintptr_t>(&find_engine_segments);
  bool ours = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
    ours |= ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && here >= start && here < end;
  }
  if (!ours) return 0;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W)) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_filesz;
    start = (start + page - 1) & ~(page - 1);  // whole pages inside the segment
    end &= ~(page - 1);
    if (end > start) ranges->push_back({start, end});
  }
  return 1;
}
}  // namespace

static std::string take_message(Error e) {
  std::string s;
  raw_string_ostream os(s);
  os << e;
  return os.str();
}

LlvmBackend::LlvmBackend() : state_(std::make_unique<State>()) {
  dl_iterate_phdr(&find_engine_segments, &state_->read_only);  // fixed while the engine is loaded
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
  auto jtmb = orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    state_->setup_error = take_message(jtmb.takeError());
    return;
  }
  jtmb->getOptions().AllowFPOpFusion = FPOpFusion::Strict;  // never fuse a*b+c: the interpreter's bytes
  jtmb->setCodeGenOptLevel(CodeGenOptLevel::Default);
  auto machine = jtmb->createTargetMachine();
  if (!machine) {
    state_->setup_error = take_message(machine.takeError());
    return;
  }
  state_->machine = std::move(*machine);
  TargetMachine* tm = state_->machine.get();
  auto jit = orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(*jtmb)
                 .setCompileFunctionCreator([tm](orc::JITTargetMachineBuilder)
                                                -> Expected<std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
                   return std::make_unique<ReusedCompiler>(*tm);
                 })
                 .setPlatformSetUp(orc::setUpInactivePlatform)  // no static initializers to run
                 .setLinkProcessSymbolsByDefault(false)         // native code calls only what is defined below
                 .create();
  if (!jit) {
    state_->setup_error = take_message(jit.takeError());
    return;
  }
  state_->jit = std::move(*jit);
  // the closed set of functions native code calls
  orc::SymbolMap symbols;
  auto flags = JITSymbolFlags::Exported | JITSymbolFlags::Callable;
  symbols[state_->jit->mangleAndIntern("pure_step")] = {orc::ExecutorAddr::fromPtr(&pure_step), flags};
#define PURE_RUNTIME_CALL(name, result, parameters, memory) \
  symbols[state_->jit->mangleAndIntern("pure_jit_" #name)] = {orc::ExecutorAddr::fromPtr(&pure_jit_##name), flags};
#include "jit-common/runtime_calls.def"
#undef PURE_RUNTIME_CALL
  if (Error e = state_->jit->getMainJITDylib().define(orc::absoluteSymbols(std::move(symbols)))) {
    state_->setup_error = take_message(std::move(e));
    state_->jit.reset();
  }
}

void LlvmBackend::idle() {
  // Read-only, file-backed and private: dropping the pages loses nothing (no text relocations in
  // a position-independent object: the loader writes only the writable segment), and this
  // thread, the only one that runs LLVM, is here. The next compile faults what it uses back in
  // from the page cache.
  for (const auto& [first, end] : state_->read_only)
    madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

LlvmBackend::~LlvmBackend() {
  if (engine_statics_alive.load()) return;  // state_ goes with the usual teardown
  State* kept = state_.release();
  kept->kept_next = kept_at_exit;
  kept_at_exit = kept;
}

vm::NativeLoop LlvmBackend::compile(const vm::Function& function, uint32_t loop, std::string& error,
                                const std::atomic<bool>* cancel) {
  std::lock_guard<std::mutex> guard(state_->lock);
  auto cancelled = [&] {
    if (!cancel || !cancel->load(std::memory_order_relaxed)) return false;
    error = "cancelled";
    return true;
  };
  if (!state_->jit) {
    error = "LLVM setup failed: " + state_->setup_error;
    return nullptr;
  }
  orc::LLJIT& jit = *state_->jit;
  auto ctx = std::make_unique<LLVMContext>();
  auto module = std::make_unique<Module>("pure_loop", *ctx);
  module->setDataLayout(jit.getDataLayout());
  module->setTargetTriple(jit.getTargetTriple().str());
  std::string name = "pure_loop_" + std::to_string(state_->next_id++);
  LoopLowering lowering(*ctx, *module, function, loop, name);
  lowering.build();
  if (cancelled()) return nullptr;
  std::string problems;
  raw_string_ostream os(problems);
  if (verifyModule(*module, &os)) {
    error = "invalid IR for " + function.name + " loop " + std::to_string(loop) + ": " + os.str();
    return nullptr;
  }
  {
    if (!state_->optimiser) {
      auto o = std::make_unique<State::Optimiser>();
      State::Optimiser* raw = o.get();
      // a cancelled compile skips the passes left (its result is thrown away)
      o->callbacks.registerShouldRunOptionalPassCallback([raw](StringRef, Any) {
        return !raw->cancel || !raw->cancel->load(std::memory_order_relaxed);
      });
      o->pb = std::make_unique<PassBuilder>(state_->machine.get(), PipelineTuningOptions(), std::nullopt, &o->callbacks);
      o->pb->registerModuleAnalyses(o->mam);
      o->pb->registerCGSCCAnalyses(o->cgam);
      o->pb->registerFunctionAnalyses(o->fam);
      o->pb->registerLoopAnalyses(o->lam);
      o->pb->crossRegisterProxies(o->lam, o->fam, o->cgam, o->mam);
      state_->optimiser = std::move(o);
    }
    State::Optimiser& o = *state_->optimiser;
    o.cancel = cancel;
    // built again per compile: the inliner's wrapper pass moves its pipeline out when it runs
    ModulePassManager mpm = o.pb->buildPerModuleDefaultPipeline(OptimizationLevel::O2);
    mpm.run(*module, o.mam);
    // nothing cached outlives its module
    o.lam.clear();
    o.fam.clear();
    o.cgam.clear();
    o.mam.clear();
    o.cancel = nullptr;
  }
  if (cancelled()) return nullptr;
  if (getenv("PURE_JIT_DUMP")) module->print(errs(), nullptr);
  if (Error e = jit.addIRModule(orc::ThreadSafeModule(std::move(module), std::move(ctx)))) {
    error = take_message(std::move(e));
    return nullptr;
  }
  auto symbol = jit.lookup(name);
  if (!symbol) {
    error = take_message(symbol.takeError());
    return nullptr;
  }
  return symbol->toPtr<vm::NativeLoop>();
}

}  // namespace pure::jit

// The engine's two entry points (jit-llvm/engine.h): the only symbols the shared object exports
// besides this file's own (LLVM's are hidden by --exclude-libs). Everything else it uses (pure_step,
// the runtime calls, lowering_of, kFaulted) it takes from the program that loads it.
extern "C" PURE_LLVM_ENGINE_EXPORT uint64_t pure_llvm_engine_abi() { return pure::jit::kLlvmEngineAbi; }
extern "C" PURE_LLVM_ENGINE_EXPORT pure::jit::Backend* pure_llvm_engine_make() { return new pure::jit::LlvmBackend(); }
