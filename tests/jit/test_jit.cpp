// tests/jit/test_jit.cpp — the JIT of this build (LLVM on x86-64, asmjit on AArch64, through
// jit::native_backend()) against the interpreter: every program runs once by the
// interpreter and once with the JIT compiling each loop the first time it is entered (inline, so
// native code runs from the loop's second pass on); output, runtime errors (message, location,
// stack), leaked texts and step budgets must agree. A bounded differential fuzzer generates
// random well-typed programs with nested loops, int and num arithmetic near overflow, lists,
// calls, early exits, runtime errors and small budgets.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
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

namespace {

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

Run run(const std::string& text, pure::vm::Tier* tier, const Config& config = {}) {
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
pure::jit::Jit& eager_jit() {
  static pure::jit::Jit jit(pure::jit::native_backend(), [] {
    pure::jit::Options o;
    o.threshold = 0;
    o.synchronous = true;
    o.min_native_share = 0;
    return o;
  }());
  return jit;
}

void check_same(const Run& interp, const Run& jit) {
  CHECK(interp.compile_errors == "");
  CHECK(jit.compile_errors == interp.compile_errors);
  CHECK(jit.output == interp.output);
  CHECK(jit.failed == interp.failed);
  CHECK(jit.error == interp.error);
  CHECK(interp.leaked_texts == 0);
  CHECK(jit.leaked_texts == 0);
}

// Runs by both engines and compares; returns the JIT's run.
Run both(const std::string& text, const Config& config = {}) {
  Run a = run(text, nullptr, config);
  Run b = run(text, &eager_jit(), config);
  check_same(a, b);
  return b;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Run run_with_budget(const std::string& text, uint64_t budget, pure::vm::Tier* tier) {
  Config c;
  c.max_steps = budget;
  return run(text, tier, c);
}

// The interpreter's exact need: the fewest steps with which main runs to its end (bisection in
// [1, hi]).
uint64_t interpreter_need(const std::string& text, uint64_t hi) {
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
void check_budgets_alike(const std::string& text, const std::vector<uint64_t>& budgets, uint64_t need) {
  for (uint64_t budget : budgets) {
    CAPTURE(budget);
    Run a = run_with_budget(text, budget, nullptr);
    Run b = run_with_budget(text, budget, &eager_jit());
    check_same(a, b);
    CHECK(a.failed == (budget < need));
    if (a.failed) CHECK(contains(a.error, "step budget spent"));
  }
}

}  // namespace

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

TEST_CASE("jit: sequence reads, writes and pushes inside compiled loops (in place, growing, out of range)") {
  // ints and nums are read, written and pushed in place; a push that needs room and every text
  // goes through pure_step
  const char* p =
      "fn main() {\n let xs = [1, 2, 3]\n let ys = [0.5]\n let ts = [\"t\"]\n var s = 0\n"
      " for i in 0 .. 100 {\n  xs.push(i * 3)\n  ys.push(num(i) / 4.0)\n  ts.push(text(i % 10))\n"
      "  xs[i] = xs[i + 2] + xs[xs.count() - 1]\n  ys[i] = ys[i] * 2.0\n  s += xs[i % xs.count()]\n }\n"
      " print(\"{s} {xs.count()} {xs[0]} {xs[102]} {ys.count()} {ys[100]} {ts.count()} {ts[100]}\")\n}\n";
  Run r = both(p);
  CHECK(r.compiled == 1);
  CHECK(r.output == "29406 103 3 297 101 24.75 101 9\n");
  // out of range inside the compiled loop: the interpreter's message, at the same instruction
  for (const char* bad : {"xs[i] = 1", "s += xs[i]", "s += xs[2 - i]", "ys[i] = 1.0"}) {  // fault at i = 2 or 3
    CAPTURE(bad);
    std::string q = std::string("fn main() {\n let xs = [1, 2, 3]\n let ys = [0.5, 1.5]\n var s = 0\n"
                                " for i in 0 .. 50 {\n  s += i\n  ") + bad + "\n }\n print(s)\n}\n";
    Run e = both(q);
    CHECK(e.failed);
    CHECK(contains(e.error, "out of range"));
  }
}

TEST_CASE("jit: a loop reading a two-field sequence and a plain one (the AArch64 JIT's plain-list version)") {
  // the AArch64 JIT enters a version without the plain checks only when every list it reads at
  // SEQ_GET/SEQ_SET/SEQ_PUSH is plain at entry; `ps` has two cells per row, so it takes the
  // general version, and `ns` alone the plain one
  const char* mixed = "type P { x: int, y: int }\nfn main() {\n let ps = seq P\n ps.push(P { x: 1, y: 2 })\n"
                      " ps.push(P { x: 3, y: 4 })\n let ns = [5, 6, 7]\n var t = 0\n for i in 0 .. 300 {\n"
                      "  let p = ps[i % 2]\n  ps[i % 2] = p\n  ns[i % 3] = ns[(i + 1) % 3] + p.x\n"
                      "  t += p.x * p.y + ns[i % 3] % 1000\n }\n print(\"{t} {ns[0]} {ns[1]} {ns[2]}\")\n}\n";
  Run r = both(mixed);
  CHECK(r.output == "49350 454 156 457\n");
  CHECK(r.compiled == 1);
  // (`bs` holds ints: a seq bool is narrow, one byte a row, and never plain)
  const char* plain = "fn main() {\n let ns = [5, 6, 7]\n let bs = [1, 0]\n var t = 0\n for i in 0 .. 300 {\n"
                      "  ns[i % 3] = ns[(i + 1) % 3] % 1000 + i\n  if bs[i % 2] == 1 { t += ns[i % 3] }\n  ns.push(i)\n }\n"
                      " print(\"{t} {ns.count()} {ns[0]} {ns[302]}\")\n}\n";
  r = both(plain);
  CHECK(r.compiled == 1);
  // out of range in the plain version: the interpreter's message
  Run e = both("fn main() {\n let ns = [5, 6, 7]\n var t = 0\n for i in 0 .. 10 { t += ns[i] }\n print(t)\n}\n");
  CHECK(e.failed);
  CHECK(contains(e.error, "out of range"));
}

TEST_CASE("jit: seq bool (a narrow list, one byte a row) read and written in compiled loops gives the interpreter's bytes") {
  // the sieve: SEQ_GET and SEQ_SET of bytes in place; a one-bool item's field (SEQ_GET_FIELD,
  // SEQ_SET_FIELD) through the runtime calls; pushes through pure_step
  const char* sieve = R"(type F { on: bool }
fn main() {
  let composite = repeat(false, 5001)
  var count = 0
  for i in 2 .. 5000 {
    if not composite[i] {
      count += 1
      var j = i * i
      while j < 5000 {
        composite[j] = true
        j += i
      }
    }
  }
  let fs: seq F = []
  let xs: seq bool = []
  for i in 0 .. 400 {
    fs.push(F { on: composite[i] })
    xs.push(i % 3 == 0)
    fs[i / 2].on = not fs[i / 2].on
    xs[i / 3] = xs[i] or composite[i + 1]
  }
  var on = 0
  var set = 0
  for i in 0 .. 400 {
    if fs[i].on { on += 1 }
    if xs[i] { set += 1 }
  }
  print("{count} {on} {set} {composite[4998]} {composite[4993]} {xs.count()}")
}
)";
  Run r = both(sieve);
  CHECK(r.output == "669 320 222 true false 400\n");  // 669 primes below 5000 (a Python model gives the rest)
  CHECK(r.compiled >= 4);
  CHECK(r.rejected == 0);
  // out of range on a byte list inside the compiled loop: the interpreter's message, in the
  // loop's version that knows xs is narrow (AArch64: nothing else in the loop) and, with a text
  // built in it (through pure_step), in the general one that checks the narrow flag each time
  for (const char* extra : {"", "  u = \"{s}\"\n"})
    for (const char* bad : {"xs[i] = true", "if xs[i] { s += 1 }", "xs[2 - i] = false"}) {
      CAPTURE(extra);
      CAPTURE(bad);
      std::string q = std::string("fn main() {\n let xs = repeat(true, 3)\n var s = 0\n var u = \"\"\n"
                                  " for i in 0 .. 50 {\n  s += i\n") + extra + "  " + bad +
                      "\n }\n print(\"{s} {u}\")\n}\n";
      Run e = both(q);
      CHECK(e.failed);
      CHECK(contains(e.error, "out of range"));
      CHECK(e.compiled >= 1);
    }
}

TEST_CASE("jit: a budget spent in a compiled loop over a seq bool stops both engines at the same step") {
  const char* p = R"(fn main() {
  let composite = repeat(false, 61)
  var count = 0
  for i in 2 .. 60 {
    if not composite[i] {
      count += 1
      var j = i * i
      while j < 60 {
        composite[j] = true
        j += i
      }
    }
  }
  print("{count} {composite[49]}")
}
)";
  Run full = both(p);
  CHECK(full.output == "17 true\n");  // 17 primes below 60
  uint64_t need = interpreter_need(p, 100000);
  CHECK(need > 100);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b <= 12; ++b) budgets.push_back(b);
  for (uint64_t b = need / 2 - 5; b <= need / 2 + 5; ++b) budgets.push_back(b);
  for (uint64_t b = need - 12; b <= need + 1; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
}

