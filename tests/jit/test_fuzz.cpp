// tests/jit/test_fuzz.cpp — a bounded differential fuzzer: random well-typed programs with nested
// loops, int and num arithmetic near overflow, lists, stored-list walks, calls, early exits, runtime
// errors and small budgets, each run by the interpreter, by the eager JIT and by one that compiles
// loop nests when an inner loop gets hot (nest_jit); output, errors,
// leaked texts and steps must agree. PURE_JIT_FUZZ_COUNT programs (60 by default),
// PURE_JIT_FUZZ_SEED the first seed. Also: the same generator's programs through the formatter.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#include "tests/jit/jit_support.h"

#include <regex>

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

// ---- the differential fuzzer ------------------------------------------------------------------------

namespace {

// Random well-typed programs: int variables a b c, num variables x y, a seq int xs, a helper with
// a loop and an early return; nested while/for loops with break and continue, arithmetic near the
// int64 limits, num-to-int conversions, list reads and writes, calls; walks of three stored lists
// (whole, by a key prefix, and by a range of a text first key, either way) in main, in a query and
// in an event that may add a row to the list it walks. Two kinds of program: wild ones (about 3 in 10) drive values to overflow and index
// out of range, and mostly fail early inside a loop; tame ones keep values small (assignments
// reduce mod 1000003, divisors are never 0, indexes are in range, no int(num)), so they run deep
// into nested loops and end normally or on the budget.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) { wild_ = pick(10) < 3; }
  bool wild() const { return wild_; }

  std::string program() {
    std::string s = "fn f(n: int) -> int {\n var s = 0\n var k = 0\n while k < n % 40 {\n s += k * n\n"
                    " if s > 1000000 { return s }\n k += 1\n }\n return s\n}\n";
    // leaves (no loop, no call: the loader inlines their calls, CALL_INLINED), called inside
    // loops; in wild programs they overflow and divide by zero inside the inlined body
    s += "fn h(p: int, q: int) -> int {\n let s = p + q\n return s * (s + 1) / 2 + p\n}\n";
    s += "fn hd(p: int, q: int) -> int {\n return p / q + p % q\n}\n";
    s += "fn hn(p: int, q: int) -> num {\n let s = p + q\n return 1.0 / num(s * (s + 1) / 2 + p + 1)\n}\n";
    s += "list ps by id: int { v: int = 0 }\nlist es by (s: int, d: int) {}\nlist ds by (d: text, n: int) { v: int }\n";
    s += "event fill(n: int) {\n for i in 0 .. n {\n  ps[i].v = i * 7 % 1000\n  es[i % 5, i] = {}\n"
         "  ds[\"d{i % 37}\", i] = { v: i % 11 }\n }\n}\n";
    s += "event touch(at: int) {\n for p in ps {\n  ps[p.id].v = (p.v + 1) % 1000\n"
         "  if p.id == at { ps[at + 100000] = { v: 1 } }\n }\n"
         " for r in ds.range(\"d{at % 9}\", \"d{at % 9}~\") { ds[r.d, r.n].v = (r.v + 1) % 11 }\n}\n";
    s += "query sum(k: int) -> int {\n var t = 0\n for e in es[k] { t = (t + e.d * 3 - e.s) % 1000003 }\n"
         " for p in ps { t = (t + p.v) % 1000003 }\n"
         " for r in ds.range(\"d{k}\", \"d{k + 3}\").reverse() { t = (t * 3 + r.n + r.v) % 1000003 }\n return t\n}\n";
    s += "fn main() {\n";
    s += " let filled = fill(" + std::to_string(pick(700)) + ")\n";
    s += " var a = " + int_const() + "\n var b = " + int_const() + "\n var c = " + int_const() + "\n";
    s += " var x = " + num_const() + "\n var y = " + num_const() + "\n";
    s += " let xs = [1, 2, 3]\n let ys = [0.5]\n let ts = [\"t\"]\n";
    s += block(0, 0, 3 + pick(4));
    s += " print(\"{filled.ok} {a} {b} {c} {x} {y} {xs.count()} {xs[xs.count() - 1]} {ys.count()} {ys[ys.count() - 1]} "
         "{ts.count()} {ts[ts.count() - 1]}\")\n}\n";
    return s;
  }

