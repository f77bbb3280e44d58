// tests/vm/test_vm.cpp — bytecode and interpreter: small programs compiled in-process and run by
// run_main (and by the vm::step driver): results, runtime errors with locations and stacks,
// event rollback, the step budget, and no leaked texts.
// Depends on tests/vm/vm_support.h.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "frontend/builtins.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "tests/support/examples.h"
#include "tests/vm/vm_support.h"
#include "vm/bytecode.h"

using pure::test::Engine;
using pure::test::Outcome;
using pure::test::output_of;
using pure::test::run_program;
using pure::test::RunConfig;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const char* const kBank = R"(list accounts by id: int { balance: num, owner: text }
event open(id: int, owner: text, amount: num) {
  accounts[id] = { balance: amount, owner: owner }
}
event transfer(from: int, to: int, amount: num) {
  if amount <= 0.0 { fail "amount must be positive" }
  let a = accounts[from] else fail "no account {from}"
  if a.balance < amount { fail "{a.owner} has only {a.balance}" }
  accounts[from].balance -= amount
  accounts[to].balance += amount
}
query balance(id: int) -> num { return accounts[id].balance }
query total() -> num {
  var t = 0.0
  for a in accounts { t += a.balance }
  return t
}
)";

Outcome run_with(const std::string& text, uint64_t max_steps, Engine engine = Engine::Interpret) {
  RunConfig c;
  c.max_steps = max_steps;
  c.engine = engine;
  return run_program(text, c);
}

}  // namespace

// The interpreter (a) and the step() driver (b) must agree on everything a run shows.
static void check_same_run(const Outcome& a, const Outcome& b) {
  CHECK(a.output == b.output);
  CHECK(a.failed == b.failed);
  CHECK(a.message == b.message);
  CHECK(a.line == b.line);
  CHECK(a.col == b.col);
  CHECK(a.stack == b.stack);
  CHECK(a.leaked_texts == 0);
  CHECK(b.leaked_texts == 0);
  CHECK(b.instructions > 0);
}

TEST_CASE("vm: integers, loops, calls") {
  const char* p = R"(fn fib(n: int) -> int {
  if n < 2 { return n }
  return fib(n - 1) + fib(n - 2)
}
fn main() {
  var total = 0
  for i in 0 .. 10 { total += i }
  var w = total
  while w > 0 { w -= 7 }
  print("{fib(20)} {total} {w} {17 / 5} {17 % 5} {-17 / 5} {-17 % 5} {0x10 + 1_000}")
}
)";
  CHECK(output_of(p) == "6765 45 -4 3 2 -3 -2 1016\n");
}

TEST_CASE("vm: nums and conversions") {
  CHECK(output_of("fn main() { print(\"{num(7) / 2.0} {int(3.9)} {int(-3.9)} {sqrt(16.0)} {1.0 / 3.0} {2.5e-3 * 2}\") }") ==
        "3.5 3 -3 4.0 0.3333333333333333 0.005\n");
  CHECK(output_of("fn main() { let x: num = 2\n print(x * 2) }") == "4.0\n");
  CHECK(output_of("fn main() { print(min(3, -2)) ; print(max(1.5, 2.5)); print(abs(-7)) }") == "-2\n2.5\n7\n");
}

TEST_CASE("vm: texts") {
  const char* p = R"(fn main() {
  let t = "abc" + "def"
  print("{t.len()} {t.slice(1, 3)} {t.find("cd")} {t.upper()}")
  print(join("a,b,,c".split(","), "|"))
  print("\u{e9}t\u{e9}".len())
  var s = ""
  for i in 0 .. 5 { s = s + text(i) }
  print(s + " {true} {1 == 2}")
  print("tab\tq\"uote\" brace\{\}")
}
)";
  CHECK(output_of(p) == "6 bc 2 ABCDEF\na|b||c\n3\n01234 true false\ntab\tq\"uote\" brace{}\n");
}

TEST_CASE("vm: sequences and items") {
  const char* p = R"(type Point { x: num, y: num }
fn main() {
  let xs = [3, 1, 2]
  xs.push(4)
  xs[1] = 9
  var sum = 0
  var weighted = 0
  for i, x in xs { sum += x
 weighted += i * x }
  print("{xs.count()} {sum} {weighted} {xs[3]}")
  let ps = seq Point
  ps.push(Point { x: 1.0, y: 2.0 })
  ps.push(Point { x: 3.0, y: 4.0 })
  ps[0].x = 5.0
  var t = 0.0
  for p in ps { t += p.x * p.y }
  print(t)
  let flags = repeat(false, 4)
  flags[2] = true
  print("{flags[1]} {flags[2]} {flags.count()}")
}
)";
  CHECK(output_of(p) == "4 18 25 4\n22.0\nfalse true 4\n");
}

TEST_CASE("vm: keyed event lists in key order, defaults, has and remove") {
  const char* p = R"(fn main() {
  let counts = list by word: text { n: int = 0 }
  for w in "b a b c b a".split(" ") { counts[w].n += 1 }
  for c in counts { print("{c.word} {c.n}") }
  if counts.has("a") and not counts.has("z") { counts.remove("a") }
  print("{counts.count()} {counts.has("a")}")
  let grid = list by (r: int, c: int) { v: int = 0 }
  grid[1, 2].v = 5
  grid[0, 9].v = 1
  grid[1, 0].v = 7
  var row1 = ""
  for g in grid[1] { row1 = row1 + "{g.c}:{g.v} " }
  print(row1)
}
)";
  CHECK(output_of(p) == "a 2\nb 3\nc 1\n2 false\n0:7 2:5 \n");
}

