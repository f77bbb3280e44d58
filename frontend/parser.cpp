// frontend/parser.cpp — recursive-descent parser with error recovery and a nesting limit.
#include "frontend/parser.h"

#include "base/limits.h"
#include "frontend/lexer.h"

#include <algorithm>
#include <optional>

namespace pure {
namespace {

// Nesting deeper than kMaxDepth levels is an error, never a stack overflow. One level is one of:
// a block inside a function's body, an `else if`, a parenthesis, a call's or method's arguments,
// an index `[...]`, a list literal, an item literal, an interpolation `{...}` in a text, a unary
// `-` or `not`, and a `seq` or `list by` inside a type. Each level costs a bounded number of C++
// frames here and in every later pass. docs/language.md ("Limits of the compiler") lists the same.
constexpr int kMaxDepth = limits::kNestingDepth;
constexpr uint32_t kMaxHeight = limits::kExpressionHeight;  // tallest expression tree (long operator chains)

class Parser {
 public:
  Parser(const Source& src, Diagnostics& diags, std::vector<Token> tokens)
      : src_(src), diags_(diags), toks_(std::move(tokens)) {}

  Module module() {
    Module m;
    while (!at(Tok::End)) {
      size_t before = pos_;
      declaration(m);
      if (pos_ == before) advance();  // never loop on a token nobody consumes
    }
    return m;
  }

  ExprPtr lone_expression() {  // an interpolated {expression}
    ExprPtr e = expression();
    if (!at(Tok::End)) error_here("unexpected " + std::string(tok_name(peek().kind)) + " in '{...}' inside a text");
    return e;
  }

  int depth_ = 0;

 private:
  const Source& src_;
  Diagnostics& diags_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  bool panic_ = false;
  bool no_item_literal_ = false;  // inside if/while/for headers, '{' starts the body
  bool stored_list_ = false;      // parsing a stored list's type: its fields may say `was OLD`
  bool in_migrate_ = false;       // inside a migrate block: `old.NAME` is the old version's list NAME
  bool in_test_ = false;          // inside a test block: `assert(...)` and `assert_eq(...)` are statements
  bool unclosed_ = false;         // a block's '{' was reported unclosed: every open block ends here

