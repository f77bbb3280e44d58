// tests/runtime/test_store_basic.cpp — direct checks of the store contract on small examples,
// run against make_store() and the reference store. Depends on runtime/store.h only (+ reference).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "runtime/store.h"
#include "runtime/store_btree_store.h"
#include "runtime/store_reference.h"

using namespace pure::rt;

namespace {

std::vector<ListSchema> schemas() {
  ListSchema edges{"edges", false, {ColType::Int, ColType::Int}, {ColType::Num}};
  ListSchema names{"names", false, {ColType::Text}, {ColType::Int, ColType::Text}};
  ListSchema log{"log", true, {}, {ColType::Int, ColType::Text}};
  return {edges, names, log};
}

Cell text_cell(Text* t) { return reinterpret_cast<Cell>(t); }

void exercise(Store& store) {
  ListWriter& edges = store.list(0);
  store.begin();
  for (int64_t a = 0; a < 50; ++a)
    for (int64_t b = 0; b < 20; ++b) {
      Cell row[3] = {Cell(a), Cell(b), Cell(a * 100 + b)};
      CHECK(edges.put(row));
    }
  store.commit();
  CHECK(edges.count() == 1000);
  Cell key[2] = {7, 3};
  REQUIRE(edges.find(key) != nullptr);
  CHECK(edges.find(key)[2] == 703);
  auto snap = store.publish();
  store.begin();
  Cell row[3] = {7, 3, 1};
  CHECK_FALSE(edges.put(row));
  CHECK(edges.remove(Cell(8) == 0 ? key : key));
  store.rollback();
  CHECK(edges.find(key)[2] == 703);
  store.begin();
  CHECK(edges.remove(key));
  store.commit();
  CHECK(edges.find(key) == nullptr);
  CHECK(snap->list(0).find(key)[2] == 703);
  int64_t n = 0;
  Cell prefix = 9;
  for (auto c = snap->list(0).prefix(&prefix, 1); c->valid(); c->next()) {
    CHECK(c->row()[0] == 9);
    CHECK(c->row()[1] == Cell(n));
    ++n;
  }
  CHECK(n == 20);
  n = 0;
  for (auto c = edges.range(10, 12); c->valid(); c->next()) ++n;
  CHECK(n == 40);

  ListWriter& names = store.list(1);
  ListWriter& log = store.list(2);
  store.begin();
  Text* alice = text_new("alice");
  Text* note = text_new("first note");
  Cell nrow[3] = {text_cell(alice), 1, text_cell(note)};
  CHECK(names.put(nrow));
  Cell lrow[2] = {5, text_cell(note)};
  CHECK(log.append(lrow) == 0);
  CHECK(log.append(lrow) == 1);
  store.commit();
  text_release(alice);
  text_release(note);
  Text* probe = text_new("alice");
  Cell probe_key = text_cell(probe);
  REQUIRE(names.find(&probe_key) != nullptr);
  CHECK(reinterpret_cast<const Text*>(names.find(&probe_key)[2])->view() == "first note");
  auto snap2 = store.publish();
  store.begin();
  CHECK(log.pop());
  CHECK(names.remove(&probe_key));
  store.commit();
  CHECK(snap2->list(2).count() == 2);
  CHECK(snap2->list(1).find(&probe_key) != nullptr);
  CHECK(log.count() == 1);
  text_release(probe);
}

}  // namespace

TEST_CASE("reference store keeps the contract on a small example") {
  int64_t texts = text_live_count();
  {
    auto store = make_reference_store(schemas());
    exercise(*store);
  }
  CHECK(text_live_count() == texts);
}

TEST_CASE("make_store keeps the contract on a small example") {
  int64_t texts = text_live_count();
  {
    auto store = make_store(schemas());
    exercise(*store);
  }
  CHECK(text_live_count() == texts);
}

