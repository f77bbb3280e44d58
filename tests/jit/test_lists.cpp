// tests/jit/test_lists.cpp — lists and texts in compiled loops against the interpreter: sequence
// reads, writes and pushes (in place, growing, out of range), two-field and narrow (seq bool) lists,
// the inline slow paths, counting by text key, loops over a text's pieces and a split walked piece
// by piece, and faults in counting loops: the same bytes, errors and steps at every budget.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#include "tests/jit/jit_support.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: sequence reads, writes and pushes inside compiled loops (in place, growing, out of range)") {
  // ints and nums are read, written and pushed in place; a push that needs room and every text
  // goes through pure_step
  const char* p =
      "fn main() {\n let xs = [1, 2, 3]\n let ys = [0.5]\n let ts = [\"t\"]\n var s = 0\n"
      " for i in 0 .. 100 {\n  xs.push(i * 3)\n  ys.push(num(i) / 4.0)\n  ts.push(text(i % 10))\n"
      "  xs[i] = xs[i + 2] + xs[xs.count() - 1]\n  ys[i] = ys[i] * 2.0\n  s += xs[i % xs.count()]\n }\n"
      " print(\"{s} {xs.count()} {xs[0]} {xs[102]} {ys.count()} {ys[100]} {ts.count()} {ts[100]}\")\n}\n";
  Run r = both(p);
  CHECK(r.compiled == 1);
  CHECK(r.output == "29406 103 3 297 101 24.75 101 9\n");
  // out of range inside the compiled loop: the interpreter's message, at the same instruction
  for (const char* bad : {"xs[i] = 1", "s += xs[i]", "s += xs[2 - i]", "ys[i] = 1.0"}) {  // fault at i = 2 or 3
    CAPTURE(bad);
    std::string q = std::string("fn main() {\n let xs = [1, 2, 3]\n let ys = [0.5, 1.5]\n var s = 0\n"
                                " for i in 0 .. 50 {\n  s += i\n  ") + bad + "\n }\n print(s)\n}\n";
    Run e = both(q);
    CHECK(e.failed);
    CHECK(contains(e.error, "out of range"));
  }
}

TEST_CASE("jit: a loop reading a two-field sequence and a plain one (the AArch64 JIT's plain-list version)") {
  // the AArch64 JIT enters a version without the plain checks only when every list it reads at
  // SEQ_GET/SEQ_SET/SEQ_PUSH is plain at entry; `ps` has two cells per row, so it takes the
  // general version, and `ns` alone the plain one
  const char* mixed = "type P { x: int, y: int }\nfn main() {\n let ps = seq P\n ps.push(P { x: 1, y: 2 })\n"
                      " ps.push(P { x: 3, y: 4 })\n let ns = [5, 6, 7]\n var t = 0\n for i in 0 .. 300 {\n"
                      "  let p = ps[i % 2]\n  ps[i % 2] = p\n  ns[i % 3] = ns[(i + 1) % 3] + p.x\n"
                      "  t += p.x * p.y + ns[i % 3] % 1000\n }\n print(\"{t} {ns[0]} {ns[1]} {ns[2]}\")\n}\n";
  Run r = both(mixed);
  CHECK(r.output == "49350 454 156 457\n");
  CHECK(r.compiled == 1);
  // (`bs` holds ints: a seq bool is narrow, one byte a row, and never plain)
  const char* plain = "fn main() {\n let ns = [5, 6, 7]\n let bs = [1, 0]\n var t = 0\n for i in 0 .. 300 {\n"
                      "  ns[i % 3] = ns[(i + 1) % 3] % 1000 + i\n  if bs[i % 2] == 1 { t += ns[i % 3] }\n  ns.push(i)\n }\n"
                      " print(\"{t} {ns.count()} {ns[0]} {ns[302]}\")\n}\n";
  r = both(plain);
  CHECK(r.compiled == 1);
  // out of range in the plain version: the interpreter's message
  Run e = both("fn main() {\n let ns = [5, 6, 7]\n var t = 0\n for i in 0 .. 10 { t += ns[i] }\n print(t)\n}\n");
  CHECK(e.failed);
  CHECK(contains(e.error, "out of range"));
}

