// tests/host/test_file_io.cpp — the file-system seam: the POSIX implementation on a temporary
// directory, and the fault-injecting one's durability model (what a crash keeps), faults and a
// full disk.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>

#include "host/file_fault.h"
#include "temp_dir.h"

using namespace pure::host;
using host_test::TempDir;

namespace {

std::string read_all(FileSystem& fs, const std::string& path) {
  std::string out;
  Status s = read_file(fs, path, &out);
  return s.ok() ? out : "<" + s.error + ">";
}

std::vector<std::string> listing(FileSystem& fs, const std::string& dir) {
  std::vector<std::string> names;
  REQUIRE(fs.list_dir(dir, &names).ok());
  std::sort(names.begin(), names.end());
  return names;
}

// The same sequence of calls works on both implementations.
void exercise(FileSystem& fs, const std::string& dir) {
  REQUIRE(fs.make_dir(dir).ok());
  std::string a = join_path(dir, "a");
  std::unique_ptr<File> f;
  REQUIRE(fs.open(a, OpenMode::Create, &f).ok());
  REQUIRE(f->append("hello", 5).ok());
  REQUIRE(f->append(" world", 6).ok());
  REQUIRE(f->write_at(0, "J", 1).ok());
  uint64_t size = 0;
  REQUIRE(f->size(&size).ok());
  CHECK(size == 11);
  char buf[16];
  size_t got = 0;
  REQUIRE(f->read_at(6, buf, 16, &got).ok());
  CHECK(std::string(buf, got) == "world");
  REQUIRE(f->truncate(5).ok());
  REQUIRE(f->datasync().ok());
  f.reset();
  CHECK(read_all(fs, a) == "Jello");
  REQUIRE(fs.sync_dir(dir).ok());
  REQUIRE(fs.rename(a, join_path(dir, "b")).ok());
  CHECK(listing(fs, dir) == std::vector<std::string>{"b"});
  REQUIRE(fs.unlink(join_path(dir, "b")).ok());
  CHECK(listing(fs, dir).empty());
  Status missing = fs.open(join_path(dir, "nothing"), OpenMode::Read, &f);
  CHECK(!missing.ok());
  CHECK(missing.error.find("nothing") != std::string::npos);
  CHECK(!fs.unlink(join_path(dir, "nothing")).ok());
  uint64_t free = 0;
  REQUIRE(fs.free_bytes(dir, &free).ok());
  CHECK(free > 0);
  CHECK(!fs.free_bytes(join_path(dir, "nothing"), &free).ok());
}

}  // namespace

TEST_CASE("POSIX file system") {
  TempDir tmp;
  REQUIRE(!tmp.path.empty());
  exercise(posix_file_system(), tmp.path + "/d");
  ::rmdir((tmp.path + "/d").c_str());
}

TEST_CASE("fault file system behaves like a file system") {
  FaultFileSystem fs;
  exercise(fs, "/d");
}

TEST_CASE("crash keeps synced bytes of durable names only") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/d").ok());
  std::unique_ptr<File> f;
  REQUIRE(fs.open("/d/a", OpenMode::Create, &f).ok());
  REQUIRE(f->append("durable", 7).ok());
  REQUIRE(f->datasync().ok());
  REQUIRE(f->append("-volatile", 9).ok());

  SUBCASE("a name never synced into its directory is gone") {
    fs.crash();
    CHECK(fs.contents("/d/a").empty());
    CHECK(listing(fs, "/d").empty());
  }
  SUBCASE("unsynced bytes are dropped") {
    REQUIRE(fs.sync_dir("/d").ok());
    fs.crash();
    CHECK(fs.contents("/d/a") == "durable");
  }
  SUBCASE("a torn write keeps a prefix of the unsynced bytes") {
    REQUIRE(fs.sync_dir("/d").ok());
    fs.crash(4);
    CHECK(fs.contents("/d/a") == "durable-vol");
  }
  SUBCASE("a torn write may read as zeros") {
    REQUIRE(fs.sync_dir("/d").ok());
    fs.crash(3, true);
    CHECK(fs.contents("/d/a") == std::string("durable") + std::string(3, '\0'));
  }
  SUBCASE("a rename not synced into the directory is undone") {
    REQUIRE(fs.sync_dir("/d").ok());
    REQUIRE(fs.rename("/d/a", "/d/b").ok());
    fs.crash();
    CHECK(listing(fs, "/d") == std::vector<std::string>{"a"});
    REQUIRE(fs.rename("/d/a", "/d/b").ok());
    REQUIRE(fs.sync_dir("/d").ok());
    fs.crash();
    CHECK(listing(fs, "/d") == std::vector<std::string>{"b"});
    CHECK(fs.contents("/d/b") == "durable");
  }
  SUBCASE("an unlink not synced into the directory is undone") {
    REQUIRE(fs.sync_dir("/d").ok());
    REQUIRE(fs.unlink("/d/a").ok());
    fs.crash();
    CHECK(fs.contents("/d/a") == "durable");
  }
}