TEST_CASE("vm: keyed lists by text: writing an existing key again, reads and writes after removes") {
  // m[k] = ... with a key equal to an existing one but another text: the row keeps the text the
  // list orders by (it used to release it and keep comparing against it: a use after free).
  const char* p = R"(fn main() {
  let m = list by w: text { n: int, s: text = "" }
  for i in 0 .. 60 {
    m["k" + text(i % 7)] = { n: i }
    m["k" + text(i % 7)] = { n: i + 1, s: "v" + text(i) }
    m["k" + text(i % 5)].n += 100
  }
  m.remove("k3")
  m["k" + text(3)] = { n: 5 }
  var out = ""
  for r in m { out = out + "{r.w}={r.n}{r.s} " }
  print(out)
  let counts = list by w: text { n: int = 0 }
  for w in "x y x z x y ".split(" ") { counts[w].n += 1 }
  for c in counts { print("[{c.w}] {c.n}") }
}
)";
  RunConfig c;
  Outcome o = run_program(p, c);
  CHECK(o.signal == 0);
  CHECK(o.output == "k0=57v56 k1=58v57 k2=59v58 k3=5 k4=254v53 k5=55v54 k6=56v55 \n[] 1\n[x] 3\n[y] 2\n[z] 1\n");
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: writing a field of a missing stored row or position is an error, found in one search") {
  const char* p = R"(list acc by id: int { bal: int }
list log seq { v: int }
event setup() {
  acc[1] = { bal: 10 }
  log.push({ v: 1 })
  log.push({ v: 2 })
}
event set_bal(id: int, b: int) { acc[id].bal = b }
event set_log(i: int, v: int) { log[i].v = v }
query bal(id: int) -> int { return acc[id].bal }
fn main() {
  let s = setup()
  let a = set_bal(1, 5)
  let b = set_bal(7, 5)
  let c = set_log(1, 9)
  let d = set_log(2, 9)
  let e = set_log(-1, 9)
  print("{a.ok} {b.ok} {b.reason} | {c.ok} {d.ok} {d.reason} | {e.ok} {e.reason} | {bal(1)}")
  for l in log { print(l.v) }
}
)";
  CHECK(output_of(p) ==
        "true false runtime error at 8:46: no item with key 7 in stored list 'acc' | true false runtime error at 9:42: "
        "index 2 is out of range for a sequence of 2 items | false runtime error at 9:42: index -1 is out of range for "
        "a sequence of 2 items | 5\n1\n9\n");
}

TEST_CASE("vm: args and input reach main") {
  RunConfig c;
  c.args = {"one", "two"};
  c.input = "line 1\nline 2\n";
  Outcome o = run_program("fn main(args: seq text) {\n print(\"{args.count()} {args[1]}\")\n print(input().split(\"\\n\").count()) }", c);
  CHECK(o.compile_errors == "");
  CHECK(o.output == "2 two\n3\n");
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: events are transactions; a failing event undoes its writes") {
  std::string p = std::string(kBank) + R"(fn main() {
  open(1, "ann", 10.0)
  open(2, "bob", 0.0)
  let r = transfer(1, 2, 4.0)
  print("{r.ok} '{r.reason}' {balance(1)} {balance(2)}")
  let r2 = transfer(1, 3, 1.0)
  print("{r2.ok} {balance(1)} {total()}")
  print(r2.reason)
  let r3 = transfer(2, 1, -1.0)
  print("{r3.ok} {r3.reason}")
  let r4 = transfer(2, 1, 100.0)
  print("{r4.ok} {r4.reason} {balance(2)}")
  let r5 = transfer(9, 1, 1.0)
  print(r5.reason)
}
)";
  std::string out = output_of(p);
  // transfer(1, 3, ...) subtracts from 1, then fails on the missing key 3: the subtraction is undone
  CHECK(out == "true '' 6.0 4.0\nfalse 6.0 10.0\n"
               "runtime error at 10:24: no item with key 3 in stored list 'accounts'\n"
               "false amount must be positive\nfalse bob has only 4.0 4.0\nno account 9\n");
}

TEST_CASE("vm: runtime errors carry the location and the call stack") {
  const char* p = R"(fn div(a: int, b: int) -> int {
  return a / b
}
fn middle(x: int) -> int { return div(x, x - 3) }
fn main() {
  print("before")
  print(middle(3))
}
)";
  Outcome o = run_program(p);
  REQUIRE(o.signal == 0);
  CHECK(o.output == "before\n");
  CHECK(o.failed);
  CHECK(contains(o.message, "division by zero"));
  CHECK(o.line == 2);
  CHECK(o.col >= 10);
  REQUIRE(o.stack.size() == 3);
  CHECK(o.stack[0].rfind("div@2:", 0) == 0);
  CHECK(o.stack[1].rfind("middle@4:", 0) == 0);
  CHECK(o.stack[2].rfind("main@7:", 0) == 0);
  CHECK(o.rendered.rfind("t.pure:2:", 0) == 0);
  CHECK(contains(o.rendered, ": runtime error: "));
  CHECK(contains(o.rendered, "\n  in div at t.pure:2:"));
  CHECK(contains(o.rendered, "\n  called from main at t.pure:7:"));
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: each kind of runtime error") {
  struct Case { const char* body; const char* message; uint32_t line; };
  Case cases[] = {
      {"var x = 9223372036854775807\n x += 1", "integer overflow", 2},
      {"var x = -9223372036854775807 - 1\n x = x / -1", "", 2},
      {"let xs = [1, 2]\n print(xs[2])", "out of range", 2},
      {"let xs = [1, 2]\n print(xs[-1])", "out of range", 2},
      {"let m = list by k: int { v: int }\n print(m[4].v)", "no item with key 4", 2},
      {"let z = 0\n print(10 % z)", "", 2},
      {"fail \"gave up\"", "failed: gave up", 1},
      {"let t = \"abc\"\n print(t.slice(2, 9))", "", 2},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    Outcome o = run_program(std::string("fn main() {\n ") + c.body + "\n}\n");
    REQUIRE(o.signal == 0);
    CHECK(o.compile_errors == "");
    CHECK(o.failed);
    CHECK(contains(o.message, c.message));
    CHECK(o.line == c.line + 1);
    CHECK(o.col >= 1);
    REQUIRE(o.stack.size() == 1);
    CHECK(o.stack[0].rfind("main@", 0) == 0);
    CHECK(o.leaked_texts == 0);
  }
}

