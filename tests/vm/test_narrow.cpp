// tests/vm/test_narrow.cpp — narrow event lists (runtime/event_list.h: a `seq bool`, or a `seq` of
// items with one bool field, keeps one byte per row) through the VM: random programs of pushes,
// repeat(), sets, gets, pops, reverses, sort_by, first/last, count/contains, printing, for loops
// and copies into a stored list (an event's list argument) run by both engines, against the
// output a std::vector<bool> model predicts. Seed: PURE_NARROW_SEED.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/vm/vm_support.h"

using pure::test::clean_on_both;

namespace {

std::string b(bool v) { return v ? "true" : "false"; }

std::string list_text(const std::vector<bool>& xs) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + b(xs[i]);
  return out + "]";
}

// A random program over `xs: seq bool` and `fs: seq F` (F { on: bool }) and the output the model
// predicts for it.
struct Generated {
  std::string program;
  std::string expected;
};

Generated generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t n) { return n ? rng() % n : 0; };
  std::vector<bool> xs, fs;
  std::map<int64_t, bool> kept;
  std::string body, out;
  for (int op = 0; op < 60; ++op) {
    bool v = pick(2);
    switch (pick(13)) {
      case 0:
        body += "  xs.push(" + b(v) + ")\n";
        xs.push_back(v);
        break;
      case 1: {
        int64_t n = static_cast<int64_t>(pick(pick(4) == 0 ? 3000 : 12));
        body += "  for r in repeat(" + b(v) + ", " + std::to_string(n) + ") { xs.push(r) }\n";
        xs.insert(xs.end(), static_cast<size_t>(n), v);
        break;
      }
      case 2:
        if (xs.empty()) break;
        {
          size_t i = pick(xs.size());
          body += "  xs[" + std::to_string(i) + "] = " + b(v) + "\n";
          xs[i] = v;
        }
        break;
      case 3:
        if (xs.empty()) break;
        {
          size_t i = pick(xs.size());
          body += "  print(\"{xs[" + std::to_string(i) + "]}\")\n";
          out += b(xs[i]) + "\n";
        }
        break;
      case 4:
        if (xs.empty()) break;
        body += "  print(\"{xs.pop()}\")\n";
        out += b(xs.back()) + "\n";
        xs.pop_back();
        break;
      case 5:
        body += "  xs.reverse()\n";
        std::reverse(xs.begin(), xs.end());
        break;
      case 6:
        body += "  print(\"{xs.count()} {xs.contains(true)} {xs.contains(false)}\")\n";
        out += std::to_string(xs.size()) + " " + b(std::count(xs.begin(), xs.end(), true) > 0) + " " +
               b(std::count(xs.begin(), xs.end(), false) > 0) + "\n";
        break;
      case 7:
        if (xs.size() > 200) {  // a loop that counts and flips, read and written in place
          body += "  if true {\n    var t = 0\n    for i in 0 .. xs.count() {\n      if xs[i] { t += 1 }\n      xs[i] = not xs[i]\n    }\n    print(\"{t}\")\n  }\n";
          out += std::to_string(std::count(xs.begin(), xs.end(), true)) + "\n";
          xs.flip();
        } else {
          body += "  print(\"{xs}\")\n";
          out += list_text(xs) + "\n";
        }
        break;
      case 8:
        if (xs.empty()) break;
        body += "  print(\"{xs.first()} {xs.last()}\")\n";
        out += b(xs.front()) + " " + b(xs.back()) + "\n";
        break;
      case 9: {  // into a stored list through an event's copy of the list; main's list is unchanged
        body += "  if true {\n    let k = keep(xs)\n    print(\"{k.ok} {xs.count()} {kept.count()}\")\n  }\n";
        for (size_t i = 0; i < xs.size(); ++i) kept[static_cast<int64_t>(i)] = xs[i];
        out += "true " + std::to_string(xs.size()) + " " + std::to_string(kept.size()) + "\n";
        break;
      }
      case 10:
        body += "  if true {\n    var on = 0\n    for r in kept { if r.on { on += 1 } }\n    print(\"{on}\")\n  }\n";
        out += std::to_string(std::count_if(kept.begin(), kept.end(), [](auto& p) { return p.second; })) + "\n";
        break;
      case 11:
        body += "  fs.push(F { on: " + b(v) + " })\n";
        fs.push_back(v);
        if (!fs.empty() && pick(2)) {
          size_t i = pick(fs.size());
          body += "  fs[" + std::to_string(i) + "].on = " + b(!fs[i]) + "\n  print(\"{fs[" + std::to_string(i) + "].on}\")\n";
          fs[i] = !fs[i];
          out += b(fs[i]) + "\n";
        }
        break;
      case 12:
        body += "  fs.sort_by(on)\n  print(\"{fs.count()} {fs.first().on}\")\n";
        std::stable_sort(fs.begin(), fs.end());
        out += std::to_string(fs.size()) + " " + b(!fs.empty() && fs.front()) + "\n";
        if (fs.empty()) return generate(seed + 1000003);  // first() of an empty list: try another
        break;
    }
  }
  body += "  print(\"{xs}\")\n";
  out += list_text(xs) + "\n";
  std::string program =
      "type F { on: bool }\nlist kept by pos: int { on: bool }\n"
      "event keep(bs: seq bool) {\n  for i in 0 .. bs.count() { kept[i] = { on: bs[i] } }\n  bs.push(true)\n}\n"
      "fn main() {\n  let xs: seq bool = []\n  let fs: seq F = []\n" + body + "}\n";
  return {program, out};
}

uint64_t seed_from_env() {
  const char* s = std::getenv("PURE_NARROW_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261201;
}

}  // namespace

TEST_CASE("narrow lists: random programs on seq bool match a std::vector<bool> model on both engines") {
  uint64_t seed = seed_from_env();
  for (uint64_t i = 0; i < 40; ++i) {
    Generated g = generate(seed + i);
    CAPTURE(seed + i);
    CAPTURE(g.program);
    CHECK(clean_on_both(g.program) == g.expected);
  }
}

TEST_CASE("narrow lists: errors and limits are the interpreter's, located") {
  auto run = [](const std::string& text) { return pure::test::run_program(text); };
  pure::test::Outcome o = run("fn main() {\n  let xs = repeat(true, 3)\n  xs[3] = false\n}\n");
  CHECK(o.failed);
  CHECK(o.message.find("out of range") != std::string::npos);
  CHECK(o.line == 3);
  o = run("fn main() {\n  let xs: seq bool = []\n  print(\"{xs.pop()}\")\n}\n");
  CHECK(o.failed);
  CHECK(o.message == "pop from an empty sequence");
  // one byte a row: 4 MiB of budget holds a million flags, which as 8-byte cells it would not
  pure::test::RunConfig small;
  small.max_memory = 4 << 20;
  o = pure::test::run_program("fn main() {\n  let xs = repeat(false, 1_000_000)\n  print(\"{xs.count()}\")\n}\n", small);
  CHECK_FALSE(o.failed);
  CHECK(o.output == "1000000\n");
  o = pure::test::run_program("fn main() {\n  let xs = repeat(0, 1_000_000)\n  print(\"{xs.count()}\")\n}\n", small);
  CHECK(o.failed);
  CHECK(o.message.find("memory budget spent") != std::string::npos);
}
