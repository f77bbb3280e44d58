// tests/host/test_fault.cpp — every fault point of a small workload on the fault-injecting file
// system. The workload opens a data directory, logs events in batches (waiting for each to be
// acknowledged), takes three checkpoints, with segments small enough to roll and be deleted. For
// each fault point and each kind of fault (a failed operation, a short write, a crash before the
// operation, a crash in the middle of a write) and each way a crash treats unsynced bytes (all
// lost, a torn prefix kept, a torn prefix of zeros, everything kept) and unsynced directory
// changes (none kept, or either half of them), the machine crashes and
// recovery must give the state of a replay of events 1..K where K is at least every acknowledged
// event and at most the events submitted: nothing acknowledged lost, nothing half-applied. Then
// the recovered directory takes two more events and recovers again.
//
// The same enumeration runs through the path servers use: host::Owner over open_durable, a Pure
// module's events submitted from a client thread, an event acknowledged when its reply says
// Committed, checkpoints written by the durable log from the owner's published snapshots.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "fault_support.h"
#include "host/file_fault.h"
#include "host/history.h"
#include "host/log_format.h"
#include "host/manifest.h"
#include "host_test_support.h"
#include "owner_support.h"

using namespace host_test;

namespace {

constexpr uint64_t kEvents = 26;

// Segments small enough to roll every few events, and a retention bounded by size: each
// checkpoint deletes the oldest history past 500 bytes (segments, then checkpoints that can no
// longer be replayed forward) and keeps the rest, so the enumeration crashes inside both.
LogOptions small_segments() {
  LogOptions log;
  log.segment_bytes = 160;
  log.retain.keep_ms = Retention::kForever;
  log.retain.keep_bytes = 500;
  return log;
}

// The history a crash left is whole: the records still in the directory are consecutive, from
// the oldest kept through `last`, each the workload's event with its commit time. Returns the
// oldest sequence kept.
uint64_t check_history(FaultFileSystem& fs, uint64_t last) {
  HistoryFilter all;
  all.limit = 1000;
  HistoryPage page;
  Status s = read_history(fs, "/data", kModule, all, &page);
  REQUIRE_MESSAGE(s.ok(), s.error);
  REQUIRE(!page.records.empty());
  CHECK(page.records.back().sequence == last);
  for (size_t i = 0; i < page.records.size(); ++i) {
    const HistoryRecord& r = page.records[i];
    CHECK(r.sequence == page.records.front().sequence + i);
    CHECK(r.args == workload_event(r.sequence).args);
    CHECK(r.time_ms > 0);
  }
  return page.records.front().sequence;
}

struct Outcome {
  uint64_t acknowledged = 0;
  uint64_t submitted = 0;
  int checkpoints = 0;  // written completely
};

// The workload: batches of events with checkpoints between some; stops at the first event the
// log does not acknowledge (as a host would after the log is poisoned).
Outcome run_workload(FaultFileSystem& fs, LogOptions log = small_segments()) {
  Outcome out;
  OpenedModule m;
  if (!open_module(fs, "/data", options(log), &m).ok()) return out;
  const int plan[] = {1, 3, 2, 0, 4, 1, 5, 0, 3, 2, 0, 5};  // 0: a checkpoint
  uint64_t next = 1;
  for (int step : plan) {
    if (step == 0) {
      if (write_checkpoint(fs, "/data", kModule, *m.store->publish(), out.acknowledged, m.log.get()).ok())
        ++out.checkpoints;
      continue;  // a failed checkpoint loses nothing: the log still holds every event
    }
    uint64_t last = submit(m, next, next + step - 1);
    if (last == 0) break;
    out.submitted = last;
    next = last + 1;
    if (!m.log->wait_durable(last)) break;
    out.acknowledged = last;
  }
  (void)m.log->close();  // under an injected fault it may fail: recovery is what is checked
  return out;
}

}  // namespace

