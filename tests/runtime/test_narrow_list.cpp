// tests/runtime/test_narrow_list.cpp — narrow sequences (runtime/event_list.h: a sequence of one
// bool column keeps one byte per row) against a std::vector<bool> model: random pushes, repeated
// pushes (repeat()), sets, gets, pops, sorts, reverses, clears, row copies and slices forwards and
// backwards, every row compared after each step. Also: the list is narrow exactly when its shape
// is one bool column, never plain; it charges one byte per row of capacity to the memory meter
// and refuses growth past the budget whole. Seed: PURE_NARROW_LIST_SEED.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

// EventList::push is inline and counts a text row's reference; with the cell a constant 0 or 1 here
// (a bool), GCC warns that the text path it cannot rule out would read outside a Text, although a
// list of bools never takes it.
#pragma GCC diagnostic ignored "-Warray-bounds"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "runtime/event_list.h"
#include "runtime/memory.h"

using namespace pure::rt;

namespace {

uint64_t seed_from_env() {
  const char* s = std::getenv("PURE_NARROW_LIST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261201;
}

ListShape seq_shape(std::vector<ColType> cols) {
  ListShape s;
  s.sequence = true;
  s.cols = std::move(cols);
  s.defaults.assign(s.cols.size(), 0);
  s.finish();
  return s;
}

// Every row of l equals the model, by each way of reading a row.
void check_rows(const EventList& l, const std::vector<bool>& model) {
  REQUIRE(l.count() == static_cast<int64_t>(model.size()));
  for (size_t i = 0; i < model.size(); ++i) {
    Cell want = model[i] ? 1 : 0;
    Cell got = l.get(static_cast<int64_t>(i), 0);
    if (got != want) {
      FAIL_CHECK("row " << i << ": get " << got << ", model " << want);
      return;
    }
    Cell scratch = 7, copy = 7;
    l.read_row(static_cast<int64_t>(i), &copy);
    CHECK(*l.row(static_cast<int64_t>(i), &scratch) == want);
    CHECK(scratch == want);
    CHECK(copy == want);
  }
}

// The rows of a slice by position [lo, hi), forwards or backwards, through slice_next.
std::vector<Cell> slice_rows(const EventList& l, int64_t lo, int64_t hi, bool reverse) {
  Slice s;
  s.bounded = true;
  s.lo = lo;
  s.hi = hi;
  s.reverse = reverse;
  EventList::Walk w;
  std::vector<Cell> out;
  while (const Cell* row = l.slice_next(w, s)) out.push_back(*row);
  return out;
}

}  // namespace

TEST_CASE("narrow lists: exactly the sequences of one bool column, never plain") {
  ListShape bools = seq_shape({ColType::Bool});
  ListShape ints = seq_shape({ColType::Int});
  ListShape two = seq_shape({ColType::Bool, ColType::Bool});
  ListShape keyed = bools;
  keyed.sequence = false;
  keyed.key_count = 1;
  keyed.defaults.clear();
  CHECK(bools.narrow());
  CHECK_FALSE(ints.narrow());
  CHECK_FALSE(two.narrow());
  CHECK_FALSE(keyed.narrow());
  EventList b(&bools), i(&ints);
  CHECK(b.narrow());
  CHECK_FALSE(i.narrow());
  EventList::NativeLayout n = EventList::native_layout();
  REQUIRE(n.ok);
  auto byte_at = [](const EventList& l, uint32_t offset) { return reinterpret_cast<const uint8_t*>(&l)[offset]; };
  CHECK(byte_at(b, n.plain) == 0);  // native code never reads a narrow list as cells
  CHECK(byte_at(b, n.narrow) == 1);
  CHECK(byte_at(i, n.plain) == 1);
  CHECK(byte_at(i, n.narrow) == 0);
  Cell t = 1;
  b.push_copies(&t, 10);
  const uint8_t* bytes;
  std::memcpy(&bytes, reinterpret_cast<const char*>(&b) + n.bytes, sizeof(bytes));
  for (int k = 0; k < 10; ++k) CHECK(bytes[k] == 1);  // where native code finds the rows
}

TEST_CASE("narrow lists: random operations against a std::vector<bool> model") {
  ListShape bools = seq_shape({ColType::Bool});
  uint64_t seed = seed_from_env();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t n) { return n ? rng() % n : 0; };
  MemoryMeter meter(uint64_t{1} << 30);
  MeterScope scope(meter);
  for (int round = 0; round < 20; ++round) {
    EventList l(&bools);
    std::vector<bool> model;
    uint64_t versions = l.shape_version();
    size_t peak = 0;  // most rows held so far: capacity doubles, so it stays within twice this
    for (int op = 0; op < 400; ++op) {
      CAPTURE(round);
      CAPTURE(op);
      uint64_t what = pick(100);
      if (what < 30) {  // push
        Cell c = pick(2);
        l.push(&c);
        model.push_back(c != 0);
        CHECK(l.shape_version() == ++versions);
      } else if (what < 36) {  // repeat(): n copies at once
        Cell c = pick(2);
        int64_t n = static_cast<int64_t>(pick(pick(10) == 0 ? 5000 : 40));
        l.reserve(l.count() + n);
        l.push_copies(&c, n);
        model.insert(model.end(), static_cast<size_t>(n), c != 0);
        versions += static_cast<uint64_t>(n);
        CHECK(l.shape_version() == versions);
      } else if (what < 60) {  // set, by both writers
        if (model.empty()) continue;
        int64_t pos = static_cast<int64_t>(pick(model.size()));
        Cell c = pick(2);
        if (pick(2)) l.set(pos, 0, c);
        else l.set_value(pos, 0, c);
        model[static_cast<size_t>(pos)] = c != 0;
      } else if (what < 72) {  // pop
        if (model.empty()) continue;
        Cell out = 7;
        l.pop(&out);
        CHECK(out == (model.back() ? 1u : 0u));
        model.pop_back();
        CHECK(l.shape_version() == ++versions);
      } else if (what < 77) {  // sort: falses first (false < true)
        l.sort_by({SortKey{0, false}});
        std::stable_sort(model.begin(), model.end(), [](bool a, bool b) { return a < b; });
      } else if (what < 82) {
        l.reverse();
        std::reverse(model.begin(), model.end());
      } else if (what < 84) {
        l.clear();
        if (!model.empty()) ++versions;
        model.clear();
        CHECK(l.shape_version() == versions);
      } else if (what < 92) {  // a slice by position, either way
        int64_t n = static_cast<int64_t>(model.size());
        int64_t lo = static_cast<int64_t>(pick(n + 3)) - 1, hi = static_cast<int64_t>(pick(n + 3)) - 1;
        bool reverse = pick(2);
        std::vector<Cell> want;
        for (int64_t i = std::max<int64_t>(lo, 0); i < std::min(hi, n); ++i) want.push_back(model[i] ? 1 : 0);
        if (reverse) std::reverse(want.begin(), want.end());
        CHECK(slice_rows(l, lo, hi, reverse) == want);
      } else {  // a copy made row by row, as an event's list argument is
        EventList copy(&bools);
        copy.reserve(l.count());
        Cell row;
        for (int64_t i = 0; i < l.count(); ++i) {
          l.read_row(i, &row);
          copy.push(&row);
        }
        check_rows(copy, model);
      }
      check_rows(l, model);
      // one byte per row of capacity, charged to the meter
      peak = std::max(peak, model.size());
      CHECK(l.charged_bytes() >= model.size());
      CHECK(l.charged_bytes() <= std::max<uint64_t>(4, 2 * peak));
      CHECK(meter.used() == static_cast<int64_t>(l.charged_bytes()));
    }
  }
  CHECK(meter.used() == 0);
}

TEST_CASE("narrow lists: growth past the memory budget is refused whole") {
  ListShape bools = seq_shape({ColType::Bool});
  MemoryMeter meter(64 << 10);
  MeterScope scope(meter);
  EventList l(&bools);
  Cell t = 1;
  int64_t pushed = 0;
  try {
    for (;; ++pushed) l.push(&t);
  } catch (const MemoryBudgetSpent&) {
  }
  CHECK(pushed > 32000);  // 64 KiB of one-byte rows, doubling (8-byte cells would stop near 8000)
  CHECK(l.count() == pushed);
  CHECK(l.get(pushed - 1, 0) == 1);
  CHECK(meter.used() == static_cast<int64_t>(l.charged_bytes()));
  CHECK_THROWS_AS(l.reserve(int64_t{1} << 20), MemoryBudgetSpent);
  CHECK(l.count() == pushed);
  CHECK(meter.used() == static_cast<int64_t>(l.charged_bytes()));
}
