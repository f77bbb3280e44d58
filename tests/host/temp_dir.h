// tests/host/temp_dir.h — a fresh directory for tests that use the real file system.
// Depends on host/file_io.h only.
#pragma once
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "host/file_io.h"

namespace host_test {

using pure::host::posix_file_system;

// A fresh directory under the system's temporary directory, removed at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/pure-host-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    path = mkdtemp(buf.data()) ? buf.data() : "";
  }
  ~TempDir() {
    std::vector<std::string> names;
    if (posix_file_system().list_dir(path, &names).ok())
      for (auto& n : names) ::unlink((path + "/" + n).c_str());
    ::rmdir(path.c_str());
  }
};

}  // namespace host_test