TEST_CASE("every fault point of the workload: recovery keeps exactly a whole acknowledged prefix") {
  std::vector<std::string> expected;
  for (uint64_t k = 0; k <= kEvents; ++k) expected.push_back(reference(k));

  FaultFileSystem clean;
  Outcome full = run_workload(clean);
  REQUIRE(full.acknowledged == kEvents);
  REQUIRE(full.checkpoints == 3);
  const uint64_t points = clean.points();
  REQUIRE(points > 40);

  const CrashMode crashes[] = {{0, false, 0}, {9, false, 0}, {13, true, 0}, {1u << 20, false, 0}, {0, false, 1}, {0, false, 2}};
  int runs = 0, lost_unacknowledged = 0, kept_unacknowledged = 0, torn_cut = 0, history_trimmed = 0;
  at_every_fault(points, crashes, [&](FaultFileSystem& fs) { return run_workload(fs); },
                 [&](FaultFileSystem& fs, const Outcome& outcome) {
    OpenedModule m;
    Status s = open_module(fs, "/data", options(small_segments()), &m);
    REQUIRE_MESSAGE(s.ok(), s.error);
    uint64_t k = m.report.last_sequence;
    CHECK(k >= outcome.acknowledged);
    CHECK(k <= outcome.submitted);
    REQUIRE(k <= kEvents);
    CHECK(dump(*m.store) == expected[k]);
    if (k > outcome.acknowledged) ++kept_unacknowledged;
    if (k < outcome.submitted) ++lost_unacknowledged;
    if (m.report.torn_bytes_cut) ++torn_cut;

    // The recovered directory goes on: two more events, a clean close, recovery again.
    uint64_t last = submit(m, k + 1, k + 2);
    REQUIRE(last == k + 2);
    REQUIRE(m.log->wait_durable(last));
    REQUIRE(m.log->close().ok());
    fs.crash();
    std::unique_ptr<rt::Store> again;
    RecoveryReport report;
    s = recover(fs, "/data", options(small_segments()), &again, &report);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(report.last_sequence == k + 2);
    CHECK(dump(*again) == reference(k + 2));
    if (check_history(fs, k + 2) > 1) ++history_trimmed;
    ++runs;
  });
  MESSAGE(runs << " crash runs over " << points << " fault points: " << kept_unacknowledged
               << " kept unacknowledged events whole, " << lost_unacknowledged << " lost unacknowledged events, "
               << torn_cut << " cut a torn tail, " << history_trimmed << " had history trimmed by retention");
  // The enumeration reached the interesting cases, not only clean ones.
  CHECK(history_trimmed > 0);
  CHECK(history_trimmed < runs);
  CHECK(kept_unacknowledged > 0);
  CHECK(lost_unacknowledged > 0);
  CHECK(torn_cut > 0);
}

TEST_CASE("every fault point: the manifest stays true of the files, and still catches a deleted segment") {
  // The manifest is rewritten at every roll, checkpoint and start (temporary file, fdatasync,
  // rename, directory fsync). A crash at any point around those steps must leave a manifest that
  // recovery accepts (the first case shows it does), that promises no more than the files hold,
  // and that still names the newest segment, so deleting it after the crash is refused.
  FaultFileSystem clean;
  run_workload(clean);
  const uint64_t points = clean.points();
  const CrashMode crashes[] = {{0, false, 0}, {9, false, 1}, {0, false, 2}};
  int runs = 0, refused = 0;
  at_every_fault(points, crashes, [&](FaultFileSystem& fs) { return run_workload(fs); },
                 [&](FaultFileSystem& fs, const auto&) {
    // What the crash left: a manifest (unless the crash came before the first one was
    // written) that promises no checkpoint, segment or event the files do not hold.
    std::unique_ptr<rt::Store> store;
    RecoveryReport report;
    Status s = recover(fs, "/data", options(small_segments()), &store, &report);
    REQUIRE_MESSAGE(s.ok(), s.error);
    bool found = false;
    ManifestState m;
    REQUIRE(read_manifest(fs, "/data", &found, &m).ok());
    if (found) {
      CHECK(m.durable <= report.last_sequence);
      CHECK(m.checkpoint <= report.checkpoint_sequence);
    }
    // A start after the crash writes one; deleting the segment it names is then refused.
    OpenedModule opened;
    REQUIRE(open_module(fs, "/data", options(small_segments()), &opened).ok());
    REQUIRE(opened.log->close().ok());
    REQUIRE(read_manifest(fs, "/data", &found, &m).ok());
    REQUIRE(found);
    REQUIRE(fs.unlink("/data/" + segment_name(m.newest_segment)).ok());
    s = recover(fs, "/data", options(small_segments()), &store, &report);
    CHECK(s.error.find(segment_name(m.newest_segment) + " is missing (the manifest records it") != std::string::npos);
    refused += !s.ok();
    ++runs;
  });
  MESSAGE(runs << " crash runs around manifest updates over " << points << " fault points, " << refused
               << " deleted newest segments refused");
  CHECK(refused == runs);
}

