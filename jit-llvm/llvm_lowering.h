// jit-llvm/llvm_lowering.h — folder-private to the engine (libpure_llvm_engine.so): LoopLowering,
// which turns one loop of bytecode into an LLVM IR function, declared once for the files that
// define its parts:
//   llvm_lowering.cpp   the function's frame: slots in allocas, entry dispatch, exits, the budget,
//                       text counts, pieces, the pure_step fallback
//   llvm_lower_ops.cpp  per-op lowering: lower(pc), one case per native instruction
// llvm_backend.cpp runs the optimiser on the result and links it with ORC.
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
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include "base/assert.h"
#include "jit-llvm/backend.h"
#include "runtime/event_list.h"
#include "vm/engine.h"

namespace pure::jit::llvm_ir {

using vm::Instr;
using vm::Op;

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
inline FunctionType* function_type(LLVMContext& c, R (*)(P...) noexcept) {
  return FunctionType::get(LlvmType<R>::get(c), {LlvmType<P>::get(c)...}, false);
}

// The symbols a loop's code takes its pcs from, so that the object holds no address of this
// process and may be kept in the code cache and loaded by another (jit-llvm/README.md, "The code
// cache"): kCodeSymbol is the loop's function's first instruction (fn.code.data(), defined per
// loop by the engine), kFaultedSymbol is vm::kFaulted.
inline constexpr const char kCodeSymbol[] = "pure_code";
inline constexpr const char kFaultedSymbol[] = "pure_faulted";

// One loop's lowering into `module`: build() defines the function `name`.
class LoopLowering {
 public:
  LoopLowering(LLVMContext& ctx, Module& module, const vm::Function& fn, uint32_t loop_id, const std::string& name);

  void build();

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
  void declare_runtime(RuntimeCall call, const char* name, FunctionType* type, Memory memory);
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
  std::vector<BasicBlock*> bb_;       // per pc: the block a jump to it goes to
  std::vector<BasicBlock*> head_bb_;  // per pc: the block it is lowered in, where a hub took bb_ (dispatch_nested_entries)
  std::vector<std::pair<uint32_t, BasicBlock*>> exits_;
  BasicBlock *leave_bb_, *budget_bb_, *faulted_bb_;
  BasicBlock* store_faulted_bb_ = nullptr;  // every tracked slot stored, then faulted_bb_ (lower_step's faults)
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
  GlobalVariable *code_sym_, *faulted_sym_;  // kCodeSymbol, kFaultedSymbol
  // The pc `pc` (an instruction of fn_.code, or vm::kFaulted) as a constant relative to those
  // symbols: no address of this process in the code.
  Constant* pc_const(const void* pc) const;
  // A pc as the byte offset of its instruction from fn_.code's first (what the entry dispatch and
  // the switches after pure_step compare), and that offset of the instruction at pc.
  Value* pc_offset(Value* pc) { return B.CreateSub(B.CreatePtrToInt(pc, i64), B.CreatePtrToInt(code_sym_, i64)); }
  ConstantInt* offset_of(uint32_t pc) const {
    return ConstantInt::get(cast<IntegerType>(i64), uint64_t{pc} * sizeof(Instr));
  }
  // The entry dispatch through a hub per loop with loops inside it (llvm_lowering.cpp says why);
  // false when the nest's heads do not allow it.
  bool dispatch_nested_entries(SwitchInst* sw, BasicBlock* entry, Value* ip);
  // Whether pc heads a loop nested in this one; the pcs of the rest of its pass, up to this loop's
  // head (what a copy for its entry holds); whether those copies, for every nested head, come to
  // no more instructions than the loop (then they are made instead of hubs).
  bool nested_head(uint32_t pc) const;
  std::vector<bool> rest_of_pass(uint32_t head) const;
  bool copied_entries_fit() const;
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
  BasicBlock* target(uint32_t pc);
  // Leaves to the interpreter at pc (it executes that instruction next).
  BasicBlock* leave_at(uint32_t pc);
  void next(uint32_t pc) { B.CreateBr(target(pc + 1)); }
  void branch(Value* cond, uint32_t pc) {
    const Instr& in = fn_.code[pc];
    B.CreateCondBr(cond, target(pc + static_cast<uint32_t>(in.imm)), target(pc + 1));
  }
  // exec_LOOP's step: one step spent, or (none left) the budget exit at pc, where the interpreter
  // spends it and faults with its own message.
  void spend_step(uint32_t pc, const Instr& in);
  // Goes on at the next instruction when ok, else leaves at pc.
  void check(Value* ok, uint32_t pc) {
    BasicBlock* cont = BasicBlock::Create(C, "ok" + std::to_string(pc), F);
    B.CreateCondBr(ok, cont, leave_at(pc), likely_);
    B.SetInsertPoint(cont);
  }
  void checked_int(Intrinsic::ID id, uint32_t pc, Value* x, Value* y);

  void lower(uint32_t pc);

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
  void next_piece(uint32_t pc);

  // The slots an instruction run through pure_step reads or writes, for the few whose set is
  // known here (the loop's stored-list walks); false: any slot (store and reload them all).
  static bool step_slots(const Instr& in, std::vector<uint32_t>& slots);
  // The slots an instruction reads or writes by ir/ops.def's operand modes: single slots, and for
  // a run every tracked slot from its start on; false for a callee's frame or a position.
  bool operand_slots(const Instr& in, std::vector<uint32_t>& slots) const;

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
  void count_text(Value* t, uint32_t pc, bool up);
  // A field of an EventList, at its byte offset (EventList::NativeLayout).
  Value* field(Value* l, uint32_t offset) { return B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), l, offset); }
  Value* header(Type* t, Value* l, uint32_t offset) { return tagged(B.CreateLoad(t, field(l, offset)), list_tag_); }
  Value* is_plain(Value* l) { return B.CreateICmpNE(header(B.getInt8Ty(), l, layout_.plain), B.getInt8(0)); }
  Value* is_narrow(Value* l) { return B.CreateICmpNE(header(B.getInt8Ty(), l, layout_.narrow), B.getInt8(0)); }
  // The cell at position C of the sequence B when B is plain and C in range (the checks of
  // exec_SEQ_GET / exec_SEQ_SET); else the instruction runs through pure_step, which does the
  // rest or faults with the interpreter's message (a narrow list, one byte a row, is never plain).
  Value* plain_cell(uint32_t pc);
  // Position C of the narrow list l, going on here when l is narrow and C in range; else leaves
  // to the interpreter at pc, which runs the instruction (and faults when C is out of range).
  // No call on the way: a loop whose list instructions all take this path calls nothing, so
  // LLVM may keep the step meter and the frame slots in registers across its passes.
  Value* narrow_in_range(Value* l, uint32_t pc);
  // Goes on here when the runtime call's common case applied (ok != 0); else runs the
  // instruction through pure_step, which does the rest or raises the interpreter's fault.
  void common_case(Value* ok, uint32_t pc);

  // One instruction through pure_step: the frame in memory is current around the call. With
  // `only`, the instruction reads and writes no slot but those (and does not change the frame):
  // only they are stored before the call and reloaded after it; a fault stores the rest.
  void lower_step(uint32_t pc, const std::vector<uint32_t>* only = nullptr);
};

}  // namespace pure::jit::llvm_ir