TEST_CASE("vm: bitwise operators on the two's complement pattern; shifts out of 0..63 are errors") {
  const char* p = R"(fn main() {
  let m = -1
  print("{0xF0 | 0x0F} {0xFF & 0x3C} {0xFF ^ 0x0F} {~0} {~-1} {1 << 10} {1 << 63} {-16 >> 2} {m >> 63}")
  print("{(1 << 62) << 1} {0x7FFFFFFFFFFFFFFF >> 62} {3 << 0} {-9223372036854775807 - 1 >> 63} {5 & -2}")
  print("{1 + 2 << 3} {1 | 2 ^ 3 & 6} {6 & 3 == 2} {-~5}")
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    Outcome o = run_with(p, 1000, engine);
    CHECK(o.output ==
          "255 60 240 -1 0 1024 -9223372036854775808 -4 -1\n"
          "-9223372036854775808 1 3 -1 4\n"
          "24 1 true 6\n");
    CHECK_FALSE(o.failed);
  }
  struct Case { const char* body; const char* message; uint32_t col; };
  Case cases[] = {
      {"let n = 64\n print(1 << n)", "shift amount out of range: 1 << 64 (the amount must be 0 to 63)", 10},
      {"let n = -1\n print(8 >> n)", "shift amount out of range: 8 >> -1 (the amount must be 0 to 63)", 10},
      {"let n = -9223372036854775807 - 1\n print(8 << n)", "shift amount out of range: 8 << -9223372036854775808", 10},
      {"let n = 100\n print(-8 >> n)", "shift amount out of range: -8 >> 100", 11},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    for (Engine engine : {Engine::Interpret, Engine::Step}) {
      Outcome o = run_with(std::string("fn main() {\n ") + c.body + "\n}\n", 1000, engine);
      REQUIRE(o.signal == 0);
      CHECK(o.failed);
      CHECK(contains(o.message, c.message));
      CHECK(o.line == 3);
      CHECK(o.col == c.col);
    }
  }
}

TEST_CASE("vm: 'if' as a value evaluates only the chosen branch, into any kind of slot") {
  const char* p = R"(type P { x: int, s: text }
fn pick(b: bool, t: text) -> text { return if b { t + "!" } else { t } }
fn main() {
  var s = "a"
  var total = 0
  for i in 0 .. 6 {
    s = if i % 2 == 0 { s + "{i}" } else { s }
    total += if i < 3 { i } else if i < 5 { 10 * i } else { 1 / (i - 5 + 1) }
  }
  let zero = 0
  let safe = if zero == 0 { 0 } else { 10 / zero }
  let p = if total > 10 { P { x: 1, s: pick(true, "y") } } else { P { x: 2, s: "n" } }
  let xs = if safe == 0 { [s, pick(false, "z")] } else { [] }
  print("{s} {total} {safe} {p.x} {p.s} {xs} {if xs.count() > 1 { xs[1] } else { "none" }}")
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    Outcome o = run_with(p, 10000, engine);
    CHECK(o.output == "a024 74 0 1 y! [\"a024\", \"z\"] z\n");
    CHECK_FALSE(o.failed);
    CHECK(o.leaked_texts == 0);
  }
}

TEST_CASE("vm: events take seqs and return values into their outcome; a failed one's value is an error") {
  const char* p = R"(type L { item: int, name: text }
type P { id: int, note: text, total: num }
list orders by id: int { n: int, first: text }
event place(id: int, ls: seq L, tags: seq text) -> P {
  if ls.count() == 0 { fail "empty order {id}" }
  orders[id] = { n: ls.count(), first: ls[0].name }
  ls.push(L { item: 0, name: "added inside" })
  tags.push("x")
  return P { id: id, note: orders[id].first + tags[0], total: 1.5 * num(ls.count()) }
}
event names() -> seq text {
  let out: seq text = []
  for o in orders { out.push(o.first) }
  return out
}
event first() -> text { return orders[1].first }
event boom(n: int) -> seq int { return [10 / n] }
fn main() {
  let ls = [L { item: 1, name: "ab" }, L { item: 2, name: "cd" }]
  let tags = ["t"]
  let r = place(1, ls, tags)
  print(r)
  print("{r.value.id} {r.value.note} {ls.count()} {tags}")
  let e: seq L = []
  let f = place(2, e, tags)
  print(f)
  print(names())
  print(first().value)
  let b = boom(0)
  print(b)
  print(boom(2).value)
  if not f.ok { print("failed: {f.reason}") }
  print(f.value.id)
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    Outcome o = run_with(p, 10000, engine);
    CHECK(o.output ==
          "outcome { ok: true, reason: \"\", value: P { id: 1, note: \"abt\", total: 4.5 } }\n"
          "1 abt 2 [\"t\"]\n"
          "outcome { ok: false, reason: \"empty order 2\" }\n"
          "outcome { ok: true, reason: \"\", value: [\"ab\"] }\n"
          "ab\n"
          "outcome { ok: false, reason: \"runtime error at 17:44: division by zero\" }\n"
          "[5]\n"
          "failed: empty order 2\n");
    CHECK(o.failed);
    CHECK(o.message == "the event failed, so its outcome has no value (reason: empty order 2); check '.ok' before reading '.value'");
    CHECK(o.line == 33);
    CHECK(o.leaked_texts == 0);
  }
}

