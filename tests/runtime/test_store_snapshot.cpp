// tests/runtime/test_store_snapshot.cpp — snapshots of the B+tree store: one snapshot held across
// 40,000 events and publishes, retired nodes coming back and being reused, snapshots outliving
// the store, rollback with texts, no leaked texts. Seed: PURE_STORE_SEED.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "runtime/store_btree_store.h"
#include "store_test_support.h"

using namespace pure::rt;
using namespace store_test;

namespace {

Cell cell_of(Text* t) { return reinterpret_cast<Cell>(t); }

// Random writes over the mixed schemas, with texts; used by several tests.
class Writer {
 public:
  explicit Writer(uint64_t seed) : rng_(seed) {}
  void write(Store& store) {
    uint64_t op = pick(8);
    if (op < 3) {
      Cell row[4] = {Cell(pick(60)), Cell(pick(50)), Cell(pick(1000000)), Cell(pick(1000000))};
      store.list(0).put(row);
    } else if (op == 3) {
      Cell key[2] = {Cell(pick(60)), Cell(pick(50))};
      store.list(0).remove(key);
    } else if (op == 4) {
      Text* name = text_new("name-" + std::to_string(pick(300)));
      Text* note = text_new(std::string(pick(40), 'a' + char(pick(26))));
      Cell row[4] = {cell_of(name), pick(2), cell_of(note), Cell(pick(100))};
      store.list(1).put(row);
      text_release(name);
      text_release(note);
    } else if (op == 5) {
      Text* name = text_new("name-" + std::to_string(pick(300)));
      Cell key[2] = {cell_of(name), pick(2)};
      if (pick(2)) store.list(1).remove(key);
      else {
        Text* note = text_new("changed " + std::to_string(pick(1000)));
        store.list(1).set_field(key, 0, cell_of(note));
        text_release(note);
      }
      text_release(name);
    } else if (op == 6) {
      Text* line = text_new("line " + std::to_string(pick(100000)));
      Cell row[2] = {Cell(pick(1000)), cell_of(line)};
      if (pick(3) || store.list(2).count() < 100) store.list(2).append(row);
      else store.list(2).pop();
      text_release(line);
    } else {
      Cell key = Cell(pick(3000));
      Cell row[2] = {key, Cell(pick(1000))};
      if (pick(3)) store.list(3).put(row);
      else store.list(3).set_field(&key, 0, Cell(pick(7)));
    }
  }
  uint64_t pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }

 private:
  std::mt19937_64 rng_;
};

StoreStats stats_of(const Store& store) {
  StoreStats s;
  REQUIRE(btree_store_stats(store, s));
  return s;
}

}  // namespace

TEST_CASE("one snapshot held across 40,000 events and publishes reads byte-identical content") {
  uint64_t seed = seed_from_env(40000);
  INFO("seed " << seed << " (replay with PURE_STORE_SEED=" << seed << ")");
  int64_t texts = text_live_count();
  {
    auto store = make_btree_store(mixed_schemas());
    Writer writer(seed);
    store->begin();
    for (int i = 0; i < 6000; ++i) writer.write(*store);
    store->commit();
    auto held = store->publish();
    std::string content = dump(*held);
    uint64_t bytes_at_publish = stats_of(*store).nodes.node_bytes;
    std::shared_ptr<const Snapshot> latest;
    for (int event = 0; event < 40000; ++event) {
      store->begin();
      for (int i = 0; i < 3; ++i) writer.write(*store);
      if (writer.pick(10) == 0) store->rollback();
      else store->commit();
      latest = store->publish();  // the previous latest is released here
    }
    CHECK(dump(*held) == content);
    CHECK(dump(*latest) == dump(*store));
    StoreStats s = stats_of(*store);
    MESSAGE("node bytes at publish " << bytes_at_publish << ", now " << s.nodes.node_bytes << "; copied "
                                      << s.nodes.copied << ", reused " << s.nodes.reused << ", allocated "
                                      << s.nodes.allocated << ", freed " << s.nodes.freed);
    // The held snapshot pins at most its own nodes; the copies of every later publish were made
    // in nodes that earlier snapshots gave back, so hardly any node came from malloc.
    CHECK(s.nodes.allocated < s.nodes.copied / 100);
    CHECK(s.nodes.reused > s.nodes.copied * 9 / 10);
  }
  CHECK(text_live_count() == texts);
}

