// tests/jit/test_tiers.cpp — when loops compile and when they do not, against the interpreter: a
// loop that compiles too little stays interpreted, programs whose loops are all rejected stop their
// tier check (on one thread and several), ski rental (a loop compiled once its interpreted work
// reaches its compile's expected cost), an inner loop hot first, the LLVM size budget, a backend
// reused, background and cancelled compiles: the same bytes, steps and faults either way.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#include "tests/jit/jit_support.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: a loop that compiles too little stays interpreted; forcing it gives the same bytes") {
  // INT_TEXT and CONCAT run through pure_step: 3 of its 9 instructions would be native
  const char* texts = "fn main() {\n var s = \"\"\n for i in 0 .. 50 { s = s + text(i) + \",\" + text(i) + \";\" }\n print(s.len())\n}\n";
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit by_default(pure::jit::native_backend(), o);
  Run r = run(texts, &by_default);
  check_same(run(texts, nullptr), r);
  CHECK(r.rejected == 1);
  CHECK(r.compiled == 0);
  // the program's only loop: rejecting it leaves nothing to tier up, so the run stops checking
  // (issue 12); its counter stays kLoopRecheck, which sends any other VM out of line once
  CHECK(r.recheck == 1);
  CHECK(r.open_loops == 0);
  CHECK(r.tier_stops == 1);
  CHECK(by_default.stats().rejected == 1);
  Run f = both(texts);  // eager_jit compiles whatever the share
  CHECK(f.compiled == 1);
}

// Issue 12: a program whose loops are all rejected pays the interpreter's one flag test per pass,
// not the tier check. Program::open_loops counts the loops not rejected; tier_stops the VMs that
// turned their check off when it reached 0.
namespace {
// Two loops that compile too little (INT_TEXT and CONCAT through pure_step), in main and in a
// function main calls; the budget is spent in the second when max_steps is small.
const char* kAllRejected =
    "fn pad(n: int) -> text {\n var s = \"\"\n for i in 0 .. n { s = s + text(i % 10) + \";\" }\n return s\n}\n"
    "fn main() {\n var s = \"\"\n for i in 0 .. 40 { s = s + text(i) + \",\" }\n print(s.len())\n"
    " print(pad(30).len())\n}\n";
// The same with a third loop that compiles (all native).
const char* kOneCompiled =
    "fn pad(n: int) -> text {\n var s = \"\"\n for i in 0 .. n { s = s + text(i % 10) + \";\" }\n return s\n}\n"
    "fn main() {\n var s = \"\"\n for i in 0 .. 40 { s = s + text(i) + \",\" }\n print(s.len())\n"
    " print(pad(30).len())\n var t = 0\n for i in 0 .. 500 { t = (t * 31 + i) % 1000003 }\n print(t)\n}\n";
// A rejected loop in main and one that would compile in a function nobody calls (never hot:
// undecided for ever).
const char* kOneUnreached =
    "fn never(n: int) -> int {\n var t = 0\n for i in 0 .. n { t = (t * 31 + i) % 1000003 }\n return t\n}\n"
    "fn main() {\n var s = \"\"\n for i in 0 .. 40 { s = s + text(i) + \",\" }\n print(s.len())\n}\n";
// kAllRejected with pad's loop run 3 times: below a threshold of 10 it never gets hot itself.
const char* kFewPasses =
    "fn pad(n: int) -> text {\n var s = \"\"\n for i in 0 .. n { s = s + text(i % 10) + \";\" }\n return s\n}\n"
    "fn main() {\n var s = \"\"\n for i in 0 .. 40 { s = s + text(i) + \",\" }\n print(s.len())\n"
    " print(pad(3).len())\n}\n";

pure::jit::Options by_default_options(bool synchronous, uint32_t threshold) {
  pure::jit::Options o;
  o.threshold = threshold;
  o.synchronous = synchronous;
  o.payoff = false;  // these loops are far too short to pay for a compile: the threshold decides here
  return o;
}
}  // namespace

