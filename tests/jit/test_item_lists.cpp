// tests/jit/test_item_lists.cpp — items that hold lists (issue 37, item 1; keyed lists, item 4) in compiled loops
// against the interpreter: an item's list pushed to, read and handed to events and queries inside
// loops the JIT compiles; the same bytes, errors and steps at every budget around the need.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#include "tests/jit/jit_support.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: items holding lists inside compiled loops: same output, errors and steps") {
  const char* p = R"(type Line { sku: text, qty: int }
type Order { id: int, lines: seq Line }
type Page { total: int, rows: seq Line }
list lines by (order: int, sku: text) { qty: int }
fn grow(o: Order, n: int) -> Order {
  for i in 0 .. n { o.lines.push({ sku: "s{i % 5}", qty: o.id * 10 + i }) }
  return o
}
event place(o: Order) -> Page {
  var total = 0
  for l in o.lines {
    if l.qty < 0 { fail "negative {l.sku}" }
    lines[o.id, l.sku] = { qty: l.qty }
    total += l.qty
  }
  return { total: total, rows: o.lines }
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
  var t = 0
  for id in -1 .. 12 {
    let o = grow({ id: id, lines: [] }, 3 + id % 4)
    let r = place(o)
    if r.ok { t = t * 7 % 100003 + r.value.total + r.value.rows.count() } else { print(r.reason) }
    let p = page(id)
    t = t * 3 % 100003 + p.total + p.rows.count()
  }
  print(t)
  print(page(4))
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  CHECK(r.output == "negative s0\n70843\nPage { total: 123, rows: [{ sku: \"s0\", qty: 40 }, { sku: \"s1\", qty: 41 }, "
                    "{ sku: \"s2\", qty: 42 }] }\n");
  uint64_t need = interpreter_need(p, 1000000);
  check_budgets_alike(p, {1, 20, need / 3, need / 2, need - 1, need, need + 1}, need);
}

TEST_CASE("jit: an item's keyed list written by key inside compiled loops: same output and steps") {
  const char* p = R"(type Tally { title: text, counts: list by k: int { n: int = 0, last: int = 0 }, total: int }
fn count(t: Tally, from: int, to: int) -> Tally {
  var u = t
  for i in from .. to {
    u.counts[i * 7 % 13].n += 1
    u.counts[i * 7 % 13].last = i
    u.total += i % 5
  }
  return u
}
event keep(n: int) -> Tally {
  let t = count({ title: "e", counts: list by k: int { n: int = 0, last: int = 0 }, total: 0 }, 0, n)
  if t.counts.count() < 13 { fail "only {t.counts.count()} keys" }
  return t
}
fn main() {
  var t = Tally { title: "m", counts: list by k: int { n: int = 0, last: int = 0 }, total: 0 }
  for r in 0 .. 30 { t = count(t, r * 10, r * 10 + 10) }
  var h = 0
  for c in t.counts { h = (h * 31 + c.k * 7 + c.n * 3 + c.last) % 1000003 }
  print("{h} {t.total} {t.counts.count()}")
  print(keep(5).reason)
  print(keep(40).value.counts.first())
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  CHECK(contains(r.output, "only 5 keys\n"));
  uint64_t need = interpreter_need(p, 10000000);
  check_budgets_alike(p, {1, 50, need / 3, need / 2, need - 1, need, need + 1}, need);
}
