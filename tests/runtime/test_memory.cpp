// tests/runtime/test_memory.cpp — the memory meter (runtime/memory.h): texts, event lists and the
// store charge what they allocate and credit what they free, growth past the budget throws
// MemoryBudgetSpent and leaves the list as it was, store writes are counted but never refused,
// and each thread counts against its own meter.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "runtime/event_list.h"
#include "runtime/memory.h"
#include "runtime/store.h"

using namespace pure::rt;

namespace {

ListShape shape(bool sequence, std::vector<ColType> cols, uint32_t keys) {
  ListShape s;
  s.sequence = sequence;
  s.key_count = keys;
  s.cols = std::move(cols);
  s.defaults.assign(s.cols.size() - keys, 0);
  s.finish();
  return s;
}

}  // namespace

TEST_CASE("texts are charged when made and credited when freed; no meter, no counting") {
  Text* before = text_new("made before any meter");
  MemoryMeter meter(1 << 20);
  {
    MeterScope scope(meter);
    Text* t = text_new("hello");
    CHECK(meter.used() == static_cast<int64_t>(charged_size(sizeof(Text) + 5)));
    Text* big = text_alloc(1000, 4000);
    CHECK(meter.used() == static_cast<int64_t>(charged_size(sizeof(Text) + 5) + charged_size(sizeof(Text) + 4000)));
    text_release(big);
    text_release(t);
    CHECK(meter.used() == 0);
    CHECK_THROWS_AS(text_alloc(0, 2 << 20), MemoryBudgetSpent);
    CHECK(meter.used() == 0);  // a refused text charges nothing
    Text* stored = text_store_copy(t = text_new("x"));  // store texts are counted, never refused
    text_release(t);
    text_store_release(stored);
    CHECK(meter.used() == 0);
  }
  CHECK(current_meter() == nullptr);
  text_release(before);  // freed with no meter installed: nothing to credit
  CHECK(meter.used() == 0);
}

TEST_CASE("event lists charge their growth first and refuse it whole") {
  ListShape seq = shape(true, {ColType::Int, ColType::Text}, 0);
  ListShape keyed = shape(false, {ColType::Int, ColType::Int}, 1);
  ListShape texts = shape(false, {ColType::Text, ColType::Int}, 1);
  MemoryMeter meter(64 << 10);
  MeterScope scope(meter);
  {
    EventList l(&seq);
    Text* t = text_new("row");
    Cell row[2] = {0, reinterpret_cast<Cell>(t)};
    int64_t pushed = 0;
    try {
      for (;; ++pushed) {
        row[0] = static_cast<Cell>(pushed);
        l.push(row);
      }
    } catch (const MemoryBudgetSpent&) {
    }
    CHECK(pushed > 1000);  // 64 KiB of 16-byte rows, doubling
    CHECK(l.count() == pushed);
    CHECK(l.at(pushed - 1)[0] == static_cast<Cell>(pushed - 1));
    CHECK(t->rc == static_cast<uint32_t>(pushed + 1));  // the refused row was not retained
    CHECK(meter.used() <= 64 << 10);
    CHECK(static_cast<int64_t>(l.charged_bytes()) + static_cast<int64_t>(charged_size(sizeof(Text) + 3)) == meter.used());
    text_release(t);
  }
  CHECK(meter.used() == 0);
  {
    EventList l(&keyed);  // dense, then sparse keys move it to a tree
    Cell key = 0, field = 7;
    int64_t n = 0;
    try {
      for (;; ++n) {
        key = static_cast<Cell>(n < 100 ? n : n * 1000);
        l.put(&key, &field);
      }
    } catch (const MemoryBudgetSpent&) {
    }
    CHECK(n > 100);
    CHECK(l.count() == n);
    CHECK(static_cast<int64_t>(l.charged_bytes()) == meter.used());
    key = 5;
    CHECK(l.remove(&key));
    CHECK(static_cast<int64_t>(l.charged_bytes()) == meter.used());
    l.clear();
    CHECK(l.charged_bytes() == 0);
  }
  CHECK(meter.used() == 0);
  {
    EventList l(&texts);
    Text* k = text_new("k");
    Cell key = reinterpret_cast<Cell>(k), field = 1;
    l.put(&key, &field);
    int64_t with_one = meter.used();
    l.put(&key, &field);  // replacing charges nothing more
    CHECK(meter.used() == with_one);
    text_release(k);
  }
  CHECK(meter.used() == 0);
  CHECK(meter.peak() <= 64 << 10);
}

