// ir/lower.cpp — lowers a checked syntax tree into the control-flow graph of ir.h.
// Every local and temporary gets its own virtual slot (slot = frame index); items take one slot
// per field, so item values never touch the heap.
#include <bit>
#include <cstring>
#include <map>

#include "base/limits.h"
#include "frontend/token.h"
#include "ir/ir.h"

namespace pure::ir {
namespace {

rt::ColType col_type(const Type* t) {
  switch (t->kind) {
    case TypeKind::Num: return rt::ColType::Num;
    case TypeKind::Bool: return rt::ColType::Bool;
    case TypeKind::Text: return rt::ColType::Text;
    default: return rt::ColType::Int;
  }
}

SlotKind scalar_kind(const Type* t) {
  switch (t->kind) {
    case TypeKind::Num: return SlotKind::Num;
    case TypeKind::Bool: return SlotKind::Bool;
    case TypeKind::Text: return SlotKind::Text;
    case TypeKind::Seq:
    case TypeKind::Keyed: return SlotKind::List;
    default: return SlotKind::Int;
  }
}

class Lowerer {
 public:
  Lowerer(const CheckedModule& cm, Program& p) : m_(cm.module), types_(const_cast<TypeTable&>(*cm.types)), p_(p) {}

  void run() {
    // Descriptor 0 is always `seq text`: the VM builds main's arguments and split() results with it.
    desc_of(types_.seq_of(types_.text_type()));
    for (const ListDecl& l : m_.lists) {
      p_.stored.push_back(make_desc(l.resolved, l.name));
      p_.stored.back().was = l.was;
      p_.stored.back().was_names = former_names(l);
    }
    for (const FuncDecl& fd : m_.funcs) lower_function(fd);
    p_.main = m_.main_index;
  }

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
  // A stored list's columns' `was` names, keys first (as make_desc orders the columns).
  static std::vector<std::string> former_names(const ListDecl& l) {
    std::vector<std::string> out;
    const TypeExpr* t = l.type.get();
    if (!t) return out;
    if (t->kind == TypeExpr::Seq) {
      if (t->element && t->element->kind == TypeExpr::Keyed)
        for (const TypeExpr::Field& f : t->element->fields) out.push_back(f.was);
      return out;
    }
    for (const TypeExpr::Field& f : t->keys) out.push_back(f.was);
    for (const TypeExpr::Field& f : t->fields) out.push_back(f.was);
    return out;
  }
  ListDesc make_desc(const Type* t, const std::string& name) {
    ListDesc d;
    d.name = name.empty() ? type_name(t) : name;
    d.sequence = t->kind == TypeKind::Seq;
    d.key_count = d.sequence ? 0 : t->key_count;
    const Type* e = t->element;
    if (e->kind == TypeKind::Item) {
      for (const FieldInfo& fi : e->fields) {
        d.cols.push_back(col_type(fi.type));
        d.names.push_back(fi.name);
      }
      d.all_defaults = true;
      for (size_t i = d.key_count; i < e->fields.size(); ++i) {
        const FieldInfo& fi = e->fields[i];
        if (!fi.has_default) d.all_defaults = false;
        uint64_t bits = 0;
        if (fi.type->kind == TypeKind::Num) bits = std::bit_cast<uint64_t>(fi.default_num);
        else if (fi.type->kind == TypeKind::Text) bits = static_cast<uint64_t>(text_constant(fi.default_text));
        else bits = static_cast<uint64_t>(fi.default_int);
        d.defaults.push_back(bits);
      }
    } else {
      d.cols.push_back(col_type(e));
      d.names.push_back("value");
      d.defaults.push_back(0);
    }
    return d;
  }

  // IMM of SEQ_GET and SEQ_SET: 1 when the sequence keeps one byte a row (a narrow list, one bool
  // column: rt::ListShape::narrow()), a hint for native code, which checks the list all the same.
  int64_t narrow_hint(const Type* t) {
    const ListDesc& d = p_.lists[static_cast<size_t>(desc_of(t))];
    return d.sequence && d.cols.size() == 1 && d.cols[0] == rt::ColType::Bool ? 1 : 0;
  }

  int desc_of(const Type* t) {
    auto it = desc_index_.find(t);
    if (it != desc_index_.end()) return it->second;
    int i = static_cast<int>(p_.lists.size());
    p_.lists.push_back(make_desc(t, ""));
    desc_index_[t] = i;
    return i;
  }

  int text_constant(const std::string& s) {
    auto it = text_index_.find(s);
    if (it != text_index_.end()) return it->second;
    int i = static_cast<int>(p_.texts.size());
    p_.texts.push_back(s);
    text_index_[s] = i;
    return i;
  }

  // ---- slots, blocks, instructions ----------------------------------------------------------
  uint32_t new_slot(SlotKind k, const std::string& name = "") {
    f_->slots.push_back(k);
    f_->slot_names.push_back(name);
    check_frame_size();
    return static_cast<uint32_t>(f_->slots.size() - 1);
  }

  // A frame (slots and call area) past limits::kFrameSlots cannot be addressed by 16-bit operands.
  // Reported once per function, at the expression that takes most of the slots: the innermost one
  // that took at least half of the limit by itself (a long list literal), being lowered or done,
  // else the statement being lowered when the limit was passed.
  void check_frame_size() {
    size_t used = f_->slots.size() + f_->scratch_slots;
    if (too_large_ || used <= limits::kFrameSlots) return;
    too_large_ = true;
    LimitError err;
    err.loc = stmt_loc_.known() ? stmt_loc_ : f_->loc;
    err.hint = "split the function into smaller ones";
    const Expr* culprit = biggest_.e;
    for (auto it = open_exprs_.rbegin(); it != open_exprs_.rend(); ++it) {
      if (f_->slots.size() - it->slots_before < limits::kFrameSlots / 2) continue;
      culprit = it->e;
      break;
    }
    if (culprit) {
      err.loc = culprit->loc;
      if (culprit->kind == ExprKind::SeqLit)
        err.hint = "a list literal takes a slot per element; build a long list with .push in a loop";
    }
    const char* what = fd_->kind == FuncKind::Event ? "event" : fd_->kind == FuncKind::Query ? "query" : "function";
    err.message = std::string(what) + " '" + f_->name + "' is too large: it needs more than " + std::to_string(limits::kFrameSlots) +
                  " slots (one per local, temporary and item field)";
    p_.errors.push_back(std::move(err));
  }

  // Slots for a value of type t (one per field for items); returns the first.
  uint32_t new_slots(const Type* t, const std::string& name = "") {
    if (t->kind == TypeKind::Item) {
      uint32_t first = static_cast<uint32_t>(f_->slots.size());
      for (const FieldInfo& fi : t->fields) new_slot(scalar_kind(fi.type), name.empty() ? "" : name + "." + fi.name);
      if (t->fields.empty()) new_slot(SlotKind::Int, name);  // keep distinct slots for empty items
      return first;
    }
    return new_slot(scalar_kind(t), name);
  }

  // The call area: arguments of every call are placed there only after all of them have been
  // evaluated, so one area per function serves all calls, nested ones included.
  uint32_t new_scratch(uint32_t n) {
    f_->scratch_slots = std::max(f_->scratch_slots, n);
    check_frame_size();
    return kScratch;
  }

  int new_block() {
    f_->blocks.emplace_back();
    return static_cast<int>(f_->blocks.size() - 1);
  }

  bool terminated() const {
    const auto& insts = f_->blocks[cur_].insts;
    if (insts.empty()) return false;
    Op op = insts.back().op;
    return op == Op::JUMP || op == Op::RET || op == Op::FAIL;
  }

  void emit(Op op, uint32_t a = 0, uint32_t b = 0, uint32_t c = 0, int64_t imm = 0, Loc loc = {}) {
    if (terminated()) set_block(new_block());  // unreachable code still needs a home
    f_->blocks[cur_].insts.push_back(Inst{op, a, b, c, imm, loc});
  }

  void set_block(int b) { cur_ = b; }
  void jump(int target) {
    if (!terminated()) emit(Op::JUMP, 0, 0, 0, target);
  }

  bool is_ref_slot(uint32_t s) const { return s < kScratch && slot_is_ref(f_->slots[s]); }