TEST_CASE("jit: seq bool (a narrow list, one byte a row) read and written in compiled loops gives the interpreter's bytes") {
  // the sieve: SEQ_GET and SEQ_SET of bytes in place; a one-bool item's field (SEQ_GET_FIELD,
  // SEQ_SET_FIELD) through the runtime calls; pushes through pure_step
  const char* sieve = R"(type F { on: bool }
fn main() {
  let composite = repeat(false, 5001)
  var count = 0
  for i in 2 .. 5000 {
    if not composite[i] {
      count += 1
      var j = i * i
      while j < 5000 {
        composite[j] = true
        j += i
      }
    }
  }
  let fs: seq F = []
  let xs: seq bool = []
  for i in 0 .. 400 {
    fs.push(F { on: composite[i] })
    xs.push(i % 3 == 0)
    fs[i / 2].on = not fs[i / 2].on
    xs[i / 3] = xs[i] or composite[i + 1]
  }
  var on = 0
  var set = 0
  for i in 0 .. 400 {
    if fs[i].on { on += 1 }
    if xs[i] { set += 1 }
  }
  print("{count} {on} {set} {composite[4998]} {composite[4993]} {xs.count()}")
}
)";
  Run r = both(sieve);
  CHECK(r.output == "669 320 222 true false 400\n");  // 669 primes below 5000 (a Python model gives the rest)
  CHECK(r.compiled >= 4);
  CHECK(r.rejected == 0);
  // out of range on a byte list inside the compiled loop: the interpreter's message, in the
  // loop's version that knows xs is narrow (AArch64: nothing else in the loop) and, with a text
  // built in it (through pure_step), in the general one that checks the narrow flag each time
  for (const char* extra : {"", "  u = \"{s}\"\n"})
    for (const char* bad : {"xs[i] = true", "if xs[i] { s += 1 }", "xs[2 - i] = false"}) {
      CAPTURE(extra);
      CAPTURE(bad);
      std::string q = std::string("fn main() {\n let xs = repeat(true, 3)\n var s = 0\n var u = \"\"\n"
                                  " for i in 0 .. 50 {\n  s += i\n") + extra + "  " + bad +
                      "\n }\n print(\"{s} {u}\")\n}\n";
      Run e = both(q);
      CHECK(e.failed);
      CHECK(contains(e.error, "out of range"));
      CHECK(e.compiled >= 1);
    }
}

TEST_CASE("jit: a budget spent in a compiled loop over a seq bool stops both engines at the same step") {
  const char* p = R"(fn main() {
  let composite = repeat(false, 61)
  var count = 0
  for i in 2 .. 60 {
    if not composite[i] {
      count += 1
      var j = i * i
      while j < 60 {
        composite[j] = true
        j += i
      }
    }
  }
  print("{count} {composite[49]}")
}
)";
  Run full = both(p);
  CHECK(full.output == "17 true\n");  // 17 primes below 60
  uint64_t need = interpreter_need(p, 100000);
  CHECK(need > 100);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b <= 12; ++b) budgets.push_back(b);
  for (uint64_t b = need / 2 - 5; b <= need / 2 + 5; ++b) budgets.push_back(b);
  for (uint64_t b = need - 12; b <= need + 1; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
}

TEST_CASE("jit: a loop compiled all inline takes its slow paths in place (growth, records, out of range, run ends)") {
  // every instruction of the main loop compiles inline; its slow paths (a push that grows, a row
  // of several cells, a read out of range, the end of a leaf run) run through pure_step and the
  // loop goes on natively
  const char* p = R"(list pts by id: int { v: int = 0 }
type R { a: int, b: int }
event fill(n: int) {
  for i in 0 .. n { pts[i].v = i * 5 % 17 }
}
fn main() {
  fill(700)
  let xs = [1, 2, 3]
  let ys = [0.5]
  let rows = [R { a: 1, b: 2 }, R { a: 3, b: 4 }]
  var s = 0
  var t = 0.0
  for i in 0 .. 300 {
    xs.push(i % 7)
    ys.push(num(i) * 0.5)
    xs[i % 5] = xs[i] + s % 100
    t = t + ys[i]
    if i % 50 == 49 {
      let r = rows[i % 2]
      s += r.a * 10 + r.b
    }
    s = (s + xs[(i * 7) % xs.count()]) % 1000003
  }
  for p in pts { s = (s * 3 + p.v + p.id) % 1000003 }
  print("{s} {t} {xs.count()} {ys.count()}")
  var u = 0
  for i in 0 .. 10 { u += xs[i * 60] }
  print(u)
}
)";
  Config c;
  c.max_steps = 10'000'000;
  Run r = both(p, c);
  CHECK(r.failed);  // xs[540] is out of range
  CHECK(contains(r.error, "out of range"));
  CHECK(r.compiled >= 4);
  CHECK(r.output == run(p, nullptr, c).output);
  for (uint64_t budget : {10u, 100u, 299u, 300u, 301u, 302u, 400u, 800u, 1000u}) {
    CAPTURE(budget);
    Config b;
    b.max_steps = budget;
    both(p, b);
  }
}

