// tests/jit/test_jit.cpp — the JIT of this build (LLVM on x86-64, asmjit on AArch64, through
// jit::native_backend()) against the interpreter, the basics: every program runs once by the
// interpreter and once with the JIT compiling each loop the first time it is entered (inline, so
// native code runs from the loop's second pass on); output, runtime errors (message, location,
// stack), leaked texts and step budgets must agree: compiled loops, entry constants, runtime
// errors and budgets inside them, standard functions' steps, every example, cancelled calls.
// Also doctest's main for the tests/jit executable (its other files: test_lists.cpp,
// test_tiers.cpp, test_stored.cpp, test_fuzz.cpp; shared helpers in jit_support.h).
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "tests/jit/jit_support.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: every instruction that changes the frame leaves to the interpreter; none runs through pure_step") {
  // CALL_PLAIN (a loader-fused call) once ran through pure_step and returned inside the callee
  int frame_ops = 0;
#define PURE_OP(name, flags, inverse, doc)                                                  \
  if (pure::ir::op_changes_frame(pure::ir::Op::name)) {                                     \
    ++frame_ops;                                                                           \
    CHECK_MESSAGE(pure::jit::native_backend().lowering_of(pure::ir::Op::name) == pure::jit::Lowering::Exit, #name); \
  }
#include "ir/ops.def"
#undef PURE_OP
  CHECK(frame_ops >= 3);
  CHECK(pure::jit::native_backend().lowering_of(pure::ir::Op::FAIL) == pure::jit::Lowering::Exit);
}

TEST_CASE("jit: loops compile to native code and give the interpreter's results") {
  const char* sum = "fn main() {\n var t = 0\n for i in 0 .. 1000 { t += i * i % 7 }\n print(t)\n}\n";
  Run r = both(sum);
  CHECK(r.output == "2001\n");
  CHECK(r.compiled == 1);

  const char* mandel = R"(fn iterations(cr: num, ci: num, limit: int) -> int {
  var zr = 0.0
  var zi = 0.0
  var count = 0
  while count < limit and zr * zr + zi * zi <= 4.0 {
    let next_real = zr * zr - zi * zi + cr
    zi = 2.0 * zr * zi + ci
    zr = next_real
    count += 1
  }
  return count
}
fn main() {
  var total = 0
  var acc = 0.0
  for y in 0 .. 30 {
    let ci = num(y) * 3.0 / 30.0 - 1.5
    for x in 0 .. 30 {
      let cr = num(x) * 3.0 / 30.0 - 2.0
      total += iterations(cr, ci, 200)
      acc = acc * 0.5 + cr * ci / 3.0 - num(total % 13) % 2.5
    }
  }
  print("{total} {acc} {int(acc * 1000.0)}")
}
)";
  r = both(mandel);
  CHECK(r.compiled >= 2);

  // nested loops, break, continue, return from inside a loop, num compares with NaN
  const char* control = R"(fn find(n: int) -> int {
  var i = 0
  while i < 1000 {
    if i * i > n { return i }
    i += 1
  }
  return -1
}
fn main() {
  var s = 0
  for i in 0 .. 40 {
    if i % 3 == 0 { continue }
    if i > 35 { break }
    var j = i
    while j > 0 { s += j / 2 - j % 5
 j -= 3 }
  }
  let nan = 0.0 / 0.0
  var c = 0
  for k in 0 .. 10 { if not (nan < 1.0) { c += 1 }
 if nan != nan { c += 10 }
 if num(k) >= 4.5 { c += 100 } }
  print("{s} {find(5000)} {c} {-7 / 2} {-7 % 2} {7 % -1}")
}
)";
  r = both(control);
  CHECK(r.compiled >= 2);
}

// A caller's constants hoisted into its entry block, and an inlined leaf's hoisted into the call
// area (ir/inline.cpp), are entry constants (jit::entry_constants): native code uses their values
// (LLVM folds `/ 2` into a shift, `% 50` into a multiply) and neither stores nor reloads them.
const char* kEntryConstants = R"(fn half_plus(i: int, j: int) -> int {
  let ij = i + j
  return ij * (ij + 1) / 2 + i % 3 - 7
}
fn zero_div(a: int) -> int {
  let z = 0
  return a / z
}
fn deep(x: int) -> int {
  if x <= 0 { return 1 }
  return half_plus(x, 1) % 1000 + deep(x - 1) % 5
}
fn leaves_only(n: int, far: int) -> int {
  var t = 0
  for i in 0 .. n {
    t += half_plus(i, far) % 1000003
    if far < -1 and i == n - 2 { t += zero_div(i) }
  }
  return t
}
fn main(args: seq text) {
  var best = 5
  var total = 0
  let far = parse_int(args[0])
  for i in 0 .. 300 {
    total += half_plus(i, far) - best
    if i % 50 == 0 { best = deep(i % 7) }
    if i == 280 and far == -1 { total += zero_div(i) }
  }
  print("{total} {best} {leaves_only(400, far)}")
}
)";