  void move(uint32_t dst, uint32_t src, Loc loc = {}) {
    if (dst == src) return;
    emit(is_ref_slot(dst) || is_ref_slot(src) ? Op::MOVE_REF : Op::MOVE, dst, src, 0, 0, loc);
  }

  void move_value(const Type* t, uint32_t dst, uint32_t src) {
    for (uint32_t i = 0; i < t->width(); ++i) move(dst + i, src + i);
  }

  // A parameter's or result's type as hosts see it; a list names its descriptor, so that a host
  // can build one (a seq argument) or read one.
  ValueType host_type(const Type* t) {
    ValueType v = value_type_of(t);
    if (t && t->is_list()) v.desc = desc_of(t);
    return v;
  }

  // ---- functions ----------------------------------------------------------------------------
  void lower_function(const FuncDecl& fd) {
    p_.functions.emplace_back();
    f_ = &p_.functions.back();
    fd_ = &fd;
    f_->name = fd.name;
    f_->kind = fd.kind;
    f_->loc = fd.loc;
    local_slot_.assign(fd.locals.size(), 0);
    local_uses_.assign(fd.locals.size(), 0);
    pieces_lets_.clear();
    for (const StmtPtr& st : fd.body) count_uses(st.get());
    too_large_ = false;
    stmt_loc_ = fd.loc;
    open_exprs_.clear();
    biggest_ = {nullptr, 0};
    biggest_used_ = 0;
    for (size_t i = 0; i < fd.params.size(); ++i) local_slot_[i] = new_slots(fd.locals[i].type, fd.locals[i].name);
    f_->param_slots = static_cast<uint32_t>(f_->slots.size());
    for (size_t i = 0; i < fd.params.size(); ++i) {
      f_->param_names.push_back(fd.params[i].name);
      f_->param_types.push_back(host_type(fd.locals[i].type));
    }
    const Type* result = fd.result_type;  // an event's result: returned into its outcome's slots 2..
    if (result) f_->result_type = host_type(result);
    f_->result_slots = result ? result->width() : 0;
    if (result && result->kind == TypeKind::Item)
      for (auto& fi : result->fields) f_->result_kinds.push_back(scalar_kind(fi.type));
    else if (result && result->kind != TypeKind::Void)
      f_->result_kinds.push_back(scalar_kind(result));
    loops_.clear();
    loop_nesting_ = 0;
    // Block 0 holds constants that loops use, computed once on entry; block 1 is the body.
    set_block(new_block());
    int body = new_block();
    emit(Op::JUMP, 0, 0, 0, body);
    set_block(body);
    block(fd.body);
    if (!terminated()) emit(Op::RET, 0, 0, 0, 0, fd.loc);
    analyze_loops(*f_);
  }

  void count_uses(const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::Name && e->name_kind == NameKind::Local && e->ref >= 0 &&
        static_cast<size_t>(e->ref) < local_uses_.size())
      ++local_uses_[static_cast<size_t>(e->ref)];
    for (const ExprPtr& a : e->args) count_uses(a.get());
  }
  void count_uses(const Stmt* s) {
    if (!s) return;
    count_uses(s->expr.get());
    count_uses(s->target.get());
    count_uses(s->range_end.get());
    for (const StmtPtr& b : s->body) count_uses(b.get());
    for (const StmtPtr& b : s->else_body) count_uses(b.get());
  }

  // t.split(sep), t.words(), t.lines(): a loop over one walks the pieces (TEXT_ITER) and never
  // makes the `seq text`.
  static bool is_pieces_call(const Expr& e) {
    return e.kind == ExprKind::Method && (e.builtin == static_cast<int>(Builtin::TSplit) ||
                                          e.builtin == static_cast<int>(Builtin::TWords) ||
                                          e.builtin == static_cast<int>(Builtin::TLines));
  }

  void block(const std::vector<StmtPtr>& body) {
    for (size_t i = 0; i < body.size(); ++i) {
      if (!body[i]) continue;
      if (pieces_let(body, i)) continue;
      statement(*body[i]);
    }
  }

  // `let words = t.split(sep)` (or words(), lines()) whose local is named once, as the iterable
  // of a later loop of the same block: the list is never made. The text and the separator are
  // read here, where the let stands, into slots of their own (so the later statements cannot
  // change them), and the loop walks their pieces (TEXT_ITER): the same pieces, in order.
  bool pieces_let(const std::vector<StmtPtr>& body, size_t i) {
    const Stmt& s = *body[i];
    if (s.kind != StmtKind::Let || s.is_var || !s.body.empty() || !s.expr || !is_pieces_call(*s.expr) || s.local < 0 ||
        local_uses_[static_cast<size_t>(s.local)] != 1)
      return false;
    bool walked = false;
    for (size_t j = i + 1; j < body.size() && !walked; ++j) {
      const Stmt* loop = body[j].get();
      walked = loop && loop->kind == StmtKind::For && !loop->range_end && loop->expr &&
               loop->expr->kind == ExprKind::Name && loop->expr->name_kind == NameKind::Local && loop->expr->ref == s.local;
    }
    if (!walked) return false;
    Loc outer = stmt_loc_;
    stmt_loc_ = s.loc;
    const Expr& call = *s.expr;
    bool split = call.builtin == static_cast<int>(Builtin::TSplit);
    PiecesLet p{new_slots(call.args[0]->type), 0, split ? 0 : call.builtin == static_cast<int>(Builtin::TWords) ? 1 : 2};
    expr_into(*call.args[0], p.text);
    p.separator = p.text;
    if (split) {
      p.separator = new_slots(call.args[1]->type);
      expr_into(*call.args[1], p.separator);
    }
    pieces_lets_[s.local] = p;
    stmt_loc_ = outer;
    return true;
  }

  // ---- statements ---------------------------------------------------------------------------
  void statement(const Stmt& s) {
    Loc outer = stmt_loc_;
    stmt_loc_ = s.loc;
    lower_statement(s);
    stmt_loc_ = outer;
  }

  void lower_statement(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Let: let_statement(s); break;
      case StmtKind::Assign: assign(s); break;
      case StmtKind::ExprStmt: discard(*s.expr); break;
      case StmtKind::If: {
        int then_b = new_block(), else_b = new_block(), end_b = s.else_body.empty() ? else_b : new_block();
        condition(*s.expr, then_b, else_b);
        set_block(then_b);
        block(s.body);
        jump(end_b);
        if (!s.else_body.empty()) {
          set_block(else_b);
          block(s.else_body);
          jump(end_b);
        }
        set_block(end_b);
        break;
      }
      case StmtKind::While: {
        ++loop_nesting_;
        int head = new_block(), body_b = new_block(), exit_b = new_block();
        jump(head);
        set_block(head);
        emit(Op::LOOP, 0, 0, 0, 0, s.loc);
        condition(*s.expr, body_b, exit_b);
        set_block(body_b);
        loops_.push_back({head, exit_b});
        block(s.body);
        loops_.pop_back();
        jump(head);
        set_block(exit_b);
        --loop_nesting_;
        break;
      }
      case StmtKind::For:
        ++loop_nesting_;
        for_statement(s);
        --loop_nesting_;
        break;
      case StmtKind::Return: {
        if (!s.expr) {
          emit(Op::RET, 0, 0, 0, 0, s.loc);
          break;
        }
        uint32_t v = expr(*s.expr);
        emit(Op::RET, 0, v, s.expr->type->width(), 0, s.loc);
        break;
      }
      case StmtKind::Break: jump(loops_.back().break_block); break;
      case StmtKind::Continue: jump(loops_.back().continue_block); break;
      case StmtKind::Fail: {
        uint32_t v = expr(*s.expr);
        emit(Op::FAIL, 0, v, 0, 0, s.loc);
        break;
      }
      case StmtKind::Block: block(s.body); break;
    }
  }

  void let_statement(const Stmt& s) {
    const Type* t = fd_->locals[s.local].type;
    uint32_t slot = new_slots(t, s.name);
    local_slot_[s.local] = slot;
    if (s.body.empty()) {
      expr_into(*s.expr, slot);
      return;
    }
    // let x = list[key] else ..., or let x = list.first() else ... (also .last(), and slices)
    const Expr& ix = *s.expr;
    int else_b = new_block(), cont_b = new_block();
    if (ix.kind == ExprKind::Method) slice_lookup(ix, slot, else_b);
    else lookup(ix, slot, else_b);
    jump(cont_b);
    set_block(else_b);
    block(s.body);
    jump(cont_b);
    set_block(cont_b);
  }