TEST_CASE("retired nodes come back when the oldest snapshot is released, and are reused") {
  ListSchema counts{"counts", false, {ColType::Int}, {ColType::Int}};
  auto store = make_btree_store({counts}, 256);
  ListWriter& list = store->list(0);
  store->begin();
  for (int64_t k = 0; k < 1000; ++k) {
    Cell row[2] = {Cell(k), Cell(k)};
    list.put(row);
  }
  store->commit();
  auto first = store->publish();
  auto touch_every_row = [&](int64_t add) {
    store->begin();
    for (int64_t k = 0; k < 1000; ++k) {
      Cell key = Cell(k);
      list.set_field(&key, 0, Cell(k + add));
    }
    store->commit();
  };
  uint64_t copied_before = stats_of(*store).nodes.copied;
  touch_every_row(1);
  uint64_t copies = stats_of(*store).nodes.copied - copied_before;
  CHECK(copies > 60);  // every leaf and inner node was shared, so each was copied once
  auto second = store->publish();  // the replaced nodes hang on `first`, the newest that can read them
  CHECK(stats_of(*store).returned_total == 0);
  first.reset();  // the oldest goes: nobody else can read its retired nodes
  CHECK(stats_of(*store).returned_total == copies);
  uint64_t reused_before = stats_of(*store).nodes.reused;
  uint64_t allocated_before = stats_of(*store).nodes.allocated;
  touch_every_row(2);  // copies `second`'s nodes into the nodes `first` gave back
  CHECK(stats_of(*store).nodes.reused - reused_before == copies);
  CHECK(stats_of(*store).nodes.allocated == allocated_before);
  for (int64_t k = 0; k < 1000; k += 37) {
    Cell key = Cell(k);
    CHECK(second->list(0).find(&key)[1] == Cell(k + 1));
    CHECK(list.find(&key)[1] == Cell(k + 2));
  }
}

TEST_CASE("a snapshot held by the newest is not reused when an older one goes") {
  ListSchema counts{"counts", false, {ColType::Int}, {ColType::Int}};
  auto store = make_btree_store({counts}, 256);
  ListWriter& list = store->list(0);
  for (int64_t k = 0; k < 500; ++k) {
    Cell row[2] = {Cell(k), Cell(k)};
    list.put(row);
  }
  auto a = store->publish();
  Cell key = 7, other = 400;
  list.set_field(&key, 0, 70);
  auto b = store->publish();
  list.set_field(&other, 0, 4000);
  auto c = store->publish();
  std::string b_content = dump(*b);
  a.reset();  // `b` can still read what the first write replaced
  list.set_field(&key, 0, 700);
  list.set_field(&other, 0, 40000);
  auto d = store->publish();
  CHECK(dump(*b) == b_content);
  CHECK(b->list(0).find(&key)[1] == 70);
  CHECK(c->list(0).find(&other)[1] == 4000);
  CHECK(d->list(0).find(&key)[1] == 700);
}

TEST_CASE("snapshots outlive their store") {
  int64_t texts = text_live_count();
  std::shared_ptr<const Snapshot> kept;
  std::string content;
  {
    auto store = make_btree_store(mixed_schemas());
    Writer writer(3);
    for (int i = 0; i < 3000; ++i) writer.write(*store);
    kept = store->publish();
    content = dump(*kept);
    for (int i = 0; i < 3000; ++i) writer.write(*store);
  }
  CHECK(dump(*kept) == content);
  kept.reset();
  CHECK(text_live_count() == texts);
}

TEST_CASE("rollback restores rows and texts exactly; texts read in an event stay valid until commit") {
  int64_t texts = text_live_count();
  {
    auto store = make_btree_store(mixed_schemas(), 128);
    Writer writer(11);
    for (int i = 0; i < 2000; ++i) writer.write(*store);
    store->commit();
    std::string before = dump(*store);
    for (int round = 0; round < 200; ++round) {
      std::string at_begin = dump(*store);
      store->begin();
      const Cell* row = store->list(1).first();
      const Text* read = row ? reinterpret_cast<const Text*>(row[2]) : nullptr;
      std::string read_bytes = read ? std::string(read->view()) : "";
      for (int i = 0; i < 20; ++i) writer.write(*store);
      if (row) {
        Cell key[2] = {row[0], row[1]};
        store->list(1).remove(key);
      }
      if (read) CHECK(std::string(read->view()) == read_bytes);  // still valid inside the event
      if (round % 2) {
        store->rollback();
        CHECK(dump(*store) == at_begin);
      } else {
        store->commit();
      }
    }
    CHECK(dump(*store) != before);
  }
  CHECK(text_live_count() == texts);
}