TEST_CASE("vm: constants are computed once, at compile time, with the VM's arithmetic") {
  const char* p = R"(const N = 3
const BIG = 9223372036854775807
const NEG = -BIG - 1
const Q = NEG / 7
const R = NEG % 7
const THIRD = 1.0 / 3.0
const INF = 1.0 / 0.0
const ODD = NEG >> 63 & 1 == 1
const NAME = "n" + "{N}" + "{ODD}"
const NAN_EQ = (0.0 / 0.0) == (0.0 / 0.0)
list stock by id: int { qty: int = N * 10, note: text = NAME }
event put(id: int) { stock[id] = {} }
fn main() {
  let r = put(1)
  print("{Q} {R} {THIRD} {INF} {ODD} {NAME} {NAN_EQ} {stock[1].qty} {stock[1].note}")
  let big = BIG
  let neg = NEG
  print("{neg / 7 == Q} {neg % 7 == R} {1.0 / 3.0 == THIRD}")
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    Outcome o = run_with(p, 10000, engine);
    CHECK(o.compile_errors == "");
    CHECK(o.output == "-1317624576693539401 -1 0.3333333333333333 inf true n3true false 30 n3true\ntrue true true\n");
    CHECK(o.leaked_texts == 0);
  }
}

TEST_CASE("vm: zpad pads ints with zeros after the sign; a bad width is a located error") {
  CHECK(output_of("fn main() { print(\"{zpad(42, 4)} {zpad(-42, 5)} {zpad(123, 1)} {zpad(0, 2)}\") }") == "0042 -0042 123 00\n");
  for (const char* w : {"-1", "101"}) {
    Outcome o = run_program(std::string("fn main() {\n  let w = ") + w + "\n  print(zpad(1, w))\n}\n");
    CHECK(o.failed);
    CHECK(o.message == std::string("zpad: width ") + w + " is outside 0..100");
    CHECK(o.line == 3);
  }
  CHECK(contains(pure::test::run_program("fn main() { print(zpad(1.5, 2)) }").compile_errors, "argument 1 of 'zpad' must be int, not num"));
}

TEST_CASE("vm: at, slice, len and code agree on ASCII and other texts, also after appending in place") {
  const char* p = R"(fn main() {
  let alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
  print("{alpha.len()} {alpha.at(0)}{alpha.at(61)} {alpha.slice(60, 62)} {alpha.slice(5, 5).len()} {alpha.code(26)}")
  var s = "abc"
  print("{s.len()} {s.at(2)}")
  s = s + "\u{e9}x"
  print("{s.len()} {s.at(3)} {s.at(4)} {s.slice(2, 5)} {s.code(3)}")
  var t = "\u{e9}"
  t = t + "ab"
  print("{t.len()} {t.at(1)} {t.slice(1, 3)}")
  var u = "ab"
  print(u.len())
  u = u + "cd"
  print("{u.len()} {u.at(3)} {u.slice(1, 4).at(2)}")
  var w = "xxxxxxx" + "x"
  w = w + "y"           // grows with room to spare: the next append is in place
  print(w.len())        // finds w all ASCII
  w = w + "\u{e9}"      // in place: w is no longer all ASCII
  print("{w.len()} {w.at(9)} {w.slice(8, 10)}")
}
)";
  for (Engine engine : {Engine::Interpret, Engine::Step}) {
    Outcome o = run_with(p, 10000, engine);
    CHECK(o.output == "62 a9 89 0 65\n3 c\n5 \u00e9 x c\u00e9x 233\n3 a ab\n2\n4 d d\n9\n10 \u00e9 y\u00e9\n");
    CHECK(o.leaked_texts == 0);
  }
  struct Case { const char* body; const char* message; };
  Case cases[] = {
      {"print(\"abc\".at(3))", "char_at(3): index 3 is out of range for a text of length 3"},
      {"print(\"abc\".at(-1))", "char_at(-1)"},
      {"print(\"abc\".slice(2, 4))", "slice(2, 4): end 4 is out of range for a text of length 3"},
      {"print(\"abc\".slice(2, 1))", "slice(2, 1): end 1 is before start 2"},
      {"print(\"abc\".code(3))", "code_point_at(3)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    Outcome o = run_program(std::string("fn main() {\n  ") + c.body + "\n}\n");
    CHECK(o.failed);
    CHECK(contains(o.message, c.message));
  }
}

TEST_CASE("vm: deep recursion is a runtime error, not a crash") {
  Outcome o = run_program("fn down(n: int) -> int { return down(n + 1) + 1 }\nfn main() { print(down(0)) }");
  REQUIRE(o.signal == 0);
  CHECK(o.failed);
  CHECK(contains(o.message, "stack overflow"));
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: the step budget stops an endless loop at a location") {
  Outcome o = run_with("fn main() {\n var i = 0\n while true { i += 1 }\n}", 1000);
  REQUIRE(o.signal == 0);
  CHECK(o.failed);
  CHECK(contains(o.message, "step budget spent"));
  CHECK(o.line == 3);
  Outcome rec = run_with("fn f(n: int) -> int { return f(n) }\nfn main() { print(f(1)) }", 1000);
  CHECK(rec.failed);
  CHECK(contains(rec.message, "step budget spent"));
}