TEST_CASE("jit: a loop compiled all inline takes its slow paths in place (growth, records, out of range, run ends)") {
  // every instruction of the main loop compiles inline; its slow paths (a push that grows, a row
  // of several cells, a read out of range, the end of a leaf run) run through pure_step and the
  // loop goes on natively
  const char* p = R"(list pts by id: int { v: int = 0 }
type R { a: int, b: int }
event fill(n: int) {
  for i in 0 .. n { pts[i].v = i * 5 % 17 }
}
fn main() {
  fill(700)
  let xs = [1, 2, 3]
  let ys = [0.5]
  let rows = [R { a: 1, b: 2 }, R { a: 3, b: 4 }]
  var s = 0
  var t = 0.0
  for i in 0 .. 300 {
    xs.push(i % 7)
    ys.push(num(i) * 0.5)
    xs[i % 5] = xs[i] + s % 100
    t = t + ys[i]
    if i % 50 == 49 {
      let r = rows[i % 2]
      s += r.a * 10 + r.b
    }
    s = (s + xs[(i * 7) % xs.count()]) % 1000003
  }
  for p in pts { s = (s * 3 + p.v + p.id) % 1000003 }
  print("{s} {t} {xs.count()} {ys.count()}")
  var u = 0
  for i in 0 .. 10 { u += xs[i * 60] }
  print(u)
}
)";
  Config c;
  c.max_steps = 10'000'000;
  Run r = both(p, c);
  CHECK(r.failed);  // xs[540] is out of range
  CHECK(contains(r.error, "out of range"));
  CHECK(r.compiled >= 4);
  CHECK(r.output == run(p, nullptr, c).output);
  for (uint64_t budget : {10u, 100u, 299u, 300u, 301u, 302u, 400u, 800u, 1000u}) {
    CAPTURE(budget);
    Config b;
    b.max_steps = budget;
    both(p, b);
  }
}

// Group-by on text keys (issues 11 and 12): `seq text` reads and pushes count references in native
// code, and `counts[w].n += 1` finds its row once (MAP_ENSURE) and reads and writes the field in
// place (jit::rows_known); inserts, longer keys, text fields and missing rows take pure_step.
TEST_CASE("jit: counting by text key and seq text loops compile by default and give the interpreter's bytes") {
  const char* p = R"(fn main() {
  let words = "b a b c b a d a a e b a c".split(" ")
  let counts = list by word: text { n: int = 0 }
  for w in words { counts[w].n += 1 }
  for c in counts { print("{c.word} {c.n}") }
  let pieces = seq text
  for i in 0 .. 40 { pieces.push(words[i * 7 % words.count()]) }
  print(join(pieces, ","))
  let named = list by k: text { name: text = "", n: int = 0 }
  for w in pieces { named[w].name = w + "!"; named[w].n += 2 }
  for c in named { print("{c.k} {c.name} {c.n}") }
  let pairs = list by (a: int, b: text) { n: int = 0 }
  for i in 0 .. 40 { pairs[i % 3, pieces[i]].n += i }
  var total = 0
  for c in pairs { total = total * 7 % 1000003 + c.a + c.n }
  let dense = list by k: int { n: int = 0 }
  for i in 0 .. 3000 { dense[i % 700 * 3].n += i }
  for c in dense { total = (total * 31 + c.k + c.n) % 1000003 }
  print(total)
}
)";
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit by_default(pure::jit::native_backend(), o);
  Run r = run(p, &by_default);
  check_same(run(p, nullptr), r);
  CHECK(!r.failed);
  // at the default share: where compiles are cheap (AArch64) the counting loops and the push loop
  // compile (the walks over keyed lists stay interpreted: ITER_NEXT over an event list steps every
  // row); where they cost much (LLVM), loops made of the runtime's work stay interpreted
  // (BackendKind::call_cost)
  if (pure::jit::native_backend().call_cost == 0) CHECK(r.compiled >= 5);
  else CHECK(r.compiled == 0);
  Run e = both(p);
  CHECK(e.output == r.output);
  // budgets spent anywhere in them stop both engines at the same step
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; b += 37) budgets.push_back(b);
  for (uint64_t d : {0u, 1u, 2u}) budgets.push_back(need - 1 + d);
  check_budgets_alike(p, budgets, need);
}

// A loop over a text's pieces (TEXT_ITER): its ITER_NEXT is a runtime call on both backends
// (pure_jit_iter_next_piece) and is weighed as the runtime's work, so where compiles are cheap (AArch64) the loop compiles
// by default; every engine, budget and share gives the interpreter's bytes (the pieces written
// over in place and the kept ones).
TEST_CASE("jit: loops over a text's pieces compile where compiles are cheap and give the interpreter's bytes") {
  const char* p = R"(fn main() {
  let text = "b a b c b a d a a e b a c b b a"
  let counts = list by word: text { n: int = 0 }
  for w in text.split(" ") { counts[w].n += 1 }
  let kept = seq text
  let words = text.words()
  for i, w in words {
    if i % 3 == 0 { kept.push(w) }
  }
  for c in counts { print("{c.word} {c.n}") }
  print(join(kept, ","))
}
)";
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit by_default(pure::jit::native_backend(), o);
  Run r = run(p, &by_default);
  check_same(run(p, nullptr), r);
  CHECK(!r.failed);
  if (pure::jit::native_backend().call_cost == 0) CHECK(r.compiled >= 1);
  Run e = both(p);  // every loop compiled, whatever its share
  CHECK(e.output == r.output);
  CHECK(e.compiled >= 1);
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; b += 5) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
}

