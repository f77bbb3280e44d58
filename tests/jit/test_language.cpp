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
