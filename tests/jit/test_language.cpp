// tests/jit/test_language.cpp — the language's second pass (issue 37) in compiled loops against the
// interpreter: outcomes passed to functions, sort_by with several keys and directions (against a
// reference sort), clearing stored lists and ranges over text keys, reads that may find nothing.
// The same bytes, errors and steps (every budget around the interpreter's need).
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#include "tests/jit/jit_support.h"
#include "tests/support/sort_model.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: an 'outcome of T' passed to a function inside a compiled loop") {
  const char* p = R"(list c by k: int { n: int = 0 }
event bump(k: int) -> int {
  if k % 4 == 3 { fail "no {k}" }
  c[k % 4] = {}
  c[k % 4].n += 1
  return c[k % 4].n
}
fn show(r: outcome of int) -> int { if r.ok { return r.value }; return -1 }
fn main() {
  var t = 0
  for i in 0 .. 40 {
    let r: outcome of int = bump(i)
    t = t * 3 % 1000003 + show(r)
  }
  print(t)
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  uint64_t need = interpreter_need(p, 100000);
  check_budgets_alike(p, {1, need / 2, need - 1, need, need + 1}, need);
}

TEST_CASE("jit: sort_by with several keys and directions in a compiled loop is the reference's stable sort") {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    pure::test::SortModel m = pure::test::sort_model(seed, 6 + static_cast<int>(seed) * 5, 5, 3);
    CAPTURE(m.program);
    Run r = both(m.program);
    CHECK(r.output == m.expected);
    CHECK(r.compiled >= 1);
  }
  pure::test::SortModel m = pure::test::sort_model(99, 30, 4, 2);
  uint64_t need = interpreter_need(m.program, 1000000);
  check_budgets_alike(m.program, {1, need / 2, need - 1, need, need + 1}, need);
}

TEST_CASE("jit: clear() and [prefix].clear() of stored lists inside compiled loops: same rows, steps and rollbacks") {
  const char* p = R"(list rows by (group: int, n: int) { v: int }
list notes seq { t: text }
event churn(rounds: int) {
  for i in 0 .. rounds {
    for n in 0 .. 5 { rows[i % 4, n + i] = { v: n } }
    notes.push({ t: "r{i}" })
    if i % 3 == 2 { rows[(i + 1) % 4].clear() }
    if i % 7 == 6 { notes.clear() }
  }
}
event wipe() { rows.clear(); notes.clear(); fail "undone" }
fn main() {
  for k in 0 .. 6 {
    let r = churn(10 + k)
    var s = 0
    for row in rows { s = s * 7 % 100003 + row.group * 31 + row.n }
    print("{r.ok} {rows.count()} {notes.count()} {s}")
  }
  print(wipe().reason)
  print("{rows.count()} {notes.count()}")
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  CHECK(contains(r.output, "undone\n"));
  // each event has the budget: one spent inside a churn fails that event alone (its rows come
  // back), at the same step in both engines, so the outputs agree at every budget
  for (uint64_t budget : {uint64_t{60}, uint64_t{150}, uint64_t{151}, uint64_t{290}, uint64_t{400}}) {
    CAPTURE(budget);
    Run a = run_with_budget(p, budget, nullptr);
    Run b = run_with_budget(p, budget, &eager_jit());
    check_same(a, b);
  }
  CHECK(contains(run_with_budget(p, 150, nullptr).output, "false"));
}

TEST_CASE("jit: m.get(k) with defaults for missing rows in compiled loops") {
  const char* p = R"(list counters by name: text { next: int = 1, label: text = "none" }
event fill(n: int) { for i in 0 .. n { counters["k{i}"].next += 3 } }
fn main() {
  let r = fill(4)
  var t = 0
  var labels = 0
  for i in 0 .. 200 {
    let c = counters.get("k{i % 7}")
    t += c.next
    labels += c.label.len()
  }
  let m = list by (a: int, b: int) { n: int = 7 }
  for i in 0 .. 50 { if i % 3 == 0 { m[i % 5, i] = { n: i } } }
  var s = 0
  for i in 0 .. 100 { s += m.get(i % 5, i % 50).n }
  print("{t} {labels} {s} {counters.count()} {m.count()}")
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 2);
  uint64_t need = interpreter_need(p, 1'000'000);
  check_budgets_alike(p, {1, need / 2, need - 1, need, need + 1}, need);
}


// A text argument sits counted in the call area from its MOVE_REF until the callee's frame owns
// it: a fault in between (the call's own step, a stack overflow, a later argument's overflow)
// used to leave it there, one leaked text per stopped call.
TEST_CASE("jit: a call stopped between building its text argument and its frame leaks nothing") {
  const char* p = R"(list counters by name: text { n: int = 0 }
event bump(name: text) -> int { counters[name].n += 1; return counters[name].n }
fn main() {
  for i in 0 .. 10 { let r = bump("k{i % 4}") }
  print(counters.count())
}
)";
  Run r = both(p);
  CHECK(r.output == "4\n");
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b <= need + 1; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);

  // a later scalar argument overflows after the text argument was computed
  const char* q = R"(fn f(t: text, n: int) -> int { return t.len() + n }
fn main() {
  var s = 0
  for i in 0 .. 5 { s += f("x{i}", i * 4611686018427387904) }
  print(s)
}
)";
  Run a = run(q, nullptr);
  Run b = run(q, &eager_jit());
  check_same(a, b);
  CHECK(contains(a.error, "integer overflow"));

  // a recursion with a text parameter ends in a stack overflow
  const char* o = R"(fn deep(t: text, n: int) -> int { return deep(t, n + 1) + 1 }