 private:
  std::mt19937_64 rng_;
  int counter_ = 0;
  bool wild_ = true;
  // An int value a tame program keeps small.
  std::string small(const std::string& e) { return wild_ ? e : "(" + e + ") % 1000003"; }
  // An int a tame program keeps in 0 .. 999 (a leaf's argument).
  std::string below1000(const std::string& e) { return wild_ ? e : "((" + e + ") % 1000 + 1000) % 1000"; }

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  std::string int_var() { return std::string(1, "abc"[pick(3)]); }
  std::string num_var() { return std::string(1, "xy"[pick(2)]); }
  std::string int_const() {
    if (!wild_) return std::to_string(pick(2) ? pick(1000) : pick(10));
    switch (pick(14)) {
      case 0: return "9223372036854775807";
      case 1: return "4611686018427387904";
      case 2: return "3037000499";
      case 3: return "-9223372036854775807";
      case 4: return std::to_string(pick(1000));
      default: return std::to_string(pick(10));
    }
  }
  std::string num_const() {
    const char* k[] = {"0.5", "1.5", "-2.25", "1e300", "3.0", "0.1", "1e-300", "-0.0"};
    return k[pick(wild_ ? 8 : 3)];
  }
  std::string int_expr(int d) {
    if (d <= 0 || pick(3) == 0) return pick(2) ? int_var() : int_const();
    if (!wild_) {  // no overflow (operands stay below about 10^9), no division by 0, in range
      switch (pick(9)) {
        case 8: return (pick(2) ? "h((" : "hd((") + int_expr(d - 1) + ") % 1000, (" + int_expr(d - 1) + ") % 7 + 8)";
        case 0: return pick(2) ? "xs.count()" : "ts.count()";
        case 1: return "xs[(" + int_expr(d - 1) + " % xs.count() + xs.count()) % xs.count()]";
        case 2: return "f(" + int_expr(d - 1) + ")";
        case 3: return "(" + int_expr(d - 1) + " * " + std::to_string(pick(10)) + ")";
        case 4: return "(" + int_expr(d - 1) + (pick(2) ? " / (" : " % (") + int_expr(d - 1) + " % 7 + 8))";
        default: return "(" + int_expr(d - 1) + (pick(2) ? " + " : " - ") + int_expr(d - 1) + ")";
      }
    }
    switch (pick(12)) {
      case 10: return "h(" + int_expr(d - 1) + ", " + int_expr(d - 1) + ")";
      case 11: return "hd(" + int_expr(d - 1) + ", " + int_expr(d - 1) + ")";
      case 0: return "int(" + num_expr(d - 1) + ")";
      case 4: {
        // bitwise operators; a shift count out of 0..63 faults (the count is often negative)
        const char* ops[] = {" & ", " | ", " ^ ", " << ", " >> "};
        int op = pick(5);
        std::string rhs = op >= 3 ? "(" + int_expr(d - 1) + " % 70)" : int_expr(d - 1);
        return "(" + int_expr(d - 1) + ops[op] + rhs + ")";
      }
      case 1: return pick(2) ? "xs.count()" : "ts.count()";
      case 2: return "xs[" + int_expr(d - 1) + (pick(2) ? " % 5]" : " % (xs.count() + 1)]");
      case 3: return "f(" + int_expr(d - 1) + ")";
      default: {
        const char* ops[] = {"+", "-", "*", "/", "%"};
        return "(" + int_expr(d - 1) + " " + ops[pick(5)] + " " + int_expr(d - 1) + ")";
      }
    }
  }
  std::string num_expr(int d) {
    if (d <= 0 || pick(3) == 0) return pick(2) ? num_var() : num_const();
    if (pick(4) == 0) return "num(" + int_expr(d - 1) + ")";
    if (pick(8) == 0) return "hn(" + below1000(int_expr(d - 1)) + ", " + below1000(int_expr(d - 1)) + ")";
    if (pick(6) == 0)
      return wild_ ? "ys[" + int_expr(d - 1) + " % (ys.count() + 1)]"
                   : "ys[(" + int_expr(d - 1) + " % ys.count() + ys.count()) % ys.count()]";
    const char* ops[] = {"+", "-", "*", "/"};
    return "(" + num_expr(d - 1) + " " + ops[pick(4)] + " " + num_expr(d - 1) + ")";
  }
  std::string cond(int d) {
    const char* cmp[] = {"<", "<=", "==", "!=", ">", ">="};
    switch (d <= 0 ? pick(2) : pick(5)) {
      case 0: return int_expr(1) + " " + cmp[pick(6)] + " " + int_expr(1);
      case 1: return num_expr(1) + " " + cmp[pick(6)] + " " + num_expr(1);
      case 2: return "not (" + cond(d - 1) + ")";
      case 3: return "(" + cond(d - 1) + " and " + cond(d - 1) + ")";
      default: return "(" + cond(d - 1) + " or " + cond(d - 1) + ")";
    }
  }
  std::string block(int depth, int loops, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += stmt(depth, loops);
    return s;
  }
  std::string stmt(int depth, int loops) {
    std::string ind(static_cast<size_t>(depth + 1), ' ');
    int choice = pick(depth >= 3 ? 8 : 17);
    switch (choice) {
      case 0: case 1: return ind + int_var() + " = " + small(int_expr(2)) + "\n";
      case 2: {
        std::string v = int_var();
        return ind + v + " = " + small(v + (pick(2) ? " + " : " - ") + int_expr(1)) + "\n";
      }
      case 3: return ind + num_var() + " = " + num_expr(2) + "\n";
      case 4:
        // pushes inside loops: native pushes while the sequence has room, pure_step when it grows;
        // a seq text always through pure_step (it counts references)
        switch (loops > 0 ? pick(5) : 2 + pick(3)) {
          case 0: case 1: return ind + "if " + cond(1) + " { " + (pick(2) ? "break" : "continue") + " }\n";
          case 2: return ind + "xs.push(" + int_expr(1) + ")\n";
          case 3: return ind + "ys.push(" + num_expr(1) + ")\n";
          default: return ind + "ts.push(text(" + int_var() + " % 10))\n";
        }
      case 5:
        // reads and writes in range and out of it (both engines fail at the same instruction)
        if (!wild_) {
          std::string i = "(" + int_expr(1) + " % xs.count() + xs.count()) % xs.count()";
          return ind + "xs[" + i + "] = " + small(int_expr(1)) + "\n";
        }
        switch (pick(4)) {
          case 0: return ind + "xs[" + int_expr(1) + " % 4] = " + int_expr(1) + "\n";
          case 1: return ind + "xs[" + int_expr(1) + " % (xs.count() + 1)] = " + int_expr(1) + "\n";
          case 2: return ind + "ys[" + int_expr(1) + " % (ys.count() + 1)] = " + num_expr(1) + "\n";
          default: return ind + "ts[" + int_expr(1) + " % (ts.count() + 1)] = \"u\"\n";
        }
      case 6: return pick(4) == 0 ? ind + "print(\"{a} {x}\")\n" : ind + "c = " + small(int_expr(1)) + "\n";
      case 7: return ind + "if " + cond(1) + " {\n" + block(depth + 1, loops, 1 + pick(2)) + ind + "} else {\n" +
                     block(depth + 1, loops, 1 + pick(2)) + ind + "}\n";
      case 8: {
        std::string v = "i" + std::to_string(counter_++);
        // the counter steps before the body, so `continue` cannot make the loop endless
        return ind + "var " + v + " = 0\n" + ind + "while " + v + " < " + std::to_string(1 + pick(30)) + " {\n" + ind +
               " " + v + " += 1\n" + block(depth + 1, loops + 1, 1 + pick(4)) + ind + "}\n";
      }
      case 9: {
        std::string v = "j" + std::to_string(counter_++);
        return ind + "for " + v + " in 0 .. " + std::to_string(pick(25)) + " {\n" + ind + " a += " + v + "\n" +
               block(depth + 1, loops + 1, 1 + pick(4)) + ind + "}\n";
      }
      case 11: case 12: {
        // values that grow each pass until + - * overflow inside the (by then compiled) loop
        std::string v = "g" + std::to_string(counter_++);
        const char* grow[] = {" * 3 - ", " * 2 + ", " + 1000000000000000000 + ", " - 3000000000000000000 - ",
                              " * -5 + "};
        std::string w = int_var();
        return ind + "for " + v + " in 0 .. " + std::to_string(pick(90)) + " {\n" + ind + " " + w + " = " +
               small(w + grow[pick(5)] + v) + "\n" + ind + " " + num_var() + " = " + num_var() +
               (wild_ ? " * 1.7" : " * 0.7") + " - num(" + v + ")\n" + ind + "}\n";
      }
      case 13: {  // a walk of main's snapshot of a stored list, with a loop body of its own
        std::string v = "p" + std::to_string(counter_++);
        return ind + "for " + v + " in ps {\n" + ind + " a = " + small("a + " + v + ".v * 3 - " + v + ".id") + "\n" +
               block(depth + 1, loops + 1, pick(3)) + ind + "}\n";
      }
      case 14: {  // a key prefix of a stored list
        std::string v = "e" + std::to_string(counter_++);
        return ind + "for " + v + " in es[" + (wild_ ? int_var() + " % 6" : std::to_string(pick(6))) + "] {\n" + ind +
               " b = " + small("b * 2 + " + v + ".d") + "\n" + block(depth + 1, loops + 1, pick(2)) + ind + "}\n";
      }
      case 16: {  // a range of a stored list's text first key, either way ("d4" .. "d17": d4, d5, ..., d16)
        std::string v = "t" + std::to_string(counter_++);
        std::string lo = wild_ ? int_var() + " % 40" : std::to_string(pick(40)), hi = wild_ ? int_var() + " % 40" : std::to_string(pick(40));
        return ind + "for " + v + " in ds.range(\"d{" + lo + "}\", \"d{" + hi + "}\")" + (pick(2) ? ".reverse()" : "") + " {\n" + ind +
               " b = " + small("b * 2 + " + v + ".n - " + v + ".v") + "\n" + block(depth + 1, loops + 1, pick(2)) + ind + "}\n";
      }
      case 15:  // walks in a query; an event that walks its live list and may add to it (a fault)
        if (pick(2)) return ind + "c = " + small("c + sum(" + std::to_string(pick(6)) + ")") + "\n";
        return ind + "if touch(" + (pick(2) ? "-1" : std::to_string(pick(800))) + ").ok { a = " + small("a + 1") + " }\n";
      case 10: {
        // a short loop over a prefix of xs, as fannkuch's reversals: a nest of such loops is
        // compiled as one, entered at any of its heads (the nest engine below)
        std::string n = std::to_string(counter_++), lo = "lo" + n, hi = "hi" + n;
        return ind + "var " + lo + " = 0\n" + ind + "var " + hi + " = (" + int_expr(1) + " % xs.count() + xs.count()) % xs.count()\n" +
               ind + "while " + lo + " < " + hi + " {\n" + ind + " let t" + n + " = xs[" + lo + "]\n" + ind + " xs[" + lo +
               "] = xs[" + hi + "]\n" + ind + " xs[" + hi + "] = t" + n + "\n" + ind + " " + lo + " += 1\n" + ind + " " + hi +
               " -= 1\n" + ind + "}\n";
      }
      default: {
        std::string v = "w" + std::to_string(counter_++);
        if (pick(3) == 0) {  // spectralnorm's shape: a leaf's value summed over a loop (its calls inlined)
          std::string w = int_var(), x = num_var();
          std::string arg = below1000(w);
          return ind + "for " + v + " in 0 .. " + std::to_string(pick(300)) + " {\n" + ind + " " + x + " = " + x +
                 " + hn(" + v + ", " + arg + ") * " + num_var() + "\n" + ind + " " + w + " = " +
                 small("h(" + v + ", " + arg + ") - " + w) + "\n" + ind + "}\n";
        }
        return ind + "for " + v + " in 0 .. " + std::to_string(pick(300)) + " {\n" + ind + " " + num_var() + " = " +
               num_expr(2) + "\n" + ind + " " + int_var() + " = " + int_expr(1) + " % 1000 + " + v + "\n" + ind + "}\n";
      }
    }
  }
};

