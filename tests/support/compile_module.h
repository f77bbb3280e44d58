// tests/support/compile_module.h — for doctest tests that host a module: compiles Pure source
// that must compile (frontend, lowering, loading) into a vm::Program. A diagnostic or a load
// error fails the test with its text. Header only: each test target already links the frontend
// and the VM.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "vm/vm.h"

namespace pure::test {

inline std::unique_ptr<vm::Program> compile_module(const std::string& text, const char* path = "m.pure") {
  Source source(path, text);
  Diagnostics diags(source);
  CheckedModule checked = compile_frontend(source, diags);
  REQUIRE_MESSAGE(!diags.any(), diags.render());
  ir::Program lowered = ir::lower_module(checked, path);
  std::string error;
  std::unique_ptr<vm::Program> program = vm::load_program(lowered, error);
  REQUIRE_MESSAGE(program != nullptr, error);
  return program;
}

}  // namespace pure::test