// docs/language.md: the budget is per invocation (main, and each event or query it calls)
TEST_CASE("vm: an event that spends its budget fails alone; main goes on") {
  std::string p = std::string(kBank) + R"(event spin(id: int) {
  accounts[id].balance = 99.0
  while true { }
}
fn main() {
  open(1, "ann", 10.0)
  let r = spin(1)
  print("{r.ok} {balance(1)}")
  print(r.reason)
}
)";
  Outcome o = run_with(p, 5000);
  REQUIRE(o.signal == 0);
  CHECK_FALSE(o.failed);
  CHECK(contains(o.output, "false 10.0\n"));
  CHECK(contains(o.output, "step budget spent"));
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: a step is one loop iteration or one call; the smallest budget that suffices is exact") {
  // main with a loop of 10 iterations calling f each time: the run needs a fixed number of steps;
  // one fewer must fail, in both engines alike.
  const char* p = "fn f(x: int) -> int { return x + 1 }\nfn main() {\n var t = 0\n for i in 0 .. 10 { t = f(t) }\n print(t)\n}";
  auto smallest = [&](Engine engine) {
    uint64_t lo = 1, hi = 1000;  // hi is enough
    while (lo < hi) {
      uint64_t mid = (lo + hi) / 2;
      if (run_with(p, mid, engine).failed) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  uint64_t need = smallest(Engine::Interpret);
  // docs/language.md: a loop that runs n times spends n + 1 steps; each call spends one
  CHECK(need == 11 + 10);
  CHECK(smallest(Engine::Step) == need);
  Outcome short_run = run_with(p, need - 1);
  CHECK(contains(short_run.message, "step budget spent"));
  CHECK(run_with(p, need).output == "10\n");
}

TEST_CASE("vm: step() one instruction at a time gives the same results as interpret()") {
  std::string programs[] = {
      "fn fib(n: int) -> int { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\nfn main() { print(fib(15)) }",
      "fn main() { var s = \"\"\n for i in 0 .. 50 { if i % 7 == 3 { continue }\n if i > 40 { break }\n s = s + text(i) }\n print(s) }",
      "fn main() {\n let m = list by k: text { n: int = 0 }\n for w in \"x y x z y x\".split(\" \") { m[w].n += 1 }\n"
      " for r in m { print(\"{r.k}={r.n}\") } }",
      "type P { a: int, b: text }\nfn main() { let ps = seq P\n for i in 0 .. 5 { ps.push(P { a: i, b: \"#{i}\" }) }\n"
      " ps[2].b = \"two\"\n var out = \"\"\n for p in ps { out = out + p.b }\n print(out) }",
      std::string(kBank) +
          "fn main() { open(1, \"a\", 5.0)\n open(2, \"b\", 1.0)\n let r = transfer(1, 2, 2.0)\n"
          " let bad = transfer(1, 7, 1.0)\n print(\"{r.ok} {bad.ok} {bad.reason} {balance(1)} {total()}\") }",
      "fn g(x: int) -> int { return 100 / x }\nfn main() { print(g(5))\n print(g(0)) }",
      "fn main() { var x = 1\n while true { x = x * 3 } }",
      "fn main() { fail \"stop here\" }",
  };
  for (const std::string& p : programs) {
    CAPTURE(p);
    Outcome a = run_program(p);
    RunConfig c;
    c.engine = Engine::Step;
    Outcome b = run_program(p, c);
    REQUIRE(a.signal == 0);
    REQUIRE(b.signal == 0);
    CHECK(a.compile_errors == "");
    check_same_run(a, b);
  }
}

TEST_CASE("vm: no texts leak, across texts kept in lists, stored lists and failures") {
  std::string p = std::string(kBank) + R"(fn main() {
  var names = seq text
  for i in 0 .. 100 { names.push("name {i}") }
  let byname = list by n: text { len: int = 0 }
  for n in names { byname[n].len = n.len() }
  for i in 0 .. 20 { open(i, names[i], num(i)) }
  for i in 0 .. 20 { let r = transfer(i, i + 1, 1.0) }
  print("{byname.count()} {total()}")
}
)";
  Outcome o = run_program(p);
  REQUIRE(o.signal == 0);
  CHECK_FALSE(o.failed);
  CHECK(o.output == "100 190.0\n");
  CHECK(o.leaked_texts == 0);
}

// ---- every example, by both engines -------------------------------------------------------------

TEST_CASE("vm: every example gives the same results by step() and by interpret(), and leaks no text") {
  std::filesystem::path dir = PURE_EXAMPLES_DIR;
  std::vector<pure::test::Example> examples = pure::test::read_examples(dir);
  MESSAGE(examples.size() << " examples in " << dir.string());
  for (const pure::test::Example& e : examples) {
    CAPTURE(e.path.filename().string());
    RunConfig c;
    c.max_steps = e.max_steps;
    c.input = e.input;
    c.args = e.args;
    Outcome a = run_program(e.text, c);
    c.engine = Engine::Step;
    Outcome b = run_program(e.text, c);
    REQUIRE(a.signal == 0);
    REQUIRE(b.signal == 0);
    if (!a.compile_errors.empty()) {  // compile-error examples: nothing to run
      CHECK(a.compile_errors == b.compile_errors);
      continue;
    }
    check_same_run(a, b);
  }
}

// ---- the frame limit ---------------------------------------------------------------------------

