// tests/vm/test_item_lists.cpp — items that hold lists (issue 37, item 1; keyed lists, item 4) run by the interpreter
// and by the step engine: made, shared, passed, returned by functions, queries and events, copied
// for an event main calls, rolled back with it; stopped at every step budget and by the memory
// budget with nothing leaked (the rows hold texts, so a list left alive leaves texts alive).
// Depends on tests/vm/vm_support.h.
#include <doctest/doctest.h>

#include <string>

#include "tests/vm/vm_support.h"

using pure::test::clean_on_both;
using pure::test::Engine;
using pure::test::Outcome;
using pure::test::run_program;
using pure::test::RunConfig;

namespace {

const char* kOrders = R"(type Line { sku: text, qty: int }
type Order { id: int, lines: seq Line, note: text }
type Page { total: int, rows: seq Line }
list lines by (order: int, sku: text) { qty: int }

fn order_of(id: int, n: int) -> Order {
  let ls: seq Line = []
  for i in 0 .. n { ls.push({ sku: "s{i}", qty: id + i }) }
  return { id: id, lines: ls, note: "order {id}" }
}

event place(o: Order) -> Order {
  if o.lines.count() == 0 { fail "order {o.id} is empty" }
  for l in o.lines { lines[o.id, l.sku] = { qty: l.qty } }
  o.lines.push({ sku: "gift", qty: 1 })
  if o.id < 0 { fail "order {o.id} refused after its rows were written" }
  return o
}

query page(id: int) -> Page {
  var total = 0
  let rows: seq Line = []
  for l in lines[id] {
    rows.push({ sku: l.sku, qty: l.qty })
    total += l.qty
  }
  return { total: total, rows: rows }
}

fn main() {
  for id in 1 .. 4 {
    let o = order_of(id, id)
    let r = place(o)
    print("{r.ok} {o.lines.count()} {r.value.lines.count()}")
  }
  print(place(order_of(-2, 2)))
  print(place(order_of(5, 0)).reason)
  print(lines.count())
  let p = page(3)
  print(p)
  var q = p
  q.rows.push({ sku: "more", qty: 9 })
  print("{p.rows.count()} {q.total}")
}
)";

const char* kOrdersOutput =
    "true 1 2\n"
    "true 2 3\n"
    "true 3 4\n"
    "outcome { ok: false, reason: \"order -2 refused after its rows were written\" }\n"
    "order 5 is empty\n"
    "6\n"
    "Page { total: 12, rows: [{ sku: \"s0\", qty: 3 }, { sku: \"s1\", qty: 4 }, { sku: \"s2\", qty: 5 }] }\n"
    "4 12\n";

}  // namespace

TEST_CASE("vm: items holding lists are made, passed, returned by events and queries, and printed") {
  CHECK(clean_on_both(kOrders) == kOrdersOutput);
}

// main's order is copied for the event (its pushed "gift" stays there), and a failed event's
// result slots hold an empty list of the item's field (it crashed when they took the result's
// descriptor, which an item has none of).
TEST_CASE("vm: an event main calls gets its own copy of an item's list, and a failed one leaves none") {
  const char* p = R"(type Order { id: int, tags: seq text }
event tag(o: Order) -> Order {
  o.tags.push("seen")
  if o.id < 0 { fail "no" }
  return o
}
fn main() {
  let o = Order { id: 1, tags: ["a"] }
  let r = tag(o)
  print("{o.tags.count()} {r.value.tags.count()}")
  let f = tag({ id: -1, tags: o.tags })
  print("{f.ok} {o.tags}")
}
)";
  CHECK(clean_on_both(p) == "1 2\nfalse [\"a\"]\n");
}

TEST_CASE("vm: items holding lists stopped at every step budget leak nothing, in both engines") {
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    CAPTURE(static_cast<int>(engine));
    int finished = 0, stopped = 0;
    for (uint64_t budget = 1; budget <= 90; ++budget) {
      CAPTURE(budget);
      RunConfig c;
      c.engine = engine;
      c.max_steps = budget;  // main's budget, and each event's and query's
      Outcome o = run_program(kOrders, c);
      CHECK(o.signal == 0);
      CHECK(o.compile_errors == "");
      CHECK(o.leaked_texts == 0);
      if (o.failed) {
        CHECK(o.message.find("step budget spent") == 0);
        ++stopped;
      } else {
        // an event or query stopped by its budget fails alone: main goes on
        ++finished;
      }
    }
    CHECK(stopped > 0);
    CHECK(finished > 0);
  }
}

