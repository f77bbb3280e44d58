// tests/host/test_audit.cpp — failed events as audit-only records (docs/history.md, "Failed
// events"; log format version 4, host/log_format.h): the record's bytes (its flag, its reason, no
// key; anything else refused), a log of committed and failed records recovered to the state of
// the committed ones alone while the failed ones keep their sequences, the audit trail showing
// them (the event filter too), every fault point of such a workload, a version 3 directory (an
// older build's) opened and continued, and the owner logging a failed event (its reply carrying
// the record's sequence) or not (DurableOptions::audit_failed off).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "fault_support.h"
#include "host/file_fault.h"
#include "host/crc32c.h"
#include "host/history.h"
#include "host/log_format.h"
#include "host_test_support.h"
#include "owner_support.h"

using namespace host_test;

namespace {

// Event i of the mixed workload is a failed one (an audit-only record, never applied) when i % 3 == 2.
bool fails(uint64_t i) { return i % 3 == 2; }
std::string reason_of(uint64_t i) { return "key " + std::to_string(i) + " is absent"; }

// The state after the committed events among 1..n.
std::string mixed_reference(uint64_t n) {
  auto store = rt::make_store(schemas());
  for (uint64_t i = 1; i <= n; ++i)
    if (!fails(i)) {
      Event e = workload_event(i);
      apply_event(*store, LogRecord{i, e.event, e.args});
    }
  return dump(*store);
}

// Appends events first..last of the mixed workload as one batch (applying the committed ones).
uint64_t submit_mixed(OpenedModule& m, uint64_t first, uint64_t last) {
  std::vector<Event> events;
  std::vector<std::string> reasons;
  for (uint64_t i = first; i <= last; ++i) {
    events.push_back(workload_event(i));
    reasons.push_back(reason_of(i));
  }
  std::vector<EventIn> in;
  for (uint64_t i = first; i <= last; ++i) {
    const Event& e = events[i - first];
    if (fails(i)) {
      in.push_back({e.event, e.args, {}, reasons[i - first], true});
    } else {
      apply_event(*m.store, LogRecord{i, e.event, e.args});
      in.push_back({e.event, e.args});
    }
  }
  return m.log->append(in);
}

HistoryPage history(FileSystem& fs, HistoryFilter filter = {}) {
  filter.limit = 100000;
  HistoryPage page;
  Status s = read_history(fs, "/data", kModule, filter, &page);
  REQUIRE_MESSAGE(s.ok(), s.error);
  return page;
}

// The records kept are consecutive through last, each the workload's event, failed or not as
// the workload says, a failed one with its reason. Returns the oldest sequence kept.
uint64_t check_mixed_history(FileSystem& fs, uint64_t last) {
  HistoryPage page = history(fs);
  REQUIRE(!page.records.empty());
  CHECK(page.records.back().sequence == last);
  for (size_t i = 0; i < page.records.size(); ++i) {
    const HistoryRecord& r = page.records[i];
    CHECK(r.sequence == page.records.front().sequence + i);
    CHECK(r.args == workload_event(r.sequence).args);
    CHECK(r.failed == fails(r.sequence));
    CHECK(r.result == (fails(r.sequence) ? reason_of(r.sequence) : std::string()));
    CHECK(r.key.empty());
  }
  return page.records.front().sequence;
}

LogOptions small_segments() {
  LogOptions log;
  log.segment_bytes = 200;
  log.retain.keep_ms = Retention::kForever;
  log.retain.keep_bytes = 600;
  return log;
}

struct Outcome {
  uint64_t acknowledged = 0;
  uint64_t submitted = 0;
};

Outcome run_mixed(FaultFileSystem& fs) {
  Outcome out;
  OpenedModule m;
  if (!open_module(fs, "/data", options(small_segments()), &m).ok()) return out;
  const int plan[] = {2, 3, 0, 1, 4, 0, 3, 2};  // 0: a checkpoint
  uint64_t next = 1;
  for (int step : plan) {
    if (step == 0) {
      (void)write_checkpoint(fs, "/data", kModule, *m.store->publish(), out.acknowledged, m.log.get());
      continue;
    }
    uint64_t last = submit_mixed(m, next, next + step - 1);
    if (last == 0) break;
    out.submitted = last;
    next = last + 1;
    if (!m.log->wait_durable(last)) break;
    out.acknowledged = last;
  }
  (void)m.log->close();
  return out;
}

}  // namespace

