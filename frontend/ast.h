// frontend/ast.h — the syntax tree the parser builds and the checker annotates with types.
// Depends on frontend/source.h and frontend/types.h.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "frontend/source.h"
#include "frontend/types.h"

namespace pure {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

// A type as written: `int`, `Point`, `seq T`, `list by (a: int, b: text) { f: num = 0 }`.
struct TypeExpr {
  enum Kind { Named, Seq, Keyed } kind = Named;
  Loc loc;
  std::string name;                    // Named
  std::string member;                  // Named: "Row" in `stock.Row`, a stored list's row type
  std::unique_ptr<TypeExpr> element;   // Seq
  struct Field {
    Loc loc;
    std::string name;
    std::unique_ptr<TypeExpr> type;
    ExprPtr default_value;  // optional `= literal`
    std::string was;        // a stored list's field: `name: T was OLD`, its name in the version before
  };
  std::vector<Field> keys;    // Keyed
  std::vector<Field> fields;  // Keyed, and item type declarations
};
using TypeExprPtr = std::unique_ptr<TypeExpr>;

enum class ExprKind : uint8_t {
  Int, Num, Bool, Text,   // literals
  Interp,                 // "a {b} c": args are the parts, each Text or an expression
  Name,                   // a local, parameter, stored list or function
  Unary,                  // op args[0]
  Binary,                 // args[0] op args[1]
  Call,                   // name(args)
  Method,                 // args[0].name(args[1..])
  Field,                  // args[0].name
  Index,                  // args[0][args[1..]]
  ItemLit,                // Name { f: e, ... } or { f: e, ... }: field_names + args
  SeqLit,                 // [a, b, c]
  NewList,                // seq T / list by ... used as a value: an empty event list
  Cond,                   // if args[0] { args[1] } else { args[2] }: one of two values
};

// What a Name refers to, filled in by the checker.
enum class NameKind : uint8_t { Unresolved, Local, StoredList, Function };

struct Expr {
  ExprKind kind;
  Loc loc;
  int64_t int_value = 0;
  double num_value = 0;
  std::string text;                     // Name / Call / Method / Field name, Text literal bytes, op
  int op = 0;                           // Tok of Unary/Binary
  std::vector<ExprPtr> args;
  std::vector<std::string> field_names; // ItemLit (the checker clears them once it has put args in field order)
  std::vector<Loc> field_locs;          // ItemLit: where each field name is written, in the source's order (for tools)
  TypeExprPtr type_expr;                // NewList, or ItemLit with a type name (name in text)
  enum Order : uint8_t { Unordered, Asc, Desc } order = Unordered;  // `field desc`: a sort key (an argument)

  // Filled by the checker.
  const Type* type = nullptr;
  NameKind name_kind = NameKind::Unresolved;
  int ref = -1;            // local slot id, stored list index, or function index
  int builtin = -1;        // builtin id for calls/methods that are builtins
  uint32_t depth = 1;      // height of this subtree; the parser bounds it (kMaxHeight)

  Expr(ExprKind k, Loc l) : kind(k), loc(l) {}
};

enum class StmtKind : uint8_t {
  Let,        // let/var name [: T] = value [else stmt]
  Assign,     // target op= value (op is Eq or a compound)
  ExprStmt,
  If,         // cond, then, else (else may be an If)
  While,
  For,        // for name [, name2] in iterable { body }
  Return,
  Break,
  Continue,
  Fail,
  Block,
};

struct Stmt {
  StmtKind kind;
  Loc loc;
  std::string name;        // Let / For variable
  std::string name2;       // For: second variable (`for i, x in xs`)
  bool is_var = false;     // Let: var (mutable)
  int op = 0;              // Assign: Tok
  TypeExprPtr declared;    // Let: optional annotation
  ExprPtr expr;            // Let value, Assign value, condition, iterable, return/fail value
  ExprPtr target;          // Assign target
  ExprPtr range_end;       // For over a range a .. b: expr = a, range_end = b
  std::vector<StmtPtr> body;      // Block, If-then, While, For, Let-else (one statement)
  std::vector<StmtPtr> else_body; // If-else

  // Filled by the checker.
  int local = -1;          // Let / For: the local's id
  int local2 = -1;         // For: second variable
  const Type* iter_type = nullptr;  // For: the iterable's type

