// frontend/checker_exprs.cpp — expressions: names, unary, binary and bitwise operators,
// conditionals, item and seq literals; an int literal adapts to num where a num is wanted.
#include <algorithm>

#include "frontend/checker_internal.h"

namespace pure::checker {

// Checks e; `expected` (may be null) lets literals adapt (an int literal where a num is wanted).
const Type* Checker::check_expr(Expr& e, const Type* expected) {
  const Type* t = check_expr_inner(e, expected);
  if (expected && is_num(expected) && is_int(t) && e.kind == ExprKind::Int) {
    e.kind = ExprKind::Num;
    e.num_value = static_cast<double>(e.int_value);
    t = tt_.num_type();
  }
  return e.type = t;
}

const Type* Checker::check_expr_inner(Expr& e, const Type* expected) {
  switch (e.kind) {
    case ExprKind::Int: return e.type && e.type->is_enum() ? e.type : tt_.int_type();  // an enum member stays one
    case ExprKind::Num: return tt_.num_type();
    case ExprKind::Bool: return tt_.bool_type();
    case ExprKind::Text: return tt_.text_type();
    case ExprKind::Interp:
      for (ExprPtr& part : e.args) {
        const Type* t = check_expr(*part, nullptr);
        if (t->kind == TypeKind::Void) error(part->loc, "this has no value to put into a text");
      }
      return tt_.text_type();
    case ExprKind::Name: return check_name(e);
    case ExprKind::Unary: return check_unary(e, expected);
    case ExprKind::Binary: return check_binary(e, expected);
    case ExprKind::Call: case ExprKind::Method: {
      const Type* t = e.kind == ExprKind::Call ? check_call(e) : check_method(e);
      if (e.builtin != static_cast<int>(Builtin::LSortBy) || e.kind != ExprKind::Method)
        for (ExprPtr& a : e.args)
          if (a && a->order != Expr::Unordered)
            error(a->loc, std::string("'") + (a->order == Expr::Desc ? "desc" : "asc") + "' orders a key of '.sort_by' only",
                  "write 'xs.sort_by(field desc)'");
      return t;
    }
    case ExprKind::Field:
      if (const Type* t = enum_member(e)) return t;
      check_expr(*e.args[0], nullptr);
      return field_type(e);
    case ExprKind::Index: {
      const Type* t = check_list_index(e, false);
      if (e.int_value == 1)
        error(e.loc, "a key prefix selects several items; loop over it or read it with a slice method",
              "'for x in list[prefix]', or .first(), .last(), .count(), .sum(f), .min(f), .max(f)");
      return t;
    }
    case ExprKind::ItemLit: return check_item_literal(e, expected);
    case ExprKind::SeqLit: return check_seq_literal(e, expected);
    case ExprKind::Cond: return check_conditional(e, expected);
    case ExprKind::NewList: {
      const Type* t = resolve_type(e.type_expr.get());
      if (!t->is_list() && !is_error(t)) {
        error(e.loc, "'" + type_name(t) + "' is not a list type");
        return tt_.error();
      }
      return t;
    }
  }
  return tt_.error();
}

// `Status.open`, when Status names an enum (and no local or constant): the member becomes an int
// literal of the enum's type, its index. Null when e is not an enum member; the error type after
// an unknown member (reported with the members to choose from).
const Type* Checker::enum_member(Expr& e) {
  if (e.kind != ExprKind::Field || e.args.empty() || e.args[0]->kind != ExprKind::Name) return nullptr;
  const std::string& name = e.args[0]->text;
  if (fn_ && lookup_local(name) >= 0) return nullptr;
  if (const_index_.count(name)) return nullptr;
  auto it = type_names_.find(name);
  if (it == type_names_.end() || !it->second->is_enum()) return nullptr;
  const Type* t = it->second;
  auto member = std::find(t->members.begin(), t->members.end(), e.text);
  if (member == t->members.end()) {
    std::string all;
    for (const std::string& m : t->members) all += (all.empty() ? "" : ", ") + m;
    std::string hint = suggest(e.text, t->members);
    error(e.loc, "enum '" + name + "' has no member '" + e.text + "'; its members are " + all, hint);
    return tt_.error();
  }
  e.kind = ExprKind::Int;
  e.int_value = member - t->members.begin();
  e.args.clear();
  e.type = t;
  return t;
}

const Type* Checker::check_name(Expr& e) {
  if (e.text.empty()) return tt_.error();  // the parser's stand-in for an expression it reported (parser.cpp)
  int local = lookup_local(e.text);
  if (local >= 0) {
    e.name_kind = NameKind::Local;
    e.ref = local;
    return fn_->locals[local].type;
  }
  if (substitute_const(e)) return e.type;
  auto l = list_index_.find(e.text);
  if (l != list_index_.end()) {
    e.name_kind = NameKind::StoredList;
    e.ref = l->second;
    if (e.text.rfind("old.", 0) == 0) m_.migrate_reads.push_back(e.text.substr(4));  // only a migrate block can
    if (!stored_list_allowed_) {
      error(e.loc, "stored list '" + e.text + "' is the module's state, not a value",
            "index it, call its methods, or loop over it; copy what you need into an event list");
      return tt_.error();
    }
    return m_.lists[l->second].resolved ? m_.lists[l->second].resolved : tt_.error();
  }
  if (e.text.rfind("old.", 0) == 0) {  // in a migrate block: the old version's lists (frontend.h, OldList)
    std::vector<std::string> old_names;
    for (const ListDecl& d : m_.lists)
      if (d.name.rfind("old.", 0) == 0) old_names.push_back(d.name);
    std::string all;
    for (const std::string& n : old_names) all += (all.empty() ? "" : ", ") + n;
    error(e.loc, "the old version has no stored list '" + e.text.substr(4) + "'" +
                     (all.empty() ? std::string(" (it has none)") : "; its lists are " + all),
          suggest(e.text, old_names));
    return tt_.error();
  }
  if (func_index_.count(e.text)) {
    error(e.loc, "'" + e.text + "' is a function; call it with parentheses");
    return tt_.error();
  }
  if (auto t = type_names_.find(e.text); t != type_names_.end()) {
    if (t->second->is_enum())
      error(e.loc, "'" + e.text + "' is an enum type, not a value", "write one of its members, e.g. '" + e.text + "." + t->second->members[0] + "'");
    else
      error(e.loc, "'" + e.text + "' is a type, not a value", "write '" + e.text + " { field: value }' for an item");
    return tt_.error();
  }
  error(e.loc, "unknown name '" + e.text + "'", suggest(e.text, visible_names()));
  return tt_.error();
}

const Type* Checker::check_unary(Expr& e, const Type* expected) {
  Tok op = static_cast<Tok>(e.op);
  const Type* t = check_expr(*e.args[0], op == Tok::Minus ? expected : op == Tok::Tilde ? nullptr : tt_.bool_type());
  if (is_error(t)) return t;
  if (op == Tok::KwNot) {
    if (t->kind != TypeKind::Bool) error(e.loc, "'not' needs a bool, not " + type_name(t));
    return tt_.bool_type();
  }
  if (op == Tok::Tilde) {
    if (!is_int(t)) {
      error(e.loc, "'~' needs an int, not " + type_name(t), t->kind == TypeKind::Bool ? "write 'not' for a bool" : "");
      return tt_.error();
    }
    return t;
  }
  if (!is_numeric(t)) {
    error(e.loc, "'-' needs an int or num, not " + type_name(t));
    return tt_.error();
  }
  return t;
}

// Int literals adapt to num when the other side is a num.
void Checker::unify_literals(Expr& a, Expr& b) {
  if (!a.type || !b.type) return;
  auto adapt = [&](Expr& lit, const Type* other) {
    if (lit.kind == ExprKind::Int && is_num(other) && !(lit.type && lit.type->is_enum())) {
      lit.kind = ExprKind::Num;
      lit.num_value = static_cast<double>(lit.int_value);
      lit.type = tt_.num_type();
    }
  };
  adapt(a, b.type);
  adapt(b, a.type);
}

const Type* Checker::check_binary(Expr& e, const Type* expected) {
  Tok op = static_cast<Tok>(e.op);
  Expr& a = *e.args[0];
  Expr& b = *e.args[1];
  if (op == Tok::KwAnd || op == Tok::KwOr) {
    expect_bool(&a, op == Tok::KwAnd ? "each side of 'and'" : "each side of 'or'");
    expect_bool(&b, op == Tok::KwAnd ? "each side of 'and'" : "each side of 'or'");
    return tt_.bool_type();
  }
  if (is_bitwise(op)) return check_bitwise(e);
  bool arithmetic = op == Tok::Plus || op == Tok::Minus || op == Tok::Star || op == Tok::Slash || op == Tok::Percent;
  const Type* hint = arithmetic && expected && is_num(expected) ? expected : nullptr;
  check_expr(a, hint);
  check_expr(b, hint ? hint : (a.type && is_num(a.type) ? a.type : nullptr));
  unify_literals(a, b);
  const Type* ta = a.type;
  const Type* tb = b.type;
  if (is_error(ta) || is_error(tb)) return arithmetic ? (is_error(ta) ? tb : ta) : tt_.bool_type();
  if (op == Tok::NotEq && e.text == "assert_eq") return check_assert_eq(e);
  std::string sym = tok_name(op);
  if (ta != tb) {
    std::string hint_text;
    if (is_numeric(ta) && is_numeric(tb)) hint_text = "convert one side with num(...) or int(...)";
    else if ((ta->kind == TypeKind::Text) != (tb->kind == TypeKind::Text) && op == Tok::Plus)
      hint_text = "write \"{a}{b}\" or convert with text(...)";
    error(e.loc, "cannot use " + sym + " on " + type_name(ta) + " and " + type_name(tb), hint_text);
    return arithmetic ? tt_.error() : tt_.bool_type();
  }
  if (arithmetic) {
    if (op == Tok::Plus && ta->kind == TypeKind::Text) return ta;
    if (!is_numeric(ta)) {
      error(e.loc, "cannot use " + sym + " on " + type_name(ta));
      return tt_.error();
    }
    return ta;
  }
  // comparisons
  if (op == Tok::EqEq || op == Tok::NotEq) {
    if (!ta->is_scalar()) error(e.loc, "cannot compare " + type_name(ta) + " values with " + sym, "compare their fields");
  } else if (!is_numeric(ta) && ta->kind != TypeKind::Text) {
    error(e.loc, "cannot order " + type_name(ta) + " values with " + sym);
  }
  return tt_.bool_type();
}

// The comparison inside a test's `assert_eq(a, b)` (frontend/parser.cpp, assertion), its sides
// checked: one type on both sides; scalars compare with `!=`, items and lists by their printed
// form (`text(a) != text(b)`, the form the failure message shows), since `!=` takes scalars only.
const Type* Checker::check_assert_eq(Expr& e) {
  const Type* ta = e.args[0]->type;
  const Type* tb = e.args[1]->type;
  if (ta != tb) {
    error(e.loc, "assert_eq compares two values of one type, not " + type_name(ta) + " and " + type_name(tb),
          is_numeric(ta) && is_numeric(tb) ? "convert one side with num(...) or int(...)" : "");
    return tt_.bool_type();
  }
  if (!ta->is_scalar()) {
    for (ExprPtr& side : e.args) {
      auto call = std::make_unique<Expr>(ExprKind::Call, side->loc);
      call->text = "text";
      call->args.push_back(std::move(side));
      side = std::move(call);
      check_expr(*side, nullptr);
    }
  }
  return tt_.bool_type();
}

// if c { a } else { b }: both branches have one type, which is the value's.
const Type* Checker::check_conditional(Expr& e, const Type* expected) {
  expect_bool(e.args[0].get(), "an 'if' condition");
  Expr& a = *e.args[1];
  Expr& b = *e.args[2];
  check_expr(a, expected);
  check_expr(b, expected ? expected : a.type);
  unify_literals(a, b);  // 1 and 2.5: the int literal adapts to num, as on the sides of an operator
  const Type* ta = a.type;
  const Type* tb = b.type;
  if (is_error(ta) || is_error(tb)) return tt_.error();
  for (Expr* side : {&a, &b})
    if (side->type->kind == TypeKind::Void) {
      error(side->loc, "this branch has no value; an 'if' used as a value needs one in each branch");
      return tt_.error();
    }
  if (ta != tb) {
    std::string hint;
    if (is_numeric(ta) && is_numeric(tb)) hint = "convert one branch with num(...) or int(...)";
    error(e.loc, "the branches of this 'if' have different types: " + type_name(ta) + " and " + type_name(tb), hint);
    return tt_.error();
  }
  return ta;
}

bool Checker::is_bitwise(Tok op) {
  return op == Tok::Amp || op == Tok::Pipe || op == Tok::Caret || op == Tok::Shl || op == Tok::Shr;
}

// & | ^ << >>: two ints, an int.
const Type* Checker::check_bitwise(Expr& e) {
  Tok op = static_cast<Tok>(e.op);
  std::string sym = tok_name(op);
  const Type* ta = check_expr(*e.args[0], nullptr);
  const Type* tb = check_expr(*e.args[1], nullptr);
  if (is_error(ta) || is_error(tb)) return tt_.error();
  if (is_int(ta) && is_int(tb)) return ta;
  const Type* t = is_int(ta) ? tb : ta;  // the first side that is not an int, reported once
  std::string hint;
  if (t->kind == TypeKind::Bool)
    hint = op == Tok::Amp ? "write 'and' for bools" : op == Tok::Pipe ? "write 'or' for bools"
         : op == Tok::Caret ? "write 'a != b' for the exclusive or of bools" : "";
  else if (is_num(t))
    hint = "convert with int(...)";
  error(e.loc, "cannot use " + sym + " on " + type_name(t) + "; bitwise operators take ints", hint);
  return tt_.error();
}

const Type* Checker::check_item_literal(Expr& e, const Type* expected) {
  if (!e.text.empty()) {
    auto it = type_names_.find(e.text);
    if (it == type_names_.end() && e.text == "outcome") {  // the predeclared item, as in types
      check_item_fields(e, tt_.outcome(), 0);
      return tt_.outcome();
    }
    if (it == type_names_.end() || it->second->kind != TypeKind::Item) {
      for (ExprPtr& a : e.args) check_expr(*a, nullptr);
      if (it != type_names_.end() && is_error(it->second)) return tt_.error();  // its declaration's error is reported
      std::vector<std::string> items;
      for (auto& [n, t] : type_names_)
        if (t->kind == TypeKind::Item) items.push_back(n);
      error(e.loc, "unknown item type '" + e.text + "'", suggest(e.text, items));
      return tt_.error();
    }
    check_item_fields(e, it->second, 0);
    return it->second;
  }
  if (expected && expected->kind == TypeKind::Item) {
    check_item_fields(e, expected, 0);
    return expected;
  }
  for (ExprPtr& a : e.args) check_expr(*a, nullptr);
  error(e.loc, "cannot tell the type of this item", "name it: 'TypeName { ... }'");
  return tt_.error();
}

const Type* Checker::check_seq_literal(Expr& e, const Type* expected) {
  const Type* element = expected && expected->kind == TypeKind::Seq ? expected->element : nullptr;
  if (e.args.empty()) {
    if (!element) {
      error(e.loc, "cannot tell the type of an empty list", "write 'seq int' (an empty sequence of int) or annotate: 'let xs: seq int = []'");
      return tt_.error();
    }
    return expected;
  }
  for (ExprPtr& a : e.args) {
    const Type* t = check_expr(*a, element);
    if (is_error(t)) continue;
    if (!element) {
      // an int literal followed by num literals: the whole list is num
      element = t;
      continue;
    }
    if (t != element) {
      if (is_int(element) && is_num(t)) {
        element = t;
        for (ExprPtr& prev : e.args) check_expr(*prev, element);
        continue;
      }
      error(a->loc, "a list's elements must share one type: this is " + type_name(t) + ", the first is " + type_name(element));
    }
  }
  if (!element) return tt_.error();
  if (element->is_list()) {
    error(e.loc, "a list cannot hold lists");
    return tt_.error();
  }
  if (is_valued_outcome(element)) {
    no_valued_outcome_in_list(element, e.loc);
    return tt_.error();
  }
  if (!refuse_row_with_list(element, e.loc)) return tt_.error();
  return tt_.seq_of(element);
}

}  // namespace pure::checker