TEST_CASE("a failed record: its flag and reason, no key; version 3 bytes still read; anything else refused") {
  std::string seg;
  encode_record(seg, 7, 2, "ARGS", 1234, kLogVersion, {}, "key 3 is absent", true);
  encode_record(seg, 8, 2, "MORE", 1235, kLogVersion, "k", "R");
  encode_record(seg, 9, 1, "PLAIN", 1236);
  DecodedRecord r;
  REQUIRE(decode_record(seg, 0, &r) == RecordCheck::Ok);
  CHECK(r.failed);
  CHECK(r.sequence == 7);
  CHECK(r.event == 2);
  CHECK(r.time_ms == 1234);
  CHECK(r.key.empty());
  CHECK(r.result == "key 3 is absent");
  CHECK(r.args == "ARGS");
  CHECK(r.size == record_bytes(4, 0, 15, kLogVersion, true));
  uint64_t offset = r.size;
  REQUIRE(decode_record(seg, offset, &r) == RecordCheck::Ok);
  CHECK(!r.failed);
  CHECK(r.key == "k");
  CHECK(r.result == "R");
  CHECK(r.args == "MORE");
  offset += r.size;
  REQUIRE(decode_record(seg, offset, &r) == RecordCheck::Ok);
  CHECK(!r.failed);
  CHECK(r.result.empty());
  CHECK(r.args == "PLAIN");
  CHECK(offset + r.size == seg.size());

  // A version 3 record (an older build's) has no flags byte and reads as before.
  std::string v3;
  encode_record(v3, 4, 1, "OLD", 99, 3, "kk", "RES");
  REQUIRE(decode_record(v3, 0, &r, 3) == RecordCheck::Ok);
  CHECK(!r.failed);
  CHECK(r.key == "kk");
  CHECK(r.result == "RES");
  CHECK(r.args == "OLD");
  CHECK(v3.size() + 1 == record_bytes(3, 2, 3));  // version 4: one flags byte more

  // A flag this build does not know, or a failed record with a key, is refused (the checksum made
  // right again, so only the content is wrong).
  auto rechecksum = [](std::string& bytes) {
    uint32_t length = static_cast<uint32_t>(bytes.size()) - kRecordPrefixBytes;
    uint32_t crc = crc32c(0, bytes.data(), 4);
    crc = crc32c(crc, bytes.data() + kRecordPrefixBytes, length);
    for (int i = 0; i < 4; ++i) bytes[4 + i] = static_cast<char>(crc >> (8 * i));
  };
  std::string unknown;
  encode_record(unknown, 1, 0, "A", 5);
  REQUIRE(decode_record(unknown, 0, &r) == RecordCheck::Ok);
  unknown[28] = 2;  // flags: bit 1, which no build writes
  CHECK(decode_record(unknown, 0, &r) == RecordCheck::BadChecksum);  // the checksum covers the flags
  rechecksum(unknown);
  CHECK(decode_record(unknown, 0, &r) == RecordCheck::BadLength);
  std::string keyed;
  encode_record(keyed, 1, 0, "A", 5, kLogVersion, "k", "R");
  keyed[28] = 1;  // failed, with a key
  rechecksum(keyed);
  CHECK(decode_record(keyed, 0, &r) == RecordCheck::BadLength);
}

