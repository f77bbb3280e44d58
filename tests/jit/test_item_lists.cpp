// tests/jit/test_item_lists.cpp — items that hold lists (issue 37, item 1) in compiled loops
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