TEST_CASE("jit: entry constants: which slots, and native code using their values gives the interpreter's bytes") {
  using namespace pure;
  std::unique_ptr<vm::Program> program = test::compile_module(kEntryConstants, "t.pure");
  auto function = [&](const std::string& name) -> const vm::Function& {
    for (const vm::Function& f : program->functions)
      if (f.name == name) return f;
    FAIL("no function " << name);
    return program->functions.front();
  };
  // the slots CONST writes in the entry block, each checked against the analysis: constant unless
  // something else writes it
  for (const char* name : {"main", "leaves_only"}) {
    const vm::Function& f = function(name);
    jit::EntryConstants c = jit::entry_constants(f);
    REQUIRE(c.constant.size() == f.stack_need + 1u);
    uint32_t found = 0;
    for (uint32_t s = 0; s < c.constant.size(); ++s) {
      if (!c.is(s)) continue;
      ++found;
      uint32_t writes = 0;
      for (uint32_t pc = 0; pc < f.code.size(); ++pc)
        if (f.code[pc].a == s && ir::op_mode(f.code[pc].op, 0) == ir::OperandMode::Write) {
          ++writes;
          CHECK(f.code[pc].op == vm::Op::CONST);
          CHECK(pc < f.blocks[0].end_pc);
          CHECK(f.code[pc].imm == c.value[s]);
        }
      CHECK(writes == 1);
      CHECK(s >= f.param_slots);
    }
    CHECK_MESSAGE(found >= 3, name);  // main: 50, 0, 7, 280; leaves_only: the leaves' 2, 3, 0
  }
  // main's `best` is set in the loop (a plain call's result), its loop constants inside the loop:
  // none of those slots is an entry constant
  const vm::Function& main_fn = function("main");
  jit::EntryConstants c = jit::entry_constants(main_fn);
  for (uint32_t pc = main_fn.blocks[0].end_pc; pc < main_fn.code.size(); ++pc)
    if (ir::op_mode(main_fn.code[pc].op, 0) == ir::OperandMode::Write) CHECK_FALSE(c.is(main_fn.code[pc].a));
  // the leaf-only function's hoisted constants live in its call area
  const vm::Function& leaves = function("leaves_only");
  jit::EntryConstants lc = jit::entry_constants(leaves);
  bool in_call_area = false;
  for (uint32_t s = leaves.frame_slots; s < lc.constant.size(); ++s) in_call_area |= lc.is(s) && lc.value[s] == 2;
  CHECK(in_call_area);

  // far: the run's end; both loops compiled natively when it is reached, and the first to fault
  //   3            ends well (main's and leaves_only's loops)
  //   -1           main's loop: zero_div's `a / z` divides by its constant 0
  //   -2           leaves_only's loop: the same, with the leaf's constants hoisted to the call area
  //   3037000499   main's loop, its second pass: `ij * (ij + 1)` overflows before the `/ 2`
  struct Case {
    const char* far;
    uint32_t compiled;
    bool failed;
  };
  for (const Case& k : {Case{"3", 2, false}, Case{"-1", 1, true}, Case{"-2", 2, true}, Case{"3037000499", 1, true}}) {
    CAPTURE(k.far);
    Config config;
    config.args = {k.far};
    Run r = both(kEntryConstants, config);
    CHECK(r.compiled == k.compiled);
    CHECK(r.failed == k.failed);
  }
}

