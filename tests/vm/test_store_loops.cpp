// tests/vm/test_store_loops.cpp — loops over stored lists while the loop's body calls queries and
// events (issue 13, section 1). A loop in main walks the state as of its start (a snapshot it
// holds); a loop inside an event walks the live list and sees the event's field writes. Each case
// below crashed, skipped or repeated rows, or depended on whether a query ran, before the fix.
// Depends on tests/vm/vm_support.h.
#include <doctest/doctest.h>

#include <string>

#include "tests/vm/vm_support.h"

using pure::test::Engine;
using pure::test::Outcome;
using pure::test::clean_on_both;
using pure::test::run_program;

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("store loops: the issue's program (a query and an event per row, 4000 rows) visits every row once") {
  const char* p = R"(list acc by id: int { bal: int }
event load(n: int) { for i in 0 .. n { acc[i] = { bal: i } } }
event bump(id: int) { acc[id].bal += 1 }
query total() -> int { return acc.count() }
query sum() -> int {
  var s = 0
  for a in acc { s += a.bal }
  return s
}
fn main() {
  let l = load(ROWS)
  var seen = 0
  var keys = 0
  var bals = 0
  for a in acc { seen += 1; keys += a.id; bals += a.bal; let t = total(); let b = bump(a.id) }
  print("seen={seen} keys={keys} bals={bals} after={sum()}")
}
)";
  // 1953 rows fit two levels of this tree, 1954 need three; 30 rows already need two leaves.
  for (int rows : {30, 70, 1953, 1954, 4000}) {
    CAPTURE(rows);
    long long n = rows, sum = n * (n - 1) / 2;
    std::string want = "seen=" + std::to_string(n) + " keys=" + std::to_string(sum) + " bals=" + std::to_string(sum) +
                       " after=" + std::to_string(sum + n) + "\n";
    CHECK(clean_on_both(replace_all(p, "ROWS", std::to_string(rows))) == want);
  }
}

TEST_CASE("store loops: rows written out of order behind and ahead of main's loop are visited once each") {
  const char* p = R"(list acc by id: int { bal: int }
event load(n: int) { for i in 0 .. n { acc[i] = { bal: 0 } } }
event bump(id: int) { acc[id].bal += 1 }
query total() -> int { return acc.count() }
fn main() {
  let l = load(ROWS)
  var seen = 0
  var bals = 0
  for a in acc { seen += 1; bals += a.bal; let t = total(); let b = bump(a.id); let c = bump((a.id * 7) % ROWS) }
  print("seen={seen} bals={bals}")
}
)";
  for (int rows : {70, 100, 500, 3000}) {
    CAPTURE(rows);
    CHECK(clean_on_both(replace_all(p, "ROWS", std::to_string(rows))) == "seen=" + std::to_string(rows) + " bals=0\n");
  }
}

TEST_CASE("store loops: composite keys, key prefixes and ranges in main, with events inserting and removing rows") {
  const char* p = R"(list g by (a: int, b: int) { v: int }
event load(n: int) { for i in 0 .. n { for j in 0 .. 5 { g[i, j] = { v: 1 } } } }
event churn(a: int, b: int) {
  g[a, b].v += 10
  g.remove(a, (b + 1) % 5)
  g[a + 1000, b] = { v: 7 }
}
event churn_and_fail(a: int) {
  g[a + 2000, 0] = { v: 1 }
  g.remove(a, 0)
  fail "no"
}
query total() -> int { return g.count() }
fn main() {
  let l = load(10)
  var rows = 0
  var vs = 0
  for r in g { rows += 1; vs += r.v; let t = total(); let c = churn(r.a, r.b); let f = churn_and_fail(r.a) }
  print("all: {rows} {vs} {total()}")
  var pre = 0
  for r in g[3] { pre += 1; let c = churn(3, r.b); let t = total() }
  print("prefix: {pre}")
  var ran = 0
  for r in g.range(1000, 1004) { ran += r.a; let c = churn(r.a + 5000, 0); let f = churn_and_fail(r.a) }
  print("range: {ran}")
}
)";
  // Worked out by a dictionary model: churn(a, b) fails (rolled back) once (a, b) was removed by
  // churn(a, b - 1); the loops visit exactly the rows present at their start.
  CHECK(clean_on_both(p) == "all: 50 50 50\nprefix: 2\nrange: 12018\n");
}

