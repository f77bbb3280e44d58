// tests/host/test_manifest.cpp — DIR/manifest: its bytes; what it records after rolls and
// checkpoints; recovery refusing a directory that falls short of it (the newest segment, a middle
// one, every one, the checkpoint, everything, or records cut from the end deleted), naming what is
// missing; directories from before manifests opened and given one; --accept-data-loss starting
// from what is left and saying what was lost. The crash points around its updates are
// test_fault's.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>

#include "host/bytes.h"
#include "host/file_fault.h"
#include "host/log_format.h"
#include "host/manifest.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

std::string seg(uint64_t first) { return "/data/" + segment_name(first); }

LogOptions small_segments() {
  LogOptions log;
  log.segment_bytes = 230;  // records of 28 bytes and their arguments: a few per segment
  log.retain.keep_ms = 0;  // no history: the layout these tests cut into is the log recovery reads
  return log;
}

// Events 1..40 with a checkpoint through 20, in segments of 230 bytes; closed.
void build(FaultFileSystem& fs) {
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(small_segments()), &m).ok());
  for (uint64_t i = 1; i <= 20; i += 4) REQUIRE(m.log->wait_durable(submit(m, i, i + 3)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), 20, m.log.get()).ok());
  for (uint64_t i = 21; i <= 40; i += 4) REQUIRE(m.log->wait_durable(submit(m, i, i + 3)));
  REQUIRE(m.log->close().ok());
}

std::vector<uint64_t> segments(FaultFileSystem& fs) {
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  std::vector<uint64_t> out;
  for (auto& n : names)
    if (auto first = parse_segment_name(n)) out.push_back(*first);
  std::sort(out.begin(), out.end());
  return out;
}

ManifestState manifest_of(FaultFileSystem& fs) {
  bool found = false;
  ManifestState state;
  Status s = read_manifest(fs, "/data", &found, &state);
  REQUIRE_MESSAGE(s.ok(), s.error);
  REQUIRE(found);
  return state;
}

Status try_recover(FaultFileSystem& fs, RecoveryReport* report, OpenOptions o = options(small_segments())) {
  std::unique_ptr<rt::Store> store;
  return recover(fs, "/data", o, &store, report);
}

void cut_to(FaultFileSystem& fs, const std::string& path, uint64_t size) {
  std::unique_ptr<File> f;
  REQUIRE(fs.open(path, OpenMode::ReadWrite, &f).ok());
  REQUIRE(f->truncate(size).ok());
  REQUIRE(f->datasync().ok());
}

}  // namespace

TEST_CASE("the manifest's bytes: a round trip, and every way it can be damaged") {
  ManifestState a{0x1122334455667788ull, 20, 33, 32};
  std::string bytes = encode_manifest(a);
  REQUIRE(bytes.size() == kManifestBytes);
  CHECK(bytes.substr(0, 8) == "PUREMANI");
  ManifestState b;
  REQUIRE(decode_manifest(bytes, &b) == "");
  CHECK(b.module_identity == a.module_identity);
  CHECK(b.checkpoint == 20);
  CHECK(b.newest_segment == 33);
  CHECK(b.durable == 32);
  std::string damaged = bytes;
  damaged[30] ^= 1;
  CHECK(decode_manifest(damaged, &b) == "manifest checksum mismatch");
  CHECK(decode_manifest(bytes.substr(0, 50), &b) == "manifest size 50 is not 56");
  CHECK(decode_manifest(bytes.substr(0, 9), &b) == "manifest too short (9 bytes)");
  damaged = bytes;
  damaged[0] = 'X';
  CHECK(decode_manifest(damaged, &b) == "not a Pure manifest (bad magic)");
  damaged = bytes;
  damaged[8] = 2;
  CHECK(decode_manifest(damaged, &b) == "unsupported manifest version 2 (this build reads version 1)");
}

TEST_CASE("the manifest follows rolls and checkpoints") {
  FaultFileSystem fs;
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(small_segments()), &m).ok());
  ManifestState s = manifest_of(fs);  // a new directory: written with its first segment
  CHECK(s.module_identity == kModule);
  CHECK(s.checkpoint == 0);
  CHECK(s.newest_segment == 1);
  CHECK(s.durable == 0);
  REQUIRE(m.log->close().ok());
  build(fs);
  s = manifest_of(fs);
  std::vector<uint64_t> segs = segments(fs);
  REQUIRE(segs.size() >= 3);
  CHECK(s.checkpoint == 20);
  CHECK(s.newest_segment == segs.back());
  CHECK(s.durable == std::max<uint64_t>(20, segs.back() - 1));
  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  REQUIRE(try_recover(fs, &report).ok());
  CHECK(report.last_sequence == 40);
  CHECK(!report.manifest_missing);
  CHECK(report.data_loss == "");
}

