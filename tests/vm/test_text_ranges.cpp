// tests/vm/test_text_ranges.cpp — .range(lo, hi) over text keys (issue 37, item 7): a text first
// key (`sales.range("2026-12", "2026-13")`) and a text key after a prefix, on stored and event
// lists, forwards and backwards, in main, a query and an event, by both engines. A generated
// program is checked against a sorted std::map; the bounds' texts stay alive while the loop body
// reassigns the variables they came from. Seed: PURE_TEXT_RANGE_SEED.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <utility>

#include "tests/vm/vm_support.h"

using pure::test::Engine;
using pure::test::Outcome;
using pure::test::clean_on_both;
using pure::test::run_program;

namespace {

using Key = std::pair<std::string, int>;  // (day, n) of list t; (a, day) of list u is kept as (day, a)
using Model = std::map<Key, int>;

const char* kDays[] = {"", "2026", "2026-1", "2026-11-30", "2026-12", "2026-12-01", "2026-12-05", "2026-12-10",
                       "2026-12-31", "2026-13", "2027-01-01", "a", "z"};

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// The rows of t (or of u under prefix a: its model keys are (day, a)) whose day is in lo .. hi.
std::vector<std::pair<Key, int>> in_range(const Model& m, const std::string& lo, const std::string& hi, int a = -1) {
  std::vector<std::pair<Key, int>> out;
  for (const auto& [k, v] : m)
    if (k.first >= lo && k.first < hi && (a < 0 || k.second == a)) out.push_back({k, v});
  return out;
}

std::pair<std::string, std::string> generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto day = [&] { return std::string(kDays[pick(0, static_cast<int>(std::size(kDays)) - 1)]); };
  std::string p = R"(list t by (d: text, n: int) { v: int }
list u by (a: int, d: text) { v: int }
event put(d: text, n: int, v: int) {
  t[d, n] = { v: v }
  u[n % 3, d] = { v: v }
}
event bump(lo: text, hi: text) {
  for r in t.range(lo, hi) { t[r.d, r.n].v = r.v + 1 }
  for r in u[1].range(lo, hi).reverse() { u[1, r.d].v = r.v + 1 }
}
query total(lo: text, hi: text) -> int {
  var s = 0
  for r in t.range(lo, hi) { s += r.v }
  for r in u[2].range(lo, hi) { s += r.v * 100 }
  return s
}
fn main() {
  let e = list by (d: text, n: int) { v: int }
)";
  Model t, u, e;  // u's keys as (day, a); e: the event list, which bump does not change
  for (int i = 0, n = pick(0, 60); i < n; ++i) {
    std::string d = day();
    int k = pick(0, 5), v = pick(-20, 20);
    t[{d, k}] = v;
    e[{d, k}] = v;
    u[{d, k % 3}] = v;
    p += "  let p" + std::to_string(i) + " = put(" + quoted(d) + ", " + std::to_string(k) + ", " + std::to_string(v) + ")\n";
    p += "  e[" + quoted(d) + ", " + std::to_string(k) + "] = { v: " + std::to_string(v) + " }\n";
  }
  std::string want;
  auto line = [](const std::vector<std::pair<Key, int>>& rows, bool reverse) {
    std::string s;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[reverse ? rows.size() - 1 - i : i];
      s += r.first.first + "/" + std::to_string(r.first.second) + "=" + std::to_string(r.second) + ";";
    }
    return s + "\n";
  };
  for (int q = 0; q < 40; ++q) {
    std::string lo = day(), hi = pick(0, 3) ? day() : lo.substr(0, 7) + "~";  // "2026-12~": the month's days
    std::string b = "(" + quoted(lo) + ", " + quoted(hi) + ")";
    int op = pick(0, 5);
    if (op == 0) {  // walks of t and of the event list, forwards and backwards
      bool reverse = pick(0, 1);
      for (const char* list : {"t", "e"}) {
        p += "  for r in " + std::string(list) + ".range" + b + (reverse ? ".reverse()" : "") + " { write(\"{r.d}/{r.n}={r.v};\") }\n  print(\"\")\n";
        want += line(in_range(*list == 't' ? t : e, lo, hi), reverse);
      }
    } else if (op == 1) {  // a text key after a prefix
      int a = pick(0, 3);
      bool reverse = pick(0, 1);
      p += "  for r in u[" + std::to_string(a) + "].range" + b + (reverse ? ".reverse()" : "") + " { write(\"{r.d}/{r.a}={r.v};\") }\n  print(\"\")\n";
      want += line(in_range(u, lo, hi, a), reverse);
    } else if (op == 2) {  // slice methods
      auto rows = in_range(t, lo, hi);
      int sum = 0;
      for (auto& r : in_range(e, lo, hi)) sum += r.second;
      p += "  print(\"{t.range" + b + ".count()} {e.range" + b + ".sum(v)}\")\n";
      want += std::to_string(rows.size()) + " " + std::to_string(sum) + "\n";
      p += "  for once in 0 .. 1 {\n    let f = t.range" + b + ".first() else { print(\"none\"); continue }\n    let l = e.range" + b +
           ".last() else { print(\"no last\"); continue }\n    print(\"{f.d}/{f.n} {l.d}/{l.n}\")\n  }\n";
      want += rows.empty() ? "none\n"
                           : rows.front().first.first + "/" + std::to_string(rows.front().first.second) + " " + rows.back().first.first + "/" +
                                 std::to_string(rows.back().first.second) + "\n";
    } else if (op == 3) {  // a query's walks (its snapshot)
      int s = 0;
      for (auto& r : in_range(t, lo, hi)) s += r.second;
      for (auto& r : in_range(u, lo, hi, 2)) s += r.second * 100;
      p += "  print(total" + b + ")\n";
      want += std::to_string(s) + "\n";
    } else if (op == 4) {  // an event's walks of the live lists, writing the rows they pass
      p += "  let b" + std::to_string(q) + " = bump" + b + "\n";
      for (auto& r : in_range(t, lo, hi)) ++t[r.first];
      for (auto& r : in_range(u, lo, hi, 1)) ++u[r.first];
    } else {  // the bounds' variables reassigned by the body: the walk keeps the texts it began with
      p += "  var lo" + std::to_string(q) + " = " + quoted(lo) + " + \"\"\n  var hi" + std::to_string(q) + " = " + quoted(hi) + " + \"\"\n";
      p += "  for r in t.range(lo" + std::to_string(q) + ", hi" + std::to_string(q) + ") {\n    lo" + std::to_string(q) + " = \"x{r.n}\"\n    hi" +
           std::to_string(q) + " = lo" + std::to_string(q) + " + \"y\"\n    write(\"{r.d}/{r.n}={r.v};\")\n  }\n  print(\"\")\n";
      want += line(in_range(t, lo, hi), false);
    }
  }
  return {p + "}\n", want};
}

}  // namespace

