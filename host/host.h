// host/host.h — durable module state. This first piece: the status type and the machine's file
// system; every file operation of host/ goes through FileSystem (host/file_io.h).
// Depends on runtime/store.h only; vm/ never includes this.
#pragma once
#include <string>

namespace pure::host {

class FileSystem;  // host/file_io.h: every file operation goes through it

// The file system of the machine (POSIX calls). Thread-safe.
FileSystem& posix_file_system();

// "" when it worked, else what failed and where ("DIR/FILE: offset N: ...").
struct Status {
  std::string error;
  bool ok() const { return error.empty(); }
  static Status failure(std::string message) { return Status{std::move(message)}; }
};

}  // namespace pure::host