TEST_CASE("a keyed list's hash index is charged with its tree, and given back") {
  ListShape texts = shape(false, {ColType::Text, ColType::Int}, 1);
  MemoryMeter meter(64 << 20);
  MeterScope scope(meter);
  std::vector<Text*> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(text_new("key" + std::to_string(i)));
  int64_t texts_used = meter.used();
  {
    EventList l(&texts);
    Cell field = 1;
    Cell key = reinterpret_cast<Cell>(keys[0]);
    l.put(&key, &field);
    REQUIRE(l.indexed());
    uint64_t entry = l.charged_bytes() - KeyIndex::bytes_for(1);  // one tree entry
    for (size_t i = 1; i < keys.size(); ++i) {
      key = reinterpret_cast<Cell>(keys[i]);
      l.ensure(&key);
    }
    REQUIRE(l.indexed());
    CHECK(KeyIndex::bytes_for(1000) == 2048 * 32);  // at most half full
    CHECK(l.charged_bytes() == 1000 * entry + KeyIndex::bytes_for(1000));
    CHECK(static_cast<int64_t>(l.charged_bytes()) + texts_used == meter.used());
    key = reinterpret_cast<Cell>(keys[7]);
    CHECK(l.remove(&key));
    CHECK(l.charged_bytes() == 999 * entry + KeyIndex::bytes_for(1000));  // the table keeps its size
    l.clear();
    CHECK(l.charged_bytes() == 0);
    CHECK(meter.used() == texts_used);
  }
  {
    // under a small budget the list (index included) stays within it: the insert that does not
    // fit is refused whole, and the list still finds every row it has
    MemoryMeter small(40 * 1024);
    MeterScope inner(small);
    EventList l(&texts);
    Cell field = 1;
    size_t n = 0;
    try {
      for (; n < keys.size(); ++n) {
        Cell key = reinterpret_cast<Cell>(keys[n]);
        l.put(&key, &field);
      }
    } catch (const MemoryBudgetSpent&) {
    }
    CHECK(n < keys.size());
    CHECK(l.count() == static_cast<int64_t>(n));
    CHECK(static_cast<int64_t>(l.charged_bytes()) == small.used());
    CHECK(small.peak() <= small.limit());
    for (size_t i = 0; i < n; ++i) {
      Cell key = reinterpret_cast<Cell>(keys[i]);
      CHECK(l.find(&key) != nullptr);
    }
  }
  for (Text* t : keys) text_release(t);
}

TEST_CASE("the store's nodes, texts and undo log are counted and given back by rollback") {
  ListSchema log{"log", true, {}, {ColType::Int, ColType::Text}};
  MemoryMeter meter(uint64_t{1} << 40);
  MeterScope scope(meter);
  std::unique_ptr<Store> store = make_store({log});
  store->begin();
  Text* t = text_new("a line of the log");
  int64_t text_only = meter.used();
  for (int64_t i = 0; i < 100000; ++i) {
    Cell row[2] = {static_cast<Cell>(i), reinterpret_cast<Cell>(t)};
    store->list(0).append(row);
  }
  int64_t grown = meter.used() - text_only;
  CHECK(grown >= 100000 * 16);  // rows in nodes, plus one undo entry each
  store->rollback();
  CHECK(meter.used() - text_only < grown / 10);  // nodes and the large undo log came back
  text_release(t);
  store.reset();
  CHECK(meter.used() <= 0);
}

TEST_CASE("each thread counts against the meter it installed") {
  ListShape seq = shape(true, {ColType::Int}, 0);
  MemoryMeter a(1 << 20), b(1 << 20);
  auto work = [&](MemoryMeter& m, int rows) {
    MeterScope scope(m);
    EventList l(&seq);
    for (int i = 0; i < rows; ++i) {
      Cell c = static_cast<Cell>(i);
      l.push(&c);
    }
    Text* t = text_new("x");
    CHECK(m.used() == static_cast<int64_t>(l.charged_bytes() + charged_size(sizeof(Text) + 1)));
    text_release(t);
  };
  std::thread one(work, std::ref(a), 1000), two(work, std::ref(b), 20000);
  one.join();
  two.join();
  CHECK(a.used() == 0);
  CHECK(b.used() == 0);
  CHECK(a.peak() < b.peak());
  CHECK(current_meter() == nullptr);
}

