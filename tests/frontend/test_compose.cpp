// tests/frontend/test_compose.cpp — the checker's rules for events that call events (issue 37,
// item 4): only events (and main) call events; a plain call from an event has the event's result
// type, `try` gives an outcome; an event may not call itself, directly or through others.
// Depends on frontend/frontend.h through frontend_support.h.
#include <doctest/doctest.h>

#include "tests/frontend/frontend_support.h"

using pure::test::Compiled;

namespace {

std::string errors_of(const std::string& text) { return Compiled(text).errors(); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("checker: an event calls events, plainly for their result or with try for their outcome") {
  Compiled c(R"(list stock by sku: int { n: int = 0 }
event adjust(sku: int, d: int) -> int {
  stock[sku].n += d
  return stock[sku].n
}
event touch(sku: int) { stock[sku] = {} }
event ship(sku: int) -> int {
  touch(sku)
  let now: int = adjust(sku, -1)
  let r: outcome of int = try adjust(sku, -1)
  let t: outcome = try touch(sku)
  if not r.ok { return now }
  return r.value
}
fn main() {
  let r: outcome of int = ship(1)
}
)");
  CHECK_MESSAGE(c.ok(), c.errors());
}

TEST_CASE("checker: queries and functions do not call events; main's call needs no try") {
  std::string e = errors_of(R"(list c by k: int { n: int }
event bump(k: int) -> int { c[k] = { n: 1 }; return 1 }
query q(k: int) -> int { return bump(k) }
fn f(k: int) -> int { return bump(k) }
event e(k: int) { let x: outcome of int = bump(k) }
fn main() {
  let a = try bump(1)
}
)");
  CHECK(contains(e, "t.pure:3:33: error: query 'q' calls event 'bump'; queries only read\n"));
  CHECK(contains(e, "hint: make 'q' an event, or call 'bump' from main or an event\n"));
  CHECK(contains(e, "t.pure:4:30: error: function 'f' calls event 'bump'; only main and events call events\n"));
  CHECK(contains(e, "hint: call 'bump' from the event (or main) that calls 'f'\n"));
  CHECK(contains(e, "t.pure:5:43: error: 'x' is declared as outcome of int but the value is int\n"));
  CHECK(contains(e, "t.pure:7:15: error: 'try' is not needed here: main's call of event 'bump' already gives its outcome\n"));
  CHECK(contains(e, "hint: drop 'try'; inside an event, 'try bump(...)' catches the inner event's failure\n"));
}

TEST_CASE("checker: an event that calls itself, directly or through other events, is refused once per cycle") {
  std::string e = errors_of(R"(event a(n: int) { b(n) }
event b(n: int) { if n > 0 { let r = try c(n - 1) } }
event c(n: int) { a(n) }
event d(n: int) { d(n - 1) }
event ok(n: int) { b(n); b(n) }
fn main() {}
)");
  CHECK(contains(e, "t.pure:3:19: error: event 'a' calls itself (a -> b -> c -> a); an event cannot call itself, directly or through other events\n"));
  CHECK(contains(e, "hint: repeat the work with a loop inside one event\n"));
  CHECK(contains(e, "t.pure:4:19: error: event 'd' calls itself (d -> d); an event cannot call itself, directly or through other events\n"));
  size_t count = 0;
  for (size_t at = e.find("calls itself"); at != std::string::npos; at = e.find("calls itself", at + 1)) ++count;
  CHECK(count == 2);
}
