// frontend/checker_internal.h — private to frontend/: the Checker class that resolves names and
// checks types, and the helpers its files share. Its member functions are defined by concern in
// checker.cpp (declarations, functions and statements, check_module), checker_consts.cpp
// (evaluation of constants), checker_exprs.cpp (expressions) and checker_builtins.cpp (calls: the
// arguments of a function call and the type rules of the standard functions and methods).
// Depends on base/limits.h and frontend/ast.h, builtins.h, checker.h, diagnostic.h, token.h.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/limits.h"

#include "frontend/ast.h"
#include "frontend/builtins.h"
#include "frontend/checker.h"
#include "frontend/diagnostic.h"
#include "frontend/token.h"

namespace pure::checker {

inline std::string suggest(const std::string& name, const std::vector<std::string>& candidates) {
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
inline std::string a_type(const Type* t) {
  std::string n = type_name(t);
  bool vowel = !n.empty() && std::string("aeiouAEIOU").find(n[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + n;
}

inline bool is_int(const Type* t) { return t->kind == TypeKind::Int && !t->is_enum(); }  // an enum is not arithmetic
inline bool is_num(const Type* t) { return t->kind == TypeKind::Num; }
inline bool is_error(const Type* t) { return t->kind == TypeKind::Error; }
inline bool is_numeric(const Type* t) { return is_int(t) || is_num(t); }

constexpr Builtin kFirstTextMethod = first_builtin_of(BuiltinKind::TextMethod);
constexpr Builtin kFirstListMethod = first_builtin_of(BuiltinKind::ListMethod);

inline int find_builtin(const std::string& name, Builtin from, Builtin to) {
  for (int i = static_cast<int>(from); i < static_cast<int>(to); ++i)
    if (name == builtin_name(static_cast<Builtin>(i))) return i;
  return -1;
}

class Checker {
 public:
  Checker(Module& m, TypeTable& tt, Diagnostics& d) : m_(m), tt_(tt), d_(d) {}

  void run() {
    declare_enums();  // first: a constant may be an enum's member
    declare_consts();
    declare_types();
    declare_lists();
    declare_functions();
    check_const_names();
    for (FuncDecl& f : m_.funcs)
      if (!f.duplicate) check_function(f);
    check_event_cycles();
    std::sort(m_.migrate_reads.begin(), m_.migrate_reads.end());
    m_.migrate_reads.erase(std::unique(m_.migrate_reads.begin(), m_.migrate_reads.end()), m_.migrate_reads.end());
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
  // The events each event calls (the callee's index, where), for check_event_cycles.
  std::map<const FuncDecl*, std::vector<std::pair<int, Loc>>> event_calls_;
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

  // A name declared twice, once in an imported file (`use`): the message names the other place too.
  std::string other_place(Loc first, Loc again) const {
    const Source& s = d_.source();
    if (s.file_of(first.line) == s.file_of(again.line)) return "";
    return " (also at " + s.place(first) + ")";
  }

  void error(Loc loc, std::string msg, std::string hint = {}) {
    d_.error(loc, std::move(msg), std::move(hint));
    if (d_.count() > limits::kErrorsBeforeAbort) throw CompileAbort{};
  }

  // ---- constants (checker_consts.cpp) -------------------------------------------------------
  // `const NAME = expr`: computed here, at compile time, with the VM's rules (overflow, division by
  // zero and shift amounts are errors); a name of a constant anywhere else becomes its literal.
  struct ConstVal {
    const Type* type = nullptr;  // null: not constant (already reported)
    int64_t i = 0;
    double n = 0;
    std::string t;
  };

  void declare_consts();
  void check_const_names();
  const ConstDecl& evaluate_const(ConstDecl& c, Loc use);
  ConstVal const_error(Loc loc, std::string msg, std::string hint = {});

  ConstVal const_of(const Type* t, int64_t i = 0, double n = 0, std::string text = {}) { return {t, i, n, std::move(text)}; }

  ConstVal const_value(Expr& e);
  void adapt_const_literals(const Expr& ea, ConstVal& a, const Expr& eb, ConstVal& b);
  ConstVal const_binary(Expr& e);
  bool substitute_const(Expr& e);

  // ---- declarations (checker.cpp) -----------------------------------------------------------
  std::vector<std::string> known_type_names() const;
  void declare_types();
  FieldInfo resolve_field(TypeExpr::Field& f, const char* what);
  static const char* const kItemField;  // resolve_field's `what` for a named item's field
  bool refuse_row_with_list(const Type* row, const Loc& loc);
  void refuse_items_holding_themselves();
  static bool holds_keyed_list(const Type* t, std::string& where);
  const Type* resolve_type(TypeExpr* t);
  const Type* row_type(TypeExpr* t);
  const Type* resolve_list_type(ListDecl& l);
  void declare_lists();
  void declare_functions();

  // The outcome of an event that returns a value, which only a local can hold.
  static bool is_valued_outcome(const Type* t) { return t && t->kind == TypeKind::Item && t->value; }
  void no_valued_outcome_in_list(const Type* t, Loc loc);
  const Type* outcome_type(TypeExpr* value);  // `outcome of T`

  // ---- functions and statements (checker.cpp) -----------------------------------------------
  void check_function(FuncDecl& f);
  static bool always_exits(const std::vector<StmtPtr>& body);
  static bool contains_break(const std::vector<StmtPtr>& body);
  void check_block(std::vector<StmtPtr>& body, bool new_scope = true);
  int declare_local(const std::string& name, const Type* type, bool is_var, Loc loc);
  int lookup_local(const std::string& name) const;
  std::vector<std::string> visible_names() const;
  void check_statement(Stmt& s);
  void expect_bool(Expr* e, const char* what);
  void check_let(Stmt& s);
  bool assignable(Expr& e, const Type* want);
  const Type* expect_type(Expr& e, const Type* want, const std::string& what);
  void check_assign(Stmt& s);
  void check_row_literal(Expr& e, const Type* list);
  void check_item_fields(Expr& e, const Type* item, uint32_t skip);
  void note_stored_write(Expr& list_expr, Loc loc);
  const Type* check_place(Expr& e);
  const Type* check_list_index(Expr& e, bool for_write);
  const Type* field_type(Expr& e);
  // A migrate block read field `field` of a row of type row: when row is an old list's row type,
  // Module::migrate_reads gets "L.field" (for each old list L of that row type).
  void note_old_field_read(const Type* row, const std::string& field);
  void check_for(Stmt& s);
  const Type* iterable_type(Expr& e);
  static bool is_slice(const Expr& e);
  static bool is_slice_method(const std::string& name);
  const Type* check_slice_operand(Expr& self, const std::string& method);
  void check_return(Stmt& s);

  // ---- expressions (checker_exprs.cpp) ------------------------------------------------------
  const Type* check_expr(Expr& e, const Type* expected);
  const Type* check_expr_inner(Expr& e, const Type* expected);
  const Type* check_name(Expr& e);
  const Type* enum_member(Expr& e);
  void declare_enums();
  const Type* check_unary(Expr& e, const Type* expected);
  void unify_literals(Expr& a, Expr& b);
  const Type* check_binary(Expr& e, const Type* expected);
  const Type* check_assert_eq(Expr& e);  // a test's assert_eq (parser.cpp, assertion)
  const Type* check_conditional(Expr& e, const Type* expected);
  static bool is_bitwise(Tok op);
  const Type* check_bitwise(Expr& e);
  const Type* check_item_literal(Expr& e, const Type* expected);
  const Type* check_seq_literal(Expr& e, const Type* expected);

  // ---- calls (checker_builtins.cpp) ---------------------------------------------------------
  void check_args(Expr& e, const std::vector<const Type*>& want, size_t first, const std::string& what);
  const Type* check_call(Expr& e);
  const Type* check_event_call(Expr& e, const FuncDecl& callee, int index);
  void check_event_cycles();
  const Type* arg_type(Expr& e, size_t i, const Type* expected = nullptr);
  bool arity(Expr& e, size_t first, size_t n, const std::string& what);
  const Type* signature_type(char kind);
  const Type* check_signature(Expr& e, Builtin b, size_t first, const std::string& what);
  const Type* check_builtin_call(Expr& e, Builtin b);
  const Type* check_method(Expr& e);
  const Type* unknown_method(Expr& e, const Type* st, Builtin from, Builtin to);
  const Type* check_text_method(Expr& e, Builtin b);
  int field_argument(Expr& e, const Type* list, const std::string& what);
  void sort_keys(Expr& e, const Type* list);
  const Type* check_list_method(Expr& e, Builtin b, const Type* lt);
};

}  // namespace pure::checker