TEST_CASE("MeterNoThrow counts past the limit instead of throwing") {
  MemoryMeter meter(100);
  MeterScope scope(meter);
  Text* t;
  {
    MeterNoThrow counted_only;
    t = text_new(std::string(200, 'x'));
  }
  CHECK(meter.over());
  CHECK(memory_over());
  CHECK_THROWS_AS(text_new("y"), MemoryBudgetSpent);
  text_release(t);
  CHECK_FALSE(memory_over());
}

TEST_CASE("a TextBatch's pieces share blocks, are charged by the block and given back with the last piece") {
  MemoryMeter meter(1 << 24);
  MeterScope scope(meter);
  int64_t live = text_live_count();
  std::vector<std::string> words;
  uint64_t bytes = 0;
  for (int i = 0; i < 5000; ++i) {
    words.push_back(std::string(static_cast<size_t>(i % 13), static_cast<char>('a' + i % 26)) + std::to_string(i));
    bytes += TextBatch::piece_bytes(words.back().size());
  }
  words.push_back(std::string(3000, 'z'));  // longer than a piece may be: a text of its own
  bytes += TextBatch::piece_bytes(words.back().size());
  CHECK(TextBatch::piece_bytes(3000) == 0);
  std::vector<Text*> pieces;
  {
    TextBatch batch(bytes);
    for (const std::string& w : words) pieces.push_back(batch.make(w, kTextAscii));
  }
  CHECK(text_live_count() == live + static_cast<int64_t>(words.size()));
  for (size_t i = 0; i < words.size(); ++i) {
    CHECK(pieces[i]->view() == words[i]);
    CHECK(pieces[i]->rc == 1);
    CHECK((pieces[i]->flags & kTextAscii) != 0);
    CHECK(((pieces[i]->flags & kTextPiece) != 0) == (i + 1 < words.size()));
  }
  // the blocks hold the pieces with at most a block's worth to spare (the last block is cut to fit)
  int64_t charged = meter.used();
  CHECK(charged >= static_cast<int64_t>(bytes));
  CHECK(charged <= static_cast<int64_t>(bytes + charged_size(sizeof(Text) + 3000) + TextBatch::kPieceBlockBytes));
  // a piece kept alive keeps its block; the others go as their counts reach zero
  text_retain(pieces[17]);
  for (Text* t : pieces) text_release(t);
  CHECK(text_live_count() == live + 1);
  CHECK(meter.used() > 0);
  CHECK(meter.used() <= static_cast<int64_t>(charged_size(TextBatch::kPieceBlockBytes)));
  CHECK(pieces[17]->view() == words[17]);
  text_release(pieces[17]);
  CHECK(text_live_count() == live);
  CHECK(meter.used() == 0);
}

TEST_CASE("a keyed list keeps its own copy of a key that is a piece, not the piece's block") {
  MemoryMeter meter(1 << 24);
  MeterScope scope(meter);
  ListShape s = shape(false, {ColType::Text, ColType::Int}, 1);
  int64_t live = text_live_count();
  {
    EventList counts(&s);
    std::vector<Text*> pieces;
    {
      TextBatch batch(TextBatch::piece_bytes(5) * 300);
      for (int i = 0; i < 300; ++i) pieces.push_back(batch.make("w" + std::to_string(1000 + i % 7), 0));
    }
    for (Text* t : pieces) {
      Cell key = reinterpret_cast<Cell>(t);
      Cell* row = counts.ensure(&key);
      row[1] += 1;
    }
    CHECK(counts.count() == 7);
    int64_t with_pieces = meter.used();
    for (Text* t : pieces) text_release(t);
    // the pieces' blocks are gone: only the list and its 7 keys of its own are left
    CHECK(text_live_count() == live + 7);
    CHECK(meter.used() < with_pieces);
    EventList::Walk w;
    int64_t total = 0;
    for (const Cell* row = counts.walk_next(w, nullptr, 0, false, 0, 0); row; row = counts.walk_next(w, nullptr, 0, false, 0, 0)) {
      const Text* k = reinterpret_cast<const Text*>(row[0]);
      CHECK((k->flags & kTextPiece) == 0);
      CHECK(k->view().substr(0, 4) == "w100");
      total += static_cast<int64_t>(row[1]);
    }
    CHECK(total == 300);
    Text* probe = text_new("w1003");
    Cell key = reinterpret_cast<Cell>(probe);
    REQUIRE(counts.find(&key) != nullptr);
    CHECK(counts.find(&key)[1] == 43);
    text_release(probe);
  }
  CHECK(text_live_count() == live);
  CHECK(meter.used() == 0);
}
