// tests/runtime/test_store_slice.cpp — slices (store.h: Slice) of the B+tree store against a
// sorted std::map: random composite keys, then random prefixes, bounds on the next key and
// directions, on the live lists, on snapshots held across later writes, and on the reference
// store. Small nodes make deep trees, so slices cross leaves and inner nodes. Seed: PURE_STORE_SEED.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>

#include "runtime/store_btree_store.h"
#include "runtime/store_reference.h"
#include "store_test_support.h"

using namespace pure::rt;
using namespace store_test;

namespace {

using Key = std::vector<int64_t>;
using Model = std::map<Key, int64_t>;  // keys (ints, bools) -> the one field

// What a slice of the model holds, in the slice's order: "k1,k2,..=v;" per row.
std::string model_slice(const Model& m, const Slice& s) {
  std::vector<std::string> rows;
  for (const auto& [key, value] : m) {
    bool in = true;
    for (uint32_t i = 0; i < s.prefix_len; ++i) in = in && key[i] == static_cast<int64_t>(s.prefix[i]);
    if (in && s.bounded) in = key[s.prefix_len] >= s.lo && key[s.prefix_len] < s.hi;
    if (in && s.from) {  // a resumed walk: at that key or past it in the walk's direction
      Key from(s.from, s.from + key.size());
      in = s.reverse ? key <= from : key >= from;
    }
    if (!in) continue;
    std::string r;
    for (int64_t k : key) r += std::to_string(k) + ",";
    rows.push_back(r + "=" + std::to_string(value) + ";");
  }
  if (s.reverse) std::reverse(rows.begin(), rows.end());
  std::string out;
  for (auto& r : rows) out += r;
  return out;
}

std::string cursor_text(const ListReader& list, const Slice& s) {
  std::string out;
  uint32_t kw = list.schema().key_width();
  for (auto c = list.slice(s); c->valid(); c->next()) {
    const Cell* row = c->row();
    for (uint32_t i = 0; i < kw; ++i) out += std::to_string(static_cast<int64_t>(row[i])) + ",";
    out += "=" + std::to_string(static_cast<int64_t>(row[kw])) + ";";
  }
  return out;
}

// The same through take() and take_run(), as the VM reads cursors.
std::string taken_text(const ListReader& list, const Slice& s, bool runs) {
  std::string out;
  uint32_t kw = list.schema().key_width(), w = list.schema().row_width();
  auto c = list.slice(s);
  for (;;) {
    const Cell* first = nullptr;
    size_t n = runs ? c->take_run(&first, SIZE_MAX) : (first = c->take()) != nullptr;
    if (n == 0) break;
    for (size_t r = 0; r < n; ++r) {
      const Cell* row = first + r * w;
      for (uint32_t i = 0; i < kw; ++i) out += std::to_string(static_cast<int64_t>(row[i])) + ",";
      out += "=" + std::to_string(static_cast<int64_t>(row[kw])) + ";";
    }
  }
  return out;
}

ListSchema orders_schema() { return {"orders", false, {ColType::Int, ColType::Bool, ColType::Int}, {ColType::Int}}; }

struct SliceRun {
  std::mt19937_64 rng;
  std::unique_ptr<Store> tree, reference;
  Model model;
  int keys_per_column = 6;

  SliceRun(uint64_t seed, uint32_t node_bytes)
      : rng(seed), tree(make_btree_store({orders_schema()}, node_bytes)), reference(make_reference_store({orders_schema()})) {}

  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  Key random_key() { return {pick(-2, keys_per_column), pick(0, 1), pick(-3, keys_per_column * 8)}; }

  void write_some(int n) {
    tree->begin();
    reference->begin();
    for (int i = 0; i < n; ++i) {
      Key k = random_key();
      if (pick(0, 3) == 0) {
        Cell key[3] = {static_cast<Cell>(k[0]), static_cast<Cell>(k[1]), static_cast<Cell>(k[2])};
        bool a = tree->list(0).remove(key), b = reference->list(0).remove(key);
        REQUIRE(a == b);
        REQUIRE(a == (model.erase(k) == 1));
      } else {
        int64_t v = pick(-1000, 1000);
        Cell row[4] = {static_cast<Cell>(k[0]), static_cast<Cell>(k[1]), static_cast<Cell>(k[2]), static_cast<Cell>(v)};
        tree->list(0).put(row);
        reference->list(0).put(row);
        model[k] = v;
      }
    }
    tree->commit();
    reference->commit();
  }

  Slice random_slice(Cell* prefix) {
    Slice s;
    s.prefix_len = static_cast<uint32_t>(pick(0, 2));
    Key k = random_key();
    for (uint32_t i = 0; i < s.prefix_len; ++i) prefix[i] = static_cast<Cell>(k[i]);
    s.prefix = prefix;
    // The bound is on an Int column: the first (no prefix) or the third (two key cells given).
    s.bounded = s.prefix_len != 1 && pick(0, 2) > 0;
    if (s.bounded) {
      int64_t span = s.prefix_len == 0 ? keys_per_column : keys_per_column * 8;
      s.lo = pick(-4, span + 2);
      s.hi = pick(-4, span + 4);
    }
    s.reverse = pick(0, 1) == 1;
    if (pick(0, 2) == 0 && (!s.bounded || s.lo < s.hi)) {  // resumed at a random key inside the slice (present or not)
      Key f = random_key();
      if (s.bounded) f[s.prefix_len] = std::clamp<int64_t>(f[s.prefix_len], s.lo, s.hi - 1);
      for (uint32_t i = 0; i < 3; ++i) from_[i] = i < s.prefix_len ? prefix[i] : static_cast<Cell>(f[i]);
      s.from = from_;
    }
    return s;
  }
  Cell from_[3] = {};