// Group-by on text keys (issues 11 and 12): `seq text` reads and pushes count references in native
// code, and `counts[w].n += 1` finds its row once (MAP_ENSURE) and reads and writes the field in
// place (jit::rows_known); inserts, longer keys, text fields and missing rows take pure_step.
TEST_CASE("jit: counting by text key and seq text loops compile by default and give the interpreter's bytes") {
  const char* p = R"(fn main() {
  let words = "b a b c b a d a a e b a c".split(" ")
  let counts = list by word: text { n: int = 0 }
  for w in words { counts[w].n += 1 }
  for c in counts { print("{c.word} {c.n}") }
  let pieces = seq text
  for i in 0 .. 40 { pieces.push(words[i * 7 % words.count()]) }
  print(join(pieces, ","))
  let named = list by k: text { name: text = "", n: int = 0 }
  for w in pieces { named[w].name = w + "!"; named[w].n += 2 }
  for c in named { print("{c.k} {c.name} {c.n}") }
  let pairs = list by (a: int, b: text) { n: int = 0 }
  for i in 0 .. 40 { pairs[i % 3, pieces[i]].n += i }
  var total = 0
  for c in pairs { total = total * 7 % 1000003 + c.a + c.n }
  let dense = list by k: int { n: int = 0 }
  for i in 0 .. 3000 { dense[i % 700 * 3].n += i }
  for c in dense { total = (total * 31 + c.k + c.n) % 1000003 }
  print(total)
}
)";
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit by_default(pure::jit::native_backend(), o);
  Run r = run(p, &by_default);
  check_same(run(p, nullptr), r);
  CHECK(!r.failed);
  // at the default share: where compiles are cheap (AArch64) the counting loops and the push loop
  // compile (the walks over keyed lists stay interpreted: ITER_NEXT over an event list steps every
  // row); where they cost much (LLVM), loops made of the runtime's work stay interpreted
  // (BackendKind::call_cost)
  if (pure::jit::native_backend().call_cost == 0) CHECK(r.compiled >= 5);
  else CHECK(r.compiled == 0);
  Run e = both(p);
  CHECK(e.output == r.output);
  // budgets spent anywhere in them stop both engines at the same step
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; b += 37) budgets.push_back(b);
  for (uint64_t d : {0u, 1u, 2u}) budgets.push_back(need - 1 + d);
  check_budgets_alike(p, budgets, need);
}

// A loop over a text's pieces (TEXT_ITER): its ITER_NEXT is a runtime call on both backends
// (pure_jit_iter_next_piece) and is weighed as the runtime's work, so where compiles are cheap (AArch64) the loop compiles
// by default; every engine, budget and share gives the interpreter's bytes (the pieces written
// over in place and the kept ones).
TEST_CASE("jit: loops over a text's pieces compile where compiles are cheap and give the interpreter's bytes") {
  const char* p = R"(fn main() {
  let text = "b a b c b a d a a e b a c b b a"
  let counts = list by word: text { n: int = 0 }
  for w in text.split(" ") { counts[w].n += 1 }
  let kept = seq text
  let words = text.words()
  for i, w in words {
    if i % 3 == 0 { kept.push(w) }
  }
  for c in counts { print("{c.word} {c.n}") }
  print(join(kept, ","))
}
)";
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit by_default(pure::jit::native_backend(), o);
  Run r = run(p, &by_default);
  check_same(run(p, nullptr), r);
  CHECK(!r.failed);
  if (pure::jit::native_backend().call_cost == 0) CHECK(r.compiled >= 1);
  Run e = both(p);  // every loop compiled, whatever its share
  CHECK(e.output == r.output);
  CHECK(e.compiled >= 1);
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; b += 5) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
}