  // ---- tokens -------------------------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  bool at(Tok k) const { return peek().kind == k; }
  // `was`, a word only after a stored list's name or a field (on the same line), not a keyword.
  bool at_was() const { return at(Tok::Ident) && peek().text == "was" && !peek().newline_before; }
  // `test "name"` at module level: `test` is a word there, not a keyword (a name elsewhere).
  bool at_test() const { return at(Tok::Ident) && peek().text == "test" && peek(1).kind == Tok::Str; }
  // `use "lib.pure"` at module level: `use` is a word there too, not a keyword.
  bool at_migrate() const { return at(Tok::Ident) && peek().text == "migrate" && peek(1).kind == Tok::LBrace; }
  bool at_use() const { return at(Tok::Ident) && peek().text == "use" && peek(1).kind == Tok::Str; }
  // `enum Name {` at module level: `enum` is a word there, not a keyword (a name elsewhere).
  bool at_enum() const { return at(Tok::Ident) && peek().text == "enum" && peek(1).kind == Tok::Ident && peek(2).kind == Tok::LBrace; }
  const Token& advance() {
    const Token& t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  bool accept(Tok k) {
    if (!at(k)) return false;
    advance();
    return true;
  }
  void error_at(Loc loc, std::string msg, std::string hint = {}) {
    if (panic_) return;
    panic_ = true;
    diags_.error(loc, std::move(msg), std::move(hint));
    if (diags_.count() > 50) throw CompileAbort{};
  }
  void error_here(std::string msg, std::string hint = {}) {
    if (at(Tok::Error)) {  // the lexer already reported it
      panic_ = true;
      return;
    }
    error_at(peek().loc, std::move(msg), std::move(hint));
  }
  std::string found() const {
    const Token& t = peek();
    if (t.kind == Tok::Ident) return "'" + t.text + "'";
    return tok_name(t.kind);
  }
  const Token& expect(Tok k, const char* what) {
    if (!at(k)) error_here(std::string("expected ") + tok_name(k) + " " + what + ", found " + found());
    else return advance();
    return peek();
  }
  std::string expect_name(const char* what) {
    if (at(Tok::Ident)) return advance().text;
    if (peek().kind >= Tok::KwFn && peek().kind <= Tok::KwFalse)
      error_here(std::string("expected ") + what + ", found the keyword " + found(), "keywords cannot be used as names");
    else
      error_here(std::string("expected ") + what + ", found " + found());
    return "";
  }

  struct DepthGuard {  // one nesting level (see kMaxDepth) for its lifetime
    Parser& p;
    explicit DepthGuard(Parser& parser, Loc loc) : p(parser) {
      if (++p.depth_ > kMaxDepth) {
        p.panic_ = false;
        p.error_at(loc, "program is nested too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
        throw CompileAbort{};
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  // Skip to a token that can start a declaration at the start of a line.
  void sync_declaration() {
    while (!at(Tok::End)) {
      const Token& t = peek();
      if (t.newline_before && (t.kind == Tok::KwFn || t.kind == Tok::KwEvent || t.kind == Tok::KwQuery ||
                               t.kind == Tok::KwType || t.kind == Tok::KwList || t.kind == Tok::KwConst || at_test() || at_use() || at_enum() ||
                               at_migrate()))
        break;
      advance();
    }
    panic_ = false;
  }

  // Skip to the end of the current statement: a new line, ';' or the closing '}'.
  void sync_statement() {
    if (peek().newline_before) {  // the error ended the statement's line: the next one starts here
      panic_ = false;
      return;
    }
    int braces = 0;
    while (!at(Tok::End)) {
      if (braces == 0 && (at(Tok::RBrace) || at(Tok::Semicolon))) break;
      if (at(Tok::LBrace)) ++braces;
      if (at(Tok::RBrace)) --braces;
      advance();
      if (braces == 0 && peek().newline_before) break;
    }
    accept(Tok::Semicolon);
    panic_ = false;
  }

  // ---- declarations -------------------------------------------------------------------------
  void declaration(Module& m) {
    Loc loc = peek().loc;
    try {
      switch (peek().kind) {
        case Tok::KwType: type_declaration(m); break;
        case Tok::KwList: list_declaration(m); break;
        case Tok::KwFn: function(m, FuncKind::Function); break;
        case Tok::KwEvent: function(m, FuncKind::Event); break;
        case Tok::KwQuery: function(m, FuncKind::Query); break;
        case Tok::KwConst: const_declaration(m); break;
        default:
          if (at_test()) {
            test_declaration(m);
            break;
          }
          if (at_enum()) {
            enum_declaration(m);
            break;
          }
          if (at_migrate()) {
            migrate_declaration(m);
            break;
          }
          if (at_use()) {
            UseDecl u;
            u.loc = advance().loc;
            const Token& path = advance();
            u.path = path.text;
            if (u.path.empty() || u.path.find_first_of("{}\\\n\r\t") != std::string::npos)
              error_at(path.loc, "an imported file's path is plain text: no escapes, braces or line breaks",
                       "e.g. 'use \"lib/money.pure\"'");
            else
              m.uses.push_back(std::move(u));
            break;
          }
          if (at(Tok::KwLet) || at(Tok::KwVar))
            error_here("statements belong inside a function", "put them in 'fn main() { ... }'");
          else
            error_here("expected a declaration ('fn', 'event', 'query', 'type', 'list' or 'const'), found " + found());
          // `while type Line {`: one stray token before a declaration keyword; the declaration parses.
          advance();
          if (starts_declaration()) panic_ = false;
          else sync_declaration();
          return;
      }
    } catch (CompileAbort&) {
      throw;
    }
    if (panic_) sync_declaration();
    (void)loc;
  }

  // test "name" { ... }: a body like main's, kept apart from the module (see TestDecl).
  void test_declaration(Module& m) {
    TestDecl t;
    t.loc = advance().loc;
    const Token& name = advance();
    t.name = name.text;
    if (t.name.empty() || t.name.find_first_of("{}\\\n\r\t") != std::string::npos) {
      error_at(name.loc, "a test's name is plain text: no escapes, braces or line breaks",
               "e.g. 'test \"a transfer moves the money\" { ... }'");
      return;
    }
    for (const TestDecl& other : m.tests)
      if (other.name == t.name) {
        error_at(name.loc, "a test named \"" + t.name + "\" is already declared on line " + std::to_string(other.loc.line),
                 "give each test its own name");
        return;
      }
    if (!at(Tok::LBrace)) {
      error_here("expected '{' to start the test's body, found " + found());
      return;
    }
    t.func.kind = FuncKind::Main;
    t.func.loc = t.loc;
    t.func.name = "test \"" + t.name + "\"";
    size_t errors_before = diags_.count();
    in_test_ = true;
    t.func.body = block(/*nested=*/false);
    in_test_ = false;
    t.func.body_has_errors = diags_.count() > errors_before;
    unclosed_ = false;
    m.tests.push_back(std::move(t));
  }

  // migrate { ... }: the module's migration (docs/upgrades.md, "Migrations"), a body like an
  // event's in which `old.NAME` names the stored list NAME of the version before. Kept apart from
  // the module (Module::migrate): only an upgrade checks and runs it.
  void migrate_declaration(Module& m) {
    Loc loc = advance().loc;
    if (m.migrate) {
      error_at(loc, "a module has one migrate block, and one is already declared on line " +
                        std::to_string(m.migrate->loc.line),
               "put every change of the upgrade in that block");
      in_migrate_ = true;
      (void)block(/*nested=*/false);
      in_migrate_ = false;
      unclosed_ = false;
      return;
    }
    auto f = std::make_unique<FuncDecl>();
    f->kind = FuncKind::Event;
    f->loc = loc;
    f->name = "migrate";
    size_t errors_before = diags_.count();
    in_migrate_ = true;
    f->body = block(/*nested=*/false);
    in_migrate_ = false;
    f->body_has_errors = diags_.count() > errors_before;
    unclosed_ = false;
    m.migrate = std::move(f);
    m.has_migrate = true;
  }

  void const_declaration(Module& m) {
    ConstDecl d;
    d.loc = advance().loc;
    d.name = expect_name("a constant's name after 'const'");
    expect(Tok::Eq, "(a constant needs a value: 'const NAME = 10')");
    if (panic_) return;
    d.value = expression();
    if (!panic_ && !at(Tok::End) && !peek().newline_before && !accept(Tok::Semicolon))
      error_here("expected a new line after the constant's value, found " + found());
    m.consts.push_back(std::move(d));
  }

  void type_declaration(Module& m) {
    ItemDecl d;
    d.loc = advance().loc;
    d.name = expect_name("a type name after 'type'");
    if (accept(Tok::Eq)) {
      d.is_alias = true;
      d.type = type();
    } else {
      d.type = std::make_unique<TypeExpr>();
      d.type->kind = TypeExpr::Keyed;
      d.type->loc = peek().loc;
      expect(Tok::LBrace, "to start the fields of the item type");
      field_list(d.type->fields, true);
    }
    d.has_errors = panic_;
    if (!d.name.empty()) m.types.push_back(std::move(d));
  }

  // enum Name { a, b, c }: members are names, separated by commas or new lines.
  void enum_declaration(Module& m) {
    ItemDecl d;
    d.loc = advance().loc;
    d.is_enum = true;
    d.name = advance().text;
    advance();  // '{' (at_enum saw it)
    while (!at(Tok::RBrace) && !at(Tok::End) && !panic_) {
      Loc loc = peek().loc;
      std::string member = expect_name("an enum member's name");
      if (panic_) break;
      if (std::find(d.members.begin(), d.members.end(), member) != d.members.end()) {
        error_at(loc, "enum member '" + member + "' appears twice in '" + d.name + "'");
        break;
      }
      d.members.push_back(member);
      d.member_locs.push_back(loc);
      if (!accept(Tok::Comma) && !at(Tok::RBrace) && !peek().newline_before)
        error_here("expected ',' or '}' after an enum member, found " + found());
    }
    if (!panic_ && d.members.empty())
      error_here("an enum needs at least one member", "e.g. 'enum Status { open, shipped, cancelled }'");
    expect(Tok::RBrace, "to close the enum's members");
    d.has_errors = panic_;
    if (!d.name.empty()) m.types.push_back(std::move(d));
  }

  void list_declaration(Module& m) {
    ListDecl d;
    d.loc = advance().loc;
    d.name = expect_name("a list name after 'list'");
    if (at_was()) {
      advance();
      d.was = expect_name("the list's former name after 'was'");
    }
    stored_list_ = true;
    d.type = list_type_after_name();
    stored_list_ = false;
    m.lists.push_back(std::move(d));
  }

  // After `list NAME`: `by KEYS { FIELDS }`, `seq { FIELDS }` or `seq TYPE`.
  TypeExprPtr list_type_after_name() {
    if (at(Tok::KwBy)) return keyed_type(advance().loc);
    if (at(Tok::KwSeq)) {
      auto t = std::make_unique<TypeExpr>();
      t->kind = TypeExpr::Seq;
      t->loc = advance().loc;
      if (at(Tok::LBrace)) {
        auto item = std::make_unique<TypeExpr>();
        item->kind = TypeExpr::Keyed;
        item->loc = advance().loc;
        field_list(item->fields, true);
        t->element = std::move(item);
      } else {
        t->element = type();
      }
      return t;
    }
    error_here("expected 'by' (a keyed list) or 'seq' (a sequence) after the list name, found " + found(),
               "e.g. 'list accounts by id: int { balance: num }'");
    return nullptr;
  }

  TypeExprPtr keyed_type(Loc loc) {
    auto t = std::make_unique<TypeExpr>();
    t->kind = TypeExpr::Keyed;
    t->loc = loc;
    if (accept(Tok::LParen)) {
      do {
        t->keys.push_back(field(false));
      } while (accept(Tok::Comma) && !at(Tok::RParen));
      expect(Tok::RParen, "to close the key list");
    } else {
      t->keys.push_back(field(false));
    }
    expect(Tok::LBrace, "to start the fields (write '{}' for none)");
    field_list(t->fields, true);
    return t;
  }

  TypeExpr::Field field(bool allow_default) {
    TypeExpr::Field f;
    f.loc = peek().loc;
    f.name = expect_name("a field name");
    expect(Tok::Colon, "after the field name");
    f.type = type();
    if (allow_default && accept(Tok::Eq)) f.default_value = header_expression();  // a constant expression
    // `was OLD` on the same line: a stored list's field renamed by an upgrade (docs/upgrades.md).
    if (at_was()) {
      Loc loc = advance().loc;
      f.was = expect_name("the field's former name after 'was'");
      if (!stored_list_) error_at(loc, "'was' names a field's former name, and only a stored list's fields have one");
    }
    return f;
  }

  // After '{': fields separated by ',' or new lines, then '}'.
  void field_list(std::vector<TypeExpr::Field>& out, bool allow_default) {
    while (!at(Tok::RBrace) && !at(Tok::End) && !panic_) {
      out.push_back(field(allow_default));
      if (!accept(Tok::Comma) && !accept(Tok::Semicolon) && !at(Tok::RBrace) && !peek().newline_before)
        error_here("expected ',' or '}' after a field, found " + found());
    }
    expect(Tok::RBrace, "to close the fields");
  }

  TypeExprPtr type() {
    std::optional<DepthGuard> guard;
    if (at(Tok::KwSeq) || at(Tok::KwList)) guard.emplace(*this, peek().loc);
    auto t = std::make_unique<TypeExpr>();
    t->loc = peek().loc;
    if (at(Tok::KwSeq)) {
      advance();
      t->kind = TypeExpr::Seq;
      t->element = type();
      return t;
    }
    if (at(Tok::KwList)) {
      advance();
      if (!at(Tok::KwBy)) {
        error_here("expected 'by' after 'list' in a type", "a sequence type is written 'seq T'");
        return t;
      }
      return keyed_type(advance().loc);
    }
    t->kind = TypeExpr::Named;
    t->name = expect_name("a type");
    // `outcome of T`: what calling an event that returns a T gives
    if (t->name == "outcome" && at(Tok::Ident) && peek().text == "of" && !peek().newline_before) {
      advance();
      t->element = type();
      return t;
    }
    // `stock.Row`: the row type of a stored list
    if (at(Tok::Dot) && peek(1).kind == Tok::Ident && peek(1).text == "Row" && !peek().newline_before) {
      advance();
      t->member = advance().text;
    }
    return t;
  }

  void function(Module& m, FuncKind kind) {
    FuncDecl f;
    f.kind = kind;
    f.loc = advance().loc;
    f.name = expect_name("a name");
    expect(Tok::LParen, "to start the parameters");
    while (!at(Tok::RParen) && !at(Tok::End) && !panic_) {
      Param p;
      p.loc = peek().loc;
      p.name = expect_name("a parameter name");
      expect(Tok::Colon, "after the parameter name (parameters need types)");
      p.type = type();
      f.params.push_back(std::move(p));
      if (!accept(Tok::Comma)) break;
    }
    expect(Tok::RParen, "to close the parameters");
    if (accept(Tok::Arrow)) f.result = type();
    if (f.kind == FuncKind::Function && f.name == "main") f.kind = FuncKind::Main;
    if (!panic_ && !at(Tok::LBrace)) error_here("expected '{' to start the body, found " + found());
    if (panic_) {
      // A header with a syntax error still declares the function (its body is skipped), so that
      // its calls report nothing more than the one error.
      f.body_has_errors = true;
      if (f.name.empty()) return;
      if (f.kind == FuncKind::Main) m.main_index = static_cast<int>(m.funcs.size());
      m.funcs.push_back(std::move(f));
      return;
    }
    size_t errors_before = diags_.count();
    f.body = block(/*nested=*/false);
    f.body_has_errors = diags_.count() > errors_before;
    unclosed_ = false;
    if (f.kind == FuncKind::Main) m.main_index = static_cast<int>(m.funcs.size());
    m.funcs.push_back(std::move(f));
  }

  // ---- statements ---------------------------------------------------------------------------
  static bool starts_statement(Tok k) {
    switch (k) {
      case Tok::KwLet: case Tok::KwVar: case Tok::KwIf: case Tok::KwWhile: case Tok::KwFor:
      case Tok::KwReturn: case Tok::KwBreak: case Tok::KwContinue: case Tok::KwFail: return true;
      default: return false;
    }
  }

  // At a token that starts a declaration and never a statement (`list by` is a type in a statement).
  bool starts_declaration() const {
    switch (peek().kind) {
      case Tok::KwFn: case Tok::KwEvent: case Tok::KwQuery: case Tok::KwType: case Tok::KwConst: return true;
      case Tok::KwList: return peek(1).kind != Tok::KwBy;
      default: return at_test() || at_enum() || at_migrate();
    }
  }

  // A `{ ... }` of statements; a function's own body is not a nesting level, blocks inside it are.
  std::vector<StmtPtr> block(bool nested = true) {
    std::optional<DepthGuard> guard;
    if (nested) guard.emplace(*this, peek().loc);
    std::vector<StmtPtr> out;
    Loc open = peek().loc;
    if (!at(Tok::LBrace)) {  // the statement's sync skips what follows, a '{ ... }' as one
      expect(Tok::LBrace, "to start a block");
      return out;
    }
    advance();
    while (!at(Tok::RBrace) && !at(Tok::End)) {
      if (peek().newline_before && starts_declaration()) {
        // A declaration at the start of a line: this block's '}' is missing. Reported once, at the
        // '{', and every open block ends here so that the declaration parses as one.
        diags_.error(open, std::string("this '{' is not closed before the ") + tok_name(peek().kind) + " on line " +
                               std::to_string(peek().loc.line),
                     "add '}' where the block ends");
        unclosed_ = true;
        panic_ = false;
        return out;
      }
      size_t before = pos_;
      StmtPtr s = statement();
      if (unclosed_) {
        if (s) out.push_back(std::move(s));
        return out;
      }
      if (panic_) sync_statement();
      if (s) out.push_back(std::move(s));
      if (pos_ == before) advance();
    }
    if (at(Tok::End) && !panic_) {
      diags_.error(open, "this '{' is not closed before the end of the file", "add '}' where the block ends");
      unclosed_ = true;
      return out;
    }
    expect(Tok::RBrace, "to close the block");
    return out;
  }

  StmtPtr statement() {
    Loc loc = peek().loc;
    StmtPtr s;
    switch (peek().kind) {
      case Tok::KwLet:
      case Tok::KwVar: s = let_statement(); break;
      case Tok::KwIf: s = if_statement(); break;
      case Tok::KwWhile: {
        advance();
        s = std::make_unique<Stmt>(StmtKind::While, loc);
        s->expr = condition();
        s->body = block();
        break;
      }
      case Tok::KwFor: s = for_statement(); break;
      case Tok::KwReturn: {
        advance();
        s = std::make_unique<Stmt>(StmtKind::Return, loc);
        if (!at(Tok::RBrace) && !at(Tok::Semicolon) && !at(Tok::End) && !peek().newline_before) s->expr = expression();
        break;
      }
      case Tok::KwBreak: advance(); s = std::make_unique<Stmt>(StmtKind::Break, loc); break;
      case Tok::KwContinue: advance(); s = std::make_unique<Stmt>(StmtKind::Continue, loc); break;
      case Tok::KwFail:
        advance();
        s = std::make_unique<Stmt>(StmtKind::Fail, loc);
        s->expr = expression();
        break;
      case Tok::LBrace:
        s = std::make_unique<Stmt>(StmtKind::Block, loc);
        s->body = block();
        break;
      case Tok::KwFn: case Tok::KwEvent: case Tok::KwQuery: case Tok::KwType: case Tok::KwList: case Tok::KwConst:
        if (peek().kind != Tok::KwList || peek(1).kind != Tok::KwBy) {
          error_here(std::string("a declaration (") + tok_name(peek().kind) + ") cannot appear inside a block",
                     "is a '}' missing above?");
          return nullptr;
        }
        [[fallthrough]];
      default: s = expression_statement(); break;
    }
    bool bad = panic_;
    if (!panic_ && !at(Tok::RBrace) && !at(Tok::End) && !accept(Tok::Semicolon) && !peek().newline_before) {
      error_here("expected a new line or ';' after the statement, found " + found());
      bad = true;
      // `let y = x + 1 return y`: the keyword starts the next statement; parse it as one rather
      // than skip it, so that later errors (a missing return, an unknown name) stay true.
      if (starts_statement(peek().kind)) panic_ = false;
    }
    // A `let` with a syntax error still declares its name, with no value: the checker gives it the
    // error type, so that its uses report nothing more (`let xs = seq Point` mistyped).
    if (bad && s && s->kind == StmtKind::Let) s->expr = nullptr;
    // An expression or assignment with a syntax error is left out (not "value is not used").
    if (bad && s && (s->kind == StmtKind::ExprStmt || s->kind == StmtKind::Assign)) return nullptr;
    return s;
  }

  StmtPtr let_statement() {
    auto s = std::make_unique<Stmt>(StmtKind::Let, peek().loc);
    s->is_var = advance().kind == Tok::KwVar;
    s->loc = peek().loc;
    s->name = expect_name("a name for the new variable");
    if (accept(Tok::Colon)) s->declared = type();
    expect(Tok::Eq, "(a variable needs a value)");
    if (panic_) return s;
    s->expr = expression();
    if (at(Tok::KwElse)) {
      advance();
      if (StmtPtr e = statement()) s->body.push_back(std::move(e));
    }
    return s;
  }

  StmtPtr if_statement() {
    auto s = std::make_unique<Stmt>(StmtKind::If, advance().loc);
    s->expr = condition();
    s->body = block();
    if (accept(Tok::KwElse)) {
      if (at(Tok::KwIf)) {
        DepthGuard guard(*this, peek().loc);  // each `else if` nests one level deeper
        s->else_body.push_back(if_statement());
      } else {
        s->else_body = block();
      }
    }
    return s;
  }

  StmtPtr for_statement() {
    auto s = std::make_unique<Stmt>(StmtKind::For, advance().loc);
    s->loc = peek().loc;
    s->name = expect_name("a loop variable after 'for'");
    if (accept(Tok::Comma)) s->name2 = expect_name("a second loop variable");
    expect(Tok::KwIn, "after the loop variable");
    s->expr = header_expression();
    if (accept(Tok::DotDot)) s->range_end = header_expression();
    s->body = block();
    return s;
  }

  // The condition of an `if` or `while`: `if x = 1` is reported once, as the `==` it almost
  // certainly means, and parsed as that comparison so that nothing else is reported.
  ExprPtr condition() {
    bool saved = no_item_literal_;
    no_item_literal_ = true;
    ExprPtr e = equals_typo(expression());
    no_item_literal_ = saved;
    return e;
  }

  // After a value where '=' cannot follow (a condition, a call's argument, a parenthesis).
  ExprPtr equals_typo(ExprPtr left) {
    if (!at(Tok::Eq) || panic_) return left;
    Loc loc = advance().loc;
    diags_.error(loc, "'=' assigns a value and cannot compare", "did you mean '=='?");
    ExprPtr e = binary(std::move(left), loc, Tok::EqEq, bit_or());
    while (at(Tok::KwAnd)) {
      Loc l = advance().loc;
      e = binary(std::move(e), l, Tok::KwAnd, not_expr());
    }
    while (at(Tok::KwOr)) {
      Loc l = advance().loc;
      e = binary(std::move(e), l, Tok::KwOr, and_expr());
    }
    return e;
  }

  ExprPtr header_expression() {
    bool saved = no_item_literal_;
    no_item_literal_ = true;
    ExprPtr e = expression();
    no_item_literal_ = saved;
    return e;
  }

  StmtPtr expression_statement() {
    Loc loc = peek().loc;
    size_t start = pos_;
    ExprPtr e = expression();
    Tok k = peek().kind;
    if (in_test_ && !panic_ && e->kind == ExprKind::Call && (e->text == "assert" || e->text == "assert_eq") &&
        start + 1 < pos_ && toks_[start + 1].kind == Tok::LParen && toks_[pos_ - 1].kind == Tok::RParen)
      return assertion(std::move(e), toks_[start + 1].loc.offset + 1, toks_[pos_ - 1].loc.offset);
    if (k == Tok::Eq || k == Tok::PlusEq || k == Tok::MinusEq || k == Tok::StarEq || k == Tok::SlashEq ||
        k == Tok::PercentEq) {
      auto s = std::make_unique<Stmt>(StmtKind::Assign, advance().loc);
      s->op = static_cast<int>(k);
      s->target = std::move(e);
      s->expr = expression();
      return s;
    }
    auto s = std::make_unique<Stmt>(StmtKind::ExprStmt, loc);
    s->expr = std::move(e);
    return s;
  }

  // ---- assertions (test blocks only) --------------------------------------------------------
  // `assert(c)` is `if c {} else { fail "assert(c)" }`; `assert_eq(a, b)` evaluates each
  // side once into a local (a literal stays a literal, so that `assert_eq(total, 100)` compares a
  // num with 100.0) and fails with both values printed. The fail is located at the call, so the
  // runtime error names the assertion's line. The locals' names hold a '.', which no name can.
  StmtPtr assertion(ExprPtr call, uint32_t args_begin, uint32_t args_end) {
    Loc loc = call->loc;
    std::string written = call->text + "(" + src_.text().substr(args_begin, args_end - args_begin) + ")";
    size_t want = call->text == "assert" ? 1 : 2;
    if (call->args.size() != want) {
      diags_.error(loc, call->text + " takes " + (want == 1 ? "one argument, a bool" : "two arguments, the values to compare") +
                            ", not " + std::to_string(call->args.size()),
                   want == 1 ? "assert(balance > 0)" : "assert_eq(balance(1), 100)");
      return nullptr;
    }
    auto text = [&](std::string t) {
      auto e = std::make_unique<Expr>(ExprKind::Text, loc);
      e->text = std::move(t);
      return e;
    };
    auto fail = std::make_unique<Stmt>(StmtKind::Fail, loc);
    if (want == 1) {
      fail->expr = text(written);
      auto s = std::make_unique<Stmt>(StmtKind::If, loc);
      s->expr = std::move(call->args[0]);
      s->else_body.push_back(std::move(fail));
      return s;
    }
    auto block = std::make_unique<Stmt>(StmtKind::Block, loc);
    ExprPtr side[2];
    for (int i = 0; i < 2; ++i) {
      ExprPtr& arg = call->args[i];
      if (arg->kind == ExprKind::Int || arg->kind == ExprKind::Num || arg->kind == ExprKind::Bool || arg->kind == ExprKind::Text) {
        side[i] = std::move(arg);
        continue;
      }
      auto let = std::make_unique<Stmt>(StmtKind::Let, arg->loc);
      let->name = i == 0 ? "assert_eq.left" : "assert_eq.right";
      side[i] = std::make_unique<Expr>(ExprKind::Name, arg->loc);
      side[i]->text = let->name;
      let->expr = std::move(arg);
      block->body.push_back(std::move(let));
    }
    auto copy = [](const Expr& e) {
      auto c = std::make_unique<Expr>(e.kind, e.loc);
      c->int_value = e.int_value;
      c->num_value = e.num_value;
      c->text = e.text;
      return c;
    };
    auto message = std::make_unique<Expr>(ExprKind::Interp, loc);
    message->args.push_back(text(written + ": left is "));
    message->args.push_back(copy(*side[0]));
    message->args.push_back(text(", right is "));
    message->args.push_back(copy(*side[1]));
    fail->expr = std::move(message);
    // `left != right`; the checker compares items and lists by their printed form (Expr::text
    // "assert_eq" marks the comparison), since `!=` takes scalars only.
    auto differ = std::make_unique<Expr>(ExprKind::Binary, loc);
    differ->op = static_cast<int>(Tok::NotEq);
    differ->text = "assert_eq";
    differ->args.push_back(std::move(side[0]));
    differ->args.push_back(std::move(side[1]));
    auto s = std::make_unique<Stmt>(StmtKind::If, loc);
    s->expr = std::move(differ);
    s->body.push_back(std::move(fail));
    block->body.push_back(std::move(s));
    return block;
  }

  // ---- expressions --------------------------------------------------------------------------
  ExprPtr expression() {
    return or_expr();
  }

  // Operator chains and postfix chains are built in loops, not by recursion, so their height is
  // checked here: a tree taller than kMaxHeight would overflow the stack of every later pass.
  void check_height(Expr& e) {
    for (const ExprPtr& a : e.args)
      if (a && a->depth + 1 > e.depth) e.depth = a->depth + 1;
    if (e.depth > kMaxHeight) {
      panic_ = false;
      error_at(e.loc, "expression is nested too deeply (more than " + std::to_string(kMaxHeight) + " levels)",
               "split it with 'let'");
      throw CompileAbort{};
    }
  }

  ExprPtr binary(ExprPtr left, Loc loc, Tok op, ExprPtr right) {
    auto e = std::make_unique<Expr>(ExprKind::Binary, loc);
    e->op = static_cast<int>(op);
    e->args.push_back(std::move(left));
    e->args.push_back(std::move(right));
    check_height(*e);
    return e;
  }

  ExprPtr or_expr() {
    ExprPtr e = and_expr();
    while (at(Tok::KwOr)) {
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, Tok::KwOr, and_expr());
    }
    return e;
  }

  ExprPtr and_expr() {
    ExprPtr e = not_expr();
    while (at(Tok::KwAnd)) {
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, Tok::KwAnd, not_expr());
    }
    return e;
  }

  ExprPtr not_expr() {
    if (at(Tok::KwNot)) {
      DepthGuard guard(*this, peek().loc);
      auto e = std::make_unique<Expr>(ExprKind::Unary, advance().loc);
      e->op = static_cast<int>(Tok::KwNot);
      e->args.push_back(not_expr());
      return e;
    }
    return comparison();
  }

  static bool is_comparison(Tok k) {
    return k == Tok::EqEq || k == Tok::NotEq || k == Tok::Lt || k == Tok::LtEq || k == Tok::Gt || k == Tok::GtEq;
  }

  ExprPtr comparison() {
    ExprPtr e = bit_or();
    if (is_comparison(peek().kind)) {
      Tok op = peek().kind;
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, op, bit_or());
      if (is_comparison(peek().kind)) {
        // report once, then read the rest of the chain so that nothing else is reported
        if (!panic_) diags_.error(peek().loc, "comparisons cannot be chained", "write 'a < b and b < c'");
        while (is_comparison(peek().kind)) {
          advance();
          bit_or();
        }
      }
    }
    return e;
  }

  // Bitwise operators on ints, between the comparisons and '+' as in Python (so that
  // `x & 1 == 0` means `(x & 1) == 0`): '|' below '^' below '&' below the shifts.
  ExprPtr bit_or() {
    ExprPtr e = bit_xor();
    while (at(Tok::Pipe)) {
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, Tok::Pipe, bit_xor());
    }
    return e;
  }

  ExprPtr bit_xor() {
    ExprPtr e = bit_and();
    while (at(Tok::Caret)) {
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, Tok::Caret, bit_and());
    }
    return e;
  }

