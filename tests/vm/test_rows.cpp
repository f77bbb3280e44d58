// tests/vm/test_rows.cpp — a stored list's row type (`stock.Row`) as a parameter, result and
// variable type, and whole rows written back (`cust[w, d, c] = row`), on stored and event lists,
// by both engines (issue 15, item 4). Rolled-back writes of whole rows leave the old row.
#include <doctest/doctest.h>

#include <string>

#include "tests/vm/vm_support.h"

using pure::test::Engine;
using pure::test::Outcome;
using pure::test::clean_on_both;
using pure::test::run_program;

TEST_CASE("rows: a modified copy of a row replaces it; its key fields never move it") {
  const char* p = R"(type Customer = customer.Row
list customer by (w: int, d: int, c: int) { name: text, balance: int, data: text = "" }
fn charged(c: Customer, amount: int) -> Customer {
  var r = c
  r.balance -= amount
  r.data = "{r.data}|{amount}"
  r.c = 999                      // the index decides where the row goes, not this
  return r
}
event load() { for c in 1 .. 4 { customer[1, 1, c] = { name: "c{c}", balance: 100 * c } } }
event pay(c: int, amount: int) {
  customer[1, 1, c] = charged(customer[1, 1, c], amount)
  if amount > 1000 { fail "too much" }
}
event copy(from: int, to: int) { customer[1, 2, to] = customer[1, 1, from] }
query row(d: int, c: int) -> customer.Row { return customer[1, d, c] }
fn main() {
  let l = load()
  let a = pay(2, 30)
  let b = pay(2, 5)
  let f = pay(3, 5000)
  let k = copy(2, 7)
  print("{a.ok} {b.ok} {f.reason}")
  print(row(1, 2))
  print(row(1, 3))
  print(row(2, 7))
  print("{customer.count()} {customer.has(1, 1, 999)}")
  let m = list by (k: text) { n: int, t: text }
  m["x"] = { n: 1, t: "a" }
  var r = m["x"]
  r.n += 41
  r.t += "b"
  m["y"] = r
  m["x"] = r
  print(m)
}
)";
  CHECK(clean_on_both(p) ==
        "true true too much\n"
        "{ w: 1, d: 1, c: 2, name: \"c2\", balance: 165, data: \"|30|5\" }\n"
        "{ w: 1, d: 1, c: 3, name: \"c3\", balance: 300, data: \"\" }\n"
        "{ w: 1, d: 2, c: 7, name: \"c2\", balance: 165, data: \"|30|5\" }\n"
        "4 false\n"
        "[{ k: \"x\", n: 42, t: \"ab\" }, { k: \"y\", n: 42, t: \"ab\" }]\n");
}
