// tests/vm/test_text_pieces.cpp — loops over the pieces of a text (`for w in t.split(sep)`,
// words(), lines(), and a `let` of pieces walked only by a later loop: TEXT_ITER, whose ITER_NEXT
// writes each piece over the last one when nothing kept it) against a model written here: random
// texts and separators, every piece printed, some kept (pushed, made keys) while later pieces are
// cut, on the interpreter and the step engine, with no text leaked.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/vm/vm_support.h"

using namespace pure;

namespace {

// The model: Python's str.split(sep) (code points for an empty separator), str.split(), and
// lines ended by "\n" or "\r\n".
std::vector<std::string> model_split(const std::string& t, const std::string& sep) {
  std::vector<std::string> out;
  if (sep.empty()) {
    for (size_t i = 0; i < t.size();) {
      size_t n = 1;
      unsigned char c = static_cast<unsigned char>(t[i]);
      if (c >= 0xF0) n = 4;
      else if (c >= 0xE0) n = 3;
      else if (c >= 0xC0) n = 2;
      out.push_back(t.substr(i, n));
      i += n;
    }
    return out;
  }
  size_t start = 0;
  while (true) {
    size_t hit = t.find(sep, start);
    if (hit == std::string::npos) break;
    out.push_back(t.substr(start, hit - start));
    start = hit + sep.size();
  }
  out.push_back(t.substr(start));
  return out;
}

std::vector<std::string> model_words(const std::string& t) {
  std::vector<std::string> out;
  std::string word;
  for (char c : t) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

std::vector<std::string> model_lines(const std::string& t) {
  std::vector<std::string> out;
  std::string line;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\n') {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      out.push_back(line);
      line.clear();
    } else {
      line += t[i];
    }
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

// Prints each piece as [piece]; keeps the pieces at positions divisible by `keep` in a seq and
// counts every piece by key, then prints what was kept and the counts (in key order).
const char* kProgram = R"(fn main(args: seq text) {
  let t = args[0]
  let sep = args[1]
  let keep = parse_int(args[2])
  let kept = seq text
  let counts = list by piece: text { n: int = 0 }
  for i, p in t.split(sep) {
    print("s[{p}]")
    if i % keep == 0 { kept.push(p) }
    counts[p].n += 1
  }
  let words = t.words()
  var last = ""
  for w in words {
    print("w[{w}]")
    last = w
  }
  print("last[{last}]")
  let lines = t.lines()
  print("lines")
  for i, l in lines {
    if i % keep == 0 { counts[l].n += 10 }
    print("l[{l}]")
  }
  print(join(kept, "|"))
  for c in counts { print("{c.piece}={c.n}") }
}
)";

std::string expected(const std::string& t, const std::string& sep, int keep) {
  std::string out;
  std::vector<std::string> kept;
  std::map<std::string, int> counts;
  std::vector<std::string> split = model_split(t, sep);
  for (size_t i = 0; i < split.size(); ++i) {
    out += "s[" + split[i] + "]\n";
    if (i % keep == 0) kept.push_back(split[i]);
    counts[split[i]] += 1;
  }
  std::string last;
  for (const std::string& w : model_words(t)) {
    out += "w[" + w + "]\n";
    last = w;
  }
  out += "last[" + last + "]\nlines\n";
  std::vector<std::string> lines = model_lines(t);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i % keep == 0) counts[lines[i]] += 10;
    out += "l[" + lines[i] + "]\n";
  }
  for (size_t i = 0; i < kept.size(); ++i) out += (i ? "|" : "") + kept[i];
  out += "\n";
  for (const auto& [piece, n] : counts) out += piece + "=" + std::to_string(n) + "\n";
  return out;
}

}  // namespace

TEST_CASE("loops over a text's pieces give the pieces split, words and lines give, kept or not") {
  std::mt19937 rng(20261202);
  const std::vector<std::string> atoms = {"a", "b", "ab", "word", "longer-than-24-bytes-piece", " ", "  ", ",", ", ",
                                          "\n", "\r\n", "\r", "\t", "é", "€"};
  const std::vector<std::string> separators = {" ", ",", ", ", "ab", "", "\n", "--"};
  for (int round = 0; round < 60; ++round) {
    std::string t;
    int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) t += atoms[rng() % atoms.size()];
    std::string sep = separators[rng() % separators.size()];
    int keep = 1 + static_cast<int>(rng() % 3);
    CAPTURE(t);
    CAPTURE(sep);
    CAPTURE(keep);
    test::RunConfig config;
    config.args = {t, sep, std::to_string(keep)};
    for (test::Engine engine : {test::Engine::Interpret, test::Engine::Step}) {
      config.engine = engine;
      test::Outcome o = test::run_program(kProgram, config);
      REQUIRE(o.signal == 0);
      REQUIRE(o.compile_errors.empty());
      CHECK_MESSAGE(!o.failed, o.message);
      CHECK(o.output == expected(t, sep, keep));
      CHECK(o.leaked_texts == 0);
    }
  }
}