  ExprPtr bit_and() {
    ExprPtr e = shift();
    while (at(Tok::Amp)) {
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, Tok::Amp, shift());
    }
    return e;
  }

  ExprPtr shift() {
    ExprPtr e = additive();
    while (at(Tok::Shl) || at(Tok::Shr)) {
      Tok op = peek().kind;
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, op, additive());
    }
    return e;
  }

  ExprPtr additive() {
    ExprPtr e = multiplicative();
    while ((at(Tok::Plus) || at(Tok::Minus))) {
      Tok op = peek().kind;
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, op, multiplicative());
    }
    return e;
  }

  ExprPtr multiplicative() {
    ExprPtr e = unary();
    while (at(Tok::Star) || at(Tok::Slash) || at(Tok::Percent)) {
      Tok op = peek().kind;
      Loc loc = advance().loc;
      e = binary(std::move(e), loc, op, unary());
    }
    return e;
  }

  ExprPtr unary() {
    if (at(Tok::Minus)) {
      DepthGuard guard(*this, peek().loc);
      Loc loc = advance().loc;
      // Fold '-literal' so that the most negative integer can be written (and defaults such as
      // `= -1.5` stay literals).
      if (at(Tok::Int) && !is_postfix_next(1)) {
        const Token& t = advance();
        auto e = std::make_unique<Expr>(ExprKind::Int, loc);
        e->int_value = static_cast<int64_t>(0ull - static_cast<uint64_t>(t.int_value));
        return e;
      }
      if (at(Tok::Num) && !is_postfix_next(1)) {
        auto e = std::make_unique<Expr>(ExprKind::Num, loc);
        e->num_value = -advance().num_value;
        return e;
      }
      auto e = std::make_unique<Expr>(ExprKind::Unary, loc);
      e->op = static_cast<int>(Tok::Minus);
      e->args.push_back(unary());
      return e;
    }
    if (at(Tok::Tilde)) {  // bitwise not, at the level of negation
      DepthGuard guard(*this, peek().loc);
      auto e = std::make_unique<Expr>(ExprKind::Unary, advance().loc);
      e->op = static_cast<int>(Tok::Tilde);
      e->args.push_back(unary());
      return e;
    }
    if (at(Tok::KwNot)) return not_expr();
    // `try q(args)`: main calls a query and gets its outcome (int_value = 1 on the Call). `try` is
    // not a keyword: only a name right before a call makes it one, which is never valid otherwise.
    if (at(Tok::Ident) && peek().text == "try" && peek(1).kind == Tok::Ident && !peek(1).newline_before &&
        peek(2).kind == Tok::LParen && !peek(2).newline_before) {
      advance();
      ExprPtr call = primary();
      if (call && call->kind == ExprKind::Call) call->int_value = 1;
      return postfix(std::move(call));
    }
    return postfix(primary());
  }

  static bool leaves(Tok k) { return k == Tok::KwFail || k == Tok::KwReturn || k == Tok::KwBreak || k == Tok::KwContinue; }

  bool is_postfix_next(size_t ahead) const {
    Tok k = peek(ahead).kind;
    return k == Tok::Dot || k == Tok::LBracket;
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (at(Tok::Dot)) {
        Loc loc = advance().loc;
        std::string name = expect_name("a field or method name after '.'");
        if (at(Tok::LParen) && !peek().newline_before) {
          auto m = std::make_unique<Expr>(ExprKind::Method, loc);
          m->text = std::move(name);
          m->args.push_back(std::move(e));
          call_arguments(m->args);
          // `m.get(k...) else DEFAULT`: the default goes last, int_value = 1 says so. An `else`
          // followed by a statement that leaves stays a `let ... else` (the checker explains).
          if (m->text == "get" && at(Tok::KwElse) && !leaves(peek(1).kind)) {
            advance();
            DepthGuard guard(*this, peek().loc);
            m->args.push_back(unary());
            m->int_value = 1;
          }
          e = std::move(m);
        } else {
          auto f = std::make_unique<Expr>(ExprKind::Field, loc);
          f->text = std::move(name);
          f->args.push_back(std::move(e));
          e = std::move(f);
        }
      } else if (at(Tok::LBracket) && !peek().newline_before) {
        DepthGuard guard(*this, peek().loc);
        auto ix = std::make_unique<Expr>(ExprKind::Index, advance().loc);
        ix->args.push_back(std::move(e));
        do {
          ix->args.push_back(expression());
        } while (accept(Tok::Comma) && !at(Tok::RBracket));
        expect(Tok::RBracket, "to close the index");
        e = std::move(ix);
      } else {
        return e;
      }
      check_height(*e);
      if (panic_) return e;
    }
  }

  void call_arguments(std::vector<ExprPtr>& out) {
    DepthGuard guard(*this, peek().loc);
    expect(Tok::LParen, "to start the arguments");
    bool saved = no_item_literal_;
    no_item_literal_ = false;
    while (!at(Tok::RParen) && !at(Tok::End) && !panic_) {
      out.push_back(equals_typo(expression()));
      // `score desc`: a sort key's direction (the checker allows it only in sort_by)
      if (at(Tok::Ident) && (peek().text == "desc" || peek().text == "asc") && !peek().newline_before && out.back())
        out.back()->order = advance().text == "desc" ? Expr::Desc : Expr::Asc;
      if (!accept(Tok::Comma)) break;
    }
    no_item_literal_ = saved;
    expect(Tok::RParen, "to close the arguments");
  }

  ExprPtr primary() {
    const Token& t = peek();
    Loc loc = t.loc;
    switch (t.kind) {
      case Tok::Int: {
        auto e = std::make_unique<Expr>(ExprKind::Int, loc);
        e->int_value = advance().int_value;
        if (static_cast<uint64_t>(e->int_value) == (uint64_t{1} << 63)) {
          diags_.error(loc, "integer 9223372036854775808 does not fit in 64 bits");
        }
        return e;
      }
      case Tok::Num: {
        auto e = std::make_unique<Expr>(ExprKind::Num, loc);
        e->num_value = advance().num_value;
        return e;
      }
      case Tok::KwTrue:
      case Tok::KwFalse: {
        auto e = std::make_unique<Expr>(ExprKind::Bool, loc);
        e->int_value = advance().kind == Tok::KwTrue;
        return e;
      }
      case Tok::Str: return text_literal(advance());
      case Tok::Ident: {
        std::string name = advance().text;
        if (in_migrate_ && name == "old" && at(Tok::Dot) && peek(1).kind == Tok::Ident && !peek().newline_before) {
          advance();
          name = "old." + advance().text;  // one name: the checker finds it among the old lists
        }
        if (at(Tok::LParen) && !peek().newline_before) {
          auto e = std::make_unique<Expr>(ExprKind::Call, loc);
          e->text = std::move(name);
          call_arguments(e->args);
          return e;
        }
        if (at(Tok::LBrace) && !no_item_literal_ && !peek().newline_before) {
          auto e = item_literal(loc);
          e->text = std::move(name);
          return e;
        }
        auto e = std::make_unique<Expr>(ExprKind::Name, loc);
        e->text = std::move(name);
        return e;
      }
      case Tok::LParen: {
        DepthGuard guard(*this, loc);
        advance();
        bool saved = no_item_literal_;
        no_item_literal_ = false;
        ExprPtr e = equals_typo(expression());
        no_item_literal_ = saved;
        expect(Tok::RParen, "to close the parenthesis");
        return e;
      }
      case Tok::LBracket: {
        DepthGuard guard(*this, loc);
        advance();
        auto e = std::make_unique<Expr>(ExprKind::SeqLit, loc);
        bool saved = no_item_literal_;
        no_item_literal_ = false;
        while (!at(Tok::RBracket) && !at(Tok::End) && !panic_) {
          e->args.push_back(expression());
          if (!accept(Tok::Comma)) break;
        }
        no_item_literal_ = saved;
        expect(Tok::RBracket, "to close the list");
        return e;
      }
      case Tok::LBrace:
        if (!no_item_literal_) return item_literal(loc);
        break;
      case Tok::KwSeq:
      case Tok::KwList: {
        auto e = std::make_unique<Expr>(ExprKind::NewList, loc);
        e->type_expr = type();
        return e;
      }
      case Tok::KwIf: return conditional();
      default: break;
    }
    if (t.kind == Tok::End) error_here("expected an expression, found the end of the file");
    else error_here("expected an expression, found " + found());
    return broken(loc);
  }

  // At 'if' where a value is expected: `if COND { EXPR } else { EXPR }`, or `else if ...`. Each
  // branch is one expression in braces; the else is required. Each brace pair is a nesting level.
  ExprPtr conditional() {
    DepthGuard guard(*this, peek().loc);
    auto e = std::make_unique<Expr>(ExprKind::Cond, advance().loc);
    e->args.push_back(condition());
    e->args.push_back(branch("after the 'if' condition"));
    if (!at(Tok::KwElse)) {
      error_at(e->loc, "an 'if' used as a value needs an 'else' branch", "write 'if c { a } else { b }'");
      e->args.push_back(std::make_unique<Expr>(ExprKind::Int, e->loc));
      return e;
    }
    advance();
    if (at(Tok::KwIf)) e->args.push_back(conditional());
    else e->args.push_back(branch("after 'else'"));
    check_height(*e);
    return e;
  }

  ExprPtr branch(const char* where) {
    if (!at(Tok::LBrace)) {
      error_here(std::string("expected '{' ") + where + ", found " + found());
      return std::make_unique<Expr>(ExprKind::Int, peek().loc);
    }
    DepthGuard guard(*this, peek().loc);
    advance();
    bool saved = no_item_literal_;
    no_item_literal_ = false;
    ExprPtr v = expression();
    no_item_literal_ = saved;
    if (at(Tok::RBrace)) {
      advance();
      return v;
    }
    if (!at(Tok::End))
      error_here("expected '}' after the value of an 'if' branch, found " + found(),
                 "each branch of an 'if' used as a value is one expression");
    else
      error_here("expected '}' to close the branch, found the end of the file");
    // Skip to the branch's own '}' so that the rest of the 'if' (and the block around it) parses.
    int braces = 0;
    while (!at(Tok::End)) {
      if (at(Tok::LBrace)) ++braces;
      if (at(Tok::RBrace) && braces-- == 0) {
        advance();
        panic_ = false;
        break;
      }
      advance();
    }
    return v;
  }

  // What stands for an expression with a syntax error: a name without a name, which the checker
  // types as an error and never reports, so one typo gives one error.
  static ExprPtr broken(Loc loc) { return std::make_unique<Expr>(ExprKind::Name, loc); }

  // At '{': `{ name: expr, ... }`.
  ExprPtr item_literal(Loc loc) {
    DepthGuard guard(*this, peek().loc);
    auto e = std::make_unique<Expr>(ExprKind::ItemLit, loc);
    expect(Tok::LBrace, "to start the item");
    bool saved = no_item_literal_;
    no_item_literal_ = false;
    while (!at(Tok::RBrace) && !at(Tok::End) && !panic_) {
      e->field_locs.push_back(peek().loc);
      e->field_names.push_back(expect_name("a field name"));
      expect(Tok::Colon, "after the field name");
      e->args.push_back(expression());
      if (!accept(Tok::Comma) && !at(Tok::RBrace) && !peek().newline_before)
        error_here("expected ',' or '}' in the item, found " + found());
    }
    no_item_literal_ = saved;
    if (panic_) {
      // Skip to the item's own '}' (not past a declaration), so that the block around it, whose
      // '}' would otherwise end it here, goes on after the item.
      int braces = 0;
      while (!at(Tok::End) && !(peek().newline_before && starts_declaration())) {
        if (at(Tok::LBrace)) ++braces;
        if (at(Tok::RBrace) && braces-- == 0) {
          advance();
          break;
        }
        advance();
      }
      return broken(loc);
    }
    expect(Tok::RBrace, "to close the item");
    if (panic_) return broken(loc);  // not "field 'x' is missing" for the fields after the error
    return e;
  }

  // A text literal: escapes, and {expression} parts parsed by a nested parser over that range.
  ExprPtr text_literal(const Token& t) {
    const std::string& raw = t.text;
    uint32_t base = t.loc.offset + 1;  // offset of raw[0] in the source
    auto interp = std::make_unique<Expr>(ExprKind::Interp, t.loc);
    std::string pending;
    auto flush = [&] {
      auto lit = std::make_unique<Expr>(ExprKind::Text, t.loc);
      lit->text = std::move(pending);
      pending.clear();
      interp->args.push_back(std::move(lit));
    };
    for (size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (c == '\\') {
        if (!escape(raw, i, base, pending)) return interp;
        continue;
      }
      // a '}' outside {...} is an ordinary character; only '{' needs escaping
      if (c != '{') {
        pending += c;
        continue;
      }
      size_t start = i + 1, j = start;
      int depth = 1;
      bool in_string = false;
      for (; j < raw.size(); ++j) {
        if (raw[j] == '\\') { ++j; continue; }
        if (raw[j] == '"') in_string = !in_string;
        if (in_string) continue;
        if (raw[j] == '{') ++depth;
        if (raw[j] == '}' && --depth == 0) break;
      }
      if (j >= raw.size()) {
        diags_.error(src_.loc_at(base + static_cast<uint32_t>(i)), "'{' in text is not closed", "write '\\{' for a brace");
        return interp;
      }
      if (!pending.empty() || interp->args.empty()) flush();
      auto tokens = lex(src_, diags_, base + static_cast<uint32_t>(start), base + static_cast<uint32_t>(j));
      if (tokens.size() == 1) {
        diags_.error(src_.loc_at(base + static_cast<uint32_t>(i)), "empty '{}' in text", "write '\\{\\}' for braces");
      } else {
        DepthGuard guard(*this, src_.loc_at(base + static_cast<uint32_t>(i)));
        Parser sub(src_, diags_, std::move(tokens));
        sub.depth_ = depth_;
        sub.in_migrate_ = in_migrate_;  // `old.NAME` reads the same inside an interpolation
        interp->args.push_back(sub.lone_expression());
      }
      i = j;
    }
    if (interp->args.size() <= 1 && interp->args.empty()) {
      auto lit = std::make_unique<Expr>(ExprKind::Text, t.loc);
      lit->text = std::move(pending);
      return lit;
    }
    if (!pending.empty()) flush();
    if (interp->args.size() == 1 && interp->args[0]->kind == ExprKind::Text) return std::move(interp->args[0]);
    return interp;
  }

  bool escape(const std::string& raw, size_t& i, uint32_t base, std::string& out) {
    Loc loc = src_.loc_at(base + static_cast<uint32_t>(i));
    if (i + 1 >= raw.size()) {
      diags_.error(loc, "a text cannot end with a lone '\\'");
      return false;
    }
    char e = raw[++i];
    switch (e) {
      case 'n': out += '\n'; return true;
      case 't': out += '\t'; return true;
      case 'r': out += '\r'; return true;
      case '0': out += '\0'; return true;
      case '\\': case '"': case '{': case '}': out += e; return true;
      case 'u': {
        size_t close = raw.find('}', i);
        if (i + 1 >= raw.size() || raw[i + 1] != '{' || close == std::string::npos || close - i - 2 > 6 || close == i + 2) {
          diags_.error(loc, "expected '\\u{HEX}' with 1 to 6 hex digits");
          return true;
        }
        uint32_t cp = 0;
        for (size_t k = i + 2; k < close; ++k) {
          char h = raw[k];
          int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
          if (d < 0) {
            diags_.error(loc, "'\\u{...}' needs hexadecimal digits");
            i = close;
            return true;
          }
          cp = cp * 16 + d;
        }
        i = close;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
          diags_.error(loc, "'\\u{...}' is not a Unicode scalar value");
          return true;
        }
        append_utf8(out, cp);
        return true;
      }
      default:
        diags_.error(loc, std::string("unknown escape '\\") + e + "'", "known escapes: \\n \\t \\r \\0 \\\\ \\\" \\{ \\} \\u{HEX}");
        return true;
    }
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
};

}  // namespace

Module parse_module(const Source& source, Diagnostics& diags) {
  Parser p(source, diags, lex(source, diags));
  try {
    return p.module();
  } catch (CompileAbort&) {
    return Module{};
  }
}

}  // namespace pure
