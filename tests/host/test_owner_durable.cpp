// tests/host/test_owner_durable.cpp — host::Owner over open_durable (the one owner thread, made durable):
// events from many threads run in batches, each committed one logged; callers hear back only
// after their event is durable and the visible snapshot then contains it (visible = durable);
// failed events are answered in order and never logged; a poisoned log makes the module
// unhealthy without publishing what it could not log; checkpoints are taken by log size and by
// time, never by the owner; a reopened module has the same state.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "host/file_fault.h"
#include "host/log_format.h"
#include "owner_support.h"

using namespace owner_test;
using host_test::dump;
using host_test::TempDir;

namespace {

int count_checkpoints(FileSystem& fs, const std::string& dir) {
  std::vector<std::string> names;
  REQUIRE(fs.list_dir(dir, &names).ok());
  int n = 0;
  for (auto& name : names) n += parse_checkpoint_name(name).has_value();
  return n;
}

}  // namespace

TEST_CASE("many submitters: every committed event is durable, visible, and survives a reopen") {
  auto p = compile(kAccounts);
  TempDir tmp;
  FileSystem& fs = posix_file_system();
  Opened m;
  REQUIRE(open_owner(fs, tmp.path, *p, manual_checkpoints(), &m).ok());
  constexpr int kThreads = 8, kEach = 40;
  std::mutex seen_mutex;
  std::map<uint64_t, Call> committed;
  std::set<uint64_t> failed_at;  // the failed events' audit-only records (--audit-failed, the default)
  std::atomic<int> visible_violations{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Call c = workload_call(*p, uint64_t(t) * 1000 + i + 1);
        if (i % 7 == 3) c = {fn(*p, "need"), {c.args[0]}};
        EventReply r = call(*m.owner, c);
        if (r.kind != EventReply::Kind::Committed) {
          ++failures;
          CHECK(r.kind == EventReply::Kind::Failed);
          CHECK(r.reason.find("is absent") != std::string::npos);
          CHECK(r.sequence > 0);  // its audit-only record's, durable and visible too
          if (m.owner->visible().second < r.sequence) ++visible_violations;
          std::lock_guard<std::mutex> lock(seen_mutex);
          CHECK(failed_at.insert(r.sequence).second);
          continue;
        }
        // Visible = durable: by the time the caller hears, the published state includes it.
        if (m.owner->visible().second < r.sequence) ++visible_violations;
        std::lock_guard<std::mutex> lock(seen_mutex);
        CHECK(committed.emplace(r.sequence, c).second);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(visible_violations.load() == 0);
  CHECK(failures.load() > 0);
  CHECK(committed.size() + failures.load() == kThreads * kEach);
  CHECK(failed_at.size() == static_cast<size_t>(failures.load()));
  // Sequence numbers are 1..N without gaps, committed and failed events together.
  const uint64_t total = kThreads * kEach;
  std::set<uint64_t> all = failed_at;
  for (auto& [seq, c] : committed) CHECK(all.insert(seq).second);
  CHECK(*all.begin() == 1);
  CHECK(*all.rbegin() == total);
  CHECK(all.size() == total);
  std::vector<Call> in_order;
  for (auto& [seq, c] : committed) in_order.push_back(c);
  std::string expected = replay(*p, in_order);
  CHECK(dump(*m.owner->snapshot()) == expected);
  DurabilityStats stats = m.owner->stats().durability;
  CHECK(stats.durable);
  CHECK(stats.log.records == total);
  CHECK(stats.log.syncs >= stats.log.bursts);
  uint64_t in_buckets = 0;
  for (uint64_t b : stats.log.sync_buckets) in_buckets += b;
  CHECK(in_buckets == stats.log.syncs);
  // Every reply is in: no batch waits, the owner holds the visible snapshot only, and the
  // durability's reference to it (for the next checkpoint) is not counted twice.
  CHECK(m.owner->stats().snapshots_held == 1);
  CHECK(stats.snapshots_held == 0);
  REQUIRE(m.owner->close() == "");
  CHECK(call(*m.owner, workload_call(*p, 1)).kind == EventReply::Kind::Unavailable);

  auto again_program = compile(kAccounts);  // compiled again, as a new process would
  Opened again;
  REQUIRE(open_owner(fs, tmp.path, *again_program, manual_checkpoints(), &again).ok());
  CHECK(again.log->recovery().last_sequence == total);
  CHECK(again.log->recovery().records_replayed == committed.size());  // failed records are skipped
  CHECK(dump(*again.owner->snapshot()) == expected);
  EventReply r = call(*again.owner, workload_call(*again_program, 5));
  CHECK(r.kind == EventReply::Kind::Committed);
  CHECK(r.sequence == total + 1);
}

TEST_CASE("queries read published snapshots while the owner writes") {
  auto p = compile(kAccounts);
  FaultFileSystem fs;
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m).ok());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, regressions{0};
  std::thread reader([&] {
    int64_t last = -1;
    while (!done.load()) {
      vm::CallResult r = m.owner->query(fn(*p, "events"), {});
      REQUIRE(r.ok);
      if (r.value.i < last) ++regressions;
      last = r.value.i;
      dump(*m.owner->snapshot());  // read every row while the owner keeps writing
      ++reads;
    }
  });
  // The writes start once the reader is reading: on a loaded machine the reader's thread could
  // otherwise first run after all 300 events, and the test would check no concurrent read at all.
  while (reads.load() == 0) std::this_thread::yield();
  for (uint64_t i = 1; i <= 300; ++i) REQUIRE(call(*m.owner, workload_call(*p, i)).kind == EventReply::Kind::Committed);
  done = true;
  reader.join();
  CHECK(regressions.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(dump(*m.owner->snapshot()) == reference(*p, 300));
}

