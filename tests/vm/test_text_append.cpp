// tests/vm/test_text_append.cpp — building a text by appending takes linear work, whether written
// s = s + "..." or s = "{s}...": the bytes of text allocated (rt::text_bytes_allocated) stay
// within a constant times the final length, where copying the whole text at every step would
// allocate about n^2/2. Counts bytes, not time, so the result does not depend on the machine.
// Runs in-process (the counter lives in this process); depends on the frontend, ir and vm.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/store.h"
#include "runtime/text.h"
#include "tests/support/compile_module.h"
#include "vm/vm.h"

using namespace pure;

namespace {

struct Run {
  std::string output;
  uint64_t bytes = 0;  // text bytes allocated while main ran
};

Run run(const std::string& text) {
  Run r;
  std::unique_ptr<vm::Program> program = test::compile_module(text, "t.pure");
  std::unique_ptr<rt::Store> store = rt::make_store(program->stored);
  vm::RunOptions options;
  options.write_output = [&](std::string_view s) { r.output.append(s); };
  uint64_t before = rt::text_bytes_allocated();
  std::optional<vm::RuntimeError> failure = vm::run_main(*program, *store, options);
  r.bytes = rt::text_bytes_allocated() - before;
  REQUIRE_MESSAGE(!failure.has_value(), (failure ? failure->message : std::string()));
  return r;
}

// A loop of n appends of `step` (a statement that grows s), then prints s's length.
std::string appending(const std::string& step, int n) {
  return "fn main() {\n  var s = \"\"\n  for i in 0 .. " + std::to_string(n) + " { " + step +
         " }\n  print(\"{s.byte_len()}\")\n}\n";
}

}  // namespace

TEST_CASE("appending to a text by + or by interpolation allocates linearly in its length") {
  const int n = 20000;
  struct Case {
    const char* step;
    uint64_t bytes_per_append;  // the final length is n times this
  };
  for (Case c : {Case{"s = s + \"x\"", 1}, Case{"s = \"{s}x\"", 1}, Case{"s = \"{s}{i % 10},\"", 2},
                 Case{"s = \"{s}<{i % 7}>\"", 3}, Case{"s += \"{i % 10}.\"", 2}}) {
    CAPTURE(c.step);
    Run r = run(appending(c.step, n));
    uint64_t length = n * c.bytes_per_append;
    CHECK(r.output == std::to_string(length) + "\n");
    // Doubling capacity allocates under 4x the final length, plus small pieces (the digits);
    // copying at every append would allocate about length * n / 2 (here 200,000,000 or more).
    CHECK(r.bytes < 16 * length + 64 * static_cast<uint64_t>(n));
  }
}

TEST_CASE("parts that read the text being built see it as it was before the statement") {
  Run r = run(R"(fn main() {
  var t = "ab"
  t = "{t}-{t}-{t.len()}"
  t = "{t}{t.len()}"
  t = "{t}|{t.slice(0, 2)}"
  var u = "x"
  u = "{u}{u}{u}"
  print("{t} {u}")
}
)");
  CHECK(r.output == "ab-ab-27|ab xxx\n");
}
