// tests/vm/vm_support.h — compiles a Pure module in-process and runs its main in a forked child
// (so a crash is one failed check, not the end of the suite), by the interpreter or by the step
// engine (vm::StepEngine, one pure_step at a time), both through run_main's one driver loop.
// Reports output, the runtime error and whether texts leaked.
// Depends on the public headers frontend/frontend.h, ir/ir.h, vm/vm.h, runtime/store.h, and on
// vm/engine.h for the step engine.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pure::test {

enum class Engine { Interpret, Step };

struct RunConfig {
  Engine engine = Engine::Interpret;
  uint64_t max_steps = 10'000'000;
  uint64_t max_memory = uint64_t{4} << 30;
  std::vector<std::string> args;
  std::string input;
  bool inline_calls = true;       // vm::LoadOptions: leaf inlining
};

struct Outcome {
  int signal = 0;                 // the child died by this signal (a crash)
  std::string compile_errors;     // non-empty: the module did not compile
  std::string output;             // what main printed
  bool failed = false;            // a runtime error ended main
  std::string message;            // its message
  uint32_t line = 0, col = 0;     // its location
  std::vector<std::string> stack; // "function@line:col", innermost first
  int64_t leaked_texts = 0;       // rt::text_live_count() after the run minus before
  uint64_t instructions = 0;      // step engine: instructions executed
  std::string rendered;           // RuntimeError::render("t.pure") (interpreter only)
};

// Compiles and runs text as t.pure. Never throws; a crash shows up as Outcome::signal.
Outcome run_program(const std::string& text, const RunConfig& config = {});

// Runs text by both engines; both must finish cleanly (no crash, compile error or runtime
// error) with the same output and leak no text (doctest checks). Returns the output.
std::string clean_on_both(const std::string& text);

// Shorthand: the output of a program that must run cleanly (else a descriptive failure text).
std::string output_of(const std::string& text, Engine engine = Engine::Interpret);

// output_of by the interpreter, after checking (doctest) that the step engine gives the same text;
// unlike clean_on_both, a runtime error is allowed (it is part of the text compared).
std::string both_engines(const std::string& text);

}  // namespace pure::test