TEST_CASE("vm: the memory budget counts the lists items hold") {
  const char* p = R"(type Bag { n: int, words: seq text }
fn grow(b: Bag, k: int) -> Bag {
  for i in 0 .. k { b.words.push("word number {i} of a bag that keeps growing") }
  return { n: b.n + k, words: b.words }
}
fn main() {
  var b = Bag { n: 0, words: [] }
  for r in 0 .. 1000 { b = grow(b, 1000) }
  print(b.n)
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    RunConfig c;
    c.engine = engine;
    c.max_memory = 4 << 20;
    Outcome o = run_program(p, c);
    CHECK(o.signal == 0);
    CHECK(o.failed);
    CHECK(o.message.find("memory budget spent") == 0);
    CHECK(o.leaked_texts == 0);
  }
}

// A query main calls with `try` that fails: its result's list field is an empty list of the
// field's own type (the result has no descriptor of its own); one that succeeds hands over the
// stored texts its rows read as main's own.
TEST_CASE("vm: try of a query answering an item with a list, failed and not") {
  const char* p = R"(type Page { total: int, rows: seq text }
list xs by k: int { t: text }
query page(n: int) -> Page {
  if n < 0 { fail "negative" }
  let rows: seq text = []
  for x in xs { rows.push(x.t) }
  return { total: n, rows: rows }
}
event add(k: int) { xs[k] = { t: "t{k}" } }
fn main() {
  let a = add(1)
  print(try page(-1))
  let s = try page(2)
  let b = add(2)
  print(s)
}
)";
  CHECK(clean_on_both(p) ==
        "outcome { ok: false, reason: \"negative\" }\n"
        "outcome { ok: true, reason: \"\", value: Page { total: 2, rows: [\"t1\"] } }\n");
}

// A keyed list as an item's field (issue 37, item 4): made, counted by key through the item,
// shared, returned by a function, a query and an event (a failed one's result holds an empty keyed
// list of the field's descriptor), printed in key order.
TEST_CASE("vm: items holding keyed lists on both engines") {
  const char* p = R"(type Tally { title: text, counts: list by word: text { n: int = 0 }, total: int }
type Report { name: text, tally: Tally }
list words seq { w: text }
event add(w: text) { words.push({ w: w }) }
fn tally_of(ws: seq text, title: text) -> Tally {
  var t = Tally { title: title, counts: list by word: text { n: int = 0 }, total: 0 }
  for w in ws {
    t.counts[w].n += 1
    t.total += 1
  }
  return t
}
query report(name: text) -> Report {
  let ws: seq text = []
  for r in words { ws.push(r.w) }
  return { name: name, tally: tally_of(ws, "all") }
}
event summary(limit: int) -> Tally {
  let ws: seq text = []
  for r in words { ws.push(r.w) }
  let t = tally_of(ws, "event")
  if t.total > limit { fail "{t.total} words" }
  return t
}
fn main() {
  let t = tally_of(["a", "b", "a", "c", "a"], "one")
  print(t)
  print("{t.counts["a"].n} {t.counts.has("z")} {t.counts.count()} {t.total}")
  for w in ["x", "y", "x"] { let r = add(w) }
  let r = report("r")
  print(r)
  print(summary(10).value.counts)
  print(summary(2))
  let shared = t
  shared.counts["q"].n = 9
  print(t.counts.count())
}
)";
  CHECK(clean_on_both(p) ==
        "Tally { title: \"one\", counts: [{ word: \"a\", n: 3 }, { word: \"b\", n: 1 }, { word: \"c\", n: 1 }], total: 5 }\n"
        "3 false 3 5\n"
        "Report { name: \"r\", tally: Tally { title: \"all\", counts: [{ word: \"x\", n: 2 }, { word: \"y\", n: 1 }], total: 3 } }\n"
        "[{ word: \"x\", n: 2 }, { word: \"y\", n: 1 }]\n"
        "outcome { ok: false, reason: \"3 words\" }\n"
        "4\n");
}
