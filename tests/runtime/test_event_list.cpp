// tests/runtime/test_event_list.cpp — keyed event lists (runtime/event_list.h) against a std::map
// model: random puts, ensures, finds, field writes, removes, clears and ordered walks (all rows,
// key prefixes, int ranges) over text, composite and int keys, with every key built as a fresh
// text (equal content, another object) or reusing one. Also: chosen keys whose hashes collide
// drop the hash index and the list stays right; replacing a row keeps its key texts alive; no
// text leaks. Seed: PURE_EVENT_LIST_SEED.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/event_list.h"
#include "runtime/key_index.h"
#include "runtime/memory.h"

using namespace pure::rt;

namespace {

uint64_t seed_from_env() {
  const char* s = std::getenv("PURE_EVENT_LIST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261201;
}

// A key cell of the model: ints compare as ints, texts by bytes (as code points in UTF-8).
struct ModelCell {
  int64_t i = 0;
  std::string t;
  bool operator<(const ModelCell& o) const { return i != o.i ? i < o.i : t < o.t; }
  bool operator==(const ModelCell& o) const { return i == o.i && t == o.t; }
};
using ModelKey = std::vector<ModelCell>;

// One list shape under test, with its own model. Fields are one int (default 0) and one text
// (default "").
class Run {
 public:
  Run(std::vector<ColType> key_cols, uint64_t seed) : rng_(seed) {
    shape_.key_count = static_cast<uint32_t>(key_cols.size());
    shape_.cols = key_cols;
    shape_.cols.push_back(ColType::Int);
    shape_.cols.push_back(ColType::Text);
    empty_ = text_new("");
    shape_.defaults = {0, reinterpret_cast<Cell>(empty_)};
    shape_.all_defaults = true;
    shape_.finish();
    list_ = new EventList(&shape_);
    for (int i = 0; i < 300; ++i) {
      std::string w;
      int len = static_cast<int>(pick(14));  // 0 to 13 bytes: every tail length of the hash
      for (int j = 0; j < len; ++j) w += static_cast<char>('a' + pick(3));
      if (i % 50 == 7) w += "\xC3\xA9";  // é
      words_.push_back(w);
      shared_.push_back(text_new(w));
    }
  }
  ~Run() {
    list_release(list_);
    for (Text* t : shared_) text_release(t);
    text_release(empty_);
  }

  void steps(int n) {
    for (int step = 0; step < n; ++step) {
      one_step();
      REQUIRE(list_->count() == static_cast<int64_t>(model_.size()));
      if (step % 97 == 0) check_walks();
    }
    check_walks();
  }

  EventList& list() { return *list_; }

 private:
  ListShape shape_;
  EventList* list_;
  Text* empty_;
  std::mt19937_64 rng_;
  std::vector<std::string> words_;
  std::vector<Text*> shared_;
  std::map<ModelKey, std::pair<int64_t, std::string>> model_;

  uint64_t pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  uint32_t kc() const { return shape_.key_count; }

  // A random key as cells (texts fresh or shared; the caller releases fresh ones) and as the model.
  int64_t random_int() {
    switch (pick(3)) {
      case 0: return static_cast<int64_t>(pick(40));                  // small and dense
      case 1: return static_cast<int64_t>(pick(2000)) - 1000;         // negative: the list goes to a tree
      default: return static_cast<int64_t>(pick(1000)) * 1000003;     // sparse
    }
  }
  void random_key(std::vector<Cell>& cells, ModelKey& key, std::vector<Text*>& fresh) {
    cells.clear();
    key.clear();
    for (uint32_t i = 0; i < kc(); ++i) {
      ModelCell m;
      if (shape_.cols[i] == ColType::Text) {
        size_t w = pick(words_.size());
        m.t = words_[w];
        if (pick(2)) {
          cells.push_back(reinterpret_cast<Cell>(shared_[w]));
        } else {
          Text* t = text_new(m.t);
          fresh.push_back(t);
          cells.push_back(reinterpret_cast<Cell>(t));
        }
      } else {
        m.i = random_int();
        cells.push_back(static_cast<Cell>(m.i));
      }
      key.push_back(m);
    }
  }

  void check_row(const Cell* row, const ModelKey& key) {
    auto it = model_.find(key);
    REQUIRE(it != model_.end());
    for (uint32_t i = 0; i < kc(); ++i) {
      if (shape_.cols[i] == ColType::Text) CHECK(reinterpret_cast<const Text*>(row[i])->view() == key[i].t);
      else CHECK(static_cast<int64_t>(row[i]) == key[i].i);
    }
    CHECK(static_cast<int64_t>(row[kc()]) == it->second.first);
    CHECK(reinterpret_cast<const Text*>(row[kc() + 1])->view() == it->second.second);
  }

  void one_step() {
    std::vector<Cell> cells;
    ModelKey key;
    std::vector<Text*> fresh;
    random_key(cells, key, fresh);
    switch (pick(10)) {
      case 0: case 1: {  // put
        int64_t n = static_cast<int64_t>(pick(100));
        std::string label = "label" + std::to_string(pick(5));
        Text* t = text_new(label);
        Cell fields[2] = {static_cast<Cell>(n), reinterpret_cast<Cell>(t)};
        list_->put(cells.data(), fields);
        text_release(t);
        model_[key] = {n, label};
        break;
      }
      case 2: case 3: {  // ensure, then a field write as `xs[k].n += 1` does it
        Cell* row = list_->ensure(cells.data());
        auto& m = model_.try_emplace(key, 0, "").first->second;
        Cell* again = list_->find_fast(cells.data());  // the row found last (trees; dense lists: nullptr)
        if (again || list_->indexed()) CHECK(again == row);
        row[kc()] = static_cast<Cell>(static_cast<int64_t>(row[kc()]) + 1);
        ++m.first;
        break;
      }
      case 4: {  // a text field write
        Cell* row = list_->find_mut(cells.data());
        CHECK((row != nullptr) == (model_.count(key) == 1));
        if (row) {
          Text* t = text_new("set" + std::to_string(pick(9)));
          list_->set_cell(row, kc() + 1, reinterpret_cast<Cell>(t));
          model_[key].second = std::string(t->view());
          text_release(t);
        }
        break;
      }
      case 5: case 6: {  // find, by both paths
        const Cell* row = list_->find(cells.data());
        CHECK((row != nullptr) == (model_.count(key) == 1));
        if (row) check_row(row, key);
        const Cell* fast = list_->find_fast(cells.data());
        if (fast) CHECK(fast == row);
        break;
      }
      case 7: case 8: {  // remove
        bool had = list_->remove(cells.data());
        CHECK(had == (model_.erase(key) == 1));
        CHECK(list_->find(cells.data()) == nullptr);
        break;
      }
      default:
        if (pick(40) == 0) {
          list_->clear();
          model_.clear();
        }
    }
    for (Text* t : fresh) text_release(t);
  }

  // Every row in key order; rows with the first key of a random existing row (prefix); an int range.
  void check_walks() {
    EventList::Walk w;
    auto it = model_.begin();
    while (const Cell* row = list_->walk_next(w, nullptr, 0, false, 0, 0)) {
      REQUIRE(it != model_.end());
      check_row(row, it->first);
      ++it;
    }
    CHECK(it == model_.end());
    if (model_.empty()) return;
    auto probe = std::next(model_.begin(), static_cast<long>(pick(model_.size())));
    std::vector<Cell> prefix;
    std::vector<Text*> fresh;
    if (shape_.cols[0] == ColType::Text) {
      fresh.push_back(text_new(probe->first[0].t));
      prefix.push_back(reinterpret_cast<Cell>(fresh.back()));
    } else {
      prefix.push_back(static_cast<Cell>(probe->first[0].i));
    }
    EventList::Walk pw;
    size_t seen = 0;
    for (const auto& [key, value] : model_) {
      if (!(key[0] == probe->first[0])) continue;
      const Cell* row = list_->walk_next(pw, prefix.data(), 1, false, 0, 0);
      REQUIRE(row != nullptr);
      check_row(row, key);
      ++seen;
    }
    CHECK(seen > 0);
    CHECK(list_->walk_next(pw, prefix.data(), 1, false, 0, 0) == nullptr);
    for (Text* t : fresh) text_release(t);
    if (shape_.cols[0] == ColType::Int) {
      int64_t lo = random_int(), hi = lo + static_cast<int64_t>(pick(3000000));
      EventList::Walk rw;
      for (const auto& [key, value] : model_) {
        if (key[0].i < lo || key[0].i >= hi) continue;
        const Cell* row = list_->walk_next(rw, nullptr, 0, true, lo, hi);
        REQUIRE(row != nullptr);
        check_row(row, key);
      }
      CHECK(list_->walk_next(rw, nullptr, 0, true, lo, hi) == nullptr);
    }
  }
};

// The hash the list gives a one-text key (as EventList::hash_key computes it).
uint64_t key_hash(const std::string& s) { return text_key_hash(s.data(), static_cast<uint32_t>(s.size())); }

}  // namespace

TEST_CASE("event lists with text keys agree with a model, and leak no text") {
  int64_t before = text_live_count();
  {
    Run run({ColType::Text}, seed_from_env());
    run.steps(20000);
    CHECK(run.list().indexed());
  }
  CHECK(text_live_count() == before);
}

TEST_CASE("event lists with composite (text, int) keys agree with a model") {
  int64_t before = text_live_count();
  {
    Run run({ColType::Text, ColType::Int}, seed_from_env() + 1);
    run.steps(20000);
  }
  CHECK(text_live_count() == before);
}

TEST_CASE("event lists with int keys agree with a model, dense and sparse") {
  int64_t before = text_live_count();
  {
    Run run({ColType::Int}, seed_from_env() + 2);
    run.steps(20000);
  }
  CHECK(text_live_count() == before);
}

TEST_CASE("replacing a row keeps the key text the list orders by") {
  // m[k] = ... twice with equal keys in different texts: the first text stays the row's key
  // (the tree orders by it), the second is not kept. Before, the row took the second text and
  // released the first, which the tree still compared against (a use after free).
  int64_t before = text_live_count();
  {
    ListShape shape;
    shape.key_count = 1;
    shape.cols = {ColType::Text, ColType::Int};
    shape.defaults = {0};
    shape.finish();
    EventList list(&shape);
    Text* first = text_new("key");
    Text* second = text_new("key");
    Cell one = 1, two = 2;
    Cell k1 = reinterpret_cast<Cell>(first), k2 = reinterpret_cast<Cell>(second);
    list.put(&k1, &one);
    list.put(&k2, &two);
    CHECK(first->rc == 2);   // ours and the row's
    CHECK(second->rc == 1);  // ours only
    text_release(first);
    text_release(second);
    Text* third = text_new("key");
    Cell k3 = reinterpret_cast<Cell>(third);
    const Cell* row = list.find(&k3);
    REQUIRE(row != nullptr);
    CHECK(row[1] == 2);
    CHECK(reinterpret_cast<const Text*>(row[0]) == first);
    CHECK(list.remove(&k3));
    text_release(third);
  }
  CHECK(text_live_count() == before);
}

TEST_CASE("keys chosen to collide in the hash index drop it; the list stays right") {
  // Keys whose hashes agree in their low 12 bits land in one run of the index until it holds 4096
  // entries: past KeyIndex::kMaxProbe of them the list drops its index and searches its tree.
  std::vector<std::string> keys;
  for (uint64_t i = 0; keys.size() < 2 * KeyIndex::kMaxProbe; ++i) {
    std::string s = "k" + std::to_string(i);
    if ((key_hash(s) & 0xFFF) == 0) keys.push_back(s);
  }
  int64_t before = text_live_count();
  MemoryMeter meter(uint64_t{1} << 30);
  MeterScope metered(meter);
  {
    ListShape shape;
    shape.key_count = 1;
    shape.cols = {ColType::Text, ColType::Int};
    shape.defaults = {0};
    shape.finish();
    EventList list(&shape);
    uint64_t key_texts = 0;  // what the key texts the list holds are charged
    for (size_t i = 0; i < keys.size(); ++i) {
      Text* t = text_new(keys[i]);
      key_texts += charged_size(sizeof(Text) + keys[i].size());
      Cell k = reinterpret_cast<Cell>(t), v = i;
      list.put(&k, &v);
      text_release(t);
    }
    CHECK_FALSE(list.indexed());
    // the dropped index's table went back to the meter: the list is charged for its tree alone
    CHECK(static_cast<int64_t>(list.charged_bytes() + key_texts) == meter.used());
    uint64_t entry;
    {
      EventList one(&shape);
      Text* t = text_new("one");
      Cell k = reinterpret_cast<Cell>(t), v = 1;
      one.put(&k, &v);
      text_release(t);
      REQUIRE(one.indexed());
      entry = one.charged_bytes() - KeyIndex::bytes_for(1);
    }
    CHECK(list.charged_bytes() == keys.size() * entry);
    CHECK(list.count() == static_cast<int64_t>(keys.size()));
    for (size_t i = 0; i < keys.size(); ++i) {
      Text* t = text_new(keys[i]);
      Cell k = reinterpret_cast<Cell>(t);
      const Cell* row = list.find(&k);
      REQUIRE(row != nullptr);
      CHECK(row[1] == i);
      CHECK(list.find_fast(&k) == row);  // the row found last
      if (i % 2) CHECK(list.remove(&k));
      text_release(t);
    }
    CHECK(list.count() == static_cast<int64_t>(keys.size() / 2));
  }
  CHECK(text_live_count() == before);
  CHECK(meter.used() == 0);
}

TEST_CASE("the key hash reads every byte of a text and nothing past it") {
  // Texts that differ in any one byte, for every length up to 40, hash apart.
  for (uint32_t len = 0; len <= 40; ++len) {
    std::string base(len, 'a');
    uint64_t h = key_hash(base);
    for (uint32_t i = 0; i < len; ++i) {
      std::string other = base;
      other[i] = 'b';
      CHECK(key_hash(other) != h);
      CHECK_FALSE(bytes_equal(base.data(), other.data(), len));
    }
    CHECK(bytes_equal(base.data(), std::string(base).data(), len));
    CHECK(key_hash(base + "a") != h);
  }
}

TEST_CASE("a key's words tell short texts apart exactly, and read nothing past them") {
  // For every length up to 40: the words of equal texts agree; texts of up to 16 bytes that
  // differ in any one byte, or in length, have different words (exact); longer ones are not exact.
  for (uint32_t len = 0; len <= 40; ++len) {
    std::string base(len, 'a');
    // the text sits at the very end of its buffer, so a read past it would show under ASan
    std::vector<char> tail(base.begin(), base.end());
    KeyWords w = text_key_words(tail.data(), len);
    CHECK(w.exact == (len <= 16));
    CHECK(w.len == len);
    CHECK(text_key_words(std::string(base).data(), len) == w);
    CHECK_FALSE(text_key_words((base + "a").data(), len + 1) == w);
    for (uint32_t i = 0; i < len; ++i) {
      std::string other = base;
      other[i] = 'b';
      if (len <= 16) CHECK_FALSE(text_key_words(other.data(), len) == w);
    }
  }
  CHECK(int_key_words(7).exact);
  CHECK_FALSE(int_key_words(7) == int_key_words(8));
}

TEST_CASE("the key index agrees with a model when hashes collide and words decide") {
  // Rows are cells holding their key; every key hashes to one of four values, so runs are long
  // and entries of one hash are told apart by their words (exact) or by same() (not exact).
  std::mt19937_64 rng(seed_from_env() + 7);
  for (bool exact : {true, false}) {
    KeyIndex index;
    std::map<uint64_t, Cell*> model;
    std::vector<std::unique_ptr<Cell>> cells;
    auto words = [&](uint64_t k) {
      KeyWords w = int_key_words(exact ? k : 0);
      w.exact = exact;
      return w;
    };
    auto hash = [](uint64_t k) { return (k % 4) * 0x10001ull; };
    for (int step = 0; step < 3000; ++step) {
      uint64_t k = rng() % 60;
      auto same = [&](const Cell* r) { return *r == k; };
      bool too_long;
      Cell* found = index.find(hash(k), words(k), same, too_long);
      REQUIRE_FALSE(too_long);
      auto it = model.find(k);
      CHECK(found == (it == model.end() ? nullptr : it->second));
      if (rng() % 3 == 0 && it != model.end()) {
        index.remove(hash(k), it->second);
        model.erase(it);
      } else if (it == model.end()) {
        cells.push_back(std::make_unique<Cell>(k));
        REQUIRE(index.add(hash(k), words(k), cells.back().get()));
        model[k] = cells.back().get();
      }
      CHECK(index.size() == model.size());
    }
  }
}