TEST_CASE("a poisoned log: the event is not acknowledged, not published, and the module refuses more") {
  auto p = compile(kAccounts);
  FaultFileSystem fs;
  Opened m;
  std::vector<std::string> reported;
  OwnerOptions oo;
  oo.on_unhealthy = [&](const std::string& why) { reported.push_back(why); };
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m, oo).ok());
  for (uint64_t i = 1; i <= 3; ++i) REQUIRE(call(*m.owner, workload_call(*p, i)).kind == EventReply::Kind::Committed);
  CHECK(m.owner->visible().second == 3);
  fs.arm(fs.points() + 1, Fault::Fail);  // the fsync of the next burst (after its write)
  EventReply r = call(*m.owner, workload_call(*p, 4));
  CHECK(r.kind == EventReply::Kind::Unavailable);
  CHECK(r.reason.find("event log poisoned: /data/log-") != std::string::npos);
  CHECK(!m.owner->healthy());
  CHECK(m.owner->unhealthy_reason().find("fdatasync failed: injected fault") != std::string::npos);
  CHECK(reported.size() == 1);
  CHECK(m.owner->visible().second == 3);
  CHECK(dump(*m.owner->snapshot()) == reference(*p, 3));
  EventReply later = call(*m.owner, workload_call(*p, 5));
  CHECK(later.kind == EventReply::Kind::Unavailable);
  CHECK(later.reason.find("is unhealthy: event log poisoned") != std::string::npos);
  CHECK(m.owner->close() != "");
  fs.crash();
  Opened again;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &again).ok());
  CHECK(dump(*again.owner->snapshot()) == reference(*p, 3));
}

TEST_CASE("a reply_runner gets each delivery's callbacks as one job: none runs early, each once, in order") {
  auto p = compile(kAccounts);
  FaultFileSystem fs;
  std::mutex jobs_mutex;
  std::vector<std::function<void()>> jobs;
  OwnerOptions oo;
  oo.reply_runner = [&](std::function<void()> job) {
    std::lock_guard<std::mutex> lock(jobs_mutex);
    jobs.push_back(std::move(job));
  };
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m, oo).ok());
  // From one thread, without waiting: every third event fails (need of an absent key).
  constexpr int kEvents = 60;
  std::vector<int> heard;  // the submission index of each reply, in the order they run
  std::vector<EventReply> replies(kEvents);
  int expect_failed = 0;
  for (int i = 0; i < kEvents; ++i) {
    Call c = workload_call(*p, uint64_t(i) + 1);
    if (i % 3 == 2) {
      c = {fn(*p, "need"), {Value::of_int(1000 + i)}};
      ++expect_failed;
    }
    m.owner->submit(c.fn, std::move(c.args), [&, i](EventReply r) {
      heard.push_back(i);  // jobs run on this test's thread only, so no lock
      replies[i] = std::move(r);
    });
  }
  // The owner counts each reply just before it hands the delivery's job over; wait for all of
  // them, then close (which returns only when every callback has been handed to the runner).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (m.owner->stats().committed + m.owner->stats().failed < kEvents) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  OwnerStats stats = m.owner->stats();
  CHECK(stats.committed == uint64_t(kEvents - expect_failed));
  CHECK(stats.failed == uint64_t(expect_failed));
  uint64_t visible = m.owner->visible().second;
  REQUIRE(m.owner->close() == "");
  CHECK(heard.empty());  // handed over, not run
  std::vector<std::function<void()>> taken;
  {
    std::lock_guard<std::mutex> lock(jobs_mutex);
    taken.swap(jobs);
  }
  CHECK(!taken.empty());
  CHECK(taken.size() <= stats.batches);  // at most one job a delivery, never one a reply
  for (auto& job : taken) job();
  REQUIRE(heard.size() == size_t(kEvents));
  for (int i = 0; i < kEvents; ++i) CHECK(heard[i] == i);
  uint64_t last_sequence = 0;  // failed events take sequences too: their audit-only records
  for (int i = 0; i < kEvents; ++i) {
    CHECK(replies[i].kind == (i % 3 == 2 ? EventReply::Kind::Failed : EventReply::Kind::Committed));
    CHECK(replies[i].sequence == last_sequence + 1);
    last_sequence = replies[i].sequence;
  }
  CHECK(visible == last_sequence);
  std::lock_guard<std::mutex> lock(jobs_mutex);
  CHECK(jobs.empty());  // nothing handed over after close
}