TEST_CASE("jit: a program whose loops are all rejected stops its tier check; a compiled or unreached loop keeps it") {
  for (bool synchronous : {true, false}) {
    for (uint32_t threshold : {0u, 10u}) {
      CAPTURE(synchronous);
      CAPTURE(threshold);
      {
        pure::jit::Jit jit(pure::jit::native_backend(), by_default_options(synchronous, threshold));
        Run r = run(kAllRejected, &jit);
        check_same(run(kAllRejected, nullptr), r);
        CHECK(r.loops == 2);
        CHECK(r.rejected == 2);
        CHECK(r.open_loops == 0);
        CHECK(r.tier_stops == 1);  // main's VM, at the second rejection
        CHECK(r.recheck == 2);     // every counter, for any other VM
        CHECK(jit.stats().rejected == 2);
      }
      {
        pure::jit::Jit jit(pure::jit::native_backend(), by_default_options(synchronous, threshold));
        Run r = run(kOneCompiled, &jit);
        check_same(run(kOneCompiled, nullptr), r);
        CHECK(r.loops == 3);
        CHECK(r.rejected == 2);
        CHECK(r.compiled == 1);  // in the background too: run() drains before it looks
        CHECK(r.open_loops == 1);
        CHECK(r.tier_stops == 0);
        CHECK(r.recheck == 0);
      }
      {
        pure::jit::Jit jit(pure::jit::native_backend(), by_default_options(synchronous, threshold));
        Run r = run(kOneUnreached, &jit);
        check_same(run(kOneUnreached, nullptr), r);
        CHECK(r.rejected == 1);
        CHECK(r.open_loops == 1);  // never's loop is undecided: the check stays (slower, correct)
        CHECK(r.tier_stops == 0);
        CHECK(r.compiled == 0);
      }
      {
        // pad's loop never gets hot when the threshold is 10; the tier rejects it with main's
        // (its share is known without running it), so main's VM stops at main's hot loop
        pure::jit::Jit jit(pure::jit::native_backend(), by_default_options(synchronous, threshold));
        Run r = run(kFewPasses, &jit);
        check_same(run(kFewPasses, nullptr), r);
        CHECK(r.rejected == 2);
        CHECK(r.open_loops == 0);
        CHECK(r.tier_stops == 1);
        CHECK(jit.stats().rejected == 2);
      }
    }
  }
  // budgets spent before, at and after the stop give the interpreter's errors and bytes
  pure::jit::Jit jit(pure::jit::native_backend(), by_default_options(true, 0));
  for (uint64_t budget : {1u, 5u, 40u, 41u, 42u, 43u, 60u, 71u, 72u, 73u, 74u, 200u}) {
    CAPTURE(budget);
    Config c;
    c.max_steps = budget;
    check_same(run(kAllRejected, nullptr, c), run(kAllRejected, &jit, c));
  }
}

TEST_CASE("jit: a program whose loops are all rejected starts its next invocations without the tier check") {
  using namespace pure;
  std::unique_ptr<vm::Program> program = test::compile_module(
      "list pts by id: int { v: int = 0 }\nevent fill(n: int) {\n var s = \"\"\n for i in 0 .. n { s = s + text(i) + \",\" }\n pts[n].v = s.len()\n}\n", "t.pure");
  REQUIRE(program->loop_count == 1);
  std::unique_ptr<rt::Store> store = rt::make_store(program->stored);
  jit::Jit jit(jit::native_backend(), by_default_options(true, 0));
  vm::RunOptions options;
  options.tier = &jit;
  int fill = vm::find_function(*program, "fill");
  REQUIRE(fill >= 0);
  std::vector<vm::Value> args{vm::Value::of_int(5)};
  CHECK(vm::call_event(*program, *store, static_cast<uint32_t>(fill), args, options).ok);
  CHECK(program->open_loops.load() == 0);  // fill's loop compiles too little (INT_TEXT, CONCAT)
  CHECK(program->tier_stops.load() == 1);
  for (int k = 0; k < 3; ++k) CHECK(vm::call_event(*program, *store, static_cast<uint32_t>(fill), args, options).ok);
  // the later VMs were made with the check off: none went out of line at the kLoopRecheck counter
  CHECK(program->tier_stops.load() == 1);
}

