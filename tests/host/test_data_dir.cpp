// tests/host/test_data_dir.cpp — the data directory before anything is read from it: module names
// that may name a directory inside --data (plain identifiers, nothing that leaves it), and the
// one-process lock (a second holder refused with the first one's program and pid, the holder's
// note removed at release, a holder that left no note still refused).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/limits.h"
#include "host_test_support.h"

using namespace host_test;

TEST_CASE("module names are plain identifiers, so DATA/NAME stays inside DATA") {
  for (const char* good : {"shop", "bank_ledger", "_x", "A9", "x_1_y"}) {
    CAPTURE(good);
    CHECK(check_module_name(good) == "");
  }
  CHECK(check_module_name(std::string(limits::kModuleNameBytes, 'a')) == "");
  // "..pure" and "...pure" named the modules "." and ".."; the second wrote its log outside --data
  for (const char* bad : {".", "..", "", "a.b", "a-b", "a b", "9lives", "a/b", "/", "é", ".hidden", "a\nb"}) {
    CAPTURE(bad);
    std::string why = check_module_name(bad);
    CHECK(why.find("is not a plain identifier") != std::string::npos);
    CHECK(why.find("ASCII letters, digits and '_', not starting with a digit") != std::string::npos);
  }
  CHECK(check_module_name(std::string(limits::kModuleNameBytes + 1, 'a')) != "");
}

TEST_CASE("one process at a time: a second lock is refused, naming the holder's program and pid") {
  TempDir tmp;
  std::string dir = tmp.path + "/module";  // created by the lock, like a new --data directory
  std::unique_ptr<DataDirLock> first;
  REQUIRE(lock_data_dir(dir, "pure-serve", &first).ok());
  std::string note;
  REQUIRE(read_file(posix_file_system(), dir + "/lock", &note).ok());
  CHECK(note == "pid " + std::to_string(getpid()) + " pure-serve\n");

  // flock locks belong to open files: a second open of the directory conflicts even in one process
  std::unique_ptr<DataDirLock> second;
  Status s = lock_data_dir(dir, "pure-run", &second);
  REQUIRE(!s.ok());
  CHECK(s.error == dir + ": in use by pure-serve (pid " + std::to_string(getpid()) +
                       "): one process at a time per data directory");
  CHECK(second == nullptr);

  first.reset();  // released: the note goes with it
  std::vector<std::string> names;
  REQUIRE(posix_file_system().list_dir(dir, &names).ok());
  CHECK(names.empty());
  REQUIRE(lock_data_dir(dir, "pure-run", &second).ok());
  second.reset();
  ::rmdir(dir.c_str());
}

TEST_CASE("a holder that left no note, or a stale note, is still refused") {
  TempDir tmp;
  // A process that holds the flock but wrote no note (an older pure-run); the note present names
  // a process that no longer runs (left by a crash): neither is believed.
  int fd = ::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  {
    std::unique_ptr<File> f;
    REQUIRE(posix_file_system().open(tmp.path + "/lock", OpenMode::Create, &f).ok());
    std::string stale = "pid 999999999 pure-serve\n";  // above any pid_max
    REQUIRE(f->write_at(0, stale.data(), stale.size()).ok());
  }
  std::unique_ptr<DataDirLock> lock;
  Status s = lock_data_dir(tmp.path, "pure-run", &lock);
  REQUIRE(!s.ok());
  CHECK(s.error == tmp.path + ": in use by another process (its pid is not recorded in " + tmp.path +
                       "/lock): one process at a time per data directory");
  ::close(fd);
  // Once it is gone, the stale note is overwritten by the new holder's.
  REQUIRE(lock_data_dir(tmp.path, "pure-run", &lock).ok());
  std::string note;
  REQUIRE(read_file(posix_file_system(), tmp.path + "/lock", &note).ok());
  CHECK(note == "pid " + std::to_string(getpid()) + " pure-run\n");
}