// ITER_NEXT over a text's pieces in native code (jit-aarch64's next_piece and jit-llvm's, both
// through pure_jit_iter_next_piece; the eager JIT here compiles every loop, whatever its share): the
// step spent as the interpreter spends it (at every budget, including one spent on the ITER_NEXT
// itself and on the one that finds no more pieces), the piece written over in place or made anew
// (kept pieces hold the old text), and the memory budget's fault in the middle of a loop (a new
// piece made, slot A written, then the fault): the same bytes, error and leak count either way.
TEST_CASE("jit: ITER_NEXT over a text's pieces spends the interpreter's steps and faults on its memory budget") {
  const char* p = R"(fn main() {
  let text = "pear fig apple kiwi plum date lime yuzu sloe pear fig apple kiwi plum date lime yuzu sloe quince"
  let kept = seq text
  var n = 0
  for w in text.split(" ") {
    n += w.len()
    if n % 3 == 0 { kept.push(w) }
  }
  for i, w in text.words() {
    if i % 2 == 1 { kept.push("{w}{w}{w}{w}{w}{w}") }
  }
  print("{n} {kept.count()} {join(kept, ",")}")
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(r.compiled >= 1);
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
  // memory budgets from below the program's first text to above its need
  // (faults at both loops' ITER_NEXT, t.pure:5:7 and 9:7, among them)
  int faulted = 0, at_iter_next = 0, finished = 0;
  for (uint64_t m = 64; m < 2400; m += 8) {
    CAPTURE(m);
    Config c;
    c.max_memory = m;
    Run a = run(p, nullptr, c);
    Run b = run(p, &eager_jit(), c);
    check_same(a, b);
    if (a.failed) CHECK(contains(a.error, "memory budget spent"));
    faulted += a.failed;
    at_iter_next += contains(a.error, "t.pure:5:7:") || contains(a.error, "t.pure:9:7:");
    finished += !a.failed;
  }
  CHECK(at_iter_next > 20);
  CHECK(faulted > at_iter_next);
  CHECK(finished > 3);
}

// A split by one byte walked piece by piece (vm/lists.cpp: next_by_byte, the in-place path outside
// the exception frame) hands out exactly the pieces split() makes as a list (text::Pieces): empty
// texts and pieces, separators first and last, pieces across the eight-byte words and longer than
// the reused text's room, multi-byte characters; kept pieces make new texts. Both engines, every
// step budget.
TEST_CASE("jit: a split by one byte walked piece by piece gives split()'s pieces") {
  const char* p = R"(fn main() {
  let texts = seq text
  texts.push("")
  texts.push(",")
  texts.push(",,a,,bb,")
  texts.push("abcdefgh,abcdefghi,abcdefghijklmnopqrstuvwxyz0123,x,abcdefghijklmnopqrstuvwxyz0123456789")
  texts.push("\u{e9},\u{fc},,\u{20ac}uro,na\u{ef}ve,")
  texts.push("no separator at all in this rather long text")
  let kept = seq text
  for t in texts {
    let listed = t.split(",")
    var i = 0
    for w in t.split(",") {
      if w != listed[i] { print("differs at {i}: [{w}] [{listed[i]}]") }
      if i % 3 == 1 { kept.push(w) }
      i += 1
    }
    print("{i} {listed.count()} {join(listed, "|")}")
  }
  print(join(kept, "/"))
}
)";
  Run r = both(p);
  CHECK(!r.failed);
  CHECK(!contains(r.output, "differs"));
  CHECK(contains(r.output, "6 6 ||a||bb|\n"));
  uint64_t need = interpreter_need(p, 100000);
  std::vector<uint64_t> budgets;
  for (uint64_t b = 1; b < need + 3; ++b) budgets.push_back(b);
  check_budgets_alike(p, budgets, need);
}

TEST_CASE("jit: faults in a compiled counting loop (a missing row, an overflow) stop where the interpreter stops") {
  // words is named twice, so the list is made and the loops walk a `seq text` (a loop over the
  // pieces alone, TEXT_ITER, steps its ITER_NEXT: its native share is another matter)
  const char* missing = R"(fn main() {
  let words = "x y x z y x q".split(" ")
  print(words.count())
  let m = list by k: text { n: int = 0 }
  m["x"].n = 1
  m["y"].n = 1
  m["z"].n = 1
  var s = 0
  for w in words { s += m[w].n; m[w].n = s }
  print(s)
}
)";
  const char* overflow = R"(fn main() {
  let words = "x y x z y x".split(" ")
  print(words.count())
  let m = list by k: text { n: int = 0 }
  for w in words { m[w].n += 4611686018427387904 }
  print(m.count())
}
)";
  for (const char* p : {missing, overflow}) {
    CAPTURE(p);
    pure::jit::Options o;
    o.threshold = 0;
    o.synchronous = true;
    pure::jit::Jit by_default(pure::jit::native_backend(), o);
    Run r = run(p, &by_default);
    check_same(run(p, nullptr), r);
    CHECK(r.failed);
    CHECK(r.compiled >= (pure::jit::native_backend().call_cost == 0 ? 1u : 0u));
    Run e = both(p);  // every loop compiled, whatever its share
    CHECK(e.compiled >= 1);
  }
}
