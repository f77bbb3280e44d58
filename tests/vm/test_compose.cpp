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

namespace {

// An event walks a stored list and calls, for each row, an inner event with `try` that changes the
// same list (inserts that split leaves, removing the walked row, pushes) and then fails: undone,
// so the walk goes on from its next row. qty % 3 == 0 fails; the others set a field only.
const char* kWalks = R"(list orders by (day: text, id: int) { qty: int, state: text = "open" }
list log seq { t: text }

event load() {
  for d in 0 .. 3 {
    for id in 1 .. 31 { orders["2026-12-0{d}", id] = { qty: id } }
  }
  for i in 0 .. 50 { log.push({ t: "l{i}" }) }
}

event reserve(day: text, id: int) {
  if orders[day, id].qty % 3 == 0 {
    for i in 0 .. 70 { orders["2026-00-{i}", i] = { qty: 1 } }
    for i in 0 .. 70 { log.push({ t: "junk" }) }
    let gone = orders.remove(day, id)
    fail "no stock for {id}"
  }
  orders[day, id].state = "held"
}

event nested(day: text, id: int) {
  let r = try reserve(day, id)   // fails inside; nested goes on, then fails itself on id 4
  orders[day, id].qty += 100
  if id % 4 == 0 { fail "nested {id}" }
}

event walk(how: int) -> text {
  var trace = ""
  if how == 0 {
    for o in orders {
      let r = try reserve(o.day, o.id)
      var s = "-"
      if r.ok { s = "+" }
      trace = trace + "{o.id}{s} "
    }
  }
  if how == 1 {
    for o in orders.reverse() {
      let r = try reserve(o.day, o.id)
      trace = trace + "{o.id} "
    }
  }
  if how == 2 {
    for o in orders["2026-12-01"] {
      let r = try reserve(o.day, o.id)
      trace = trace + "{o.id} "
    }
  }
  if how == 3 {
    for o in orders.range("2026-12-01", "2026-12-02").reverse() {
      let r = try nested(o.day, o.id)
      trace = trace + "{o.id} "
    }
  }
  if how == 4 {
    for i, l in log {
      let r = try reserve("2026-12-00", i % 30 + 1)
      trace = trace + "{l.t} "
    }
  }
  return trace
}

event grow_then_try() {
  for o in orders {   // the walk's own insert still faults, whatever the try does
    orders["2026-99-99", o.id] = { qty: 1 }
    let r = try reserve(o.day, 3)
  }
}

event grow(id: int) { orders["2027-01-01", id] = { qty: 1 } }

event inner_succeeds() {
  for o in orders { let r = try grow(o.id) }   // an inner event that adds to the list and succeeds
}

fn main() {
  let l = load()
  for how in 0 .. 5 { print(walk(how).value) }
  var held = 0
  var qty = 0
  for o in orders {
    if o.state == "held" { held += 1 }
    qty += o.qty
  }
  print("{orders.count()} {held} {qty} {log.count()}")
  print(grow_then_try().reason)
  print(inner_succeeds().reason)
}
)";

std::string expected_walks() {
  std::string out;
  auto sign = [](int id) { return id % 3 == 0 ? "-" : "+"; };
  for (int d = 0; d < 3; ++d)
    for (int id = 1; id <= 30; ++id) out += std::to_string(id) + sign(id) + " ";
  out += "\n";
  for (int d = 2; d >= 0; --d)
    for (int id = 30; id >= 1; --id) out += std::to_string(id) + " ";
  out += "\n";
  for (int id = 1; id <= 30; ++id) out += std::to_string(id) + " ";
  out += "\n";
  for (int id = 30; id >= 1; --id) out += std::to_string(id) + " ";
  out += "\n";
  for (int i = 0; i < 50; ++i) out += "l" + std::to_string(i) + " ";
  out += "\n";
  // 90 rows; held: every qty % 3 != 0 row (60), reserved over and over; qty: 3 * (1 + ... + 30)
  // plus 100 for each day-1 id that nested did not fail (not a multiple of 4: 23 of 30)
  out += "90 60 " + std::to_string(3 * 465 + 100 * 23) + " 50\n";
  out += "runtime error at 65:7: stored list 'orders' was changed (an item added or removed) while a loop was walking it\n";
  out += "runtime error at 74:7: stored list 'orders' was changed (an item added or removed) while a loop was walking it\n";
  return out;
}

}  // namespace

TEST_CASE("vm: an event's walk of a stored list goes on after a try'd inner event that changed the list fails (issue 37)") {
  CHECK(both_engines(kWalks) == expected_walks());
}
