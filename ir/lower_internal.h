// ir/lower_internal.h — private to ir/lower*.cpp: TreeLowerer, which lowers a checked syntax
// tree into the control-flow graph of ir.h. Its members are defined by concern in three files:
// lower.cpp (descriptors, slots and blocks, functions, statements, assignments, conditions),
// lower_loops.cpp (the loop optimisations: for loops, iterators, slices, pieces lets that never
// make their list) and lower_exprs.cpp (expressions, calls, standard functions and methods).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "frontend/token.h"
#include "ir/ir.h"

namespace pure::ir::lowering {

inline rt::ColType col_type(const Type* t) {
  switch (t->kind) {
    case TypeKind::Num: return rt::ColType::Num;
    case TypeKind::Bool: return rt::ColType::Bool;
    case TypeKind::Text: return rt::ColType::Text;
    default: return rt::ColType::Int;
  }
}

inline SlotKind scalar_kind(const Type* t) {
  switch (t->kind) {
    case TypeKind::Num: return SlotKind::Num;
    case TypeKind::Bool: return SlotKind::Bool;
    case TypeKind::Text: return SlotKind::Text;
    case TypeKind::Seq:
    case TypeKind::Keyed: return SlotKind::List;
    default: return SlotKind::Int;
  }
}

// Every local and temporary gets its own virtual slot (slot = frame index); items take one slot
// per field, so item values never touch the heap.
class TreeLowerer {
 public:
  TreeLowerer(const CheckedModule& cm, Program& p) : m_(cm.module), types_(const_cast<TypeTable&>(*cm.types)), p_(p) {}
  void run();

 private:
  const Module& m_;
  TypeTable& types_;  // interning new types is logically const
  Program& p_;
  Function* f_ = nullptr;
  const FuncDecl* fd_ = nullptr;
  std::vector<uint32_t> local_slot_;
  // How many times each local of the function being lowered is named (reads and assignments):
  // a `let` named once, by the loop right after it, is the loop's iterable (block()).
  std::vector<uint32_t> local_uses_;
  // `let words = t.split(sep)` walked by a later loop only (block()): the local's text and
  // separator, read where the let stands, and which pieces (TEXT_ITER's IMM).
  struct PiecesLet {
    uint32_t text, separator;
    int64_t kind;
  };
  std::map<int, PiecesLet> pieces_lets_;
  int cur_ = 0;
  struct LoopTargets {
    int continue_block;
    int break_block;
  };
  std::vector<LoopTargets> loops_;
  int loop_nesting_ = 0;  // > 0 while lowering a loop, its condition included
  std::map<const Type*, int> desc_index_;
  std::map<std::string, int> text_index_;
  // For locating the frame-size limit: the statement and the expressions being lowered
  // (outermost first, with the slot count when each began).
  struct OpenExpr {
    const Expr* e;
    size_t slots_before;
  };
  std::vector<OpenExpr> open_exprs_;
  OpenExpr biggest_{nullptr, 0};  // the innermost finished expression that took half the limit
  size_t biggest_used_ = 0;
  Loc stmt_loc_;
  bool too_large_ = false;  // the current function's error was reported

  // ---- descriptors and constants ------------------------------------------------------------
  ListDesc make_desc(const Type* t, const std::string& name);
  int64_t narrow_hint(const Type* t);
  int desc_of(const Type* t);
  int text_constant(const std::string& s);

  // ---- slots, blocks, instructions ----------------------------------------------------------
  uint32_t new_slot(SlotKind k, const std::string& name = "");
  void check_frame_size();
  uint32_t new_slots(const Type* t, const std::string& name = "");
  void field_slots(const Type* item, const std::string& name);
  uint32_t new_scratch(uint32_t n);
  int new_block();
  bool terminated() const;
  void emit(Op op, uint32_t a = 0, uint32_t b = 0, uint32_t c = 0, int64_t imm = 0, Loc loc = {});
  void set_block(int b) { cur_ = b; }
  void jump(int target);
  bool is_ref_slot(uint32_t s) const { return s < kScratch && slot_is_ref(f_->slots[s]); }
  void move(uint32_t dst, uint32_t src, Loc loc = {});
  void move_value(const Type* t, uint32_t dst, uint32_t src);
  ValueType host_type(const Type* t);
  void name_descs(const Type* t, ValueType& v);

