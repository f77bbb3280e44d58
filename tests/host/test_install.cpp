// tests/host/test_install.cpp — install_checkpoint (host.h): a checkpoint written in one data
// directory becomes the state of another that is behind it (a cluster node catching up,
// docs/cluster.md): recovery then starts from it, the log goes on after it, and the older files
// are gone; a torn, damaged or foreign checkpoint is refused and leaves the directory as it was.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>

#include "host/file_fault.h"
#include "host/log_format.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

// Events 1..n in dir (a checkpoint through n when asked), closed.
void fill(FaultFileSystem& fs, const std::string& dir, uint64_t n, bool checkpoint) {
  OpenedModule m;
  REQUIRE(open_module(fs, dir, options(), &m).ok());
  for (uint64_t i = 1; i <= n; i += 4) REQUIRE(m.log->wait_durable(submit(m, i, std::min(n, i + 3))));
  if (checkpoint) REQUIRE(write_checkpoint(fs, dir, kModule, *m.store->publish(), n, m.log.get()).ok());
  REQUIRE(m.log->close().ok());
}

std::string recovered(FaultFileSystem& fs, const std::string& dir, RecoveryReport* report) {
  std::unique_ptr<rt::Store> store;
  Status s = recover(fs, dir, options(), &store, report);
  REQUIRE_MESSAGE(s.ok(), s.error);
  return dump(*store);
}

std::vector<std::string> names(FaultFileSystem& fs, const std::string& dir) {
  std::vector<std::string> out;
  REQUIRE(fs.list_dir(dir, &out).ok());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("a checkpoint from another directory becomes the state of one behind it; the log goes on after it") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/src").ok());
  REQUIRE(fs.make_dir("/dst").ok());
  fill(fs, "/src", 60, true);
  fill(fs, "/dst", 20, false);
  std::string bytes = fs.contents("/src/" + checkpoint_name(60));
  uint64_t through = 0;
  Status s = install_checkpoint(fs, "/dst", kModule, schemas(), bytes, &through);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(through == 60);
  // Only the checkpoint and the manifest: the older segment (events 1..20) is gone.
  CHECK(names(fs, "/dst") == std::vector<std::string>{checkpoint_name(60), "manifest"});
  RecoveryReport report;
  CHECK(recovered(fs, "/dst", &report) == reference(60));
  CHECK(report.checkpoint_sequence == 60);
  CHECK(report.last_sequence == 60);
  // The log continues at 61, and a restart replays it after the checkpoint.
  OpenedModule m;
  REQUIRE(open_module(fs, "/dst", options(), &m).ok());
  REQUIRE(m.log->wait_durable(submit(m, 61, 64)) );
  CHECK(m.log->last_sequence() == 64);
  REQUIRE(m.log->close().ok());
  CHECK(recovered(fs, "/dst", &report) == reference(64));
  CHECK(report.records_replayed == 4);
}

TEST_CASE("a checkpoint installs into an empty directory (a new node)") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/src").ok());
  REQUIRE(fs.make_dir("/new").ok());
  fill(fs, "/src", 33, true);
  uint64_t through = 0;
  Status s = install_checkpoint(fs, "/new", kModule, schemas(), fs.contents("/src/" + checkpoint_name(33)), &through);
  REQUIRE_MESSAGE(s.ok(), s.error);
  RecoveryReport report;
  CHECK(recovered(fs, "/new", &report) == reference(33));
  CHECK_FALSE(report.manifest_missing);
}

TEST_CASE("a torn, damaged or foreign checkpoint is never installed: the directory stays as it was") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/src").ok());
  REQUIRE(fs.make_dir("/dst").ok());
  fill(fs, "/src", 60, true);
  fill(fs, "/dst", 20, false);
  const std::vector<std::string> before = names(fs, "/dst");
  const std::string good = fs.contents("/src/" + checkpoint_name(60));
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  uint64_t through = 0;
  REQUIRE(fs.make_dir("/empty").ok());
  for (const std::string& bad : {good.substr(0, good.size() / 2), good.substr(0, good.size() - 1), flipped}) {
    for (const char* dir : {"/dst", "/empty"}) {
      Status s = install_checkpoint(fs, dir, kModule, schemas(), bad, &through);
      REQUIRE_FALSE(s.ok());
      CHECK_MESSAGE(s.error.find("the received checkpoint is damaged or not this module's, not installed") !=
                        std::string::npos, s.error);
    }
    CHECK(names(fs, "/dst") == before);
    CHECK(names(fs, "/empty").empty());
  }
  Status s = install_checkpoint(fs, "/dst", kModule + 1, schemas(), good, &through);
  CHECK_FALSE(s.ok());
  CHECK(names(fs, "/dst") == before);
  RecoveryReport report;
  CHECK(recovered(fs, "/dst", &report) == reference(20));
  CHECK(report.checkpoint_sequence == 0);
}