  Stmt(StmtKind k, Loc l) : kind(k), loc(l) {}
};

enum class FuncKind : uint8_t { Function, Event, Query, Main };

struct Param {
  Loc loc;
  std::string name;
  TypeExprPtr type;
};

// Where a local that cannot be assigned came from: the checker's message and hint name it.
enum class LocalOrigin : uint8_t { Let, Parameter, RangeLoop, SeqLoop, KeyedLoop };

struct LocalInfo {
  std::string name;
  const Type* type = nullptr;
  bool is_var = false;
  Loc loc;
  LocalOrigin origin = LocalOrigin::Let;
};

struct FuncDecl {
  FuncKind kind = FuncKind::Function;
  Loc loc;
  std::string name;
  std::vector<Param> params;
  TypeExprPtr result;  // null: no value
  std::vector<StmtPtr> body;
  bool body_has_errors = false;   // the parser skipped part of the body after a syntax error

  // Filled by the checker.
  const Type* result_type = nullptr;
  std::vector<LocalInfo> locals;  // params first, then every let/for variable
  bool writes_stored = false;     // directly writes a stored list
  bool duplicate = false;         // a second declaration of the same name (not checked further)
  bool reads_input = false;
};

struct ListDecl {  // a stored list
  Loc loc;
  std::string name;
  std::string was;   // `list NAME was OLD by ...`: its name in the version before (docs/upgrades.md)
  TypeExprPtr type;  // Seq or Keyed
  const Type* resolved = nullptr;
};

struct ItemDecl {  // type Name { fields }, type Name = T, or enum Name { a, b, c }
  Loc loc;
  std::string name;
  TypeExprPtr type;       // Keyed with no keys for an item; or any type for an alias; null for an enum
  bool is_alias = false;
  bool is_enum = false;
  std::vector<std::string> members;  // an enum's members, in order (a value is the member's index)
  std::vector<Loc> member_locs;
  bool has_errors = false;  // a syntax error inside it: the checker gives its name the error type
  const Type* resolved = nullptr;
};

struct ConstDecl {  // const NAME = expr: a scalar computed at compile time
  Loc loc;
  std::string name;
  ExprPtr value;

  // Filled by the checker.
  enum State : uint8_t { Unvisited, Visiting, Done } state = Unvisited;
  const Type* type = nullptr;  // int, num, bool or text; the error type if the value is not constant
  int64_t int_value = 0;       // int and bool
  double num_value = 0;
  std::string text;
};

// test "name" { ... }: run only by `pure-run --test` (docs/tooling.md), never by plain pure-run or
// pure-serve, and not part of the compiled module otherwise. Inside its body, `assert(cond)` and
// `assert_eq(a, b)` are statements the parser spells out as an `if` and a `fail`.
struct TestDecl {
  Loc loc;
  std::string name;
  FuncDecl func;  // the body as a `main` with no parameters, named `test "name"` for stack traces
};

// use "path/lib.pure" at module level (docs/tooling.md, "Imports"): resolved before checking by
// resolve_imports (frontend.h), which appends the imported files' text; the checker ignores it.
struct UseDecl {
  Loc loc;           // the `use` word
  std::string path;  // as written, relative to the importing file
};

struct Module {
  std::vector<UseDecl> uses;
  std::vector<ConstDecl> consts;
  std::vector<ItemDecl> types;
  std::vector<ListDecl> lists;
  std::vector<FuncDecl> funcs;
  std::vector<std::string> unparsed_funcs;  // functions whose header did not parse (not in funcs)
  int main_index = -1;
  std::vector<TestDecl> tests;  // in the order written; compile_frontend checks one of them at most
  // migrate { ... } (docs/upgrades.md, "Migrations"): an event-like body, checked and compiled only
  // by compile_frontend given the old version's lists (then it is the last of funcs); else null
  // after parsing it (its syntax errors reported) and never run.
  std::unique_ptr<FuncDecl> migrate;
  bool has_migrate = false;  // the source declares a migrate block (set by the parser, kept by compile_frontend)
  // What a checked migrate block reads of the old version (set by the checker, sorted, no
  // duplicates): "L" for each old list old.L it names, "L.F" for each field F of old.L's rows it
  // reads by name. An upgrade does not count what the block reads as lost (docs/upgrades.md).
  std::vector<std::string> migrate_reads;
};

}  // namespace pure