TEST_CASE("checkpoints follow the log's growth, never block the owner, and recovery starts from them") {
  auto p = compile(kAccounts);
  FaultFileSystem fs;
  std::atomic<int> attempts{0};
  {
    DurableOptions o = manual_checkpoints();
    o.log.retain.keep_ms = 0;  // --retain none: each checkpoint replaces the one before
    o.checkpoint_log_bytes = 600;
    o.on_checkpoint = [&](const std::string& error, const CheckpointInfo&, uint64_t) {
      CHECK(error == "");
      ++attempts;
    };
    Opened m;
    REQUIRE(open_owner(fs, "/data", *p, o, &m).ok());
    for (uint64_t i = 1; i <= 200; ++i) REQUIRE(call(*m.owner, workload_call(*p, i)).kind == EventReply::Kind::Committed);
    // The log's growth asked for checkpoints; the checkpointer is a thread of its own, which a
    // loaded machine may not have scheduled yet, and close() stops it. Wait (bounded) for its
    // first one rather than race it.
    for (int waited = 0; attempts.load() == 0 && waited < 6000; ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(m.owner->close() == "");
    DurabilityStats s = m.owner->stats().durability;
    CHECK(s.checkpoints > 0);
    CHECK(s.checkpoints == uint64_t(attempts.load()));
    CHECK(s.checkpoint_sequence > 0);
    CHECK(s.checkpoint_age_seconds >= 0);
    CHECK(s.checkpoint_bytes > 0);
  }
  CHECK(count_checkpoints(fs, "/data") == 1);
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &m).ok());
  CHECK(m.log->recovery().checkpoint_sequence > 0);
  CHECK(m.log->recovery().records_replayed < 200);
  CHECK(dump(*m.owner->snapshot()) == reference(*p, 200));
  CHECK(m.owner->stats().durability.checkpoint_age_seconds >= 0);  // the one found on disk
  CheckpointInfo info;
  REQUIRE(m.log->checkpoint_now(&info) == "");
  auto snap = m.owner->snapshot();
  CHECK(info.rows == uint64_t(snap->list(0).count() + snap->list(1).count()));
}

TEST_CASE("a checkpoint by time: written when events came since the last one") {
  auto p = compile(kAccounts);
  FaultFileSystem fs;
  DurableOptions o = manual_checkpoints();
  o.checkpoint_seconds = 0.05;
  std::atomic<int> written{0};
  o.on_checkpoint = [&](const std::string& error, const CheckpointInfo&, uint64_t) {
    if (error.empty()) ++written;
  };
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, o, &m).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(written.load() == 0);  // nothing new: no checkpoint
  REQUIRE(call(*m.owner, workload_call(*p, 1)).kind == EventReply::Kind::Committed);
  // up to 10 s: under a sanitizer on a loaded machine the checkpoint thread may wake late
  for (int i = 0; i < 1000 && written.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(written.load() == 1);
  CHECK(m.owner->stats().durability.checkpoint_sequence == 1);
  REQUIRE(m.owner->close() == "");
  CHECK(count_checkpoints(fs, "/data") == 1);
}

