// tests/runtime/test_store_flat.cpp — flat forms of snapshot lists (runtime/store_flat.h): when
// they are built and when not, that they give exactly the tree's rows for every key (dense,
// negative and sparse keys, missing keys, the extremes), that a held snapshot keeps its flat
// form while the live list changes, the budget, and readers building one on several threads.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <thread>

#include "runtime/store_btree_store.h"
#include "runtime/store_flat.h"
#include "store_test_support.h"

using namespace pure::rt;
using namespace store_test;

namespace {

std::vector<ListSchema> edge_schemas() {
  return {
      {"edges", false, {ColType::Int, ColType::Int}, {ColType::Int}},
      {"names", false, {ColType::Int}, {ColType::Text}},  // texts: never flat
      {"log", true, {}, {ColType::Int}},                 // a sequence: never flat
  };
}

// The policy for one test, put back after it.
struct PolicyScope {
  store::FlatPolicy before = store::flat_policy();
  explicit PolicyScope(uint64_t min_seeks, uint64_t budget = 256ull << 20) {
    store::set_flat_policy(store::FlatPolicy{budget, min_seeks, 1u << 30});
  }
  ~PolicyScope() { store::set_flat_policy(before); }
};

std::string rows_text(const ListSchema& s, const Cell* first, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) append_row(out, s, first + i * s.row_width());
  return out;
}
std::string prefix_text(const ListReader& l, Cell key) {
  std::string out;
  for (auto c = l.prefix(&key, 1); c->valid(); c->next()) append_row(out, l.schema(), c->row());
  return out;
}

// Asks prefix_rows until it answers (at most `tries` times); false if it never did.
bool until_flat(const ListReader& l, Cell key, int tries) {
  const Cell* first;
  size_t n;
  for (int i = 0; i < tries; ++i)
    if (l.prefix_rows(key, &first, &n)) return true;
  return false;
}

// Every key from below the smallest to above the largest, and the extremes, agree with the tree.
void check_all_keys(const ListReader& l, int64_t lo, int64_t hi) {
  std::vector<int64_t> keys = {INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, 0, -1, 1};
  for (int64_t k = lo; k <= hi; ++k) keys.push_back(k);
  for (int64_t k : keys) {
    CAPTURE(k);
    const Cell* first = nullptr;
    size_t n = 77;
    REQUIRE(l.prefix_rows(static_cast<Cell>(k), &first, &n));
    REQUIRE(rows_text(l.schema(), first, n) == prefix_text(l, static_cast<Cell>(k)));
  }
}

void fill(Store& store, const std::vector<int64_t>& sources, std::mt19937_64& rng, int per) {
  store.begin();
  for (int64_t src : sources)
    for (int j = 0; j < per; ++j) {
      Cell row[3] = {static_cast<Cell>(src), static_cast<Cell>(int64_t(j) * 3 - 10), rng()};
      store.list(0).put(row);
    }
  store.commit();
}

}  // namespace

TEST_CASE("flat: dense and negative keys give the tree's rows, built after min_seeks asks") {
  PolicyScope policy(50);
  auto store = make_btree_store(edge_schemas(), 160);  // small nodes: a deep tree
  std::mt19937_64 rng(11);
  std::vector<int64_t> sources;
  for (int64_t k = -40; k < 60; ++k)
    if (k % 7 != 3) sources.push_back(k);  // holes: keys with no rows inside the span
  fill(*store, sources, rng, 5);
  auto snap = store->publish();
  const ListReader& l = snap->list(0);
  const Cell* first;
  size_t n;
  uint64_t builds = store::flat_builds();
  for (int i = 0; i < 49; ++i) REQUIRE_FALSE(l.prefix_rows(static_cast<Cell>(int64_t(i % 10)), &first, &n));
  CHECK(store::flat_builds() == builds);
  CHECK(store->memory().flat_bytes == 0);
  REQUIRE(l.prefix_rows(Cell(5), &first, &n));  // the 50th builds it
  CHECK(store::flat_builds() == builds + 1);
  CHECK(store->memory().flat_bytes > uint64_t(l.count()) * 3 * 8);
  CHECK(store->memory().flat_bytes == store::flat_bytes_in_use());
  check_all_keys(l, -45, 65);
  // lists with texts and sequences never have one
  for (int i = 0; i < 100; ++i) {
    CHECK_FALSE(snap->list(1).prefix_rows(Cell(1), &first, &n));
    CHECK_FALSE(snap->list(2).prefix_rows(Cell(0), &first, &n));
  }
  snap.reset();  // the store still holds it (its newest) until the next write
  CHECK(store->memory().flat_bytes == store::flat_bytes_in_use());
  store->begin();
  store->commit();
  CHECK(store::flat_bytes_in_use() == 0);
  CHECK(store->memory().flat_bytes == 0);
}