// ITER_NEXT over a text's pieces in native code (jit-aarch64's next_piece and jit-llvm's, both
// through pure_jit_iter_next_piece; the eager JIT here compiles every loop, whatever its share): the
// step spent as the interpreter spends it (at every budget, including one spent on the ITER_NEXT
// itself and on the one that finds no more pieces), the piece written over in place or made anew
// (kept pieces hold the old text), and the memory budget's fault in the middle of a loop (a new
// piece made, slot A written, then the fault): the same bytes, error and leak count either way.
TEST_CASE("jit: ITER_NEXT over a text's pieces spends the interpreter's steps and faults on its memory budget") {
  const char* p = R"(fn main() {
  let text = "pear fig apple kiwi plum date lime yuzu sloe pear fig apple kiwi plum date lime yuzu sloe quince"
  let kept = seq text
  var n = 0
  for w in text.split(" ") {
    n += w.len()
    if n % 3 == 0 { kept.push(w) }
  }
  for i, w in text.words() {
    if i % 2 == 1 { kept.push("{w}{w}{w}{w}{w}{w}") }
  }
  print("{n} {kept.count()} {join(kept, ",")}")
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
  // memory budgets from below the program's first text to above its need
  // (faults at both loops' ITER_NEXT, t.pure:5:7 and 9:7, among them)
  int faulted = 0, at_iter_next = 0, finished = 0;
  for (uint64_t m = 64; m < 2400; m += 8) {
    CAPTURE(m);
    Config c;
    c.max_memory = m;
    Run a = run(p, nullptr, c);
    Run b = run(p, &eager_jit(), c);
    check_same(a, b);
    if (a.failed) CHECK(contains(a.error, "memory budget spent"));
    faulted += a.failed;
    at_iter_next += contains(a.error, "t.pure:5:7:") || contains(a.error, "t.pure:9:7:");
    finished += !a.failed;
  }
  CHECK(at_iter_next > 20);
  CHECK(faulted > at_iter_next);
  CHECK(finished > 3);
}

// A split by one byte walked piece by piece (vm/lists.cpp: next_by_byte, the in-place path outside
// the exception frame) hands out exactly the pieces split() makes as a list (text::Pieces): empty
// texts and pieces, separators first and last, pieces across the eight-byte words and longer than
// the reused text's room, multi-byte characters; kept pieces make new texts. Both engines, every
// step budget.
TEST_CASE("jit: a split by one byte walked piece by piece gives split()'s pieces") {
  const char* p = R"(fn main() {
  let texts = seq text
  texts.push("")
  texts.push(",")
  texts.push(",,a,,bb,")
  texts.push("abcdefgh,abcdefghi,abcdefghijklmnopqrstuvwxyz0123,x,abcdefghijklmnopqrstuvwxyz0123456789")
  texts.push("\u{e9},\u{fc},,\u{20ac}uro,na\u{ef}ve,")
  texts.push("no separator at all in this rather long text")
  let kept = seq text
  for t in texts {
    let listed = t.split(",")
    var i = 0
    for w in t.split(",") {
      if w != listed[i] { print("differs at {i}: [{w}] [{listed[i]}]") }
      if i % 3 == 1 { kept.push(w) }
      i += 1
    }
    print("{i} {listed.count()} {join(listed, "|")}")
  }
  print(join(kept, "/"))
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(!contains(r.output, "differs"));
  CHECK(contains(r.output, "6 6 ||a||bb|\n"));
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
}

TEST_CASE("jit: faults in a compiled counting loop (a missing row, an overflow) stop where the interpreter stops") {
  // words is named twice, so the list is made and the loops walk a `seq text` (a loop over the
  // pieces alone, TEXT_ITER, steps its ITER_NEXT: its native share is another matter)
  const char* missing = R"(fn main() {
  let words = "x y x z y x q".split(" ")
  print(words.count())
  let m = list by k: text { n: int = 0 }
  m["x"].n = 1
  m["y"].n = 1
  m["z"].n = 1
  var s = 0
  for w in words { s += m[w].n; m[w].n = s }
  print(s)
}
)";
  const char* overflow = R"(fn main() {
  let words = "x y x z y x".split(" ")
  print(words.count())
  let m = list by k: text { n: int = 0 }
  for w in words { m[w].n += 4611686018427387904 }
  print(m.count())
}
)";
  for (const char* p : {missing, overflow}) {
    CAPTURE(p);
    pure::jit::Options o;
    o.threshold = 0;
    o.synchronous = true;
    pure::jit::Jit by_default(pure::jit::native_backend(), o);
    Run r = run(p, &by_default);
    check_same(run(p, nullptr), r);
    CHECK(r.failed);
    CHECK(r.compiled >= (pure::jit::native_backend().call_cost == 0 ? 1u : 0u));
    Run e = both(p);  // every loop compiled, whatever its share
    CHECK(e.compiled >= 1);
  }
}

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

TEST_CASE("jit: loops over stored lists compile by default where ITER_NEXT is native (leaf runs)") {
  const bool native = pure::jit::native_backend().lowering_of(pure::ir::Op::ITER_NEXT) == pure::jit::Lowering::Native;
  const char* p = "list pts by id: int { v: int = 0 }\nevent fill() {\n for i in 0 .. 4 { pts[i].v = i + 1 }\n}\n"
                  "fn main() {\n fill()\n var t = 0\n for r in 0 .. 20 {\n  for p in pts {\n   t = (t * 31 + p.v * r) % 1000003\n   t = (t * 7 + r) % 1000003\n   t = (t * 5 + 1) % 1000003\n  }\n }\n"
                  " print(t)\n}\n";
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit by_default(pure::jit::native_backend(), o);
  Run r = run(p, &by_default);
  check_same(run(p, nullptr), r);
  CHECK(r.output == both(p).output);
  if (!native) return;  // a backend without native ITER_NEXT keeps such loops interpreted
  CHECK(r.compiled == 2);  // main's two loops (the inner one headed by ITER_NEXT)
  CHECK(r.rejected == 1);  // fill: stored-list writes through pure_step
  // over an event list, or a stored list walked live in an event, ITER_NEXT would run through
  // pure_step at every row: those loops stay interpreted
  const char* q = "list pts by id: int { v: int = 0 }\nevent fill() {\n for i in 0 .. 4 { pts[i].v = i + 1 }\n}\n"
                  "event sum() {\n var t = 0\n for p in pts { t = (t * 31 + p.v) % 1000003 }\n}\n"
                  "fn main() {\n fill()\n let m = list by k: int { v: int = 0 }\n m[3].v = 4\n m[5].v = 6\n var t = 0\n"
                  " for r in 0 .. 20 {\n  let s = sum()\n  for x in m { t = (t * 31 + x.v * r) % 1000003 }\n }\n print(t)\n}\n";
  pure::jit::Jit by_default2(pure::jit::native_backend(), o);
  Run e = run(q, &by_default2);
  check_same(run(q, nullptr), e);
  CHECK(e.compiled == 0);
  CHECK(e.rejected == 4);  // fill, sum's walk, main's walk of m and main's loop that holds it
}