TEST_CASE("jit: runtime errors inside compiled loops stop at the same instruction with the same message") {
  const char* programs[] = {
      // int overflow of +, *, -, unary - and / inside loops
      "fn main() {\n var x = 1\n for i in 0 .. 100 { x = x * 3 }\n print(x)\n}\n",
      "fn main() {\n var x = 9223372036854775000\n var i = 0\n while i < 5000 { x += i\n i += 1 }\n print(x)\n}\n",
      "fn main() {\n var x = -9223372036854775000\n for i in 0 .. 5000 { x -= i }\n print(x)\n}\n",
      "fn main() {\n var m = -9223372036854775800\n for i in 0 .. 10 { m -= 1\n print(-m) }\n}\n",
      "fn main() {\n var m = -9223372036854775807 - 1\n for i in 0 .. 10 { print(m / (i - 3)) }\n}\n",
      // division by zero, % by zero
      "fn main() {\n var t = 0\n for i in 0 .. 10 { t += 100 / (5 - i) }\n print(t)\n}\n",
      "fn main() {\n var t = 0\n for i in 0 .. 10 { t += 100 % (7 - i) }\n print(t)\n}\n",
      // int(num) out of range, index out of range (through pure_step)
      "fn main() {\n var x = 1.0\n for i in 0 .. 100 { x = x * 1000.0\n print(int(x)) }\n}\n",
      "fn main() {\n let xs = [1, 2, 3]\n var t = 0\n for i in 0 .. 10 { t += xs[i] }\n print(t)\n}\n",
      // a fault in a function called from inside a loop, with the loop's frame on the stack
      "fn f(x: int) -> int { return 10 / x }\nfn main() {\n var t = 0\n for i in 0 .. 10 { t += f(3 - i) }\n print(t)\n}\n",
  };
  for (const char* program : programs) {
    std::string p = program;
    CAPTURE(p);
    Run r = both(p);
    CHECK(r.failed);
    CHECK(r.compiled >= 1);
  }
  Run r = both("fn main() {\n var x = 1\n for i in 0 .. 100 { x = x * 3 }\n print(x)\n}\n");
  CHECK(contains(r.error, "integer overflow: 4052555153018976267 * 3 does not fit in 64 bits"));
}

TEST_CASE("jit: a budget spent inside a compiled loop stops both engines at the same step") {
  const char* p = R"(fn g(n: int) -> int {
  var s = 0
  for k in 0 .. n { s += k }
  return s
}
fn main() {
  var t = 0
  for i in 0 .. 6 {
    var j = 0
    while j < i { t += g(j)
 j += 1 }
    for k in 0 .. 3 { t += k }
  }
  print(t)
}
)";
  uint64_t need = interpreter_need(p, 10000);
  CHECK(need > 50);
  // every budget up to 25 (spent in the first passes) and every one just below and at the need
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b <= 25; ++b) budgets.push_back(b);
  for (uint64_t b = need - 20; b <= need + 1; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
  // an event that spends its budget inside a compiled loop fails alone; main goes on
  const char* ev = R"(list counts by k: int { n: int = 0 }
event spin(n: int) {
  var i = 0
  while i < n { counts[i % 3].n += 1
 i += 1 }
}
fn main() {
  var done = 0
  for r in 0 .. 5 {
    let o = spin(r * 40)
    if o.ok { done += 1 } else { print(o.reason) }
  }
  var t = 0
  for c in counts { t += c.n }
  print("{done} {t}")
}
)";
  for (uint64_t budget : {30u, 75u, 100u, 1000u}) {
    CAPTURE(budget);
    Config c;
    c.max_steps = budget;
    both(ev, c);
  }
}

// Issue 31 item 10: standard functions spend steps for their work (vm/exec.h: spend_work), in the
// shared code every engine runs them through, so a budget spent inside one stops the interpreter
// and the JIT at the same call with the same message.
TEST_CASE("jit: standard functions spend steps for their bytes and items, the same in every engine") {
  // 10 passes of a replace on 6,400 bytes: 100 steps to read them, 125 to make 8,000 bytes
  const char* p = R"(fn main() {
  let t = "abcd".repeat(1600)
  var n = 0
  for i in 0 .. 10 {
    let u = t.replace("a", "cc")
    n += u.byte_len()
  }
  print(n)
}
)";
  uint64_t need = interpreter_need(p, 100000);
  // repeat's 6,400 bytes (100), the loop's 11 checks and 10 x 225 for the replaces (main's own
  // call is the run's, not counted)
  CHECK(need == 100 + 11 + 10 * 225);
  check_budgets_alike(p, {1, 2, 100, 101, 102, 500, need - 225, need - 1, need, need + 1}, need);
  Run r = run_with_budget(p, need - 2, &eager_jit());  // need - 1 ends at the loop's last check
  CAPTURE(r.error);
  CHECK(contains(r.error, "t.pure:5:14: runtime error: step budget spent"));
  CHECK(r.compiled == 1);
  // list and text functions together: every budget around the need alike in both engines
  const char* q = R"(fn main() {
  let words = "delta alpha charlie bravo echo foxtrot golf ".repeat(40).words()
  var total = 0
  for i in 0 .. 6 {
    let xs = repeat(i, 300)
    xs.sort()
    let s = join(words, "-").upper()
    total += xs.sum() + s.find("GOLF") + s.byte_len()
    if words.contains("zulu") { total += 1 }
    total += s.split("-").count() + s.len()
  }
  print(total)
}
)";
  uint64_t need_q = interpreter_need(q, 1000000);
  CHECK(need_q > 6 * 300 * 9);  // sort alone: 300 items, each about 9 comparisons, 6 times
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b <= 40; ++b) budgets.push_back(b * need_q / 40);
  for (uint64_t b = need_q - 5; b <= need_q + 1; ++b) budgets.push_back(b);
  check_budgets_alike(q, budgets, need_q);
}

