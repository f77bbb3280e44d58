// tests/support/sort_model.h — the model-based test of `sort_by` with several keys and directions:
// a random Pure program that sorts a list of items again and again (each sort starting from the
// order the last one left) and prints the ids after each, and the output a simple reference gives
// (std::stable_sort with a comparator written from the documented rules). The engine tests run the
// program and compare. Header only, standard library only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace pure::test {

struct SortModel {
  std::string program;   // the Pure module
  std::string expected;  // what its main prints, by the reference sort
};

// Items R { id, score: int, name: text, w: num, on: bool } with few distinct values per field (so
// that ties are common); `sorts` sort_by calls of 1-3 distinct fields, each asc, desc or plain,
// run in a loop `rounds` times.
inline SortModel sort_model(uint32_t seed, int items, int sorts, int rounds) {
  struct Row {
    int64_t id, score;
    std::string name;
    double w;
    bool on;
  };
  struct Key {
    int field;  // 0 score, 1 name, 2 w, 3 on
    bool desc;
    int written;  // 0 plain, 1 asc, 2 desc
  };
  static const char* const kFields[] = {"score", "name", "w", "on"};
  static const char* const kNames[] = {"ann", "bo", "Bo", "cy", "", "ann b"};
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  std::vector<Row> rows;
  SortModel m;
  m.program = "type R { id: int, score: int, name: text, w: num, on: bool }\nfn ids(xs: seq R) -> text {\n"
              "  var o = \"\"\n  for x in xs { o = o + \"{x.id} \" }\n  return o\n}\nfn main() {\n  let xs = seq R\n";
  for (int i = 0; i < items; ++i) {
    Row r{i, pick(5) - 2, kNames[pick(6)], (pick(7) - 3) * 0.25, pick(2) == 1};
    rows.push_back(r);
    char w[32];
    std::snprintf(w, sizeof w, "%.2f", r.w);
    m.program += "  xs.push(R { id: " + std::to_string(r.id) + ", score: " + std::to_string(r.score) + ", name: \"" + r.name +
                 "\", w: " + w + ", on: " + (r.on ? "true" : "false") + " })\n";
  }
  std::vector<std::vector<Key>> specs;
  for (int s = 0; s < sorts; ++s) {
    std::vector<int> fields = {0, 1, 2, 3};
    std::shuffle(fields.begin(), fields.end(), rng);
    int n = 1 + pick(3);
    std::vector<Key> keys;
    for (int k = 0; k < n; ++k) {
      int written = pick(3);
      keys.push_back({fields[k], written == 2, written});
    }
    specs.push_back(keys);
  }
  m.program += "  for round in 0 .. " + std::to_string(rounds) + " {\n";
  for (const auto& keys : specs) {
    m.program += "    xs.sort_by(";
    for (size_t k = 0; k < keys.size(); ++k) {
      m.program += std::string(k ? ", " : "") + kFields[keys[k].field];
      if (keys[k].written == 1) m.program += " asc";
      if (keys[k].written == 2) m.program += " desc";
    }
    m.program += ")\n    print(ids(xs))\n";
  }
  m.program += "  }\n}\n";
  // the reference: compare key by key, the first that differs decides; texts by bytes
  for (int round = 0; round < rounds; ++round)
    for (const auto& keys : specs) {
      std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
        for (const Key& k : keys) {
          int c = 0;
          switch (k.field) {
            case 0: c = a.score < b.score ? -1 : a.score > b.score; break;
            case 1: c = a.name < b.name ? -1 : a.name > b.name; break;
            case 2: c = a.w < b.w ? -1 : a.w > b.w; break;
            default: c = static_cast<int>(a.on) - static_cast<int>(b.on); break;
          }
          if (c != 0) return k.desc ? c > 0 : c < 0;
        }
        return false;
      });
      for (const Row& r : rows) m.expected += std::to_string(r.id) + " ";
      m.expected += "\n";
    }
  return m;
}

}  // namespace pure::test