  // Keys of an index expression list[k1, k2, ...] in consecutive slots.
  uint32_t keys(const Expr& ix, size_t count) {
    if (count == 0) return 0;
    // One key is read in place: a local's own slot needs no copy (list instructions only read
    // their key slots, and nothing between them can assign a local).
    if (count == 1) return expr(*ix.args[1]);
    const Type* row = ix.args[0]->type->element;
    uint32_t first = static_cast<uint32_t>(f_->slots.size());
    std::vector<uint32_t> slots;
    for (size_t i = 0; i < count; ++i) slots.push_back(new_slots(row->fields[i].type));
    for (size_t i = 0; i < count; ++i) expr_into(*ix.args[i + 1], slots[i]);
    return first;
  }

  bool is_stored(const Expr& list) const { return list.name_kind == NameKind::StoredList; }

  // The slot holding an event list, or the stored list's number.
  uint32_t list_operand(const Expr& list) { return is_stored(list) ? static_cast<uint32_t>(list.ref) : expr(list); }

  void lookup(const Expr& ix, uint32_t dst, int missing_block) {
    const Expr& list = *ix.args[0];
    uint32_t l = list_operand(list);
    uint32_t k = keys(ix, ix.args.size() - 1);
    emit(is_stored(list) ? Op::ST_LOOKUP : Op::MAP_LOOKUP, dst, l, k, missing_block, ix.loc);
    int found = new_block();
    jump(found);
    set_block(found);
  }

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
  static bool is_slice(const Expr& e) {
    if (e.kind == ExprKind::Index) return e.int_value == 1;
    return e.kind == ExprKind::Method && e.builtin == static_cast<int>(Builtin::LRange);
  }
  static bool is_reverse_walk(const Expr& e) {
    return e.kind == ExprKind::Method && e.builtin == static_cast<int>(Builtin::LReverse) && e.int_value == 2;
  }
  static SliceParts slice_parts(const Expr& e) {
    SliceParts p;
    const Expr* x = &e;
    if (is_reverse_walk(*x)) {
      p.reverse = true;
      x = x->args[0].get();
    }
    if (x->kind == ExprKind::Method && x->builtin == static_cast<int>(Builtin::LRange)) {
      p.lo = x->args[1].get();
      p.hi = x->args[2].get();
      x = x->args[0].get();
    }
    if (x->kind == ExprKind::Index) {
      p.index = x;
      p.prefix = x->args.size() - 1;
      x = x->args[0].get();
    }
    p.list = x;
    return p;
  }
  // Evaluates the list (into B) and the slice's operands into consecutive slots: the word, the
  // prefix's keys, lo and hi. Returns the word's slot (C).
  uint32_t slice_operand(const SliceParts& p, uint32_t& list, Loc loc) {
    bool stored = is_stored(*p.list);
    list = list_operand(*p.list);
    uint32_t word = new_slot(SlotKind::Int);
    std::vector<uint32_t> keys;
    for (size_t i = 0; i < p.prefix; ++i) keys.push_back(new_slots(p.list->type->element->fields[i].type));
    uint32_t lo = 0, hi = 0;
    if (p.lo) {
      lo = new_slot(SlotKind::Int);
      hi = new_slot(SlotKind::Int);
    }
    int64_t w = static_cast<int64_t>(p.prefix) | (p.lo ? slice_word::kBounded : 0) | (p.reverse ? slice_word::kReverse : 0) |
                (stored ? slice_word::kStored : 0);
    emit(Op::CONST, word, 0, 0, w, loc);
    for (size_t i = 0; i < p.prefix; ++i) expr_into(*p.index->args[i + 1], keys[i]);
    if (p.lo) {
      expr_into(*p.lo, lo);
      expr_into(*p.hi, hi);
    }
    return word;
  }

  // first(), last(), count(), sum(f), min(f), max(f) of a slice (or first/last of a keyed list).
  uint32_t slice_method(const Expr& e, Builtin b, int64_t dst) {
    SliceParts p = slice_parts(*e.args[0]);
    p.reverse = b == Builtin::LLast;
    uint32_t l = 0;
    uint32_t c = slice_operand(p, l, e.loc);
    if (b == Builtin::LFirst || b == Builtin::LLast) {
      uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(e.type);
      emit(Op::SLICE_GET, d, l, c, 0, e.loc);
      return d;
    }
    SliceAgg agg = b == Builtin::LCount ? SliceAgg::Count : b == Builtin::LSum ? SliceAgg::Sum : b == Builtin::LMin ? SliceAgg::Min : SliceAgg::Max;
    int64_t field = agg == SliceAgg::Count ? 0 : e.int_value;
    uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(e.type);
    emit(Op::SLICE_AGG, d, l, c, static_cast<int64_t>(agg) | (field << 8), e.loc);
    return d;
  }

  // let x = l.first() else ...: the first (or last) item of a list or a slice, or the else.
  void slice_lookup(const Expr& e, uint32_t dst, int missing_block) {
    SliceParts p = slice_parts(*e.args[0]);
    p.reverse = e.builtin == static_cast<int>(Builtin::LLast);
    uint32_t l = 0;
    uint32_t c = slice_operand(p, l, e.loc);
    emit(Op::SLICE_LOOKUP, dst, l, c, missing_block, e.loc);
    int found = new_block();
    jump(found);
    set_block(found);
  }

  void for_statement(const Stmt& s) {
    if (s.range_end) {
      uint32_t i = new_slot(SlotKind::Int, s.name);
      local_slot_[s.local] = i;
      expr_into(*s.expr, i);
      uint32_t end = new_slot(SlotKind::Int, "");
      expr_into(*s.range_end, end);
      counting_loop(s, i, end, [] {}, [] {});
      return;
    }
    const Expr& it = *s.expr;
    const Type* lt = s.iter_type;
    if (lt->kind == TypeKind::Seq && !is_pieces_call(it) && !pieces_let_of(it) && it.kind != ExprKind::Index && !(it.kind == ExprKind::Name && is_stored(it)) &&
        !is_reverse_walk(it)) {
      seq_for(s, lt);
      return;
    }
    // keyed lists, stored lists, prefix slices and ranges walk with an iterator
    const Type* row = lt->element;
    uint32_t var = new_slots(row, s.name2.empty() ? s.name : s.name2);
    if (!s.name2.empty()) local_slot_[s.local] = new_slot(SlotKind::Int, s.name);
    const int row_local = s.name2.empty() ? s.local : s.local2;
    local_slot_[row_local] = var;
    uint32_t iter = new_slot(SlotKind::Iter, "");
    start_iterator(it, iter);
    if (row->kind == TypeKind::Item) {
      // the text fields the body never names are not loaded (a stored row's texts are read
      // where they lie: skipping one saves a cache miss and its counting)
      uint64_t skip = unread_text_fields(s, row_local, row);
      if (skip) emit(Op::ITER_SKIP, 0, iter, 0, static_cast<int64_t>(skip), s.loc);
    }
    uint32_t position = s.name2.empty() ? 0 : local_slot_[s.local];
    if (!s.name2.empty()) emit(Op::CONST, position, 0, 0, -1, s.loc);  // `for i, x in list`: i counts from 0
    int head = new_block(), body_b = new_block(), exit_b = new_block(), done_b = new_block();
    jump(head);
    set_block(head);
    emit(Op::ITER_NEXT, var, iter, 0, exit_b, s.loc);  // spends the loop's step itself (no LOOP)
    jump(body_b);
    set_block(body_b);
    if (!s.name2.empty()) emit(Op::ADDI_INT, position, position, 0, 1, s.loc);
    loops_.push_back({head, exit_b});
    block(s.body);
    loops_.pop_back();
    jump(head);
    set_block(exit_b);
    emit(Op::ITER_END, 0, iter, 0, 0, s.loc);
    jump(done_b);
    set_block(done_b);
  }

