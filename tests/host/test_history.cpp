// tests/host/test_history.cpp — history a data directory keeps (docs/history.md): commit times in
// the records, retention by age and by size after each checkpoint (segments oldest first, then the
// checkpoints that can no longer be replayed forward, at most a few others), --retain's text,
// recovery starting from the newest checkpoint without reading history, and a directory written
// in segment format version 1 (no times) opened, continued and read.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>

#include "base/limits.h"
#include "host/file_fault.h"
#include "host/history.h"
#include "host/log_format.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

std::vector<uint64_t> numbered(FileSystem& fs, bool checkpoints) {
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  std::vector<uint64_t> out;
  for (const std::string& name : names)
    if (auto n = checkpoints ? parse_checkpoint_name(name) : parse_segment_name(name)) out.push_back(*n);
  std::sort(out.begin(), out.end());
  return out;
}

HistoryPage everything(FileSystem& fs) {
  HistoryFilter all;
  all.limit = 100000;
  HistoryPage page;
  Status s = read_history(fs, "/data", kModule, all, &page);
  REQUIRE_MESSAGE(s.ok(), s.error);
  return page;
}

}  // namespace

TEST_CASE("--retain: ages, sizes, both, all, none; anything else is refused with the rule") {
  Retention r;
  CHECK(r.describe() == "7d");  // the default: a week, any size
  REQUIRE(parse_retention("7d", &r) == "");
  CHECK(r.keep_ms == 7ull * 86400 * 1000);
  CHECK(r.keep_bytes == Retention::kForever);
  REQUIRE(parse_retention("2GiB", &r) == "");
  CHECK(r.keep_ms == Retention::kForever);
  CHECK(r.keep_bytes == 2ull << 30);
  REQUIRE(parse_retention("12h,500MiB", &r) == "");
  CHECK(r.keep_ms == 12ull * 3600 * 1000);
  CHECK(r.keep_bytes == 500ull << 20);
  CHECK(r.describe() == "12h,500MiB");
  REQUIRE(parse_retention("500MiB,90s", &r) == "");
  CHECK(r.describe() == "90s,500MiB");
  REQUIRE(parse_retention("all", &r) == "");
  CHECK(r.keeps_all());
  CHECK(r.describe() == "all");
  REQUIRE(parse_retention("none", &r) == "");
  CHECK(r.keep_ms == 0);
  CHECK(r.describe() == "none");
  for (const char* bad : {"", "7", "d", "7 d", "7x", "7d,8h", "1GiB,2GiB", "7d,1GiB,", "7d,,1GiB", "-1d",
                          "99999999999999999999d", "20000000000TiB"}) {
    CAPTURE(bad);
    Retention before = r;
    std::string why = parse_retention(bad, &r);
    CHECK(!why.empty());
    CHECK(why.find("--retain takes all, none, an age such as 7d, a size such as 2GiB") != std::string::npos);
    CHECK(r.describe() == before.describe());
  }
}

TEST_CASE("records carry their commit time; a clock stepped back holds at the last time") {
  FaultFileSystem fs;
  uint64_t now = 1'700'000'000'000;
  LogOptions log;
  log.clock = [&] { return now; };
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  REQUIRE(m.log->wait_durable(submit(m, 1, 3)));
  now += 5000;
  REQUIRE(m.log->wait_durable(submit(m, 4, 4)));
  now -= 60000;  // the wall clock steps back
  REQUIRE(m.log->wait_durable(submit(m, 5, 5)));
  REQUIRE(m.log->close().ok());
  HistoryPage page = everything(fs);
  REQUIRE(page.records.size() == 5);
  std::vector<uint64_t> times;
  for (const HistoryRecord& r : page.records) times.push_back(r.time_ms);
  CHECK(times == std::vector<uint64_t>{1'700'000'000'000, 1'700'000'000'000, 1'700'000'000'000, 1'700'000'005'000,
                                       1'700'000'005'000});
  // ... and after a restart too (the last time is recovered from the log)
  OpenedModule again;
  REQUIRE(open_module(fs, "/data", options(log), &again).ok());
  REQUIRE(again.log->wait_durable(submit(again, 6, 6)));
  REQUIRE(again.log->close().ok());
  CHECK(everything(fs).records.back().time_ms == 1'700'000'005'000);
}