  void check_slices(const ListReader& list, const Model& m, int n) {
    for (int i = 0; i < n; ++i) {
      Cell prefix[3];
      Slice s = random_slice(prefix);
      std::string want = model_slice(m, s);
      INFO("prefix " << s.prefix_len << " bounded " << s.bounded << " [" << s.lo << ", " << s.hi << ") reverse " << s.reverse
                     << " from " << (s.from ? std::to_string(static_cast<int64_t>(s.from[0])) + "," + std::to_string(static_cast<int64_t>(s.from[1])) + "," + std::to_string(static_cast<int64_t>(s.from[2])) : "-"));
      REQUIRE(cursor_text(list, s) == want);
      REQUIRE(taken_text(list, s, false) == want);
      REQUIRE(taken_text(list, s, true) == want);
    }
  }
};

}  // namespace

TEST_CASE("slices of the B+tree agree with a sorted map, live and in held snapshots") {
  uint64_t seed = seed_from_env(15003);
  INFO("seed " << seed);
  for (uint32_t node_bytes : {160u, 1024u}) {
    SliceRun run(seed + node_bytes, node_bytes);
    std::vector<std::pair<std::shared_ptr<const Snapshot>, Model>> held;
    for (int round = 0; round < 60; ++round) {
      run.write_some(round < 30 ? 25 : 10);
      run.check_slices(run.tree->list(0), run.model, 20);
      run.check_slices(run.reference->list(0), run.model, 5);
      if (round % 7 == 0) held.emplace_back(run.tree->publish(), run.model);
      for (auto& [snapshot, m] : held) run.check_slices(snapshot->list(0), m, 3);
    }
    // Empty the list: every slice is empty, whatever its direction.
    run.tree->begin();
    for (const auto& [key, value] : run.model) {
      Cell k[3] = {static_cast<Cell>(key[0]), static_cast<Cell>(key[1]), static_cast<Cell>(key[2])};
      REQUIRE(run.tree->list(0).remove(k));
    }
    run.tree->commit();
    run.check_slices(run.tree->list(0), Model{}, 20);
    for (auto& [snapshot, m] : held) run.check_slices(snapshot->list(0), m, 5);
  }
}

TEST_CASE("slices of a stored sequence are ranges of positions, either way") {
  auto tree = make_btree_store({{"log", true, {}, {ColType::Int}}}, 160);
  tree->begin();
  for (int64_t i = 0; i < 300; ++i) {
    Cell v = static_cast<Cell>(i * 10);
    tree->list(0).append(&v);
  }
  tree->commit();
  auto text = [&](Slice s) {
    std::string out;
    for (auto c = tree->list(0).slice(s); c->valid(); c->next())
      out += std::to_string(c->position()) + "=" + std::to_string(static_cast<int64_t>(c->row()[0])) + ";";
    return out;
  };
  for (int64_t lo : {-5, 0, 7, 150, 299, 300})
    for (int64_t hi : {-1, 0, 8, 151, 300, 400})
      for (bool reverse : {false, true}) {
        Slice s;
        s.bounded = true;
        s.lo = lo;
        s.hi = hi;
        s.reverse = reverse;
        std::string want;
        std::vector<int64_t> positions;
        for (int64_t p = std::max<int64_t>(lo, 0); p < std::min<int64_t>(hi, 300); ++p) positions.push_back(p);
        if (reverse) std::reverse(positions.begin(), positions.end());
        for (int64_t p : positions) want += std::to_string(p) + "=" + std::to_string(p * 10) + ";";
        INFO(lo << " " << hi << " " << reverse);
        CHECK(text(s) == want);
      }
  Slice back;
  back.reverse = true;
  std::string all = text(back);
  CHECK(all.rfind("299=2990;298=2980;", 0) == 0);
  CHECK(all.size() > 0);
}