TEST_CASE("jit: several VMs on one program on different threads stop their tier checks safely") {
  using namespace pure;
  std::unique_ptr<vm::Program> program = test::compile_module(kAllRejected, "t.pure");
  std::string expected;
  {
    std::unique_ptr<rt::Store> store = rt::make_store(program->stored);
    vm::RunOptions o;
    o.write_output = [&](std::string_view s) { expected.append(s); };
    REQUIRE(!vm::run_main(*program, *store, o));
  }
  jit::Jit jit(jit::native_backend(), by_default_options(false, 3));  // background compiles
  constexpr int kThreads = 4;
  std::vector<std::string> outputs(kThreads);
  std::vector<bool> failed(kThreads, false);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5; ++k) {
        std::unique_ptr<rt::Store> store = rt::make_store(program->stored);
        vm::RunOptions o;
        o.tier = &jit;
        o.write_output = [&](std::string_view s) { outputs[t].append(s); };
        if (vm::run_main(*program, *store, o)) failed[t] = true;
      }
    });
  for (std::thread& th : threads) th.join();
  jit.drain();
  std::string five;
  for (int k = 0; k < 5; ++k) five += expected;
  for (int t = 0; t < kThreads; ++t) {
    CHECK(!failed[t]);
    CHECK(outputs[t] == five);
  }
  CHECK(program->open_loops.load() == 0);
  CHECK(jit.stats().rejected == 2);
  // at least the VM that rejected the last loop stopped; at most one per VM that was running
  // then (a VM made afterwards starts with the check off)
  CHECK(program->tier_stops.load() >= 1);
  CHECK(program->tier_stops.load() <= kThreads);
}

// A loop of `first` passes of a few instructions (4-10), then another of `second`.
std::string two_loops(int first, int second) {
  return "fn main() {\n var t = 0\n for i in 0 .. " + std::to_string(first) + " { t += i % 7 }\n print(t)\n"
         " var u = 0\n for i in 0 .. " + std::to_string(second) + " { u += i % 11 }\n print(u)\n}\n";
}

TEST_CASE("jit: ski rental: a loop is compiled once its interpreted work reaches its compile's expected cost") {
  pure::jit::BackendKind kind = pure::jit::native_backend();
  kind.setup_cost = 0;
  kind.instruction_cost = 0;
  const std::string short_long = two_loops(20'000, 200'000);  // 80k-200k loop instructions, then 0.8M-2M
  const std::string long_short = two_loops(200'000, 20'000);
  Config c;
  c.max_steps = 100'000'000;
  Run interp = run(short_long, nullptr, c), interp2 = run(long_short, nullptr, c);
  for (bool synchronous : {true, false}) {
    CAPTURE(synchronous);
    pure::jit::Options o;
    o.threshold = 1000;
    o.synchronous = synchronous;
    {
      kind.loop_cost = 400'000;  // only the long loop repays it
      pure::jit::Jit jit(kind, o);
      Run r = run(short_long, &jit, c);
      check_same(interp, r);
      pure::jit::Stats s = jit.stats();
      CHECK(s.compiled == 1);
      CHECK(r.compiled == 1);
      CHECK(s.waited == 2);  // both got hot at 1000 passes, neither had paid then
      CHECK(s.waits > 2);
      CHECK(r.open_loops == 2);  // the short one still undecided
    }
    {
      // the set-up is charged to the first compile only: the long loop pays it, then the short one
      // needs only its own cost (with the set-up charged again it would stay interpreted)
      kind.setup_cost = 600'000;
      kind.loop_cost = 50'000;
      pure::jit::Jit jit(kind, o);
      Run r = run(long_short, &jit, c);
      check_same(interp2, r);
      CHECK(jit.stats().compiled == 2);
      CHECK(jit.stats().waited == 2);
      kind.setup_cost = 0;
    }
    kind.loop_cost = 400'000;
    {
      o.payoff = false;  // the threshold alone: both
      pure::jit::Jit jit(kind, o);
      Run r = run(short_long, &jit, c);
      check_same(interp, r);
      CHECK(jit.stats().compiled == 2);
      CHECK(jit.stats().waited == 0);
      o.payoff = true;
    }
    {
      o.threshold = 0;  // on first entry, whatever the cost: both
      pure::jit::Jit jit(kind, o);
      Run r = run(short_long, &jit, c);
      check_same(interp, r);
      CHECK(jit.stats().compiled == 2);
      CHECK(jit.stats().waited == 0);
    }
  }
}