TEST_CASE("flat: sparse keys (a span far wider than the rows) are searched, and give the tree's rows") {
  PolicyScope policy(1);
  auto store = make_btree_store(edge_schemas(), 1024);
  std::mt19937_64 rng(12);
  std::vector<int64_t> sources = {INT64_MIN, -5000000000000, -77, 0, 3, 1000000, 999999999999, INT64_MAX};
  fill(*store, sources, rng, 3);
  auto snap = store->publish();
  const ListReader& l = snap->list(0);
  REQUIRE(until_flat(l, Cell(3), 1));
  check_all_keys(l, -80, 10);
  for (int64_t k : sources) {
    const Cell* first;
    size_t n;
    REQUIRE(l.prefix_rows(static_cast<Cell>(k), &first, &n));
    CHECK(n == 3);
    REQUIRE(rows_text(l.schema(), first, n) == prefix_text(l, static_cast<Cell>(k)));
    Cell after = static_cast<Cell>(k) + 1;  // no source is another's successor, but INT64_MAX's wraps to INT64_MIN
    REQUIRE(l.prefix_rows(after, &first, &n));
    CHECK(n == (after == static_cast<Cell>(INT64_MIN) ? 3u : 0u));
  }
}

TEST_CASE("flat: an empty list, and a list of one key") {
  PolicyScope policy(1);
  auto store = make_btree_store(edge_schemas(), 1024);
  auto empty = store->publish();
  const Cell* first;
  size_t n = 5;
  REQUIRE(empty->list(0).prefix_rows(Cell(0), &first, &n));
  CHECK(n == 0);
  empty.reset();
  std::mt19937_64 rng(13);
  fill(*store, {-9}, rng, 40);
  auto snap = store->publish();
  REQUIRE(snap->list(0).prefix_rows(Cell(-9), &first, &n));
  CHECK(n == 40);
  check_all_keys(snap->list(0), -12, -6);
}

TEST_CASE("flat: a held snapshot keeps its flat form while the live list changes; the next one starts without") {
  PolicyScope policy(20);
  auto store = make_btree_store(edge_schemas(), 160);
  std::mt19937_64 rng(14);
  std::vector<int64_t> sources;
  for (int64_t k = 0; k < 50; ++k) sources.push_back(k);
  fill(*store, sources, rng, 4);
  auto old = store->publish();
  std::string before = dump(old->list(0));
  REQUIRE(until_flat(old->list(0), Cell(1), 20));
  // writes: inserts, removals and field sets over the keys the flat form indexes
  for (int round = 0; round < 30; ++round) {
    store->begin();
    Cell row[3] = {rng() % 60, rng() % 10, rng()};
    store->list(0).put(row);
    Cell key[2] = {rng() % 50, 0};
    auto c = store->list(0).prefix(key, 1);
    if (c->valid()) {
      Cell k2[2] = {c->row()[0], c->row()[1]};
      c.reset();
      if (round % 2) store->list(0).remove(k2);
      else store->list(0).set_field(k2, 0, 12345);
    }
    store->commit();
    auto now = store->publish();  // a new snapshot each time: counting from zero again
    const Cell* first;
    size_t n;
    REQUIRE_FALSE(now->list(0).prefix_rows(Cell(2), &first, &n));
  }
  REQUIRE(dump(old->list(0)) == before);
  check_all_keys(old->list(0), -2, 62);
  // the newest snapshot builds its own, from the rows as they are now
  auto now = store->publish();
  REQUIRE(until_flat(now->list(0), Cell(2), 20));
  check_all_keys(now->list(0), -2, 62);
}