// Text keys (issue 37, item 7): a bound on a Text key column is two Text* cells, compared as
// text_compare orders keys; on the first key (sales) and after an Int prefix (shops).
TEST_CASE("slices bounded on a text key agree with a sorted map: B+tree live and held, and the reference store") {
  uint64_t seed = seed_from_env(37007);
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<Text*> texts;  // the day texts, owned here (the stores keep copies)
  for (const char* d : {"", "2026", "2026-1", "2026-11-30", "2026-12", "2026-12-01", "2026-12-05", "2026-12-10", "2026-12-31",
                        "2026-12~", "2026-13", "2027-01-01", "a", "z"})
    texts.push_back(text_new(d));
  for (int m = 1; m <= 12; ++m)
    for (int d = 1; d <= 28; d += 3) {
      char day[16];
      std::snprintf(day, sizeof day, "2026-%02d-%02d", m, d);
      texts.push_back(text_new(day));
    }
  auto day = [&](int64_t i) { return std::string(texts[static_cast<size_t>(i)]->view()); };
  const int64_t last = static_cast<int64_t>(texts.size()) - 1;
  std::vector<ListSchema> schemas = {{"sales", false, {ColType::Text, ColType::Int}, {ColType::Int}},
                                     {"shops", false, {ColType::Int, ColType::Text}, {ColType::Int}}};
  using TextModel = std::map<std::pair<std::string, int64_t>, int64_t>;  // (day, other key) -> v
  for (uint32_t node_bytes : {160u, 2048u}) {
    auto tree = make_btree_store(schemas, node_bytes);
    auto reference = make_reference_store(schemas);
    TextModel sales, shops;  // shops keyed (day, shop)
    std::vector<std::tuple<std::shared_ptr<const Snapshot>, TextModel, TextModel>> held;
    // rows in the slice's order, "day/k=v;", from a model, and from a list
    auto want = [&](const TextModel& m, const std::string& lo, const std::string& hi, int64_t shop, bool reverse) {
      std::vector<std::string> rows;
      for (const auto& [k, v] : m)
        if (k.first >= lo && k.first < hi && (shop < 0 || k.second == shop))
          rows.push_back(k.first + "/" + std::to_string(k.second) + "=" + std::to_string(v) + ";");
      if (reverse) std::reverse(rows.begin(), rows.end());
      std::string out;
      for (auto& r : rows) out += r;
      return out;
    };
    auto got = [&](const ListReader& list, const Slice& s, bool runs) {
      std::string out;
      bool text_first = list.schema().key[0] == ColType::Text;
      auto c = list.slice(s);
      for (;;) {
        const Cell* first = nullptr;
        size_t n = runs ? c->take_run(&first, SIZE_MAX) : (first = c->take()) != nullptr;
        if (n == 0) break;
        for (size_t r = 0; r < n; ++r) {
          const Cell* row = first + r * 3;
          std::string d(reinterpret_cast<const Text*>(row[text_first ? 0 : 1])->view());
          out += d + "/" + std::to_string(static_cast<int64_t>(row[text_first ? 1 : 0])) + "=" + std::to_string(static_cast<int64_t>(row[2])) + ";";
        }
      }
      return out;
    };
    auto check = [&](const ListReader& s_list, const ListReader& h_list, const TextModel& s_model, const TextModel& h_model, int n) {
      for (int i = 0; i < n; ++i) {
        int64_t a = pick(0, last), b = pick(0, last);
        Slice s;
        s.bounded = true;
        s.lo = static_cast<int64_t>(reinterpret_cast<Cell>(texts[static_cast<size_t>(a)]));
        s.hi = static_cast<int64_t>(reinterpret_cast<Cell>(texts[static_cast<size_t>(b)]));
        s.reverse = pick(0, 1) == 1;
        bool runs = pick(0, 1) == 1;
        INFO("[" << day(a) << ", " << day(b) << ") reverse " << s.reverse);
        REQUIRE(got(s_list, s, runs) == want(s_model, day(a), day(b), -1, s.reverse));
        Cell shop = static_cast<Cell>(pick(0, 4));  // 4: no such shop
        s.prefix = &shop;
        s.prefix_len = 1;
        REQUIRE(got(h_list, s, runs) == want(h_model, day(a), day(b), static_cast<int64_t>(shop), s.reverse));
      }
    };
    for (int round = 0; round < 40; ++round) {
      tree->begin();
      reference->begin();
      for (int i = 0; i < 30; ++i) {
        int64_t d = pick(0, last), k = pick(0, 3), v = pick(-99, 99);
        Cell t = reinterpret_cast<Cell>(texts[static_cast<size_t>(d)]);
        Cell sale[3] = {t, static_cast<Cell>(k), static_cast<Cell>(v)}, shop[3] = {static_cast<Cell>(k), t, static_cast<Cell>(v)};
        if (pick(0, 4) == 0) {
          REQUIRE(tree->list(0).remove(sale) == reference->list(0).remove(sale));
          REQUIRE(tree->list(1).remove(shop) == reference->list(1).remove(shop));
          sales.erase({day(d), k});
          shops.erase({day(d), k});
        } else {
          for (Store* st : {tree.get(), reference.get()}) {
            st->list(0).put(sale);
            st->list(1).put(shop);
          }
          sales[{day(d), k}] = v;
          shops[{day(d), k}] = v;
        }
      }
      tree->commit();
      reference->commit();
      check(tree->list(0), tree->list(1), sales, shops, 20);
      check(reference->list(0), reference->list(1), sales, shops, 5);
      if (round % 9 == 0) held.emplace_back(tree->publish(), sales, shops);
      for (auto& [snapshot, s_model, h_model] : held) check(snapshot->list(0), snapshot->list(1), s_model, h_model, 3);
    }
  }
  for (Text* t : texts) text_release(t);
}
