// frontend/checker.h — name resolution and type checking of a parsed module.
// Depends on frontend/ast.h, frontend/diagnostic.h.
#pragma once
#include "frontend/ast.h"
#include "frontend/diagnostic.h"

namespace pure {

// Resolves every name, infers the types of locals, checks every expression and statement, and
// annotates the tree (Expr::type, Expr::ref, Stmt::local, ...). Errors go to diags; checking
// continues past them so that independent errors are all reported.
void check_module(Module& module, TypeTable& types, Diagnostics& diags);

// Smallest edit distance between a and b, for "did you mean" hints.
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace pure
