// frontend/checker_consts.cpp — constants: `const NAME = expr` declared, computed at compile time
// with the VM's rules (overflow, division by zero and shift amounts are errors, a cycle is
// reported), and a constant's name anywhere else replaced by its literal.
#include <cmath>
#include <cstdint>

#include "frontend/checker_internal.h"

namespace pure::checker {

void Checker::declare_consts() {
  for (size_t i = 0; i < m_.consts.size(); ++i) {
    ConstDecl& c = m_.consts[i];
    if (const_index_.count(c.name)) {
      error(c.loc, "constant '" + c.name + "' is declared twice" +
                       other_place(m_.consts[static_cast<size_t>(const_index_[c.name])].loc, c.loc));
      c.state = ConstDecl::Done;
      c.type = tt_.error();
      continue;
    }
    const_index_[c.name] = static_cast<int>(i);
  }
  for (ConstDecl& c : m_.consts) evaluate_const(c, c.loc);
}

void Checker::check_const_names() {
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
const ConstDecl& Checker::evaluate_const(ConstDecl& c, Loc use) {
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

Checker::ConstVal Checker::const_error(Loc loc, std::string msg, std::string hint) {
  error(loc, std::move(msg), std::move(hint));
  return {};
}

// The value of a constant expression, or a ConstVal with a null type after an error.
Checker::ConstVal Checker::const_value(Expr& e) {
  switch (e.kind) {
    case ExprKind::Int: return const_of(e.type && e.type->is_enum() ? e.type : tt_.int_type(), e.int_value);
    case ExprKind::Field: {
      const Type* t = enum_member(e);
      if (!t) return const_error(e.loc, "a constant's value must be computed at compile time from literals and other constants",
                                 "fields of variables are not constant");
      if (is_error(t)) return {};
      return const_of(t, e.int_value);
    }
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
          case TypeKind::Int: out += v.type->is_enum() ? v.type->members[static_cast<size_t>(v.i)] : std::to_string(v.i); break;
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
void Checker::adapt_const_literals(const Expr& ea, ConstVal& a, const Expr& eb, ConstVal& b) {
  auto literal = [](const Expr& e) { return e.kind == ExprKind::Int || e.kind == ExprKind::Name; };
  if (is_int(a.type) && is_num(b.type) && literal(ea)) a = const_of(b.type, 0, static_cast<double>(a.i));
  if (is_int(b.type) && is_num(a.type) && literal(eb)) b = const_of(a.type, 0, static_cast<double>(b.i));
}

Checker::ConstVal Checker::const_binary(Expr& e) {
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
bool Checker::substitute_const(Expr& e) {
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

}  // namespace pure::checker
