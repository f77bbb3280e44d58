// tests/vm/test_language.cpp — the language's second pass (issue 37) run by the interpreter and by
// the step engine: outcomes passed to functions, sort_by with several keys and directions (against
// a reference sort), clearing stored lists and ranges over text keys, reads that may find nothing.
// Depends on tests/vm/vm_support.h and tests/support/sort_model.h.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/sort_model.h"
#include "tests/vm/vm_support.h"

using pure::test::both_engines;
using pure::test::Engine;
using pure::test::Outcome;
using pure::test::output_of;
using pure::test::run_program;
using pure::test::RunConfig;

TEST_CASE("vm: an 'outcome of T' kept in a typed local and passed to a function") {
  const char* p = R"(type Placed { id: int, total: int }
list orders by id: int { total: int }
event place(id: int, total: int) -> Placed {
  if orders.has(id) { fail "order {id} exists" }
  orders[id] = { total: total }
  return { id: id, total: total }
}
event ids() -> seq int {
  let out: seq int = []
  for o in orders { out.push(o.id) }
  return out
}
fn report(r: outcome of Placed) -> text {
  if not r.ok { return "refused: {r.reason}" }
  return "{r.value.id}/{r.value.total}"
}
fn count(r: outcome of seq int) -> int { return r.value.count() }
fn main() {
  for i in 0 .. 4 {
    let r: outcome of Placed = place(i % 3, i * 10)
    print(report(r))
  }
  print(count(ids()))
}
)";
  CHECK(both_engines(p) == "0/0\n1/10\n2/20\nrefused: order 0 exists\n3\n");
}

TEST_CASE("vm: sort_by with several keys, ascending and descending, is the reference's stable sort") {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    pure::test::SortModel m = pure::test::sort_model(seed, 5 + static_cast<int>(seed) * 4, 6, 2);
    CAPTURE(m.program);
    CHECK(both_engines(m.program) == m.expected);
  }
}

TEST_CASE("vm: sort_by(f desc) keeps ties in their order (sort_by then reverse did not)") {
  const char* p = R"(type P { name: text, score: int }
fn main() {
  let xs = [P { name: "a", score: 1 }, P { name: "b", score: 2 }, P { name: "c", score: 1 }, P { name: "d", score: 2 }]
  xs.sort_by(score desc)
  var o = ""
  for x in xs { o = o + x.name }
  let ys = [P { name: "a", score: 1 }, P { name: "b", score: 2 }, P { name: "c", score: 1 }, P { name: "d", score: 2 }]
  ys.sort_by(score)
  ys.reverse()
  var q = ""
  for y in ys { q = q + y.name }
  print("{o} {q}")
}
)";
  CHECK(both_engines(p) == "bdac dbca\n");
}

// 20 events of 50 rows each into group "b", 3 rows into "a": a step budget of 200 per event
// (and for main) lets `rows["a"].clear()` run only if it visits the prefix's rows, not the list's
const char* const kClearing = R"(list rows by (group: text, n: int) { v: int }
list notes seq { t: text }
event add(group: text, from: int, count: int) {
  for n in from .. from + count { rows[group, n] = { v: n } }
  notes.push({ t: "{group}{from}" })
}
event drop(group: text) { rows[group].clear() }
event reset() { rows.clear(); notes.clear() }
fn main() {
  for i in 0 .. 20 { let r = add("b", i * 50, 50) }
  let a = add("a", 0, 3)
  print("{rows.count()} {notes.count()}")
  print(drop("a").ok)
  print("{rows.count()} {rows.first().group}")
  let big = drop("b")
  print(big.reason)
  print(rows.count())
  print(reset().reason)
  print("{rows.count()} {notes.count()}")
}
)";

const std::string kStep = "one step = one loop iteration, one call, or 64 bytes or one item a standard function works through); raise it with --max-steps";