TEST_CASE("jit: an ITER_NEXT whose loop index does not fit in its C is never counted; its loop stays interpreted") {
  // 65600 loops in functions before main (never run), so main's walk of pts has a
  // program-wide index past 16 bits: its ITER_NEXT carries kNoLoopIndex, no loop's counter,
  // parked for ever
  std::string p;
  for (int f = 0; f < 656; ++f) {
    p += "fn f" + std::to_string(f) + "(n: int) -> int {\n var t = 0\n";
    for (int l = 0; l < 100; ++l) p += " for i in 0 .. n { t += i }\n";
    p += " return t\n}\n";
  }
  p += "list pts by id: int { v: int = 0 }\nevent fill() {\n for i in 0 .. 4 { pts[i].v = i + 1 }\n}\n"
       "fn main() {\n fill()\n var t = 0\n for r in 0 .. 20 {\n  for p in pts { t = (t * 31 + p.v * r) % 1000003 }\n }\n"
       " print(t)\n}\n";
  using namespace pure;
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  o.min_native_share = 0;
  pure::jit::Jit jit(pure::jit::native_backend(), o);
  vm::RunOptions options;
  options.tier = &jit;
  int far_heads = 0;
  uint8_t walk_state = 255, outer_state = 255;
  uint32_t walk_hits = 1;
  test::TextRun r = test::run_text(p, options, {}, [&](const vm::Program& program) {
    const vm::Function& main = program.functions[static_cast<size_t>(program.main)];
    for (uint32_t pc = 0; pc < main.code.size(); ++pc) {
      const vm::Instr& in = main.code[pc];
      if (in.op != ir::Op::ITER_NEXT || in.c != vm::kNoLoopIndex) continue;
      ++far_heads;
      for (const vm::BlockInfo& b : main.blocks)
        if (pc >= b.start_pc && pc < b.end_pc && b.loop >= 0) {
          const vm::LoopInfo& walk = main.loops[static_cast<size_t>(b.loop)];
          CHECK(walk.index > 0xFFFF);
          CHECK_FALSE(vm::heads_loop(main, in, static_cast<uint32_t>(b.loop)));
          walk_state = walk.state.load();
          walk_hits = walk.hits.load();
          REQUIRE(walk.parent >= 0);
          outer_state = main.loops[static_cast<size_t>(walk.parent)].state.load();
        }
    }
  });
  CHECK(r.compile_errors == "");
  CHECK(far_heads == 1);
  CHECK(walk_state == static_cast<uint8_t>(vm::LoopState::Interpreted));  // never hot on its own
  CHECK(walk_hits == 0);                                                 // never counted
  CHECK(outer_state == static_cast<uint8_t>(vm::LoopState::Compiled));   // the loop around it is
  CHECK(!r.failure);
  CHECK(r.output == run(p, nullptr).output);
  CHECK(r.output == both(p).output);
}

// Stored lists of several leaves (the runs end mid-walk), rows of 1 to 3 cells, whole lists and
// prefix slices, walked in main (its own snapshot) and in a query (the query's snapshot).
const char* kWalks = R"(list pts by id: int { v: int = 0, w: int = 0 }
list edges by (src: int, dst: int) {}
list keys by k: int {}
list journal seq { amount: int }
event fill(n: int) {
  for i in 0 .. n {
    journal.push({ amount: i % 11 })
    pts[i].v = i * 3 + 1
    pts[i].w = i % 7
    edges[i % 13, i] = {}
    keys[i * 2] = {}
  }
}
query walk(k: int) -> int {
  var t = 0
  for p in pts { t = (t * 31 + p.v * k + p.w + p.id) % 1000003 }
  for e in edges[k] { t = (t * 7 + e.dst - e.src) % 1000003 }
  for x in keys { t = (t + x.k) % 1000003 }
  return t
}
fn main() {
  fill(3000)
  var t = 0
  for r in 0 .. 5 {
    for p in pts { t = (t + p.v * r - p.w) % 1000003 }
    for e in edges[r] { t = (t * 3 + e.dst) % 1000003 }
    for i, j in journal { t = (t + i * j.amount) % 1000003 }
    t = (t + walk(r)) % 1000003
  }
  print(t)
}
)";

TEST_CASE("jit: ITER_NEXT over stored lists of several leaves gives the interpreter's rows") {
  Config c;
  c.max_steps = 100'000'000;
  Run r = both(kWalks, c);
  CHECK(!r.failed);
  CHECK(r.compiled >= 6);
  CHECK(r.output == run(kWalks, nullptr, c).output);
}

TEST_CASE("jit: a budget spent inside a compiled ITER_NEXT loop (mid-run, at a leaf's end) stops both engines alike") {
  auto with_budget = [&](uint64_t budget, pure::vm::Tier* tier) {
    Config c;
    c.max_steps = budget;
    return run(kWalks, tier, c);
  };
  // main, fill and each walk() have budgets of their own: fill needs 3000 steps, a walk about
  // 6300, main about 31500. A prime stride lands in main's walks and the query's, on leaves'
  // last rows and runs' first ones.
  int spent = 0, finished = 0;
  for (uint64_t budget = 2990; budget < 36000; budget += 613) {
    CAPTURE(budget);
    Run a = with_budget(budget, nullptr);
    Run b = with_budget(budget, &eager_jit());
    check_same(a, b);
    if (a.failed) CHECK(contains(a.error, "step budget spent"));
    spent += a.failed;
    finished += !a.failed;
  }
  CHECK(spent > 20);
  CHECK(finished > 5);
}

TEST_CASE("jit: a stored list changed while a compiled loop walks it faults as in the interpreter") {
  // inside an event the loop walks the live list: adding or removing a row is an error at the
  // next ITER_NEXT; changing a field is not
  const char* p = R"(list pts by id: int { v: int = 0 }
event fill(n: int) {
  for i in 0 .. n { pts[i].v = i }
}
event grow(at: int) {
  var t = 0
  for p in pts {
    t += p.v
    pts[p.id].v = p.v + 1
    if p.id == at { pts[100000 + at] = { v: 1 } }
  }
}
event shrink(at: int) {
  for p in pts {
    if p.id == at { pts.remove(at + 1) }
  }
}
fn main() {
  fill(1000)
  for at in [0, 5, 500, 998] {
    let a = grow(at)
    let b = shrink(at)
    print("{a.ok} {a.reason} {b.ok} {b.reason}")
  }
  var t = 0
  for p in pts { t += p.v }
  print(t)
}
)";
  Config c;
  c.max_steps = 10'000'000;
  Run r = both(p, c);
  CHECK(!r.failed);
  CHECK(contains(r.output, "was changed (an item added or removed) while a loop was walking it"));
  CHECK(r.compiled >= 3);
}

