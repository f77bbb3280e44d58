// tests/host/test_log.cpp — the event log: a round trip through real files, segments rolling
// and a reopened log continuing, group commit (fewer fsyncs than records under concurrency),
// poisoning (no acknowledgement after a failed write or fsync, and no retry), sync=none, and
// refusing a log written by another module.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "host/file_fault.h"
#include "host/log_format.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

std::vector<std::string> segments_in(FileSystem& fs, const std::string& dir) {
  std::vector<std::string> names, out;
  REQUIRE(fs.list_dir(dir, &names).ok());
  for (auto& n : names)
    if (parse_segment_name(n)) out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

std::string recovered_dump(FileSystem& fs, const std::string& dir, RecoveryReport* report, LogOptions log = {}) {
  std::unique_ptr<rt::Store> store;
  Status s = recover(fs, dir, options(log), &store, report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  return dump(*store);
}

// Counts fdatasync calls and can make each one slow, on top of another file system.
class CountingFileSystem final : public FileSystem {
 public:
  explicit CountingFileSystem(FileSystem& inner, int sync_micros = 0) : inner_(inner), sync_micros_(sync_micros) {}
  std::atomic<int> syncs{0};

  class CountingFile final : public File {
   public:
    CountingFile(std::unique_ptr<File> f, CountingFileSystem& fs) : f_(std::move(f)), fs_(fs) {}
    Status append(const void* d, size_t n) override { return f_->append(d, n); }
    Status write_at(uint64_t o, const void* d, size_t n) override { return f_->write_at(o, d, n); }
    Status read_at(uint64_t o, void* d, size_t n, size_t* g) override { return f_->read_at(o, d, n, g); }
    Status size(uint64_t* out) override { return f_->size(out); }
    Status truncate(uint64_t s) override { return f_->truncate(s); }
    Status datasync() override {
      ++fs_.syncs;
      if (fs_.sync_micros_) std::this_thread::sleep_for(std::chrono::microseconds(fs_.sync_micros_));
      return f_->datasync();
    }

   private:
    std::unique_ptr<File> f_;
    CountingFileSystem& fs_;
  };

  Status open(const std::string& p, OpenMode m, std::unique_ptr<File>* out) override {
    std::unique_ptr<File> f;
    Status s = inner_.open(p, m, &f);
    if (s.ok()) *out = std::make_unique<CountingFile>(std::move(f), *this);
    return s;
  }
  Status rename(const std::string& a, const std::string& b) override { return inner_.rename(a, b); }
  Status unlink(const std::string& p) override { return inner_.unlink(p); }
  Status sync_dir(const std::string& d) override { return inner_.sync_dir(d); }
  Status make_dir(const std::string& d) override { return inner_.make_dir(d); }
  Status list_dir(const std::string& d, std::vector<std::string>* n) override { return inner_.list_dir(d, n); }
  Status free_bytes(const std::string& d, uint64_t* out) override { return inner_.free_bytes(d, out); }

 private:
  FileSystem& inner_;
  int sync_micros_;
};

}  // namespace

TEST_CASE("round trip through real files, across segments and reopenings") {
  TempDir tmp;
  FileSystem& fs = posix_file_system();
  std::string dir = tmp.path + "/data";
  LogOptions log;
  log.segment_bytes = 4096;
  uint64_t next = 1;
  for (int run = 0; run < 3; ++run) {
    OpenedModule m;
    Status s = open_module(fs, dir, options(log), &m);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(m.report.last_sequence == next - 1);
    CHECK(dump(*m.store) == reference(next - 1));
    for (int batch = 0; batch < 40; ++batch) {
      uint64_t last = next + batch % 7;
      CHECK(submit(m, next, last) == last);
      next = last + 1;
    }
    CHECK(m.log->wait_durable(next - 1));
    CHECK(m.log->durable_sequence() == next - 1);
    CHECK(m.log->close().ok());
    CHECK(m.log->append(kPut, "x") == 0);  // closed
  }
  CHECK(segments_in(fs, dir).size() > 3);
  RecoveryReport report;
  CHECK(recovered_dump(fs, dir, &report, log) == reference(next - 1));
  CHECK(report.records_replayed == next - 1);
  CHECK(report.last_sequence == next - 1);
  CHECK(report.checkpoint_sequence == 0);
  CHECK(report.summary().find("recovered through sequence " + std::to_string(next - 1)) == 0);
}

TEST_CASE("every segment holds the bound and starts with its first record") {
  FaultFileSystem fs;
  LogOptions log;
  log.segment_bytes = 200;
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  uint64_t last = submit(m, 1, 30);
  REQUIRE(m.log->wait_durable(last));
  REQUIRE(m.log->close().ok());
  auto names = segments_in(fs, "/data");
  CHECK(names.size() > 5);
  uint64_t expected_first = 1;
  for (auto& name : names) {
    std::string bytes = fs.contents("/data/" + name);
    CHECK(bytes.size() <= 200);
    SegmentHeader h;
    REQUIRE(decode_segment_header(bytes, &h).empty());
    CHECK(h.module_identity == kModule);
    CHECK(h.first_sequence == expected_first);
    CHECK(*parse_segment_name(name) == expected_first);
    uint64_t offset = kSegmentHeaderBytes;
    while (offset < bytes.size()) {
      DecodedRecord r;
      REQUIRE(decode_record(bytes, offset, &r) == RecordCheck::Ok);
      CHECK(r.sequence == expected_first);
      Event e = workload_event(r.sequence);
      CHECK(r.event == e.event);
      CHECK(r.args == e.args);
      ++expected_first;
      offset += r.size;
    }
  }
  CHECK(expected_first == 31);
}

TEST_CASE("group commit: concurrent submitters share fsyncs") {
  FaultFileSystem memory;
  CountingFileSystem fs(memory, 2000);  // 2 ms per fsync, as a slow disk would
  OpenedModule m;
  std::mutex seen_mutex;
  std::vector<uint64_t> acknowledged;
  OpenOptions o = options();
  o.on_durable = [&](uint64_t durable, bool poisoned, const std::string&) {
    std::lock_guard<std::mutex> lock(seen_mutex);
    CHECK(!poisoned);
    acknowledged.push_back(durable);
  };
  REQUIRE(open_module(fs, "/data", o, &m).ok());
  int base_syncs = fs.syncs.load();
  constexpr int kThreads = 8, kEach = 25;
  std::mutex owner;  // the submitters stand in for an owner thread: one appends at a time
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        uint64_t seq;
        {
          std::lock_guard<std::mutex> lock(owner);
          uint64_t n = m.log->last_sequence() + 1;
          seq = submit(m, n, n);
        }
        CHECK(m.log->wait_durable(seq));
      }
    });
  for (auto& t : threads) t.join();
  REQUIRE(m.log->close().ok());
  LogStats stats = m.log->stats();
  CHECK(stats.records == kThreads * kEach);
  CHECK(stats.bursts < stats.records / 2);
  CHECK(fs.syncs.load() - base_syncs == static_cast<int>(stats.bursts));
  CHECK(std::is_sorted(acknowledged.begin(), acknowledged.end()));
  CHECK(acknowledged.back() == kThreads * kEach);
  RecoveryReport report;
  CHECK(recovered_dump(memory, "/data", &report) == reference(kThreads * kEach));
}

