// tests/runtime/test_store_threads.cpp — reader threads read held snapshots while the owner
// writes and publishes; readers release snapshots, so retired nodes come back across threads.
// Must pass under ThreadSanitizer (-DPURE_TSAN=ON) and ASan/LSan (-DPURE_SANITIZE=ON).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#include "runtime/store_btree_store.h"
#include "store_test_support.h"

using namespace pure::rt;
using namespace store_test;

namespace {

constexpr int64_t kAccounts = 3000;
constexpr int64_t kTotal = kAccounts * 100;

std::vector<ListSchema> bank_schemas() {
  return {
      {"accounts", false, {ColType::Int}, {ColType::Int, ColType::Text}},  // balance, label = balance in decimal
      {"meta", false, {ColType::Int}, {ColType::Int}},                       // 0 -> committed events
      {"log", true, {}, {ColType::Int, ColType::Text}},                      // one line per committed event
  };
}

std::string text_of(Cell c) { return std::string(reinterpret_cast<const Text*>(c)->view()); }

// Every snapshot must show a consistent state: balances sum to the total, each label spells its
// balance, and the log has one line per committed event, the last naming the event.
std::string inconsistency(const Snapshot& s) {
  int64_t sum = 0, rows = 0;
  for (auto c = s.list(0).scan(); c->valid(); c->next()) {
    const Cell* row = c->row();
    sum += static_cast<int64_t>(row[1]);
    ++rows;
    if (text_of(row[2]) != std::to_string(static_cast<int64_t>(row[1]))) return "label differs from balance";
  }
  if (rows != kAccounts || sum != kTotal) return "sum " + std::to_string(sum);
  Cell zero = 0;
  const Cell* meta = s.list(1).find(&zero);
  if (!meta) return "no meta row";
  int64_t events = static_cast<int64_t>(meta[1]);
  if (s.list(2).count() != std::min<int64_t>(events, 500)) return "log count";
  if (events > 0) {
    const Cell* last = s.list(2).last();
    if (!last || text_of(last[1]) != "event " + std::to_string(events)) return "last log line";
  }
  for (int64_t k = 0; k < kAccounts; k += 97) {  // finds through the snapshot's shared finger
    Cell key = Cell(k);
    const Cell* row = s.list(0).find(&key);
    if (!row || text_of(row[2]) != std::to_string(static_cast<int64_t>(row[1]))) return "find";
  }
  return "";
}

}  // namespace

TEST_CASE("readers on other threads read held snapshots while the owner writes and publishes") {
  uint64_t seed = seed_from_env(99);
  INFO("seed " << seed << " (replay with PURE_STORE_SEED=" << seed << ")");
  int64_t texts = text_live_count();
  {
    auto store = make_btree_store(bank_schemas(), 512);
    store->begin();
    for (int64_t k = 0; k < kAccounts; ++k) {
      Text* label = text_new("100");
      Cell row[3] = {Cell(k), 100, reinterpret_cast<Cell>(label)};
      store->list(0).put(row);
      text_release(label);
    }
    Cell meta[2] = {0, 0};
    store->list(1).put(meta);
    store->commit();

    std::mutex latest_lock;
    std::shared_ptr<const Snapshot> latest = store->publish();
    std::atomic<bool> stop{false};
    std::atomic<int64_t> checks{0};
    std::mutex failure_lock;
    std::string failure;

    auto reader = [&](int id) {
      std::deque<std::shared_ptr<const Snapshot>> held;
      std::minstd_rand rng{static_cast<unsigned>(id + 1)};
      while (!stop.load(std::memory_order_relaxed)) {
        {
          std::lock_guard<std::mutex> guard(latest_lock);
          held.push_back(latest);
        }
        for (auto& s : held) {
          std::string why = inconsistency(*s);
          checks.fetch_add(1, std::memory_order_relaxed);
          if (!why.empty()) {
            std::lock_guard<std::mutex> guard(failure_lock);
            failure = "reader " + std::to_string(id) + ", generation " + std::to_string(s->generation()) + ": " + why;
            stop = true;
          }
        }
        while (held.size() > 1 + rng() % 4) held.pop_front();  // released on this thread
      }
    };
    std::vector<std::thread> readers;
    for (int id = 0; id < 3; ++id) readers.emplace_back(reader, id);

    std::mt19937_64 rng(seed);
    int64_t committed = 0;
    for (int event = 0; event < 6000 && !stop.load(); ++event) {
      store->begin();
      for (int t = 0; t < 3; ++t) {
        Cell from = rng() % kAccounts, to = rng() % kAccounts;
        int64_t amount = int64_t(rng() % 20);
        const Cell* a = store->list(0).find(&from);
        if (static_cast<int64_t>(a[1]) < amount || from == to) continue;
        int64_t from_balance = static_cast<int64_t>(a[1]) - amount;
        int64_t to_balance = static_cast<int64_t>(store->list(0).find(&to)[1]) + amount;
        Text* from_label = text_new(std::to_string(from_balance));
        Text* to_label = text_new(std::to_string(to_balance));
        store->list(0).set_field(&from, 0, Cell(from_balance));
        store->list(0).set_field(&from, 1, reinterpret_cast<Cell>(from_label));
        Cell row[3] = {to, Cell(to_balance), reinterpret_cast<Cell>(to_label)};
        store->list(0).put(row);
        text_release(from_label);
        text_release(to_label);
      }
      bool keep = rng() % 8 != 0;
      if (keep) {
        ++committed;
        Cell zero = 0;
        store->list(1).set_field(&zero, 0, Cell(committed));
        Text* line = text_new("event " + std::to_string(committed));
        Cell row[2] = {Cell(committed), reinterpret_cast<Cell>(line)};
        if (store->list(2).count() >= 500) store->list(2).pop();
        store->list(2).append(row);
        text_release(line);
        store->commit();
      } else {
        store->rollback();
      }
      auto snapshot = store->publish();
      std::lock_guard<std::mutex> guard(latest_lock);
      latest = std::move(snapshot);  // the previous one may be released here or by a reader
    }
    stop = true;
    for (auto& r : readers) r.join();
    CHECK(failure == "");
    CHECK(checks.load() > 0);
    {
      std::lock_guard<std::mutex> guard(latest_lock);
      CHECK(inconsistency(*latest) == "");
    }
    latest.reset();
    store->publish();  // drains what the readers gave back
    StoreStats s;
    REQUIRE(btree_store_stats(*store, s));
    MESSAGE("checks " << checks.load() << ", copied " << s.nodes.copied << ", returned " << s.returned_total
                      << ", reused " << s.nodes.reused << ", allocated " << s.nodes.allocated);
    CHECK(s.returned_total > 0);
    CHECK(s.nodes.reused > 0);
  }
  CHECK(text_live_count() == texts);
}