  // Fields of local `local` (an item) that e names, a bit per field; all when e names the
  // whole item (passed, copied, printed, compared).
  static void fields_named(const Expr& e, int local, uint64_t& used) {
    if (e.kind == ExprKind::Field && e.args[0]->kind == ExprKind::Name && e.args[0]->name_kind == NameKind::Local &&
        e.args[0]->ref == local) {
      used |= e.int_value >= 0 && e.int_value < 64 ? uint64_t{1} << e.int_value : ~uint64_t{0};
      return;
    }
    if (e.kind == ExprKind::Name && e.name_kind == NameKind::Local && e.ref == local) {
      used = ~uint64_t{0};
      return;
    }
    for (const ExprPtr& a : e.args)
      if (a) fields_named(*a, local, used);
  }
  static void fields_named(const Stmt& s, int local, uint64_t& used) {
    for (const Expr* e : {s.expr.get(), s.target.get(), s.range_end.get()})
      if (e) fields_named(*e, local, used);
    for (const std::vector<StmtPtr>* b : {&s.body, &s.else_body})
      for (const StmtPtr& c : *b)
        if (c) fields_named(*c, local, used);
  }
  // The text fields of `row` (the loop's item, local `local`) that the body of `loop` never
  // names: ITER_SKIP's mask.
  static uint64_t unread_text_fields(const Stmt& loop, int local, const Type* row) {
    if (row->fields.size() > 64) return 0;
    uint64_t used = 0;
    for (const StmtPtr& c : loop.body)
      if (c) fields_named(*c, local, used);
    uint64_t skip = 0;
    for (size_t i = 0; i < row->fields.size(); ++i)
      if (row->fields[i].type->kind == TypeKind::Text && !((used >> i) & 1)) skip |= uint64_t{1} << i;
    return skip;
  }

  const PiecesLet* pieces_let_of(const Expr& it) const {
    if (it.kind != ExprKind::Name || it.name_kind != NameKind::Local) return nullptr;
    auto found = pieces_lets_.find(it.ref);
    return found == pieces_lets_.end() ? nullptr : &found->second;
  }

  void start_iterator(const Expr& it, uint32_t iter) {
    if (const PiecesLet* p = pieces_let_of(it)) {
      emit(Op::TEXT_ITER, iter, p->text, p->separator, p->kind, it.loc);
      return;
    }
    if (is_pieces_call(it)) {
      uint32_t t = expr(*it.args[0]);
      bool split = it.builtin == static_cast<int>(Builtin::TSplit);
      uint32_t separator = split ? expr(*it.args[1]) : t;
      int64_t kind = split ? 0 : it.builtin == static_cast<int>(Builtin::TWords) ? 1 : 2;
      emit(Op::TEXT_ITER, iter, t, separator, kind, it.loc);
      return;
    }
    // backwards, or a range after a prefix: a slice's iterator
    if (is_reverse_walk(it) || (it.kind == ExprKind::Method && it.builtin == static_cast<int>(Builtin::LRange) &&
                                it.args[0]->kind == ExprKind::Index)) {
      uint32_t l = 0;
      uint32_t c = slice_operand(slice_parts(it), l, it.loc);
      emit(Op::SLICE_ITER, iter, l, c, 0, it.loc);
      return;
    }
    if (it.kind == ExprKind::Index) {  // a key prefix
      const Expr& list = *it.args[0];
      uint32_t l = list_operand(list);
      size_t n = it.args.size() - 1;
      // The iterator keeps the prefix's cells, a text key as a pointer it does not count: one text
      // key gets a slot of its own (keys() would read a local in place, and the loop's body may
      // assign that local and free the text the iterator still compares rows with).
      const Type* first_key = list.type->element->fields[0].type;
      uint32_t k = 0;
      if (n == 1 && first_key->kind == TypeKind::Text) {
        k = new_slots(first_key);
        expr_into(*it.args[1], k);
      } else {
        k = keys(it, n);
      }
      emit(is_stored(list) ? Op::ST_ITER : Op::LIST_ITER, iter, l, k, static_cast<int64_t>(n), it.loc);
      return;
    }
    if (it.kind == ExprKind::Method && it.builtin == static_cast<int>(Builtin::LRange)) {
      const Expr& list = *it.args[0];
      uint32_t l = list_operand(list);
      uint32_t lo = new_slot(SlotKind::Int), hi = new_slot(SlotKind::Int);
      expr_into(*it.args[1], lo);
      expr_into(*it.args[2], hi);
      emit(is_stored(list) ? Op::ST_ITER : Op::LIST_ITER, iter, l, lo, -1, it.loc);
      return;
    }
    uint32_t l = list_operand(it);
    emit(is_stored(it) ? Op::ST_ITER : Op::LIST_ITER, iter, l, 0, 0, it.loc);
  }

  // for x in xs / for i, x in xs over an event sequence: by position, while position < count.
  void seq_for(const Stmt& s, const Type* lt) {
    uint32_t list = new_slot(SlotKind::List, "");
    expr_into(*s.expr, list);
    uint32_t i = new_slot(SlotKind::Int, s.name2.empty() ? "" : s.name);
    uint32_t n = new_slot(SlotKind::Int, "");
    emit(Op::CONST, i, 0, 0, 0);
    uint32_t var = new_slots(lt->element, s.name2.empty() ? s.name : s.name2);
    if (!s.name2.empty()) {
      local_slot_[s.local] = i;
      local_slot_[s.local2] = var;
    } else {
      local_slot_[s.local] = var;
    }
    counting_loop(
        s, i, n, [&] { emit(Op::LIST_COUNT, n, list, 0, 0, s.loc); },
        [&] { emit(Op::SEQ_GET, var, list, i, narrow_hint(lt), s.loc); });
  }

  // A counting loop: i goes up by one while i < end. `refresh` runs at the top of every pass (a
  // sequence re-reads its count there), `enter` at the start of the body.
  template <class Refresh, class Enter>
  void counting_loop(const Stmt& s, uint32_t i, uint32_t end, Refresh refresh, Enter enter) {
    int head = new_block(), body_b = new_block(), next_b = new_block(), exit_b = new_block();
    jump(head);
    set_block(head);
    emit(Op::LOOP, 0, 0, 0, 0, s.loc);
    refresh();
    emit(Op::JGE_INT, 0, i, end, exit_b, s.loc);
    jump(body_b);
    set_block(body_b);
    enter();
    loops_.push_back({next_b, exit_b});
    block(s.body);
    loops_.pop_back();
    jump(next_b);
    set_block(next_b);
    emit(Op::ADDI_INT, i, i, 0, 1, s.loc);
    jump(head);
    set_block(exit_b);
  }

  static Op arithmetic_op(Tok op, bool num) {
    switch (op) {
      case Tok::Plus: case Tok::PlusEq: return num ? Op::ADD_NUM : Op::ADD_INT;
      case Tok::Minus: case Tok::MinusEq: return num ? Op::SUB_NUM : Op::SUB_INT;
      case Tok::Star: case Tok::StarEq: return num ? Op::MUL_NUM : Op::MUL_INT;
      case Tok::Slash: case Tok::SlashEq: return num ? Op::DIV_NUM : Op::DIV_INT;
      default: return num ? Op::MOD_NUM : Op::MOD_INT;
    }
  }

  Op compound_op(Tok op, const Type* t) {
    if (t->kind == TypeKind::Text) return Op::CONCAT;
    return arithmetic_op(op, t->kind == TypeKind::Num);
  }