TEST_CASE("a checkpoint on a nearly full disk: no temporary file, the log goes on, the retries back off") {
  // Issue 31, item 11: on a full disk a failed checkpoint left its .tmp file, the log's next write
  // then failed, and a new .tmp was written after every batch.
  auto p = compile(kAccounts);
  FaultFileSystem fs;
  DurableOptions o = manual_checkpoints();
  o.log.segment_bytes = 4096;         // the room a checkpoint must leave to the log
  o.checkpoint_log_bytes = 100;       // asks for a checkpoint after (nearly) every batch
  o.checkpoint_retry_seconds = 3600;  // no retry can come within the test
  o.checkpoint_retry_max_seconds = 7200;
  std::mutex mu;
  std::string last_error;
  double retry = 0;
  std::atomic<int> attempts{0};
  o.on_checkpoint = [&](const std::string& error, const CheckpointInfo& info, uint64_t) {
    std::lock_guard<std::mutex> lock(mu);
    last_error = error;
    retry = info.retry_seconds;
    ++attempts;
  };
  Opened m;
  REQUIRE(open_owner(fs, "/data", *p, o, &m).ok());
  // 4,000 bytes free: room for the log's records below (20 of about 150 bytes), less than a
  // checkpoint of the state they make (each event adds its note twice), and less than the one
  // segment a checkpoint must leave to the log.
  std::vector<std::string> names;
  uint64_t used = 0;
  REQUIRE(fs.list_dir("/data", &names).ok());
  for (auto& n : names) used += fs.contents("/data/" + n).size();
  fs.set_capacity(used + 4000);
  auto put = [&](int64_t i) {
    CAPTURE(i);
    Call c{fn(*p, "put"), {Value::of_int(i % 13), Value::of_int(i), Value::of_text(std::string(100, 'n'))}};
    REQUIRE(call(*m.owner, c).kind == EventReply::Kind::Committed);  // the log is never starved
  };
  for (int64_t i = 0; i < 10; ++i) put(i);
  for (int i = 0; i < 1000 && attempts.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(attempts.load() >= 1);
  for (int64_t i = 10; i < 20; ++i) put(i);  // each batch asks for a checkpoint again
  DurabilityStats s = m.owner->stats().durability;
  CHECK(attempts.load() == 1);  // one attempt, then it waits (an hour here) however much the log grows
  CHECK(s.checkpoint_failures == 1);
  CHECK(s.checkpoint_failures_in_row == 1);
  CHECK(s.checkpoint_retry_seconds > 3000);
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(retry == 3600);
    CHECK(last_error.find("checkpoint stopped: ") != std::string::npos);
    CHECK(last_error.find(" are kept for the event log") != std::string::npos);
  }
  REQUIRE(fs.list_dir("/data", &names).ok());
  for (auto& n : names) CHECK(n.find(".tmp") == std::string::npos);
  CHECK(m.owner->healthy());
  REQUIRE(m.owner->close() == "");
  fs.set_capacity(UINT64_MAX);
  Opened again;
  REQUIRE(open_owner(fs, "/data", *p, manual_checkpoints(), &again).ok());
  CHECK(again.log->recovery().last_sequence == 20);
}

TEST_CASE("the checkpoint thread's retry delay doubles from the first to the largest") {
  DurableOptions o;
  o.checkpoint_retry_seconds = 1;
  o.checkpoint_retry_max_seconds = 300;
  CHECK(checkpoint_retry_delay(o, 1) == 1);
  CHECK(checkpoint_retry_delay(o, 2) == 2);
  CHECK(checkpoint_retry_delay(o, 5) == 16);
  CHECK(checkpoint_retry_delay(o, 9) == 256);
  CHECK(checkpoint_retry_delay(o, 10) == 300);
  CHECK(checkpoint_retry_delay(o, 1000000) == 300);
}

TEST_CASE("a directory written by another module is refused") {
  auto p = compile(kAccounts);
  TempDir tmp;
  {
    Opened m;
    REQUIRE(open_owner(posix_file_system(), tmp.path, *p, manual_checkpoints(), &m).ok());
    REQUIRE(call(*m.owner, workload_call(*p, 1)).kind == EventReply::Kind::Committed);
  }
  std::string changed = kAccounts;
  changed.replace(changed.find("is absent"), 9, "is missin");
  auto other = compile(changed);
  Opened m;
  Status s = open_owner(posix_file_system(), tmp.path, *other, manual_checkpoints(), &m);
  CHECK(s.error.find("this log was written by module") != std::string::npos);
}