TEST_CASE("vm: clear() and [prefix].clear() of stored lists visit only the rows they remove") {
  RunConfig c;
  c.max_steps = 200;
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    c.engine = engine;
    Outcome o = run_program(kClearing, c);
    CHECK(o.compile_errors == "");
    CHECK(!o.failed);
    // removing 1,000 rows needs 1,000 steps: the event fails with the budget's message and leaves
    // every row; reset (1,000 rows and 21 notes) too
    CHECK(o.output ==
          "1003 21\ntrue\n1000 b\nruntime error at 7:38: step budget spent (200 steps; " + kStep + "\n1000\n"
          "runtime error at 8:21: step budget spent (200 steps; " + kStep + "\n1000 21\n");
  }
  c.max_steps = 10'000;
  c.engine = Engine::Interpret;
  Outcome o = run_program(kClearing, c);
  CHECK(o.output == "1003 21\ntrue\n1000 b\n\n0\n\n0 0\n");
}

TEST_CASE("vm: m.get(k) of a list whose every field has a default reads a missing row as the defaults") {
  const char* p = R"(list counters by name: text { next: int = 1, label: text = "none", w: num = 0.5, on: bool = true }
list prices by (shop: text, item: int) { cents: int }
event bump(name: text) { counters[name].next += 1; counters[name].label = "set" }
query peek(name: text) -> int { return counters.get(name).next }
fn main() {
  print(counters.get("order"))
  print(peek("order"))
  let r = bump("order")
  print(counters.get("order"))
  print(counters.count())
  var t = 0
  for i in 0 .. 100 { t += counters.get(if i % 2 == 0 { "order" } else { "x{i}" }).next }
  print(t)
  let m = list by (a: int, b: int) { n: int = 7 }
  m[1, 2] = { n: 2 }
  print("{m.get(1, 2).n} {m.get(1, 3)} {m.count()}")
  print(prices.get("a", 1))
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    RunConfig c;
    c.engine = engine;
    Outcome o = run_program(p, c);
    // nothing is created by reading; a list with a field without default still says the key is missing
    CHECK(o.output ==
          "{ name: \"order\", next: 1, label: \"none\", w: 0.5, on: true }\n1\n"
          "{ name: \"order\", next: 2, label: \"set\", w: 0.5, on: true }\n1\n150\n2 { a: 1, b: 3, n: 7 } 1\n");
    CHECK(o.failed);
    CHECK(o.message == "no item with key \"a\", 1 in stored list 'prices'");
    CHECK(o.leaked_texts == 0);
  }
}

// A text argument is counted in the call area from the moment it is placed there until the
// callee's frame owns it; a fault in between (the call's own step, a stack overflow, a later
// argument's overflow) must release it. Every budget, both engines, no text left alive.
TEST_CASE("vm: a call stopped between building its text argument and its frame leaks nothing") {
  const char* p = R"(list counters by name: text { n: int = 0 }
event bump(name: text) -> int { counters[name].n += 1; return counters[name].n }
fn main() {
  for i in 0 .. 10 { let r = bump("k{i % 4}") }
  print(counters.count())
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    int stopped_at_call = 0;
    for (uint64_t budget = 1; budget <= 40; ++budget) {
      CAPTURE(budget);
      RunConfig c;
      c.engine = engine;
      c.max_steps = budget;
      Outcome o = run_program(p, c);
      CHECK(o.signal == 0);
      CHECK(o.leaked_texts == 0);
      if (o.failed) CHECK(o.message.find("step budget spent") == 0);
      else CHECK(o.output == "4\n");
      stopped_at_call += o.failed && o.line == 4 && o.col == 30;
    }
    CHECK(stopped_at_call > 0);  // some budgets stop at the event's call itself
  }
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    RunConfig c;
    c.engine = engine;
    Outcome o = run_program(R"(fn f(t: text, n: int) -> int { return t.len() + n }
fn main() {
  var s = 0
  for i in 0 .. 5 { s += f("x{i}", i * 4611686018427387904) }
  print(s)
}
)", c);
    CHECK(o.message.find("integer overflow") == 0);
    CHECK(o.leaked_texts == 0);
    Outcome d = run_program(R"(fn deep(t: text, n: int) -> int { return deep(t, n + 1) + 1 }
fn main() { print(deep("a{1}", 0)) }
)", c);
    CHECK(d.message.find("stack overflow") == 0);
    CHECK(d.leaked_texts == 0);
  }
}

