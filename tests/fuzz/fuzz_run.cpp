// tests/fuzz/fuzz_run.cpp — libFuzzer target: any bytes compiled and, when they compile, run with a
// small step budget (output discarded, empty input, a fresh store). A crash, hang or sanitizer
// report while running is a finding; runtime errors are ordinary results.
// When the stored lists end small, the same program runs again on the reference store
// (runtime/store_reference.h: std::map rows, a publish that copies everything) and must print the
// same output and end with the same error: loops in main over stored lists that call queries and
// events (issue 13) then show skipped or repeated rows, not only crashes. seeds/ holds such programs.
// Depends on the public headers frontend/frontend.h, ir/ir.h, vm/vm.h and runtime/store.h, and on
// the test model runtime/store_reference.h.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/store.h"
#include "runtime/store_reference.h"
#include "vm/vm.h"

namespace {

struct Result {
  std::string output;
  std::string error;
  uint64_t state_bytes = 0;
};

Result run(const pure::vm::Program& program, pure::rt::Store& store) {
  Result r;
  pure::vm::RunOptions options;
  options.max_steps = 20000;
  options.args = {"1", "two"};
  options.write_output = [&r](std::string_view s) {
    if (r.output.size() < (size_t{1} << 20)) r.output.append(s);
  };
  options.read_input = [] { return std::string("3\nfour\n"); };
  std::optional<pure::vm::RuntimeError> e = pure::vm::run_main(program, store, options);
  if (e) r.error = e->render("fuzz.pure");
  r.state_bytes = store.memory().state_bytes;
  return r;
}

}  // namespace

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
  Result btree;
  {
    std::unique_ptr<pure::rt::Store> store = pure::rt::make_store(program->stored);
    btree = run(*program, *store);
  }
  // Every text the run made is released again (the program's constants are still held).
  if (pure::rt::text_live_count() != texts_before) __builtin_trap();
  // The reference store copies every list at each publish (each query and each loop in main):
  // compare only when that stays cheap.
  if (btree.state_bytes <= 16 * 1024) {
    Result reference;
    {
      std::unique_ptr<pure::rt::Store> store = pure::rt::make_reference_store(program->stored);
      reference = run(*program, *store);
    }
    if (pure::rt::text_live_count() != texts_before) __builtin_trap();
    if (reference.output != btree.output || reference.error != btree.error) __builtin_trap();
  }
  return 0;
}
