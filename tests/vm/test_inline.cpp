// tests/vm/test_inline.cpp — leaf inlining (ir/inline.cpp, run by vm/load.cpp): which calls are inlined, and that a
// program shows exactly the same with and without it, by both engines: output, a fault's message,
// location and call stack (inside the inlined callee too), the step budget's failure point at
// every budget, stack overflows, and failed events' reasons.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "tests/support/examples.h"
#include "tests/vm/vm_support.h"
#include "vm/bytecode.h"

using pure::test::Engine;
using pure::test::Outcome;
using pure::test::run_program;
using pure::test::RunConfig;

namespace {

// CALL_INLINED and the remaining calls in function `name` (all functions when empty).
struct CallCounts {
  int inlined = 0, calls = 0;
};
CallCounts calls_in(const std::string& text, const std::string& name = "", bool inline_calls = true) {
  std::unique_ptr<pure::vm::Program> p = [&] {
    pure::Source source("t.pure", text);
    pure::Diagnostics diags(source);
    pure::CheckedModule checked = pure::compile_frontend(source, diags);
    REQUIRE_MESSAGE(!diags.any(), diags.render());
    pure::ir::Program lowered = pure::ir::lower_module(checked, "t.pure");
    std::string error;
    pure::vm::LoadOptions options;
    options.inline_calls = inline_calls;
    auto program = pure::vm::load_program(lowered, error, options);
    REQUIRE_MESSAGE(program != nullptr, error);
    return program;
  }();
  CallCounts n;
  for (const pure::vm::Function& f : p->functions) {
    if (!name.empty() && f.name != name) continue;
    for (const pure::vm::Instr& in : f.code) {
      n.inlined += in.op == pure::vm::Op::CALL_INLINED;
      n.calls += in.op == pure::vm::Op::CALL || in.op == pure::vm::Op::CALL_PLAIN;
    }
  }
  return n;
}

Outcome run(const std::string& text, bool inline_calls, Engine engine, uint64_t max_steps = 10'000'000) {
  RunConfig c;
  c.inline_calls = inline_calls;
  c.engine = engine;
  c.max_steps = max_steps;
  return run_program(text, c);
}

void check_same(const Outcome& with, const Outcome& without) {
  REQUIRE(with.signal == 0);
  REQUIRE(without.signal == 0);
  CHECK(with.compile_errors == "");
  CHECK(with.output == without.output);
  CHECK(with.failed == without.failed);
  CHECK(with.message == without.message);
  CHECK(with.line == without.line);
  CHECK(with.col == without.col);
  CHECK(with.stack == without.stack);
  CHECK(with.rendered == without.rendered);
  CHECK(with.leaked_texts == 0);
}

// Runs text with and without inlining by both engines; all four must agree. Returns the run
// with inlining by the interpreter.
Outcome same_either_way(const std::string& text, uint64_t max_steps = 10'000'000) {
  Outcome with = run(text, true, Engine::Interpret, max_steps);
  check_same(with, run(text, false, Engine::Interpret, max_steps));
  check_same(run(text, true, Engine::Step, max_steps), run(text, false, Engine::Step, max_steps));
  check_same(with, run(text, true, Engine::Step, max_steps));
  return with;
}

}  // namespace

TEST_CASE("inlining: calls of small leaves are inlined; recursion, loops and calls in the callee are not") {
  const char* p = R"(fn sq(x: int) -> int { return x * x }
fn fib(n: int) -> int {
  if n < 2 { return n }
  return fib(n - 1) + fib(n - 2)
}
fn total(n: int) -> int {
  var t = 0
  for i in 0 .. n { t += sq(i) }
  return t
}
fn twice(x: int) -> int { return sq(x) + sq(x) }
fn name(x: int) -> text { return "n{x}" }
fn main() {
  print(fib(10) + total(4) + twice(3))
  print(name(2))
}
)";
  CallCounts total = calls_in(p, "total");
  CHECK(total.inlined == 1);  // sq: a leaf
  CHECK(total.calls == 0);
  CallCounts fib = calls_in(p, "fib");
  CHECK(fib.inlined == 0);    // recursion stays a call
  CHECK(fib.calls == 2);
  CallCounts twice = calls_in(p, "twice");
  CHECK(twice.inlined == 2);
  CallCounts main = calls_in(p, "main");
  CHECK(main.inlined == 0);   // fib and total loop, twice calls, name owns a text
  CHECK(main.calls == 4);
  CHECK(calls_in(p, "", false).inlined == 0);
  CHECK(same_either_way(p).output == "87\nn2\n");
}

