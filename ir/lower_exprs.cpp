// ir/lower_exprs.cpp — TreeLowerer's expressions: values into slots, binary and unary operators,
// texts, calls of functions, standard functions and methods.
#include <bit>

#include "base/limits.h"
#include "ir/lower_internal.h"

namespace pure::ir::lowering {

// ---- expressions --------------------------------------------------------------------------

// Evaluates e into the slots starting at dst.
void TreeLowerer::expr_into(const Expr& e, uint32_t dst) {
  uint32_t got = expr(e, static_cast<int64_t>(dst));
  if (got != dst) move_value(e.type, dst, got);
}

bool TreeLowerer::is_local(const Expr& e, uint32_t slot) const {
  return e.kind == ExprKind::Name && e.name_kind == NameKind::Local && local_slot_[e.ref] == slot;
}

// s = "{s}...": the other parts are appended to s by CONCAT, which appends in place while s's
// text is unshared (as for s = s + "..."), so building a text this way takes linear time, not
// quadratic. Every part is evaluated before the first append, so parts that read s see it
// unchanged; a part that is s itself is copied to a slot of its own (sharing the text, so
// CONCAT then copies instead of appending).
uint32_t TreeLowerer::append_parts(const std::vector<const Expr*>& parts, uint32_t s, Loc loc) {
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
uint32_t TreeLowerer::expr(const Expr& e, int64_t dst) {
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

uint32_t TreeLowerer::lower_expr(const Expr& e, int64_t dst) {
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
      return b + base.type->slot_of(static_cast<size_t>(e.int_value));  // `s.corner.x`: slots in slots
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
      // A field that is an item takes its slots in place (`corner: { x: 1, y: 2 }`).
      size_t skip = e.type->fields.size() - e.args.size();
      uint32_t first = static_cast<uint32_t>(f_->slots.size());
      for (size_t i = skip; i < e.type->fields.size(); ++i) new_slots(e.type->fields[i].type);
      if (e.args.empty()) new_slot(SlotKind::Int);
      uint32_t at = first;
      for (size_t i = 0; i < e.args.size(); ++i) {
        expr_into(*e.args[i], at);
        at += e.type->fields[skip + i].type->width();
      }
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
uint32_t TreeLowerer::constant(Op op, SlotKind kind, int64_t value, int64_t dst, Loc loc) {
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

uint32_t TreeLowerer::binary(const Expr& e, int64_t dst) {
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
void TreeLowerer::to_text(const Expr& e, uint32_t dst) {
  const Type* t = e.type;
  if (t->kind == TypeKind::Text) {
    expr_into(e, dst);
    return;
  }
  uint32_t v = expr(e);
  text_of(t, v, dst, e.loc);
}

void TreeLowerer::text_of(const Type* t, uint32_t v, uint32_t dst, Loc loc) {
  switch (t->kind) {
    case TypeKind::Int:
      if (t->is_enum()) enum_text(t, v, dst, loc);
      else emit(Op::INT_TEXT, dst, v, 0, 0, loc);
      return;
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
      for (size_t i = 0; i < shown; ++i) show(t->fields[i].name, t->fields[i].type, v + t->slot_of(i));
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

// An enum value's member name: a chain of comparisons with each member's index (the last member
// needs none: a value of the type is always one of its members), made of ops every engine has.
void TreeLowerer::enum_text(const Type* t, uint32_t v, uint32_t dst, Loc loc) {
  size_t n = t->members.size();
  int done = new_block();
  std::vector<int> blocks;
  uint32_t index = n > 1 ? new_slot(SlotKind::Int) : 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    blocks.push_back(new_block());
    emit(Op::CONST, index, 0, 0, static_cast<int64_t>(i), loc);
    emit(Op::JEQ_INT, 0, v, index, blocks.back(), loc);
  }
  emit(Op::CONST_TEXT, dst, 0, 0, text_constant(t->members[n - 1]), loc);
  jump(done);
  for (size_t i = 0; i + 1 < n; ++i) {
    set_block(blocks[i]);
    emit(Op::CONST_TEXT, dst, 0, 0, text_constant(t->members[i]), loc);
    jump(done);
  }
  set_block(done);
}

// User functions, events and queries: arguments go straight into the callee's frame.
uint32_t TreeLowerer::call(const Expr& e, int64_t dst) {
  if (e.builtin >= 0) return builtin_call(e, dst);
  const FuncDecl& callee = m_.funcs[e.ref];
  uint32_t width = 0;
  for (size_t i = 0; i < callee.params.size(); ++i) width += callee.locals[i].type->width();
  const Type* rt = e.type;
  uint32_t rwidth = rt->width();
  // Arguments that call something are evaluated first (their calls use the call area);
  // simple scalar arguments are then computed straight into it. The counted references go in
  // last, just before the CALL: a reference in the call area is owned by the callee-to-be and
  // nothing releases it there, so no instruction that can fault (a simple scalar's overflow)
  // may run between its MOVE_REF and the CALL (vm/calls.cpp: call_function releases the
  // arguments of a call that faults itself).
  std::vector<int64_t> values(e.args.size(), -1);
  for (size_t i = 0; i < e.args.size(); ++i)
    if (!is_simple_scalar(*e.args[i])) values[i] = expr(*e.args[i]);
  uint32_t base = new_scratch(std::max(width, rwidth));
  uint32_t off = 0;
  struct RefMove { uint32_t to, from; Loc loc; };
  std::vector<RefMove> refs;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const Type* pt = callee.locals[i].type;
    if (values[i] < 0) {
      expr_into(*e.args[i], base + off);
      off += 1;
      continue;
    }
    uint32_t v = static_cast<uint32_t>(values[i]);
    for (uint32_t k = 0; k < pt->width(); ++k) {
      if (holds_ref(pt, k)) refs.push_back({base + off + k, v + k, e.args[i]->loc});
      else emit(Op::MOVE, base + off + k, v + k, 0, 0, e.args[i]->loc);
    }
    off += pt->width();
  }
  for (const RefMove& r : refs) emit(Op::MOVE_REF, r.to, r.from, 0, 0, r.loc);
  emit(Op::CALL, base, 0, e.int_value == 1 ? 1 : 0, e.ref, e.loc);  // C = 1: `try`, a caught query or inner event
  return take_results(rt, base, dst, e.loc);
}

// An int, num or bool expression that neither calls anything nor reads lists: safe to
// compute directly into the call area.
bool TreeLowerer::is_simple_scalar(const Expr& e) {
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
bool TreeLowerer::holds_ref(const Type* t, uint32_t k) {
  return t->slot_type(k)->is_ref();  // an item's slot k: nested items flattened
}

uint32_t TreeLowerer::take_results(const Type* rt, uint32_t base, int64_t dst, Loc loc) {
  if (rt->kind == TypeKind::Void) return 0;
  uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(rt);
  for (uint32_t k = 0; k < rt->width(); ++k) {
    emit(holds_ref(rt, k) ? Op::TAKE_REF : Op::TAKE, d + k, base + k, 0, 0, loc);
  }
  return d;
}

// Standard functions borrow their arguments: they are copied raw into scratch slots.
uint32_t TreeLowerer::run_builtin(Builtin b, const std::vector<uint32_t>& args, const Type* result, int64_t dst, Loc loc,
                     uint32_t c_operand) {
  uint32_t width = std::max<uint32_t>(static_cast<uint32_t>(args.size()), result->width());
  uint32_t base = new_scratch(width);
  for (size_t i = 0; i < args.size(); ++i) emit(Op::MOVE, base + static_cast<uint32_t>(i), args[i], 0, 0, loc);
  emit(Op::BUILTIN, base, static_cast<uint32_t>(args.size()), c_operand, static_cast<int64_t>(b), loc);
  return take_results(result, base, dst, loc);
}

uint32_t TreeLowerer::builtin_call(const Expr& e, int64_t dst) {
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

uint32_t TreeLowerer::unary_op(Op op, const Expr& e, int64_t dst, SlotKind k) {
  uint32_t v = expr(*e.args[0]);
  uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slot(k);
  emit(op, d, v, 0, 0, e.loc);
  return d;
}

uint32_t TreeLowerer::method(const Expr& e, int64_t dst) {
  Builtin b = static_cast<Builtin>(e.builtin);
  const Expr& self = *e.args[0];
  const Type* st = self.type;
  if (st->is_list()) return list_method(e, b, dst);
  std::vector<uint32_t> args;
  for (const ExprPtr& a : e.args) args.push_back(expr(*a));
  return run_builtin(b, args, e.type, dst, e.loc);
}

uint32_t TreeLowerer::list_method(const Expr& e, Builtin b, int64_t dst) {
  const Expr& list = *e.args[0];
  // m.clear() and m[prefix].clear() of a stored list: one instruction, the prefix's keys at C..
  if (b == Builtin::LClear && is_slice(list) && list.kind == ExprKind::Index && is_stored(*list.args[0])) {
    uint32_t given = static_cast<uint32_t>(list.args.size() - 1);
    uint32_t k = keys(list, given);
    emit(Op::ST_CLEAR, 0, list_operand(*list.args[0]), k, given, e.loc);
    return 0;
  }
  if (b == Builtin::LClear && is_stored(list)) {
    emit(Op::ST_CLEAR, 0, list_operand(list), 0, 0, e.loc);
    return 0;
  }
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
      const Expr* fallback = e.int_value == 1 ? e.args.back().get() : nullptr;  // `else DEFAULT`
      uint32_t given = static_cast<uint32_t>(e.args.size() - 1 - (fallback ? 1 : 0));
      uint32_t k = keys(e, given);
      uint32_t d = dst >= 0 ? static_cast<uint32_t>(dst) : new_slots(e.type);
      if (fallback) {
        // a missing row reads as its keys and the default's fields, the default evaluated then only
        int missing = new_block(), done = new_block();
        emit(stored ? Op::ST_LOOKUP : Op::MAP_LOOKUP, d, l, k, missing, e.loc);
        jump(done);
        set_block(missing);
        const Type* row = list.type->element;
        uint32_t v = expr(*fallback);
        if (fallback->kind != ExprKind::ItemLit) v += given;  // a whole row: its keys are skipped
        for (uint32_t i = 0; i < given; ++i) move_value(row->fields[i].type, d + i, k + i);
        for (uint32_t i = given; i < row->fields.size(); ++i) move_value(row->fields[i].type, d + i, v + (i - given));
        jump(done);
        set_block(done);
        return d;
      }
      if (!list.type->all_fields_default()) {
        emit(stored ? Op::ST_GET : Op::MAP_GET, d, l, k, 0, e.loc);
        return d;
      }
      // every field has a default: a missing row reads as its keys and the defaults (not stored)
      int missing = new_block(), done = new_block();
      emit(stored ? Op::ST_LOOKUP : Op::MAP_LOOKUP, d, l, k, missing, e.loc);
      jump(done);
      set_block(missing);
      const Type* row = list.type->element;
      for (uint32_t i = 0; i < given; ++i) move_value(row->fields[i].type, d + i, k + i);
      for (size_t i = given; i < row->fields.size(); ++i) {
        const FieldInfo& f = row->fields[i];
        uint32_t slot = d + static_cast<uint32_t>(i);
        if (f.type->kind == TypeKind::Text) emit(Op::CONST_TEXT, slot, 0, 0, text_constant(f.default_text), e.loc);
        else if (f.type->kind == TypeKind::Num) emit(Op::CONST, slot, 0, 0, std::bit_cast<int64_t>(f.default_num), e.loc);
        else emit(Op::CONST, slot, 0, 0, f.default_int, e.loc);
      }
      jump(done);
      set_block(done);
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
      // a sort key is (field << 1) | descending; the other methods take the field alone
      int64_t key = e.args[i]->int_value;
      if (b == Builtin::LSortBy) key = (key << 1) | (e.args[i]->order == Expr::Desc ? 1 : 0);
      emit(Op::CONST, fi, 0, 0, key, e.loc);
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

}  // namespace pure::ir::lowering
