// tests/frontend/frontend_support.h — helpers for the frontend tests: lex, parse or compile a
// string, and print expressions as s-expressions (independent of --dump-ast's format).
// Depends on the frontend's headers only.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "frontend/checker.h"
#include "frontend/frontend.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "frontend/token.h"

namespace pure::test {

// Source and diagnostics kept alive together (Diagnostics holds a reference to its Source).
struct Unit {
  std::unique_ptr<Source> source;
  std::unique_ptr<Diagnostics> diags;
  explicit Unit(const std::string& text, const std::string& path = "t.pure")
      : source(std::make_unique<Source>(path, text)), diags(std::make_unique<Diagnostics>(*source)) {}
  std::string errors() const { return diags->render(); }
  const std::vector<Diagnostic>& list() const { return diags->list(); }
};

struct Lexed : Unit {
  std::vector<Token> tokens;
  explicit Lexed(const std::string& text) : Unit(text) { tokens = lex(*source, *diags); }
  std::vector<Tok> kinds() const {
    std::vector<Tok> out;
    for (const Token& t : tokens) out.push_back(t.kind);
    return out;
  }
};

struct Parsed : Unit {
  Module module;
  explicit Parsed(const std::string& text) : Unit(text) {
    try {
      module = parse_module(*source, *diags);
    } catch (const CompileAbort&) {
    }
  }
};

struct Compiled : Unit {
  CheckedModule checked;
  explicit Compiled(const std::string& text) : Unit(text) { checked = compile_frontend(*source, *diags); }
  bool ok() const { return !diags->any(); }
};

inline std::string sexpr(const Expr& e) {
  auto args = [&](size_t from) {
    std::string s;
    for (size_t i = from; i < e.args.size(); ++i) s += " " + sexpr(*e.args[i]);
    return s;
  };
  switch (e.kind) {
    case ExprKind::Int: return std::to_string(e.int_value);
    case ExprKind::Num: return "num:" + std::to_string(e.num_value);
    case ExprKind::Bool: return e.int_value ? "true" : "false";
    case ExprKind::Text: return "\"" + e.text + "\"";
    case ExprKind::Interp: return "(interp" + args(0) + ")";
    case ExprKind::Name: return e.text;
    case ExprKind::Unary: return std::string("(") + tok_name(static_cast<Tok>(e.op)) + args(0) + ")";
    case ExprKind::Binary: return std::string("(") + tok_name(static_cast<Tok>(e.op)) + args(0) + ")";
    case ExprKind::Call: return "(call " + e.text + args(0) + ")";
    case ExprKind::Method: return "(." + e.text + args(0) + ")";
    case ExprKind::Field: return "(field " + e.text + args(0) + ")";
    case ExprKind::Index: return "(index" + args(0) + ")";
    case ExprKind::ItemLit: return "(item " + e.text + args(0) + ")";
    case ExprKind::SeqLit: return "(seq" + args(0) + ")";
    case ExprKind::NewList: return "(new)";
    case ExprKind::Cond: return "(if" + args(0) + ")";
  }
  return "?";
}

// The s-expression of `let x = EXPR` inside fn main, or "" when it does not parse.
inline std::string parse_expr(const std::string& expr, std::string* errors = nullptr) {
  Parsed p("fn main() {\n  let x = " + expr + "\n}\n");
  if (errors) *errors = p.errors();
  if (p.module.funcs.empty() || p.module.funcs[0].body.empty() || !p.module.funcs[0].body[0]->expr) return "";
  return sexpr(*p.module.funcs[0].body[0]->expr);
}

}  // namespace pure::test
