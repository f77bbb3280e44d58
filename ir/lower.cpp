// ir/lower.cpp — lowers a checked syntax tree into the control-flow graph of ir.h:
// lower_module and TreeLowerer's descriptors, slots and blocks, functions, statements, assignments
// and conditions. Loops are in lower_loops.cpp, expressions in lower_exprs.cpp (lower_internal.h).
#include <bit>

#include "base/limits.h"
#include "ir/lower_internal.h"

namespace pure::ir::lowering {

std::vector<std::string> former_names(const ListDecl& l);  // below

void TreeLowerer::run() {
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

// ---- descriptors and constants ------------------------------------------------------------

// A stored list's columns' `was` names (docs/upgrades.md), keys first as make_desc orders them.
std::vector<std::string> former_names(const ListDecl& l) {
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

ListDesc TreeLowerer::make_desc(const Type* t, const std::string& name) {
  ListDesc d;
  d.name = name.empty() ? type_name(t) : name;
  d.sequence = t->kind == TypeKind::Seq;
  d.key_count = d.sequence ? 0 : t->key_count;
  const Type* e = t->element;
  if (e->kind == TypeKind::Item) {
    for (const FieldInfo& fi : e->fields) {
      d.cols.push_back(col_type(fi.type));
      d.names.push_back(fi.name);
      d.members.push_back(fi.type->members);
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
    d.members.push_back(e->members);
    d.defaults.push_back(0);
  }
  return d;
}

// IMM of SEQ_GET and SEQ_SET: 1 when the sequence keeps one byte a row (a narrow list, one bool
// column: rt::ListShape::narrow()), a hint for native code, which checks the list all the same.
int64_t TreeLowerer::narrow_hint(const Type* t) {
  const ListDesc& d = p_.lists[static_cast<size_t>(desc_of(t))];
  return d.sequence && d.cols.size() == 1 && d.cols[0] == rt::ColType::Bool ? 1 : 0;
}

int TreeLowerer::desc_of(const Type* t) {
  auto it = desc_index_.find(t);
  if (it != desc_index_.end()) return it->second;
  int i = static_cast<int>(p_.lists.size());
  p_.lists.push_back(make_desc(t, ""));
  desc_index_[t] = i;
  return i;
}

int TreeLowerer::text_constant(const std::string& s) {
  auto it = text_index_.find(s);
  if (it != text_index_.end()) return it->second;
  int i = static_cast<int>(p_.texts.size());
  p_.texts.push_back(s);
  text_index_[s] = i;
  return i;
}

// ---- slots, blocks, instructions ----------------------------------------------------------

uint32_t TreeLowerer::new_slot(SlotKind k, const std::string& name) {
  f_->slots.push_back(k);
  f_->slot_names.push_back(name);
  check_frame_size();
  return static_cast<uint32_t>(f_->slots.size() - 1);
}

// A frame (slots and call area) past limits::kFrameSlots cannot be addressed by 16-bit operands.
// Reported once per function, at the expression that takes most of the slots: the innermost one
// that took at least half of the limit by itself (a long list literal), being lowered or done,
// else the statement being lowered when the limit was passed.
void TreeLowerer::check_frame_size() {
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
uint32_t TreeLowerer::new_slots(const Type* t, const std::string& name) {
  if (t->kind == TypeKind::Item) {
    uint32_t first = static_cast<uint32_t>(f_->slots.size());
    field_slots(t, name);
    if (t->width() == 0) new_slot(SlotKind::Int, name);  // keep distinct slots for empty items
    return first;
  }
  return new_slot(scalar_kind(t), name);
}

// An item's slots, one per scalar or list, a field that is an item giving its own in place.
void TreeLowerer::field_slots(const Type* t, const std::string& name) {
  for (const FieldInfo& fi : t->fields) {
    std::string n = name.empty() ? "" : name + "." + fi.name;
    if (fi.type->kind == TypeKind::Item) field_slots(fi.type, n);
    else new_slot(scalar_kind(fi.type), n);
  }
}

// The call area: arguments of every call are placed there only after all of them have been
// evaluated, so one area per function serves all calls, nested ones included.
uint32_t TreeLowerer::new_scratch(uint32_t n) {
  f_->scratch_slots = std::max(f_->scratch_slots, n);
  check_frame_size();
  return kScratch;
}

int TreeLowerer::new_block() {
  f_->blocks.emplace_back();
  return static_cast<int>(f_->blocks.size() - 1);
}

bool TreeLowerer::terminated() const {
  const auto& insts = f_->blocks[cur_].insts;
  if (insts.empty()) return false;
  Op op = insts.back().op;
  return op == Op::JUMP || op == Op::RET || op == Op::FAIL;
}

void TreeLowerer::emit(Op op, uint32_t a, uint32_t b, uint32_t c, int64_t imm, Loc loc) {
  if (terminated()) set_block(new_block());  // unreachable code still needs a home
  f_->blocks[cur_].insts.push_back(Inst{op, a, b, c, imm, loc});
}

void TreeLowerer::jump(int target) {
  if (!terminated()) emit(Op::JUMP, 0, 0, 0, target);
}

void TreeLowerer::move(uint32_t dst, uint32_t src, Loc loc) {
  if (dst == src) return;
  emit(is_ref_slot(dst) || is_ref_slot(src) ? Op::MOVE_REF : Op::MOVE, dst, src, 0, 0, loc);
}

void TreeLowerer::move_value(const Type* t, uint32_t dst, uint32_t src) {
  for (uint32_t i = 0; i < t->width(); ++i) move(dst + i, src + i);
}

// A parameter's or result's type as hosts see it; a list names its descriptor, so that a host
// can build one (a seq argument) or read one.
ValueType TreeLowerer::host_type(const Type* t) {
  ValueType v = value_type_of(t);
  name_descs(t, v);
  return v;
}

void TreeLowerer::name_descs(const Type* t, ValueType& v) {
  if (!t) return;
  if (t->is_list()) v.desc = desc_of(t);
  if (t->kind == TypeKind::Item)  // an item's list field (`lines: seq Line`) names its own, at any depth
    for (size_t i = 0; i < t->fields.size(); ++i)
      if (t->fields[i].type->is_list() || t->fields[i].type->kind == TypeKind::Item) name_descs(t->fields[i].type, v.fields[i]);
}

// ---- functions ----------------------------------------------------------------------------

void TreeLowerer::lower_function(const FuncDecl& fd) {
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
    for (uint32_t k = 0; k < result->width(); ++k) f_->result_kinds.push_back(scalar_kind(result->slot_type(k)));
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

void TreeLowerer::count_uses(const Expr* e) {
  if (!e) return;
  if (e->kind == ExprKind::Name && e->name_kind == NameKind::Local && e->ref >= 0 &&
      static_cast<size_t>(e->ref) < local_uses_.size())
    ++local_uses_[static_cast<size_t>(e->ref)];
  for (const ExprPtr& a : e->args) count_uses(a.get());
}

void TreeLowerer::count_uses(const Stmt* s) {
  if (!s) return;
  count_uses(s->expr.get());
  count_uses(s->target.get());
  count_uses(s->range_end.get());
  for (const StmtPtr& b : s->body) count_uses(b.get());
  for (const StmtPtr& b : s->else_body) count_uses(b.get());
}

void TreeLowerer::block(const std::vector<StmtPtr>& body) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (!body[i]) continue;
    if (pieces_let(body, i)) continue;
    statement(*body[i]);
  }
}

// ---- statements ---------------------------------------------------------------------------

void TreeLowerer::statement(const Stmt& s) {
  Loc outer = stmt_loc_;
  stmt_loc_ = s.loc;
  lower_statement(s);
  stmt_loc_ = outer;
}

void TreeLowerer::lower_statement(const Stmt& s) {
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

void TreeLowerer::let_statement(const Stmt& s) {
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
uint32_t TreeLowerer::keys(const Expr& ix, size_t count) {
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

void TreeLowerer::lookup(const Expr& ix, uint32_t dst, int missing_block) {
  const Expr& list = *ix.args[0];
  uint32_t l = list_operand(list);
  uint32_t k = keys(ix, ix.args.size() - 1);
  emit(is_stored(list) ? Op::ST_LOOKUP : Op::MAP_LOOKUP, dst, l, k, missing_block, ix.loc);
  int found = new_block();
  jump(found);
  set_block(found);
}

Op TreeLowerer::arithmetic_op(Tok op, bool num) {
  switch (op) {
    case Tok::Plus: case Tok::PlusEq: return num ? Op::ADD_NUM : Op::ADD_INT;
    case Tok::Minus: case Tok::MinusEq: return num ? Op::SUB_NUM : Op::SUB_INT;
    case Tok::Star: case Tok::StarEq: return num ? Op::MUL_NUM : Op::MUL_INT;
    case Tok::Slash: case Tok::SlashEq: return num ? Op::DIV_NUM : Op::DIV_INT;
    default: return num ? Op::MOD_NUM : Op::MOD_INT;
  }
}

Op TreeLowerer::compound_op(Tok op, const Type* t) {
  if (t->kind == TypeKind::Text) return Op::CONCAT;
  return arithmetic_op(op, t->kind == TypeKind::Num);
}

void TreeLowerer::assign(const Stmt& s) {
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
uint32_t TreeLowerer::value_for_update(const Stmt& s, const Type* t, LoadOld load_old) {
  Tok op = static_cast<Tok>(s.op);
  if (op == Tok::Eq) return expr(*s.expr);
  uint32_t old = new_slots(t);
  load_old(old);
  uint32_t v = expr(*s.expr);
  uint32_t result = new_slots(t);
  emit(compound_op(op, t), result, old, v, 0, s.loc);
  return result;
}

uint32_t TreeLowerer::keys_for_seq(const Expr& ix) {
  uint32_t pos = new_slot(SlotKind::Int);
  expr_into(*ix.args[1], pos);
  return pos;
}

// If e names slots of a local (x, or x.field, or x.field of an item local), gives the slot.
bool TreeLowerer::local_place(const Expr& e, uint32_t& slot) {
  if (e.kind == ExprKind::Name && e.name_kind == NameKind::Local) {
    slot = local_slot_[e.ref];
    return true;
  }
  if (e.kind == ExprKind::Field && local_place(*e.args[0], slot)) {
    slot += e.args[0]->type->slot_of(static_cast<size_t>(e.int_value));
    return true;
  }
  return false;
}

// ---- conditions ---------------------------------------------------------------------------

void TreeLowerer::condition(const Expr& e, int if_true, int if_false) {
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

}  // namespace pure::ir::lowering

namespace pure::ir {

Program lower_module(const CheckedModule& module, const std::string& path) {
  Program p;
  p.path = path;
  lowering::TreeLowerer(module, p).run();
  for (const Function& f : p.functions) assert_verified(f, "lowering");
  return p;
}

}  // namespace pure::ir
