// tests/host/module_test.cpp — Module, the owner thread: events from many threads run in batches,
// each committed one logged; callers hear back only after their event is durable and the visible
// snapshot then contains it (visible = durable); failed events are answered in order and never
// logged; a poisoned log makes the module unhealthy without publishing what it could not log;
// checkpoints are taken by log size; a reopened module has the same state.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "host/file_fault.h"
#include "host/log_format.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

constexpr uint32_t kFailUnlessPresent = 2;  // fails when the key is absent; changes nothing

class TestRunner final : public EventRunner {
 public:
  EventOutcome run(rt::Store& store, uint32_t event, std::string_view args) override {
    EventOutcome o;
    if (event == kFailUnlessPresent) {
      rt::Cell key = get64(args.data());
      if (!store.list(0).find(&key)) {
        o.reason = "key " + std::to_string(key) + " is absent";
        return o;
      }
      o.ok = true;
      o.results = "present";
      // Logged like any committed event; replays as a no-op.
      return o;
    }
    o.reason = apply_event(store, LogRecord{0, event, args});
    o.ok = o.reason.empty();
    return o;
  }
};

ModuleOptions module_options(EventRunner& runner, uint64_t checkpoint_bytes = 0) {
  ModuleOptions o;
  o.module_identity = kModule;
  o.schemas = schemas();
  o.runner = &runner;
  o.checkpoint_log_bytes = checkpoint_bytes;
  return o;
}

// Replays (event, args) in sequence order through the runner on a fresh store.
std::string replay(TestRunner& runner, const std::map<uint64_t, Event>& events) {
  auto store = rt::make_store(schemas());
  for (auto& [seq, e] : events) REQUIRE(runner.run(*store, e.event, e.args).ok);
  return dump(*store);
}

}  // namespace

TEST_CASE("many submitters: every committed event is durable, visible, and survives a reopen") {
  TestRunner runner;
  TempDir tmp;
  FileSystem& fs = posix_file_system();
  std::unique_ptr<Module> m;
  REQUIRE(Module::open(fs, tmp.path, module_options(runner), &m).ok());
  constexpr int kThreads = 8, kEach = 40;
  std::mutex seen_mutex;
  std::map<uint64_t, Event> committed;
  std::atomic<int> visible_violations{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Event e = workload_event(uint64_t(t) * 1000 + i + 1);
        if (i % 7 == 3) {
          e.event = kFailUnlessPresent;
          e.args = e.args.substr(0, 8);
        }
        EventOutcome o = m->submit(e.event, e.args).get();
        if (!o.ok) {
          ++failures;
          CHECK(o.sequence == 0);
          CHECK(o.reason.find("is absent") != std::string::npos);
          continue;
        }
        // Visible = durable: by the time the caller hears, the published state includes it.
        if (m->visible_sequence() < o.sequence) ++visible_violations;
        std::lock_guard<std::mutex> lock(seen_mutex);
        CHECK(committed.emplace(o.sequence, e).second);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(visible_violations.load() == 0);
  CHECK(committed.size() + failures.load() == kThreads * kEach);
  // Sequence numbers are 1..N without gaps.
  CHECK(committed.begin()->first == 1);
  CHECK(committed.rbegin()->first == committed.size());
  std::string expected = replay(runner, committed);
  CHECK(dump(*m->snapshot()) == expected);
  REQUIRE(m->close().ok());
  CHECK(!m->submit(kPut, workload_event(1).args).get().ok);

  std::unique_ptr<Module> again;
  REQUIRE(Module::open(fs, tmp.path, module_options(runner), &again).ok());
  CHECK(again->recovery().last_sequence == committed.size());
  CHECK(dump(*again->snapshot()) == expected);
  EventOutcome o = again->submit(kPut, workload_event(5).args).get();
  CHECK(o.ok);
  CHECK(o.sequence == committed.size() + 1);
}

TEST_CASE("queries read published snapshots while the owner writes") {
  TestRunner runner;
  FaultFileSystem fs;
  std::unique_ptr<Module> m;
  REQUIRE(Module::open(fs, "/data", module_options(runner), &m).ok());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, regressions{0};
  std::thread reader([&] {
    int64_t last = -1;
    while (!done.load()) {
      auto snapshot = m->snapshot();
      int64_t history = snapshot->list(1).count();  // one history row per committed event
      if (history < last) ++regressions;
      last = history;
      dump(*snapshot);  // read every row while the owner keeps writing
      ++reads;
    }
  });
  for (uint64_t i = 1; i <= 300; ++i) REQUIRE(m->submit(workload_event(i).event, workload_event(i).args).get().ok);
  done = true;
  reader.join();
  CHECK(regressions.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(dump(*m->snapshot()) == reference(300));
}

TEST_CASE("a poisoned log: the event is not acknowledged, not published, and the module refuses more") {
  TestRunner runner;
  FaultFileSystem fs;
  std::unique_ptr<Module> m;
  REQUIRE(Module::open(fs, "/data", module_options(runner), &m).ok());
  for (uint64_t i = 1; i <= 3; ++i) REQUIRE(m->submit(workload_event(i).event, workload_event(i).args).get().ok);
  CHECK(m->visible_sequence() == 3);
  fs.arm(fs.points() + 1, Fault::Fail);  // the fsync of the next burst
  EventOutcome o = m->submit(workload_event(4).event, workload_event(4).args).get();
  CHECK(!o.ok);
  CHECK(o.reason.find("not known to be durable (event log poisoned: /data/log-") == 0);
  CHECK(!m->healthy());
  CHECK(m->unhealthy_reason().find("fdatasync failed: injected fault") != std::string::npos);
  CHECK(m->visible_sequence() == 3);
  CHECK(dump(*m->snapshot()) == reference(3));
  EventOutcome later = m->submit(workload_event(5).event, workload_event(5).args).get();
  CHECK(later.reason.find("module unhealthy: event log poisoned") == 0);
  CHECK(!m->close().ok());
  fs.crash();
  std::unique_ptr<Module> again;
  REQUIRE(Module::open(fs, "/data", module_options(runner), &again).ok());
  CHECK(dump(*again->snapshot()) == reference(3));
}

TEST_CASE("checkpoints follow the log's growth and recovery starts from them") {
  TestRunner runner;
  FaultFileSystem fs;
  {
    std::unique_ptr<Module> m;
    REQUIRE(Module::open(fs, "/data", module_options(runner, 600), &m).ok());
    for (uint64_t i = 1; i <= 200; ++i) REQUIRE(m->submit(workload_event(i).event, workload_event(i).args).get().ok);
    REQUIRE(m->close().ok());
  }
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  int checkpoints = 0;
  for (auto& n : names) checkpoints += parse_checkpoint_name(n).has_value();
  CHECK(checkpoints == 1);
  std::unique_ptr<Module> m;
  REQUIRE(Module::open(fs, "/data", module_options(runner), &m).ok());
  CHECK(m->recovery().checkpoint_sequence > 0);
  CHECK(m->recovery().records_replayed < 200);
  CHECK(dump(*m->snapshot()) == reference(200));
  CheckpointInfo info;
  REQUIRE(m->checkpoint(&info).ok());
  CHECK(info.rows == uint64_t(m->snapshot()->list(0).count() + m->snapshot()->list(1).count()));
}