TEST_CASE("memory use counts rows as state and nodes as structure") {
  ListSchema counts{"counts", false, {ColType::Int, ColType::Int}, {ColType::Int}};
  auto store = make_btree_store({counts});
  for (int64_t k = 0; k < 100000; ++k) {
    Cell row[3] = {Cell(k / 100), Cell(k % 100), Cell(k)};
    store->list(0).put(row);
  }
  MemoryUse m = store->memory();
  CHECK(m.state_bytes == 100000u * 3 * 8);
  CHECK(m.structure_bytes > 0);
  CHECK(m.structure_bytes < m.state_bytes / 4);  // ascending keys fill leaves
}

static std::string text_of(Cell c) { return std::string(reinterpret_cast<const Text*>(c)->view()); }

TEST_CASE("copying a shared leaf moves its texts' references; a replaced text lives while a snapshot can read it") {
  // One keyed list of (int key, text, int): the first write after a publish copies the leaf. The
  // copy takes over the old leaf's references, so no text's count changes (each count touched was
  // a cache miss: TPC-C's stock and customer leaves hold about ninety texts each).
  ListSchema rows{"rows", false, {ColType::Int}, {ColType::Text, ColType::Int}};
  int64_t texts = text_live_count();
  {
    auto store = make_btree_store({rows});
    store->begin();
    for (int64_t k = 0; k < 4; ++k) {
      Text* t = text_new("row " + std::to_string(k));
      Cell row[3] = {Cell(k), cell_of(t), Cell(k)};
      store->list(0).put(row);
      text_release(t);
    }
    store->commit();
    auto held = store->publish();
    Cell key1 = 1;
    const Text* neighbour = reinterpret_cast<const Text*>(store->list(0).find(&key1)[1]);
    CHECK(neighbour->rc == 1);
    store->begin();
    Cell key0 = 0;
    store->list(0).set_field(&key0, 1, Cell(100));  // an int: the leaf is copied, no text changes
    store->commit();
    CHECK(stats_of(*store).nodes.copied == 1);
    CHECK(reinterpret_cast<const Text*>(store->list(0).find(&key1)[1]) == neighbour);
    CHECK(neighbour->rc == 1);  // was 2: one per leaf
    // Replacing a text while `held` can still read the old one: it stays alive until `held` goes.
    store->begin();
    Text* fresh = text_new("replaced");
    store->list(0).set_field(&key0, 0, cell_of(fresh));
    text_release(fresh);
    store->commit();
    auto latest = store->publish();
    CHECK(text_of(held->list(0).find(&key0)[1]) == "row 0");
    CHECK(text_of(latest->list(0).find(&key0)[1]) == "replaced");
    int64_t before_release = text_live_count();
    held.reset();
    store->publish();  // the owner takes back what the released snapshot returned
    CHECK(text_live_count() == before_release - 1);  // "row 0" went with the last snapshot that read it
    // With no snapshot held, a replaced text goes at commit.
    latest.reset();
    store->begin();
    Text* again = text_new("again");
    store->list(0).set_field(&key0, 0, cell_of(again));
    text_release(again);
    int64_t in_event = text_live_count();
    store->commit();
    CHECK(text_live_count() == in_event - 1);
  }
  CHECK(text_live_count() == texts);
}

