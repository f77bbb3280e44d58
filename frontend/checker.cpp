// frontend/checker.cpp — resolves names and checks types; annotates the tree for lowering. Here:
// check_module, the declarations (types, stored lists, functions) and the checking of functions
// and statements; constants, expressions and calls are in checker_consts.cpp, checker_exprs.cpp
// and checker_builtins.cpp, the Checker class in checker_internal.h.
#include "frontend/checker.h"

#include <algorithm>
#include <functional>

#include "base/assert.h"

#include "frontend/checker_internal.h"

namespace pure {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  // Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours.
  std::vector<size_t> before(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    before = prev;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace checker {

std::vector<std::string> Checker::known_type_names() const {
  std::vector<std::string> names = {"int", "num", "bool", "text"};
  for (auto& [n, t] : type_names_) names.push_back(n);
  return names;
}

// Enums, before constants (`const FIRST = Status.open`) and the other types; a second declaration
// of a name is left to declare_types, which reports it.
void Checker::declare_enums() {
  for (ItemDecl& d : m_.types) {
    if (!d.is_enum || d.has_errors || type_names_.count(d.name) || d.name == "int" || d.name == "num" ||
        d.name == "bool" || d.name == "text")
      continue;
    d.resolved = tt_.new_enum(d.name, d.members);
    type_names_[d.name] = d.resolved;
  }
}

void Checker::declare_types() {
  // First the names, so that declarations may refer to each other in any order.
  for (ItemDecl& d : m_.types) {
    if (d.is_enum && d.resolved) continue;  // declared by declare_enums
    if (type_names_.count(d.name) || d.name == "int" || d.name == "num" || d.name == "bool" || d.name == "text") {
      std::string also;
      for (const ItemDecl& first : m_.types)
        if (&first != &d && first.name == d.name) {
          also = other_place(first.loc, d.loc);
          break;
        }
      error(d.loc, "type '" + d.name + "' is declared twice" + also);
      continue;
    }
    if (d.has_errors) {  // its syntax error is reported; uses of it report nothing more
      type_names_[d.name] = tt_.error();
      continue;
    }
    if (!d.is_alias && !d.is_enum) {
      Type* item = tt_.new_item(d.name);
      d.resolved = item;
      type_names_[d.name] = item;
    }
  }
  for (ItemDecl& d : m_.types) {
    if (!d.is_alias || !d.type || d.has_errors) continue;
    d.resolved = resolve_type(d.type.get());
    if (!type_names_.count(d.name)) type_names_[d.name] = d.resolved;
  }
  for (ItemDecl& d : m_.types) {
    if (d.is_alias || d.is_enum || !d.type || !d.resolved) continue;
    Type* item = const_cast<Type*>(d.resolved);
    for (auto& f : d.type->fields) {
      FieldInfo info = resolve_field(f, kItemField);
      for (auto& existing : item->fields)
        if (existing.name == info.name) error(f.loc, "field '" + f.name + "' appears twice");
      item->fields.push_back(std::move(info));
    }
  }
  refuse_items_holding_themselves();
  // `reports: seq Order` in an item declared before Order's fields were known
  for (ItemDecl& d : m_.types) {
    if (d.is_alias || d.is_enum || !d.type || !d.resolved) continue;
    for (size_t i = 0; i < d.resolved->fields.size() && i < d.type->fields.size(); ++i) {
      const FieldInfo& f = d.resolved->fields[i];
      if (f.type->kind == TypeKind::Seq && !refuse_row_with_list(f.type->element, d.type->fields[i].type->loc))
        const_cast<FieldInfo&>(f).type = tt_.error();
    }
  }
  // `type Shapes = seq Shape` declared before Shape's fields were known
  for (ItemDecl& d : m_.types)
    if (d.is_alias && d.type && d.resolved && d.resolved->kind == TypeKind::Seq &&
        !refuse_row_with_list(d.resolved->element, d.type->loc))
      type_names_[d.name] = d.resolved = tt_.error();
}

// The path of item fields from t to `target` ("B.a"), when t is target or holds it; `seen` bounds
// the walk to each item once.
static bool holds_item(const Type* t, const Type* target, std::vector<const Type*>& seen, std::string& path) {
  if (t->kind != TypeKind::Item) return false;
  if (t == target) return true;
  for (const Type* s : seen)
    if (s == t) return false;
  seen.push_back(t);
  for (const FieldInfo& f : t->fields)
    if (holds_item(f.type, target, seen, path)) {
      path = t->name + "." + f.name + (path.empty() ? "" : ", " + path);
      return true;
    }
  return false;
}

// An item is flattened into its fields' slots, so one that holds itself (`type T { next: T }`,
// or through other items) would be infinite: the field that closes the cycle is refused.
void Checker::refuse_items_holding_themselves() {
  for (ItemDecl& d : m_.types) {
    if (d.is_alias || d.is_enum || !d.type || !d.resolved) continue;
    Type* item = const_cast<Type*>(d.resolved);
    for (size_t i = 0; i < item->fields.size() && i < d.type->fields.size(); ++i) {
      FieldInfo& f = item->fields[i];
      std::vector<const Type*> seen;
      std::string path;
      if (!holds_item(f.type, item, seen, path)) continue;
      error(d.type->fields[i].loc,
            "type '" + d.name + "' cannot hold itself: its field '" + f.name + "' is " + type_name(f.type) +
                (f.type == item ? "" : ", which holds " + d.name + " (" + path + ")"),
            "an item is a value of fixed size: keep the linked items in a keyed list and hold their key ('next: int')");
      f.type = tt_.error();
    }
  }
}

// A list's rows are flat (an event list's cells and a stored list's columns are scalars), so an
// item holding a list or an item is a value only: a list of them is refused. False when refused.
bool Checker::refuse_row_with_list(const Type* row, const Loc& loc) {
  if (row->kind != TypeKind::Item) return true;
  for (const FieldInfo& f : row->fields) {
    if (f.type->is_list()) {
      error(loc, "a list's row cannot hold a list, and " + type_name(row) + "'s field '" + f.name + "' is " +
                     type_name(f.type),
            "a list's rows are flat: key the inner rows by the outer one, as in 'list lines by (order: int, line: int) { ... }'");
      return false;
    }
    if (f.type->kind == TypeKind::Item) {
      error(loc, "a list's row cannot hold an item, and " + type_name(row) + "'s field '" + f.name + "' is " +
                     type_name(f.type),
            "a list's rows are flat: give the row the inner item's fields ('" + f.name + "_" +
                (f.type->fields.empty() ? std::string("x") : f.type->fields[0].name) + ": ...'), or keep the items in a list of their own");
      return false;
    }
  }
  return true;
}

const char* const Checker::kItemField = "an item's field";

FieldInfo Checker::resolve_field(TypeExpr::Field& f, const char* what) {
  FieldInfo info;
  info.name = f.name;
  info.type = f.type ? resolve_type(f.type.get()) : tt_.error();
  // A named item's field may be a sequence (`lines: seq Line`): the item is then a value that
  // owns a list (a local, a parameter, a result), never a row of a list.
  bool holds_list = what == kItemField && info.type->is_list();  // a seq, or a keyed list (`counts: list by ...`)
  if (holds_list && f.default_value) {
    error(f.default_value->loc, "the list field '" + f.name + "' cannot have a default",
          "an item's list field is given when the item is made: 'lines: []'");
    f.default_value.reset();
  }
  // ... or an item (`corner: Point`): its slots are the item's, in place; the item is then a value
  // only, never a row of a list either.
  bool holds_item = what == kItemField && info.type->kind == TypeKind::Item;
  if (holds_item && f.default_value) {
    error(f.default_value->loc, "the item field '" + f.name + "' cannot have a default",
          "an item's item field is given when the item is made: '" + f.name + ": { ... }'");
    f.default_value.reset();
  }
  if (!info.type->is_scalar() && !is_error(info.type) && !holds_list && !holds_item) {
    error(f.loc, std::string(what) + (what == kItemField ? " must be int, num, bool, text, a list or an item, not " : " must be int, num, bool or text, not ") + type_name(info.type));
    info.type = tt_.error();
  }
  if (f.default_value) {
    Expr& e = *f.default_value;
    info.has_default = true;
    // a literal, a constant, or an expression of them (in parentheses)
    ConstVal v = const_value(e);
    if (v.type && is_int(v.type) && is_num(info.type)) v = const_of(info.type, 0, static_cast<double>(v.i));
    if (v.type && v.type != info.type && !is_error(info.type))
      error(e.loc, "the default of '" + f.name + "' must be " + a_type(info.type) + ", not " + a_type(v.type));
    info.default_int = v.i;
    info.default_num = v.n;
    info.default_text = v.t;
  }
  return info;
}

// `outcome of T`: the outcome of calling an event declared `-> T`, so T is what an event returns.
const Type* Checker::outcome_type(TypeExpr* value) {
  const Type* v = resolve_type(value);
  if (is_error(v)) return v;
  if (v->kind == TypeKind::Keyed || (v->kind == TypeKind::Item && (v == tt_.outcome() || v->value))) {
    error(value->loc, "'outcome of' takes the type an event returns, not " + a_type(v),
          "an event returns int, num, bool, text, an item, or a 'seq' of them");
    return tt_.error();
  }
  return tt_.outcome_of(v);
}

const Type* Checker::resolve_type(TypeExpr* t) {
  if (!t) return tt_.error();
  switch (t->kind) {
    case TypeExpr::Named: {
      if (!t->member.empty()) return row_type(t);
      if (t->name == "int") return tt_.int_type();
      if (t->name == "num") return tt_.num_type();
      if (t->name == "bool") return tt_.bool_type();
      if (t->name == "text") return tt_.text_type();
      auto it = type_names_.find(t->name);
      if (it != type_names_.end()) return it->second;
      if (t->name == "outcome") return t->element ? outcome_type(t->element.get()) : tt_.outcome();
      if (!t->name.empty()) error(t->loc, "unknown type '" + t->name + "'", suggest(t->name, known_type_names()));
      return tt_.error();
    }
    case TypeExpr::Seq: {
      if (!t->element) return tt_.error();
      if (t->element->kind == TypeExpr::Keyed && t->element->keys.empty()) {
        // `seq { fields }`: a sequence of anonymous items
        Type* item = tt_.new_item("");
        for (auto& f : t->element->fields) item->fields.push_back(resolve_field(f, "a sequence item's field"));
        return tt_.seq_of(item);
      }
      const Type* e = resolve_type(t->element.get());
      if (e->is_list()) {
        error(t->element->loc, "a list cannot hold lists (" + type_name(e) + ")", "use a keyed list with a composite key");
        return tt_.error();
      }
      if (is_error(e)) return e;
      if (!refuse_row_with_list(e, t->element->loc)) return tt_.error();
      return tt_.seq_of(e);
    }
    case TypeExpr::Keyed: {
      std::vector<FieldInfo> keys, fields;
      for (auto& k : t->keys) {
        FieldInfo info = resolve_field(k, "a key");
        if (is_num(info.type)) {
          error(k.loc, "a key cannot be a num (numbers compare inexactly)", "use int or text keys");
          info.type = tt_.error();
        }
        keys.push_back(std::move(info));
      }
      for (auto& f : t->fields) fields.push_back(resolve_field(f, "a list's field"));
      std::vector<std::string> seen;
      for (auto* group : {&keys, &fields})
        for (auto& f : *group) {
          if (std::find(seen.begin(), seen.end(), f.name) != seen.end())
            error(t->loc, "field '" + f.name + "' appears twice in the list type");
          seen.push_back(f.name);
        }
      return tt_.keyed(std::move(keys), std::move(fields));
    }
  }
  return tt_.error();
}

// `stock.Row`: the item a stored list's rows are read as, its keys then its fields. Type
// aliases are declared before the lists, so a list not declared yet is resolved here.
const Type* Checker::row_type(TypeExpr* t) {
  for (ListDecl& l : m_.lists) {
    if (l.name != t->name) continue;
    if (l.resolved) return l.resolved->is_list() ? l.resolved->element : tt_.error();
    // `list a by id: int { r: a.Row }`, or a and b naming each other's rows: a row cannot hold
    // a row (a field is a scalar), and resolving it again would never end
    if (std::find(rows_resolving_.begin(), rows_resolving_.end(), &l) != rows_resolving_.end()) {
      error(t->loc, "'" + t->name + ".Row' is used inside the type of stored list '" + t->name +
                        "' itself, and a row cannot hold a row",
            "a list's fields are int, num, bool or text");
      return tt_.error();
    }
    const Type* lt = resolve_list_type(l);
    return lt->is_list() ? lt->element : tt_.error();
  }
  std::vector<std::string> names;
  for (ListDecl& l : m_.lists) names.push_back(l.name);
  error(t->loc, "'" + t->name + ".Row' names the rows of a stored list, and there is no stored list '" + t->name + "'",
        suggest(t->name, names));
  return tt_.error();
}

const Type* Checker::resolve_list_type(ListDecl& l) {
  if (!l.type) return tt_.error();
  PURE_ASSERT(rows_resolving_.size() < m_.lists.size());
  rows_resolving_.push_back(&l);
  const Type* lt = resolve_type(l.type.get());
  rows_resolving_.pop_back();
  return lt;
}

void Checker::declare_lists() {
  for (size_t i = 0; i < m_.lists.size(); ++i) {
    ListDecl& l = m_.lists[i];
    if (list_index_.count(l.name)) {
      error(l.loc, "stored list '" + l.name + "' is declared twice");
      continue;
    }
    l.resolved = resolve_list_type(l);
    list_index_[l.name] = static_cast<int>(i);
  }
}

void Checker::declare_functions() {
  for (size_t i = 0; i < m_.funcs.size(); ++i) {
    FuncDecl& f = m_.funcs[i];
    if (func_index_.count(f.name) || list_index_.count(f.name)) {
      Loc first = func_index_.count(f.name) ? m_.funcs[static_cast<size_t>(func_index_[f.name])].loc
                                            : m_.lists[static_cast<size_t>(list_index_[f.name])].loc;
      error(f.loc, "'" + f.name + "' is declared twice" + other_place(first, f.loc));
      f.duplicate = true;
      continue;
    }
    if (find_builtin(f.name, Builtin::Print, kFirstTextMethod) >= 0)
      error(f.loc, "'" + f.name + "' is a standard function and cannot be redeclared");
    func_index_[f.name] = static_cast<int>(i);
    f.result_type = f.result ? resolve_type(f.result.get()) : tt_.void_type();
    for (Param& p : f.params) {
      LocalInfo info{p.name, resolve_type(p.type.get()), false, p.loc, LocalOrigin::Parameter};
      for (auto& other : f.locals)
        if (other.name == p.name) error(p.loc, "parameter '" + p.name + "' appears twice");
      if (const_index_.count(p.name)) error(p.loc, "'" + p.name + "' is already the name of a constant", "choose another name");
      f.locals.push_back(info);
    }
    if (f.kind == FuncKind::Main) {
      if (f.result) error(f.result->loc, "main returns nothing", "print results, or 'fail' to exit with an error");
      if (f.params.size() > 1 || (f.params.size() == 1 && f.locals[0].type != tt_.seq_of(tt_.text_type())))
        error(f.loc, "main takes no parameters or one 'seq text' (the command-line arguments)",
              "write 'fn main()' or 'fn main(args: seq text)'");
    }
    if (f.kind == FuncKind::Query && !f.result) error(f.loc, "a query must return a value", "add '-> TYPE'");
    if (f.kind == FuncKind::Event || f.kind == FuncKind::Query)
      for (size_t p = 0; p < f.params.size(); ++p) {
        std::string where;
        if (f.locals[p].type->kind == TypeKind::Keyed)
          error(f.params[p].loc, "event and query parameters are values sent by a client: int, num, bool, text, items, or a 'seq' of them",
                "send the rows as a 'seq' of items and build the keyed list inside");
        else if (holds_keyed_list(f.locals[p].type, where))
          error(f.params[p].loc, "event and query parameters are values sent by a client, and " + where + " is a keyed list",
                "send the rows as a 'seq' of items and build the keyed list inside");
      }
  }
}

// Whether an item holds a keyed list at any depth; `where` names the field ("Tally's field 'counts'").
bool Checker::holds_keyed_list(const Type* t, std::string& where) {
  if (t->kind != TypeKind::Item) return false;
  for (const FieldInfo& f : t->fields) {
    if (f.type->kind == TypeKind::Keyed) {
      where = type_name(t) + "'s field '" + f.name + "'";
      return true;
    }
    if (holds_keyed_list(f.type, where)) return true;
  }
  return false;
}

void Checker::no_valued_outcome_in_list(const Type* t, Loc loc) {
  if (is_valued_outcome(t))
    error(loc, "a list cannot hold the outcome of an event that returns a value (" + type_name(t) + ")",
          "keep the outcome in a local and put its '.value' (or '.ok') in the list");
}

void Checker::check_function(FuncDecl& f) {
  fn_ = &f;
  scopes_.clear();
  scopes_.emplace_back();
  for (size_t i = 0; i < f.params.size(); ++i) scopes_.back()[f.params[i].name] = static_cast<int>(i);
  loop_depth_ = 0;
  check_block(f.body, false);
  if (f.result_type && f.result_type->kind != TypeKind::Void && !is_error(f.result_type) && !f.body_has_errors &&
      !always_exits(f.body))
    error(f.loc, "'" + f.name + "' can reach its end without returning " + a_type(f.result_type),
          "add a 'return' at the end");
  fn_ = nullptr;
}

// Events call events only as a fixed tree: no event calls itself, directly or through others.
// So an event's calls end without a depth limit to hit at run time, and the work one client call
// does is bounded by its code and its loops. Each cycle is reported once, at the call closing it.
void Checker::check_event_cycles() {
  enum Color : uint8_t { White, Grey, Black };
  std::map<const FuncDecl*, Color> color;
  std::vector<const FuncDecl*> path;
  std::function<void(const FuncDecl*)> visit = [&](const FuncDecl* f) {
    color[f] = Grey;
    path.push_back(f);
    auto calls = event_calls_.find(f);
    if (calls != event_calls_.end())
      for (const auto& [index, loc] : calls->second) {
        const FuncDecl* g = &m_.funcs[static_cast<size_t>(index)];
        if (color[g] == Grey) {
          std::string chain;
          for (auto at = std::find(path.begin(), path.end(), g); at != path.end(); ++at) chain += (*at)->name + " -> ";
          error(loc, "event '" + g->name + "' calls itself (" + chain + g->name +
                         "); an event cannot call itself, directly or through other events",
                "repeat the work with a loop inside one event");
        } else if (color[g] == White) {
          visit(g);
        }
      }
    path.pop_back();
    color[f] = Black;
  };
  for (const FuncDecl& f : m_.funcs)
    if (f.kind == FuncKind::Event && color[&f] == White) visit(&f);
}

bool Checker::always_exits(const std::vector<StmtPtr>& body) {
  for (const StmtPtr& s : body) {
    if (!s) continue;
    switch (s->kind) {
      case StmtKind::Return: case StmtKind::Fail: case StmtKind::Break: case StmtKind::Continue: return true;
      case StmtKind::Block: if (always_exits(s->body)) return true; break;
      case StmtKind::If:
        if (!s->else_body.empty() && always_exits(s->body) && always_exits(s->else_body)) return true;
        break;
      case StmtKind::While:
        if (s->expr && s->expr->kind == ExprKind::Bool && s->expr->int_value && !contains_break(s->body)) return true;
        break;
      default: break;
    }
  }
  return false;
}

bool Checker::contains_break(const std::vector<StmtPtr>& body) {
  for (const StmtPtr& s : body) {
    if (!s) continue;
    if (s->kind == StmtKind::Break) return true;
    if (s->kind == StmtKind::If || s->kind == StmtKind::Block)
      if (contains_break(s->body) || contains_break(s->else_body)) return true;
  }
  return false;
}

void Checker::check_block(std::vector<StmtPtr>& body, bool new_scope) {
  if (new_scope) scopes_.emplace_back();
  for (StmtPtr& s : body)
    if (s) check_statement(*s);
  if (new_scope) scopes_.pop_back();
}

int Checker::declare_local(const std::string& name, const Type* type, bool is_var, Loc loc) {
  if (name.empty()) return -1;
  if (const_index_.count(name)) error(loc, "'" + name + "' is already the name of a constant", "choose another name");
  if (list_index_.count(name) || func_index_.count(name))
    error(loc, "'" + name + "' is already the name of a " + (list_index_.count(name) ? "stored list" : "function"),
          "choose another name");
  if (scopes_.back().count(name)) error(loc, "'" + name + "' is already declared in this block");
  int id = static_cast<int>(fn_->locals.size());
  fn_->locals.push_back({name, type, is_var, loc});
  scopes_.back()[name] = id;
  return id;
}

int Checker::lookup_local(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return f->second;
  }
  return -1;
}

std::vector<std::string> Checker::visible_names() const {
  std::vector<std::string> names;
  for (auto& s : scopes_)
    for (auto& [n, id] : s) names.push_back(n);
  for (auto& [n, i] : list_index_) names.push_back(n);
  for (auto& [n, i] : func_index_) names.push_back(n);
  for (auto& [n, i] : const_index_) names.push_back(n);
  return names;
}

void Checker::check_statement(Stmt& s) {
  switch (s.kind) {
    case StmtKind::Let: check_let(s); break;
    case StmtKind::Assign: check_assign(s); break;
    case StmtKind::ExprStmt:
      if (s.expr) {
        check_expr(*s.expr, nullptr);
        if (s.expr->kind != ExprKind::Call && s.expr->kind != ExprKind::Method && !is_error(s.expr->type))
          error(s.expr->loc, "this expression's value is not used", "assign it with 'let', or remove it");
      }
      break;
    case StmtKind::If:
      expect_bool(s.expr.get(), "an 'if' condition");
      check_block(s.body);
      check_block(s.else_body);
      break;
    case StmtKind::While:
      expect_bool(s.expr.get(), "a 'while' condition");
      ++loop_depth_;
      check_block(s.body);
      --loop_depth_;
      break;
    case StmtKind::For: check_for(s); break;
    case StmtKind::Return: check_return(s); break;
    case StmtKind::Break:
    case StmtKind::Continue:
      if (loop_depth_ == 0) error(s.loc, std::string("'") + (s.kind == StmtKind::Break ? "break" : "continue") + "' outside a loop");
      break;
    case StmtKind::Fail:
      if (s.expr) expect_type(*s.expr, tt_.text_type(), "the reason given to 'fail'");
      break;
    case StmtKind::Block: check_block(s.body); break;
  }
}

void Checker::expect_bool(Expr* e, const char* what) {
  if (!e) return;
  const Type* t = check_expr(*e, tt_.bool_type());
  if (!is_error(t) && t->kind != TypeKind::Bool)
    error(e->loc, std::string(what) + " must be a bool, not " + type_name(t), t->kind == TypeKind::Int ? "compare it, e.g. 'x != 0'" : "");
}

void Checker::check_let(Stmt& s) {
  const Type* declared = s.declared ? resolve_type(s.declared.get()) : nullptr;
  const Type* t = s.expr ? check_expr(*s.expr, declared) : tt_.error();
  if (declared && !is_error(declared) && !is_error(t) && !assignable(*s.expr, declared)) {
    error(s.expr->loc, "'" + s.name + "' is declared as " + type_name(declared) + " but the value is " + type_name(t));
  }
  if (declared) t = declared;
  if (t->kind == TypeKind::Void) {
    error(s.expr->loc, "this expression has no value to store in '" + s.name + "'");
    t = tt_.error();
  }
  if (!s.body.empty()) {
    Expr* e = s.expr.get();
    bool lookup = e && e->kind == ExprKind::Index && e->args[0]->type && e->args[0]->type->kind == TypeKind::Keyed &&
                  e->args.size() - 1 == e->args[0]->type->key_count;
    // or the first or last item of a list or a slice, which may be empty
    bool end = e && e->kind == ExprKind::Method &&
               (e->builtin == static_cast<int>(Builtin::LFirst) || e->builtin == static_cast<int>(Builtin::LLast)) &&
               e->args[0]->type && e->args[0]->type->is_list();
    if (!lookup && !end && !is_error(t))
      error(s.loc, "'let ... else' needs a keyed-list lookup like 'list[key]', or '.first()' or '.last()', on the right",
            e && e->kind == ExprKind::Method && e->builtin == static_cast<int>(Builtin::LGet)
                ? "'let r = list[key] else fail ...' leaves; 'list.get(key) else { field: value, ... }' reads a default row"
                : "");
    check_block(s.body);
    if (!always_exits(s.body))
      error(s.body[0]->loc, "the 'else' of a 'let' must leave: 'fail', 'return', 'break' or 'continue'");
  }
  s.local = declare_local(s.name, t, s.is_var, s.loc);
}

// True if an expression of e's type can be stored where `want` is expected (adapting literals).
bool Checker::assignable(Expr& e, const Type* want) {
  if (e.type == want || is_error(e.type) || is_error(want)) return true;
  return false;
}

const Type* Checker::expect_type(Expr& e, const Type* want, const std::string& what) {
  const Type* t = check_expr(e, want);
  if (!assignable(e, want)) {
    std::string hint;
    if (is_int(t) && is_num(want)) hint = "convert with num(...)";
    if (is_num(t) && is_int(want)) hint = "convert with int(...), which truncates";
    if (want->kind == TypeKind::Text && t->is_scalar()) hint = "convert with text(...) or use \"{...}\"";
    error(e.loc, what + " must be " + type_name(want) + ", not " + type_name(t), hint);
  }
  return t;
}

// Assignment targets: a var local, a field of a var item local, a list element or field.
void Checker::check_assign(Stmt& s) {
  if (!s.target || !s.expr) return;
  Expr& target = *s.target;
  const Type* t = check_place(target);
  if (is_error(t)) {
    check_expr(*s.expr, nullptr);
    return;
  }
  Tok op = static_cast<Tok>(s.op);
  if (op == Tok::Eq) {
    if (target.kind == ExprKind::Index && target.args[0]->type->kind == TypeKind::Keyed) {
      check_row_literal(*s.expr, target.args[0]->type);
      return;
    }
    expect_type(*s.expr, t, "the assigned value");
    return;
  }
  const Type* v = check_expr(*s.expr, t);
  bool ok = (is_numeric(t) && v == t) || (op == Tok::PlusEq && t->kind == TypeKind::Text && v == t);
  if (!ok && !is_error(v))
    error(s.loc, std::string("cannot apply ") + tok_name(op) + " to " + type_name(t) + " and " + type_name(v),
          is_int(t) && is_num(v) ? "convert with int(...)" : is_num(t) && is_int(v) ? "convert with num(...)" : "");
}

// `list[key] = { field: value, ... }`: the key comes from the index, the literal gives the fields.
// Or a whole row of the list's row type (`cust[w, d, c] = row`): its fields are written, its
// key fields are not (the key comes from the index there too).
void Checker::check_row_literal(Expr& e, const Type* list) {
  const Type* row = list->element;
  if (e.kind != ExprKind::ItemLit || !e.text.empty()) {
    const Type* t = check_expr(e, row);
    if (t != row && !is_error(t))
      error(e.loc, "a keyed list's item is written as '{ field: value, ... }' (the key comes from the index), or is a whole row",
            "a row of this list is " + a_type(row) + ", not " + type_name(t));
    return;
  }
  check_item_fields(e, row, list->key_count);
}

// Checks an item literal against an item type, skipping the first `skip` fields (keys).
// Reorders e.args to field order, filling defaults, so lowering can take them in order.
void Checker::check_item_fields(Expr& e, const Type* item, uint32_t skip) {
  e.type = item;
  std::vector<ExprPtr> ordered(item->fields.size() - skip);
  for (size_t i = 0; i < e.field_names.size(); ++i) {
    const std::string& name = e.field_names[i];
    int index = -1;
    for (size_t f = skip; f < item->fields.size(); ++f)
      if (item->fields[f].name == name) index = static_cast<int>(f - skip);
    if (index < 0) {
      bool is_key = false;
      for (size_t f = 0; f < skip; ++f) is_key |= item->fields[f].name == name;
      std::vector<std::string> names;
      for (size_t f = skip; f < item->fields.size(); ++f) names.push_back(item->fields[f].name);
      error(e.args[i]->loc, is_key ? "'" + name + "' is a key: it comes from the index, not the item"
                                   : "'" + type_name(item) + "' has no field '" + name + "'",
            is_key ? "" : suggest(name, names));
      check_expr(*e.args[i], nullptr);
      continue;
    }
    const FieldInfo& f = item->fields[index + skip];
    expect_type(*e.args[i], f.type, "field '" + name + "'");
    if (ordered[index]) error(e.args[i]->loc, "field '" + name + "' is given twice");
    ordered[index] = std::move(e.args[i]);
  }
  for (size_t i = 0; i < ordered.size(); ++i) {
    if (ordered[i]) continue;
    const FieldInfo& f = item->fields[i + skip];
    if (!f.has_default) {
      error(e.loc, "field '" + f.name + "' is missing from the item");
      ordered[i] = std::make_unique<Expr>(ExprKind::Int, e.loc);
      ordered[i]->type = tt_.error();
      continue;
    }
    ExprKind k = is_num(f.type) ? ExprKind::Num : f.type->kind == TypeKind::Text ? ExprKind::Text
               : f.type->kind == TypeKind::Bool ? ExprKind::Bool : ExprKind::Int;
    ordered[i] = std::make_unique<Expr>(k, e.loc);
    ordered[i]->int_value = f.default_int;
    ordered[i]->num_value = f.default_num;
    ordered[i]->text = f.default_text;
    ordered[i]->type = f.type;
  }
  e.args = std::move(ordered);
  e.field_names.clear();
}

void Checker::note_stored_write(Expr& list_expr, Loc loc) {
  if (list_expr.name_kind != NameKind::StoredList || !fn_) return;
  const std::string& name = list_expr.text;
  if (name.rfind("old.", 0) == 0) {  // only a migrate block names them (frontend.h, OldList)
    error(loc, "'" + name + "' is the old version's list: a migration reads it and cannot change it",
          "write the new rows to '" + name.substr(4) + "'");
    return;
  }
  fn_->writes_stored = true;
  if (fn_->kind == FuncKind::Event) return;
  if (fn_->kind == FuncKind::Query)
    error(loc, "query '" + fn_->name + "' changes stored list '" + name + "'; queries only read", "make it an event");
  else if (fn_->kind == FuncKind::Main)
    error(loc, "main changes stored list '" + name + "' directly", "call an event that changes it");
  else
    error(loc, "function '" + fn_->name + "' changes stored list '" + name + "'; only events change stored lists",
          "make it an event, or return the new values to the event that calls it");
}

const Type* Checker::check_place(Expr& e) {
  switch (e.kind) {
    case ExprKind::Name: {
      const Type* t = check_expr(e, nullptr);
      if (e.name_kind == NameKind::Local) {
        const LocalInfo& l = fn_->locals[e.ref];
        if (!l.is_var) {
          const std::string what = "cannot assign to '" + e.text + "': ";
          switch (l.origin) {
            case LocalOrigin::Let:
              error(e.loc, what + "it is declared with 'let'", "declare it with 'var' to change it");
              break;
            case LocalOrigin::Parameter:
              error(e.loc, what + "it is a parameter", "copy it into a 'var' to change the copy");
              break;
            case LocalOrigin::RangeLoop:
              error(e.loc, what + "it is a loop variable", "copy it into a 'var' to change the copy");
              break;
            case LocalOrigin::SeqLoop:
              error(e.loc, what + "it is a loop variable, a copy of each item",
                    "to change the list, walk it by position: 'for i, x in xs { xs[i].f = ... }'");
              break;
            case LocalOrigin::KeyedLoop:
              error(e.loc, what + "it is a loop variable, a copy of each row",
                    "to change the list, assign through it by key: 'm[key].f = ...'");
              break;
          }
          return tt_.error();
        }
        return t;
      }
      if (!is_error(t)) error(e.loc, "cannot assign to '" + e.text + "'");
      return tt_.error();
    }
    case ExprKind::Field: {
      Expr& base = *e.args[0];
      if (base.kind == ExprKind::Name || base.kind == ExprKind::Field) {  // `s.corner.x`: a field of a field
        const Type* t = check_place(base);
        if (is_error(t)) return t;
      } else if (base.kind == ExprKind::Index) {
        const Type* lt = check_list_index(base, true);
        if (is_error(lt)) return lt;
      } else {
        check_expr(base, nullptr);
        error(e.loc, "cannot assign to this field");
        return tt_.error();
      }
      return field_type(e);
    }
    case ExprKind::Index: {
      return check_list_index(e, true);
    }
    default:
      check_expr(e, nullptr);
      error(e.loc, "cannot assign to this expression");
      return tt_.error();
  }
}

// list[i] or list[k...] as a value or a place. Returns the element type.
const Type* Checker::check_list_index(Expr& e, bool for_write) {
  Expr& base = *e.args[0];
  const Type* lt = check_list_operand(base);
  if (is_error(lt)) {
    for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
    return e.type = tt_.error();
  }
  if (for_write) note_stored_write(base, e.loc);
  size_t n = e.args.size() - 1;
  if (lt->kind == TypeKind::Seq) {
    if (n != 1) error(e.loc, "a sequence is indexed by one int position");
    expect_type(*e.args[1], tt_.int_type(), "a sequence index");
    return e.type = lt->element;
  }
  if (lt->kind == TypeKind::Keyed) {
    const Type* row = lt->element;
    if (n > lt->key_count) error(e.loc, "'" + type_name(lt) + "' has " + std::to_string(lt->key_count) + " key(s), not " + std::to_string(n));
    for (size_t i = 1; i <= n && i - 1 < lt->key_count; ++i)
      expect_type(*e.args[i], row->fields[i - 1].type, "key '" + row->fields[i - 1].name + "'");
    if (n < lt->key_count) {
      if (for_write) {
        error(e.loc, "a key prefix selects several items; give every key to change one");
        return e.type = tt_.error();
      }
      e.int_value = 1;  // a prefix slice
      return e.type = lt;
    }
    return e.type = row;
  }
  error(e.loc, "cannot index " + a_type(lt), lt->kind == TypeKind::Text ? "use .at(i) or .slice(a, b)" : "");
  return e.type = tt_.error();
}

const Type* Checker::field_type(Expr& e) {
  const Type* bt = e.args[0]->type;
  if (!bt || is_error(bt)) return e.type = tt_.error();
  if (bt->kind != TypeKind::Item) {
    std::string hint;
    if (bt->is_list() || bt->kind == TypeKind::Text) hint = "methods need parentheses, e.g. '." + e.text + "()'";
    error(e.loc, a_type(bt) + " has no fields", hint);
    return e.type = tt_.error();
  }
  if (bt->value && e.text == "value") {  // an event's result: the slots from 2 on (see Type::value)
    e.int_value = 2;
    return e.type = bt->value;
  }
  int i = bt->field_index(e.text);
  if (i < 0 || (bt->value && i >= 2)) {
    std::vector<std::string> names;
    for (auto& f : bt->fields) names.push_back(f.name);
    if (bt->value) names.resize(2), names.push_back("value");
    error(e.loc, "'" + type_name(bt) + "' has no field '" + e.text + "'", suggest(e.text, names));
    return e.type = tt_.error();
  }
  e.int_value = i;
  note_old_field_read(bt, e.text);
  return e.type = bt->fields[i].type;
}

void Checker::note_old_field_read(const Type* row, const std::string& field) {
  for (const ListDecl& d : m_.lists)
    if (d.name.rfind("old.", 0) == 0 && d.resolved && d.resolved->element == row)
      m_.migrate_reads.push_back(d.name.substr(4) + "." + field);
}

void Checker::check_for(Stmt& s) {
  scopes_.emplace_back();
  const Type* var_type = tt_.error();
  if (s.range_end) {
    expect_type(*s.expr, tt_.int_type(), "the start of a range");
    expect_type(*s.range_end, tt_.int_type(), "the end of a range");
    var_type = tt_.int_type();
    if (!s.name2.empty()) error(s.loc, "a range gives one variable");
  } else if (s.expr) {
    const Type* t = iterable_type(*s.expr);
    s.iter_type = t;
    if (t->kind == TypeKind::Seq) var_type = t->element;
    else if (t->kind == TypeKind::Keyed) var_type = t->element;
    else if (!is_error(t))
      error(s.expr->loc, "cannot iterate over " + a_type(t), t->kind == TypeKind::Int ? "write 'for i in 0 .. n'" : t->kind == TypeKind::Text ? "iterate over .split(\"\") or use .at(i)" : "");
    if (!s.name2.empty() && t->kind != TypeKind::Seq && !is_error(t))
      error(s.loc, "'for i, x in ...' is for sequences (i is the position)");
    else if (!s.name2.empty() && s.expr->kind == ExprKind::Method && s.expr->int_value == 2 && !is_error(t))
      error(s.loc, "a reverse walk gives one variable", "read positions from the end with 'for i in 0 .. n' instead");
  }
  if (!s.name2.empty()) {
    s.local = declare_local(s.name, tt_.int_type(), false, s.loc);
    s.local2 = declare_local(s.name2, var_type, false, s.loc);
  } else {
    s.local = declare_local(s.name, var_type, false, s.loc);
  }
  const LocalOrigin origin = s.range_end                                        ? LocalOrigin::RangeLoop
                             : s.iter_type && s.iter_type->kind == TypeKind::Keyed ? LocalOrigin::KeyedLoop
                                                                                  : LocalOrigin::SeqLoop;
  if (s.local >= 0) fn_->locals[s.local].origin = s.name2.empty() ? origin : LocalOrigin::RangeLoop;  // 'i' of 'for i, x'
  if (s.local2 >= 0) fn_->locals[s.local2].origin = origin;
  ++loop_depth_;
  check_block(s.body);
  --loop_depth_;
  scopes_.pop_back();
}

const Type* Checker::iterable_type(Expr& e) {
  if (e.kind == ExprKind::Index) {
    return check_list_index(e, false);  // a full key's row, or a prefix slice's list type
  }
  if (e.kind == ExprKind::Method && (e.text == "range" || e.text == "reverse")) {
    reverse_allowed_ = e.text == "reverse";
    range_allowed_ = e.text == "range";
    const Type* t = e.type = check_method(e);
    reverse_allowed_ = range_allowed_ = false;
    if (is_error(t) || t->kind == TypeKind::Void) {
      if (t->kind == TypeKind::Void)
        error(e.loc, "'.reverse()' of an event sequence reverses it in place and gives nothing to loop over",
              "call it before the loop, or walk positions: 'for i in 0 .. n { let x = xs[n - 1 - i] }'");
      return tt_.error();
    }
    return t;
  }
  return check_list_operand(e);
}

// A slice: a key prefix list[k...] (e.int_value 1), or .range(lo, hi) of a keyed list or of a
// prefix. Read with the slice methods or walked by a for loop; never a value of its own.
bool Checker::is_slice(const Expr& e) {
  if (e.kind == ExprKind::Index) return e.int_value == 1;
  return e.kind == ExprKind::Method && e.builtin == static_cast<int>(Builtin::LRange);
}

bool Checker::is_slice_method(const std::string& name) {
  return name == "first" || name == "last" || name == "count" || name == "sum" || name == "min" || name == "max";
}

// The list of a slice method, of .range or of .reverse: a list, or a slice when the method reads
// slices (a prefix may be followed by .range; .reverse takes either, and only in a for loop).
const Type* Checker::check_slice_operand(Expr& self, const std::string& method) {
  bool reads_slices = is_slice_method(method) || (method == "reverse" && reverse_allowed_);
  reverse_allowed_ = false;
  // an index is checked as a place to read: a full key's row, or a slice the method may take
  if (self.kind == ExprKind::Index) return check_list_index(self, false);
  if (reads_slices && self.kind == ExprKind::Method && self.text == "range") {
    range_allowed_ = true;
    const Type* t = self.type = check_method(self);
    range_allowed_ = false;
    return t;
  }
  return check_list_operand(self);
}

void Checker::check_return(Stmt& s) {
  const Type* want = fn_->result_type;
  if (!s.expr) {
    if (want && want->kind != TypeKind::Void && !is_error(want)) error(s.loc, "'return' needs " + a_type(want) + " value here");
    return;
  }
  if (!want || want->kind == TypeKind::Void) {
    check_expr(*s.expr, nullptr);
    error(s.expr->loc, "'" + fn_->name + "' returns nothing, so 'return' takes no value");
    return;
  }
  expect_type(*s.expr, want, "the returned value");
}

}  // namespace checker

void check_module(Module& module, TypeTable& types, Diagnostics& diags) {
  try {
    checker::Checker(module, types, diags).run();
  } catch (CompileAbort&) {
  }
}

}  // namespace pure
