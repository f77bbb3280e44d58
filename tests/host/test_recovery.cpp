// tests/host/test_recovery.cpp — recovery's verdicts: a torn last record is cut and appends go
// on after it; a damaged record followed by valid ones, damage in an earlier segment, a missing
// segment (a sequence gap), an event that fails on replay all stop with the file and offset;
// progress is reported; leftover checkpoint temporaries are removed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>

#include "host/file_fault.h"
#include "host/log_format.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

std::string seg(uint64_t first) { return "/data/" + segment_name(first); }

// Writes events 1..n through a log with small segments and closes it.
void write_log(FaultFileSystem& fs, uint64_t n, uint64_t segment_bytes = 1 << 20) {
  LogOptions log;
  log.segment_bytes = segment_bytes;
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  for (uint64_t i = 1; i <= n; i += 3) REQUIRE(m.log->wait_durable(submit(m, i, std::min(n, i + 2))));
  REQUIRE(m.log->close().ok());
}

Status try_recover(FaultFileSystem& fs, std::string* state, RecoveryReport* report, OpenOptions o = options()) {
  std::unique_ptr<rt::Store> store;
  Status s = recover(fs, "/data", o, &store, report);
  if (s.ok()) *state = dump(*store);
  return s;
}

// Offsets of each record in a segment.
std::vector<uint64_t> record_offsets(const std::string& bytes) {
  std::vector<uint64_t> out;
  uint64_t offset = kSegmentHeaderBytes;
  DecodedRecord r;
  while (offset < bytes.size() && decode_record(bytes, offset, &r) == RecordCheck::Ok) {
    out.push_back(offset);
    offset += r.size;
  }
  return out;
}

void append_bytes(FaultFileSystem& fs, const std::string& path, const std::string& bytes) {
  std::unique_ptr<File> f;
  REQUIRE(fs.open(path, OpenMode::ReadWrite, &f).ok());
  REQUIRE(f->append(bytes.data(), bytes.size()).ok());
  REQUIRE(f->datasync().ok());
}

}  // namespace

TEST_CASE("a torn last record is cut, then appends continue") {
  FaultFileSystem fs;
  write_log(fs, 12);
  std::string whole = fs.contents(seg(1));
  std::string record;
  encode_record(record, 13, kPut, workload_event(13).args);
  for (size_t keep : {size_t(1), size_t(7), size_t(8), size_t(20), record.size() - 1}) {
    CAPTURE(keep);
    append_bytes(fs, seg(1), record.substr(0, keep));
    std::string state;
    RecoveryReport report;
    Status s = try_recover(fs, &state, &report);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(state == reference(12));
    CHECK(report.torn_bytes_cut == keep);
    CHECK(report.summary().find(std::to_string(keep) + " bytes of a torn tail cut") != std::string::npos);
    CHECK(fs.contents(seg(1)) == whole);
  }
  // Zeros where a record should be (a crash after the size grew but before the data landed).
  append_bytes(fs, seg(1), std::string(100, '\0'));
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(), &m).ok());
  CHECK(m.report.torn_bytes_cut == 100);
  CHECK(dump(*m.store) == reference(12));
  REQUIRE(m.log->wait_durable(submit(m, 13, 15)));
  REQUIRE(m.log->close().ok());
  std::string state;
  RecoveryReport report;
  REQUIRE(try_recover(fs, &state, &report).ok());
  CHECK(state == reference(15));
  CHECK(report.torn_bytes_cut == 0);
}

TEST_CASE("a damaged record followed by valid ones stops recovery") {
  FaultFileSystem fs;
  write_log(fs, 12);
  std::string bytes = fs.contents(seg(1));
  auto offsets = record_offsets(bytes);
  REQUIRE(offsets.size() == 12);
  for (size_t victim : {size_t(0), size_t(5), size_t(10)}) {
    for (uint64_t delta : {uint64_t(0), uint64_t(4), uint64_t(9), uint64_t(17)}) {
      uint64_t at = offsets[victim] + delta;
      CAPTURE(at);
      fs.corrupt(seg(1), at, static_cast<char>(bytes[at] ^ 0x10));
      std::string state;
      RecoveryReport report;
      Status s = try_recover(fs, &state, &report);
      REQUIRE(!s.ok());
      CHECK(s.error.find(seg(1) + ": offset " + std::to_string(offsets[victim]) + ": ") == 0);
      CHECK(s.error.find("but a valid record (sequence ") != std::string::npos);
      CHECK(s.error.find("the log is damaged, not torn") != std::string::npos);
      CHECK(fs.contents(seg(1)) == bytes.substr(0, at) + char(bytes[at] ^ 0x10) + bytes.substr(at + 1));
      fs.corrupt(seg(1), at, bytes[at]);
    }
  }
  // The same damage in the last record is a torn tail.
  fs.corrupt(seg(1), offsets[11] + 12, static_cast<char>(bytes[offsets[11] + 12] ^ 1));
  std::string state;
  RecoveryReport report;
  REQUIRE(try_recover(fs, &state, &report).ok());
  CHECK(state == reference(11));
}