fn main() { print(deep("a{1}", 0)) }
)";
  Run c = run(o, nullptr);
  Run d = run(o, &eager_jit());
  check_same(c, d);
  CHECK(contains(c.error, "stack overflow"));
}

TEST_CASE("jit: m.get(k) else DEFAULT in compiled loops, on lists without defaults") {
  const char* p = R"(list stock by item: text { qty: int, note: text }
event fill(n: int) { for i in 0 .. n { stock["k{i * 2}"] = { qty: i, note: "n{i}" } } }
fn main() {
  let r = fill(6)
  var t = 0
  var notes = 0
  for i in 0 .. 200 {
    let s = stock.get("k{i % 13}") else { qty: 100 + i, note: "missing" }
    t = t * 7 % 100003 + s.qty
    notes += s.note.len()
  }
  let m = list by (a: int, b: int) { n: int }
  for i in 0 .. 50 { if i % 3 == 0 { m[i % 5, i] = { n: i } } }
  var u = 0
  for i in 0 .. 100 { u = u * 5 % 100003 + (m.get(i % 5, i % 50) else { n: -i }).n }
  print("{t} {notes} {u}")
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 2);
  uint64_t need = interpreter_need(p, 1'000'000);
  check_budgets_alike(p, {1, 2, 3, need / 3, need / 2, need - 1, need, need + 1}, need);
}

TEST_CASE("jit: 'try q(args)' in a compiled loop of main: the same outcomes, bytes and steps") {
  const char* p = R"(list stock by item: int { qty: int, note: text }
event fill(n: int) { for i in 0 .. n { stock[i * 3] = { qty: i, note: "n{i}" } } }
query take(item: int, want: int) -> text {
  let s = stock[item] else fail "no item {item}"
  if s.qty < want { fail "only {s.qty} of {item}" }
  var t = ""
  for i in 0 .. want { t = "{t}{i % 10}" }
  return "{s.note}:{t}"
}
fn main() {
  let r = fill(20)
  var good = 0
  var h = 0
  for i in 0 .. 120 {
    let o = try take(i % 50, i % 7)
    if o.ok { good += 1; h = h * 31 % 1000003 + o.value.len() } else { h = h * 17 % 1000003 + o.reason.len() }
  }
  print("{good} {h}")
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  uint64_t need = interpreter_need(p, 1'000'000);
  check_budgets_alike(p, {1, 2, 3, need / 3, need / 2, need - 1, need, need + 1}, need);
}

TEST_CASE("jit: enums compared, stored, used as keys and printed by name inside compiled loops") {
  const char* p = R"(enum Phase { idle, warm, hot, done }
list state by k: int { phase: Phase = Phase.idle }
list tally by phase: Phase { n: int = 0 }
fn step(p: Phase, i: int) -> Phase {
  if p == Phase.idle { return Phase.warm }
  if p == Phase.warm and i % 3 == 0 { return Phase.hot }
  if p == Phase.hot and i % 5 == 0 { return Phase.done }
  return p
}
event run(rounds: int) {
  for i in 0 .. rounds {
    let k = i % 7
    state[k].phase = step(state[k].phase, i)
    tally[state[k].phase].n += 1
  }
}
fn main() {
  let r = run(200)
  if not r.ok { fail r.reason }  // the event's budget spent: main ends with its message
  var s = ""
  var h = 0
  for i in 0 .. 300 {
    let p = state[i % 7].phase
    if p != Phase.idle { h = h * 5 % 1000003 + i }
    if i % 50 == 0 { s = "{s}{p},{Phase.warm};" }
  }
  print(s)
  print(h)
  for t in tally { print("{t.phase}: {t.n}") }
  let ps: seq Phase = []
  for i in 0 .. 40 { ps.push(step(Phase.warm, i)) }
  print(ps)
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  CHECK(contains(r.output, "done,warm;"));
  CHECK(contains(r.output, "[hot, warm, warm, hot,"));
  uint64_t need = interpreter_need(p, 1000000);
  check_budgets_alike(p, {1, need / 2, need - 1, need, need + 1}, need);
}

TEST_CASE("jit: take and slice inside compiled loops: the same bytes, errors and steps") {
  const char* p = R"(fn main() {
  var xs: seq int = []
  var names: seq text = []
  for i in 0 .. 40 {
    xs.push(i * 7 % 13)
    names.push("n{i}")
  }
  var total = 0
  for i in 0 .. 30 {
    let w = xs.slice(i, i + 10)
    total += w.sum() + xs.take(i).count() + names.slice(i, i + 3).join("").len()
  }
  print(total)
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  uint64_t need = interpreter_need(p, 100000);
  check_budgets_alike(p, {1, need / 3, need / 2, need - 1, need, need + 1}, need);
  // a slice out of range inside a compiled loop: the interpreter's located error (both() compares)
  Run bad = both("fn main() {\n  let xs = [1, 2, 3, 4]\n  var t = 0\n  for i in 0 .. 9 { t += xs.slice(i, 3).count() }\n}\n");
  CHECK(bad.failed);
  CAPTURE(bad.error);
  CHECK(contains(bad.error, "t.pure:4:28: "));  // at the method
  CHECK(contains(bad.error, "runtime error: slice(4, 3) of a list of 4 items: needs 0 <= lo <= hi <= 4"));
}