TEST_CASE("frame limit: what lowering accepts loads, what it refuses is one located error (the boundary)") {
  // Lowering reports the limit where the source is known; loading must never refuse a program
  // lowering accepted. Bisect the longest list literal main may hold and check both sides.
  auto lower_list = [](int n, pure::ir::Program& out) {
    std::string text = "fn main() {\n  let xs = [";
    for (int i = 0; i < n; ++i) text += i ? ",1" : "1";
    text += "]\n  print(xs.count())\n}\n";
    pure::Source source("t.pure", text);
    pure::Diagnostics diags(source);
    pure::CheckedModule checked = pure::compile_frontend(source, diags);
    REQUIRE_FALSE(diags.any());
    out = pure::ir::lower_module(checked, "t.pure");
    return out.errors.empty();
  };
  int ok = 1000, too_big = 70000;
  pure::ir::Program p;
  REQUIRE(lower_list(ok, p));
  REQUIRE_FALSE(lower_list(too_big, p));
  while (too_big - ok > 1) {
    int mid = (ok + too_big) / 2;
    (lower_list(mid, p) ? ok : too_big) = mid;
  }
  CAPTURE(ok);
  REQUIRE(lower_list(ok, p));
  std::string error;
  CHECK_MESSAGE(pure::vm::load_program(p, error), error);
  REQUIRE_FALSE(lower_list(ok + 1, p));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0].loc.line == 2);
  CHECK(p.errors[0].loc.col == 12);
  CHECK(ok > 59990);  // the literal's elements are nearly all of the frame
}

// ---- bytecode shape (no execution) -------------------------------------------------------------

TEST_CASE("bytecode: blocks keep the IR's loops, steps are spent inside loops, jumps land on block starts") {
  const char* text = R"(fn fib(n: int) -> int { if n < 2 { return n }
 return fib(n - 1) + fib(n - 2) }
fn sum(n: int) -> int { var s = 0
 for i in 0 .. n { var j = 0
 while j < i { s += j
 j += 1 } }
 return s }
fn main() { let m = list by k: int { v: int = 0 }
 for i in 0 .. 5 { m[i].v = sum(i) }
 for r in m { print(r.v + fib(r.k)) } }
)";
  pure::Source source("t.pure", text);
  pure::Diagnostics diags(source);
  pure::CheckedModule checked = pure::compile_frontend(source, diags);
  REQUIRE_FALSE(diags.any());
  pure::ir::Program lowered = pure::ir::lower_module(checked, "t.pure");
  std::string error;
  std::unique_ptr<pure::vm::Program> program = pure::vm::load_program(lowered, error);
  REQUIRE_MESSAGE(program, error);
  REQUIRE(program->functions.size() == lowered.functions.size());
  std::string dump = pure::vm::dump_bytecode(*program);
  CHECK_FALSE(dump.empty());
  CAPTURE(dump);
  for (size_t f = 0; f < program->functions.size(); ++f) {
    const pure::vm::Function& fn = program->functions[f];
    const pure::ir::Function& irf = lowered.functions[f];
    CAPTURE(fn.name);
    CHECK(fn.name == irf.name);
    CHECK(fn.locs.size() == fn.code.size());
    // blocks tile the code in order
    uint32_t pc = 0;
    std::vector<char> starts(fn.code.size() + 1, 0);
    int headers = 0;
    for (const pure::vm::BlockInfo& b : fn.blocks) {
      CHECK(b.start_pc == pc);
      CHECK(b.end_pc >= b.start_pc);
      pc = b.end_pc;
      if (b.start_pc < fn.code.size()) starts[b.start_pc] = 1;
      if (b.loop_header) {
        ++headers;
        CHECK(b.loop_bearing);
      }
    }
    CHECK(pc == fn.code.size());
    CHECK(headers == static_cast<int>(irf.loops.size()));
    // every instruction that spends a loop's step (LOOP, or ITER_NEXT heading a for-loop over a
    // list) lies in a loop-bearing block, and every loop has one. Loop rotation leaves one copy of
    // the loop's first test in front of the loop: that block goes straight into a loop header.
    int spenders = 0;
    for (size_t k = 0; k < fn.blocks.size(); ++k) {
      const pure::vm::BlockInfo& b = fn.blocks[k];
      for (uint32_t i = b.start_pc; i < b.end_pc && i < fn.code.size(); ++i)
        if (fn.code[i].op == pure::ir::Op::LOOP || fn.code[i].op == pure::ir::Op::ITER_NEXT) {
          ++spenders;
          bool entry_test = !b.loop_bearing && k + 1 < fn.blocks.size() && fn.blocks[k + 1].loop_header;
          CHECK((b.loop_bearing || entry_test));
        }
    }
    CHECK(spenders >= headers);
    for (size_t i = 0; i < fn.code.size(); ++i) {
      if (!pure::ir::op_jumps(fn.code[i].op)) continue;
      int64_t target = static_cast<int64_t>(i) + fn.code[i].imm;
      CAPTURE(i);
      REQUIRE(target >= 0);
      REQUIRE(target < static_cast<int64_t>(fn.code.size()));
      CHECK(starts[target]);
    }
  }
  CHECK(program->functions[program->main].name == "main");
  // every loop's pass counter is its element of the program-wide array, by a program-wide index
  // that each LOOP of the loop carries in A (low bits) and B (high bits) and an ITER_NEXT heading
  // it in C; heads_loop (the JITs' entry dispatch) agrees with both. Index 0 is no loop's: parked
  // for ever, and what a LOOP or ITER_NEXT that heads no loop carries
  CHECK(program->loop_hits[pure::vm::kNoLoopIndex].load() == pure::vm::kLoopParked);
  uint32_t next = 1, loops_seen = 0, iter_heads = 0;
  for (const pure::vm::Function& fn : program->functions) {
    for (const pure::vm::LoopInfo& L : fn.loops) {
      CHECK(L.index == next++);
      CHECK(L.hits.at == &program->loop_hits[L.index]);
    }
    for (const pure::vm::Instr& in : fn.code)
      if (in.op == pure::ir::Op::LOOP && in.imm >= 0) {
        ++loops_seen;
        CHECK((in.a | uint32_t{in.b} << 16) == fn.loops[static_cast<size_t>(in.imm)].index);
        CHECK(pure::vm::heads_loop(fn, in, static_cast<uint32_t>(in.imm)));
      } else if (in.op == pure::ir::Op::LOOP) {
        CHECK((in.a | uint32_t{in.b} << 16) == pure::vm::kNoLoopIndex);
      }
    for (size_t pc = 0; pc < fn.code.size(); ++pc) {
      const pure::vm::Instr& in = fn.code[pc];
      if (in.op != pure::ir::Op::ITER_NEXT || in.c == pure::vm::kNoLoopIndex) continue;
      ++iter_heads;
      // the loop it heads is the innermost loop of its block, and it heads no other
      int32_t id = -1;
      for (const pure::vm::BlockInfo& b : fn.blocks)
        if (pc >= b.start_pc && pc < b.end_pc) id = b.loop;
      REQUIRE(id >= 0);
      CHECK(in.c == fn.loops[static_cast<size_t>(id)].index);
      for (uint32_t l = 0; l < fn.loops.size(); ++l) CHECK(pure::vm::heads_loop(fn, in, l) == (l == static_cast<uint32_t>(id)));
    }
  }
  CHECK(next >= 4);  // loops in several functions, so indexes other than the local ids
  CHECK(loops_seen >= 3);
  CHECK(iter_heads >= 1);  // main's `for r in m`, whose index (after sum's loops) is not its id
}