TEST_CASE("inlining: results, arguments and constants come out as the call gives them") {
  const char* p = R"(type P { x: num, y: num }
fn lerp(a: num, b: num, t: num) -> num { return a + (b - a) * t }
fn pick(x: int) -> int {
  if x % 3 == 0 { return x / 3 }
  return x * 2 + 1
}
fn swap(p: P) -> P { return P { x: p.y, y: p.x + 0.5 } }
fn keep(a: int, b: int) -> int { return b }
fn scaled(x: num) -> num { return sqrt(abs(x)) * 2.0 + 1.5 }
fn next(x: int) -> int { return x + 1 }
fn main() {
  var acc = 0.0
  var k = 7
  var q = P { x: 1.0, y: 2.0 }
  var t = 3
  for i in 0 .. 6 {
    acc = acc + lerp(1.0, 2.0, num(i) / 6.0)
    k = pick(k)
    q = swap(q)
    t = keep(i, t) + keep(t, i)
  }
  var w = 0
  while next(w) < 10 { w = next(w) }
  print("{acc} {k} {q.x} {q.y} {t} {w} {scaled(-16.0)} {pick(pick(4))}")
}
)";
  CHECK(calls_in(p, "main").inlined >= 9);
  CHECK(calls_in(p, "main").calls == 0);
  CHECK(same_either_way(p).output == "8.5 95 2.5 3.5 18 9 9.5 3\n");
}

TEST_CASE("inlining: a fault inside an inlined callee shows the callee's frame, as the call did") {
  const char* programs[] = {
      // division by zero in the callee's last instruction (it writes the caller's slot directly)
      "fn ratio(a: int, b: int) -> int { return a / b }\n"
      "fn main() {\n for i in 0 .. 5 {\n  print(ratio(10, 3 - i))\n }\n}\n",
      // overflow on one branch of a callee with two returns
      "fn cube(x: int) -> int {\n if x > 0 {\n  return x * x * x\n }\n return -x\n}\n"
      "fn main() {\n var x = 2\n while true {\n  print(cube(x))\n  x = x * 1000\n }\n}\n",
      // three frames: main -> sum (a loop: a real call) -> the inlined leaf
      "fn part(x: int, i: int) -> int { return x % (i - 3) }\n"
      "fn sum(x: int) -> int {\n var t = 0\n for i in 0 .. 10 { t += part(x, i) }\n return t\n}\n"
      "fn main() {\n print(\"start\")\n print(sum(7))\n}\n",
      // a conversion, a shift and a standard function failing inside the callee
      "fn whole(x: num) -> int { return int(x) }\nfn main() {\n print(whole(2.5))\n print(whole(1.0 / 0.0))\n}\n",
      "fn shift(x: int, n: int) -> int { return x << n }\nfn main() {\n print(shift(1, 3))\n print(shift(1, 64))\n}\n",
      "fn size(x: int) -> int { return abs(x) + 1 }\n"
      "fn main() {\n print(size(-4))\n let m = -9223372036854775807 - 1\n print(size(m))\n}\n",
      // a query called from main, whose inlined callee fails
      "list xs by k: int { v: int }\nfn inv(v: int) -> int { return 100 / v }\n"
      "query q(k: int) -> int { return inv(xs[k].v) }\n"
      "event put(k: int, v: int) { xs[k] = { v: v } }\n"
      "fn main() {\n let a = put(1, 0)\n print(q(1))\n}\n",
  };
  for (const char* p : programs) {
    CAPTURE(p);
    CHECK(calls_in(p).inlined >= 1);
    Outcome o = same_either_way(p);
    CHECK(o.failed);
    REQUIRE(o.stack.size() >= 2);
    // the callee is on top, the caller below it, at the line of the call
    std::string top = o.stack[0].substr(0, o.stack[0].find('@'));
    CHECK((top == "ratio" || top == "cube" || top == "part" || top == "whole" || top == "shift" || top == "size" ||
           top == "inv"));
  }
}