  void assign(const Stmt& s) {
    const Expr& target = *s.target;
    Tok op = static_cast<Tok>(s.op);
    // A local, or a field of a local item: plain slots.
    if (uint32_t slot; local_place(target, slot)) {
      if (op == Tok::Eq) {
        if (target.type->width() > 1) {  // items: evaluate fully before overwriting (a = {x: a.y, y: a.x})
          uint32_t v = expr(*s.expr);
          move_value(target.type, slot, v);
        } else {
          expr_into(*s.expr, slot);
        }
      } else if (target.type->kind == TypeKind::Int && (op == Tok::PlusEq || op == Tok::MinusEq) &&
                 s.expr->kind == ExprKind::Int && !(op == Tok::MinusEq && s.expr->int_value == INT64_MIN)) {
        emit(Op::ADDI_INT, slot, slot, 0, op == Tok::PlusEq ? s.expr->int_value : -s.expr->int_value, s.loc);
      } else {
        uint32_t v = expr(*s.expr);
        emit(compound_op(op, target.type), slot, slot, v, 0, s.loc);
      }
      return;
    }
    bool field = target.kind == ExprKind::Field;
    const Expr& ix = field ? *target.args[0] : target;
    const Expr& list = *ix.args[0];
    const Type* lt = list.type;
    bool stored = is_stored(list);
    uint32_t l = list_operand(list);
    int64_t field_index = field ? target.int_value : 0;
    if (lt->kind == TypeKind::Seq) {
      uint32_t pos;
      if (stored) pos = keys_for_seq(ix);
      else pos = expr(*ix.args[1]);
      if (!field && op == Tok::Eq) {
        uint32_t v = expr(*s.expr);
        if (stored) {
          for (uint32_t i = 0; i < target.type->width(); ++i) emit(Op::ST_SET_FIELD, v + i, l, pos, i, s.loc);
        } else {
          emit(Op::SEQ_SET, v, l, pos, narrow_hint(lt), s.loc);
        }
        return;
      }
      uint32_t v = value_for_update(s, target.type, [&](uint32_t dst) {
        if (stored) emit(Op::ST_GET_FIELD, dst, l, pos, field_index, s.loc);
        else emit(Op::SEQ_GET_FIELD, dst, l, pos, field_index, s.loc);
      });
      if (stored) emit(Op::ST_SET_FIELD, v, l, pos, field_index, s.loc);
      else emit(Op::SEQ_SET_FIELD, v, l, pos, field_index, s.loc);
      return;
    }
    // keyed lists
    uint32_t k = keys(ix, ix.args.size() - 1);
    if (!field) {
      // an item literal gives the fields only; a whole row gives its keys first, which are skipped
      uint32_t v = expr(*s.expr);
      if (s.expr->kind != ExprKind::ItemLit) v += lt->key_count;
      emit(stored ? Op::ST_PUT : Op::MAP_PUT, v, l, k, 0, s.loc);
      return;
    }
    int desc = stored ? -1 : desc_of(lt);
    bool defaults = stored ? p_.stored[list.ref].all_defaults : p_.lists[desc].all_defaults;
    if (defaults) emit(stored ? Op::ST_ENSURE : Op::MAP_ENSURE, 0, l, k, 0, s.loc);
    uint32_t v = value_for_update(s, target.type, [&](uint32_t dst) {
      emit(stored ? Op::ST_GET_FIELD : Op::MAP_GET_FIELD, dst, l, k, field_index, s.loc);
    });
    emit(stored ? Op::ST_SET_FIELD : Op::MAP_SET_FIELD, v, l, k, field_index, s.loc);
  }

  // The new value of an element field: the right side, or old (op) right side.
  template <class LoadOld>
  uint32_t value_for_update(const Stmt& s, const Type* t, LoadOld load_old) {
    Tok op = static_cast<Tok>(s.op);
    if (op == Tok::Eq) return expr(*s.expr);
    uint32_t old = new_slots(t);
    load_old(old);
    uint32_t v = expr(*s.expr);
    uint32_t result = new_slots(t);
    emit(compound_op(op, t), result, old, v, 0, s.loc);
    return result;
  }

  uint32_t keys_for_seq(const Expr& ix) {
    uint32_t pos = new_slot(SlotKind::Int);
    expr_into(*ix.args[1], pos);
    return pos;
  }

  // If e names slots of a local (x, or x.field, or x.field of an item local), gives the slot.
  bool local_place(const Expr& e, uint32_t& slot) {
    if (e.kind == ExprKind::Name && e.name_kind == NameKind::Local) {
      slot = local_slot_[e.ref];
      return true;
    }
    if (e.kind == ExprKind::Field && local_place(*e.args[0], slot)) {
      slot += static_cast<uint32_t>(e.int_value);
      return true;
    }
    return false;
  }

  // ---- conditions ---------------------------------------------------------------------------
  void condition(const Expr& e, int if_true, int if_false) {
    if (e.kind == ExprKind::Binary) {
      Tok op = static_cast<Tok>(e.op);
      if (op == Tok::KwAnd) {
        int mid = new_block();
        condition(*e.args[0], mid, if_false);
        set_block(mid);
        condition(*e.args[1], if_true, if_false);
        return;
      }
      if (op == Tok::KwOr) {
        int mid = new_block();
        condition(*e.args[0], if_true, mid);
        set_block(mid);
        condition(*e.args[1], if_true, if_false);
        return;
      }
      if (e.args[0]->type->kind == TypeKind::Int && (op == Tok::Lt || op == Tok::LtEq || op == Tok::Gt || op == Tok::GtEq) &&
          e.args[1]->kind == ExprKind::Int) {
        // against a small constant K: a < K, a >= K, a <= K as a < K+1, a > K as a >= K+1
        int64_t k = e.args[1]->int_value + ((op == Tok::LtEq || op == Tok::Gt) ? 1 : 0);
        if (k >= INT16_MIN && k <= INT16_MAX && e.args[1]->int_value < INT64_MAX) {
          uint32_t a = expr(*e.args[0]);
          Op jop = (op == Tok::Lt || op == Tok::LtEq) ? Op::JLT_INT_K : Op::JGE_INT_K;
          emit(jop, 0, a, static_cast<uint32_t>(static_cast<uint16_t>(k)), if_true, e.loc);
          jump(if_false);
          return;
        }
      }
      TypeKind operand = e.args[0]->type->kind;
      if ((operand == TypeKind::Int || operand == TypeKind::Bool) && (op == Tok::EqEq || op == Tok::NotEq)) {
        uint32_t a = expr(*e.args[0]);
        uint32_t b = expr(*e.args[1]);
        emit(op == Tok::EqEq ? Op::JEQ_INT : Op::JNE_INT, 0, a, b, if_true, e.loc);
        jump(if_false);
        return;
      }
      if (operand == TypeKind::Num && (op == Tok::Lt || op == Tok::LtEq || op == Tok::Gt || op == Tok::GtEq)) {
        uint32_t a = expr(*e.args[0]);
        uint32_t b = expr(*e.args[1]);
        // a > b is b < a; a >= b is b <= a (exact for NaN too: all are false)
        bool swap = op == Tok::Gt || op == Tok::GtEq;
        Op jop = (op == Tok::Lt || op == Tok::Gt) ? Op::JLT_NUM : Op::JLE_NUM;
        emit(jop, 0, swap ? b : a, swap ? a : b, if_true, e.loc);
        jump(if_false);
        return;
      }
      if (e.args[0]->type->kind == TypeKind::Int && (op == Tok::Lt || op == Tok::LtEq || op == Tok::Gt || op == Tok::GtEq)) {
        uint32_t a = expr(*e.args[0]);
        uint32_t b = expr(*e.args[1]);
        // a < b: JLT a b; a >= b: JGE a b; a > b: JLT b a; a <= b: JGE b a
        bool swap = op == Tok::Gt || op == Tok::LtEq;
        Op jop = (op == Tok::Lt || op == Tok::Gt) ? Op::JLT_INT : Op::JGE_INT;
        emit(jop, 0, swap ? b : a, swap ? a : b, if_true, e.loc);
        jump(if_false);
        return;
      }
    }
    if (e.kind == ExprKind::Unary && static_cast<Tok>(e.op) == Tok::KwNot) {
      condition(*e.args[0], if_false, if_true);
      return;
    }
    uint32_t v = expr(e);
    emit(Op::JUMP_IF, 0, v, 0, if_true, e.loc);
    jump(if_false);
  }

  // ---- expressions --------------------------------------------------------------------------
  // Evaluates e into the slots starting at dst.
  void expr_into(const Expr& e, uint32_t dst) {
    uint32_t got = expr(e, static_cast<int64_t>(dst));
    if (got != dst) move_value(e.type, dst, got);
  }

  void discard(const Expr& e) { expr(e); }

  bool is_local(const Expr& e, uint32_t slot) const {
    return e.kind == ExprKind::Name && e.name_kind == NameKind::Local && local_slot_[e.ref] == slot;
  }

  // s = "{s}...": the other parts are appended to s by CONCAT, which appends in place while s's
  // text is unshared (as for s = s + "..."), so building a text this way takes linear time, not
  // quadratic. Every part is evaluated before the first append, so parts that read s see it
  // unchanged; a part that is s itself is copied to a slot of its own (sharing the text, so
  // CONCAT then copies instead of appending).
  uint32_t append_parts(const std::vector<const Expr*>& parts, uint32_t s, Loc loc) {
    std::vector<uint32_t> slots;
    for (size_t i = 1; i < parts.size(); ++i) {
      if (parts[i]->type->kind == TypeKind::Text && !is_local(*parts[i], s)) {
        slots.push_back(expr(*parts[i]));
      } else {
        slots.push_back(new_slot(SlotKind::Text));
        to_text(*parts[i], slots.back());
      }
    }
    for (uint32_t part : slots) emit(Op::CONCAT, s, s, part, 0, loc);
    return s;
  }