TEST_CASE("damage in a segment that is not the last stops recovery") {
  FaultFileSystem fs;
  write_log(fs, 30, 200);
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  REQUIRE(names.size() > 3);
  std::string bytes = fs.contents(seg(1));
  uint64_t last_record = record_offsets(bytes).back();
  fs.corrupt(seg(1), last_record + 10, 'X');
  std::string state;
  RecoveryReport report;
  Status s = try_recover(fs, &state, &report);
  CHECK(s.error == seg(1) + ": offset " + std::to_string(last_record) +
                       ": record checksum mismatch (not the last segment: the log is damaged)");
}

TEST_CASE("a missing segment is a sequence gap") {
  FaultFileSystem fs;
  write_log(fs, 30, 200);
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() > 3);
  uint64_t missing_first = *parse_segment_name(names[1]);
  uint64_t after = *parse_segment_name(names[2]);
  REQUIRE(fs.unlink("/data/" + names[1]).ok());
  std::string state;
  RecoveryReport report;
  Status s = try_recover(fs, &state, &report);
  CHECK(s.error == seg(after) + ": offset 40: sequence gap: expected " + std::to_string(missing_first) + ", found " +
                       std::to_string(after) + "; records are missing");
}

TEST_CASE("a segment cut short while being created is removed") {
  FaultFileSystem fs;
  write_log(fs, 5);
  std::unique_ptr<File> f;
  REQUIRE(fs.open(seg(6), OpenMode::Create, &f).ok());
  std::string header = encode_segment_header(kModule, 6);
  REQUIRE(f->append(header.data(), 17).ok());
  std::string state;
  RecoveryReport report;
  REQUIRE(try_recover(fs, &state, &report).ok());
  CHECK(state == reference(5));
  CHECK(report.torn_bytes_cut == 17);
  CHECK(fs.contents(seg(6)).empty());
  // A damaged header on a segment with records is not an unfinished creation.
  write_log(fs, 5);
  fs.corrupt(seg(1), 3, 'x');
  Status s = try_recover(fs, &state, &report);
  CHECK(s.error == seg(1) + ": offset 0: not a Pure log segment (bad magic)");
}

TEST_CASE("an event that fails on replay stops recovery") {
  FaultFileSystem fs;
  write_log(fs, 6);
  OpenOptions o = options();
  o.apply = [](rt::Store& store, const LogRecord& r) -> std::string {
    if (r.sequence == 4) return "the module is not deterministic";
    return apply_event(store, r);
  };
  std::string state;
  RecoveryReport report;
  Status s = try_recover(fs, &state, &report, o);
  uint64_t offset = record_offsets(fs.contents(seg(1)))[3];
  CHECK(s.error == seg(1) + ": offset " + std::to_string(offset) + ": replaying sequence 4 (event " +
                       std::to_string(workload_event(4).event) + ") failed: the module is not deterministic");
}

TEST_CASE("progress is reported during long replays; temporaries are removed") {
  FaultFileSystem fs;
  write_log(fs, 100, 1000);
  std::unique_ptr<File> f;
  REQUIRE(fs.open("/data/" + checkpoint_temp_name(50), OpenMode::Create, &f).ok());
  REQUIRE(f->append("partial", 7).ok());
  OpenOptions o = options();
  o.progress_every = 25;
  std::vector<RecoveryProgress> seen;
  o.progress = [&](const RecoveryProgress& p) { seen.push_back(p); };
  std::string state;
  RecoveryReport report;
  REQUIRE(try_recover(fs, &state, &report, o).ok());
  CHECK(state == reference(100));
  REQUIRE(seen.size() == 4);
  for (size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].records_replayed == 25 * (i + 1));
    CHECK(seen[i].bytes_read <= seen[i].bytes_total);
    if (i) CHECK(seen[i].bytes_read > seen[i - 1].bytes_read);
  }
  CHECK(fs.contents("/data/" + checkpoint_temp_name(50)).empty());
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  for (auto& n : names) CHECK(n.find(".tmp") == std::string::npos);
  CHECK(report.records_replayed == 100);
  CHECK(report.seconds >= 0);
}

TEST_CASE("a new data directory is made durable in its parent before anything is promised") {
  FaultFileSystem fs;
  fs.arm(0, Fault::Fail);  // the first operation of opening a new directory: fsync of its parent
  OpenedModule m;
  Status s = open_module(fs, "/data", options(), &m);
  CHECK(s.error == "/: directory fsync failed: injected fault");
  REQUIRE(open_module(fs, "/data", options(), &m).ok());
  uint64_t points = fs.points();
  REQUIRE(m.log->close().ok());
  OpenedModule again;  // an existing directory: no parent fsync; the first operation syncs its last segment
  fs.arm(points, Fault::Fail);
  s = open_module(fs, "/data", options(), &again);
  CHECK(s.error == seg(1) + ": fdatasync failed: injected fault");
  REQUIRE(open_module(fs, "/data", options(), &again).ok());
}
