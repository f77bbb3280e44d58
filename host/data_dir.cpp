// host/data_dir.cpp — what a data directory is before anything is read from it: the rule for a
// module's directory name inside DATA, and the one-process lock (a flock on the directory, its
// holder named in DIR/lock). pure-run --data and pure-serve both lock through lock_data_dir.
// Depends on host.h, file_io.h and POSIX (flock); nothing here touches the log or checkpoints.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "base/assert.h"
#include "base/limits.h"
#include "host/file_io.h"

namespace pure::host {

namespace {

constexpr char kHolderFile[] = "lock";

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

std::string parent_of(const std::string& dir) {
  size_t last = dir.find_last_not_of('/');
  if (last == std::string::npos) return "/";
  size_t slash = dir.rfind('/', last);
  return slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
}

// The holder named in DIR/lock, when its process is alive: "PROGRAM (pid N)"; else "".
std::string live_holder(const std::string& dir) {
  std::string text;
  if (!read_file(posix_file_system(), join_path(dir, kHolderFile), &text).ok()) return "";
  // "pid N PROGRAM\n"
  if (text.rfind("pid ", 0) != 0 || text.empty() || text.back() != '\n') return "";
  size_t space = text.find(' ', 4);
  if (space == std::string::npos) return "";
  std::string digits = text.substr(4, space - 4);
  if (digits.empty() || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos) return "";
  long pid = std::stol(digits);
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) return "";
  return text.substr(space + 1, text.size() - space - 2) + " (pid " + digits + ")";
}

}  // namespace

std::string check_module_name(std::string_view name) {
  bool plain = !name.empty() && name.size() <= limits::kModuleNameBytes && ident_start(name[0]);
  for (char c : name) plain = plain && ident_char(c);
  if (plain) return "";
  return "module name '" + std::string(name) +
         "' is not a plain identifier: a module's name (its file name without .pure) must be ASCII letters, digits "
         "and '_', not starting with a digit, at most " +
         std::to_string(limits::kModuleNameBytes) + " bytes (it names the module's directory inside --data and its URLs)";
}

DataDirLock::DataDirLock(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)) {}

DataDirLock::~DataDirLock() {
  // The holder's note goes first, while the lock still keeps others out.
  ::unlink(join_path(dir_, kHolderFile).c_str());
  ::close(fd_);
}

Status lock_data_dir(const std::string& dir, std::string_view program, std::unique_ptr<DataDirLock>* out) {
  FileSystem& fs = posix_file_system();
  std::vector<std::string> ignored;
  if (!fs.list_dir(dir, &ignored).ok()) {
    // A new data directory: its own entry must be durable before anything in it is promised.
    if (Status s = fs.make_dir(dir); !s.ok()) return s;
    if (Status s = fs.sync_dir(parent_of(dir)); !s.ok()) return s;
  }
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::failure(dir + ": cannot open: " + std::strerror(errno));
  // The lock is the flock on the directory itself (not on DIR/lock, which anyone may delete):
  // it goes with the process, however the process ends.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    ::close(fd);
    if (e != EWOULDBLOCK) return Status::failure(dir + ": cannot lock: " + std::strerror(e));
    // The holder writes its note right after it locks: give it a moment to have done so.
    std::string holder;
    for (int attempt = 0; attempt < 50 && (holder = live_holder(dir)).empty(); ++attempt)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (holder.empty()) holder = "another process (its pid is not recorded in " + join_path(dir, kHolderFile) + ")";
    return Status::failure(dir + ": in use by " + holder + ": one process at a time per data directory");
  }
  std::unique_ptr<DataDirLock> lock(new DataDirLock(fd, dir));
  // Who holds it, for the message of a process refused: written whole under a temporary name and
  // renamed, so a reader sees an old note or this one, never half of one. Not synced: after a
  // crash the lock is gone anyway, and a stale note names a process that no longer runs.
  std::vector<std::string> names;  // notes a process that died while writing one left behind
  if (fs.list_dir(dir, &names).ok())
    for (const std::string& name : names)
      if (name.size() > 9 && name.rfind("lock.", 0) == 0 && name.compare(name.size() - 4, 4, ".tmp") == 0)
        ::unlink(join_path(dir, name).c_str());
  std::string note = "pid " + std::to_string(::getpid()) + " " + std::string(program) + "\n";
  std::string temp = join_path(dir, std::string(kHolderFile) + "." + std::to_string(::getpid()) + ".tmp");
  std::unique_ptr<File> file;
  Status s = fs.open(temp, OpenMode::Create, &file);
  if (s.ok()) s = file->write_at(0, note.data(), note.size());
  file.reset();
  if (s.ok()) s = fs.rename(temp, join_path(dir, kHolderFile));
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  PURE_ASSERT(live_holder(dir) == std::string(program) + " (pid " + std::to_string(::getpid()) + ")");
  *out = std::move(lock);
  return {};
}

}  // namespace pure::host