// A JIT that compiles a loop after a few passes, at once (no payoff), and an inner loop's nest
// with it (Options::nested): a nest's code is first entered at the head of the inner loop that got
// hot, and again at any head the interpreter reaches after a call or a fault left native code.
pure::jit::Jit& nest_jit() {
  static pure::jit::Jit jit(pure::jit::native_backend(), [] {
    pure::jit::Options o;
    o.threshold = 3;
    o.synchronous = true;
    o.payoff = false;
    o.min_native_share = 0;
    return o;
  }());
  return jit;
}

}  // namespace

TEST_CASE("jit: differential fuzzer (random programs, both engines, several budgets)") {
  int count = 60;
  if (const char* n = std::getenv("PURE_JIT_FUZZ_COUNT")) count = std::atoi(n);
  uint64_t seed = 20261201;
  if (const char* s = std::getenv("PURE_JIT_FUZZ_SEED")) seed = std::strtoull(s, nullptr, 10);
  int compiled = 0, failed = 0, spent = 0, tame = 0, tame_deep = 0;
  for (int i = 0; i < count; ++i) {
    Gen gen(seed + static_cast<uint64_t>(i));
    std::string p = gen.program();
    tame += !gen.wild();
    CAPTURE(seed + static_cast<uint64_t>(i));
    CAPTURE(p);
    for (uint64_t budget : {uint64_t{200000}, uint64_t{1} + (seed + static_cast<uint64_t>(i)) % 400}) {
      CAPTURE(budget);
      Config c;
      c.max_steps = budget;
      Run a = run(p, nullptr, c);
      REQUIRE(a.compile_errors == "");
      Run b = run(p, &eager_jit(), c);
      check_same(a, b);
      check_same(a, run(p, &nest_jit(), c));
      compiled += b.compiled;
      failed += a.failed;
      spent += contains(a.error, "step budget spent");
      // a tame program at the big budget ends normally or on the budget: it ran its loops through
      if (!gen.wild() && budget == 200000) tame_deep += !a.failed || contains(a.error, "step budget spent");
    }
  }
  MESSAGE(count << " programs: " << compiled << " loops compiled, " << failed << " runs failed (" << spent
                << " on the budget); " << tame << " tame, " << tame_deep << " of them ran to the end or the budget");
  if (count >= 20) {
    CHECK(compiled > count);
    CHECK(spent > 0);
    CHECK(tame_deep * 10 >= tame * 8);  // tame programs mostly run deep
  }
}