TEST_CASE("a failed write or fsync poisons the log: no acknowledgement, no retry") {
  // sync=none writes on the appending thread itself (no fsync to fail): the same must hold there.
  for (Sync sync : {Sync::Always, Sync::None})
  for (Fault fault : {Fault::Fail, Fault::ShortWrite}) {
    for (int point_after_open = 0; point_after_open < (sync == Sync::Always ? 2 : 1); ++point_after_open) {  // 0: the write, 1: the fsync
      CAPTURE(static_cast<int>(sync));
      CAPTURE(static_cast<int>(fault));
      CAPTURE(point_after_open);
      FaultFileSystem fs;
      OpenedModule m;
      std::vector<std::string> reasons;
      std::vector<uint64_t> acknowledged;
      LogOptions log;
      log.sync = sync;
      OpenOptions o = options(log);
      o.on_durable = [&](uint64_t durable, bool poisoned, const std::string& reason) {
        if (poisoned) reasons.push_back(reason);
        else acknowledged.push_back(durable);
      };
      REQUIRE(open_module(fs, "/data", o, &m).ok());
      uint64_t first = submit(m, 1, 3);
      REQUIRE(m.log->wait_durable(first));
      fs.arm(fs.points() + point_after_open, fault);
      uint64_t second = submit(m, 4, 6);
      CHECK(second == 6);
      CHECK(!m.log->wait_durable(second));
      CHECK(m.log->poisoned());
      CHECK(m.log->durable_sequence() == 3);
      CHECK(m.log->poison_reason().find("event log poisoned: /data/log-") == 0);
      CHECK(m.log->poison_reason().find("injected fault") != std::string::npos);
      uint64_t points = fs.points();
      CHECK(m.log->append(kPut, workload_event(7).args) == 0);
      Status closed = m.log->close();
      CHECK(!closed.ok());
      CHECK(closed.error == m.log->poison_reason());
      CHECK(fs.points() == points);  // nothing was written or synced again
      REQUIRE(reasons.size() == 1);
      CHECK(reasons[0] == m.log->poison_reason());
      CHECK(acknowledged == std::vector<uint64_t>{3});
      RecoveryReport report;
      if (sync == Sync::Always) {
        fs.crash();
        CHECK(recovered_dump(fs, "/data", &report) == reference(3));
      } else {
        // sync=none promises only what a crash of the process keeps: the acknowledged events,
        // and perhaps whole records of the half-written burst (never acknowledged)
        fs.restart_process();
        std::string got = recovered_dump(fs, "/data", &report);
        CHECK(report.last_sequence >= 3);
        CHECK(report.last_sequence <= 6);
        CHECK(got == reference(report.last_sequence));
      }
    }
  }
}