// Options::nested: an inner loop that gets hot first compiles its outermost enclosing loop, whose
// code is then entered at either head (BackendKind::nested_entries); one inside a loop already
// compiled takes that loop's code. Both engines: the same bytes, faults and steps, whichever head
// native code was entered at. `xs` grows in the outer loop (its count and rows must not be kept
// across the inner loop's passes), `flags` is only written (kept).
std::string nested_sieve(const std::string& inner_extra) {
  return "fn main() {\n let flags = repeat(false, 3001)\n let xs = [0]\n var count = 0\n"
         " for i in 2 .. 3000 {\n  if not flags[i] {\n   count += 1\n   xs.push(i)\n   var j = i * i\n"
         "   while j < 3000 {\n    flags[j] = true\n    xs[j % xs.count()] += 1\n" + inner_extra +
         "    j += i\n   }\n  }\n }\n print(\"{count} {xs.count()} {xs[0]} {xs[1]} {xs[xs.count() - 1]}\")\n}\n";
}

TEST_CASE("jit: an inner loop hot first compiles its enclosing loop, entered at either head: the same bytes, steps and faults") {
  if (!pure::jit::native_backend().nested_entries) return;
  Config c;
  c.max_steps = 10'000'000;
  pure::jit::Options o;
  o.threshold = 100;  // the inner loop's first run (i = 2) gets hot; the outer loop has had 1 pass
  o.synchronous = true;
  o.payoff = false;
  const std::string plain = nested_sieve("");
  Run interp = run(plain, nullptr, c);
  CHECK(interp.output == "430 431 2871 382 2999\n");
  {
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run r = run(plain, &jit, c);
    check_same(interp, r);
    CHECK(jit.stats().compiled == 2);
    CHECK(jit.stats().nested == 1);
    CHECK(jit.stats().loop_ms.size() == 1);  // one compile
    CHECK(r.native == 2);
  }
  {
    o.nested = false;  // each loop alone: two compiles, the same bytes
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run r = run(plain, &jit, c);
    check_same(interp, r);
    CHECK(jit.stats().compiled == 2);
    CHECK(jit.stats().nested == 0);
    CHECK(jit.stats().loop_ms.size() == 2);
    o.nested = true;
  }
  // three deep: the innermost gets hot, the outermost is compiled for all three
  const char* deep =
      "fn main() {\n var t = 0\n for a in 0 .. 3 {\n  for b in 0 .. 4 {\n   var k = 0\n"
      "   while k < 500 { t += (k * a + b) % 13\n k += 1 }\n  }\n  t += a\n }\n print(t)\n}\n";
  {
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run a = run(deep, nullptr, c), r = run(deep, &jit, c);
    check_same(a, r);
    CHECK(jit.stats().compiled == 3);
    CHECK(jit.stats().nested == 2);
    CHECK(jit.stats().loop_ms.size() == 1);
  }
  // an enclosing loop that would cost more than 3 times the hot loop's own compile is left alone
  // (by the backend's costs; asmjit's are 0, its compiles too cheap to weigh, so there the case
  // gives it one per instruction, and without costs the enclosing loop is taken: the nest)
  std::string big = "fn main() {\n var t = 0\n for i in 0 .. 3 {\n";
  for (int line = 0; line < 12; ++line) big += "  t += i * " + std::to_string(line + 3) + " % " + std::to_string(line + 5) + "\n";
  big += "  var k = 0\n  while k < 500 { t += k % 13\n k += 1 }\n }\n print(t)\n}\n";
  pure::jit::BackendKind costed = pure::jit::native_backend();
  if (costed.instruction_cost == 0) costed.instruction_cost = 1;
  {
    pure::jit::Jit jit(costed, o);
    Run a = run(big, nullptr, c), r = run(big, &jit, c);
    check_same(a, r);
    CHECK(jit.stats().nested == 0);
    CHECK(jit.stats().compiled == 1);
  }
  if (pure::jit::native_backend().instruction_cost == 0) {
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run a = run(big, nullptr, c), r = run(big, &jit, c);
    check_same(a, r);
    CHECK(jit.stats().nested == 1);
    CHECK(jit.stats().compiled == 2);
    CHECK(jit.stats().loop_ms.size() == 1);
  }
  // an enclosing loop compiled first; its call leaves native code, so the interpreter runs the
  // inner loop, which gets hot later and takes the enclosing loop's code without a compile
  const char* later =
      "fn twice(x: int) -> int {\n var s = 0\n for k in 0 .. 2 { s += x }\n return s\n}\n"
      "fn main() {\n var t = 0\n for i in 0 .. 3000 {\n  t += twice(i) % 3\n  var j = 0\n  var n = 0\n"
      "  if i > 1500 { n = 5 }\n  while j < n { t += j * i % 7\n j += 1 }\n }\n print(t)\n}\n";
  {
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run a = run(later, nullptr, c), r = run(later, &jit, c);
    check_same(a, r);
    CHECK(jit.stats().nested == 1);
    CHECK(r.native == 3);
  }
  // faults in the inner loop after native code was entered at its head: out of range (the grown
  // list's count read again), an overflow, a division by zero
  for (const char* extra : {"    if i > 40 { xs[j + 3000] = 1 }\n", "    if i > 40 { count += 9223372036854775807 }\n",
                            "    if i > 40 { count += j / (i - 43) }\n"}) {
    CAPTURE(extra);
    const std::string bad = nested_sieve(extra);
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run a = run(bad, nullptr, c), r = run(bad, &jit, c);
    check_same(a, r);
    CHECK(a.failed);
    CHECK(jit.stats().nested == 1);
  }
  // budgets: spent before, at and after the compile, in either loop; failing exactly below the
  // interpreter's need
  const uint64_t need = interpreter_need(plain, 1'000'000);
  for (uint64_t budget : {uint64_t{150}, uint64_t{400}, uint64_t{1003}, uint64_t{1500}, uint64_t{2999}, need / 2,
                          need / 3 + 7, need - 100, need - 1, need, need + 1}) {
    CAPTURE(budget);
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run a = run_with_budget(plain, budget, nullptr), r = run_with_budget(plain, budget, &jit);
    check_same(a, r);
    CHECK(a.failed == (budget < need));
    if (a.failed) CHECK(contains(a.error, "step budget spent"));
  }
}

