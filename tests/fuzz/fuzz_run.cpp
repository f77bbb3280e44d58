// tests/fuzz/fuzz_run.cpp — libFuzzer target: any bytes compiled and, when they compile, run with a
// small step budget (output discarded, empty input, a fresh store). A crash, hang or sanitizer
// report while running is a finding; runtime errors are ordinary results.
// Depends on the public headers frontend/frontend.h, ir/ir.h, vm/vm.h and runtime/store.h only.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/store.h"
#include "vm/vm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pure::Source source("fuzz.pure", std::string(reinterpret_cast<const char*>(data), size));
  pure::Diagnostics diags(source);
  pure::CheckedModule checked = pure::compile_frontend(source, diags);
  if (diags.any()) return 0;
  pure::ir::Program lowered = pure::ir::lower_module(checked, "fuzz.pure");
  std::string error;
  std::unique_ptr<pure::vm::Program> program = pure::vm::load_program(lowered, error);
  if (!program || program->main < 0) return 0;
  int64_t texts_before = pure::rt::text_live_count();
  {
    std::unique_ptr<pure::rt::Store> store = pure::rt::make_store(program->stored);
    pure::vm::RunOptions options;
    options.max_steps = 20000;
    options.args = {"1", "two"};
    options.write_output = [](std::string_view) {};
    options.read_input = [] { return std::string("3\nfour\n"); };
    (void)pure::vm::run_main(*program, *store, options);
  }
  // Every text the run made is released again (the program's constants are still held).
  if (pure::rt::text_live_count() != texts_before) __builtin_trap();
  return 0;
}
