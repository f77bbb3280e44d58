// tests/fuzz/fuzz_frontend.cpp — libFuzzer target: any bytes through what `pure-run --check`
// does in-process (parse, check, lower to IR, load as bytecode). Never runs the program.
// Depends on the public headers frontend/frontend.h, ir/ir.h and vm/bytecode.h only.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "vm/bytecode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pure::Source source("fuzz.pure", std::string(reinterpret_cast<const char*>(data), size));
  pure::Diagnostics diags(source);
  pure::CheckedModule checked = pure::compile_frontend(source, diags);
  if (diags.any()) {
    // Rendering walks source lines for the caret: exercise it, and insist every report is located.
    std::string text = diags.render();
    if (text.rfind("fuzz.pure:", 0) != 0) __builtin_trap();
    for (const pure::Diagnostic& d : diags.list())
      if (!d.loc.known()) __builtin_trap();
    return 0;
  }
  pure::ir::Program program = pure::ir::lower_module(checked, "fuzz.pure");
  (void)pure::ir::dump_ir(program);
  std::string error;
  std::unique_ptr<pure::vm::Program> code = pure::vm::load_program(program, error);
  if (code) (void)pure::vm::dump_bytecode(*code);
  return 0;
}