TEST_CASE("store loops: main's loop sees the values as of its start, whether or not a query ran in between") {
  const char* with_query = R"(list acc by id: int { bal: int }
event load(n: int) { for i in 0 .. n { acc[i] = { bal: 0 } } }
event bump_all() { for a in acc { acc[a.id].bal += 1 } }
query total() -> int { return acc.count() }
fn main() {
  let l = load(99)
  var seen_bumped = 0
  for a in acc {
    if a.bal > 0 { seen_bumped += 1 }
    let b = bump_all()
    QUERY
  }
  print("{seen_bumped} {acc[0].bal}")
}
)";
  CHECK(clean_on_both(replace_all(with_query, "QUERY", "let t = total()")) == "0 99\n");
  CHECK(clean_on_both(replace_all(with_query, "QUERY", "")) == "0 99\n");
}

TEST_CASE("store loops: texts of the rows main's loop walks stay valid while events replace them") {
  const char* p = R"(list names by name: text { s: text }
list seqt seq { s: text }
event load() {
  names["a"] = { s: "one" }
  names["b"] = { s: "two" }
  names["c"] = { s: "three" }
  for i in 0 .. 3 { seqt.push({ s: "item {i}" }) }
}
event setall(v: text) {
  for r in names { names[r.name].s = v + r.name }
  for i in 0 .. seqt.count() { seqt[i].s = v }
  INSERT
}
query total() -> int { return names.count() }
fn main() {
  let l = load()
  for r in names { let b = setall("x{r.name}"); let t = total(); print("{r.name} {r.s}") }
  for r in seqt { let b = setall("y{r.s}"); let t = total(); print(r.s) }
  print(names["b"].s)
}
)";
  // Without the insert, the loop used to read texts the query's publish had freed (valgrind:
  // load_text_cell from iter_next); with it, the insert stopped the loop.
  for (const char* insert : {"", "names[v] = { s: v }"}) {
    CAPTURE(insert);
    CHECK(clean_on_both(replace_all(p, "INSERT", insert)) == "a one\nb two\nc three\nxc\nxc\nxc\nyxcb\n");
  }
}

TEST_CASE("store loops: a stored sequence of items walked in main while events append, pop and fail") {
  const char* p = R"(list ps seq { x: int, y: int, n: int }
event load(n: int) { for i in 0 .. n { ps.push({ x: i, y: -i, n: 0 }) } }
event touch(i: int) {
  ps[i].n += 1
  ps.push({ x: -1, y: -1, n: 9 })
}
event shrink() { let last = ps.pop() }
event touch_and_fail(i: int) {
  ps[i].n = 100
  ps.push({ x: 0, y: 0, n: 0 })
  fail "no"
}
query total() -> int { return ps.count() }
fn main() {
  let l = load(3000)
  var seen = 0
  var xs = 0
  var ns = 0
  for r in ps {
    seen += 1
    xs += r.x
    ns += r.n
    let t = total()
    let a = touch(seen - 1)
    let f = touch_and_fail(seen - 1)
    let b = shrink()
  }
  print("{seen} {xs} {ns} {total()} {ps[0].n} {ps[2999].n}")
}
)";
  CHECK(clean_on_both(p) == "3000 4498500 0 3000 1 1\n");
}