// The record layout of log_format.h written out a byte at a time, as the format's comment says:
// what encode_record must keep producing however it is written (the bytes of a log are the format).
std::string reference_record(uint64_t sequence, uint32_t event, std::string_view args, uint64_t time_ms,
                             uint32_t version, std::string_view key, std::string_view result, bool failed) {
  if (version < 3) key = result = {};
  if (failed) key = {};
  if (key.size() > 255) key = key.substr(0, 255);
  const bool has_result = version >= 3 && (!key.empty() || failed);
  std::string body;
  auto le = [&body](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) body.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  le(sequence, 8);
  le(event, 4);
  if (version >= 2) le(time_ms, 8);
  if (version >= 4) body.push_back(failed ? '\x01' : '\x00');
  if (version >= 3) {
    body.push_back(static_cast<char>(key.size()));
    body.append(key);
    if (has_result) {
      le(result.size(), 4);
      body.append(result);
    }
  }
  body.append(args);
  std::string length;
  for (int i = 0; i < 4; ++i) length.push_back(static_cast<char>((body.size() >> (8 * i)) & 0xff));
  uint32_t crc = crc32c(crc32c(0, length.data(), 4), body.data(), body.size());
  std::string out = length;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return out + body;
}

TEST_CASE("encode_record writes the bytes of the format, byte for byte, in every version") {
  // One record, pinned: a failed one (version 4), as a log of this build holds it.
  std::string one;
  encode_record(one, 7, 2, "ARGS", 1234, kLogVersion, {}, "no", true);
  const unsigned char pinned[] = {0x20, 0, 0, 0,  0, 0, 0, 0,  7, 0, 0, 0, 0, 0, 0, 0,  2, 0, 0, 0,
                                  0xd2, 4, 0, 0, 0, 0, 0, 0,  1,  0,  2, 0, 0, 0,  'n', 'o',  'A', 'R', 'G', 'S'};
  REQUIRE(one.size() == sizeof pinned);
  for (size_t i = 0; i < sizeof pinned; ++i)
    if (i < 4 || i >= 8) CHECK(static_cast<unsigned char>(one[i]) == pinned[i]);
  CHECK(one == reference_record(7, 2, "ARGS", 1234, kLogVersion, {}, "no", true));

  // Many records of every version, each appended to a buffer that already holds others.
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&x](uint64_t bound) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x % bound;
  };
  auto text = [&next](size_t n) {
    std::string t;
    for (size_t i = 0; i < n; ++i) t.push_back(static_cast<char>(next(256)));
    return t;
  };
  std::string buffer, expected;
  for (int i = 0; i < 2000; ++i) {
    uint32_t version = 1 + static_cast<uint32_t>(next(4));
    bool failed = version >= 4 && next(3) == 0;
    const size_t key_sizes[] = {0, 1, 17, 255, 300};
    std::string key = text(version >= 3 ? key_sizes[next(5)] : 0);
    std::string result = text(next(4) == 0 ? next(2000) : next(40));
    std::string args = text(next(4) == 0 ? 0 : next(300));
    uint64_t sequence = next(UINT64_MAX), time_ms = next(UINT64_MAX);
    uint32_t event = static_cast<uint32_t>(next(1u << 31));
    size_t before = buffer.size();
    encode_record(buffer, sequence, event, args, time_ms, version, key, result, failed);
    expected += reference_record(sequence, event, args, time_ms, version, key, result, failed);
    REQUIRE_MESSAGE(buffer == expected, ("record " + std::to_string(i) + ", version " + std::to_string(version)));
    CHECK(buffer.size() - before ==
          record_bytes(args.size(), std::min<size_t>(key.size(), 255), result.size(), version, failed));
  }
}