  // ---- functions ----------------------------------------------------------------------------
  void lower_function(const FuncDecl& fd);
  void count_uses(const Expr* e);
  void count_uses(const Stmt* s);
  // pieces lets (lower_loops.cpp)
  static bool is_pieces_call(const Expr& e);
  void block(const std::vector<StmtPtr>& body);
  bool pieces_let(const std::vector<StmtPtr>& body, size_t i);

  // ---- statements ---------------------------------------------------------------------------
  void statement(const Stmt& s);
  void lower_statement(const Stmt& s);
  void let_statement(const Stmt& s);
  uint32_t keys(const Expr& ix, size_t count);
  bool is_stored(const Expr& list) const { return list.name_kind == NameKind::StoredList; }

  // The slot holding an event list, or the stored list's number.
  uint32_t list_operand(const Expr& list) { return is_stored(list) ? static_cast<uint32_t>(list.ref) : expr(list); }
  void lookup(const Expr& ix, uint32_t dst, int missing_block);

  // ---- slices (ops.def: SLICE_*) -------------------------------------------------------------
  // A slice as the checker leaves it: [list.reverse() of] [list[prefix]][.range(lo, hi)].
  struct SliceParts {
    const Expr* list = nullptr;
    const Expr* index = nullptr;  // the prefix's index expression, if any
    size_t prefix = 0;
    const Expr* lo = nullptr;
    const Expr* hi = nullptr;
    bool reverse = false;
  };
  static bool is_slice(const Expr& e);
  static bool is_reverse_walk(const Expr& e);
  static SliceParts slice_parts(const Expr& e);
  uint32_t slice_operand(const SliceParts& p, uint32_t& list, Loc loc);
  uint32_t slice_method(const Expr& e, Builtin b, int64_t dst);
  void slice_lookup(const Expr& e, uint32_t dst, int missing_block);

  // ---- for loops ---------------------------------------------------------------------------
  void for_statement(const Stmt& s);
  static void fields_named(const Expr& e, int local, uint64_t& used);
  static void fields_named(const Stmt& s, int local, uint64_t& used);
  static uint64_t unread_text_fields(const Stmt& loop, int local, const Type* row);
  const PiecesLet* pieces_let_of(const Expr& it) const;
  void start_iterator(const Expr& it, uint32_t iter);
  void seq_for(const Stmt& s, const Type* lt);
  template <class Refresh, class Enter>
  void counting_loop(const Stmt& s, uint32_t i, uint32_t end, Refresh refresh, Enter enter);

  // ---- assignments -------------------------------------------------------------------------
  static Op arithmetic_op(Tok op, bool num);
  Op compound_op(Tok op, const Type* t);
  void assign(const Stmt& s);
  template <class LoadOld>
  uint32_t value_for_update(const Stmt& s, const Type* t, LoadOld load_old);
  uint32_t keys_for_seq(const Expr& ix);
  bool local_place(const Expr& e, uint32_t& slot);

  // ---- conditions ---------------------------------------------------------------------------
  void condition(const Expr& e, int if_true, int if_false);

  // ---- expressions --------------------------------------------------------------------------
  void expr_into(const Expr& e, uint32_t dst);
  void discard(const Expr& e) { expr(e); }
  bool is_local(const Expr& e, uint32_t slot) const;
  uint32_t append_parts(const std::vector<const Expr*>& parts, uint32_t s, Loc loc);
  uint32_t expr(const Expr& e, int64_t dst = -1);
  uint32_t lower_expr(const Expr& e, int64_t dst);
  uint32_t constant(Op op, SlotKind kind, int64_t value, int64_t dst, Loc loc);
  uint32_t binary(const Expr& e, int64_t dst);
  void to_text(const Expr& e, uint32_t dst);
  void text_of(const Type* t, uint32_t v, uint32_t dst, Loc loc);
  void enum_text(const Type* t, uint32_t v, uint32_t dst, Loc loc);
  uint32_t call(const Expr& e, int64_t dst);
  static bool is_simple_scalar(const Expr& e);
  static bool holds_ref(const Type* t, uint32_t k);
  uint32_t take_results(const Type* rt, uint32_t base, int64_t dst, Loc loc);
  uint32_t run_builtin(Builtin b, const std::vector<uint32_t>& args, const Type* result, int64_t dst, Loc loc,
                       uint32_t c_operand = 0);
  uint32_t builtin_call(const Expr& e, int64_t dst);
  uint32_t unary_op(Op op, const Expr& e, int64_t dst, SlotKind k);
  uint32_t method(const Expr& e, int64_t dst);
  uint32_t list_method(const Expr& e, Builtin b, int64_t dst);
};

}  // namespace pure::ir::lowering
