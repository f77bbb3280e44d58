// tests/frontend/test_item_lists.cpp — items that hold lists (issue 37, items 1 and 4): a named item's
// field may be a `seq`, such an item is a value (local, parameter, result, outcome), and a list
// whose row would hold a list is refused where it is written, with the exact message.
// Depends on frontend/frontend.h through frontend_support.h.
#include <doctest/doctest.h>

#include "tests/frontend/frontend_support.h"

using pure::test::Compiled;

namespace {

std::string errors_of(const std::string& text) { return Compiled(text).errors(); }

const char* kTypes = "type Line { sku: text, qty: int }\ntype Order { id: int, lines: seq Line }\n";

}  // namespace

TEST_CASE("checker: an item with a seq field is a local, a parameter, a result and an outcome's value") {
  std::string p = std::string(kTypes) +
                  "type Page { total: int, rows: seq Line, tags: seq text }\n"
                  "list stock by sku: text { qty: int }\n"
                  "fn make(id: int, ls: seq Line) -> Order { return { id: id, lines: ls } }\n"
                  "query page() -> Page {\n"
                  "  let rows: seq Line = []\n"
                  "  for s in stock { rows.push({ sku: s.sku, qty: s.qty }) }\n"
                  "  return { total: stock.sum(qty), rows: rows, tags: [\"a\"] }\n"
                  "}\n"
                  "event place(o: Order) -> Order { return o }\n"
                  "fn main() {\n"
                  "  var o = make(1, [Line { sku: \"a\", qty: 2 }])\n"
                  "  o.lines.push({ sku: \"b\", qty: 1 })\n"
                  "  let r: outcome of Order = place(o)\n"
                  "  print(page().rows.count() + r.value.lines.count())\n"
                  "}\n";
  Compiled c(p);
  CHECK(c.errors() == "");
}

TEST_CASE("checker: a list whose row holds a list is refused, stored or not, with the field named") {
  std::string hint =
      "  hint: a list's rows are flat: key the inner rows by the outer one, as in 'list lines by (order: int, "
      "line: int) { ... }'\n";
  CHECK(errors_of(std::string(kTypes) + "list orders seq Order\nfn main() {}\n") ==
        "t.pure:3:17: error: a list's row cannot hold a list, and Order's field 'lines' is seq Line\n"
        "  list orders seq Order\n"
        "                  ^\n" + hint);
  CHECK(errors_of(std::string(kTypes) + "fn main() { let xs = seq Order }\n") ==
        "t.pure:3:26: error: a list's row cannot hold a list, and Order's field 'lines' is seq Line\n"
        "  fn main() { let xs = seq Order }\n"
        "                           ^\n" + hint);
  CHECK(errors_of(std::string(kTypes) + "fn main() { let xs = [Order { id: 1, lines: [] }] }\n") ==
        "t.pure:3:22: error: a list's row cannot hold a list, and Order's field 'lines' is seq Line\n"
        "  fn main() { let xs = [Order { id: 1, lines: [] }] }\n"
        "                       ^\n" + hint);
  CHECK(errors_of(std::string(kTypes) + "fn main() { let xs = repeat(Order { id: 1, lines: [] }, 2) }\n") ==
        "t.pure:3:29: error: a list's row cannot hold a list, and Order's field 'lines' is seq Line\n"
        "  fn main() { let xs = repeat(Order { id: 1, lines: [] }, 2) }\n"
        "                              ^\n" + hint);
  // an item declared before the item it lists: refused once the inner item's fields are known
  CHECK(errors_of("type Report { orders: seq Order }\n" + std::string(kTypes) + "fn main() {}\n") ==
        "t.pure:1:23: error: a list's row cannot hold a list, and Order's field 'lines' is seq Line\n"
        "  type Report { orders: seq Order }\n"
        "                        ^\n" + hint);
  // an item that lists itself
  CHECK(errors_of("type Tree { n: int, kids: seq Tree }\nfn main() {}\n") ==
        "t.pure:1:27: error: a list's row cannot hold a list, and Tree's field 'kids' is seq Tree\n"
        "  type Tree { n: int, kids: seq Tree }\n"
        "                            ^\n" + hint);
}

TEST_CASE("checker: an item's field is a scalar, a list or an item; a list field has no default and must be given") {
  // (item fields: test_nested_items.cpp)
  CHECK(errors_of("type O { id: int, tags: seq text = [] }\nfn main() {}\n") ==
        "t.pure:1:36: error: the list field 'tags' cannot have a default\n"
        "  type O { id: int, tags: seq text = [] }\n"
        "                                     ^\n"
        "  hint: an item's list field is given when the item is made: 'lines: []'\n");
  CHECK(errors_of(std::string(kTypes) + "fn main() { let o = Order { id: 1 } }\n") ==
        "t.pure:3:21: error: field 'lines' is missing from the item\n"
        "  fn main() { let o = Order { id: 1 } }\n"
        "                      ^\n");
  // a stored list's field and an anonymous sequence item's field stay scalars
  CHECK(errors_of(std::string(kTypes) + "list m by id: int { ls: seq Line }\nfn main() {}\n") ==
        "t.pure:3:21: error: a list's field must be int, num, bool or text, not seq Line\n"
        "  list m by id: int { ls: seq Line }\n"
        "                      ^\n");
  CHECK(errors_of("list notes seq { t: seq int }\nfn main() {}\n") ==
        "t.pure:1:18: error: a sequence item's field must be int, num, bool or text, not seq int\n"
        "  list notes seq { t: seq int }\n"
        "                   ^\n");
}

TEST_CASE("checker: a keyed list as an item's field: a local and a result, never a client's parameter") {
  const char* tally = "type Tally { title: text, counts: list by w: text { n: int = 0 } }\n";
  CHECK(errors_of(std::string(tally) +
                  "fn make() -> Tally { return { title: \"t\", counts: list by w: text { n: int = 0 } } }\n"
                  "query q() -> Tally {\n  let t = make()\n  t.counts[\"a\"].n += 1\n  return t\n}\n"
                  "fn main() { print(q().counts[\"a\"].n) }\n") == "");
  std::string hint = "  hint: send the rows as a 'seq' of items and build the keyed list inside\n";
  CHECK(errors_of(std::string(tally) + "event e(t: Tally) {}\nfn main() {}\n") ==
        "t.pure:2:9: error: event and query parameters are values sent by a client, and Tally's field 'counts' is a keyed list\n"
        "  event e(t: Tally) {}\n"
        "          ^\n" + hint);
  // at any depth
  CHECK(errors_of(std::string(tally) + "type Page { n: int, tally: Tally }\nquery q(p: Page) -> int { return p.n }\nfn main() {}\n") ==
        "t.pure:3:9: error: event and query parameters are values sent by a client, and Tally's field 'counts' is a keyed list\n"
        "  query q(p: Page) -> int { return p.n }\n"
        "          ^\n" + hint);
  // a function takes one
  CHECK(errors_of(std::string(tally) + "fn f(t: Tally) -> int { return t.counts.count() }\nfn main() {}\n") == "");
  CHECK(errors_of("type M { m: list by k: int { v: int } = 1 }\nfn main() {}\n") ==
        "t.pure:1:41: error: the list field 'm' cannot have a default\n"
        "  type M { m: list by k: int { v: int } = 1 }\n"
        "                                          ^\n"
        "  hint: an item's list field is given when the item is made: 'lines: []'\n");
}
