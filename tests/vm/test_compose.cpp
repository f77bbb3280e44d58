// tests/vm/test_compose.cpp — events that call events (issue 37, item 4), run by the interpreter and
// by the step engine: a plain inner call is part of the caller's transaction (its failure is the
// caller's, every change undone); `try` gives its outcome and undoes the inner event's changes
// only; a fault inside the inner event at every step budget leaves all or nothing.
// Depends on tests/vm/vm_support.h.
#include <doctest/doctest.h>

#include <string>

#include "tests/vm/vm_support.h"

using pure::test::both_engines;
using pure::test::Engine;
using pure::test::Outcome;
using pure::test::output_of;
using pure::test::run_program;
using pure::test::RunConfig;

namespace {

// Stock moved by one shared event; `ship` catches its failure, `move` does not.
const char* kStock = R"(list stock by sku: text { on_hand: int = 0 }
list notes seq { t: text }

event adjust(sku: text, delta: int) -> int {
  stock[sku].on_hand += delta
  notes.push({ t: "{sku} {delta}" })
  let now = stock[sku].on_hand
  if now < 0 { fail "only {now - delta} of {sku}" }
  return now
}

event receive(sku: text, n: int) {
  stock[sku] = {}
  let now = adjust(sku, n)
  notes.push({ t: "received: {now}" })
}

event ship(sku: text, n: int) -> bool {
  notes.push({ t: "ship {sku}" })
  let r = try adjust(sku, 0 - n)
  if not r.ok { notes.push({ t: "short: {r.reason}" }) }
  return r.ok
}

event move(from: text, to: text, n: int) {
  notes.push({ t: "move" })
  let a = adjust(to, n)
  let b = adjust(from, 0 - n)
}

event deep(sku: text) -> text {
  let r = try ship(sku, 100)
  let s = try move("bolt", sku, 9_223_372_036_854_775_807)
  return "{r.value} {s.reason}"
}

fn show() -> text {
  var o = ""
  for s in stock { o = o + " {s.sku}={s.on_hand}" }
  return "{o} |{notes.count()}"
}

fn main() {
  print(receive("nut", 5).ok)
  print(receive("bolt", 2).ok)
  print(ship("nut", 3))
  print(ship("nut", 3))
  print(show())
  print(move("bolt", "nut", 5))
  print(show())
  print(move("nut", "bolt", 1))
  print(deep("nut"))
  print(show())
  for n in notes { print(n.t) }
}
)";

}  // namespace

TEST_CASE("vm: an event calls events: plainly inside its transaction, with try undoing the inner one alone") {
  CHECK(both_engines(kStock) ==
        "true\ntrue\n"
        "outcome { ok: true, reason: \"\", value: true }\n"
        "outcome { ok: true, reason: \"\", value: false }\n"  // its inner adjust undone, its notes kept
        " bolt=2 nut=2 |8\n"
        "outcome { ok: false, reason: \"only 2 of bolt\" }\n"  // the whole move undone: nut's +5 too
        " bolt=2 nut=2 |8\n"
        "outcome { ok: true, reason: \"\" }\n"
        "outcome { ok: true, reason: \"\", value: \"false runtime error at 5:22: integer overflow: 1 + "
        "9223372036854775807 does not fit in 64 bits\" }\n"
        " bolt=3 nut=1 |13\n"
        "nut 5\nreceived: 5\nbolt 2\nreceived: 2\nship nut\nnut -3\nship nut\nshort: only 2 of nut\n"
        "move\nbolt 1\nnut -1\nship nut\nshort: only 1 of nut\n");
}

TEST_CASE("vm: a fault inside an inner event, at every step budget, leaves all of the outer event or none") {
  // `swap` spends no step after its `try` returns: were the budget's fault caught there, swap
  // would commit with its inner event undone. It is not: every budget gives all or nothing.
  const char* p = R"(list cells by k: int { v: int = 0 }
event put(k: int, v: int) {
  for i in 0 .. v { cells[k].v += 1 }
}
event setup() { cells[1] = {}; cells[2] = {} }
event swap() {
  cells[0] = { v: 7 }
  put(1, 3)
  let r = try put(2, 4)
  cells[3] = { v: if r.ok { 1 } else { 2 } }
}
fn main() {
  let s = setup()
  let r = swap()
  var o = ""
  for c in cells { o = o + " {c.k}:{c.v}" }
  print("{r.ok}{o}")
}
)";
  const std::string all = "true 0:7 1:3 2:4 3:1\n", none = "false 1:0 2:0\n";
  int failed = 0, committed = 0;
  for (uint64_t budget = 1; budget <= 30; ++budget) {
    CAPTURE(budget);
    for (Engine engine : {Engine::Interpret, Engine::Step}) {
      RunConfig c;
      c.engine = engine;
      c.max_steps = budget;
      Outcome o = run_program(p, c);
      CHECK(o.signal == 0);
      CHECK(o.compile_errors == "");
      CHECK(o.leaked_texts == 0);
      if (o.failed) continue;  // setup's own budget (main's few steps are enough from 4 on)
      CHECK((o.output == all || o.output == none));
      if (engine == Engine::Interpret) (o.output == all ? committed : failed) += 1;
    }
  }
  CHECK(failed > 5);
  CHECK(committed > 5);
}

TEST_CASE("vm: try of an inner event catches its runtime error, located, and its memory is given back") {
  const char* p = R"(list rows by k: int { t: text }
event fill(n: int) {
  for i in 0 .. n { rows[i] = { t: "row {i} " + "x".repeat(i) } }
  let missing = rows[n + 5].t
}
event outer(n: int) -> int {
  rows[1000] = { t: "kept" }
  let r = try fill(n)
  if r.ok { return -1 }
  print(r.reason)
  return rows.count()
}
fn main() {
  print(outer(50).value)
  print(rows[1000].t)
}
)";
  CHECK(both_engines(p) == "runtime error at 4:28: no item with key 55 in stored list 'rows'\n1\nkept\n");
}
