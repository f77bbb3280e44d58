// tests/host/test_checkpoint.cpp — checkpoints: rows of every stored list (texts as bytes, many
// blocks) read back into a fresh store; a checkpoint written on another thread from a held
// snapshot while the owner keeps writing; covered segments deleted; damage in any block, a
// truncated file, another module's or another schema's checkpoint refused with file and offset.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>

#include "host/file_fault.h"
#include "host/log_format.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

// A store with every column type, long and empty texts, and more rows than one block holds.
std::unique_ptr<rt::Store> big_store() {
  std::vector<rt::ListSchema> s = schemas();
  s.push_back({"mixed", false, {rt::ColType::Text, rt::ColType::Bool}, {rt::ColType::Num, rt::ColType::Int, rt::ColType::Text}});
  auto store = rt::make_store(s);
  for (uint64_t i = 1; i <= 3000; ++i) {
    Event e = workload_event(i);
    apply_event(*store, LogRecord{i, e.event, e.args});
  }
  store->begin();
  for (int i = 0; i < 500; ++i) {
    rt::Text* name = rt::text_new("name-" + std::to_string(i * 37 % 1000));
    rt::Text* note = rt::text_new(i == 7 ? std::string(200000, 'z') : std::string(i % 5, '\xce'));
    double num = i * 0.1 - 3;
    rt::Cell bits;
    std::memcpy(&bits, &num, 8);
    rt::Cell row[5] = {text_cell(name), rt::Cell(i % 2), bits, rt::Cell(int64_t(-i)), text_cell(note)};
    store->list(2).put(row);
    rt::text_release(name);
    rt::text_release(note);
  }
  store->commit();
  return store;
}

std::vector<rt::ListSchema> big_schemas() {
  std::vector<rt::ListSchema> s = schemas();
  s.push_back({"mixed", false, {rt::ColType::Text, rt::ColType::Bool}, {rt::ColType::Num, rt::ColType::Int, rt::ColType::Text}});
  return s;
}

const std::string kPath = "/data/" + checkpoint_name(3000);

}  // namespace

TEST_CASE("a checkpoint reads back as the same rows") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/data").ok());
  auto store = big_store();
  auto snapshot = store->publish();
  CheckpointInfo info;
  Status s = write_checkpoint(fs, "/data", kModule, *snapshot, 3000, nullptr, &info);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(info.rows == uint64_t(store->list(0).count() + store->list(1).count() + store->list(2).count()));
  CHECK(info.bytes == fs.contents(kPath).size());
  CHECK(info.bytes > info.state_bytes / 2);
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  CHECK(names == std::vector<std::string>{checkpoint_name(3000)});

  std::unique_ptr<rt::Store> back;
  uint64_t through = 0;
  s = read_checkpoint(fs, kPath, kModule, big_schemas(), &back, &through);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(through == 3000);
  CHECK(dump(*back) == dump(*snapshot));
  // The rebuilt store is an ordinary store: it takes events and snapshots.
  Event e = workload_event(3001);
  CHECK(apply_event(*back, LogRecord{3001, e.event, e.args}).empty());
  CHECK(apply_event(*store, LogRecord{3001, e.event, e.args}).empty());
  CHECK(dump(*back->publish()) == dump(*store));
}

TEST_CASE("a checkpoint is written from a held snapshot while the owner keeps writing") {
  TempDir tmp;
  FileSystem& fs = posix_file_system();
  auto store = big_store();
  auto snapshot = store->publish();
  std::string expected = dump(*snapshot);
  Status written;
  std::thread writer([&] { written = write_checkpoint(fs, tmp.path, kModule, *snapshot, 3000, nullptr); });
  for (uint64_t i = 3001; i <= 6000; ++i) {
    Event e = workload_event(i);
    apply_event(*store, LogRecord{i, e.event, e.args});
    if (i % 100 == 0) store->publish();
  }
  writer.join();
  REQUIRE_MESSAGE(written.ok(), written.error);
  std::unique_ptr<rt::Store> back;
  uint64_t through = 0;
  Status s = read_checkpoint(fs, tmp.path + "/" + checkpoint_name(3000), kModule, big_schemas(), &back, &through);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(dump(*back) == expected);
}

TEST_CASE("with --retain none a checkpoint replaces older ones and deletes the log segments it covers") {
  FaultFileSystem fs;
  LogOptions log;
  log.segment_bytes = 150;
  log.retain.keep_ms = 0;
  OpenedModule m;
  REQUIRE(open_module(fs, "/data", options(log), &m).ok());
  REQUIRE(m.log->wait_durable(submit(m, 1, 10)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), 10, m.log.get()).ok());
  REQUIRE(m.log->wait_durable(submit(m, 11, 25)));
  REQUIRE(write_checkpoint(fs, "/data", kModule, *m.store->publish(), 25, m.log.get()).ok());
  REQUIRE(m.log->wait_durable(submit(m, 26, 30)));
  REQUIRE(m.log->close().ok());

  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  std::sort(names.begin(), names.end());
  REQUIRE(names.back() == "manifest");
  names.pop_back();
  REQUIRE(names.size() >= 2);
  CHECK(names[0] == checkpoint_name(25));
  for (size_t i = 1; i < names.size(); ++i) REQUIRE(parse_segment_name(names[i]));
  // The first segment left was the one being written at the second checkpoint: it holds 25.
  CHECK(*parse_segment_name(names[1]) <= 25);
  if (names.size() > 2) CHECK(*parse_segment_name(names[2]) > 25);
  CHECK(m.log->stats().segments_created > names.size() - 1);
  std::unique_ptr<rt::Store> store;
  RecoveryReport report;
  Status s = recover(fs, "/data", options(log), &store, &report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(report.checkpoint_sequence == 25);
  CHECK(report.records_replayed == 5);
  CHECK(dump(*store) == reference(30));
}