TEST_CASE("vm: m.get(k) else DEFAULT reads a row or the keys with the default's fields") {
  const char* p = R"(list stock by item: text { qty: int, note: text }
event put(item: text, qty: int) { stock[item] = { qty: qty, note: "n{qty}" } }
query qty(item: text) -> int { return (stock.get(item) else { qty: -1, note: "" }).qty }
fn main() {
  let r = put("apple", 3)
  let a = stock.get("apple") else { qty: 0, note: "none" }
  let p = stock.get("pear") else { qty: -1, note: "none" }
  print("{a.item} {a.qty} {a.note} | {p.item} {p.qty} {p.note}")
  let q = stock.get("plum") else a
  print("{q.item} {q.qty} {q.note}")
  var t = 0
  for i in 0 .. 5 { t += (stock.get("k{i}") else { qty: i, note: "" }).qty }
  let seen = list by (x: int, y: int) { n: int, tag: text = "t" }
  seen[1, 2] = { n: 5 }
  let s = seen.get(3, 4) else { n: 9 }
  let h = seen.get(1, 2) else { n: 9 }
  print("{t} {s.x} {s.y} {s.n} {s.tag} {h.n}")
  print("{qty("apple")} {qty("fig")}")
  print(stock.get("fig") else { qty: 1, note: "fig" })
}
)";
  CHECK(pure::test::clean_on_both(p) ==
        "apple 3 n3 | pear -1 none\nplum 3 n3\n10 3 4 9 t 5\n3 -1\n{ item: \"fig\", qty: 1, note: \"fig\" }\n");
  // the default is evaluated only for a missing row: a failing default on a present one never runs
  Outcome o = run_program(R"(list c by k: int { n: int }
event put(k: int) { c[k] = { n: k } }
fn boom() -> int { fail "boom" }
fn main() {
  let r = put(1)
  print((c.get(1) else { n: boom() }).n)
  print((c.get(2) else { n: boom() }).n)
}
)");
  CHECK(o.output == "1\n");
  CHECK(o.message == "failed: boom");
  CHECK(o.line == 3);
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: 'try q(args)' in main gives the query's outcome: its value, or its failure's reason") {
  const char* p = R"(list accounts by name: text { balance: int }
event open(name: text, amount: int) { accounts[name] = { balance: amount } }
query balance(name: text) -> int {
  let a = accounts[name] else fail "no account {name}"
  return a.balance
}
query ratio(a: text, b: text) -> int { return balance(a) / balance(b) }
query names(prefix: text) -> seq text {
  let out: seq text = []
  for a in accounts { out.push("{prefix}{a.name}") }
  if out.count() > 1 { fail "too many: {out.count()}" }
  return out
}
fn main() {
  let r = open("ann", 10)
  let x = try balance("ann")
  let y = try balance("cy")
  print("{x.ok} {x.value} | {y.ok} {y.reason}")
  print(x)
  print(y)
  let n = try names("n:")
  print(n.value)
  let s = open("bob", 0)
  print((try names("n:")).reason)
  print((try ratio("ann", "bob")).reason)
  print((try ratio("bob", "ann")).value + balance("ann"))
  print(y.value)
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    RunConfig c;
    c.engine = engine;
    Outcome o = run_program(p, c);
    CHECK(o.signal == 0);
    CHECK(o.compile_errors == "");
    CHECK(o.output ==
          "true 10 | false no account cy\noutcome { ok: true, reason: \"\", value: 10 }\noutcome { ok: false, reason: \"no account cy\" }\n"
          "[\"n:ann\"]\ntoo many: 2\nruntime error at 7:58: division by zero\n10\n");
    CHECK(o.message == "the event failed, so its outcome has no value (reason: no account cy); check '.ok' before reading '.value'");
    CHECK(o.line == 27);
    CHECK(o.leaked_texts == 0);
  }
  // a query's own step budget spent is caught too; main goes on with its own budget
  RunConfig small;
  small.max_steps = 50;
  Outcome o = run_program(R"(query spin(n: int) -> int {
  var t = 0
  for i in 0 .. n { t += i }
  return t
}
fn main() {
  let a = try spin(10)
  let b = try spin(1000)
  print("{a.value} {b.ok} {b.reason}")
}
)", small);
  CHECK(o.output.find("45 false runtime error at 3:") == 0);
  CHECK(o.output.find("step budget spent (50 steps;") != std::string::npos);
  CHECK(!o.failed);
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: enums print by name as values, fields, keys, list elements and outcomes, stored as positions") {
  const char* p = R"(enum Status { open, shipped, cancelled }
