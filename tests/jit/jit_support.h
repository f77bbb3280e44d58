// tests/jit/jit_support.h — what the tests of tests/jit share: a program run by the interpreter
// or by a JIT (Run: output, rendered runtime error, leaked texts and the final state of its
// loops), the one eager JIT (every loop compiled inline on its first pass, however little of it
// is native), both engines run and compared, and the interpreter's exact step need with every
// budget checked alike in both engines. Header only, for the test_*.cpp files of tests/jit.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#pragma once

#include <doctest/doctest.h>

#include "tests/support/compile_module.h"
#include "tests/support/examples.h"
#include "tests/support/run_text.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "base/limits.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "jit-common/jit.h"
#include "runtime/store.h"
#include "runtime/store_flat.h"
#include "vm/vm.h"

namespace jit_test {

struct Run {
  std::string compile_errors;
  std::string output;
  bool failed = false;
  std::string error;      // RuntimeError::render: message, location, stack
  int64_t leaked_texts = 0;
  uint32_t loops = 0, compiled = 0, rejected = 0;  // the program's loops and their final states
  uint32_t parked = 0, native = 0;  // loops whose pass counter says queued/rejected, or compiled
  uint32_t recheck = 0;             // loops whose counter says every loop is rejected (kLoopRecheck)
  uint32_t open_loops = 0;          // Program::open_loops at the end: loops not rejected
  uint32_t tier_stops = 0;          // Program::tier_stops: VMs that turned their tier check off
};

struct Config {
  uint64_t max_steps = 1'000'000;
  uint64_t max_memory = uint64_t{4} << 30;
  std::vector<std::string> args;
  std::string input;
  const std::atomic<const char*>* cancel = nullptr;  // RunOptions::cancel
};

inline Run run(const std::string& text, pure::vm::Tier* tier, const Config& config = {}) {
  using namespace pure;
  vm::RunOptions options;
  options.max_steps = config.max_steps;
  options.max_memory = config.max_memory;
  options.args = config.args;
  options.read_input = [input = config.input] { return input; };
  options.tier = tier;
  options.cancel = config.cancel;
  Run out;
  test::TextRun r = test::run_text(text, options, {}, [&](const vm::Program& program) {
    if (auto* jit = dynamic_cast<jit::Jit*>(tier)) jit->drain();
    for (const vm::Function& f : program.functions)
      for (const vm::LoopInfo& l : f.loops) {
        ++out.loops;
        auto state = static_cast<vm::LoopState>(l.state.load());
        out.compiled += state == vm::LoopState::Compiled;
        out.rejected += state == vm::LoopState::Rejected;
        out.parked += l.hits.load() == vm::kLoopParked;
        out.native += l.hits.load() == vm::kLoopNative;
        out.recheck += l.hits.load() == vm::kLoopRecheck;
      }
    out.open_loops = program.open_loops.load();
    out.tier_stops = program.tier_stops.load();
  });
  out.compile_errors = std::move(r.compile_errors);
  out.output = std::move(r.output);
  if (r.failure) {
    out.failed = true;
    out.error = r.failure->render("t.pure");
  }
  out.leaked_texts = r.leaked_texts;
  return out;
}

// One JIT for the whole test: compiles inline, every loop on its first pass, however little of
// it is native (so pure_step and the exits are exercised too).
inline pure::jit::Jit& eager_jit() {
  static pure::jit::Jit jit(pure::jit::native_backend(), [] {
    pure::jit::Options o;
    o.threshold = 0;
    o.synchronous = true;
    o.min_native_share = 0;
    return o;
  }());
  return jit;
}

inline void check_same(const Run& interp, const Run& jit) {
  CHECK(interp.compile_errors == "");
  CHECK(jit.compile_errors == interp.compile_errors);
  CHECK(jit.output == interp.output);
  CHECK(jit.failed == interp.failed);
  CHECK(jit.error == interp.error);
  CHECK(interp.leaked_texts == 0);
  CHECK(jit.leaked_texts == 0);
}

// Runs by both engines and compares; returns the JIT's run.
inline Run both(const std::string& text, const Config& config = {}) {
  Run a = run(text, nullptr, config);
  Run b = run(text, &eager_jit(), config);
  check_same(a, b);
  return b;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline Run run_with_budget(const std::string& text, uint64_t budget, pure::vm::Tier* tier) {
  Config c;
  c.max_steps = budget;
  return run(text, tier, c);
}

// The interpreter's exact need: the fewest steps with which main runs to its end (bisection in
// [1, hi]).
inline uint64_t interpreter_need(const std::string& text, uint64_t hi) {
  uint64_t lo = 1;
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (run_with_budget(text, mid, nullptr).failed) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Every budget run by both engines: the same result, and a failure, with the budget's message,
// exactly below the interpreter's need.
inline void check_budgets_alike(const std::string& text, const std::vector<uint64_t>& budgets, uint64_t need) {
  for (uint64_t budget : budgets) {
    CAPTURE(budget);
    Run a = run_with_budget(text, budget, nullptr);
    Run b = run_with_budget(text, budget, &eager_jit());
    check_same(a, b);
    CHECK(a.failed == (budget < need));
    if (a.failed) CHECK(contains(a.error, "step budget spent"));
  }
}

}  // namespace jit_test
