// frontend/parser.h — builds the syntax tree of one module from its tokens.
// Depends on frontend/ast.h, frontend/lexer.h.
#pragma once
#include "frontend/ast.h"
#include "frontend/diagnostic.h"

namespace pure {

// Parses the whole source. Syntax errors are reported to diags; the parser recovers at the next
// statement or declaration so that several independent errors appear in one run.
Module parse_module(const Source& source, Diagnostics& diags);

}  // namespace pure