TEST_CASE("by default a checkpoint keeps the history it covers; recovery starts from it without reading history") {
  FaultFileSystem fs;
  LogOptions log;
  log.segment_bytes = 150;
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  REQUIRE(m.log->wait_durable(submit(m, 1, 20)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), 20, m.log.get()).ok());
  REQUIRE(m.log->wait_durable(submit(m, 21, 30)));
  REQUIRE(m.log->close().ok());
  CHECK(numbered(fs, false).front() == 1);
  HistoryPage page = everything(fs);
  REQUIRE(page.records.size() == 30);
  CHECK(page.oldest == 1);

  // Damage inside a record of the first segment (history the checkpoint covers): recovery does not
  // read it, the audit trail does and names the place.
  std::string first = "/data/" + segment_name(1);
  std::string bytes = fs.contents(first);
  std::unique_ptr<File> f;
  REQUIRE(fs.open(first, OpenMode::ReadWrite, &f).ok());
  char flipped = static_cast<char>(bytes[kSegmentHeaderBytes + 30] ^ 0x55);
  REQUIRE(f->write_at(kSegmentHeaderBytes + 30, &flipped, 1).ok());
  REQUIRE(f->datasync().ok());
  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  Status s = recover(fs, "/data", options(log), &store, &report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(report.checkpoint_sequence == 20);
  CHECK(report.records_replayed == 10);
  CHECK(dump(*store) == reference(30));
  HistoryFilter all;
  HistoryPage damaged;
  s = read_history(fs, "/data", kModule, all, &damaged);
  CHECK(s.error == first + ": offset 40: record checksum mismatch");
  // A page that starts past the damaged segment does not read it.
  all.after = 20;
  s = read_history(fs, "/data", kModule, all, &damaged);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(damaged.records.size() == 10);
}

TEST_CASE("retention by age: segments whose records are all older go, oldest first; the newer stay") {
  FaultFileSystem fs;
  uint64_t now = 1'700'000'000'000;
  LogOptions log;
  log.segment_bytes = 150;
  log.clock = [&] { return now; };
  REQUIRE(parse_retention("1h", &log.retain) == "");
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  REQUIRE(m.log->wait_durable(submit(m, 1, 10)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), 10, m.log.get()).ok());
  CHECK(numbered(fs, false).front() == 1);  // younger than an hour: all kept
  now += 2 * 3600 * 1000;
  for (uint64_t i = 11; i <= 20; ++i) REQUIRE(m.log->wait_durable(submit(m, i, i)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), 20, m.log.get()).ok());
  REQUIRE(m.log->close().ok());
  HistoryPage page = everything(fs);
  // Records 11..20 came two hours later: kept. Of the older ones only those in the segment that
  // ends with 11's arrival stay (its end time is 11's).
  REQUIRE(!page.records.empty());
  CHECK(page.oldest > 1);
  CHECK(page.oldest <= 11);
  CHECK(page.records.back().sequence == 20);
  for (const HistoryRecord& r : page.records)
    if (r.sequence >= 11) CHECK(r.time_ms == now);
  std::vector<uint64_t> segs = numbered(fs, false);
  CHECK(segs.front() == page.oldest);
  REQUIRE(segs.size() >= 2);
  // The checkpoint at 10 can still be replayed forward (11 is kept): it stays.
  CHECK(numbered(fs, true) == std::vector<uint64_t>{10, 20});
  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  Status s = recover(fs, "/data", options(log), &store, &report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(report.checkpoint_sequence == 20);
  CHECK(dump(*store) == reference(20));
}