// ---- every example -------------------------------------------------------------------------------

TEST_CASE("jit: every example gives the interpreter's results with every loop compiled on entry") {
  std::vector<pure::test::Example> examples = pure::test::read_examples(PURE_EXAMPLES_DIR);
  REQUIRE(!examples.empty());
  uint32_t compiled = 0;
  for (const pure::test::Example& e : examples) {
    CAPTURE(e.path.filename().string());
    Config c;
    c.max_steps = e.max_steps;
    c.input = e.input;
    c.args = e.args;
    Run a = run(e.text, nullptr, c);
    Run b = run(e.text, &eager_jit(), c);
    if (!a.compile_errors.empty()) {
      CHECK(a.compile_errors == b.compile_errors);
      continue;
    }
    check_same(a, b);
    compiled += b.compiled;
  }
  CHECK(compiled > 0);
}

// RunOptions::cancel (pure-serve's --query-timeout-ms, a client gone): the budget comes in slices
// of limits::kStepSlice steps and the flag is looked at only when one runs out, in the
// interpreter's budget_spent, which native code reaches through pure_step at a LOOP or ITER_NEXT
// with no steps left.
TEST_CASE("jit: a cancelled call stops at the end of its first slice of steps, alike in both engines") {
  // prints every 2^16 passes; uncancelled it would print 48 lines (3 slices' worth of passes)
  const std::string text = "fn main() {\n  var s = 0\n  for i in 0 .. 3145728 {\n"
                           "    if i % 65536 == 0 { print(i) }\n    s += i\n  }\n  print(s)\n}\n";
  static std::atomic<const char*> flag{"cancelled: the test's reason"};
  Config c;
  c.max_steps = 100'000'000;
  c.cancel = &flag;
  Run r = both(text, c);
  CHECK(r.failed);
  CHECK(contains(r.error, "runtime error: cancelled: the test's reason"));
  CHECK(r.compiled >= 1);  // the loop ran in native code until the slice ran out
  // stopped within the first slice: at most kStepSlice passes, so at most 16 lines
  size_t lines = std::count(r.output.begin(), r.output.end(), '\n');
  CHECK(lines >= 1);
  CHECK(lines <= static_cast<size_t>(pure::limits::kStepSlice / 65536));
  // without the message the same run goes through every slice to its end
  static std::atomic<const char*> unset{nullptr};
  c.cancel = &unset;
  Run whole = both(text, c);
  CHECK(!whole.failed);
  CHECK(std::count(whole.output.begin(), whole.output.end(), '\n') == 49);
}

TEST_CASE("jit: a call that may be cancelled spends the same steps and hits the same budget as one that may not") {
  // a loop of 1.5 slices of passes and a standard function's work across a slice's end
  const std::string text = "fn main() {\n  var s = 0\n  for i in 0 .. 1572864 { s += i }\n"
                           "  let t = \"ab\".repeat(40000000)\n  print(s + t.byte_len())\n}\n";
  static std::atomic<const char*> unset{nullptr};
  uint64_t need = interpreter_need(text, 4 * static_cast<uint64_t>(pure::limits::kStepSlice));
  CHECK(need > static_cast<uint64_t>(pure::limits::kStepSlice));
  const uint64_t slice = static_cast<uint64_t>(pure::limits::kStepSlice);
  for (uint64_t budget : {slice - 1, slice, slice + 1, 2 * slice, need - 1, need}) {
    CAPTURE(budget);
    Config plain, sliced;
    plain.max_steps = sliced.max_steps = budget;
    sliced.cancel = &unset;
    Run a = run(text, nullptr, plain);
    Run b = run(text, nullptr, sliced);
    Run j = run(text, &eager_jit(), sliced);
    check_same(a, b);
    check_same(a, j);
    CHECK(a.failed == (budget < need));
    if (a.failed) CHECK(contains(a.error, "step budget spent (" + std::to_string(budget) + " steps;"));
  }
}