TEST_CASE("flat: a list written between every few seeks never builds one") {
  PolicyScope policy(64);
  auto store = make_btree_store(edge_schemas(), 1024);
  std::mt19937_64 rng(15);
  uint64_t builds = store::flat_builds();
  for (int round = 0; round < 300; ++round) {
    fill(*store, {int64_t(rng() % 100)}, rng, 1);
    auto snap = store->publish();
    const Cell* first;
    size_t n;
    for (int i = 0; i < 10; ++i) REQUIRE_FALSE(snap->list(0).prefix_rows(Cell(i), &first, &n));
  }
  CHECK(store::flat_builds() == builds);
  CHECK(store->memory().flat_bytes == 0);
}

TEST_CASE("flat: the budget bounds the bytes of every flat form held at once") {
  std::mt19937_64 rng(16);
  auto store = make_btree_store(edge_schemas(), 1024);
  std::vector<int64_t> sources;
  for (int64_t k = 0; k < 200; ++k) sources.push_back(k);
  fill(*store, sources, rng, 5);  // 1000 rows of 3 cells: 24,000 bytes and the index
  {
    PolicyScope policy(1, 20000);  // too small
    auto snap = store->publish();
    for (int i = 0; i < 10; ++i) REQUIRE_FALSE(until_flat(snap->list(0), Cell(i), 1));
    CHECK(store::flat_bytes_in_use() == 0);
  }
  fill(*store, {0}, rng, 5);  // (replaces rows: the next publish is a new snapshot, the same rows)
  {
    PolicyScope policy(1, 40000);  // room for one, not two
    auto a = store->publish();
    REQUIRE(until_flat(a->list(0), Cell(1), 1));
    uint64_t one = store::flat_bytes_in_use();
    CHECK(one > 24000);
    CHECK(one <= 40000);
    fill(*store, {500}, rng, 1);
    auto b = store->publish();
    REQUIRE_FALSE(until_flat(b->list(0), Cell(1), 5));
    CHECK(store::flat_bytes_in_use() == one);
    a.reset();  // (b is the store's newest now, not a)
    CHECK(store::flat_bytes_in_use() == 0);
    // b gave up for good; a third snapshot has room now
    fill(*store, {501}, rng, 1);
    auto c = store->publish();
    REQUIRE(until_flat(c->list(0), Cell(1), 1));
    check_all_keys(c->list(0), -1, 502);
  }
  fill(*store, {0}, rng, 1);  // the store lets go of its newest snapshot
  CHECK(store::flat_bytes_in_use() == 0);
}

TEST_CASE("flat: readers on several threads seek one snapshot while one of them builds its flat form") {
  PolicyScope policy(300);
  auto store = make_btree_store(edge_schemas(), 160);
  std::mt19937_64 rng(17);
  std::vector<int64_t> sources;
  for (int64_t k = -100; k < 400; ++k) sources.push_back(k * 2);
  fill(*store, sources, rng, 3);
  auto snap = store->publish();
  // what every key gives, from the tree
  std::vector<std::string> want;
  for (int64_t k = -210; k < 810; ++k) want.push_back(prefix_text(snap->list(0), static_cast<Cell>(k)));
  std::vector<std::thread> readers;
  std::vector<int> bad(4, 0), flat(4, 0);
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      const ListReader& l = snap->list(0);
      for (int i = 0; i < 3000; ++i) {
        int64_t k = -210 + (i * 37 + t * 11) % 1020;
        const Cell* first;
        size_t n;
        std::string got;
        if (l.prefix_rows(static_cast<Cell>(k), &first, &n)) {
          ++flat[t];
          got = rows_text(l.schema(), first, n);
        } else {
          got = prefix_text(l, static_cast<Cell>(k));
        }
        if (got != want[size_t(k + 210)]) ++bad[t];
      }
    });
  for (auto& r : readers) r.join();
  for (int t = 0; t < 4; ++t) {
    CHECK(bad[t] == 0);
    CHECK(flat[t] > 0);
  }
}