// A breadth-first search in a query (bench/bfs): the outer loop starts and ends a prefix walk of
// a stored list per node (ST_ITER, ITER_END) and refills its leaf runs (ITER_NEXT), all through
// the runtime calls of jit-common/runtime_calls.h in native code. Nodes without edges (empty
// prefixes), prefixes past the last row and runs that cross leaves are all in it.
const char* kSearch = R"(list edges by (src: int, dst: int) {}
event add(lo: int, hi: int, n: int) {
  for i in lo .. hi {
    if i % 9 != 4 {
      for j in 0 .. i % 5 + 1 { edges[i, (i * 7 + j * 131 + 3) % (n + 3)] = {} }
    }
  }
}
query search(start: int, nodes: int) -> text {
  let depth = repeat(-1, nodes)
  let queue = seq int
  depth[start] = 0
  queue.push(start)
  var head = 0
  var sum = 0
  while head < queue.count() {
    let v = queue[head]
    head += 1
    let d = depth[v]
    sum += d * (v % 13 + 1)
    for e in edges[v] {
      if depth[e.dst] < 0 {
        depth[e.dst] = d + 1
        queue.push(e.dst)
      }
    }
  }
  return "{queue.count()} {sum}"
}
fn main() {
  for c in 0 .. 6 {
    let r = add(c * 100, c * 100 + 100, 600)
    print("{r.ok} {r.reason}")
  }
  for s in [0, 1, 7, 250, 599, 601] { print(search(s, 603)) }
}
)";

TEST_CASE("jit: a BFS query (ST_ITER, leaf-run refills and ITER_END in native code) gives the interpreter's bytes and faults") {
  Config c;
  c.max_steps = 10'000'000;
  Run r = both(kSearch, c);
  CHECK(!r.failed);
  CHECK(r.compiled >= 2);
  CHECK(r.output == run(kSearch, nullptr, c).output);
  CHECK(!contains(r.output, "false"));
  // budgets spent at every kind of instruction of the walk: at a row of a run, at a refill, at
  // the end of a prefix, around ST_ITER and ITER_END (each event and query has a budget of its
  // own: an add needs about 500 steps, a search about 3450, 603 of them for its repeat(-1, 603))
  int spent = 0, finished = 0;
  for (uint64_t budget = 500; budget < 3700; budget += 23) {
    CAPTURE(budget);
    Config b;
    b.max_steps = budget;
    Run x = run(kSearch, nullptr, b);
    Run y = run(kSearch, &eager_jit(), b);
    check_same(x, y);
    if (x.failed) CHECK(contains(x.error, "step budget spent"));
    spent += x.failed;
    finished += !x.failed;
  }
  CHECK(spent > 60);
  CHECK(finished > 3);
}

// The store's flat-form policy for one test: forms on (a 64 MiB budget, built after `seeks`
// prefix seeks) or off (budget 0); the policy before is back when the test ends.
struct FlatFormPolicy {
  explicit FlatFormPolicy(uint64_t seeks) : seeks(seeks) {}
  ~FlatFormPolicy() { pure::rt::store::set_flat_policy(before); }
  void set(uint64_t budget) { pure::rt::store::set_flat_policy({budget, seeks, 1u << 30}); }
  pure::rt::store::FlatPolicy before = pure::rt::store::flat_policy();
  uint64_t seeks;
};

// `text` at the budgets lo, lo + step, ... below hi, three ways: the interpreter with flat forms
// off, then on, then the JIT with them on; all three agree (output, error, steps). With `ended`
// empty a run must finish or spend its budget (no other error). Returns how many runs spent the
// budget, and how many finished (with `ended`: stopped with that error).
std::pair<int, int> flat_budget_sweep(FlatFormPolicy& policy, const char* text, uint64_t lo, uint64_t hi, uint64_t step,
                                      const std::string& ended) {
  int spent = 0, finished = 0;
  for (uint64_t budget = lo; budget < hi; budget += step) {
    CAPTURE(budget);
    Config b;
    b.max_steps = budget;
    policy.set(0);
    Run t = run(text, nullptr, b);
    policy.set(64u << 20);
    Run x = run(text, nullptr, b);
    Run y = run(text, &eager_jit(), b);
    check_same(t, x);
    check_same(x, y);
    bool out = contains(x.error, "step budget spent");
    bool end = ended.empty() ? !x.failed : contains(x.error, ended);
    if (ended.empty() && x.failed) CHECK(out);  // no error but the budget
    spent += out;
    finished += end;
  }
  return {spent, finished};
}

// The same BFS with the snapshot's flat form (runtime/store_flat.h) built after 200 prefix seeks:
// in the first search's walk, so each run has seeks of the tree, the build, and seeks served as
// one run each (no cursor). Both engines, and the interpreter with flat forms off, give the same
// bytes, and stop at the same step and fault at every budget.
TEST_CASE("jit: the BFS query over a flat form built mid-search: the same bytes, steps and faults, flat or not") {
  FlatFormPolicy policy(200);
  Config c;
  c.max_steps = 10'000'000;
  policy.set(0);  // flat forms off: the tree's cursors only
  Run tree = run(kSearch, nullptr, c);
  policy.set(64u << 20);
  uint64_t builds = pure::rt::store::flat_builds();
  Run r = both(kSearch, c);
  CHECK(pure::rt::store::flat_builds() == builds + 2);  // one per engine's run
  CHECK(!r.failed);
  CHECK(r.output == tree.output);
  auto [spent, finished] = flat_budget_sweep(policy, kSearch, 500, 3700, 37, "");
  CHECK(spent > 40);
  CHECK(finished > 3);
  CHECK(pure::rt::store::flat_builds() > builds + 2);
}

// vm::st_iter's flat-form path (a query's walk of a one-cell prefix, text-free rows, the iterator
// stack with room): nested walks (the inner one's iterator above the outer's, the stack grown by
// the general path first), a walk left by `break` and by `return` mid-run, empty prefixes and keys
// past the last row. Flat forms on (built after 50 seeks, in the first query) and off give the
// same bytes in both engines, and the same step and fault at every budget.
const char* kNestedWalks = R"(list edges by (src: int, dst: int) { w: int = 0 }
event add(n: int) {
  for i in 0 .. n {
    if i % 7 != 3 {
      for j in 0 .. i % 4 + 1 { edges[i, (i * 5 + j * 17 + 1) % n] = { w: i * j % 11 } }
    }
  }
}
query first_heavy(v: int) -> int {
  for e in edges[v] {
    if e.w > 6 { return e.dst }
  }
  return -1
}
query walks(lo: int, hi: int) -> int {
  var t = 0
  for v in lo .. hi {
    for e in edges[v] {
      t = (t * 3 + e.dst + e.w) % 1000003
      for f in edges[e.dst] {
        if f.w == 5 { break }
        t = (t + f.dst * 7 + f.w) % 1000003
      }
    }
    for e in edges[v + 1000] { t += 1 }
  }
  return t
}
fn main() {
  let r = add(400)
  print("{r.ok}")
  var t = 0
  for k in 0 .. 40 { t = (t * 11 + first_heavy(k * 9 % 400) + 2) % 1000003 }
  print(t)
  print(walks(0, 200))
  print(walks(150, 420))
}
)";

TEST_CASE("jit: nested, broken-off and returned-from prefix walks of a query over a flat form: the same bytes, steps and faults") {
  FlatFormPolicy policy(50);
  Config c;
  c.max_steps = 10'000'000;
  policy.set(0);  // flat forms off: the tree's cursors only
  Run tree = run(kNestedWalks, nullptr, c);
  CHECK(!tree.failed);
  policy.set(64u << 20);
  uint64_t builds = pure::rt::store::flat_builds();
  Run r = both(kNestedWalks, c);
  CHECK(pure::rt::store::flat_builds() > builds);
  CHECK(!r.failed);
  CHECK(r.output == tree.output);
  CHECK(r.compiled >= 3);
  auto [spent, finished] = flat_budget_sweep(policy, kNestedWalks, 100, 4000, 193, "");
  CHECK(spent > 5);
  CHECK(finished > 3);
}