TEST_CASE("armed faults fire at their point") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/d").ok());
  std::unique_ptr<File> f;
  REQUIRE(fs.open("/d/a", OpenMode::Create, &f).ok());  // point 0
  CHECK(fs.points() == 1);

  SUBCASE("fail changes nothing, later operations work") {
    fs.arm(1, Fault::Fail);
    Status s = f->append("abcd", 4);
    CHECK(!s.ok());
    CHECK(s.error.find("/d/a") != std::string::npos);
    CHECK(fs.contents("/d/a").empty());
    CHECK(f->append("abcd", 4).ok());
    CHECK(fs.contents("/d/a") == "abcd");
  }
  SUBCASE("a short write lands half and fails") {
    fs.arm(1, Fault::ShortWrite);
    CHECK(!f->append("abcd", 4).ok());
    CHECK(fs.contents("/d/a") == "ab");
  }
  SUBCASE("a failed fsync makes nothing durable") {
    REQUIRE(f->append("abcd", 4).ok());
    REQUIRE(fs.sync_dir("/d").ok());
    fs.arm(3, Fault::Fail);
    CHECK(!f->datasync().ok());
    fs.crash();
    CHECK(fs.contents("/d/a").empty());
  }
  SUBCASE("a crash stops every later operation") {
    fs.arm(1, Fault::TearCrash);
    CHECK(!f->append("abcdef", 6).ok());
    CHECK(fs.stopped());
    CHECK(!f->datasync().ok());
    CHECK(!fs.sync_dir("/d").ok());
    CHECK(fs.contents("/d/a") == "abc");
    fs.crash();
    CHECK(!fs.stopped());
    CHECK(listing(fs, "/d").empty());
  }
}

TEST_CASE("a crash may keep some unsynced directory changes; a process restart keeps all") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/d").ok());
  std::unique_ptr<File> f;
  for (const char* name : {"/d/a", "/d/b", "/d/c"}) {
    REQUIRE(fs.open(name, OpenMode::Create, &f).ok());
    REQUIRE(f->append("x", 1).ok());
    REQUIRE(f->datasync().ok());
  }
  SUBCASE("the first and third pending changes") {
    fs.crash(0, false, 1);
    CHECK(listing(fs, "/d") == std::vector<std::string>{"a", "c"});
    CHECK(fs.contents("/d/c") == "x");
  }
  SUBCASE("the second pending change") {
    fs.crash(0, false, 2);
    CHECK(listing(fs, "/d") == std::vector<std::string>{"b"});
  }
  SUBCASE("a process restart") {
    fs.arm(fs.points(), Fault::Crash);
    CHECK(!f->append("y", 1).ok());
    fs.restart_process();
    CHECK(listing(fs, "/d") == std::vector<std::string>{"a", "b", "c"});
    CHECK(f->append("y", 1).ok());
    CHECK(fs.contents("/d/c") == "xy");
  }
}

TEST_CASE("a full disk: a write lands what fits and fails with ENOSPC; deleting gives the room back") {
  FaultFileSystem fs;
  REQUIRE(fs.make_dir("/d").ok());
  fs.set_capacity(10);
  uint64_t free = 0;
  REQUIRE(fs.free_bytes("/d", &free).ok());
  CHECK(free == 10);
  std::unique_ptr<File> a, b;
  REQUIRE(fs.open("/d/a", OpenMode::Create, &a).ok());
  REQUIRE(a->append("123456", 6).ok());
  REQUIRE(fs.open("/d/b", OpenMode::Create, &b).ok());
  Status s = b->append("abcdef", 6);
  CHECK(s.error == "/d/b: write at offset 0 failed: No space left on device");
  CHECK(read_all(fs, "/d/b") == "abcd");
  REQUIRE(fs.free_bytes("/d", &free).ok());
  CHECK(free == 0);
  REQUIRE(a->write_at(0, "XY", 2).ok());  // overwriting takes no room
  CHECK(!a->append("7", 1).ok());
  REQUIRE(fs.unlink("/d/b").ok());
  REQUIRE(fs.free_bytes("/d", &free).ok());
  CHECK(free == 4);
  REQUIRE(a->append("7890", 4).ok());
  CHECK(read_all(fs, "/d/a") == "XY34567890");
}
