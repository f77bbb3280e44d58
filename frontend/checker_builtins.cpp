// frontend/checker_builtins.cpp — calls: the arguments of a call of a declared function, and the
// type rules of the standard functions and of the text and list methods: their signatures from
// the table frontend/builtins.def, and code for the generic ones.
#include <algorithm>

#include "frontend/checker_internal.h"

namespace pure::checker {

void Checker::check_args(Expr& e, const std::vector<const Type*>& want, size_t first, const std::string& what) {
  size_t given = e.args.size() - first;
  if (given != want.size()) {
    error(e.loc, what + " takes " + std::to_string(want.size()) + " argument" + (want.size() == 1 ? "" : "s") +
                     ", not " + std::to_string(given));
    for (size_t i = first; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
    return;
  }
  for (size_t i = 0; i < want.size(); ++i)
    expect_type(*e.args[first + i], want[i], "argument " + std::to_string(i + 1) + " of " + what);
}

const Type* Checker::check_call(Expr& e) {
  auto f = func_index_.find(e.text);
  if (f != func_index_.end()) {
    FuncDecl& callee = m_.funcs[f->second];
    e.ref = f->second;
    e.name_kind = NameKind::Function;
    std::vector<const Type*> want;
    for (size_t i = 0; i < callee.params.size(); ++i) want.push_back(callee.locals[i].type);
    check_args(e, want, 0, "'" + e.text + "'");
    if (callee.kind == FuncKind::Main) {
      error(e.loc, "main cannot be called");
      return tt_.error();
    }
    if (callee.kind == FuncKind::Event) return check_event_call(e, callee, f->second);
    if (e.int_value == 1) {  // `try q(args)`: the query's outcome, its failure caught
      if (callee.kind != FuncKind::Query) {
        error(e.loc, "'try' calls a query or an event and gives its outcome; '" + e.text + "' is a function",
              "a function's failure ends main; make it a query to catch it");
        return tt_.error();
      }
      if (fn_->kind != FuncKind::Main) {
        error(e.loc, "'try' is for main: a query called from " + std::string(fn_->kind == FuncKind::Event ? "an event" : fn_->kind == FuncKind::Query ? "a query" : "a function") +
                         " runs inside its caller, and its failure is the caller's");
        return tt_.error();
      }
      return tt_.outcome_of(callee.result_type);
    }
    return callee.result_type ? callee.result_type : tt_.void_type();
  }
  if (e.int_value == 1 && find_builtin(e.text, Builtin::Print, kFirstTextMethod) >= 0) {
    for (ExprPtr& a : e.args) check_expr(*a, nullptr);
    error(e.loc, "'try' calls a query or an event and gives its outcome; '" + e.text + "' is a standard function");
    return tt_.error();
  }
  int b = find_builtin(e.text, Builtin::Print, kFirstTextMethod);
  if (b >= 0) {
    e.builtin = b;
    return check_builtin_call(e, static_cast<Builtin>(b));
  }
  for (ExprPtr& a : e.args) check_expr(*a, nullptr);
  if (lookup_local(e.text) >= 0 || list_index_.count(e.text)) {
    error(e.loc, "'" + e.text + "' is not a function");
    return tt_.error();
  }
  // Declared, but its header did not parse: that error is already reported.
  if (std::find(m_.unparsed_funcs.begin(), m_.unparsed_funcs.end(), e.text) != m_.unparsed_funcs.end()) return tt_.error();
  std::vector<std::string> names;
  for (auto& [n, i] : func_index_) names.push_back(n);
  for (int i = 0; i < static_cast<int>(kFirstTextMethod); ++i) names.push_back(builtin_name(static_cast<Builtin>(i)));
  error(e.loc, "unknown function '" + e.text + "'", suggest(e.text, names));
  return tt_.error();
}

// A call of an event. From main it is a transaction of its own and gives an outcome (`try` is
// not needed). From another event it runs inside the caller's transaction: plainly, it gives the
// event's result and its failure is the caller's; with `try`, it gives an outcome and its failure
// undoes only its own changes. Queries and functions never call events (they do not write).
const Type* Checker::check_event_call(Expr& e, const FuncDecl& callee, int index) {
  if (fn_->kind == FuncKind::Main) {
    if (e.int_value == 1) {
      error(e.loc, "'try' is not needed here: main's call of event '" + e.text + "' already gives its outcome",
            "drop 'try'; inside an event, 'try " + e.text + "(...)' catches the inner event's failure");
      return tt_.error();
    }
    return tt_.outcome_of(callee.result_type);
  }
  if (fn_->kind == FuncKind::Query) {
    error(e.loc, "query '" + fn_->name + "' calls event '" + e.text + "'; queries only read",
          "make '" + fn_->name + "' an event, or call '" + e.text + "' from main or an event");
    return tt_.error();
  }
  if (fn_->kind != FuncKind::Event) {
    error(e.loc, "function '" + fn_->name + "' calls event '" + e.text + "'; only main and events call events",
          "call '" + e.text + "' from the event (or main) that calls '" + fn_->name + "'");
    return tt_.error();
  }
  event_calls_[fn_].push_back({index, e.loc});
  if (e.int_value == 1) return tt_.outcome_of(callee.result_type);
  return callee.result_type ? callee.result_type : tt_.void_type();
}

const Type* Checker::arg_type(Expr& e, size_t i, const Type* expected) {
  return check_expr(*e.args[i], expected);
}

bool Checker::arity(Expr& e, size_t first, size_t n, const std::string& what) {
  if (e.args.size() - first == n) return true;
  error(e.loc, what + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", not " + std::to_string(e.args.size() - first));
  for (size_t i = first; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
  return false;
}

// A kind letter of frontend/builtins.def's ARGS and RESULT columns.
const Type* Checker::signature_type(char kind) {
  switch (kind) {
    case 'i': return tt_.int_type();
    case 'n': return tt_.num_type();
    case 'b': return tt_.bool_type();
    case 't': return tt_.text_type();
    case 's': return tt_.seq_of(tt_.text_type());
    case 'v': return tt_.void_type();
    default: return tt_.error();
  }
}

// The type rule of a builtin whose row in builtins.def gives its signature: the arguments from
// e.args[first] on have the ARGS kinds, the call has the RESULT kind.
const Type* Checker::check_signature(Expr& e, Builtin b, size_t first, const std::string& what) {
  const BuiltinInfo& info = builtin_info(b);
  std::vector<const Type*> want;
  for (const char* k = info.args; *k; ++k) want.push_back(signature_type(*k));
  check_args(e, want, first, what);
  return signature_type(info.result[0]);
}

// The standard functions: by their signature (builtins.def), or by the rules below for the
// generic ones.
const Type* Checker::check_builtin_call(Expr& e, Builtin b) {
  std::string what = std::string("'") + builtin_name(b) + "'";
  if (builtin_info(b).has_signature()) return check_signature(e, b, 0, what);
  const Type* I = tt_.int_type();
  const Type* N = tt_.num_type();
  const Type* T = tt_.text_type();
  switch (b) {
    case Builtin::Print:
    case Builtin::Write: {
      if (!arity(e, 0, 1, what)) return tt_.void_type();
      const Type* t = arg_type(e, 0);
      if (t->kind == TypeKind::Void) error(e.args[0]->loc, "this has no value to print");
      return tt_.void_type();
    }
    case Builtin::Input:
      arity(e, 0, 0, what);
      if (fn_->kind != FuncKind::Main) error(e.loc, "only main may read input", "pass the data to events and queries as arguments");
      fn_->reads_input = true;
      return T;
    case Builtin::ToNum: case Builtin::ToInt: {
      if (!arity(e, 0, 1, what)) return b == Builtin::ToNum ? N : I;
      const Type* t = arg_type(e, 0);
      bool ok = is_numeric(t) || is_error(t) || (b == Builtin::ToInt && t->kind == TypeKind::Bool);
      if (!ok) error(e.args[0]->loc, what + " converts numbers, not " + type_name(t),
                     t->kind == TypeKind::Text ? (b == Builtin::ToNum ? "use parse_num(...)" : "use parse_int(...)") : "");
      return b == Builtin::ToNum ? N : I;
    }
    case Builtin::ToText: {
      if (!arity(e, 0, 1, what)) return T;
      const Type* t = arg_type(e, 0);
      if (t->kind == TypeKind::Void) error(e.args[0]->loc, "this has no value to turn into text");
      return T;
    }
    case Builtin::Abs: {
      if (!arity(e, 0, 1, what)) return tt_.error();
      const Type* t = arg_type(e, 0);
      if (!is_numeric(t) && !is_error(t)) error(e.args[0]->loc, what + " needs an int or num, not " + type_name(t));
      return t;
    }
    case Builtin::Min: case Builtin::Max: {
      if (!arity(e, 0, 2, what)) return tt_.error();
      check_expr(*e.args[0], nullptr);
      check_expr(*e.args[1], e.args[0]->type);
      unify_literals(*e.args[0], *e.args[1]);
      const Type* t = e.args[0]->type;
      if (is_error(t) || is_error(e.args[1]->type)) return tt_.error();
      if (t != e.args[1]->type || !(is_numeric(t) || t->kind == TypeKind::Text))
        error(e.loc, what + " needs two ints, two nums or two texts, not " + type_name(t) + " and " + type_name(e.args[1]->type));
      return t;
    }
    case Builtin::Repeat: {
      if (!arity(e, 0, 2, what)) return tt_.error();
      const Type* t = arg_type(e, 0);
      expect_type(*e.args[1], I, "the count given to 'repeat'");
      if (is_error(t)) return t;
      if ((!t->is_scalar() && t->kind != TypeKind::Item) || is_valued_outcome(t)) {
        error(e.args[0]->loc, "'repeat' makes a list of int, num, bool, text or items, not " + type_name(t));
        return tt_.error();
      }
      if (!refuse_row_with_list(t, e.args[0]->loc)) return tt_.error();
      return tt_.seq_of(t);
    }
    default: break;
  }
  return tt_.error();
}

const Type* Checker::check_method(Expr& e) {
  Expr& self = *e.args[0];
  bool reverse_walk = reverse_allowed_ && e.text == "reverse";
  bool range_here = range_allowed_ && e.text == "range";
  range_allowed_ = false;
  const Type* st = check_slice_operand(self, reverse_walk ? "reverse" : e.text);
  if (is_error(st)) {
    for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
    return tt_.error();
  }
  if (is_slice(self) && st->is_list()) {
    // m[prefix].clear() removes the rows under a prefix of a stored list
    bool clears = e.text == "clear" && self.kind == ExprKind::Index && self.args[0]->name_kind == NameKind::StoredList;
    bool ok = is_slice_method(e.text) || reverse_walk || (e.text == "range" && self.kind == ExprKind::Index) || clears;
    if (!ok) {
      for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
      error(e.loc, "a slice has no method '" + e.text + "'",
            e.text == "clear" ? "'m[prefix].clear()' is for stored lists; remove an event list's items with .remove(keys)"
                              : "read a slice with .first(), .last(), .count(), .sum(f), .min(f) or .max(f), or loop over it");
      return tt_.error();
    }
  }
  if (reverse_walk && st->is_list()) {
    // for x in list.reverse(): a keyed list, a stored list or a slice, from its last item back
    bool event_sequence = st->kind == TypeKind::Seq && self.name_kind != NameKind::StoredList && !is_slice(self);
    if (!event_sequence) {
      check_args(e, {}, 1, "'.reverse'");
      e.builtin = static_cast<int>(Builtin::LReverse);
      e.int_value = 2;  // a reverse walk, not the in-place reverse of a sequence
      return e.type = st;
    }
  }
  range_allowed_ = range_here && st->is_list();
  if (st->kind == TypeKind::Text) {
    int b = find_builtin(e.text, kFirstTextMethod, kFirstListMethod);
    if (b < 0) return unknown_method(e, st, kFirstTextMethod, kFirstListMethod);
    e.builtin = b;
    return check_text_method(e, static_cast<Builtin>(b));
  }
  if (st->is_list()) {
    int b = find_builtin(e.text, kFirstListMethod, Builtin::Count);
    if (b < 0) return unknown_method(e, st, kFirstListMethod, Builtin::Count);
    e.builtin = b;
    return check_list_method(e, static_cast<Builtin>(b), st);
  }
  for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
  error(e.loc, a_type(st) + " has no methods",
        st->kind == TypeKind::Item ? "its fields are read with '.name' (no parentheses)" : "");
  return tt_.error();
}

const Type* Checker::unknown_method(Expr& e, const Type* st, Builtin from, Builtin to) {
  for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
  std::vector<std::string> names;
  for (int i = static_cast<int>(from); i < static_cast<int>(to); ++i) names.push_back(builtin_name(static_cast<Builtin>(i)));
  error(e.loc, a_type(st) + " has no method '" + e.text + "'", suggest(e.text, names));
  return tt_.error();
}

// Every text method has a signature in builtins.def (the receiver is e.args[0]).
const Type* Checker::check_text_method(Expr& e, Builtin b) {
  std::string what = std::string("'.") + builtin_name(b) + "'";
  if (builtin_info(b).has_signature()) return check_signature(e, b, 1, what);
  return tt_.error();
}

// `sum(field)`, `sort_by(field)`, `min(field)`, `max(field)` name a field of the element.
int Checker::field_argument(Expr& e, const Type* list, const std::string& what) {
  if (e.args.size() != 2 || e.args[1]->kind != ExprKind::Name) {
    error(e.loc, what + " on a list of items takes the name of a field, e.g. '.sum(balance)'");
    return -1;
  }
  const Type* item = list->element;
  int i = item->field_index(e.args[1]->text);
  if (i < 0) {
    std::vector<std::string> names;
    for (auto& f : item->fields) names.push_back(f.name);
    error(e.args[1]->loc, "the items have no field '" + e.args[1]->text + "'", suggest(e.args[1]->text, names));
    return -1;
  }
  e.args[1]->type = item->fields[i].type;
  e.args[1]->int_value = i;
  e.int_value = i;
  return i;
}

// sort_by(k1, k2 desc, ...): each key a field, the first compared first; a field at most once.
void Checker::sort_keys(Expr& e, const Type* list) {
  if (e.args.size() < 2) {
    error(e.loc, "'.sort_by' takes the fields to sort by, e.g. '.sort_by(score desc, name)'");
    return;
  }
  const Type* item = list->element;
  std::vector<int> seen;
  for (size_t k = 1; k < e.args.size(); ++k) {
    Expr& a = *e.args[k];
    if (a.kind != ExprKind::Name) {
      error(a.loc, "a key of '.sort_by' is the name of a field, optionally followed by 'desc'",
            "e.g. '.sort_by(score desc, name)'");
      continue;
    }
    int i = item->field_index(a.text);
    if (i < 0) {
      std::vector<std::string> names;
      for (auto& f : item->fields) names.push_back(f.name);
      error(a.loc, "the items have no field '" + a.text + "'", suggest(a.text, names));
      continue;
    }
    if (std::find(seen.begin(), seen.end(), i) != seen.end())
      error(a.loc, "field '" + a.text + "' is already a key of this sort");
    seen.push_back(i);
    a.type = item->fields[i].type;
    a.int_value = i;
    if (k == 1) e.int_value = i;
  }
}

const Type* Checker::check_list_method(Expr& e, Builtin b, const Type* lt) {
  std::string what = std::string("'.") + builtin_name(b) + "'";
  bool seq = lt->kind == TypeKind::Seq;
  const Type* elem = lt->element;
  bool items = elem->kind == TypeKind::Item;
  auto keyed_only = [&]() {
    if (seq) error(e.loc, what + " is for keyed lists", b == Builtin::LHas ? "for a sequence, compare .count()" : "");
    return !seq;
  };
  auto seq_only = [&]() {
    if (!seq) error(e.loc, what + " is for sequences", b == Builtin::LPush ? "set 'list[key] = { ... }' to add to a keyed list" : "");
    return seq;
  };
  auto key_args = [&]() {
    std::vector<const Type*> want;
    for (uint32_t i = 0; i < lt->key_count; ++i) want.push_back(elem->fields[i].type);
    check_args(e, want, 1, what);
  };
  bool writes = b == Builtin::LPush || b == Builtin::LPop || b == Builtin::LRemove || b == Builtin::LSort ||
                b == Builtin::LSortBy || b == Builtin::LClear || b == Builtin::LReverse;
  // the stored list written: the receiver, or the list of a prefix `m[k].clear()`
  Expr& written = e.args[0]->kind == ExprKind::Index && is_slice(*e.args[0]) ? *e.args[0]->args[0] : *e.args[0];
  if (writes) note_stored_write(written, e.loc);
  if (writes && e.args[0]->name_kind == NameKind::StoredList &&
      (b == Builtin::LSort || b == Builtin::LSortBy || (b == Builtin::LReverse && seq))) {
    error(e.loc, what + " is not available on stored lists");
  }
  if (builtin_info(b).has_signature()) return check_signature(e, b, 1, what);
  switch (b) {
    case Builtin::LPush:
      if (!seq_only()) return tt_.void_type();
      check_args(e, {elem}, 1, what);
      return tt_.void_type();
    case Builtin::LPop: if (!seq_only()) return tt_.error(); check_args(e, {}, 1, what); return elem;
    case Builtin::LHas: if (!keyed_only()) return tt_.bool_type(); key_args(); return tt_.bool_type();
    case Builtin::LRemove: if (!keyed_only()) return tt_.bool_type(); key_args(); return tt_.bool_type();
    case Builtin::LGet: {
      // `m.get(k...) else DEFAULT`: the default (last argument) is the fields, as a row is written
      ExprPtr fallback;
      if (e.int_value == 1) {
        fallback = std::move(e.args.back());
        e.args.pop_back();
      }
      if (!keyed_only()) {
        if (fallback) e.args.push_back(std::move(fallback));
        return tt_.error();
      }
      key_args();
      if (fallback && fallback->kind == ExprKind::ItemLit && fallback->text.empty()) {
        check_item_fields(*fallback, elem, lt->key_count);  // the fields; the keys are the lookup's
        e.args.push_back(std::move(fallback));
      } else if (fallback) {
        const Type* t = check_expr(*fallback, elem);
        if (t != elem && !is_error(t))
          error(fallback->loc, "the default of '.get(...) else' is the fields of a missing row, '{ field: value, ... }', or a whole row",
                "a row of this list is " + a_type(elem) + ", not " + type_name(t));
        e.args.push_back(std::move(fallback));
      }
      return elem;
    }
    case Builtin::LFirst: case Builtin::LLast: check_args(e, {}, 1, what); return elem;
    case Builtin::LRange: {
      if (!range_allowed_) {
        error(e.loc, "'.range(lo, hi)' selects items: loop over it or read it with a slice method",
              "'for x in list.range(lo, hi)', or .first(), .last(), .count(), .sum(f), .min(f), .max(f)");
        return tt_.error();
      }
      range_allowed_ = false;
      if (!keyed_only()) return tt_.error();
      // the key bounded is the first one after the prefix, if the list is one: list[k].range(lo, hi)
      // an int key or a text key (date prefixes: sales.range("2026-12", "2026-13")); the bounds
      // are of the key's type
      size_t given = e.args[0]->kind == ExprKind::Index ? e.args[0]->args.size() - 1 : 0;
      const FieldInfo& key = elem->fields[given];
      if (!is_int(key.type) && key.type->kind != TypeKind::Text) {
        error(e.loc, given ? what + " needs an int or text key after the prefix, not " + type_name(key.type) + " key '" + key.name + "'"
                           : what + " needs a list whose first key is an int or a text, not " + type_name(key.type) + " key '" + key.name + "'");
        for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
        return lt;
      }
      check_args(e, {key.type, key.type}, 1, what + " over " + type_name(key.type) + " key '" + key.name + "'");
      return lt;
    }
    case Builtin::LSort:
      if (!seq_only()) return tt_.void_type();
      check_args(e, {}, 1, what);
      if (items) error(e.loc, "'.sort()' sorts ints, nums or texts; sort items with '.sort_by(field)'");
      else if (elem->kind == TypeKind::Bool) error(e.loc, "'.sort()' does not sort bools");
      return tt_.void_type();
    case Builtin::LSortBy:
      if (!seq_only()) return tt_.void_type();
      if (!items) { error(e.loc, "'.sort_by(field)' is for lists of items; use '.sort()'"); return tt_.void_type(); }
      sort_keys(e, lt);
      return tt_.void_type();
    case Builtin::LSum: case Builtin::LMin: case Builtin::LMax: {
      const Type* t = elem;
      if (items) {
        int i = field_argument(e, lt, what);
        if (i < 0) return tt_.error();
        t = elem->fields[i].type;
      } else {
        check_args(e, {}, 1, what);
      }
      bool ok = is_numeric(t) || (b != Builtin::LSum && t->kind == TypeKind::Text);
      if (!ok) { error(e.loc, what + " needs numbers, not " + type_name(t)); return tt_.error(); }
      return t;
    }
    case Builtin::LClear: case Builtin::LReverse:
      if (b == Builtin::LReverse && seq && e.args[0]->name_kind == NameKind::StoredList) return tt_.void_type();
      if (b == Builtin::LReverse && !seq) {
        if (!e.args[0]->type || is_error(e.args[0]->type)) return tt_.void_type();
        error(e.loc, "'.reverse()' of a keyed list is a walk from its last item back, only in a for loop",
              "for x in list.reverse() { ... }");
        return tt_.void_type();
      }
      check_args(e, {}, 1, what);
      return tt_.void_type();
    case Builtin::LContains:
      if (!seq_only()) return tt_.bool_type();
      if (!elem->is_scalar()) error(e.loc, "'.contains' compares ints, nums, bools or texts");
      check_args(e, {elem}, 1, what);
      return tt_.bool_type();
    case Builtin::LTake:
    case Builtin::LSlice:
      // a copy of some of an event sequence's items: a new list, the receiver unchanged
      if (!seq_only()) return tt_.error();
      if (e.args[0]->name_kind == NameKind::StoredList) {
        error(e.loc, what + " is for event sequences; a stored sequence is read with a loop",
              "for i, x in list { if i >= n { break } ... }");
        return tt_.error();
      }
      if (b == Builtin::LTake) check_args(e, {tt_.int_type()}, 1, what);
      else check_args(e, {tt_.int_type(), tt_.int_type()}, 1, what);
      return lt;
    case Builtin::LJoin:
      if (!seq_only()) return tt_.error();
      if (elem->kind != TypeKind::Text) error(e.loc, "'.join' needs a seq text");
      check_args(e, {tt_.text_type()}, 1, what);
      return tt_.text_type();
    default: return tt_.error();
  }
}

}  // namespace pure::checker