type Order { id: int, status: Status }
list orders by id: int { status: Status = Status.open, qty: int = 0 }
list counts by status: Status { n: int = 0 }
const LAST = Status.cancelled
event place(id: int, qty: int) {
  orders[id] = { qty: qty }
  counts[Status.open].n += 1
}
event move(id: int, to: Status) -> Status {
  let was = orders[id].status
  if was == to { fail "order {id} is already {was}" }
  orders[id].status = to
  counts[was].n -= 1
  counts[to].n += 1
  return was
}
fn main() {
  for i in 0 .. 5 { place(i, i * 2) }
  print(move(1, Status.shipped))
  print(move(1, Status.shipped).reason)
  print(move(3, LAST).value)
  let os: seq Order = []
  for o in orders { os.push(Order { id: o.id, status: o.status }) }
  print(os)
  for c in counts { print("{c.status}={c.n} {text(c.status)}") }
  print([Status.cancelled, Status.open, Status.shipped])
  print("{LAST}")
}
)";
  CHECK(both_engines(p) ==
        "outcome { ok: true, reason: \"\", value: open }\n"
        "order 1 is already shipped\n"
        "open\n"
        "[{ id: 0, status: open }, { id: 1, status: shipped }, { id: 2, status: open }, { id: 3, status: cancelled }, "
        "{ id: 4, status: open }]\n"
        "open=3 open\nshipped=1 shipped\ncancelled=1 cancelled\n"
        "[cancelled, open, shipped]\n"
        "cancelled\n");
}

// take and slice: new lists copied from an event sequence (issue 37 item 8), the receiver unchanged,
// texts retained (nothing leaked at any budget), a bad slice a located runtime error.
const char* const kTakeSlice = R"(type S { name: text, points: int }
fn main() {
  let xs = [5, 3, 8, 1, 9]
  print("{xs.take(2)} {xs.take(9)} {xs.take(0)} {xs.slice(1, 4)} {xs.slice(5, 5)} {xs}")
  let names = "ann bob cy dee".split(" ")
  print(names.slice(1, 3).join("+"))
  print([true, false, true].slice(1, 3))
  var board = [S { name: "a", points: 3 }, S { name: "b", points: 9 }, S { name: "c", points: 5 }]
  board.sort_by(points desc)
  for s in board.take(2) { write("{s.name}{s.points} ") }
  print(board.count())
  print(xs.slice(2, 6))
}
)";

TEST_CASE("vm: take and slice copy part of an event sequence; a slice out of range is a runtime error") {
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    RunConfig c;
    c.engine = engine;
    Outcome o = run_program(kTakeSlice, c);
    CHECK(o.output == "[5, 3] [5, 3, 8, 1, 9] [] [3, 8, 1] [] [5, 3, 8, 1, 9]\nbob+cy\n[false, true]\nb9 c5 3\n");
    CHECK(o.failed);
    CHECK(o.line == 12);
    CHECK(o.message == "slice(2, 6) of a list of 5 items: needs 0 <= lo <= hi <= 5");
    CHECK(o.leaked_texts == 0);
    for (uint64_t budget = 1; budget <= 60; ++budget) {  // each copied item is a step
      CAPTURE(budget);
      c.max_steps = budget;
      Outcome b = run_program(kTakeSlice, c);
      CHECK(b.signal == 0);
      CHECK(b.leaked_texts == 0);
      CHECK(b.failed);
    }
  }
  Outcome neg = run_program("fn main() {\n  let xs = [1, 2]\n  print(xs.take(-1))\n}\n");
  CHECK(neg.message == "take: count -1 is negative");
}