TEST_CASE("store loops: an event that inserts a row and fails does not count as a change to main's loop") {
  const char* p = R"(list acc by id: int { bal: int }
event load(n: int) { for i in 0 .. n { acc[i] = { bal: i } } }
event add_and_fail(id: int) {
  acc[id + 100000] = { bal: 1 }
  fail "no"
}
fn main() {
  let l = load(10)
  var seen = 0
  for a in acc { seen += 1; let b = add_and_fail(a.id) }
  print("seen={seen} count={acc.count()}")
}
)";
  CHECK(clean_on_both(p) == "seen=10 count=10\n");
}

TEST_CASE("store loops: a loop inside an event sees the event's own field writes, whether or not a query ran before") {
  const char* p = R"(list acc by id: int { bal: int }
list sq seq { v: int }
event load(n: int) { for i in 0 .. n { acc[i] = { bal: 0 }
    sq.push({ v: 0 }) } }
event walk() {
  var sum = 0
  for a in acc {
    sum += a.bal
    acc[(a.id + 1) % 100].bal += 1
  }
  var vs = 0
  for s in sq { vs += s.v }
  for i in 0 .. sq.count() { sq[(i + 1) % 100].v += 1 }
  print("sum={sum} vs={vs}")
}
query total() -> int { return acc.count() }
fn main() {
  let l = load(100)
  let w1 = walk()
  let w2 = walk()
  let t = total()
  let w3 = walk()
  let w4 = walk()
}
)";
  CHECK(clean_on_both(p) == "sum=99 vs=0\nsum=199 vs=100\nsum=299 vs=200\nsum=399 vs=300\n");
}

TEST_CASE("store loops: adding a row to the list an event is walking is still an error, and undoes the event") {
  const char* p = R"(list acc by id: int { bal: int }
event load(n: int) { for i in 0 .. n { acc[i] = { bal: 0 } } }
event grow() { for a in acc { acc[a.id + 1000] = { bal: 1 } } }
fn main() {
  let l = load(5)
  let r = grow()
  print("{r.ok} {acc.count()}")
  print(r.reason)
}
)";
  CHECK(clean_on_both(p) ==
        "false 5\nruntime error at 3:20: stored list 'acc' was changed (an item added or removed) while a loop was walking it\n");
}

TEST_CASE("store loops: loops that name only some text fields (ITER_SKIP) read the same values in main, queries and events") {
  // Each loop below leaves some of the row's texts unloaded; the values it reads, and those of
  // the loops after it that read the other texts, must be what a full load gives.
  const char* p = R"(list stock by (w: int, i: int) { q: int, d1: text, d2: text, data: text }
event load(n: int) {
  for i in 0 .. n { stock[1, i] = { q: i, d1: "a{i}", d2: "b{i}", data: "data of {i}" } }
}
query ints() -> int {
  var t = 0
  for r in stock[1] { t += r.q }
  return t
}
query some() -> text {
  var out = ""
  for r in stock[1].range(2, 5) { out += "{r.d2}/{r.data.len()} " }
  return out
}
event rewrite(n: int) -> text {
  var t = 0
  for r in stock[1] { t += r.q }
  for r in stock[1] { stock[1, r.i].d1 = "z{r.q + n}" }
  var out = "{t}:"
  for r in stock[1].range(0, 3) { out += r.d1 }
  return out
}
fn show(r: stock.Row) -> text { return "{r.i}={r.d1},{r.d2},{r.data}" }
fn main() {
  let l = load(10)
  print(ints())
  print(some())
  print(rewrite(100).value)
  var n = 0
  var ds = ""
  for r in stock { n += r.q }
  for r in stock { if r.i < 2 { ds += show(r) + " " } }
  print("{n} {ds}")
  let local = list by k: int { name: text, v: int }
  for i in 0 .. 3 { local[i] = { name: "n{i}", v: i * 2 } }
  var vs = 0
  for x in local { vs += x.v }
  var names = ""
  for x in local { names += x.name }
  print("{vs} {names}")
}
)";
  CHECK(clean_on_both(p) == "45\nb2/9 b3/9 b4/9 \n45:z100z101z102\n45 0=z100,b0,data of 0 1=z101,b1,data of 1 \n6 n0n1n2\n");
}