// An inner loop that repays its compile inside an enclosing loop that has got hot itself (it runs
// many passes, each entering the inner loops: fannkuch's shape) compiles the whole nest, however
// much more the enclosing loop's compile costs; with the enclosing loop not hot (the test above,
// 3 passes) the 3x bound holds. Costs scaled down so that a test run pays them: the inner loop
// repays at about its 1000th pass, when the outer loop has run about 170 passes (hot at 100) and
// its own compile, 80-odd instructions, is far from repaid.
TEST_CASE("jit: a short inner loop repaid inside a hot enclosing loop compiles the nest: the same bytes, steps and faults") {
  if (!pure::jit::native_backend().nested_entries) return;
  pure::jit::BackendKind kind = pure::jit::native_backend();
  kind.setup_cost = 0;
  kind.loop_cost = 0;
  kind.instruction_cost = 1000;
  std::string text = "fn main() {\n let xs = [5, 1, 4, 2, 3, 0, 6]\n var t = 0\n var p = 0\n while p < 3000 {\n";
  for (int line = 0; line < 10; ++line)
    text += "  t = (t + p * " + std::to_string(line + 3) + ") % " + std::to_string(1000 + line) + "\n";
  text += "  var lo = 0\n  var hi = p % 6 + 1\n  while lo < hi {\n   let x = xs[lo]\n   xs[lo] = xs[hi]\n   xs[hi] = x\n"
          "   lo += 1\n   hi -= 1\n  }\n  var k = 0\n  while k < 3 { t += xs[k] * k\n k += 1 }\n  p += 1\n }\n"
          " print(\"{t} {xs[0]} {xs[6]}\")\n}\n";
  Config c;
  c.max_steps = 10'000'000;
  Run interp = run(text, nullptr, c);
  CHECK(!interp.failed);
  pure::jit::Options o;
  o.threshold = 100;
  o.synchronous = true;
  {
    pure::jit::Jit jit(kind, o);
    Run r = run(text, &jit, c);
    check_same(interp, r);
    CHECK(jit.stats().loop_ms.size() == 1);  // one compile: the nest
    CHECK(jit.stats().nested == 1);  // the inner loop that got hot, given the nest's code
    CHECK(r.native == 2);
  }
  // the same faults and budgets whichever head native code was entered at
  const std::string bad = text.substr(0, text.find("  p += 1")) + "  if p == 2500 { t += xs[p] }\n" + text.substr(text.find("  p += 1"));
  Run a = run(bad, nullptr, c);
  CHECK(a.failed);
  const uint64_t need = interpreter_need(text, 10'000'000);
  for (uint64_t budget : {need / 2, need / 3 + 7, need - 1, need}) {
    CAPTURE(budget);
    pure::jit::Jit jit(kind, o);
    check_same(run_with_budget(text, budget, nullptr), run_with_budget(text, budget, &jit));
  }
  pure::jit::Jit jit(kind, o);
  check_same(a, run(bad, &jit, c));
}