  // Evaluates e; returns the first slot of its value. If dst >= 0 the value is written there
  // when that is free, otherwise the caller moves it.
  uint32_t expr(const Expr& e, int64_t dst = -1) {
    open_exprs_.push_back({&e, f_->slots.size()});
    uint32_t slot = lower_expr(e, dst);
    OpenExpr done = open_exprs_.back();
    open_exprs_.pop_back();
    size_t used = f_->slots.size() - done.slots_before;
    // keep the innermost big one: an enclosing expression began no later than it did
    bool encloses = biggest_.e && done.slots_before <= biggest_.slots_before;
    if (used >= limits::kFrameSlots / 2 && used > biggest_used_ && !encloses) {
      biggest_ = done;
      biggest_used_ = used;
    }
    return slot;
  }

  uint32_t lower_expr(const Expr& e, int64_t dst) {
    auto out = [&](SlotKind k) { return dst >= 0 ? static_cast<uint32_t>(dst) : new_slot(k); };
    auto out_value = [&]() { return dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(e.type); };
    switch (e.kind) {
      case ExprKind::Int:
      case ExprKind::Bool:
        return constant(Op::CONST, scalar_kind(e.type), e.int_value, dst, e.loc);
      case ExprKind::Num:
        return constant(Op::CONST, SlotKind::Num, std::bit_cast<int64_t>(e.num_value), dst, e.loc);
      case ExprKind::Text:
        return constant(Op::CONST_TEXT, SlotKind::Text, text_constant(e.text), dst, e.loc);
      case ExprKind::Interp: {
        std::vector<const Expr*> parts;  // empty literal pieces add nothing
        for (const auto& part : e.args)
          if (part->kind != ExprKind::Text || !part->text.empty()) parts.push_back(part.get());
        if (dst >= 0 && parts.size() >= 2 && is_local(*parts[0], static_cast<uint32_t>(dst)))
          return append_parts(parts, static_cast<uint32_t>(dst), e.loc);
        uint32_t first = static_cast<uint32_t>(f_->slots.size());
        for (size_t i = 0; i < parts.size(); ++i) new_slot(SlotKind::Text);
        for (size_t i = 0; i < parts.size(); ++i) to_text(*parts[i], first + static_cast<uint32_t>(i));
        uint32_t d = out(SlotKind::Text);
        emit(Op::JOIN_TEXT, d, first, static_cast<uint32_t>(parts.size()), 0, e.loc);
        return d;
      }
      case ExprKind::Name: return local_slot_[e.ref];  // stored lists never reach here as values
      case ExprKind::Unary: {
        uint32_t v = expr(*e.args[0]);
        uint32_t d = out(scalar_kind(e.type));
        Tok op = static_cast<Tok>(e.op);
        emit(op == Tok::KwNot ? Op::NOT : op == Tok::Tilde ? Op::BNOT_INT : e.type->kind == TypeKind::Num ? Op::NEG_NUM : Op::NEG_INT,
             d, v, 0, 0, e.loc);
        return d;
      }
      case ExprKind::Binary: return binary(e, dst);
      case ExprKind::Call: return call(e, dst);
      case ExprKind::Method: return method(e, dst);
      case ExprKind::Field: {
        const Expr& base = *e.args[0];
        if (base.kind == ExprKind::Index && base.int_value != 1) {
          const Expr& list = *base.args[0];
          uint32_t l = list_operand(list);
          uint32_t d = out(scalar_kind(e.type));
          if (list.type->kind == TypeKind::Seq) {
            uint32_t pos = expr(*base.args[1]);
            emit(is_stored(list) ? Op::ST_GET_FIELD : Op::SEQ_GET_FIELD, d, l, pos, e.int_value, e.loc);
          } else {
            uint32_t k = keys(base, base.args.size() - 1);
            emit(is_stored(list) ? Op::ST_GET_FIELD : Op::MAP_GET_FIELD, d, l, k, e.int_value, e.loc);
          }
          return d;
        }
        uint32_t b = expr(base);
        if (base.type->value && e.int_value == 2)  // an event's result: only a committed event has one
          emit(Op::CHECK_VALUE, 0, b, b + 1, 0, e.loc);
        return b + static_cast<uint32_t>(e.int_value);
      }
      case ExprKind::Index: {
        const Expr& list = *e.args[0];
        uint32_t l = list_operand(list);
        uint32_t d = out_value();
        if (list.type->kind == TypeKind::Seq) {
          uint32_t pos = expr(*e.args[1]);
          emit(is_stored(list) ? Op::ST_GET : Op::SEQ_GET, d, l, pos, is_stored(list) ? 0 : narrow_hint(list.type), e.loc);
        } else {
          uint32_t k = keys(e, e.args.size() - 1);
          emit(is_stored(list) ? Op::ST_GET : Op::MAP_GET, d, l, k, 0, e.loc);
        }
        return d;
      }
      case ExprKind::ItemLit: {
        // Evaluate fields into fresh slots first: the target may be read by the fields.
        // A keyed list's row literal gives the fields after the keys (the index gives the keys).
        size_t skip = e.type->fields.size() - e.args.size();
        uint32_t first = static_cast<uint32_t>(f_->slots.size());
        for (size_t i = skip; i < e.type->fields.size(); ++i) new_slot(scalar_kind(e.type->fields[i].type));
        if (e.args.empty()) new_slot(SlotKind::Int);
        for (size_t i = 0; i < e.args.size(); ++i) expr_into(*e.args[i], first + static_cast<uint32_t>(i));
        return first;
      }
      case ExprKind::SeqLit: {
        uint32_t d = out(SlotKind::List);
        emit(Op::NEW_LIST, d, 0, 0, desc_of(e.type), e.loc);
        for (const ExprPtr& a : e.args) {
          uint32_t v = expr(*a);
          emit(Op::SEQ_PUSH, v, d, 0, 0, a->loc);
        }
        return d;
      }
      case ExprKind::NewList: {
        uint32_t d = out(SlotKind::List);
        emit(Op::NEW_LIST, d, 0, 0, desc_of(e.type), e.loc);
        return d;
      }
      case ExprKind::Cond: {
        // Both branches write the same slots; only one of them runs.
        uint32_t d = out_value();
        int yes = new_block(), no = new_block(), end = new_block();
        condition(*e.args[0], yes, no);
        set_block(yes);
        expr_into(*e.args[1], d);
        jump(end);
        set_block(no);
        expr_into(*e.args[2], d);
        jump(end);
        set_block(end);
        return d;
      }
    }
    return 0;
  }

  // A literal. Inside a loop a literal that gets a slot of its own is computed once, in the
  // entry block: nothing else writes that slot, so every iteration sees the same value.
  uint32_t constant(Op op, SlotKind kind, int64_t value, int64_t dst, Loc loc) {
    if (dst >= 0) {
      emit(op, static_cast<uint32_t>(dst), 0, 0, value, loc);
      return static_cast<uint32_t>(dst);
    }
    uint32_t d = new_slot(kind);
    if (loop_nesting_ == 0) {
      emit(op, d, 0, 0, value, loc);
      return d;
    }
    auto& entry = f_->blocks[0].insts;
    entry.insert(entry.end() - 1, Inst{op, d, 0, 0, value, loc});
    if (op == Op::CONST) f_->entry_constants.push_back(d);
    return d;
  }