TEST_CASE("a deep sequence (small nodes) appends, finds by position, slices and pops back to empty") {
  ListSchema log{"log", true, {}, {ColType::Int, ColType::Int}};
  auto store = make_btree_store({log}, 96);  // 8 rows a leaf, 8 children a node: 5000 rows is 5 levels
  ListWriter& list = store->list(0);
  for (int64_t i = 0; i < 5000; ++i) {
    Cell row[2] = {Cell(i * 3), Cell(-i)};
    CHECK(list.append(row) == i);
  }
  auto full = store->publish();
  for (int64_t p : {0, 7, 8, 63, 64, 511, 512, 4095, 4096, 4999}) {
    Cell position = Cell(p);
    REQUIRE(list.find(&position) != nullptr);
    CHECK(list.find(&position)[0] == Cell(p * 3));
  }
  Cell past = 5000;
  CHECK(list.find(&past) == nullptr);
  int64_t expected = 4090;
  for (auto c = list.range(4090, 4110); c->valid(); c->next()) {
    CHECK(c->position() == expected);
    CHECK(c->row()[0] == Cell(expected * 3));
    ++expected;
  }
  CHECK(expected == 4110);
  for (int64_t i = 4999; i >= 0; --i) {
    if (i % 700 == 0) {
      auto held = store->publish();
      Cell position = Cell(i);
      CHECK(held->list(0).find(&position)[1] == Cell(-i));
    }
    CHECK(list.pop());
    CHECK(list.count() == i);
    if (i > 0) CHECK(list.last()[0] == Cell((i - 1) * 3));
  }
  CHECK_FALSE(list.pop());
  CHECK(list.first() == nullptr);
  CHECK(full->list(0).count() == 5000);
  int64_t position = 0;
  for (auto c = full->list(0).scan(); c->valid(); c->next()) CHECK(c->row()[0] == Cell(3 * position++));
  CHECK(position == 5000);
}

TEST_CASE("integer keys of 1 to 6 cells, negatives included, are found and sliced as the reference store does") {
  // The B+tree searches int keys of 1 to 5 cells with unrolled comparisons and wider ones with
  // the column loop: every width, small nodes (a tall tree), keys that differ only in the last cell.
  for (uint32_t width = 1; width <= 6; ++width) {
    CAPTURE(width);
    ListSchema s{"k", false, std::vector<ColType>(width, ColType::Int), {ColType::Int}};
    auto tree = make_btree_store({s}, 256);
    auto ref = make_reference_store({s});
    uint64_t x = 12345 + width;
    auto next = [&] {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int64_t>(x >> 33) % 7 - 3;  // -3 ..= 3: many shared prefixes
    };
    std::vector<Cell> row(width + 1);
    for (Store* st : {tree.get(), ref.get()}) st->begin();
    for (int i = 0; i < 3000; ++i) {
      for (uint32_t c = 0; c < width; ++c) row[c] = static_cast<Cell>(next() * (c + 1 == width ? 1000003 : 1));
      row[width] = Cell(i);
      CHECK(tree->list(0).put(row.data()) == ref->list(0).put(row.data()));
      if (i % 3 == 0) {
        for (uint32_t c = 0; c < width; ++c) row[c] = static_cast<Cell>(next());
        CHECK(tree->list(0).remove(row.data()) == ref->list(0).remove(row.data()));
      }
    }
    for (Store* st : {tree.get(), ref.get()}) st->commit();
    CHECK(btree_store_check(*tree) == "");
    CHECK(tree->list(0).count() == ref->list(0).count());
    for (int i = 0; i < 2000; ++i) {
      for (uint32_t c = 0; c < width; ++c) row[c] = static_cast<Cell>(next() * (c + 1 == width && i % 2 ? 1000003 : 1));
      const Cell* a = tree->list(0).find(row.data());
      const Cell* b = ref->list(0).find(row.data());
      REQUIRE((a == nullptr) == (b == nullptr));
      if (a) CHECK(a[width] == b[width]);
      uint32_t n = 1 + static_cast<uint32_t>(i) % width;
      auto ca = tree->list(0).prefix(row.data(), n);
      auto cb = ref->list(0).prefix(row.data(), n);
      for (; ca->valid() && cb->valid(); ca->next(), cb->next()) CHECK(ca->row()[width] == cb->row()[width]);
      CHECK(ca->valid() == cb->valid());
    }
  }
}