TEST_CASE("inlining: an event whose inlined callee fails gives main the same reason") {
  const char* p = R"(list acc by id: int { bal: int }
fn share(total: int, n: int) -> int { return total / n }
event split(id: int, n: int) {
  acc[id] = { bal: 100 }
  acc[id].bal = share(acc[id].bal, n)
}
fn main() {
  let a = split(1, 4)
  let b = split(2, 0)
  print("{a.ok} {b.ok} {b.reason}")
}
)";
  CHECK(calls_in(p, "split").inlined == 1);
  Outcome o = same_either_way(p);
  CHECK_FALSE(o.failed);
  CHECK(o.output == "true false runtime error at 2:52: division by zero\n");
}

TEST_CASE("inlining: every step budget fails at the same place, with or without inlining") {
  const char* p = R"(fn lerp(a: num, b: num, t: num) -> num { return a + (b - a) * t }
fn pick(x: int) -> int {
  if x % 3 == 0 { return x / 3 }
  return x * 2 + 1
}
fn main() {
  var acc = 0.0
  var k = 7
  for i in 0 .. 6 {
    acc = acc + lerp(1.0, 2.0, num(i) / 6.0)
    k = pick(k)
    print("{k}")
  }
  print("{acc} {pick(k)}")
}
)";
  REQUIRE(calls_in(p, "main").inlined == 3);
  // 7 loop steps, 2 calls per pass and one more call at the end: 20 steps in all
  for (uint64_t budget = 1; budget <= 22; ++budget) {
    CAPTURE(budget);
    Outcome o = same_either_way(p, budget);
    CHECK(o.failed == (budget < 20));
    if (o.failed) CHECK(o.message.find("step budget spent") == 0);
  }
}

TEST_CASE("inlining: a stack overflow happens at the same depth and place, with or without inlining") {
  // small frames: the call depth limit; big frames: the slot stack; and a leaf that needs more
  // slots than the recursive function, so that its own check is the one that fails
  std::string big_locals;
  for (int i = 0; i < 40; ++i) big_locals += " let v" + std::to_string(i) + " = n + " + std::to_string(i) + "\n";
  std::string big_leaf = "fn wide(x: int) -> int {\n";
  for (int i = 0; i < 30; ++i) big_leaf += " let w" + std::to_string(i) + " = x + " + std::to_string(i) + "\n";
  big_leaf += " return w0 + w29\n}\n";
  std::string some_locals;
  for (int i = 0; i < 22; ++i) some_locals += " let v" + std::to_string(i) + " = n + " + std::to_string(i) + "\n";
  std::string programs[] = {
      "fn sq(x: int) -> int { return x * x }\n"
      "fn down(n: int) -> int { return sq(n) + down(n + 1) }\nfn main() { print(down(0)) }\n",
      "fn sq(x: int) -> int { return x * x }\n"
      "fn down(n: int) -> int {\n" + big_locals + " return sq(v39) + down(n + 1)\n}\nfn main() { print(down(0)) }\n",
      big_leaf + "fn down(n: int) -> int {\n" + some_locals + " return wide(v21) + down(n + 1)\n}\nfn main() { print(down(0)) }\n",
  };
  for (const std::string& p : programs) {
    CAPTURE(p);
    CHECK(calls_in(p, "down").inlined == 1);
    Outcome o = same_either_way(p);
    CHECK(o.failed);
    CHECK(o.message.find("stack overflow: calls nested") == 0);
  }
}

TEST_CASE("inlining: every example gives the same results with and without it") {
  std::vector<pure::test::Example> examples = pure::test::read_examples(PURE_EXAMPLES_DIR);
  int inlined = 0;
  for (const pure::test::Example& e : examples) {
    CAPTURE(e.path.filename().string());
    RunConfig c;
    c.max_steps = e.max_steps;
    c.input = e.input;
    c.args = e.args;
    Outcome with = run_program(e.text, c);
    c.inline_calls = false;
    Outcome without = run_program(e.text, c);
    REQUIRE(with.signal == 0);
    if (!with.compile_errors.empty()) {
      CHECK(with.compile_errors == without.compile_errors);
      continue;
    }
    check_same(with, without);
    inlined += calls_in(e.text).inlined > 0;
  }
  MESSAGE(inlined << " of " << examples.size() << " examples have inlined calls");
  CHECK(inlined > 0);
}
