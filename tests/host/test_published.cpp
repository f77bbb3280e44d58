// tests/host/test_published.cpp — host::Published (host/published.h), the lock-free read of the
// owner's visible snapshot: readers on several threads read while one writer publishes; every
// read sees a value and the tag published with it, tags never go backwards for a reader, and
// every value is released once nothing holds it (no leak, no early free: ASan and TSan run it).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "host/published.h"

namespace {

std::atomic<int64_t> g_live{0};

struct Value {
  explicit Value(uint64_t t) : tag(t), check(~t) { ++g_live; }
  ~Value() {
    check = 0;  // a read of a freed value would see this (ASan reports it first)
    --g_live;
  }
  uint64_t tag;
  uint64_t check;
};

}  // namespace

TEST_CASE("an empty Published reads null") {
  pure::host::Published<Value> p;
  auto [v, tag] = p.read();
  CHECK(v == nullptr);
  CHECK(tag == 0);
}

TEST_CASE("readers see each value with its own tag, in order, while the writer publishes") {
  constexpr uint64_t kPublishes = 20000;
  constexpr int kReaders = 4;
  {
    pure::host::Published<Value> p;
    p.publish(std::make_shared<const Value>(1), 1);
    std::atomic<bool> done{false};
    std::atomic<int> bad{0};
    std::atomic<uint64_t> reads{0};
    std::atomic<int> started{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r)
      readers.emplace_back([&] {
        uint64_t last = 0, n = 0;
        do {
          auto [v, tag] = p.read();
          if (!v || v->tag != tag || v->check != ~tag || tag < last) ++bad;
          last = tag;
          if (n++ == 0) started.fetch_add(1);
        } while (!done.load(std::memory_order_acquire));
        reads += n;
      });
    // the writer starts once every reader is reading: on a loaded machine the 20,000 publishes
    // could otherwise end before a reader thread first ran, and nothing would be tested
    while (started.load() < kReaders) std::this_thread::yield();
    for (uint64_t t = 2; t <= kPublishes; ++t) p.publish(std::make_shared<const Value>(t), t);
    done.store(true, std::memory_order_release);
    for (auto& t : readers) t.join();
    CHECK(bad.load() == 0);
    CHECK(reads.load() >= kReaders);
    // no reader holds an entry now: the next publish frees every retired one
    p.publish(std::make_shared<const Value>(kPublishes + 1), kPublishes + 1);
    CHECK(p.retired() == 0);
    CHECK(g_live.load() == 1);  // only the current value is alive
    auto [v, tag] = p.read();
    CHECK(tag == kPublishes + 1);
    CHECK(v->tag == tag);
  }
  CHECK(g_live.load() == 0);
}

TEST_CASE("a value a reader still holds outlives its replacement, and is freed when the reader drops it") {
  pure::host::Published<Value> p;
  p.publish(std::make_shared<const Value>(1), 1);
  auto held = p.read().first;
  p.publish(std::make_shared<const Value>(2), 2);
  CHECK(g_live.load() == 2);
  CHECK(held->tag == 1);
  held.reset();
  CHECK(g_live.load() == 1);
}

TEST_CASE("more readers than slots still read") {
  pure::host::Published<Value> p;
  p.publish(std::make_shared<const Value>(7), 7);
  std::vector<std::thread> readers;
  std::atomic<int> bad{0};
  for (size_t r = 0; r < pure::host::Published<Value>::kSlots * 2; ++r)
    readers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto [v, tag] = p.read();
        if (!v || tag != 7 || v->tag != 7) ++bad;
      }
    });
  for (auto& t : readers) t.join();
  CHECK(bad.load() == 0);
}