TEST_CASE("vm: rollback undoes inserts, removes, appends and field writes together") {
  const char* p = R"(list items by id: int { name: text, qty: int = 0 }
list journal seq { line: text }
event add(id: int, name: text) {
  items[id] = { name: name, qty: 1 }
  journal.push({ line: "add {id}" })
}
event churn(remove_id: int, add_id: int) {
  items.remove(remove_id)
  items[add_id] = { name: "new", qty: 5 }
  items[1].qty += 10
  journal.push({ line: "churn" })
  journal.push({ line: "churn again" })
  fail "changed my mind"
}
query summary() -> text {
  var s = ""
  for it in items { s = s + "{it.id}:{it.name}:{it.qty} " }
  return s + "| {journal.count()}"
}
fn main() {
  add(1, "one")
  add(2, "two")
  print(summary())
  let r = churn(2, 3)
  print("{r.ok} {r.reason}")
  print(summary())
}
)";
  std::string out = output_of(p);
  CHECK(out == "1:one:1 2:two:1 | 2\nfalse changed my mind\n1:one:1 2:two:1 | 2\n");
  CHECK(output_of(p, Engine::Step) == out);
}

TEST_CASE("vm: a runtime error inside a query called from main ends the run, with the query on the stack") {
  std::string p = std::string(kBank) + "fn main() {\n  open(1, \"a\", 1.0)\n  print(balance(1))\n  print(balance(2))\n}\n";
  Outcome o = run_program(p);
  REQUIRE(o.signal == 0);
  CHECK(o.output == "1.0\n");
  CHECK(o.failed);
  CHECK(contains(o.message, "no item with key 2"));
  REQUIRE(o.stack.size() == 2);
  CHECK(o.stack[0].rfind("balance@12:", 0) == 0);
  CHECK(o.stack[1].rfind("main@21:", 0) == 0);
  CHECK(o.leaked_texts == 0);
}

TEST_CASE("vm: both engines run through one driver: an event's budget is its own, main's is restored exactly") {
  // main spends 1 step per call and 4 on its loop (3 passes + the exit test); each event gets a
  // budget of its own and hands main back exactly what main had before the call. The step
  // driver once added the event's leftover to main's budget and so ran past a spent budget.
  const char* p = R"(list c by id: int { n: int = 0 }
event bump(k: int) { for i in 0 .. k { c[i].n += 1 } }
event boom() {
  for i in 0 .. 5 { c[i].n += 1 }
  fail "no"
}
query total() -> int {
  var t = 0
  for r in c { t += r.n }
  return t
}
fn main() {
  let a = bump(3)
  print("a {a.ok}")
  let b = boom()
  print("b {b.ok} {b.reason}")
  for i in 0 .. 3 { print(i) }
  print("end")
}
)";
  for (uint64_t budget = 1; budget <= 30; ++budget) {
    CAPTURE(budget);
    Outcome interp = run_with(p, budget, Engine::Interpret);
    Outcome step = run_with(p, budget, Engine::Step);
    REQUIRE(interp.signal == 0);
    REQUIRE(step.signal == 0);
    check_same_run(interp, step);
    bool main_finishes = budget >= 2 + 4;
    CHECK(contains(interp.output, "end") == main_finishes);
    if (!main_finishes) CHECK(contains(interp.message, "step budget spent"));
  }
  // bump needs 4 steps of its own budget; below that it fails alone and main goes on
  CHECK(contains(run_with(p, 6).output, "a true\n"));
  // bump fails alone; main goes on and stops at the print of boom's reason: the spent budget's
  // message is over 128 bytes, and print spends a step per 64 bytes (vm/exec.h: spend_work)
  Outcome low = run_with(p, 3);
  CHECK(low.output.rfind("a false\n", 0) == 0);
  CHECK(low.failed);
  CHECK(low.line == 16);
  Outcome enough = run_with(p, 4);  // boom fails alone too; main prints its reason and stops in its loop
  CHECK(contains(enough.output, "b false runtime error"));
  CHECK(enough.line == 17);
}

// ---- the memory budget (RunOptions::max_memory, runtime/memory.h) ----------------------------

static Outcome run_with_memory(const std::string& text, uint64_t max_memory, Engine engine = Engine::Interpret) {
  RunConfig c;
  c.max_memory = max_memory;
  c.max_steps = 1'000'000'000;
  c.engine = engine;
  return run_program(text, c);
}