TEST_CASE("a deleted newest segment is refused, naming it") {
  FaultFileSystem fs;
  build(fs);
  uint64_t newest = segments(fs).back();
  ManifestState s = manifest_of(fs);
  REQUIRE(fs.unlink(seg(newest)).ok());
  RecoveryReport report;
  Status st = try_recover(fs, &report);
  CHECK(st.error == "/data: " + segment_name(newest) + " is missing (the manifest records it; events through sequence " +
                        std::to_string(s.durable) + " were durable)");
  // open_module refuses the same way and leaves the directory as it was
  OpenedModule m;
  CHECK(open_module(fs, "/data", options(small_segments()), &m).error == st.error);
  CHECK(manifest_of(fs).newest_segment == newest);
}

TEST_CASE("a deleted middle segment is a sequence gap") {
  FaultFileSystem fs;
  build(fs);
  std::vector<uint64_t> segs = segments(fs);
  REQUIRE(segs.size() >= 3);
  REQUIRE(fs.unlink(seg(segs[1])).ok());
  RecoveryReport report;
  Status st = try_recover(fs, &report);
  CHECK(st.error.find(seg(segs[2]) + ": offset 40: sequence gap: expected " + std::to_string(segs[1]) + ", found " +
                      std::to_string(segs[2])) == 0);
}

TEST_CASE("every segment, the checkpoint, or everything deleted: each refused, naming the files") {
  FaultFileSystem fs;
  build(fs);
  ManifestState s = manifest_of(fs);
  std::string durable = "; events through sequence " + std::to_string(s.durable) + " were durable)";
  SUBCASE("every segment") {
    for (uint64_t first : segments(fs)) REQUIRE(fs.unlink(seg(first)).ok());
    RecoveryReport report;
    CHECK(try_recover(fs, &report).error ==
          "/data: " + segment_name(s.newest_segment) + " is missing (the manifest records it" + durable);
  }
  SUBCASE("the checkpoint") {
    REQUIRE(fs.unlink("/data/" + checkpoint_name(20)).ok());
    RecoveryReport report;
    CHECK(try_recover(fs, &report).error ==
          "/data: " + checkpoint_name(20) + " is missing (the manifest records it" + durable);
  }
  SUBCASE("everything but the manifest") {
    for (uint64_t first : segments(fs)) REQUIRE(fs.unlink(seg(first)).ok());
    REQUIRE(fs.unlink("/data/" + checkpoint_name(20)).ok());
    RecoveryReport report;
    CHECK(try_recover(fs, &report).error == "/data: " + checkpoint_name(20) + " and " +
                                                segment_name(s.newest_segment) +
                                                " are missing (the manifest records them" + durable);
  }
}

TEST_CASE("records cut from the end at a record boundary fall short of the durable sequence") {
  FaultFileSystem fs;
  build(fs);
  {
    OpenedModule m;  // a start records what it found: events through 40
    REQUIRE(open_module(fs, "/data", options(small_segments()), &m).ok());
    REQUIRE(m.log->close().ok());
  }
  CHECK(manifest_of(fs).durable == 40);
  // the segment holding 40, cut after its first record: invisible to the records themselves
  std::vector<uint64_t> segs = segments(fs);
  uint64_t holder = 0;
  for (uint64_t first : segs)
    if (first <= 40) holder = first;
  std::string bytes = fs.contents(seg(holder));
  DecodedRecord r;
  REQUIRE(decode_record(bytes, kSegmentHeaderBytes, &r) == RecordCheck::Ok);
  REQUIRE(r.sequence < 40);
  cut_to(fs, seg(holder), kSegmentHeaderBytes + r.size);
  for (uint64_t first : segs)
    if (first > holder) REQUIRE(fs.unlink(seg(first)).ok());  // (an empty segment the start made)
  ManifestState s = manifest_of(fs);
  s.newest_segment = holder;  // so that only the durable sequence can tell
  std::unique_ptr<File> f;
  REQUIRE(fs.open("/data/manifest", OpenMode::Create, &f).ok());
  std::string m = encode_manifest(s);
  REQUIRE(f->write_at(0, m.data(), m.size()).ok());
  REQUIRE(f->datasync().ok());
  RecoveryReport report;
  CHECK(try_recover(fs, &report).error == "/data: the log ends at sequence " + std::to_string(r.sequence) +
                                              ", but the manifest records events through sequence 40 as durable: "
                                              "records " + std::to_string(r.sequence + 1) + "..40 are missing");
}

