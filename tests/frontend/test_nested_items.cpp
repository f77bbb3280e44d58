// tests/frontend/test_nested_items.cpp — items that hold items (issue 37, item 1, second pass): a
// named item's field may be an item, read and assigned through chains (`s.corner.x = 3` on a var),
// while a list whose row would hold an item and an item that holds itself are refused, located,
// with the exact messages. Depends on frontend/frontend.h through frontend_support.h.
#include <doctest/doctest.h>

#include "tests/frontend/frontend_support.h"

using pure::test::Compiled;

namespace {

std::string errors_of(const std::string& text) { return Compiled(text).errors(); }

const char* kTypes = "type Point { x: int, y: int }\ntype Shape { corner: Point, name: text }\n";

}  // namespace

TEST_CASE("checker: an item with an item field is a local, a parameter, a result and an event's value") {
  std::string p = std::string(kTypes) +
                  "type Frame { inner: Shape, tags: seq text }\n"
                  "fn moved(s: Shape, d: int) -> Shape {\n"
                  "  var t = s\n"
                  "  t.corner.x += d\n"
                  "  t.corner = { x: t.corner.y, y: t.corner.x }\n"
                  "  return t\n"
                  "}\n"
                  "event place(f: Frame) -> Frame { return f }\n"
                  "query one() -> Shape { return { corner: { x: 1, y: 2 }, name: \"a\" } }\n"
                  "fn main() {\n"
                  "  var f = Frame { inner: moved(one(), 3), tags: [] }\n"
                  "  f.inner.corner.y = 7\n"
                  "  let r: outcome of Frame = place(f)\n"
                  "  let c: Point = r.value.inner.corner\n"
                  "  print(\"{c.x + f.inner.corner.y} {f}\")\n"
                  "}\n";
  CHECK(errors_of(p) == "");
}

TEST_CASE("checker: a nested field is assigned only through a var, as a field is") {
  CHECK(errors_of(std::string(kTypes) +
                  "fn main() {\n  let s = Shape { corner: { x: 1, y: 2 }, name: \"a\" }\n  s.corner.x = 3\n}\n") ==
        "t.pure:5:3: error: cannot assign to 's': it is declared with 'let'\n"
        "    s.corner.x = 3\n"
        "    ^\n"
        "  hint: declare it with 'var' to change it\n");
  CHECK(errors_of(std::string(kTypes) + "fn f(s: Shape) { s.corner.y += 1 }\nfn main() {}\n") ==
        "t.pure:3:18: error: cannot assign to 's': it is a parameter\n"
        "  fn f(s: Shape) { s.corner.y += 1 }\n"
        "                   ^\n"
        "  hint: copy it into a 'var' to change the copy\n");
  CHECK(errors_of(std::string(kTypes) + "fn main() {\n  var s = Shape { corner: { x: 1, y: 2 }, name: \"a\" }\n"
                                        "  s.corner.z = 3\n}\n") ==
        "t.pure:5:11: error: 'Point' has no field 'z'\n"
        "    s.corner.z = 3\n"
        "            ^\n"
        "  hint: did you mean 'x'?\n");
  CHECK(errors_of(std::string(kTypes) + "fn main() {\n  var s = Shape { corner: { x: 1, y: 2 }, name: \"a\" }\n"
                                        "  s.corner = 3\n}\n") ==
        "t.pure:5:14: error: the assigned value must be Point, not int\n"
        "    s.corner = 3\n"
        "               ^\n");
}

TEST_CASE("checker: a list whose row holds an item is refused, stored or not, with the field named") {
  std::string hint = "  hint: a list's rows are flat: give the row the inner item's fields ('corner_x: ...'), or keep the items in a list of their own\n";
  CHECK(errors_of(std::string(kTypes) + "list shapes seq Shape\nfn main() {}\n") ==
        "t.pure:3:17: error: a list's row cannot hold an item, and Shape's field 'corner' is Point\n"
        "  list shapes seq Shape\n"
        "                  ^\n" + hint);
  CHECK(errors_of(std::string(kTypes) + "fn main() { let xs = [Shape { corner: { x: 1, y: 2 }, name: \"a\" }] }\n") ==
        "t.pure:3:22: error: a list's row cannot hold an item, and Shape's field 'corner' is Point\n"
        "  fn main() { let xs = [Shape { corner: { x: 1, y: 2 }, name: \"a\" }] }\n"
        "                       ^\n" + hint);
  // a stored list's field stays a scalar
  CHECK(errors_of(std::string(kTypes) + "list m by id: int { at: Point }\nfn main() {}\n") ==
        "t.pure:3:21: error: a list's field must be int, num, bool or text, not Point\n"
        "  list m by id: int { at: Point }\n"
        "                      ^\n");
  // an alias declared before the item's fields were known is refused once they are
  CHECK(errors_of("type Shapes = seq Shape\n" + std::string(kTypes) + "fn main() {}\n") ==
        "t.pure:1:15: error: a list's row cannot hold an item, and Shape's field 'corner' is Point\n"
        "  type Shapes = seq Shape\n"
        "                ^\n" + hint);
  // a list of the inner item is fine
  CHECK(errors_of(std::string(kTypes) + "type Path { points: seq Point }\nfn main() { let p = Path { points: [{ x: 1, y: 2 }] } }\n") == "");
}

TEST_CASE("checker: an item that holds itself is refused at the field that closes the cycle") {
  std::string hint = "  hint: an item is a value of fixed size: keep the linked items in a keyed list and hold their key ('next: int')\n";
  CHECK(errors_of("type T { n: int, next: T }\nfn main() {}\n") ==
        "t.pure:1:18: error: type 'T' cannot hold itself: its field 'next' is T\n"
        "  type T { n: int, next: T }\n"
        "                   ^\n" + hint);
  CHECK(errors_of("type A { b: B }\ntype B { c: C }\ntype C { a: A, n: int }\nfn main() {}\n") ==
        "t.pure:1:10: error: type 'A' cannot hold itself: its field 'b' is B, which holds A (B.c, C.a)\n"
        "  type A { b: B }\n"
        "           ^\n" + hint);
  // the same inner item twice is no cycle
  CHECK(errors_of("type P { x: int }\ntype Two { a: P, b: P }\ntype Four { l: Two, r: Two }\nfn main() {}\n") == "");
}

TEST_CASE("checker: an item field has no default and must be given") {
  CHECK(errors_of("type P { x: int }\ntype S { at: P = 1 }\nfn main() {}\n") ==
        "t.pure:2:18: error: the item field 'at' cannot have a default\n"
        "  type S { at: P = 1 }\n"
        "                   ^\n"
        "  hint: an item's item field is given when the item is made: 'at: { ... }'\n");
  CHECK(errors_of(std::string(kTypes) + "fn main() { let s = Shape { name: \"a\" } }\n") ==
        "t.pure:3:21: error: field 'corner' is missing from the item\n"
        "  fn main() { let s = Shape { name: \"a\" } }\n"
        "                      ^\n");
}