  uint32_t binary(const Expr& e, int64_t dst) {
    Tok op = static_cast<Tok>(e.op);
    auto out = [&](SlotKind k) { return dst >= 0 ? static_cast<uint32_t>(dst) : new_slot(k); };
    if (op == Tok::KwAnd || op == Tok::KwOr) {
      uint32_t d = new_slot(SlotKind::Bool);
      int t = new_block(), f = new_block(), end = new_block();
      condition(e, t, f);
      set_block(t);
      emit(Op::CONST, d, 0, 0, 1);
      jump(end);
      set_block(f);
      emit(Op::CONST, d, 0, 0, 0);
      jump(end);
      set_block(end);
      if (dst >= 0) {
        move(static_cast<uint32_t>(dst), d);
        return static_cast<uint32_t>(dst);
      }
      return d;
    }
    const Type* t = e.args[0]->type;
    bool num = t->kind == TypeKind::Num;
    bool text = t->kind == TypeKind::Text;
    // x + 1 and x - 1 on ints: one instruction with an immediate
    if (t->kind == TypeKind::Int && (op == Tok::Plus || op == Tok::Minus) && e.args[1]->kind == ExprKind::Int &&
        !(op == Tok::Minus && e.args[1]->int_value == INT64_MIN)) {
      uint32_t a = expr(*e.args[0]);
      uint32_t d = out(SlotKind::Int);
      emit(Op::ADDI_INT, d, a, 0, op == Tok::Plus ? e.args[1]->int_value : -e.args[1]->int_value, e.loc);
      return d;
    }
    uint32_t a = expr(*e.args[0]);
    uint32_t b = expr(*e.args[1]);
    switch (op) {
      case Tok::Plus:
        if (text) {
          uint32_t d = out(SlotKind::Text);
          emit(Op::CONCAT, d, a, b, 0, e.loc);
          return d;
        }
        [[fallthrough]];
      case Tok::Minus: case Tok::Star: case Tok::Slash: case Tok::Percent: {
        uint32_t d = out(num ? SlotKind::Num : SlotKind::Int);
        emit(arithmetic_op(op, num), d, a, b, 0, e.loc);
        return d;
      }
      case Tok::Amp: case Tok::Pipe: case Tok::Caret: case Tok::Shl: case Tok::Shr: {
        uint32_t d = out(SlotKind::Int);
        Op bop = op == Tok::Amp ? Op::AND_INT : op == Tok::Pipe ? Op::OR_INT : op == Tok::Caret ? Op::XOR_INT
               : op == Tok::Shl ? Op::SHL_INT : Op::SHR_INT;
        emit(bop, d, a, b, 0, e.loc);
        return d;
      }
      default: break;
    }
    Op cmp;
    bool swap = false;
    auto pick = [&](Op i, Op n, Op s) { return num ? n : text ? s : i; };
    switch (op) {
      case Tok::EqEq: cmp = pick(Op::EQ_INT, Op::EQ_NUM, Op::EQ_TEXT); break;
      case Tok::NotEq: cmp = pick(Op::NE_INT, Op::NE_NUM, Op::NE_TEXT); break;
      case Tok::Lt: cmp = pick(Op::LT_INT, Op::LT_NUM, Op::LT_TEXT); break;
      case Tok::LtEq: cmp = pick(Op::LE_INT, Op::LE_NUM, Op::LE_TEXT); break;
      case Tok::Gt: cmp = pick(Op::LT_INT, Op::LT_NUM, Op::LT_TEXT); swap = true; break;
      default: cmp = pick(Op::LE_INT, Op::LE_NUM, Op::LE_TEXT); swap = true; break;
    }
    uint32_t d = out(SlotKind::Bool);
    emit(cmp, d, swap ? b : a, swap ? a : b, 0, e.loc);
    return d;
  }

  // Converts a scalar (or item/list, for printing) to text into slot dst.
  void to_text(const Expr& e, uint32_t dst) {
    const Type* t = e.type;
    if (t->kind == TypeKind::Text) {
      expr_into(e, dst);
      return;
    }
    uint32_t v = expr(e);
    text_of(t, v, dst, e.loc);
  }

  void text_of(const Type* t, uint32_t v, uint32_t dst, Loc loc) {
    switch (t->kind) {
      case TypeKind::Int: emit(Op::INT_TEXT, dst, v, 0, 0, loc); return;
      case TypeKind::Num: emit(Op::NUM_TEXT, dst, v, 0, 0, loc); return;
      case TypeKind::Bool: emit(Op::BOOL_TEXT, dst, v, 0, 0, loc); return;
      case TypeKind::Text: move(dst, v, loc); return;
      case TypeKind::Item: {
        // Name { a: 1, b: "x" }; an event's outcome with a value: outcome { ok: .., reason: .., value: .. }
        std::vector<uint32_t> parts;
        auto lit = [&](const std::string& s) {
          uint32_t p = new_slot(SlotKind::Text);
          emit(Op::CONST_TEXT, p, 0, 0, text_constant(s), loc);
          parts.push_back(p);
        };
        std::string prefix = t->value ? "outcome {" : t->name.empty() ? "{" : t->name + " {";
        auto show = [&](const std::string& name, const Type* ft, uint32_t at) {
          lit(prefix + (parts.empty() ? " " : ", ") + name + ": ");
          prefix.clear();
          uint32_t p = new_slot(SlotKind::Text);
          text_of(ft, at, p, loc);
          if (ft->kind == TypeKind::Text) {  // texts inside items print as quoted literals
            uint32_t q = new_slot(SlotKind::Text);
            run_builtin(Builtin::Quote, {p}, ft, q, loc);
            p = q;
          }
          parts.push_back(p);
        };
        auto join = [&](std::vector<uint32_t> all) {
          uint32_t first = static_cast<uint32_t>(f_->slots.size());
          for (size_t i = 0; i < all.size(); ++i) new_slot(SlotKind::Text);
          for (size_t i = 0; i < all.size(); ++i) emit(Op::MOVE_REF, first + static_cast<uint32_t>(i), all[i], 0, 0, loc);
          emit(Op::JOIN_TEXT, dst, first, static_cast<uint32_t>(all.size()), 0, loc);
        };
        size_t shown = t->value ? 2 : t->fields.size();
        for (size_t i = 0; i < shown; ++i) show(t->fields[i].name, t->fields[i].type, v + static_cast<uint32_t>(i));
        if (t->value) {  // an event's outcome: the value only when it committed (a failed one has none)
          uint32_t close = new_slot(SlotKind::Text);
          emit(Op::CONST_TEXT, close, 0, 0, text_constant(" }"), loc);
          int with_value = new_block(), done = new_block();
          emit(Op::JUMP_IF, 0, v, 0, with_value, loc);
          std::vector<uint32_t> failed = parts;
          failed.push_back(close);
          join(failed);
          jump(done);
          set_block(with_value);
          show("value", t->value, v + 2);
          parts.push_back(close);
          join(parts);
          jump(done);
          set_block(done);
          return;
        }
        lit(t->fields.empty() ? prefix + "}" : " }");
        join(parts);
        return;
      }
      case TypeKind::Seq:
      case TypeKind::Keyed: {
        uint32_t a = new_scratch(1);
        emit(Op::MOVE, a, v, 0, 0, loc);  // borrowed: the builtin clears it
        emit(Op::BUILTIN, a, 1, static_cast<uint32_t>(desc_of(t)) << 1, static_cast<int64_t>(Builtin::ToText), loc);
        emit(Op::TAKE_REF, dst, a, 0, 0, loc);
        return;
      }
      default: return;
    }
  }

  // User functions, events and queries: arguments go straight into the callee's frame.
  uint32_t call(const Expr& e, int64_t dst) {
    if (e.builtin >= 0) return builtin_call(e, dst);
    const FuncDecl& callee = m_.funcs[e.ref];
    uint32_t width = 0;
    for (size_t i = 0; i < callee.params.size(); ++i) width += callee.locals[i].type->width();
    const Type* rt = e.type;
    uint32_t rwidth = rt->width();
    // Arguments that call something are evaluated first (their calls use the call area);
    // simple scalar arguments are then computed straight into it.
    std::vector<int64_t> values(e.args.size(), -1);
    for (size_t i = 0; i < e.args.size(); ++i)
      if (!is_simple_scalar(*e.args[i])) values[i] = expr(*e.args[i]);
    uint32_t base = new_scratch(std::max(width, rwidth));
    uint32_t off = 0;
    for (size_t i = 0; i < e.args.size(); ++i) {
      const Type* pt = callee.locals[i].type;
      if (values[i] < 0) {
        expr_into(*e.args[i], base + off);
        off += 1;
        continue;
      }
      uint32_t v = static_cast<uint32_t>(values[i]);
      for (uint32_t k = 0; k < pt->width(); ++k) {
        emit(holds_ref(pt, k) ? Op::MOVE_REF : Op::MOVE, base + off + k, v + k, 0, 0, e.args[i]->loc);
      }
      off += pt->width();
    }
    emit(Op::CALL, base, 0, 0, e.ref, e.loc);
    return take_results(rt, base, dst, e.loc);
  }

