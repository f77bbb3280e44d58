// tests/host/test_backup.cpp — copies of a data directory (host/backup.h) on the fault-injecting
// file system. A directory of 26 events (small segments, three checkpoints, all history kept) is
// backed up as of sequence 20, and cut back (restored) to sequence 11, with a fault at every
// fault point of each, each kind of fault, and a machine crash after it in each way a crash treats
// unsynced bytes and directory changes. After a backup's crash, BACKUPS/b either does not exist
// or recovers to exactly events 1..20 (never a half copy under the final name), the source still
// recovers to 1..26, and a backup of the same name then succeeds. After a restore's crash, the
// directory recovers to 1..26 (as it was) or 1..11 (cut), nothing else; to 1..11 whenever the
// restore reported success. Also: a backup and a restore without faults, their refusals, and a
// file the fault system cannot link is copied.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>

#include "fault_support.h"
#include "host/backup.h"
#include "host/file_fault.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

constexpr uint64_t kEvents = 26;
constexpr uint64_t kBackupAt = 20;
constexpr uint64_t kRestoreTo = 11;

LogOptions small_segments() {
  LogOptions log;
  log.segment_bytes = 160;
  log.retain.keep_ms = Retention::kForever;  // all history: the restore can go back before the newest checkpoint
  return log;
}

// The directory /data/m: events 1..26 in small batches, a checkpoint after events 6, 16 and 24.
void make_directory(FaultFileSystem& fs) {
  REQUIRE(fs.make_dir("/data").ok());
  OpenedModule m;
  Status s = open_module(fs, "/data/m", options(small_segments()), &m);
  REQUIRE_MESSAGE(s.ok(), s.error);
  uint64_t next = 1;
  for (uint64_t last : {3ull, 6ull, 10ull, 16ull, 20ull, 24ull, 26ull}) {
    REQUIRE(submit(m, next, last) == last);
    REQUIRE(m.log->wait_durable(last));
    next = last + 1;
    if (last == 6 || last == 16 || last == 24)
      REQUIRE(write_checkpoint(fs, "/data/m", kModule, *m.store->publish(), last, m.log.get()).ok());
  }
  REQUIRE(m.log->close().ok());
  REQUIRE(fs.make_dir("/backups").ok());
}

// Recovers dir (read only but for a torn tail) and returns its state, or "error: ..." .
std::string recovered(FaultFileSystem& fs, const std::string& dir, uint64_t* last = nullptr) {
  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  Status s = recover(fs, dir, options(small_segments()), &store, &report);
  if (!s.ok()) return "error: " + s.error;
  if (last) *last = report.last_sequence;
  return dump(*store);
}

bool is_dir(FaultFileSystem& fs, const std::string& dir) {
  std::vector<std::string> names;
  return fs.list_dir(dir, &names).ok();
}

const CrashMode kCrashes[] = {{0, false, 0}, {1u << 20, false, 0}, {0, false, 1}, {0, false, 2}};

}  // namespace

TEST_CASE("a backup without faults: exactly events 1..20, the source untouched; its refusals") {
  FaultFileSystem fs;
  make_directory(fs);
  CopyReport report;
  CopyProblem problem = CopyProblem::None;
  Status s = backup_data_dir(fs, "/data/m", "/backups", "b", "m", kBackupAt, &report, &problem);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(report.sequence == kBackupAt);
  CHECK(report.checkpoint == 16);
  CHECK(report.oldest == 0);
  CHECK(report.linked > 0);      // checkpoints and sealed segments
  CHECK(report.copied == 1);     // the segment holding 20, up to its record
  CHECK(report.files == report.linked + report.copied + 1);
  CHECK(!is_dir(fs, "/backups/b.partial"));
  uint64_t last = 0;
  CHECK(recovered(fs, "/backups/b/m", &last) == reference(kBackupAt));
  CHECK(last == kBackupAt);
  CHECK(recovered(fs, "/data/m") == reference(kEvents));
  // the name is taken; bad names; a sequence beyond the log
  s = backup_data_dir(fs, "/data/m", "/backups", "b", "m", kBackupAt, &report, &problem);
  CHECK(problem == CopyProblem::Exists);
  CHECK(s.error == "/backups/b exists: a backup's name is used once (choose another, or delete it)");
  for (const char* bad : {"", "../b", ".b", "b/c", "b.partial", "-b"}) CHECK(!check_backup_name(bad).empty());
  CHECK(check_backup_name("nightly-2026.12.07_1") == "");
  s = backup_data_dir(fs, "/data/m", "/backups", "c", "m", kEvents + 1, &report, &problem);
  CHECK(problem == CopyProblem::Future);
  CHECK(s.error == "sequence 27 is beyond the log: /data/m's last record is sequence 26");
  CHECK(!is_dir(fs, "/backups/c"));
  CHECK(!is_dir(fs, "/backups/c.partial"));
}

