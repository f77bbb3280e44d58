// frontend/dump.cpp — prints the syntax tree, with checked types, for --dump-ast.
#include <cstdio>

#include "frontend/frontend.h"
#include "frontend/token.h"

namespace pure {
namespace {

std::string expr_text(const Expr& e);

std::string join_args(const Expr& e, size_t from) {
  std::string s;
  for (size_t i = from; i < e.args.size(); ++i) {
    if (i > from) s += ", ";
    s += expr_text(*e.args[i]);
  }
  return s;
}

std::string expr_text(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Int: return std::to_string(e.int_value);
    case ExprKind::Num: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", e.num_value);
      return buf;
    }
    case ExprKind::Bool: return e.int_value ? "true" : "false";
    case ExprKind::Text: {
      std::string s = "\"";
      for (char c : e.text) s += c == '\n' ? std::string("\\n") : std::string(1, c);
      return s + "\"";
    }
    case ExprKind::Interp: return "interp(" + join_args(e, 0) + ")";
    case ExprKind::Name: return e.text;
    case ExprKind::Unary: return std::string("(") + tok_name(static_cast<Tok>(e.op)) + " " + expr_text(*e.args[0]) + ")";
    case ExprKind::Binary:
      return "(" + expr_text(*e.args[0]) + " " + tok_name(static_cast<Tok>(e.op)) + " " + expr_text(*e.args[1]) + ")";
    case ExprKind::Call: return e.text + "(" + join_args(e, 0) + ")";
    case ExprKind::Method: return expr_text(*e.args[0]) + "." + e.text + "(" + join_args(e, 1) + ")";
    case ExprKind::Field: return expr_text(*e.args[0]) + "." + e.text;
    case ExprKind::Index: return expr_text(*e.args[0]) + "[" + join_args(e, 1) + "]";
    case ExprKind::ItemLit: return (e.text.empty() ? "" : e.text + " ") + "{" + join_args(e, 0) + "}";
    case ExprKind::SeqLit: return "[" + join_args(e, 0) + "]";
    case ExprKind::NewList: return "new " + type_name(e.type);
    case ExprKind::Cond: return "(if " + expr_text(*e.args[0]) + " { " + expr_text(*e.args[1]) + " } else { " + expr_text(*e.args[2]) + " })";
  }
  return "?";
}

void dump_block(std::string& out, const std::vector<StmtPtr>& body, int depth);

void dump_stmt(std::string& out, const Stmt& s, int depth) {
  std::string pad(depth * 2, ' ');
  auto line = [&](const std::string& text) { out += pad + text + "  @" + std::to_string(s.loc.line) + ":" + std::to_string(s.loc.col) + "\n"; };
  switch (s.kind) {
    case StmtKind::Let: line(std::string(s.is_var ? "var " : "let ") + s.name + ": " + (s.expr ? type_name(s.expr->type) : "?") + " = " + (s.expr ? expr_text(*s.expr) : "")); if (!s.body.empty()) { out += pad + "else\n"; dump_block(out, s.body, depth + 1); } break;
    case StmtKind::Assign: line(expr_text(*s.target) + " " + tok_name(static_cast<Tok>(s.op)) + " " + expr_text(*s.expr)); break;
    case StmtKind::ExprStmt: line(expr_text(*s.expr)); break;
    case StmtKind::If: line("if " + expr_text(*s.expr)); dump_block(out, s.body, depth + 1); if (!s.else_body.empty()) { out += pad + "else\n"; dump_block(out, s.else_body, depth + 1); } break;
    case StmtKind::While: line("while " + expr_text(*s.expr)); dump_block(out, s.body, depth + 1); break;
    case StmtKind::For: line("for " + s.name + (s.name2.empty() ? "" : ", " + s.name2) + " in " + expr_text(*s.expr) + (s.range_end ? " .. " + expr_text(*s.range_end) : "")); dump_block(out, s.body, depth + 1); break;
    case StmtKind::Return: line("return" + (s.expr ? " " + expr_text(*s.expr) : std::string())); break;
    case StmtKind::Break: line("break"); break;
    case StmtKind::Continue: line("continue"); break;
    case StmtKind::Fail: line("fail " + expr_text(*s.expr)); break;
    case StmtKind::Block: line("block"); dump_block(out, s.body, depth + 1); break;
  }
}

void dump_block(std::string& out, const std::vector<StmtPtr>& body, int depth) {
  for (const StmtPtr& s : body)
    if (s) dump_stmt(out, *s, depth);
}

}  // namespace

std::string dump_ast(const Module& m) {
  std::string out;
  for (const ItemDecl& t : m.types) out += "type " + t.name + " = " + type_name(t.resolved) + "\n";
  for (const ListDecl& l : m.lists) out += "stored list " + l.name + ": " + type_name(l.resolved) + "\n";
  static const char* kinds[] = {"fn", "event", "query", "main"};
  for (const FuncDecl& f : m.funcs) {
    out += std::string(kinds[static_cast<int>(f.kind)]) + " " + f.name + "(";
    for (size_t i = 0; i < f.params.size(); ++i) out += (i ? ", " : "") + f.params[i].name + ": " + type_name(f.locals[i].type);
    out += ")";
    if (f.result_type && f.result_type->kind != TypeKind::Void) out += " -> " + type_name(f.result_type);
    out += "\n";
    dump_block(out, f.body, 1);
  }
  return out;
}

}  // namespace pure