// A loop whose lowered LLVM function is over base/limits.h's kJitLoopIr is refused before the
// optimiser (whose time grows faster than the function: issue 36's 1.4 s loop); a nest refused so
// falls back to the loop inside it that got hot. The outer loop's six list updates, with the
// inner loop's copy for its nested entry, make the nest several times the budget; the inner loop
// alone is well under it. Same bytes as the interpreter either way.
std::string big_nest() {
  std::string text = "fn main() {\n let xs = repeat(0, 64)\n let ys = repeat(1, 64)\n var t = 0\n for i in 0 .. 30 {\n"
                     "  var j = 0\n  while j < 200 {\n";
  for (int k = 0; k < 3; ++k)
    text += "   xs[(j + " + std::to_string(k) + ") % 64] += ys[(j * " + std::to_string(k + 3) + " + i) % 64] + t % " +
            std::to_string(k + 7) + "\n";
  text += "   t += xs[j % 64] % 5\n   j += 1\n  }\n";
  for (int k = 0; k < 6; ++k)
    text += "  xs[(i + " + std::to_string(k) + ") % 64] += ys[(i * " + std::to_string(k + 3) + " + t) % 64] % " +
            std::to_string(k + 7) + "\n";
  return text + "  t += i\n }\n print(\"{t} {xs[3]}\")\n}\n";
}