// The AArch64 JIT walks a flat form's prefix without an iterator (jit-aarch64/a64_walks.cpp,
// plan_walks) and makes the iterator only when it leaves in the middle of a walk: here at a call
// in the walk's body (the interpreter goes on with the walk, and the inner loop's native code
// takes it up again), at a division by zero, at `return` and at every budget. Flat forms on
// (built after 50 seeks, in the first query) and off give the same bytes in both engines.
const char* kWalksLeft = R"(list edges by (src: int, dst: int) { w: int = 0 }
event add(n: int) {
  for i in 0 .. n {
    for j in 0 .. i % 5 + 1 { edges[i, (i * 7 + j * 13 + 1) % n] = { w: (i + j) % 9 } }
  }
}
fn mix(t: int, x: int) -> int {
  var r = t
  for k in 0 .. 2 { r = (r * 3 + x + k) % 1000003 }
  return r
}
query walk_calls(lo: int, hi: int) -> int {
  var t = 0
  for v in lo .. hi {
    for e in edges[v] {
      if e.w == 4 { t = mix(t, e.dst) } else { t = (t * 5 + e.dst + e.w) % 1000003 }
    }
  }
  return t
}
query first_far(lo: int, hi: int, far: int) -> int {
  for v in lo .. hi {
    for e in edges[v] {
      if e.dst - v > far { return e.dst * 1000 + v }
    }
  }
  return -1
}
query walk_divide(lo: int, hi: int, bad: int) -> int {
  var t = 0
  for v in lo .. hi {
    for e in edges[v] { t = (t + 100000 / (e.dst - bad)) % 1000003 }
  }
  return t
}
fn main() {
  let r = add(300)
  print("{r.ok}")
  print(walk_calls(0, 300))
  print(walk_calls(100, 300))
  for f in [250, 200, 150, 100] { print(first_far(0, 300, f)) }
  print(walk_divide(0, 300, -1))
  print(walk_divide(0, 300, 77))
}
)";

// A program that ends in a fault, run with flat forms off (the tree's cursors, interpreted: the
// reference), then on by both engines: the same output and error, flat forms built, at least
// `compiled` loops compiled; then the step-budget sweep lo..hi by step (flat_budget_sweep), with
// more than `min_spent` budgets spent and more than 3 runs ending in `ended`.
void check_walks_against_tree(const char* program, const char* error, const char* output, int compiled, uint64_t lo,
                              uint64_t hi, uint64_t step, const char* ended, int min_spent) {
  FlatFormPolicy policy(50);
  Config c;
  c.max_steps = 10'000'000;
  policy.set(0);  // flat forms off: the tree's cursors only
  Run tree = run(program, nullptr, c);
  CHECK(tree.failed);
  CHECK(contains(tree.error, error));
  CHECK(contains(tree.output, output));
  policy.set(64u << 20);
  uint64_t builds = pure::rt::store::flat_builds();
  Run r = both(program, c);
  CHECK(pure::rt::store::flat_builds() > builds);
  CHECK(r.output == tree.output);
  CHECK(r.error == tree.error);
  CHECK(r.compiled >= compiled);
  auto [spent, finished] = flat_budget_sweep(policy, program, lo, hi, step, ended);
  CHECK(spent > min_spent);
  CHECK(finished > 3);
}

TEST_CASE("jit: prefix walks left in the middle (a call, a fault, return, the budget) over a flat form: the same bytes and faults") {
  check_walks_against_tree(kWalksLeft, "division by zero", "true\n", 4, 100, 6000, 151, "division by zero", 5);
}

// The AArch64 JIT keeps the one walk of a loop in registers (its cursor written to the frame only
// where code leaves or calls), loads only the row's cells some instruction reads before they are
// written again, and in a loop's second version keeps the count and cells of a list nothing in the
// loop replaces or pushes onto in registers (jit-aarch64/a64_slots.cpp, plan_registers): BFS (e.src
// read nowhere), a list read in the walk and pushed onto under another name (new rows past the
// count it read), a list slot the walk replaces (never kept), e.src read only after a `break`, and
// a position out of range of a kept list (its fault). Flat forms on and off, both engines, every
// budget: the same bytes, steps and faults.
const char* kWalkRegisters = R"(list edges by (src: int, dst: int) { w: int = 0 }
event add(lo: int, hi: int, n: int) {
  for i in lo .. hi {
    for j in 0 .. i % 6 + 1 { edges[i, (i * 11 + j * 7 + 3) % n] = { w: (i * j + i) % 5 } }
  }
}
query search(start: int, nodes: int) -> text {
  let depth = repeat(-1, nodes)
  let queue = seq int
  depth[start] = 0
  queue.push(start)
  var head = 0
  var depth_sum = 0
  while head < queue.count() {
    let v = queue[head]
    head += 1
    let d = depth[v]
    depth_sum += d
    for e in edges[v] {
      if depth[e.dst] < 0 {
        depth[e.dst] = d + 1
        queue.push(e.dst)
      }
    }
  }
  return "{queue.count()} {depth_sum}"
}
query grow(n: int) -> int {
  let seen = repeat(0, 8)
  let more = seen
  var t = 0
  var v = 0
  while v < n {
    for e in edges[v] {
      if e.dst < seen.count() { t = (t * 3 + seen[e.dst] + e.w) % 1000003 }
      seen[e.dst % 8] = seen[e.dst % 8] + 1
      if e.w == 2 { more.push(e.dst + v) }
    }
    v += 1
  }
  var h = 0
  for k in 0 .. seen.count() { h = (h * 31 + seen[k]) % 1000003 }
  return (t * 1000 + seen.count()) * 1000003 + h
}
query swap(n: int) -> int {
  let a = repeat(1, 50)
  let b = repeat(2, 50)
  var cur = a
  var t = 0
  var v = 0
  while v < n {
    for e in edges[v] {
      t = (t * 7 + cur[e.dst % 50] + e.src) % 1000003
      if e.w == 1 { cur = b } else { cur = a }
      cur[e.dst % 50] = t % 100
    }
    v += 1
  }
  return t * 10000 + a[7] * 100 + b[9]
}
query first_src(n: int) -> int {
  var t = 0
  var v = 0
  while v < n {
    var last = -1
    for e in edges[v] {
      if e.w == 3 {
        last = e.src
        break
      }
    }
    t = (t * 5 + last + 2) % 1000003
    v += 1
  }
  return t
}
query outside(n: int, size: int) -> int {
  let d = repeat(0, size)
  var t = 0
  var v = 0
  while v < n {
    for e in edges[v] {
      t += d[e.dst] + 1
      d[e.dst] = t % 7
    }
    v += 1
  }
  return t
}
fn main() {
  for k in 0 .. 6 {
    let r = add(k * 50, k * 50 + 50, 300)
    print("{r.ok}")
  }
  print(search(0, 300))
  print(search(17, 300))
  print(grow(300))
  print(swap(300))
  print(first_src(300))
  print(outside(300, 300))
  print(outside(300, 250))
}
)";