// The formatter never changes meaning (issue 38 item 3): each random program, its indentation
// stripped, formatted by pure::format_source, formats to itself again and runs as the original does
// (same output, same failure at the same budget, the same error but for columns, which indentation
// moves; lines never move).
TEST_CASE("formatter: random programs format to programs that run alike") {
  int count = 60;
  if (const char* n = std::getenv("PURE_JIT_FUZZ_COUNT")) count = std::atoi(n);
  const uint64_t seed = 20261207;
  const std::regex column(R"((\d+):\d+)");
  int changed = 0;
  for (int i = 0; i < count; ++i) {
    Gen gen(seed + static_cast<uint64_t>(i));
    std::string p = gen.program();
    std::string stripped;  // every line's indentation gone
    for (size_t at = 0; at < p.size();) {
      size_t end = p.find('\n', at);
      if (end == std::string::npos) end = p.size();
      size_t first = p.find_first_not_of(" \t", at);
      if (first < end) stripped.append(p, first, end - first);
      stripped += '\n';
      at = end + 1;
    }
    CAPTURE(seed + static_cast<uint64_t>(i));
    CAPTURE(stripped);
    std::string formatted, again;
    {
      pure::Source source("fuzz.pure", stripped);
      pure::Diagnostics diags(source);
      REQUIRE_MESSAGE(pure::format_source(source, diags, &formatted), diags.render());
    }
    {
      pure::Source source("fuzz.pure", formatted);
      pure::Diagnostics diags(source);
      REQUIRE_MESSAGE(pure::format_source(source, diags, &again), diags.render());
    }
    CHECK(again == formatted);
    changed += formatted != stripped;
    for (uint64_t budget : {uint64_t{200000}, uint64_t{1} + (seed + static_cast<uint64_t>(i)) % 400}) {
      CAPTURE(budget);
      Config c;
      c.max_steps = budget;
      Run a = run(stripped, nullptr, c);
      Run b = run(formatted, nullptr, c);
      REQUIRE(a.compile_errors == "");
      CHECK(b.compile_errors == "");
      CHECK(b.output == a.output);
      CHECK(b.failed == a.failed);
      CHECK(std::regex_replace(b.error, column, "$1:C") == std::regex_replace(a.error, column, "$1:C"));
    }
  }
  MESSAGE(count << " programs formatted, " << changed << " changed by it");
  if (count >= 20) CHECK(changed * 2 >= count);  // the stripped layout is not already canonical
}