  // An int, num or bool expression that neither calls anything nor reads lists: safe to
  // compute directly into the call area.
  static bool is_simple_scalar(const Expr& e) {
    if (!e.type || !(e.type->kind == TypeKind::Int || e.type->kind == TypeKind::Num || e.type->kind == TypeKind::Bool)) return false;
    switch (e.kind) {
      case ExprKind::Int: case ExprKind::Num: case ExprKind::Bool: case ExprKind::Name: return true;
      case ExprKind::Unary: return is_simple_scalar(*e.args[0]);
      case ExprKind::Binary: {
        Tok op = static_cast<Tok>(e.op);
        if (op == Tok::KwAnd || op == Tok::KwOr) return false;
        return is_simple_scalar(*e.args[0]) && is_simple_scalar(*e.args[1]);
      }
      case ExprKind::Field: return e.args[0]->kind == ExprKind::Name && e.args[0]->name_kind == NameKind::Local;
      default: return false;
    }
  }

  // Whether slot k of a value of type t holds a counted reference.
  static bool holds_ref(const Type* t, uint32_t k) {
    return t->kind == TypeKind::Item ? t->fields[k].type->is_ref() : t->is_ref();
  }

  uint32_t take_results(const Type* rt, uint32_t base, int64_t dst, Loc loc) {
    if (rt->kind == TypeKind::Void) return 0;
    uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(rt);
    for (uint32_t k = 0; k < rt->width(); ++k) {
      emit(holds_ref(rt, k) ? Op::TAKE_REF : Op::TAKE, d + k, base + k, 0, 0, loc);
    }
    return d;
  }

  // Standard functions borrow their arguments: they are copied raw into scratch slots.
  uint32_t run_builtin(Builtin b, const std::vector<uint32_t>& args, const Type* result, int64_t dst, Loc loc,
                       uint32_t c_operand = 0) {
    uint32_t width = std::max<uint32_t>(static_cast<uint32_t>(args.size()), result->width());
    uint32_t base = new_scratch(width);
    for (size_t i = 0; i < args.size(); ++i) emit(Op::MOVE, base + static_cast<uint32_t>(i), args[i], 0, 0, loc);
    emit(Op::BUILTIN, base, static_cast<uint32_t>(args.size()), c_operand, static_cast<int64_t>(b), loc);
    return take_results(result, base, dst, loc);
  }

  uint32_t builtin_call(const Expr& e, int64_t dst) {
    Builtin b = static_cast<Builtin>(e.builtin);
    if (b == Builtin::Print || b == Builtin::Write) {
      uint32_t t = new_slot(SlotKind::Text);
      to_text(*e.args[0], t);
      run_builtin(b, {t}, e.type, -1, e.loc);
      return 0;
    }
    if (b == Builtin::ToText) {
      uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slot(SlotKind::Text);
      to_text(*e.args[0], d);
      return d;
    }
    if (b == Builtin::ToNum && e.args[0]->type->kind == TypeKind::Int) return unary_op(Op::INT_TO_NUM, e, dst, SlotKind::Num);
    if (b == Builtin::ToNum) return expr(*e.args[0], dst);
    if (b == Builtin::ToInt && e.args[0]->type->kind == TypeKind::Num) return unary_op(Op::NUM_TO_INT, e, dst, SlotKind::Int);
    if (b == Builtin::ToInt) return expr(*e.args[0], dst);
    std::vector<uint32_t> args;
    for (const ExprPtr& a : e.args) args.push_back(expr(*a));
    uint32_t c = 0;
    if (b == Builtin::Repeat) c = static_cast<uint32_t>(desc_of(e.type));
    if (b == Builtin::Abs || b == Builtin::Min || b == Builtin::Max) c = static_cast<uint32_t>(e.type->kind);
    if (e.args.size() >= 1 && e.args[0]->type->kind == TypeKind::Item && b == Builtin::Repeat) {
      // repeat(item, n): the item's fields follow one another; pass their count in B via args
      args.clear();
      uint32_t v = expr(*e.args[0]);
      for (uint32_t i = 0; i < e.args[0]->type->width(); ++i) args.push_back(v + i);
      args.push_back(expr(*e.args[1]));
    }
    return run_builtin(b, args, e.type, dst, e.loc, c);
  }

  uint32_t unary_op(Op op, const Expr& e, int64_t dst, SlotKind k) {
    uint32_t v = expr(*e.args[0]);
    uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slot(k);
    emit(op, d, v, 0, 0, e.loc);
    return d;
  }

  uint32_t method(const Expr& e, int64_t dst) {
    Builtin b = static_cast<Builtin>(e.builtin);
    const Expr& self = *e.args[0];
    const Type* st = self.type;
    if (st->is_list()) return list_method(e, b, dst);
    std::vector<uint32_t> args;
    for (const ExprPtr& a : e.args) args.push_back(expr(*a));
    return run_builtin(b, args, e.type, dst, e.loc);
  }

  uint32_t list_method(const Expr& e, Builtin b, int64_t dst) {
    const Expr& list = *e.args[0];
    // A slice's methods, and first()/last() of a keyed list: one search, never a walk of the rest.
    if (is_slice(list) || ((b == Builtin::LFirst || b == Builtin::LLast) && list.type->kind == TypeKind::Keyed))
      return slice_method(e, b, dst);
    bool stored = is_stored(list);
    uint32_t l = list_operand(list);
    auto out = [&](SlotKind k) { return dst >= 0 ? static_cast<uint32_t>(dst) : new_slot(k); };
    switch (b) {
      case Builtin::LCount: {
        uint32_t d = out(SlotKind::Int);
        emit(stored ? Op::ST_COUNT : Op::LIST_COUNT, d, l, 0, 0, e.loc);
        return d;
      }
      case Builtin::LPush: {
        uint32_t v = expr(*e.args[1]);
        emit(stored ? Op::ST_APPEND : Op::SEQ_PUSH, v, l, 0, 0, e.loc);
        return 0;
      }
      case Builtin::LPop: {
        uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(e.type);
        emit(stored ? Op::ST_POP : Op::SEQ_POP, d, l, 0, 0, e.loc);
        return d;
      }
      case Builtin::LHas: case Builtin::LRemove: {
        uint32_t k = keys(e, e.args.size() - 1);
        uint32_t d = out(SlotKind::Bool);
        Op op = b == Builtin::LHas ? (stored ? Op::ST_HAS : Op::MAP_HAS) : (stored ? Op::ST_REMOVE : Op::MAP_REMOVE);
        emit(op, d, l, k, 0, e.loc);
        return d;
      }
      case Builtin::LGet: {
        uint32_t k = keys(e, e.args.size() - 1);
        uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(e.type);
        emit(stored ? Op::ST_GET : Op::MAP_GET, d, l, k, 0, e.loc);
        return d;
      }
      default: break;
    }
    // The rest run as standard functions on the list. C tells the VM where the list is:
    // 0 = an event list in the first argument; 1 + n = stored list n.
    std::vector<uint32_t> args;
    if (!stored) args.push_back(l);
    for (size_t i = 1; i < e.args.size(); ++i) {
      if (e.args[i]->kind == ExprKind::Name && e.int_value >= 0 &&
          (b == Builtin::LSortBy || b == Builtin::LSum || b == Builtin::LMin || b == Builtin::LMax) &&
          list.type->element->kind == TypeKind::Item) {
        uint32_t fi = new_slot(SlotKind::Int);
        emit(Op::CONST, fi, 0, 0, e.args[i]->int_value, e.loc);
        args.push_back(fi);
        continue;
      }
      args.push_back(expr(*e.args[i]));
    }
    // C says where the list is: (descriptor << 1) for an event list passed as the first
    // argument, (stored list number << 1) | 1 for a stored list.
    uint32_t c_operand = stored ? ((l << 1) | 1) : (static_cast<uint32_t>(desc_of(list.type)) << 1);
    return run_builtin(b, args, e.type, dst, e.loc, c_operand);
  }
};

}  // namespace

Program lower_module(const CheckedModule& module, const std::string& path) {
  Program p;
  p.path = path;
  Lowerer(module, p).run();
  for (const Function& f : p.functions) check_function(f, "lowering");
  return p;
}

}  // namespace pure::ir