TEST_CASE("a restore without faults: the cut equals a replay of 1..SEQ, the directory as it was is kept") {
  for (uint64_t to : {0ull, 5ull, 6ull, 11ull, 16ull, 25ull}) {
    CAPTURE(to);
    FaultFileSystem fs;
    make_directory(fs);
    CopyReport report;
    CopyProblem problem = CopyProblem::None;
    std::string before;
    Status s = restore_data_dir_to(fs, "/data/m", to, &report, &before, &problem);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(before == "/data/m.before-restore-26");
    uint64_t last = 99;
    CHECK(recovered(fs, "/data/m", &last) == reference(to));
    CHECK(last == to);
    CHECK(recovered(fs, before) == reference(kEvents));
  }
  FaultFileSystem fs;
  make_directory(fs);
  CopyReport report;
  CopyProblem problem = CopyProblem::None;
  std::string before;
  Status s = restore_data_dir_to(fs, "/data/m", kEvents + 1, &report, &before, &problem);
  CHECK(problem == CopyProblem::Future);
  CHECK(s.error == "sequence 27 is beyond the log: its last sequence is 26");
  s = restore_data_dir_to(fs, "/data/m", kEvents, &report, &before, &problem);
  CHECK(s.ok());
  CHECK(before.empty());  // nothing to cut
  CHECK(recovered(fs, "/data/m") == reference(kEvents));
}

TEST_CASE("every fault point of a backup: no half copy under its name, the source whole") {
  FaultFileSystem clean;
  make_directory(clean);
  const uint64_t setup = clean.points();
  CopyReport report;
  CopyProblem problem = CopyProblem::None;
  REQUIRE(backup_data_dir(clean, "/data/m", "/backups", "b", "m", kBackupAt, &report, &problem).ok());
  const uint64_t points = clean.points() - setup;
  REQUIRE(points > 10);
  const std::string want = reference(kBackupAt), source = reference(kEvents);
  int whole = 0, absent = 0;
  for (uint64_t point = 0; point < points; ++point)
    for (Fault fault : kEveryFault)
      for (const CrashMode& crash : kCrashes) {
        CAPTURE(point);
        CAPTURE(static_cast<int>(fault));
        CAPTURE(crash.keep);
        CAPTURE(crash.namespace_pick);
        FaultFileSystem fs;
        make_directory(fs);
        fs.arm(fs.points() + point, fault);
        Status s = backup_data_dir(fs, "/data/m", "/backups", "b", "m", kBackupAt, &report, &problem);
        fs.crash(crash.keep, crash.zeros, crash.namespace_pick);
        if (is_dir(fs, "/backups/b")) {
          CHECK(recovered(fs, "/backups/b/m") == want);
          ++whole;
        } else {
          CHECK(!s.ok());  // a backup that said done is there after a crash
          ++absent;
          // the next backup of that name replaces what the crash left
          Status again = backup_data_dir(fs, "/data/m", "/backups", "b", "m", kBackupAt, &report, &problem);
          REQUIRE_MESSAGE(again.ok(), again.error);
          CHECK(recovered(fs, "/backups/b/m") == want);
          CHECK(!is_dir(fs, "/backups/b.partial"));
        }
        CHECK(recovered(fs, "/data/m") == source);
      }
  CHECK(whole > 0);
  CHECK(absent > 0);
}

TEST_CASE("every fault point of a restore: the directory as it was, or cut, nothing between") {
  FaultFileSystem clean;
  make_directory(clean);
  const uint64_t setup = clean.points();
  CopyReport report;
  CopyProblem problem = CopyProblem::None;
  std::string before;
  REQUIRE(restore_data_dir_to(clean, "/data/m", kRestoreTo, &report, &before, &problem).ok());
  const uint64_t points = clean.points() - setup;
  REQUIRE(points > 10);
  const std::string cut = reference(kRestoreTo), old = reference(kEvents);
  int as_was = 0, was_cut = 0;
  for (uint64_t point = 0; point < points; ++point)
    for (Fault fault : kEveryFault)
      for (const CrashMode& crash : kCrashes) {
        CAPTURE(point);
        CAPTURE(static_cast<int>(fault));
        CAPTURE(crash.keep);
        CAPTURE(crash.namespace_pick);
        FaultFileSystem fs;
        make_directory(fs);
        fs.arm(fs.points() + point, fault);
        Status s = restore_data_dir_to(fs, "/data/m", kRestoreTo, &report, &before, &problem);
        fs.crash(crash.keep, crash.zeros, crash.namespace_pick);
        std::string state = recovered(fs, "/data/m");
        if (state == cut) ++was_cut;
        else if (state == old) ++as_was;
        else FAIL_CHECK("neither as it was nor cut: " << state);
        if (s.ok()) CHECK(state == cut);
        // the other state is not lost: the directory as it was (or the unfinished cut) is beside it
        if (state == cut && is_dir(fs, "/data/m.before-restore-26")) CHECK(recovered(fs, "/data/m.before-restore-26") == old);
        if (state == cut && is_dir(fs, "/data/m.restoring")) CHECK(recovered(fs, "/data/m.restoring") == old);
      }
  CHECK(as_was > 0);
  CHECK(was_cut > 0);
}