TEST_CASE("a crash of the process (not the machine) loses nothing written") {
  // A killed process leaves the page cache behind: what it wrote survives, synced or not, and a
  // write cut in the middle leaves its first half in the file.
  FaultFileSystem clean;
  run_workload(clean);
  host_test::note_stride(clean.points());
  for (uint64_t point = 0; point < clean.points(); ++point) {
    uint64_t combination = 0;
    for (Fault fault : {Fault::Crash, Fault::TearCrash}) {
      if (!host_test::sampled(point, combination++)) continue;
      CAPTURE(point);
      CAPTURE(static_cast<int>(fault));
      FaultFileSystem fs;
      fs.arm(point, fault);
      Outcome outcome = run_workload(fs);
      fs.restart_process();
      std::unique_ptr<rt::Store> store;
      RecoveryReport report;
      Status s = recover(fs, "/data", options(small_segments()), &store, &report);
      REQUIRE_MESSAGE(s.ok(), s.error);
      CHECK(report.last_sequence >= outcome.acknowledged);
      CHECK(report.last_sequence <= outcome.submitted);
      CHECK(dump(*store) == reference(report.last_sequence));
    }
  }
}

TEST_CASE("sync=none: a crash of the process loses nothing acknowledged, at every fault point") {
  // With sync=none the appending thread writes most bursts itself and acknowledges them after
  // the write() alone; the log thread writes those that roll a segment. A killed process keeps
  // the page cache, so every acknowledged event must come back; a failed operation must leave a
  // whole prefix.
  LogOptions log = small_segments();
  log.sync = Sync::None;
  FaultFileSystem clean;
  run_workload(clean, log);
  host_test::note_stride(clean.points());
  for (uint64_t point = 0; point < clean.points(); ++point) {
    uint64_t combination = 0;
    for (Fault fault : {Fault::Crash, Fault::TearCrash, Fault::Fail, Fault::ShortWrite}) {
      if (!host_test::sampled(point, combination++)) continue;
      CAPTURE(point);
      CAPTURE(static_cast<int>(fault));
      FaultFileSystem fs;
      fs.arm(point, fault);
      Outcome outcome = run_workload(fs, log);
      fs.restart_process();
      std::unique_ptr<rt::Store> store;
      RecoveryReport report;
      Status s = recover(fs, "/data", options(log), &store, &report);
      REQUIRE_MESSAGE(s.ok(), s.error);
      CHECK(report.last_sequence >= outcome.acknowledged);
      CHECK(report.last_sequence <= outcome.submitted);
      CHECK(dump(*store) == reference(report.last_sequence));
    }
  }
}

// ---- the same through the owner -----------------------------------------------------------------

