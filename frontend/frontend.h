// frontend/frontend.h — the frontend's interface: source text in, checked syntax tree out.
// Other layers include only this header from frontend/.
#pragma once
#include <memory>
#include <string>

#include "frontend/ast.h"
#include "frontend/builtins.h"
#include "frontend/diagnostic.h"
#include "frontend/source.h"
#include "frontend/types.h"

namespace pure {

struct CheckedModule {
  Module module;
  std::unique_ptr<TypeTable> types = std::make_unique<TypeTable>();
};

// Parses and checks. On return, diags holds every error found; the module is usable for
// lowering only when !diags.any().
CheckedModule compile_frontend(const Source& source, Diagnostics& diags);

// The syntax tree as indented text (for `pure-run --dump-ast`).
std::string dump_ast(const Module& module);

}  // namespace pure