TEST_CASE("failed records keep their sequences; recovery applies only the committed ones; the trail shows both") {
  FaultFileSystem fs;
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(), &m).ok());
  REQUIRE(m.log->wait_durable(submit_mixed(m, 1, 7)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), 7, m.log.get()).ok());
  REQUIRE(m.log->wait_durable(submit_mixed(m, 8, 11)));  // 8 and 11 failed: the log ends in one
  REQUIRE(m.log->close().ok());
  CHECK(dump(*m.store) == mixed_reference(11));

  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  Status s = recover(fs, "/data", options(), &store, &report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(report.last_sequence == 11);
  CHECK(report.checkpoint_sequence == 7);
  CHECK(report.records_replayed == 2);  // 9 and 10: the failed 8 and 11 are not replayed
  CHECK(dump(*store) == mixed_reference(11));
  CHECK(mixed_reference(11) != reference(11));  // the failed events would have changed the state
  CHECK(check_mixed_history(fs, 11) == 1);

  // The event filter matches a failed record like any other.
  HistoryFilter put;
  put.event = kPut;
  HistoryPage page = history(fs, put);
  std::vector<uint64_t> failed_puts;
  for (const HistoryRecord& r : page.records) {
    CHECK(r.event == kPut);
    if (r.failed) failed_puts.push_back(r.sequence);
  }
  CHECK(failed_puts == std::vector<uint64_t>{2, 5, 8, 11});

  // The log goes on after a failed last record: the next record is 12, from a fresh start too.
  OpenedModule again;
  REQUIRE(open_module(fs, "/data", options(), &again).ok());
  CHECK(again.report.last_sequence == 11);
  REQUIRE(again.log->wait_durable(submit_mixed(again, 12, 14)));
  REQUIRE(again.log->close().ok());
  s = recover(fs, "/data", options(), &store, &report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(dump(*store) == mixed_reference(14));
  CHECK(check_mixed_history(fs, 14) == 1);
}

TEST_CASE("a directory an older build wrote (segment version 3) opens, continues in version 4 and reads") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/data").ok());
  std::string v3 = encode_segment_header(kModule, 1, 3);
  for (uint64_t i = 1; i <= 5; ++i) {
    Event e = workload_event(i);
    encode_record(v3, i, e.event, e.args, 1'600'000'000'000 + i, 3, i == 2 ? "key-2" : "", i == 2 ? "R" : "");
  }
  {
    std::unique_ptr<File> f;
    REQUIRE(fs.open("/data/" + segment_name(1), OpenMode::Create, &f).ok());
    REQUIRE(f->write_at(0, v3.data(), v3.size()).ok());
    REQUIRE(f->datasync().ok());
  }
  OpenedModule m;
  Status s = open_module(fs, "/data", options(), &m);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(m.report.last_sequence == 5);
  CHECK(dump(*m.store) == reference(5));
  // 6 to 8 of the mixed workload: 8 failed
  REQUIRE(m.log->wait_durable(submit_mixed(m, 6, 8)));
  REQUIRE(m.log->close().ok());
  CHECK(fs.contents("/data/" + segment_name(1)) == v3);  // never appended to
  SegmentHeader header;
  REQUIRE(decode_segment_header(fs.contents("/data/" + segment_name(6)), &header) == "");
  CHECK(header.version == 4);
  HistoryPage page = history(fs);
  REQUIRE(page.records.size() == 8);
  CHECK(page.records[1].key == "key-2");
  CHECK(page.records[1].result == "R");
  for (const HistoryRecord& r : page.records) CHECK(r.failed == (r.sequence == 8));
  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  s = recover(fs, "/data", options(), &store, &report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  auto expected = rt::make_store(schemas());
  for (uint64_t i = 1; i <= 7; ++i) {
    Event e = workload_event(i);
    apply_event(*expected, LogRecord{i, e.event, e.args});
  }
  CHECK(dump(*store) == dump(*expected));
  // What an older build says of a version 4 segment (it reads 1 to 3): refused by the header.
  CHECK(decode_segment_header(encode_segment_header(kModule, 1, 5), &header) ==
        "unsupported log version 5 (this build reads versions 1 to 4)");
}

TEST_CASE("every fault point of a workload with failed records: a whole acknowledged prefix, failed ones skipped") {
  FaultFileSystem clean;
  Outcome full = run_mixed(clean);
  REQUIRE(full.acknowledged == 15);
  const uint64_t points = clean.points();
  REQUIRE(points > 20);
  const CrashMode crashes[] = {{0, false, 0}, {11, false, 0}, {1u << 20, false, 0}, {0, false, 1}};
  int runs = 0, torn = 0, trimmed = 0;
  at_every_fault(points, crashes, [&](FaultFileSystem& fs) { return run_mixed(fs); },
                 [&](FaultFileSystem& fs, const Outcome& outcome) {
    OpenedModule m;
    Status s = open_module(fs, "/data", options(small_segments()), &m);
    REQUIRE_MESSAGE(s.ok(), s.error);
    uint64_t k = m.report.last_sequence;
    CHECK(k >= outcome.acknowledged);
    CHECK(k <= outcome.submitted);
    CHECK(dump(*m.store) == mixed_reference(k));
    if (m.report.torn_bytes_cut) ++torn;
    uint64_t last = submit_mixed(m, k + 1, k + 2);
    REQUIRE(last == k + 2);
    REQUIRE(m.log->wait_durable(last));
    REQUIRE(m.log->close().ok());
    fs.crash();
    std::unique_ptr<rt::Store> again;
    RecoveryReport report;
    s = recover(fs, "/data", options(small_segments()), &again, &report);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(report.last_sequence == k + 2);
    CHECK(dump(*again) == mixed_reference(k + 2));
    if (k > 0 && check_mixed_history(fs, k + 2) > 1) ++trimmed;
    ++runs;
  });
  MESSAGE(runs << " crash runs over " << points << " fault points: " << torn << " cut a torn tail, " << trimmed
               << " had history trimmed");
  CHECK(torn > 0);
  CHECK(trimmed > 0);
}

TEST_CASE("the owner logs a failed event as an audit-only record; its reply names the sequence; off: nothing") {
  using namespace owner_test;
  auto p = compile(kAccounts);
  for (bool audit : {true, false}) {
    CAPTURE(audit);
    FaultFileSystem fs;
    DurableOptions o = manual_checkpoints();
    o.audit_failed = audit;
    std::vector<Call> calls = {{fn(*p, "put"), {Value::of_int(1), Value::of_int(10), Value::of_text("a")}},
                               {fn(*p, "need"), {Value::of_int(2)}},
                               {fn(*p, "need"), {Value::of_int(1)}}};
    {
      Opened o1;
      REQUIRE(open_owner(fs, "/data", *p, o, &o1).ok());
      EventReply a = call(*o1.owner, calls[0]);
      EventReply b = call(*o1.owner, calls[1]);
      EventReply c = call(*o1.owner, calls[2]);
      CHECK(a.kind == EventReply::Kind::Committed);
      CHECK(a.sequence == 1);
      REQUIRE(b.kind == EventReply::Kind::Failed);
      CHECK(b.reason == "key 2 is absent");
      CHECK(b.sequence == (audit ? 2 : 0));
      CHECK(c.kind == EventReply::Kind::Committed);
      CHECK(c.sequence == (audit ? 3 : 2));
      CHECK(o1.owner->visible().second == c.sequence);
      REQUIRE(o1.owner->close() == "");
    }
    HistoryFilter all;
    all.limit = 100;
    HistoryPage page;
    REQUIRE(read_history(fs, "/data", 0, all, &page).ok());
    REQUIRE(page.records.size() == (audit ? 3u : 2u));
    if (audit) {
      CHECK(page.records[1].failed);
      CHECK(page.records[1].event == fn(*p, "need"));
      CHECK(page.records[1].result == "key 2 is absent");
      std::vector<Value> args;
      REQUIRE(decode_values(page.records[1].args, &args).ok());
      REQUIRE(args.size() == 1);
      CHECK(args[0].i == 2);
    }
    for (const HistoryRecord& r : page.records) CHECK(r.failed == (audit && r.sequence == 2));
    Opened o2;
    REQUIRE(open_owner(fs, "/data", *p, o, &o2).ok());
    CHECK(o2.log->recovery().last_sequence == (audit ? 3u : 2u));
    CHECK(dump(*o2.owner->visible().first) == replay(*p, calls));
    REQUIRE(o2.owner->close() == "");
  }
}
