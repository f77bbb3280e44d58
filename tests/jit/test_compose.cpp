// tests/jit/test_compose.cpp — events that call events (issue 37, item 4) from compiled loops
// against the interpreter: a loop in an event calling another event plainly and with `try`, whose
// failures undo all or only the inner event's rows. A call leaves native code for the interpreter
// (it changes the frame), so the loop around it is compiled and the calls run interpreted; the
// bytes, errors and steps must be the same at every step budget.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#include "tests/jit/jit_support.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: a compiled loop in an event calls events plainly and with try; every budget agrees") {
  const char* p = R"P(list stock by sku: int { n: int = 0 }
list notes seq { t: text }
event adjust(sku: int, d: int) -> int {
  stock[sku].n += d
  var spin = 0
  for i in 0 .. sku { spin += i }
  if stock[sku].n < 0 { fail "short of {sku} by {0 - stock[sku].n} ({spin})" }
  return stock[sku].n
}
event fill(count: int) {
  for sku in 0 .. count { let now = adjust(sku, sku % 5) }
}
event drain(count: int, d: int) -> int {
  var ok = 0
  for sku in 0 .. count {
    let r = try adjust(sku, 0 - d)
    if r.ok { ok += 1 } else { notes.push({ t: r.reason }) }
  }
  return ok
}
event strict(count: int, d: int) {
  for sku in 0 .. count { let now = adjust(sku, 0 - d) }
}
fn main() {
  print(fill(12).ok)
  print(drain(12, 2).value)
  print(strict(12, 1).reason)
  print(drain(12, 1).value)
  var t = 0
  for s in stock { t = t * 7 % 1000003 + s.n }
  print("{t} {notes.count()}")
  for n in notes { print(n.t) }
}
)P";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  CHECK(contains(r.output, "true\n6\nshort of 0 by 1 (0)\n7\n823592 11\n"));
  for (uint64_t budget = 1; budget <= 140; budget += 3) {
    CAPTURE(budget);
    check_same(run_with_budget(p, budget, nullptr), run_with_budget(p, budget, &eager_jit()));
  }
}