TEST_CASE("fingers go cold on scattered keys, warm again on nearby ones, and follow a copied leaf") {
  // TPC-C's stock: every New-Order line reads a random row, then a few nearby ones are walked.
  ListSchema stock{"stock", false, {ColType::Int, ColType::Int}, {ColType::Int, ColType::Int, ColType::Text}};
  int64_t texts = text_live_count();
  {
    auto store = make_btree_store({stock});
    ListWriter& list = store->list(0);
    store->begin();
    Text* data = text_new("data");
    for (int64_t w = 1; w <= 2; ++w)
      for (int64_t i = 0; i < 2000; ++i) {
        Cell row[5] = {Cell(w), Cell(i), Cell(i), 0, cell_of(data)};
        list.put(row);
      }
    text_release(data);
    store->commit();
    // Scattered: most searches go straight down, without looking at the fingers.
    store->begin();
    StoreStats before = stats_of(*store);
    for (int64_t k = 1; k <= 200; ++k) {
      Cell key[2] = {Cell(1 + k % 2), Cell(k * 769 % 2000)};
      REQUIRE(list.find(key) != nullptr);
      CHECK(list.find(key)[2] == key[1]);
    }
    StoreStats after = stats_of(*store);
    CHECK(after.finger_scans - before.finger_scans < 200 / 4);
    CHECK(after.descents - before.descents >= 190);
    // Nearby: a probe finds a finger again, and the rest of the walk needs no descent.
    before = after;
    for (int64_t i = 500; i < 600; ++i) {
      Cell key[2] = {Cell(2), Cell(i)};
      CHECK(list.find(key)[2] == Cell(i));
    }
    after = stats_of(*store);
    CHECK(after.descents - before.descents < 100 / 4);
    store->commit();
    // Across a publish: the first write to a leaf copies it, and the finger reads the copy.
    auto held = store->publish();
    store->begin();
    for (int64_t i = 500; i < 600; ++i) {
      Cell key[2] = {Cell(2), Cell(i)};
      CHECK(list.set_field(key, 0, Cell(7000 + i)));
      Cell previous[2] = {Cell(2), Cell(i - 1)};
      CHECK(list.find(previous)[2] == Cell(i == 500 ? 499 : 7000 + i - 1));
      Cell next[2] = {Cell(2), Cell(i + 1)};
      CHECK(list.find(next)[2] == Cell(i + 1));
    }
    store->commit();
    CHECK(btree_store_check(*store) == "");
    for (int64_t i = 499; i <= 600; ++i) {
      Cell key[2] = {Cell(2), Cell(i)};
      CHECK(held->list(0).find(key)[2] == Cell(i));
      CHECK(list.find(key)[2] == Cell(i >= 500 && i < 600 ? 7000 + i : i));
    }
  }
  CHECK(text_live_count() == texts);
}

TEST_CASE("a row read and then written searches the tree once, also across a publish") {
  // TPC-C's read-modify-write: s = stock[w, i], then stock[w, i].quantity = ..., .ytd = ....
  ListSchema stock{"stock", false, {ColType::Int, ColType::Int}, {ColType::Int, ColType::Int, ColType::Text}};
  int64_t texts = text_live_count();
  {
    auto store = make_btree_store({stock});
    ListWriter& list = store->list(0);
    store->begin();
    Text* data = text_new("data");
    for (int64_t w = 1; w <= 2; ++w)
      for (int64_t i = 0; i < 2000; ++i) {
        Cell row[5] = {Cell(w), Cell(i), Cell(i), 0, cell_of(data)};
        list.put(row);
      }
    text_release(data);
    store->commit();
    for (int round = 0; round < 3; ++round) {
      auto held = store->publish();  // every node is shared again: the write copies the path
      for (int64_t i = 7 + round; i < 2000; i += 331) {
        Cell key[2] = {Cell(2), Cell(i)};
        store->begin();
        uint64_t before = stats_of(*store).descents;
        const Cell* row = list.find(key);
        REQUIRE(row != nullptr);
        Cell q = row[2];
        CHECK(list.set_field(key, 0, q + 1));
        CHECK(list.set_field(key, 1, row[3] + 5));
        CHECK(list.find(key)[2] == q + 1);
        CHECK(stats_of(*store).descents - before == 1);
        // another row of another leaf, then this one again: the first search is remembered no more
        Cell other[2] = {Cell(1), Cell(i)};
        CHECK(list.set_field(other, 1, 9));
        CHECK(list.find(key)[3] == Cell(5));
        store->commit();
        CHECK(held->list(0).find(key)[2] == q);  // the snapshot still reads the old row
      }
      CHECK(btree_store_check(*store) == "");
    }
    auto last = store->publish();
    for (int64_t i = 0; i < 2000; ++i) {
      Cell key[2] = {Cell(2), Cell(i)};
      bool touched = i >= 7 && (i - 7) % 331 <= 2;  // rounds 0, 1, 2 start at 7, 8, 9
      CHECK(last->list(0).find(key)[2] == Cell(touched ? i + 1 : i));
      CHECK(last->list(0).find(key)[3] == Cell(touched ? 5 : 0));
    }
  }
  CHECK(text_live_count() == texts);
}