TEST_CASE("jit: a loop over the LLVM size budget stays interpreted; a nest over it compiles the hot loop inside it") {
  if (std::string(pure::jit::native_backend().name) != "llvm") return;  // the budget is LLVM's
  Config c;
  c.max_steps = 10'000'000;
  const std::string text = big_nest();
  Run interp = run(text, nullptr, c);
  CHECK(interp.output == "12297 1684\n");
  pure::jit::Options o;
  o.threshold = 100;  // the inner loop's first run gets hot; the outer loop has had 1 pass
  o.synchronous = true;
  o.payoff = false;
  {
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run r = run(text, &jit, c);
    check_same(interp, r);
    CHECK(jit.stats().too_large == 1);  // the nest
    CHECK(jit.stats().rejected == 1);
    CHECK(jit.stats().compiled == 1);   // the inner loop, alone
    CHECK(jit.stats().nested == 0);
    CHECK(jit.stats().loop_ms.size() == 1);
    CHECK(r.rejected == 1);
    CHECK(r.native == 1);
  }
  {
    o.threshold = 0;  // every loop on first entry: the outer loop first, alone, refused
    o.nested = false;
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run r = run(text, &jit, c);
    check_same(interp, r);
    CHECK(jit.stats().too_large == 1);
    CHECK(jit.stats().compiled == 1);
    CHECK(r.rejected == 1);
  }
  CHECK(pure::jit::stats_line(pure::jit::Stats{}).find("0 rejected (0 too large)") != std::string::npos);
}

TEST_CASE("jit: one backend compiles different loops one after another (its pipelines are reused)") {
  // sync, every loop at first entry: loop after loop through the same optimiser and code
  // generator; each must give its own function's results
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit jit(pure::jit::native_backend(), o);
  const char* p =
      "fn f(n: int) -> int {\n var t = 0\n for i in 0 .. n { t += i * 3 % 5 }\n return t\n}\n"
      "fn g(n: int) -> num {\n var x = 0.5\n for i in 0 .. n { x = x * 1.0001 + 0.25 }\n return x\n}\n"
      "fn h(n: int) -> int {\n var a = 1\n var b = 0\n while a < n { b += a % 3\n a = a * 2 + 1 }\n return b\n}\n"
      "fn main() {\n print(f(1000))\n print(g(300))\n print(h(1000000))\n print(f(77))\n}\n";
  Run a = run(p, nullptr);
  Run b = run(p, &jit);
  check_same(a, b);
  CHECK(jit.stats().compiled == 3);
  CHECK(jit.stats().rejected == 0);
  CHECK(b.native == 3);
  CHECK(jit.stats().setup_ms >= 0);
  CHECK(jit.stats().first_ms >= 0);
  CHECK(jit.stats().loop_ms.size() == 3);
}

TEST_CASE("jit: background compiles (the normal mode) give the interpreter's bytes") {
  pure::jit::Options o;
  o.threshold = 0;
  pure::jit::Jit background(pure::jit::native_backend(), o);
  const char* p = "fn main() {\n var t = 0\n for r in 0 .. 200 {\n for i in 0 .. 1000 { t += (i * r) % 11 }\n }\n print(t)\n}\n";
  Run a = run(p, nullptr);
  Run b = run(p, &background);
  check_same(a, b);
  CHECK(b.compiled == 2);
  CHECK(b.native == 2);  // the inline check at the next pass enters the native code
  pure::jit::Stats s = background.stats();
  CHECK(s.compiled == 2);
  CHECK(s.native_instructions == s.instructions);
  CHECK(s.compile_ms > 0);
}

TEST_CASE("jit: a cancelled compile gives up (a run that ends never waits for a whole compile)") {
  using namespace pure;
  std::unique_ptr<vm::Program> program = test::compile_module("fn main() {\n var t = 0\n for i in 0 .. 10 { t += i }\n print(t)\n}\n", "t.pure");
  const vm::Function& main = program->functions[static_cast<size_t>(program->main)];
  REQUIRE(main.loops.size() == 1);
  std::unique_ptr<jit::Backend> backend = jit::native_backend().make();
  std::atomic<bool> cancel{true};
  std::string error;
  bool compiled = backend->compile(main, 0, error, &cancel) != nullptr;
  CHECK(!compiled);
  CHECK(error == "cancelled");
  cancel = false;
  error.clear();
  compiled = backend->compile(main, 0, error, &cancel) != nullptr;
  CHECK(compiled);
  CHECK(error == "");
}
