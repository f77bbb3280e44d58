// tests/jit/test_nested_items.cpp — items that hold items (issue 37, item 1, second pass) in
// compiled loops against the interpreter: field chains read and assigned in loops the JIT compiles
// (an inner item's slots are the outer one's, so these are plain slot moves), inner items passed to
// functions, events and queries inside loops; the same bytes, errors and steps at every budget
// around the need. Depends on jit-common/jit.h (and the backend library linked), the frontend,
// ir/ and vm/.
#include "tests/jit/jit_support.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: items holding items inside compiled loops: same output, errors and steps") {
  const char* p = R"(type Point { x: int, y: int }
type Seg { from: Point, label: text, to: Point }
type Walk { n: int, seg: Seg, seen: seq int }
list ends by id: int { x: int, y: int }
fn len2(s: Seg) -> int {
  let dx = s.to.x - s.from.x
  let dy = s.to.y - s.from.y
  return dx * dx + dy * dy
}
fn step(w: Walk, k: int) -> Walk {
  var v = w
  v.seg.from = v.seg.to
  v.seg.to.x += k % 7 - 3
  v.seg.to.y = v.seg.to.y * 3 % 101 - k
  v.n += 1
  v.seen.push(len2(v.seg))
  return v
}
event keep(id: int, s: Seg) -> Point {
  if s.to.x < -20 { fail "{s.label} left at {s.to}" }
  ends[id] = { x: s.to.x, y: s.to.y }
  return s.to
}
query far(id: int) -> Seg {
  let e = ends[id]
  return { from: { x: 0, y: 0 }, label: "far {id}", to: { x: e.x, y: e.y } }
}
fn main() {
  var w = Walk { n: 0, seg: { from: { x: 0, y: 0 }, label: "w", to: { x: 1, y: 1 } }, seen: [] }
  var t = 0
  for k in 0 .. 400 {
    w = step(w, k)
    t = (t * 31 + w.seg.to.x * 7 + w.seg.from.y + len2(w.seg)) % 1000003
    if k % 50 == 0 {
      let r = keep(k, w.seg)
      if r.ok { t = (t + r.value.x + r.value.y) % 1000003 } else { print(r.reason) }
      let f = far(k)
      if f.to.x == w.seg.to.x { t += 1 }
    }
  }
  print("{t} {w.n} {w.seen.count()} {w.seg}")
  print(far(0))
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  CHECK(contains(r.output, "Seg { from: Point { x: "));
  uint64_t need = interpreter_need(p, 10000000);
  check_budgets_alike(p, {1, 50, need / 3, need / 2, need - 1, need, need + 1}, need);
}