TEST_CASE("vm: an event that runs out of memory fails and is rolled back; main goes on") {
  const char* p = R"(list log seq { n: int }
list names by k: int { s: text }
event grow() {
  var i = 0
  while true { log.push({ n: i }); i += 1 }
}
event grow_texts() {
  var i = 0
  while true { names[i] = { s: "name {i}, padded out to take some room" }; i += 1 }
}
event add(n: int) { log.push({ n: n }) }
fn main() {
  let a = grow()
  print("{a.ok} {log.count()}")
  let b = grow_texts()
  print("{b.ok} {names.count()}")
  let c = grow()
  print("{c.ok} {log.count()} {c.reason}")
  let d = add(5)
  print("{d.ok} {log.count()}")
}
)";
  Outcome a = run_with_memory(p, 16 << 20);
  REQUIRE(a.signal == 0);
  CHECK_FALSE(a.failed);
  CHECK(a.output ==
        "false 0\nfalse 0\nfalse 0 runtime error at 5:19: memory budget spent (16 MiB of texts, lists and stored rows "
        "held at once); raise it with --max-memory\ntrue 1\n");
  CHECK(a.leaked_texts == 0);
  check_same_run(a, run_with_memory(p, 16 << 20, Engine::Step));
}

TEST_CASE("vm: running out of memory in main is a located runtime error; what was printed stays") {
  struct Case {
    const char* program;
    uint32_t line, col;
    const char* message;
  };
  const char* spent = "memory budget spent (16 MiB of texts, lists and stored rows held at once); raise it with --max-memory";
  Case cases[] = {
      // a text split into more pieces than the budget holds (built piece by piece, let go whole)
      {"fn main() {\n  print(\"before\")\n  let parts = \"ab\".repeat(2000000).split(\"\")\n  print(parts.count())\n}", 3, 35, spent},
      {"fn main() {\n  print(\"before\")\n  let w = \"a \".repeat(3000000).words()\n  print(w.count())\n}", 3, 31, spent},
      {"fn main() {\n  print(\"before\")\n  let w = \"a\\n\".repeat(3000000).lines()\n  print(w.count())\n}", 3, 32, spent},
      // repeat: past the list limit is the list limit's message; within it, the budget's
      {"fn main() {\n  print(\"before\")\n  let xs = repeat(0, 2147483647)\n  print(xs.count())\n}", 3, 12,
       "list too long: an event list holds at most 268435456 items"},
      {"fn main() {\n  print(\"before\")\n  let xs = repeat(0, 268435456)\n  print(xs.count())\n}", 3, 12, spent},
      {"fn main() {\n  print(\"before\")\n  let t = \"abc\".repeat(10000000)\n  print(t.len())\n}", 3, 16, spent},
      // pushing, putting and appending forever
      {"fn main() {\n  print(\"before\")\n  var xs = repeat(\"x\", 0)\n  while true { xs.push(\"y\") }\n}", 4, 18, spent},
      {"fn main() {\n  print(\"before\")\n  let m = list by k: int { v: int }\n  var i = 0\n  while true { m[i * 7] = { v: i }; i += 1 }\n}", 5, 25, spent},
      {"fn main() {\n  print(\"before\")\n  var s = \"x\"\n  while true { s = s + s }\n}", 4, 22, spent},
      {"fn main() {\n  print(\"before\")\n  var xs = repeat(\"x\", 0)\n  var i = 0\n  while true { xs.push(\"{i}\"); i += 1 }\n}", 5, 26, spent},
  };
  for (const Case& c : cases) {
    CAPTURE(c.program);
    Outcome a = run_with_memory(c.program, 16 << 20);
    REQUIRE(a.signal == 0);
    CHECK(a.compile_errors == "");
    CHECK(a.failed);
    CHECK(a.output == "before\n");
    CHECK(a.message == c.message);
    CHECK(a.line == c.line);
    CHECK(a.col == c.col);
    CHECK(a.leaked_texts == 0);
  }
}

// The WORK column of frontend/builtins.def, which call_builtin spends from: `first` is the bytes of
// the first argument (a method's receiver) / 64, `second` those of the second, `none` nothing.
// Measured as the smallest budget a run needs, against the same run without the call.
TEST_CASE("vm: the steps of a builtin follow its WORK column in builtins.def") {
  using pure::Builtin;
  using pure::BuiltinWork;
  using pure::builtin_info;
  auto program = [](const std::string& expr) {
    return "fn main() {\n  let t = \"x\".repeat(6400)\n  let s = \"y\".repeat(640)\n  let v = " + expr +
           "\n  print(text(v).byte_len() + t.byte_len() + s.byte_len())\n}\n";
  };
  auto least_budget = [&](const std::string& expr) {
    uint64_t lo = 1, hi = 1000;  // the run fails with lo - 1 steps (none) and finishes with hi
    REQUIRE(!run_with(program(expr), hi).failed);
    while (lo < hi) {
      uint64_t mid = (lo + hi) / 2;
      if (run_with(program(expr), mid).failed) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const uint64_t base = least_budget("0");
  struct Case {
    const char* expr;
    Builtin b;
    uint64_t steps;
  };
  for (const Case& c : {Case{"t.find(s)", Builtin::TFind, 100}, Case{"t.contains(s)", Builtin::TContains, 100},
                        Case{"t.starts_with(s)", Builtin::TStartsWith, 10}, Case{"t.ends_with(s)", Builtin::TEndsWith, 10},
                        Case{"t.byte_len()", Builtin::TByteLen, 0}, Case{"sqrt(2.0)", Builtin::Sqrt, 0}}) {
    CAPTURE(c.expr);
    const BuiltinWork work = builtin_info(c.b).work;
    CHECK(work == (c.steps == 100 ? BuiltinWork::First : c.steps == 10 ? BuiltinWork::Second : BuiltinWork::None));
    CHECK(least_budget(c.expr) - base == c.steps);
  }
}