TEST_CASE("text ranges: a generated program agrees with a sorted std::map, on stored and event lists, by both engines") {
  const char* env = std::getenv("PURE_TEXT_RANGE_SEED");
  uint64_t first = env && *env ? std::strtoull(env, nullptr, 10) : 3700;
  for (uint64_t seed = first; seed < first + 10; ++seed) {
    auto [program, want] = generate(seed);
    INFO("seed " << seed << " (PURE_TEXT_RANGE_SEED)\n" << program);
    CHECK(clean_on_both(program) == want);
  }
}

TEST_CASE("text ranges: first() of an empty text range names its bounds quoted") {
  const char* p = R"(list sales by (day: text, id: int) { amount: int }
list shops by (shop: int, day: text) { amount: int }
fn main() {
  print(sales.count())
  print(MISSING)
}
)";
  auto message = [&](const std::string& expr) {
    std::string program = p;
    program.replace(program.find("MISSING"), 7, expr);
    Outcome a = run_program(program);
    pure::test::RunConfig step;
    step.engine = Engine::Step;
    Outcome b = run_program(program, step);
    CHECK(a.failed);
    CHECK(a.message == b.message);
    CHECK(a.line == 5);
    return a.message;
  };
  CHECK(message("sales.range(\"2026-12\", \"2026-13\").first()") ==
        "first of an empty slice: stored list 'sales' has no item with the first key in \"2026-12\" .. \"2026-13\"");
  CHECK(message("shops[4].range(\"a\", \"b\").last()") ==
        "last of an empty slice: stored list 'shops' has no item with key prefix 4 and the next key in \"a\" .. \"b\"");
}