TEST_CASE("an empty segment after missing records is a gap, with or without a manifest") {
  FaultFileSystem fs;
  build(fs);
  uint64_t newest = segments(fs).back();
  REQUIRE(fs.unlink(seg(newest)).ok());
  REQUIRE(fs.unlink("/data/manifest").ok());
  std::unique_ptr<File> f;
  REQUIRE(fs.open(seg(41), OpenMode::Create, &f).ok());
  std::string header = encode_segment_header(kModule, 41);
  REQUIRE(f->write_at(0, header.data(), header.size()).ok());
  RecoveryReport report;
  CHECK(try_recover(fs, &report).error == seg(41) + ": offset 40: sequence gap: the segment begins at sequence 41 "
                                                    "but the log before it ends at " + std::to_string(newest - 1) +
                                                    "; records are missing");
}

TEST_CASE("a directory from before manifests opens, and gets one") {
  FaultFileSystem fs;
  build(fs);
  ManifestState before = manifest_of(fs);
  REQUIRE(fs.unlink("/data/manifest").ok());
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(small_segments()), &m).ok());
  CHECK(m.report.manifest_missing);
  CHECK(m.report.last_sequence == 40);
  REQUIRE(m.log->close().ok());
  ManifestState after = manifest_of(fs);
  CHECK(after.checkpoint == before.checkpoint);
  CHECK(after.newest_segment == before.newest_segment);  // the log continues in it
  CHECK(after.durable == 40);
  OpenedModule again;
  REQUIRE(open_module(fs, "/data", options(small_segments()), &again).ok());
  CHECK(!again.report.manifest_missing);
  // a new, empty directory is not one from before manifests
  FaultFileSystem fresh;
  OpenedModule first;
  REQUIRE(open_module(fresh, "/data", options(), &first).ok());
  CHECK(!first.report.manifest_missing);
}

TEST_CASE("accept_data_loss starts from what is left, says what was lost, and the log goes on") {
  FaultFileSystem fs;
  build(fs);
  uint64_t newest = segments(fs).back();
  REQUIRE(newest > 21);
  REQUIRE(fs.unlink(seg(newest)).ok());
  OpenOptions o = options(small_segments());
  o.accept_data_loss = true;
  OpenedModule m;
  Status st = open_module(fs, "/data", o, &m);
  REQUIRE_MESSAGE(st.ok(), st.error);
  CHECK(m.report.data_loss == "/data: " + segment_name(newest) +
                                  " is missing (the manifest records it; events through sequence " +
                                  std::to_string(newest - 1) + " were durable)");
  CHECK(m.report.last_sequence == newest - 1);
  CHECK(dump(*m.store) == reference(newest - 1));
  REQUIRE(m.log->wait_durable(submit(m, newest, newest + 2)));  // the log continues at the lost sequence
  REQUIRE(m.log->close().ok());
  ManifestState s = manifest_of(fs);
  CHECK(s.newest_segment == newest);
  CHECK(s.durable == newest - 1);
  RecoveryReport report;
  REQUIRE(try_recover(fs, &report).ok());  // no longer short of its manifest
  CHECK(report.last_sequence == newest + 2);
  CHECK(report.data_loss == "");
}

TEST_CASE("a damaged manifest, or another module's, is refused; a temporary one is deleted") {
  FaultFileSystem fs;
  build(fs);
  std::string good = fs.contents("/data/manifest");
  fs.corrupt("/data/manifest", 30, static_cast<char>(good[30] ^ 4));
  RecoveryReport report;
  CHECK(try_recover(fs, &report).error == "/data/manifest: offset 0: manifest checksum mismatch");
  ManifestState s;
  REQUIRE(decode_manifest(good, &s) == "");
  s.module_identity = kModule + 1;
  std::string other = encode_manifest(s);
  for (size_t i = 0; i < other.size(); ++i) fs.corrupt("/data/manifest", i, other[i]);
  CHECK(try_recover(fs, &report).error == "/data/manifest: this data directory was written by module " +
                                              hex64(kModule + 1) + ", not by this module (" + hex64(kModule) +
                                              "); a changed module cannot continue an old log");
  for (size_t i = 0; i < good.size(); ++i) fs.corrupt("/data/manifest", i, good[i]);
  std::unique_ptr<File> f;
  REQUIRE(fs.open("/data/manifest.tmp", OpenMode::Create, &f).ok());
  REQUIRE(f->write_at(0, "half", 4).ok());
  REQUIRE(try_recover(fs, &report).ok());
  CHECK(fs.contents("/data/manifest.tmp") == "");
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  CHECK(std::count(names.begin(), names.end(), "manifest.tmp") == 0);
}

TEST_CASE("a new directory's first segment deleted: refused, with no durable events to name") {
  FaultFileSystem fs;
  {
    OpenedModule m;
    REQUIRE(open_module(fs, "/data", options(), &m).ok());
    REQUIRE(m.log->close().ok());
  }
  REQUIRE(fs.unlink(seg(1)).ok());
  RecoveryReport report;
  CHECK(try_recover(fs, &report).error == "/data: " + segment_name(1) + " is missing (the manifest records it)");
}