TEST_CASE("scheduled backups: named auto-MODULE-SEQ, listed oldest first, pruned to the newest N") {
  FaultFileSystem fs;
  make_directory(fs);
  CopyReport report;
  CopyProblem problem = CopyProblem::None;
  CHECK(scheduled_backup_name("m", 20) == "auto-m-20");
  for (uint64_t seq : {6ull, 20ull, 11ull, 26ull})
    REQUIRE(backup_data_dir(fs, "/data/m", "/backups", scheduled_backup_name("m", seq), "m", seq, &report, &problem)
                .ok());
  // others a root may hold: a person's backup, another module's, a name that only looks alike
  REQUIRE(backup_data_dir(fs, "/data/m", "/backups", "mine", "m", 10, &report, &problem).ok());
  REQUIRE(backup_data_dir(fs, "/data/m", "/backups", "auto-m2-5", "m2", 5, &report, &problem).ok());
  REQUIRE(backup_data_dir(fs, "/data/m", "/backups", "auto-m-07", "m", 7, &report, &problem).ok());
  std::vector<ScheduledBackup> listed;
  REQUIRE(list_scheduled_backups(fs, "/backups", "m", &listed).ok());
  REQUIRE(listed.size() == 4);
  CHECK(listed[0].name == "auto-m-6");
  CHECK(listed[1].sequence == 11);
  CHECK(listed[3].name == "auto-m-26");
  std::vector<std::string> removed;
  CHECK(!prune_scheduled_backups(fs, "/backups", "m", 0, &removed).ok());
  REQUIRE(prune_scheduled_backups(fs, "/backups", "m", 2, &removed).ok());
  CHECK(removed == std::vector<std::string>{"auto-m-6", "auto-m-11"});
  REQUIRE(list_scheduled_backups(fs, "/backups", "m", &listed).ok());
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].sequence == 20);
  CHECK(recovered(fs, "/backups/auto-m-26/m") == reference(26));
  for (const char* kept : {"/backups/mine", "/backups/auto-m2-5", "/backups/auto-m-07"}) CHECK(is_dir(fs, kept));
  CHECK(!is_dir(fs, "/backups/auto-m-6.pruning"));
}

TEST_CASE("every fault point of a pruning: each backup whole under its name or gone, never half deleted") {
  auto setup = [](FaultFileSystem& fs) {
    make_directory(fs);
    CopyReport report;
    CopyProblem problem = CopyProblem::None;
    for (uint64_t seq : {6ull, 16ull, 20ull})
      REQUIRE(backup_data_dir(fs, "/data/m", "/backups", scheduled_backup_name("m", seq), "m", seq, &report,
                              &problem).ok());
  };
  FaultFileSystem clean;
  setup(clean);
  const uint64_t before = clean.points();
  std::vector<std::string> removed;
  REQUIRE(prune_scheduled_backups(clean, "/backups", "m", 1, &removed).ok());
  const uint64_t points = clean.points() - before;
  REQUIRE(points > 4);
  int pruned = 0, partly = 0;
  for (uint64_t point = 0; point < points; ++point)
    for (Fault fault : kEveryFault)
      for (const CrashMode& crash : kCrashes) {
        CAPTURE(point);
        CAPTURE(static_cast<int>(fault));
        CAPTURE(crash.keep);
        CAPTURE(crash.namespace_pick);
        FaultFileSystem fs;
        setup(fs);
        fs.arm(fs.points() + point, fault);
        Status s = prune_scheduled_backups(fs, "/backups", "m", 1, &removed);
        fs.crash(crash.keep, crash.zeros, crash.namespace_pick);
        // whatever is still named as a backup recovers whole; the newest is never touched
        std::vector<ScheduledBackup> listed;
        REQUIRE(list_scheduled_backups(fs, "/backups", "m", &listed).ok());
        REQUIRE(!listed.empty());
        CHECK(listed.back().sequence == 20);
        for (const ScheduledBackup& b : listed)
          CHECK(recovered(fs, "/backups/" + b.name + "/m") == reference(b.sequence));
        if (s.ok()) CHECK(listed.size() == 1);  // the renames were durable before it said done
        (listed.size() == 1 ? pruned : partly) += 1;
        // the next pruning finishes the work, leftovers included
        Status again = prune_scheduled_backups(fs, "/backups", "m", 1, &removed);
        REQUIRE_MESSAGE(again.ok(), again.error);
        REQUIRE(list_scheduled_backups(fs, "/backups", "m", &listed).ok());
        CHECK(listed.size() == 1);
        std::vector<std::string> names;
        REQUIRE(fs.list_dir("/backups", &names).ok());
        CHECK(names == std::vector<std::string>{"auto-m-20"});
      }
  CHECK(pruned > 0);
  CHECK(partly > 0);
}
