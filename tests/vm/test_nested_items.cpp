// tests/vm/test_nested_items.cpp — items that hold items (issue 37, item 1, second pass) run by the
// interpreter and by the step engine: a field that is an item takes its slots in place, so chains
// (`f.inner.corner.x`) read and assign the right slot, whole inner items are read, assigned and
// passed, items holding items are parameters and results of functions, queries and events (whose
// lists at any depth are copied for an event main calls), printed nested; stopped at every step
// budget with nothing leaked. Depends on tests/vm/vm_support.h.
#include <doctest/doctest.h>

#include <string>

#include "tests/vm/vm_support.h"

using pure::test::clean_on_both;
using pure::test::Engine;
using pure::test::Outcome;
using pure::test::run_program;
using pure::test::RunConfig;

namespace {

// Field orders put the inner item between others, so an offset off by one reads a neighbour.
const char* kShapes = R"(type Point { x: int, y: int }
type Shape { name: text, corner: Point, tags: seq text, size: num }
type Frame { depth: int, inner: Shape, far: Point }
list placed by name: text { x: int, y: int, tags: int }

fn moved(s: Shape, dx: int, dy: int) -> Shape {
  var t = s
  t.corner.x += dx
  t.corner.y -= dy
  return t
}

fn frame(n: int) -> Frame {
  return { depth: n, inner: { name: "s{n}", corner: { x: n, y: n * 2 }, tags: ["t{n}"], size: 0.5 * num(n) }, far: { x: -n, y: 100 + n } }
}

event place(f: Frame) -> Frame {
  if f.inner.corner.x < 0 { fail "{f.inner.name} is off the page at {f.inner.corner}" }
  placed[f.inner.name] = { x: f.inner.corner.x, y: f.far.y, tags: f.inner.tags.count() }
  var g = f
  g.inner.tags.push("placed")
  g.far = g.inner.corner
  return g
}

query at(name: text) -> Shape {
  let p = placed[name]
  return { name: name, corner: { x: p.x, y: p.y }, tags: [], size: 1.0 }
}

fn main() {
  var s = Shape { name: "box", corner: Point { x: 1, y: 2 }, tags: [], size: 2.5 }
  print(s)
  s.corner.x = 30
  s.corner = { x: s.corner.y, y: s.corner.x }
  s.size *= 2
  print("{s.corner.x} {s.corner.y} {s.size} {s.name}")
  let m = moved(s, 10, 5)
  print("{m.corner} {s.corner}")
  var f = frame(3)
  f.inner.corner.y *= 5
  f.far.x += f.inner.corner.y
  f.inner.tags.push("b")
  print(f)
  let c = f.inner.corner
  f.inner.corner.x = 99
  print("{c.x} {f.inner.corner.x}")
  var total = 0
  for i in 0 .. 6 {
    let g = frame(i)
    total = total * 3 + g.inner.corner.x + g.inner.corner.y + g.far.y + g.depth
  }
  print(total)
  let r = place(f)
  print("{r.ok} {f.inner.tags} {r.value.inner.tags} {r.value.far}")
  let bad = place({ depth: 0, inner: moved(s, -100, 0), far: { x: 0, y: 0 } })
  print(bad)
  print(at("s3"))
  let shared = f
  shared.inner.tags.push("shared")
  print(f.inner.tags.count())
}
)";

const char* kShapesOutput =
    "Shape { name: \"box\", corner: Point { x: 1, y: 2 }, tags: [], size: 2.5 }\n"
    "2 30 5.0 box\n"
    "Point { x: 12, y: 25 } Point { x: 2, y: 30 }\n"
    "Frame { depth: 3, inner: Shape { name: \"s3\", corner: Point { x: 3, y: 30 }, tags: [\"t3\", \"b\"], size: 1.5 }, "
    "far: Point { x: 27, y: 103 } }\n"
    "3 99\n"
    "TOTAL\n"
    "true [\"t3\", \"b\"] [\"t3\", \"b\", \"placed\"] Point { x: 99, y: 30 }\n"
    "outcome { ok: false, reason: \"box is off the page at Point \\{ x: -98, y: 30 }\" }\n"  // a quoted text escapes its braces
    "Shape { name: \"s3\", corner: Point { x: 99, y: 103 }, tags: [], size: 1.0 }\n"
    "3\n";

std::string expected_shapes() {
  // total = total * 3 + i + 2i + (100 + i) + i over i = 0 .. 5
  int64_t total = 0;
  for (int64_t i = 0; i < 6; ++i) total = total * 3 + i + 2 * i + 100 + i + i;
  std::string out = kShapesOutput;
  out.replace(out.find("TOTAL"), 5, std::to_string(total));
  return out;
}

}  // namespace

TEST_CASE("vm: items holding items are read, assigned, passed, returned and printed by field chains") {
  CHECK(clean_on_both(kShapes) == expected_shapes());
}

// The event's result is an item whose list sits inside an inner item: a failed event's result
// slots hold an empty list of that field's descriptor (found through the flattened slots).
TEST_CASE("vm: a failed event whose result holds a list inside an inner item") {
  const char* p = R"(type Bag { n: int, words: seq text }
type Box { label: text, bag: Bag, weight: num }
event fill(b: Box) -> Box {
  b.bag.words.push("more")
  if b.weight > 10.0 { fail "too heavy: {b.weight}" }
  return b
}
fn main() {
  let b = Box { label: "a", bag: { n: 1, words: ["w"] }, weight: 2.0 }
  let ok = fill(b)
  print("{b.bag.words} {ok.value.bag.words} {ok.value.label}")
  let no = fill({ label: "b", bag: b.bag, weight: 11.0 })
  print(no)
  print(b.bag.words.count())
}
)";
  CHECK(clean_on_both(p) == "[\"w\"] [\"w\", \"more\"] a\noutcome { ok: false, reason: \"too heavy: 11.0\" }\n1\n");
}

TEST_CASE("vm: items holding items stopped at every step budget leak nothing, in both engines") {
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    CAPTURE(static_cast<int>(engine));
    int finished = 0, stopped = 0;
    for (uint64_t budget = 1; budget <= 60; ++budget) {
      CAPTURE(budget);
      RunConfig c;
      c.engine = engine;
      c.max_steps = budget;
      Outcome o = run_program(kShapes, c);
      CHECK(o.signal == 0);
      CHECK(o.compile_errors == "");
      CHECK(o.leaked_texts == 0);
      if (o.failed) {
        CHECK(o.message.find("step budget spent") == 0);
        ++stopped;
      } else {
        ++finished;
      }
    }
    CHECK(stopped > 0);
    CHECK(finished > 0);
  }
}