TEST_CASE("damage anywhere in a checkpoint is refused with its offset") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/data").ok());
  auto store = big_store();
  REQUIRE(write_checkpoint(fs, "/data", kModule, *store->publish(), 3000, nullptr).ok());
  const std::string good = fs.contents(kPath);
  std::unique_ptr<rt::Store> back;
  uint64_t through = 0;

  SUBCASE("a flipped byte in any block") {
    for (uint64_t offset = 5; offset + 32 < good.size(); offset += good.size() / 23) {
      CAPTURE(offset);
      fs.corrupt(kPath, offset, static_cast<char>(good[offset] ^ 0x40));
      Status s = read_checkpoint(fs, kPath, kModule, big_schemas(), &back, &through);
      CHECK(!s.ok());
      CHECK(s.error.find(kPath + ": offset ") == 0);
      CHECK((s.error.find("checksum mismatch") != std::string::npos || s.error.find("length") != std::string::npos));
      fs.corrupt(kPath, offset, good[offset]);
    }
    CHECK(read_checkpoint(fs, kPath, kModule, big_schemas(), &back, &through).ok());
  }
  SUBCASE("a damaged footer") {
    fs.corrupt(kPath, good.size() - 20, 'x');
    Status s = read_checkpoint(fs, kPath, kModule, big_schemas(), &back, &through);
    CHECK(s.error == kPath + ": offset " + std::to_string(good.size() - 32) + ": checkpoint footer missing or damaged");
  }
  SUBCASE("recovery stops at a damaged checkpoint") {
    fs.corrupt(kPath, 100, static_cast<char>(good[100] ^ 1));
    std::unique_ptr<rt::Store> s2;
    RecoveryReport report;
    OpenOptions o = options();
    o.schemas = big_schemas();
    Status s = recover(fs, "/data", o, &s2, &report);
    CHECK(s.error == kPath + ": offset 0: checkpoint block checksum mismatch");
  }
  SUBCASE("another module's checkpoint") {
    Status s = read_checkpoint(fs, kPath, 77, big_schemas(), &back, &through);
    CHECK(s.error == kPath + ": checkpoint was written by module 0x5045524d414e454e, not by this module (0x000000000000004d)");
  }
  SUBCASE("other stored lists") {
    std::vector<rt::ListSchema> other = big_schemas();
    other[2].fields[1] = rt::ColType::Bool;
    Status s = read_checkpoint(fs, kPath, kModule, other, &back, &through);
    CHECK(s.error == kPath + ": offset 0: stored list 2 ('mixed') differs from the module's ('mixed')");
    s = read_checkpoint(fs, kPath, kModule, schemas(), &back, &through);
    CHECK(s.error == kPath + ": offset 0: checkpoint has 3 stored lists, the module has 2");
  }
}

TEST_CASE("a failed checkpoint leaves no temporary file, at every fault point and on a full disk") {
  // Issue 31, item 11: on a full disk a failed checkpoint left its .tmp file (43% of a small
  // disk), which made the log's next write fail.
  auto store = big_store();
  auto snapshot = store->publish();
  auto temporaries = [](FaultFileSystem& fs) {
    std::vector<std::string> names, out;
    REQUIRE(fs.list_dir("/data", &names).ok());
    for (auto& n : names)
      if (n.find(".tmp") != std::string::npos) out.push_back(n);
    return out;
  };
  uint64_t points = 0;
  {
    FaultFileSystem fs;
    REQUIRE(fs.make_dir("/data").ok());
    REQUIRE(write_checkpoint(fs, "/data", kModule, *snapshot, 3000, nullptr).ok());
    points = fs.points();
  }
  int failed = 0;
  for (uint64_t point = 0; point < points; ++point) {
    for (Fault fault : {Fault::Fail, Fault::ShortWrite}) {
      CAPTURE(point);
      FaultFileSystem fs;
      REQUIRE(fs.make_dir("/data").ok());
      fs.arm(point, fault);
      if (!write_checkpoint(fs, "/data", kModule, *snapshot, 3000, nullptr).ok()) {
        ++failed;
        CHECK(temporaries(fs).empty());
      }
    }
  }
  CHECK(failed > 4);

  // A disk too small for the checkpoint: the write fails with ENOSPC, and the space comes back.
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/data").ok());
  fs.set_capacity(100000);
  Status s = write_checkpoint(fs, "/data", kModule, *snapshot, 3000, nullptr);
  CHECK(s.error.find(checkpoint_temp_name(3000) + ": write at offset 0 failed: No space left on device") !=
        std::string::npos);
  CHECK(temporaries(fs).empty());
  uint64_t free = 0;
  REQUIRE(fs.free_bytes("/data", &free).ok());
  CHECK(free == 100000);

  // With room kept for the log, it stops before it takes that room, having written nothing.
  fs.set_capacity(1 << 30);
  s = write_checkpoint(fs, "/data", kModule, *snapshot, 3000, nullptr, nullptr, (1 << 30) - 1000);
  CHECK(s.error == "/data/" + checkpoint_temp_name(3000) + ": checkpoint stopped: " + std::to_string((1 << 30)) +
                       " bytes free on the disk, and " + std::to_string((1 << 30) - 1000) +
                       " are kept for the event log");
  CHECK(temporaries(fs).empty());
  // and writes when the room is there
  REQUIRE(write_checkpoint(fs, "/data", kModule, *snapshot, 3000, nullptr, nullptr, 1 << 20).ok());
  std::vector<std::string> names;
  REQUIRE(fs.list_dir("/data", &names).ok());
  CHECK(names == std::vector<std::string>{checkpoint_name(3000)});
}
