// tests/support/run_text.h — compiles Pure source as t.pure (frontend, lowering, loading) and runs
// its main in-process by vm::run_main with the caller's options: the one runner behind the VM
// tests' forked runner (tests/vm/vm_support) and the JIT test's interpreter-against-JIT runs
// (tests/jit). A module that does not compile is a result here, not a failed check (fuzzers
// generate programs). Header only: each test target already links the frontend and the VM.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/store.h"
#include "runtime/text.h"
#include "vm/bytecode.h"
#include "vm/vm.h"

namespace pure::test {

struct TextRun {
  std::string compile_errors;               // the diagnostics, or "load: " and the loader's error
  std::string output;                       // what main printed
  std::optional<vm::RuntimeError> failure;  // the runtime error that ended main
  int64_t leaked_texts = 0;                 // rt::text_live_count() after the run minus before
};

// Runs main of `text` with a fresh store. options.write_output is replaced (the output is
// collected); everything else (budgets, args, read_input, engine, tier) is the caller's.
// after(const vm::Program&) runs once main has returned, while the program is still loaded;
// the texts counted as leaked are those alive after it, the program and the store are gone.
template <typename After>
TextRun run_text(const std::string& text, vm::RunOptions options, const vm::LoadOptions& load, After&& after) {
  TextRun out;
  int64_t live_before = rt::text_live_count();
  {
    Source source("t.pure", text);
    Diagnostics diags(source);
    CheckedModule checked = compile_frontend(source, diags);
    if (diags.any()) {
      out.compile_errors = diags.render();
      return out;
    }
    ir::Program lowered = ir::lower_module(checked, "t.pure");
    std::string error;
    std::unique_ptr<vm::Program> program = vm::load_program(lowered, error, load);
    if (!program) {
      out.compile_errors = "load: " + error;
      return out;
    }
    std::unique_ptr<rt::Store> store = rt::make_store(program->stored);
    options.write_output = [&](std::string_view s) { out.output.append(s); };
    out.failure = vm::run_main(*program, *store, options);
    after(static_cast<const vm::Program&>(*program));
  }
  out.leaked_texts = rt::text_live_count() - live_before;
  return out;
}

inline TextRun run_text(const std::string& text, const vm::RunOptions& options, const vm::LoadOptions& load = {}) {
  return run_text(text, options, load, [](const vm::Program&) {});
}

}  // namespace pure::test