TEST_CASE("jit: walks with their cursor in registers and lists kept in registers: the same bytes, steps and faults") {
  check_walks_against_tree(kWalkRegisters, "index 255 is out of range for a sequence of 250 items",
                           "200 1058\n250 1032\n541194822257755\n9878248459\n754078\n3231\n", 6, 300, 2100, 29,
                           "out of range", 30);
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
  std::string big = "fn main() {\n var t = 0\n for i in 0 .. 3 {\n";
  for (int line = 0; line < 12; ++line) big += "  t += i * " + std::to_string(line + 3) + " % " + std::to_string(line + 5) + "\n";
  big += "  var k = 0\n  while k < 500 { t += k % 13\n k += 1 }\n }\n print(t)\n}\n";
  {
    pure::jit::Jit jit(pure::jit::native_backend(), o);
    Run a = run(big, nullptr, c), r = run(big, &jit, c);
    check_same(a, r);
    CHECK(jit.stats().nested == 0);
    CHECK(jit.stats().compiled == 1);
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

// ---- the differential fuzzer ------------------------------------------------------------------------

namespace {

// Random well-typed programs: int variables a b c, num variables x y, a seq int xs, a helper with
// a loop and an early return; nested while/for loops with break and continue, arithmetic near the
// int64 limits, num-to-int conversions, list reads and writes, calls; walks of two stored lists
// (whole, and by a key prefix) in main, in a query and in an event that may add a row to the list
// it walks. Two kinds of program: wild ones (about 3 in 10) drive values to overflow and index
// out of range, and mostly fail early inside a loop; tame ones keep values small (assignments
// reduce mod 1000003, divisors are never 0, indexes are in range, no int(num)), so they run deep
// into nested loops and end normally or on the budget.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) { wild_ = pick(10) < 3; }
  bool wild() const { return wild_; }

  std::string program() {
    std::string s = "fn f(n: int) -> int {\n var s = 0\n var k = 0\n while k < n % 40 {\n s += k * n\n"
                    " if s > 1000000 { return s }\n k += 1\n }\n return s\n}\n";
    s += "list ps by id: int { v: int = 0 }\nlist es by (s: int, d: int) {}\n";
    s += "event fill(n: int) {\n for i in 0 .. n {\n  ps[i].v = i * 7 % 1000\n  es[i % 5, i] = {}\n }\n}\n";
    s += "event touch(at: int) {\n for p in ps {\n  ps[p.id].v = (p.v + 1) % 1000\n"
         "  if p.id == at { ps[at + 100000] = { v: 1 } }\n }\n}\n";
    s += "query sum(k: int) -> int {\n var t = 0\n for e in es[k] { t = (t + e.d * 3 - e.s) % 1000003 }\n"
         " for p in ps { t = (t + p.v) % 1000003 }\n return t\n}\n";
    s += "fn main() {\n";
    s += " let filled = fill(" + std::to_string(pick(700)) + ")\n";
    s += " var a = " + int_const() + "\n var b = " + int_const() + "\n var c = " + int_const() + "\n";
    s += " var x = " + num_const() + "\n var y = " + num_const() + "\n";
    s += " let xs = [1, 2, 3]\n let ys = [0.5]\n let ts = [\"t\"]\n";
    s += block(0, 0, 3 + pick(4));
    s += " print(\"{filled.ok} {a} {b} {c} {x} {y} {xs.count()} {xs[xs.count() - 1]} {ys.count()} {ys[ys.count() - 1]} "
         "{ts.count()} {ts[ts.count() - 1]}\")\n}\n";
    return s;
  }

 private:
  std::mt19937_64 rng_;
  int counter_ = 0;
  bool wild_ = true;
  // An int value a tame program keeps small.
  std::string small(const std::string& e) { return wild_ ? e : "(" + e + ") % 1000003"; }

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  std::string int_var() { return std::string(1, "abc"[pick(3)]); }
  std::string num_var() { return std::string(1, "xy"[pick(2)]); }
  std::string int_const() {
    if (!wild_) return std::to_string(pick(2) ? pick(1000) : pick(10));
    switch (pick(14)) {
      case 0: return "9223372036854775807";
      case 1: return "4611686018427387904";
      case 2: return "3037000499";
      case 3: return "-9223372036854775807";
      case 4: return std::to_string(pick(1000));
      default: return std::to_string(pick(10));
    }
  }
  std::string num_const() {
    const char* k[] = {"0.5", "1.5", "-2.25", "1e300", "3.0", "0.1", "1e-300", "-0.0"};
    return k[pick(wild_ ? 8 : 3)];
  }
  std::string int_expr(int d) {
    if (d <= 0 || pick(3) == 0) return pick(2) ? int_var() : int_const();
    if (!wild_) {  // no overflow (operands stay below about 10^9), no division by 0, in range
      switch (pick(8)) {
        case 0: return pick(2) ? "xs.count()" : "ts.count()";
        case 1: return "xs[(" + int_expr(d - 1) + " % xs.count() + xs.count()) % xs.count()]";
        case 2: return "f(" + int_expr(d - 1) + ")";
        case 3: return "(" + int_expr(d - 1) + " * " + std::to_string(pick(10)) + ")";
        case 4: return "(" + int_expr(d - 1) + (pick(2) ? " / (" : " % (") + int_expr(d - 1) + " % 7 + 8))";
        default: return "(" + int_expr(d - 1) + (pick(2) ? " + " : " - ") + int_expr(d - 1) + ")";
      }
    }
    switch (pick(10)) {
      case 0: return "int(" + num_expr(d - 1) + ")";
      case 4: {
        // bitwise operators; a shift count out of 0..63 faults (the count is often negative)
        const char* ops[] = {" & ", " | ", " ^ ", " << ", " >> "};
        int op = pick(5);
        std::string rhs = op >= 3 ? "(" + int_expr(d - 1) + " % 70)" : int_expr(d - 1);
        return "(" + int_expr(d - 1) + ops[op] + rhs + ")";
      }
      case 1: return pick(2) ? "xs.count()" : "ts.count()";
      case 2: return "xs[" + int_expr(d - 1) + (pick(2) ? " % 5]" : " % (xs.count() + 1)]");
      case 3: return "f(" + int_expr(d - 1) + ")";
      default: {
        const char* ops[] = {"+", "-", "*", "/", "%"};
        return "(" + int_expr(d - 1) + " " + ops[pick(5)] + " " + int_expr(d - 1) + ")";
      }
    }
  }
  std::string num_expr(int d) {
    if (d <= 0 || pick(3) == 0) return pick(2) ? num_var() : num_const();
    if (pick(4) == 0) return "num(" + int_expr(d - 1) + ")";
    if (pick(6) == 0)
      return wild_ ? "ys[" + int_expr(d - 1) + " % (ys.count() + 1)]"
                   : "ys[(" + int_expr(d - 1) + " % ys.count() + ys.count()) % ys.count()]";
    const char* ops[] = {"+", "-", "*", "/"};
    return "(" + num_expr(d - 1) + " " + ops[pick(4)] + " " + num_expr(d - 1) + ")";
  }
  std::string cond(int d) {
    const char* cmp[] = {"<", "<=", "==", "!=", ">", ">="};
    switch (d <= 0 ? pick(2) : pick(5)) {
      case 0: return int_expr(1) + " " + cmp[pick(6)] + " " + int_expr(1);
      case 1: return num_expr(1) + " " + cmp[pick(6)] + " " + num_expr(1);
      case 2: return "not (" + cond(d - 1) + ")";
      case 3: return "(" + cond(d - 1) + " and " + cond(d - 1) + ")";
      default: return "(" + cond(d - 1) + " or " + cond(d - 1) + ")";
    }
  }
  std::string block(int depth, int loops, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += stmt(depth, loops);
    return s;
  }
  std::string stmt(int depth, int loops) {
    std::string ind(static_cast<size_t>(depth + 1), ' ');
    int choice = pick(depth >= 3 ? 8 : 16);
    switch (choice) {
      case 0: case 1: return ind + int_var() + " = " + small(int_expr(2)) + "\n";
      case 2: {
        std::string v = int_var();
        return ind + v + " = " + small(v + (pick(2) ? " + " : " - ") + int_expr(1)) + "\n";
      }
      case 3: return ind + num_var() + " = " + num_expr(2) + "\n";
      case 4:
        // pushes inside loops: native pushes while the sequence has room, pure_step when it grows;
        // a seq text always through pure_step (it counts references)
        switch (loops > 0 ? pick(5) : 2 + pick(3)) {
          case 0: case 1: return ind + "if " + cond(1) + " { " + (pick(2) ? "break" : "continue") + " }\n";
          case 2: return ind + "xs.push(" + int_expr(1) + ")\n";
          case 3: return ind + "ys.push(" + num_expr(1) + ")\n";
          default: return ind + "ts.push(text(" + int_var() + " % 10))\n";
        }
      case 5:
        // reads and writes in range and out of it (both engines fail at the same instruction)
        if (!wild_) {
          std::string i = "(" + int_expr(1) + " % xs.count() + xs.count()) % xs.count()";
          return ind + "xs[" + i + "] = " + small(int_expr(1)) + "\n";
        }
        switch (pick(4)) {
          case 0: return ind + "xs[" + int_expr(1) + " % 4] = " + int_expr(1) + "\n";
          case 1: return ind + "xs[" + int_expr(1) + " % (xs.count() + 1)] = " + int_expr(1) + "\n";
          case 2: return ind + "ys[" + int_expr(1) + " % (ys.count() + 1)] = " + num_expr(1) + "\n";
          default: return ind + "ts[" + int_expr(1) + " % (ts.count() + 1)] = \"u\"\n";
        }
      case 6: return pick(4) == 0 ? ind + "print(\"{a} {x}\")\n" : ind + "c = " + small(int_expr(1)) + "\n";
      case 7: return ind + "if " + cond(1) + " {\n" + block(depth + 1, loops, 1 + pick(2)) + ind + "} else {\n" +
                     block(depth + 1, loops, 1 + pick(2)) + ind + "}\n";
      case 8: {
        std::string v = "i" + std::to_string(counter_++);
        // the counter steps before the body, so `continue` cannot make the loop endless
        return ind + "var " + v + " = 0\n" + ind + "while " + v + " < " + std::to_string(1 + pick(30)) + " {\n" + ind +
               " " + v + " += 1\n" + block(depth + 1, loops + 1, 1 + pick(4)) + ind + "}\n";
      }
      case 9: {
        std::string v = "j" + std::to_string(counter_++);
        return ind + "for " + v + " in 0 .. " + std::to_string(pick(25)) + " {\n" + ind + " a += " + v + "\n" +
               block(depth + 1, loops + 1, 1 + pick(4)) + ind + "}\n";
      }
      case 11: case 12: {
        // values that grow each pass until + - * overflow inside the (by then compiled) loop
        std::string v = "g" + std::to_string(counter_++);
        const char* grow[] = {" * 3 - ", " * 2 + ", " + 1000000000000000000 + ", " - 3000000000000000000 - ",
                              " * -5 + "};
        std::string w = int_var();
        return ind + "for " + v + " in 0 .. " + std::to_string(pick(90)) + " {\n" + ind + " " + w + " = " +
               small(w + grow[pick(5)] + v) + "\n" + ind + " " + num_var() + " = " + num_var() +
               (wild_ ? " * 1.7" : " * 0.7") + " - num(" + v + ")\n" + ind + "}\n";
      }
      case 13: {  // a walk of main's snapshot of a stored list, with a loop body of its own
        std::string v = "p" + std::to_string(counter_++);
        return ind + "for " + v + " in ps {\n" + ind + " a = " + small("a + " + v + ".v * 3 - " + v + ".id") + "\n" +
               block(depth + 1, loops + 1, pick(3)) + ind + "}\n";
      }
      case 14: {  // a key prefix of a stored list
        std::string v = "e" + std::to_string(counter_++);
        return ind + "for " + v + " in es[" + (wild_ ? int_var() + " % 6" : std::to_string(pick(6))) + "] {\n" + ind +
               " b = " + small("b * 2 + " + v + ".d") + "\n" + block(depth + 1, loops + 1, pick(2)) + ind + "}\n";
      }
      case 15:  // walks in a query; an event that walks its live list and may add to it (a fault)
        if (pick(2)) return ind + "c = " + small("c + sum(" + std::to_string(pick(6)) + ")") + "\n";
        return ind + "if touch(" + (pick(2) ? "-1" : std::to_string(pick(800))) + ").ok { a = " + small("a + 1") + " }\n";
      default: {
        std::string v = "w" + std::to_string(counter_++);
        return ind + "for " + v + " in 0 .. " + std::to_string(pick(300)) + " {\n" + ind + " " + num_var() + " = " +
               num_expr(2) + "\n" + ind + " " + int_var() + " = " + int_expr(1) + " % 1000 + " + v + "\n" + ind + "}\n";
      }
    }
  }
};

}  // namespace

TEST_CASE("jit: differential fuzzer (random programs, both engines, several budgets)") {
  int count = 60;
  if (const char* n = std::getenv("PURE_JIT_FUZZ_COUNT")) count = std::atoi(n);
  uint64_t seed = 20261201;
  if (const char* s = std::getenv("PURE_JIT_FUZZ_SEED")) seed = std::strtoull(s, nullptr, 10);
  int compiled = 0, failed = 0, spent = 0, tame = 0, tame_deep = 0;
  for (int i = 0; i < count; ++i) {
    Gen gen(seed + static_cast<uint64_t>(i));
    std::string p = gen.program();
    tame += !gen.wild();
    CAPTURE(seed + static_cast<uint64_t>(i));
    CAPTURE(p);
    for (uint64_t budget : {uint64_t{200000}, uint64_t{1} + (seed + static_cast<uint64_t>(i)) % 400}) {
      CAPTURE(budget);
      Config c;
      c.max_steps = budget;
      Run a = run(p, nullptr, c);
      REQUIRE(a.compile_errors == "");
      Run b = run(p, &eager_jit(), c);
      check_same(a, b);
      compiled += b.compiled;
      failed += a.failed;
      spent += contains(a.error, "step budget spent");
      // a tame program at the big budget ends normally or on the budget: it ran its loops through
      if (!gen.wild() && budget == 200000) tame_deep += !a.failed || contains(a.error, "step budget spent");
    }
  }
  MESSAGE(count << " programs: " << compiled << " loops compiled, " << failed << " runs failed (" << spent
                << " on the budget); " << tame << " tame, " << tame_deep << " of them ran to the end or the budget");
  if (count >= 20) {
    CHECK(compiled > count);
    CHECK(spent > 0);
    CHECK(tame_deep * 10 >= tame * 8);  // tame programs mostly run deep
  }
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
