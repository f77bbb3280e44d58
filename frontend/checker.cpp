// frontend/checker.cpp — resolves names and checks types; annotates the tree for lowering.
#include "frontend/checker.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/assert.h"
#include "base/limits.h"

#include "frontend/builtins.h"
#include "frontend/token.h"

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

namespace {

std::string suggest(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = name.size() <= 3 ? 1 : name.size() <= 6 ? 2 : 3;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d <= best_distance && (best.empty() || d < best_distance)) {
      best = c;
      best_distance = d;
    }
  }
  return best.empty() ? "" : "did you mean '" + best + "'?";
}

// "a num", "an int", "an item": the type's name with its article.
std::string a_type(const Type* t) {
  std::string n = type_name(t);
  bool vowel = !n.empty() && std::string("aeiouAEIOU").find(n[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + n;
}

bool is_int(const Type* t) { return t->kind == TypeKind::Int; }
bool is_num(const Type* t) { return t->kind == TypeKind::Num; }
bool is_error(const Type* t) { return t->kind == TypeKind::Error; }
bool is_numeric(const Type* t) { return is_int(t) || is_num(t); }

const Builtin kFirstTextMethod = Builtin::TLen;
const Builtin kFirstListMethod = Builtin::LCount;

int find_builtin(const std::string& name, Builtin from, Builtin to) {
  for (int i = static_cast<int>(from); i < static_cast<int>(to); ++i)
    if (name == builtin_name(static_cast<Builtin>(i))) return i;
  return -1;
}

class Checker {
 public:
  Checker(Module& m, TypeTable& tt, Diagnostics& d) : m_(m), tt_(tt), d_(d) {}

  void run() {
    declare_consts();
    declare_types();
    declare_lists();
    declare_functions();
    check_const_names();
    for (FuncDecl& f : m_.funcs)
      if (!f.duplicate) check_function(f);
  }

 private:
  Module& m_;
  TypeTable& tt_;
  Diagnostics& d_;
  std::map<std::string, const Type*> type_names_;
  std::map<std::string, int> list_index_;
  std::vector<const ListDecl*> rows_resolving_;  // stored lists whose type `X.Row` is resolving, outermost first
  std::map<std::string, int> func_index_;
  std::map<std::string, int> const_index_;
  int const_depth_ = 0;  // constants being computed, one inside the other
  FuncDecl* fn_ = nullptr;
  std::vector<std::map<std::string, int>> scopes_;
  int loop_depth_ = 0;
  bool stored_list_allowed_ = false;  // set while checking the list of an index, method or loop
  bool range_allowed_ = false;        // set while checking a slice: a for loop's list, a slice method's list
  bool reverse_allowed_ = false;      // set while checking the iterable of a for loop

  // Checks the list operand of list[...], list.method(...) or `for x in list`, where a stored
  // list may be named. Anywhere else a stored list is not a value.
  const Type* check_list_operand(Expr& e) {
    stored_list_allowed_ = e.kind == ExprKind::Name;
    const Type* t = check_expr(e, nullptr);
    stored_list_allowed_ = false;
    return t;
  }

  void error(Loc loc, std::string msg, std::string hint = {}) {
    d_.error(loc, std::move(msg), std::move(hint));
    if (d_.count() > limits::kErrorsBeforeAbort) throw CompileAbort{};
  }

  // ---- constants ----------------------------------------------------------------------------
  // `const NAME = expr`: computed here, at compile time, with the VM's rules (overflow, division by
  // zero and shift amounts are errors); a name of a constant anywhere else becomes its literal.
  struct ConstVal {
    const Type* type = nullptr;  // null: not constant (already reported)
    int64_t i = 0;
    double n = 0;
    std::string t;
  };

  void declare_consts() {
    for (size_t i = 0; i < m_.consts.size(); ++i) {
      ConstDecl& c = m_.consts[i];
      if (const_index_.count(c.name)) {
        error(c.loc, "constant '" + c.name + "' is declared twice");
        c.state = ConstDecl::Done;
        c.type = tt_.error();
        continue;
      }
      const_index_[c.name] = static_cast<int>(i);
    }
    for (ConstDecl& c : m_.consts) evaluate_const(c, c.loc);
  }

  void check_const_names() {
    for (auto& [name, i] : const_index_) {
      const ConstDecl& c = m_.consts[i];
      if (type_names_.count(name) || list_index_.count(name) || func_index_.count(name) || name == "int" || name == "num" ||
          name == "bool" || name == "text")
        error(c.loc, "'" + name + "' is declared twice (a constant and a " +
                         (list_index_.count(name) ? "stored list" : func_index_.count(name) ? "function" : "type") + ")");
      else if (find_builtin(name, Builtin::Print, kFirstTextMethod) >= 0)
        error(c.loc, "'" + name + "' is a standard function and cannot be redeclared");
    }
  }

  // Computes a constant once; `use` is where it is needed (for the message about a cycle).
  const ConstDecl& evaluate_const(ConstDecl& c, Loc use) {
    if (c.state == ConstDecl::Done) return c;
    if (c.state == ConstDecl::Visiting) {
      error(use, "constant '" + c.name + "' depends on itself", "a constant's value cannot use the constant");
      c.type = tt_.error();
      return c;
    }
    if (const_depth_ >= limits::kNestingDepth) {
      error(use, "constants refer to each other too deeply (more than " + std::to_string(limits::kNestingDepth) + " levels)");
      c.type = tt_.error();
      return c;
    }
    c.state = ConstDecl::Visiting;
    ++const_depth_;
    ConstVal v = c.value ? const_value(*c.value) : ConstVal{};
    --const_depth_;
    if (c.state == ConstDecl::Done) return c;  // a cycle through it was reported
    c.state = ConstDecl::Done;
    c.type = v.type ? v.type : tt_.error();
    c.int_value = v.i;
    c.num_value = v.n;
    c.text = std::move(v.t);
    return c;
  }

  ConstVal const_error(Loc loc, std::string msg, std::string hint = {}) {
    error(loc, std::move(msg), std::move(hint));
    return {};
  }

  ConstVal const_of(const Type* t, int64_t i = 0, double n = 0, std::string text = {}) { return {t, i, n, std::move(text)}; }

  // The value of a constant expression, or a ConstVal with a null type after an error.
  ConstVal const_value(Expr& e) {
    switch (e.kind) {
      case ExprKind::Int: return const_of(tt_.int_type(), e.int_value);
      case ExprKind::Num: return const_of(tt_.num_type(), 0, e.num_value);
      case ExprKind::Bool: return const_of(tt_.bool_type(), e.int_value);
      case ExprKind::Text: return const_of(tt_.text_type(), 0, 0, e.text);
      case ExprKind::Name: {
        auto it = const_index_.find(e.text);
        if (it == const_index_.end()) {
          if (list_index_.count(e.text) || func_index_.count(e.text) || type_names_.count(e.text))
            return const_error(e.loc, "'" + e.text + "' is not a constant; a constant's value is computed from literals and other constants");
          std::vector<std::string> names;
          for (auto& [n, i] : const_index_) names.push_back(n);
          return const_error(e.loc, "unknown constant '" + e.text + "'", suggest(e.text, names));
        }
        const ConstDecl& c = evaluate_const(m_.consts[it->second], e.loc);
        if (!c.type || is_error(c.type)) return {};
        return const_of(c.type, c.int_value, c.num_value, c.text);
      }
      case ExprKind::Unary: {
        ConstVal v = const_value(*e.args[0]);
        if (!v.type) return v;
        Tok op = static_cast<Tok>(e.op);
        if (op == Tok::KwNot) {
          if (v.type->kind != TypeKind::Bool) return const_error(e.loc, "'not' needs a bool, not " + type_name(v.type));
          return const_of(v.type, !v.i);
        }
        if (op == Tok::Tilde) {
          if (!is_int(v.type)) return const_error(e.loc, "'~' needs an int, not " + type_name(v.type));
          return const_of(v.type, ~v.i);
        }
        if (is_num(v.type)) return const_of(v.type, 0, -v.n);
        if (!is_int(v.type)) return const_error(e.loc, "'-' needs an int or num, not " + type_name(v.type));
        if (v.i == INT64_MIN) return const_error(e.loc, "integer overflow in a constant: -(" + std::to_string(v.i) + ") does not fit in 64 bits");
        return const_of(v.type, -v.i);
      }
      case ExprKind::Binary: return const_binary(e);
      case ExprKind::Cond: {
        ConstVal c = const_value(*e.args[0]);
        ConstVal a = const_value(*e.args[1]);
        ConstVal b = const_value(*e.args[2]);
        if (!c.type || !a.type || !b.type) return {};
        if (c.type->kind != TypeKind::Bool) return const_error(e.args[0]->loc, "an 'if' condition must be a bool, not " + type_name(c.type));
        adapt_const_literals(*e.args[1], a, *e.args[2], b);
        if (a.type != b.type)
          return const_error(e.loc, "the branches of this 'if' have different types: " + type_name(a.type) + " and " + type_name(b.type));
        return c.i ? a : b;
      }
      case ExprKind::Interp: {
        std::string out;
        for (ExprPtr& part : e.args) {
          ConstVal v = const_value(*part);
          if (!v.type) return v;
          switch (v.type->kind) {
            case TypeKind::Text: out += v.t; break;
            case TypeKind::Int: out += std::to_string(v.i); break;
            case TypeKind::Bool: out += v.i ? "true" : "false"; break;
            default:
              return const_error(part->loc, "a num cannot be put into a constant text", "make the text where it is used, or use fixed(...) there");
          }
        }
        return const_of(tt_.text_type(), 0, 0, std::move(out));
      }
      default:
        return const_error(e.loc, "a constant's value must be computed at compile time from literals and other constants",
                           "calls, lists, items and variables are not constant");
    }
  }

  // An int literal (or a constant's name, which stands for its literal) next to a num is taken
  // as a num, as in any expression.
  void adapt_const_literals(const Expr& ea, ConstVal& a, const Expr& eb, ConstVal& b) {
    auto literal = [](const Expr& e) { return e.kind == ExprKind::Int || e.kind == ExprKind::Name; };
    if (is_int(a.type) && is_num(b.type) && literal(ea)) a = const_of(b.type, 0, static_cast<double>(a.i));
    if (is_int(b.type) && is_num(a.type) && literal(eb)) b = const_of(a.type, 0, static_cast<double>(b.i));
  }

  ConstVal const_binary(Expr& e) {
    Tok op = static_cast<Tok>(e.op);
    ConstVal a = const_value(*e.args[0]);
    if (!a.type) return a;
    if ((op == Tok::KwAnd || op == Tok::KwOr) && a.type->kind == TypeKind::Bool && (op == Tok::KwAnd ? !a.i : a.i)) {
      ConstVal b = const_value(*e.args[1]);  // still checked, though its value is not needed
      if (!b.type) return b;
      if (b.type->kind != TypeKind::Bool) return const_error(e.args[1]->loc, "each side of " + std::string(tok_name(op)) + " must be a bool, not " + type_name(b.type));
      return a;
    }
    ConstVal b = const_value(*e.args[1]);
    if (!b.type) return b;
    adapt_const_literals(*e.args[0], a, *e.args[1], b);
    std::string sym = tok_name(op);
    if (a.type != b.type) return const_error(e.loc, "cannot use " + sym + " on " + type_name(a.type) + " and " + type_name(b.type));
    TypeKind k = a.type->kind;
    auto overflow = [&](const char* s) {
      return const_error(e.loc, "integer overflow in a constant: " + std::to_string(a.i) + " " + s + " " + std::to_string(b.i) +
                                    " does not fit in 64 bits");
    };
    switch (op) {
      case Tok::KwAnd: case Tok::KwOr:
        if (k != TypeKind::Bool) return const_error(e.loc, "each side of " + sym + " must be a bool, not " + type_name(a.type));
        return b;
      case Tok::Plus: case Tok::Minus: case Tok::Star: case Tok::Slash: case Tok::Percent: {
        if (k == TypeKind::Text && op == Tok::Plus) return const_of(a.type, 0, 0, a.t + b.t);
        if (k == TypeKind::Num) {
          double x = a.n, y = b.n;
          double r = op == Tok::Plus ? x + y : op == Tok::Minus ? x - y : op == Tok::Star ? x * y : op == Tok::Slash ? x / y : std::fmod(x, y);
          return const_of(a.type, 0, r);
        }
        if (k != TypeKind::Int) return const_error(e.loc, "cannot use " + sym + " on " + type_name(a.type));
        int64_t r = 0;
        switch (op) {
          case Tok::Plus: if (__builtin_add_overflow(a.i, b.i, &r)) return overflow("+"); break;
          case Tok::Minus: if (__builtin_sub_overflow(a.i, b.i, &r)) return overflow("-"); break;
          case Tok::Star: if (__builtin_mul_overflow(a.i, b.i, &r)) return overflow("*"); break;
          default:
            if (b.i == 0) return const_error(e.loc, op == Tok::Slash ? "division by zero in a constant" : "division by zero (in %) in a constant");
            if (op == Tok::Slash) {
              if (a.i == INT64_MIN && b.i == -1) return overflow("/");
              r = a.i / b.i;
            } else {
              r = b.i == -1 ? 0 : a.i % b.i;
            }
        }
        return const_of(a.type, r);
      }
      case Tok::Amp: case Tok::Pipe: case Tok::Caret: case Tok::Shl: case Tok::Shr: {
        if (k != TypeKind::Int) return const_error(e.loc, "cannot use " + sym + " on " + type_name(a.type) + "; bitwise operators take ints");
        if ((op == Tok::Shl || op == Tok::Shr) && static_cast<uint64_t>(b.i) > 63)
          return const_error(e.loc, "shift amount out of range in a constant: " + std::to_string(a.i) + " " + sym.substr(1, sym.size() - 2) +
                                        " " + std::to_string(b.i) + " (the amount must be 0 to 63)");
        int64_t r = op == Tok::Amp ? (a.i & b.i) : op == Tok::Pipe ? (a.i | b.i) : op == Tok::Caret ? (a.i ^ b.i)
                  : op == Tok::Shl ? static_cast<int64_t>(static_cast<uint64_t>(a.i) << b.i) : (a.i >> b.i);
        return const_of(a.type, r);
      }
      default: break;
    }
    // comparisons
    int c = 0;
    bool unordered = false;  // a nan: every comparison but != is false
    if (k == TypeKind::Num) {
      unordered = a.n != a.n || b.n != b.n;
      c = a.n < b.n ? -1 : a.n > b.n ? 1 : 0;
    } else if (k == TypeKind::Text) {
      int r = a.t.compare(b.t);  // bytes: code point order for UTF-8
      c = r < 0 ? -1 : r > 0 ? 1 : 0;
    } else {
      c = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    }
    if ((op != Tok::EqEq && op != Tok::NotEq) && k == TypeKind::Bool)
      return const_error(e.loc, "cannot order bool values with " + sym);
    bool r = false;
    switch (op) {
      case Tok::EqEq: r = !unordered && c == 0; break;
      case Tok::NotEq: r = unordered || c != 0; break;
      case Tok::Lt: r = !unordered && c < 0; break;
      case Tok::LtEq: r = !unordered && c <= 0; break;
      case Tok::Gt: r = !unordered && c > 0; break;
      default: r = !unordered && c >= 0; break;
    }
    return const_of(tt_.bool_type(), r);
  }

  // A name that is a constant becomes its literal (the checker and the lowering see a literal).
  bool substitute_const(Expr& e) {
    auto it = const_index_.find(e.text);
    if (it == const_index_.end()) return false;
    const ConstDecl& c = evaluate_const(m_.consts[it->second], e.loc);
    e.name_kind = NameKind::Unresolved;
    switch (c.type ? c.type->kind : TypeKind::Error) {
      case TypeKind::Int: e.kind = ExprKind::Int; e.int_value = c.int_value; break;
      case TypeKind::Num: e.kind = ExprKind::Num; e.num_value = c.num_value; break;
      case TypeKind::Bool: e.kind = ExprKind::Bool; e.int_value = c.int_value; break;
      case TypeKind::Text: e.kind = ExprKind::Text; e.text = c.text; break;
      default: e.type = tt_.error(); return true;
    }
    e.type = c.type;
    return true;
  }

  // ---- declarations -------------------------------------------------------------------------
  std::vector<std::string> known_type_names() const {
    std::vector<std::string> names = {"int", "num", "bool", "text"};
    for (auto& [n, t] : type_names_) names.push_back(n);
    return names;
  }

  void declare_types() {
    // First the names, so that declarations may refer to each other in any order.
    for (ItemDecl& d : m_.types) {
      if (type_names_.count(d.name) || d.name == "int" || d.name == "num" || d.name == "bool" || d.name == "text") {
        error(d.loc, "type '" + d.name + "' is declared twice");
        continue;
      }
      if (!d.is_alias) {
        Type* item = tt_.new_item(d.name);
        d.resolved = item;
        type_names_[d.name] = item;
      }
    }
    for (ItemDecl& d : m_.types) {
      if (!d.is_alias || !d.type) continue;
      d.resolved = resolve_type(d.type.get());
      if (!type_names_.count(d.name)) type_names_[d.name] = d.resolved;
    }
    for (ItemDecl& d : m_.types) {
      if (d.is_alias || !d.type || !d.resolved) continue;
      Type* item = const_cast<Type*>(d.resolved);
      for (auto& f : d.type->fields) {
        FieldInfo info = resolve_field(f, "an item's field");
        for (auto& existing : item->fields)
          if (existing.name == info.name) error(f.loc, "field '" + f.name + "' appears twice");
        item->fields.push_back(std::move(info));
      }
    }
  }

  FieldInfo resolve_field(TypeExpr::Field& f, const char* what) {
    FieldInfo info;
    info.name = f.name;
    info.type = f.type ? resolve_type(f.type.get()) : tt_.error();
    if (!info.type->is_scalar() && !is_error(info.type)) {
      error(f.loc, std::string(what) + " must be int, num, bool or text, not " + type_name(info.type));
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

  const Type* resolve_type(TypeExpr* t) {
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
        if (t->name == "outcome") return tt_.outcome();
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
  const Type* row_type(TypeExpr* t) {
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

  const Type* resolve_list_type(ListDecl& l) {
    if (!l.type) return tt_.error();
    PURE_ASSERT(rows_resolving_.size() < m_.lists.size());
    rows_resolving_.push_back(&l);
    const Type* lt = resolve_type(l.type.get());
    rows_resolving_.pop_back();
    return lt;
  }

  void declare_lists() {
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

  void declare_functions() {
    for (size_t i = 0; i < m_.funcs.size(); ++i) {
      FuncDecl& f = m_.funcs[i];
      if (func_index_.count(f.name) || list_index_.count(f.name)) {
        error(f.loc, "'" + f.name + "' is declared twice");
        f.duplicate = true;
        continue;
      }
      if (find_builtin(f.name, Builtin::Print, kFirstTextMethod) >= 0)
        error(f.loc, "'" + f.name + "' is a standard function and cannot be redeclared");
      func_index_[f.name] = static_cast<int>(i);
      f.result_type = f.result ? resolve_type(f.result.get()) : tt_.void_type();
      for (Param& p : f.params) {
        LocalInfo info{p.name, resolve_type(p.type.get()), false, p.loc};
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
        for (size_t p = 0; p < f.params.size(); ++p)
          if (f.locals[p].type->kind == TypeKind::Keyed)
            error(f.params[p].loc, "event and query parameters are values sent by a client: int, num, bool, text, items, or a 'seq' of them",
                  "send the rows as a 'seq' of items and build the keyed list inside");
    }
  }

  // The outcome of an event that returns a value, which only a local can hold.
  static bool is_valued_outcome(const Type* t) { return t && t->kind == TypeKind::Item && t->value; }
  void no_valued_outcome_in_list(const Type* t, Loc loc) {
    if (is_valued_outcome(t))
      error(loc, "a list cannot hold the outcome of an event that returns a value (" + type_name(t) + ")",
            "keep the outcome in a local and put its '.value' (or '.ok') in the list");
  }

  // ---- functions and statements -------------------------------------------------------------
  void check_function(FuncDecl& f) {
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

  static bool always_exits(const std::vector<StmtPtr>& body) {
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

  static bool contains_break(const std::vector<StmtPtr>& body) {
    for (const StmtPtr& s : body) {
      if (!s) continue;
      if (s->kind == StmtKind::Break) return true;
      if (s->kind == StmtKind::If || s->kind == StmtKind::Block)
        if (contains_break(s->body) || contains_break(s->else_body)) return true;
    }
    return false;
  }

  void check_block(std::vector<StmtPtr>& body, bool new_scope = true) {
    if (new_scope) scopes_.emplace_back();
    for (StmtPtr& s : body)
      if (s) check_statement(*s);
    if (new_scope) scopes_.pop_back();
  }

  int declare_local(const std::string& name, const Type* type, bool is_var, Loc loc) {
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

  int lookup_local(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    return -1;
  }

  std::vector<std::string> visible_names() const {
    std::vector<std::string> names;
    for (auto& s : scopes_)
      for (auto& [n, id] : s) names.push_back(n);
    for (auto& [n, i] : list_index_) names.push_back(n);
    for (auto& [n, i] : func_index_) names.push_back(n);
    for (auto& [n, i] : const_index_) names.push_back(n);
    return names;
  }

  void check_statement(Stmt& s) {
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

  void expect_bool(Expr* e, const char* what) {
    if (!e) return;
    const Type* t = check_expr(*e, tt_.bool_type());
    if (!is_error(t) && t->kind != TypeKind::Bool)
      error(e->loc, std::string(what) + " must be a bool, not " + type_name(t), t->kind == TypeKind::Int ? "compare it, e.g. 'x != 0'" : "");
  }

  void check_let(Stmt& s) {
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
        error(s.loc, "'let ... else' needs a keyed-list lookup like 'list[key]', or '.first()' or '.last()', on the right");
      check_block(s.body);
      if (!always_exits(s.body))
        error(s.body[0]->loc, "the 'else' of a 'let' must leave: 'fail', 'return', 'break' or 'continue'");
    }
    s.local = declare_local(s.name, t, s.is_var, s.loc);
  }

  // True if an expression of e's type can be stored where `want` is expected (adapting literals).
  bool assignable(Expr& e, const Type* want) {
    if (e.type == want || is_error(e.type) || is_error(want)) return true;
    return false;
  }

  const Type* expect_type(Expr& e, const Type* want, const std::string& what) {
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
  void check_assign(Stmt& s) {
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
  void check_row_literal(Expr& e, const Type* list) {
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
  void check_item_fields(Expr& e, const Type* item, uint32_t skip) {
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

  void note_stored_write(Expr& list_expr, Loc loc) {
    if (list_expr.name_kind != NameKind::StoredList || !fn_) return;
    fn_->writes_stored = true;
    if (fn_->kind == FuncKind::Event) return;
    const std::string& name = list_expr.text;
    if (fn_->kind == FuncKind::Query)
      error(loc, "query '" + fn_->name + "' changes stored list '" + name + "'; queries only read", "make it an event");
    else if (fn_->kind == FuncKind::Main)
      error(loc, "main changes stored list '" + name + "' directly", "call an event that changes it");
    else
      error(loc, "function '" + fn_->name + "' changes stored list '" + name + "'; only events change stored lists",
            "make it an event, or return the new values to the event that calls it");
  }

  const Type* check_place(Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: {
        const Type* t = check_expr(e, nullptr);
        if (e.name_kind == NameKind::Local) {
          const LocalInfo& l = fn_->locals[e.ref];
          if (!l.is_var) {
            error(e.loc, "cannot assign to '" + e.text + "': it is declared with 'let'", "declare it with 'var' to change it");
            return tt_.error();
          }
          return t;
        }
        if (!is_error(t)) error(e.loc, "cannot assign to '" + e.text + "'");
        return tt_.error();
      }
      case ExprKind::Field: {
        Expr& base = *e.args[0];
        if (base.kind == ExprKind::Name) {
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
  const Type* check_list_index(Expr& e, bool for_write) {
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

  const Type* field_type(Expr& e) {
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
    return e.type = bt->fields[i].type;
  }

  void check_for(Stmt& s) {
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
    ++loop_depth_;
    check_block(s.body);
    --loop_depth_;
    scopes_.pop_back();
  }

  const Type* iterable_type(Expr& e) {
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
  static bool is_slice(const Expr& e) {
    if (e.kind == ExprKind::Index) return e.int_value == 1;
    return e.kind == ExprKind::Method && e.builtin == static_cast<int>(Builtin::LRange);
  }
  static bool is_slice_method(const std::string& name) {
    return name == "first" || name == "last" || name == "count" || name == "sum" || name == "min" || name == "max";
  }

  // The list of a slice method, of .range or of .reverse: a list, or a slice when the method reads
  // slices (a prefix may be followed by .range; .reverse takes either, and only in a for loop).
  const Type* check_slice_operand(Expr& self, const std::string& method) {
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

  void check_return(Stmt& s) {
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

  // ---- expressions --------------------------------------------------------------------------
  // Checks e; `expected` (may be null) lets literals adapt (an int literal where a num is wanted).
  const Type* check_expr(Expr& e, const Type* expected) {
    const Type* t = check_expr_inner(e, expected);
    if (expected && is_num(expected) && is_int(t) && e.kind == ExprKind::Int) {
      e.kind = ExprKind::Num;
      e.num_value = static_cast<double>(e.int_value);
      t = tt_.num_type();
    }
    return e.type = t;
  }

  const Type* check_expr_inner(Expr& e, const Type* expected) {
    switch (e.kind) {
      case ExprKind::Int: return tt_.int_type();
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
      case ExprKind::Call: return check_call(e);
      case ExprKind::Method: return check_method(e);
      case ExprKind::Field: check_expr(*e.args[0], nullptr); return field_type(e);
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

  const Type* check_name(Expr& e) {
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
      if (!stored_list_allowed_) {
        error(e.loc, "stored list '" + e.text + "' is the module's state, not a value",
              "index it, call its methods, or loop over it; copy what you need into an event list");
        return tt_.error();
      }
      return m_.lists[l->second].resolved ? m_.lists[l->second].resolved : tt_.error();
    }
    if (func_index_.count(e.text)) {
      error(e.loc, "'" + e.text + "' is a function; call it with parentheses");
      return tt_.error();
    }
    if (type_names_.count(e.text)) {
      error(e.loc, "'" + e.text + "' is a type, not a value", "write '" + e.text + " { field: value }' for an item");
      return tt_.error();
    }
    error(e.loc, "unknown name '" + e.text + "'", suggest(e.text, visible_names()));
    return tt_.error();
  }

  const Type* check_unary(Expr& e, const Type* expected) {
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
  void unify_literals(Expr& a, Expr& b) {
    if (!a.type || !b.type) return;
    auto adapt = [&](Expr& lit, const Type* other) {
      if (lit.kind == ExprKind::Int && is_num(other)) {
        lit.kind = ExprKind::Num;
        lit.num_value = static_cast<double>(lit.int_value);
        lit.type = tt_.num_type();
      }
    };
    adapt(a, b.type);
    adapt(b, a.type);
  }

  const Type* check_binary(Expr& e, const Type* expected) {
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

  // if c { a } else { b }: both branches have one type, which is the value's.
  const Type* check_conditional(Expr& e, const Type* expected) {
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

  static bool is_bitwise(Tok op) {
    return op == Tok::Amp || op == Tok::Pipe || op == Tok::Caret || op == Tok::Shl || op == Tok::Shr;
  }

  // & | ^ << >>: two ints, an int.
  const Type* check_bitwise(Expr& e) {
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

  const Type* check_item_literal(Expr& e, const Type* expected) {
    if (!e.text.empty()) {
      auto it = type_names_.find(e.text);
      if (it == type_names_.end() && e.text == "outcome") {  // the predeclared item, as in types
        check_item_fields(e, tt_.outcome(), 0);
        return tt_.outcome();
      }
      if (it == type_names_.end() || it->second->kind != TypeKind::Item) {
        for (ExprPtr& a : e.args) check_expr(*a, nullptr);
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

  const Type* check_seq_literal(Expr& e, const Type* expected) {
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
    return tt_.seq_of(element);
  }

  // ---- calls --------------------------------------------------------------------------------
  void check_args(Expr& e, const std::vector<const Type*>& want, size_t first, const std::string& what) {
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

  const Type* check_call(Expr& e) {
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
      if (callee.kind == FuncKind::Event) {
        if (fn_->kind != FuncKind::Main)
          error(e.loc, "event '" + e.text + "' can only be called from main (as a client would)",
                fn_->kind == FuncKind::Event ? "events are called by clients; share checks and computations through a function, and keep the writes in each event" : "");
        return tt_.outcome_of(callee.result_type);
      }
      return callee.result_type ? callee.result_type : tt_.void_type();
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
    std::vector<std::string> names;
    for (auto& [n, i] : func_index_) names.push_back(n);
    for (int i = 0; i < static_cast<int>(kFirstTextMethod); ++i) names.push_back(builtin_name(static_cast<Builtin>(i)));
    error(e.loc, "unknown function '" + e.text + "'", suggest(e.text, names));
    return tt_.error();
  }

  const Type* arg_type(Expr& e, size_t i, const Type* expected = nullptr) {
    return check_expr(*e.args[i], expected);
  }

  bool arity(Expr& e, size_t first, size_t n, const std::string& what) {
    if (e.args.size() - first == n) return true;
    error(e.loc, what + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", not " + std::to_string(e.args.size() - first));
    for (size_t i = first; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
    return false;
  }

  const Type* check_builtin_call(Expr& e, Builtin b) {
    std::string what = std::string("'") + builtin_name(b) + "'";
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
      case Builtin::Sqrt: case Builtin::Floor: case Builtin::Ceil: case Builtin::Round: case Builtin::Trunc:
      case Builtin::Exp: case Builtin::Log: case Builtin::Log2: case Builtin::Log10: case Builtin::Sin:
      case Builtin::Cos: case Builtin::Tan: case Builtin::Asin: case Builtin::Acos: case Builtin::Atan:
      case Builtin::Cbrt:
        check_args(e, {N}, 0, what);
        return N;
      case Builtin::IsNan: check_args(e, {N}, 0, what); return tt_.bool_type();
      case Builtin::Pow: case Builtin::Atan2: case Builtin::Hypot: check_args(e, {N, N}, 0, what); return N;
      case Builtin::Repeat: {
        if (!arity(e, 0, 2, what)) return tt_.error();
        const Type* t = arg_type(e, 0);
        expect_type(*e.args[1], I, "the count given to 'repeat'");
        if (is_error(t)) return t;
        if ((!t->is_scalar() && t->kind != TypeKind::Item) || is_valued_outcome(t)) {
          error(e.args[0]->loc, "'repeat' makes a list of int, num, bool, text or items, not " + type_name(t));
          return tt_.error();
        }
        return tt_.seq_of(t);
      }
      case Builtin::Join: check_args(e, {tt_.seq_of(T), T}, 0, what); return T;
      case Builtin::ParseInt: check_args(e, {T}, 0, what); return I;
      case Builtin::ParseNum: check_args(e, {T}, 0, what); return N;
      case Builtin::Fixed: check_args(e, {N, I}, 0, what); return T;
      case Builtin::RandNext: check_args(e, {I}, 0, what); return I;
      case Builtin::RandInt: check_args(e, {I, I, I}, 0, what); return I;
      case Builtin::RandNum: check_args(e, {I}, 0, what); return N;
      case Builtin::Char: check_args(e, {I}, 0, what); return T;
      case Builtin::Zpad: check_args(e, {I, I}, 0, what); return T;
      default: break;
    }
    return tt_.error();
  }

  const Type* check_method(Expr& e) {
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
      bool ok = is_slice_method(e.text) || reverse_walk || (e.text == "range" && self.kind == ExprKind::Index);
      if (!ok) {
        for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
        error(e.loc, "a slice has no method '" + e.text + "'",
              "read a slice with .first(), .last(), .count(), .sum(f), .min(f) or .max(f), or loop over it");
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

  const Type* unknown_method(Expr& e, const Type* st, Builtin from, Builtin to) {
    for (size_t i = 1; i < e.args.size(); ++i) check_expr(*e.args[i], nullptr);
    std::vector<std::string> names;
    for (int i = static_cast<int>(from); i < static_cast<int>(to); ++i) names.push_back(builtin_name(static_cast<Builtin>(i)));
    error(e.loc, a_type(st) + " has no method '" + e.text + "'", suggest(e.text, names));
    return tt_.error();
  }

  const Type* check_text_method(Expr& e, Builtin b) {
    std::string what = std::string("'.") + builtin_name(b) + "'";
    const Type* I = tt_.int_type();
    const Type* T = tt_.text_type();
    const Type* B = tt_.bool_type();
    switch (b) {
      case Builtin::TLen: case Builtin::TByteLen: check_args(e, {}, 1, what); return I;
      case Builtin::TSlice: check_args(e, {I, I}, 1, what); return T;
      case Builtin::TFind: check_args(e, {T}, 1, what); return I;
      case Builtin::TContains: case Builtin::TStartsWith: case Builtin::TEndsWith: check_args(e, {T}, 1, what); return B;
      case Builtin::TSplit: check_args(e, {T}, 1, what); return tt_.seq_of(T);
      case Builtin::TWords: case Builtin::TLines: check_args(e, {}, 1, what); return tt_.seq_of(T);
      case Builtin::TReplace: check_args(e, {T, T}, 1, what); return T;
      case Builtin::TUpper: case Builtin::TLower: case Builtin::TTrim: case Builtin::TReverse:
        check_args(e, {}, 1, what);
        return T;
      case Builtin::TRepeat: check_args(e, {I}, 1, what); return T;
      case Builtin::TPadLeft: case Builtin::TPadRight: check_args(e, {I}, 1, what); return T;
      case Builtin::TCode: check_args(e, {I}, 1, what); return I;
      case Builtin::TAt: check_args(e, {I}, 1, what); return T;
      default: return tt_.error();
    }
  }

  // `sum(field)`, `sort_by(field)`, `min(field)`, `max(field)` name a field of the element.
  int field_argument(Expr& e, const Type* list, const std::string& what) {
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

  const Type* check_list_method(Expr& e, Builtin b, const Type* lt) {
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
    if (writes) note_stored_write(*e.args[0], e.loc);
    if (writes && e.args[0]->name_kind == NameKind::StoredList &&
        (b == Builtin::LSort || b == Builtin::LSortBy || b == Builtin::LClear || (b == Builtin::LReverse && seq))) {
      error(e.loc, what + " is not available on stored lists");
    }
    switch (b) {
      case Builtin::LCount: check_args(e, {}, 1, what); return tt_.int_type();
      case Builtin::LPush:
        if (!seq_only()) return tt_.void_type();
        check_args(e, {elem}, 1, what);
        return tt_.void_type();
      case Builtin::LPop: if (!seq_only()) return tt_.error(); check_args(e, {}, 1, what); return elem;
      case Builtin::LHas: if (!keyed_only()) return tt_.bool_type(); key_args(); return tt_.bool_type();
      case Builtin::LRemove: if (!keyed_only()) return tt_.bool_type(); key_args(); return tt_.bool_type();
      case Builtin::LGet: {
        if (!keyed_only()) return tt_.error();
        key_args();
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
        size_t given = e.args[0]->kind == ExprKind::Index ? e.args[0]->args.size() - 1 : 0;
        if (!is_int(elem->fields[given].type))
          error(e.loc, given ? what + " needs an int key after the prefix, not " + type_name(elem->fields[given].type) + " key '" +
                                   elem->fields[given].name + "'"
                             : what + " needs a list whose first key is an int");
        check_args(e, {tt_.int_type(), tt_.int_type()}, 1, what);
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
        field_argument(e, lt, what);
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
      case Builtin::LJoin:
        if (!seq_only()) return tt_.error();
        if (elem->kind != TypeKind::Text) error(e.loc, "'.join' needs a seq text");
        check_args(e, {tt_.text_type()}, 1, what);
        return tt_.text_type();
      default: return tt_.error();
    }
  }
};

}  // namespace

void check_module(Module& module, TypeTable& types, Diagnostics& diags) {
  try {
    Checker(module, types, diags).run();
  } catch (CompileAbort&) {
  }
}

}  // namespace pure
