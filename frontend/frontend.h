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
// lowering only when !diags.any(). Test blocks are parsed (their syntax errors reported) and kept
// in module.tests, but neither checked nor compiled: they never change what a module runs.
// With run_test >= 0 (`pure-run --test`), the test of that index (module.tests) is checked and
// becomes the module's main, in place of its own main; the other tests stay out.
CheckedModule compile_frontend(const Source& source, Diagnostics& diags, int run_test = -1);

// The canonical layout of a module's source (`pure-run --fmt`; docs/tooling.md): the same tokens
// and line breaks, with indentation, spaces and blank lines decided, every comment kept. Formatting
// its own result changes nothing. False, with the errors in diags, when the source has a syntax
// error (it is not formatted).
bool format_source(const Source& source, Diagnostics& diags, std::string* out);

// The syntax tree as indented text (for `pure-run --dump-ast`).
std::string dump_ast(const Module& module);

}  // namespace pure