namespace {

constexpr uint64_t kOwnerEvents = 26;

owner_test::DurableOptions owner_small_segments() {
  owner_test::DurableOptions o = owner_test::manual_checkpoints(small_segments());
  return o;
}

// Batches submitted without waiting (the owner takes whatever has arrived), each batch's replies
// awaited; checkpoints between some. Stops at the first reply that is not Committed.
Outcome run_owner_workload(FaultFileSystem& fs, const vm::Program& p) {
  Outcome out;
  owner_test::Opened m;
  if (!owner_test::open_owner(fs, "/data", p, owner_small_segments(), &m).ok()) return out;
  const int plan[] = {1, 3, 2, 0, 4, 1, 5, 0, 3, 2, 0, 5};  // 0: a checkpoint
  uint64_t next = 1;
  bool stop = false;
  for (int step : plan) {
    if (step == 0) {
      if (m.log->checkpoint_now() == "") ++out.checkpoints;
      continue;
    }
    std::vector<std::future<owner_test::EventReply>> replies;
    for (int k = 0; k < step; ++k) {
      auto promise = std::make_shared<std::promise<owner_test::EventReply>>();
      replies.push_back(promise->get_future());
      owner_test::Call c = owner_test::workload_call(p, next++);
      m.owner->submit(c.fn, std::move(c.args), [promise](owner_test::EventReply r) { promise->set_value(std::move(r)); });
      out.submitted = next - 1;
    }
    for (auto& f : replies) {
      owner_test::EventReply r = f.get();
      if (r.kind != owner_test::EventReply::Kind::Committed) {
        stop = true;
        continue;
      }
      CHECK(!stop);  // acknowledgements are a prefix
      CHECK(r.sequence == out.acknowledged + 1);
      out.acknowledged = r.sequence;
    }
    if (stop) break;
  }
  m.owner->close();
  return out;
}

}  // namespace

TEST_CASE("every fault point through the owner: acknowledged replies survive, nothing is half-applied") {
  auto p = owner_test::compile(owner_test::kAccounts);
  std::vector<std::string> expected;
  for (uint64_t k = 0; k <= kOwnerEvents + 2; ++k) expected.push_back(owner_test::reference(*p, k));

  FaultFileSystem clean;
  Outcome full = run_owner_workload(clean, *p);
  REQUIRE(full.acknowledged == kOwnerEvents);
  REQUIRE(full.checkpoints == 3);
  const uint64_t points = clean.points() + 8;  // batches may split differently: a few more points
  REQUIRE(points > 40);

  // Two crash models (the first case above covers all six): everything unsynced lost, and a torn
  // prefix with half the unsynced directory changes kept. Each run starts three owners: under ASan
  // the enumeration takes about 30 s.
  const CrashMode crashes[] = {{0, false, 0}, {9, false, 1}};
  int runs = 0, lost_unacknowledged = 0, kept_unacknowledged = 0;
  at_every_fault(points, crashes, [&](FaultFileSystem& fs) { return run_owner_workload(fs, *p); },
                 [&](FaultFileSystem& fs, const Outcome& outcome) {
    owner_test::Opened m;
    Status s = owner_test::open_owner(fs, "/data", *p, owner_small_segments(), &m);
    REQUIRE_MESSAGE(s.ok(), s.error);
    uint64_t k = m.log->recovery().last_sequence;
    CHECK(k >= outcome.acknowledged);
    CHECK(k <= outcome.submitted);
    REQUIRE(k <= kOwnerEvents);
    CHECK(dump(*m.owner->snapshot()) == expected[k]);
    if (k > outcome.acknowledged) ++kept_unacknowledged;
    if (k < outcome.submitted) ++lost_unacknowledged;

    // The recovered module goes on: two more events, a clean close, recovery again.
    for (uint64_t i = k + 1; i <= k + 2; ++i) {
      owner_test::EventReply r = owner_test::call(*m.owner, owner_test::workload_call(*p, i));
      REQUIRE(r.kind == owner_test::EventReply::Kind::Committed);
      CHECK(r.sequence == i);
    }
    REQUIRE(m.owner->close() == "");
    fs.crash();
    owner_test::Opened again;
    s = owner_test::open_owner(fs, "/data", *p, owner_small_segments(), &again);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(again.log->recovery().last_sequence == k + 2);
    CHECK(dump(*again.owner->snapshot()) == expected[k + 2]);
    ++runs;
  });
  MESSAGE(runs << " owner crash runs over " << points << " fault points: " << kept_unacknowledged
               << " kept unacknowledged events whole, " << lost_unacknowledged << " lost unacknowledged events");
  CHECK(kept_unacknowledged > 0);
  CHECK(lost_unacknowledged > 0);
}