TEST_CASE("sync=none: the appender writes its own burst, in order, the log thread rolls segments") {
  // Appends from several threads (one at a time, as an owner would) with segments small enough
  // that some bursts must roll (the log thread's work) while others are written by the appender:
  // every record lands once, in order, acknowledgements come in order, and nothing is synced
  // except at the rolls.
  FaultFileSystem memory;
  CountingFileSystem fs(memory);
  LogOptions log;
  log.sync = Sync::None;
  log.segment_bytes = 300;
  OpenedModule m;
  std::mutex seen_mutex;
  std::vector<uint64_t> acknowledged;
  OpenOptions o = options(log);
  o.on_durable = [&](uint64_t durable, bool poisoned, const std::string&) {
    std::lock_guard<std::mutex> lock(seen_mutex);
    CHECK(!poisoned);
    acknowledged.push_back(durable);
  };
  REQUIRE(open_module(fs, "/data", o, &m).ok());
  constexpr int kThreads = 4, kEach = 40;
  std::mutex owner;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        uint64_t seq;
        {
          std::lock_guard<std::mutex> lock(owner);
          uint64_t n = m.log->last_sequence() + 1;
          seq = submit(m, n, n + static_cast<uint64_t>((t + i) % 3));  // bursts of 1 to 3 records
        }
        CHECK(m.log->wait_durable(seq));
      }
    });
  for (auto& t : threads) t.join();
  uint64_t last = m.log->last_sequence();
  REQUIRE(m.log->close().ok());
  CHECK(std::is_sorted(acknowledged.begin(), acknowledged.end()));
  REQUIRE(!acknowledged.empty());
  CHECK(acknowledged.back() == last);
  LogStats stats = m.log->stats();
  CHECK(stats.records == last);
  CHECK(stats.segments_created > 3);
  // syncs only at rolls (the old segment, the new one's header, the manifest naming it) and one at the close
  CHECK(fs.syncs.load() <= static_cast<int>(3 * stats.segments_created + 1));
  memory.crash();
  RecoveryReport report;
  CHECK(recovered_dump(memory, "/data", &report, log) == reference(last));
}

TEST_CASE("sync=none acknowledges without fsync; a clean close syncs once") {
  FaultFileSystem memory;
  CountingFileSystem fs(memory);
  LogOptions log;
  log.sync = Sync::None;
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  int base = fs.syncs.load();
  for (uint64_t i = 1; i <= 20; ++i) REQUIRE(m.log->wait_durable(submit(m, i, i)));
  CHECK(fs.syncs.load() == base);
  SUBCASE("crash: the unsynced tail is lost") {
    memory.crash();
    RecoveryReport report;
    CHECK(recovered_dump(memory, "/data", &report, log) == reference(0));
    (void)m.log->close();
  }
  SUBCASE("clean close: all kept") {
    REQUIRE(m.log->close().ok());
    CHECK(fs.syncs.load() == base + 1);
    memory.crash();
    RecoveryReport report;
    CHECK(recovered_dump(memory, "/data", &report, log) == reference(20));
  }
}

TEST_CASE("a log written by another module is refused") {
  FaultFileSystem fs;
  {
    OpenedModule m;
    REQUIRE(open_module(fs, "/data", options(), &m).ok());
    REQUIRE(m.log->wait_durable(submit(m, 1, 2)));
  }
  OpenOptions other = options();
  other.module_identity = 0x1234;
  OpenedModule m;
  Status s = open_module(fs, "/data", other, &m);
  REQUIRE(!s.ok());
  CHECK(s.error ==
        "/data/log-00000000000000000001.seg: this log was written by module 0x5045524d414e454e, not by this module "
        "(0x0000000000001234); a changed module cannot continue an old log");
}
