// ir/lower_loops.cpp — TreeLowerer's loops and the optimisations that make them cheap: for loops
// over ranges, sequences, keyed and stored lists (iterators, ITER_SKIP of unread text fields),
// slices (SLICE_*: a key prefix, a range, backwards), and pieces lets (TEXT_ITER: a loop over
// t.split() that never makes the list).
#include "ir/lower_internal.h"

namespace pure::ir::lowering {

// ---- pieces lets ---------------------------------------------------------------------------

// t.split(sep), t.words(), t.lines(): a loop over one walks the pieces (TEXT_ITER) and never
// makes the `seq text`.
bool TreeLowerer::is_pieces_call(const Expr& e) {
  return e.kind == ExprKind::Method && (e.builtin == static_cast<int>(Builtin::TSplit) ||
                                        e.builtin == static_cast<int>(Builtin::TWords) ||
                                        e.builtin == static_cast<int>(Builtin::TLines));
}

// `let words = t.split(sep)` (or words(), lines()) whose local is named once, as the iterable
// of a later loop of the same block: the list is never made. The text and the separator are
// read here, where the let stands, into slots of their own (so the later statements cannot
// change them), and the loop walks their pieces (TEXT_ITER): the same pieces, in order.
bool TreeLowerer::pieces_let(const std::vector<StmtPtr>& body, size_t i) {
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

// ---- slices (ops.def: SLICE_*) -------------------------------------------------------------

bool TreeLowerer::is_slice(const Expr& e) {
  if (e.kind == ExprKind::Index) return e.int_value == 1;
  return e.kind == ExprKind::Method && e.builtin == static_cast<int>(Builtin::LRange);
}

bool TreeLowerer::is_reverse_walk(const Expr& e) {
  return e.kind == ExprKind::Method && e.builtin == static_cast<int>(Builtin::LReverse) && e.int_value == 2;
}

TreeLowerer::SliceParts TreeLowerer::slice_parts(const Expr& e) {
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
uint32_t TreeLowerer::slice_operand(const SliceParts& p, uint32_t& list, Loc loc) {
  bool stored = is_stored(*p.list);
  list = list_operand(*p.list);
  uint32_t word = new_slot(SlotKind::Int);
  std::vector<uint32_t> keys;
  for (size_t i = 0; i < p.prefix; ++i) keys.push_back(new_slots(p.list->type->element->fields[i].type));
  uint32_t lo = 0, hi = 0;
  if (p.lo) {
    // the bounded key's type: an int, or a text whose slots hold the bounds for as long as the
    // slice's cursor compares rows with them (their own slots, never a local's)
    const Type* bound = p.list->type->element->fields[p.prefix].type;
    lo = new_slots(bound);
    hi = new_slots(bound);
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
uint32_t TreeLowerer::slice_method(const Expr& e, Builtin b, int64_t dst) {
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
void TreeLowerer::slice_lookup(const Expr& e, uint32_t dst, int missing_block) {
  SliceParts p = slice_parts(*e.args[0]);
  p.reverse = e.builtin == static_cast<int>(Builtin::LLast);
  uint32_t l = 0;
  uint32_t c = slice_operand(p, l, e.loc);
  emit(Op::SLICE_LOOKUP, dst, l, c, missing_block, e.loc);
  int found = new_block();
  jump(found);
  set_block(found);
}

// ---- for loops -----------------------------------------------------------------------------

void TreeLowerer::for_statement(const Stmt& s) {
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
void TreeLowerer::fields_named(const Expr& e, int local, uint64_t& used) {
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

void TreeLowerer::fields_named(const Stmt& s, int local, uint64_t& used) {
  for (const Expr* e : {s.expr.get(), s.target.get(), s.range_end.get()})
    if (e) fields_named(*e, local, used);
  for (const std::vector<StmtPtr>* b : {&s.body, &s.else_body})
    for (const StmtPtr& c : *b)
      if (c) fields_named(*c, local, used);
}

// The text fields of `row` (the loop's item, local `local`) that the body of `loop` never
// names: ITER_SKIP's mask.
uint64_t TreeLowerer::unread_text_fields(const Stmt& loop, int local, const Type* row) {
  if (row->fields.size() > 64) return 0;
  uint64_t used = 0;
  for (const StmtPtr& c : loop.body)
    if (c) fields_named(*c, local, used);
  uint64_t skip = 0;
  for (size_t i = 0; i < row->fields.size(); ++i)
    if (row->fields[i].type->kind == TypeKind::Text && !((used >> i) & 1)) skip |= uint64_t{1} << i;
  return skip;
}

const TreeLowerer::PiecesLet* TreeLowerer::pieces_let_of(const Expr& it) const {
  if (it.kind != ExprKind::Name || it.name_kind != NameKind::Local) return nullptr;
  auto found = pieces_lets_.find(it.ref);
  return found == pieces_lets_.end() ? nullptr : &found->second;
}

void TreeLowerer::start_iterator(const Expr& it, uint32_t iter) {
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
    // an int or a text first key; text bounds in slots of their own, as a text prefix's key above
    const Type* bound = list.type->element->fields[0].type;
    uint32_t lo = new_slots(bound), hi = new_slots(bound);
    expr_into(*it.args[1], lo);
    expr_into(*it.args[2], hi);
    emit(is_stored(list) ? Op::ST_ITER : Op::LIST_ITER, iter, l, lo, -1, it.loc);
    return;
  }
  uint32_t l = list_operand(it);
  emit(is_stored(it) ? Op::ST_ITER : Op::LIST_ITER, iter, l, 0, 0, it.loc);
}

// for x in xs / for i, x in xs over an event sequence: by position, while position < count.
void TreeLowerer::seq_for(const Stmt& s, const Type* lt) {
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
void TreeLowerer::counting_loop(const Stmt& s, uint32_t i, uint32_t end, Refresh refresh, Enter enter) {
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

}  // namespace pure::ir::lowering