TEST_CASE("retention by size; older checkpoints: the oldest replayable one and the newest few") {
  FaultFileSystem fs;
  LogOptions log;
  log.segment_bytes = 150;
  REQUIRE(parse_retention("all", &log.retain) == "");
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  for (uint64_t c = 5; c <= 40; c += 5) {
    REQUIRE(m.log->wait_durable(submit(m, c - 4, c)));
    REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), c, m.log.get()).ok());
  }
  // all: every segment; checkpoints: the newest (40), the oldest (5), the kHistoryCheckpoints before 40
  static_assert(limits::kHistoryCheckpoints == 3);
  CHECK(numbered(fs, true) == std::vector<uint64_t>{5, 25, 30, 35, 40});
  CHECK(everything(fs).oldest == 1);

  // A size bound: history (covered segments and older checkpoints) trimmed oldest first to fit.
  REQUIRE(m.log->close().ok());
  REQUIRE(parse_retention("700B", &log.retain) == "");
  OpenedModule again;
  REQUIRE(open_module(fs, "/data", options(log), &again).ok());
  REQUIRE(again.log->wait_durable(submit(again, 41, 45)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *again.store->publish(), 45, again.log.get()).ok());
  REQUIRE(again.log->close().ok());
  uint64_t history_bytes = 0;
  std::vector<uint64_t> segs = numbered(fs, false);
  for (size_t i = 0; i + 1 < segs.size(); ++i)
    if (segs[i + 1] - 1 <= 45) history_bytes += fs.contents("/data/" + segment_name(segs[i])).size();
  std::vector<uint64_t> checkpoints = numbered(fs, true);
  REQUIRE(checkpoints.back() == 45);
  for (size_t i = 0; i + 1 < checkpoints.size(); ++i)
    history_bytes += fs.contents("/data/" + checkpoint_name(checkpoints[i])).size();
  CHECK(history_bytes <= 700);
  HistoryPage page = everything(fs);
  CHECK(page.oldest > 1);
  CHECK(page.records.back().sequence == 45);
  for (size_t i = 0; i + 1 < checkpoints.size(); ++i) CHECK(checkpoints[i] + 1 >= page.oldest);
}

TEST_CASE("a directory written in segment format version 1 opens, continues in version 2 and reads") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/data").ok());
  std::string v1 = encode_segment_header(kModule, 1, 1);
  for (uint64_t i = 1; i <= 5; ++i) {
    Event e = workload_event(i);
    encode_record(v1, i, e.event, e.args, 0, 1);
  }
  {
    std::unique_ptr<File> f;
    REQUIRE(fs.open("/data/" + segment_name(1), OpenMode::Create, &f).ok());
    REQUIRE(f->write_at(0, v1.data(), v1.size()).ok());
    REQUIRE(f->datasync().ok());
  }
  LogOptions log;
  log.clock = [] { return uint64_t{1'700'000'000'000}; };
  OpenedModule m;
  Status s = open_module(fs, "/data", options(log), &m);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(m.report.last_sequence == 5);
  CHECK(dump(*m.store) == reference(5));
  REQUIRE(m.log->wait_durable(submit(m, 6, 8)));
  REQUIRE(m.log->close().ok());
  CHECK(fs.contents("/data/" + segment_name(1)) == v1);  // never appended to
  SegmentHeader header;
  REQUIRE(decode_segment_header(fs.contents("/data/" + segment_name(6)), &header) == "");
  CHECK(header.version == kLogVersion);
  HistoryPage page = everything(fs);
  REQUIRE(page.records.size() == 8);
  for (const HistoryRecord& r : page.records) {
    CHECK(r.args == workload_event(r.sequence).args);
    CHECK(r.time_ms == (r.sequence <= 5 ? 0 : 1'700'000'000'000));
  }
  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  s = recover(fs, "/data", options(log), &store, &report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(dump(*store) == reference(8));
  // A version this build does not know is refused, naming both.
  std::string v9 = encode_segment_header(kModule, 1, 9);
  CHECK(decode_segment_header(v9, &header) == "unsupported log version 9 (this build reads versions 1 to 4)");
}
