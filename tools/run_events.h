// tools/run_events.h — `pure-run --data DIR --events FILE`: the audit trail of a data directory
// as JSON lines, one record per line, each the same JSON as GET /v1/NAME/events gives for it
// (serve/history.h renders both). It only reads: no lock, no recovery, no log appended, no
// checkpoint, no upgrade, so it can run beside a server on the same directory. See docs/history.md.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "host/versions.h"
#include "vm/vm.h"

namespace pure::tools {

struct EventsOptions {
  std::string dir;
  std::string module;  // the directory's module name (default: FILE's name without ".pure")
  // The filters as given: (after|before|limit|event|since, value), each at most once.
  std::vector<std::pair<std::string, std::string>> filters;
};

// Prints the retained records of options.dir that pass the filters; returns pure-run's exit code:
// 0, 2 for a bad filter (named), 4 (kExitData) when the directory cannot be read: not a data
// directory, another module's, a damaged record (its file and offset). program and source: FILE's,
// used when FILE is the directory's running version (else that version's kept source is compiled).
int print_events(const vm::Program& program, const std::string& path, const std::string& source,
                 const EventsOptions& options);

// DIR's versions (host::read_versions) without a newest one whose upgrade record never became
// durable (a crash during the upgrade: not a version yet; the next recovery deletes it). The
// error says what could not be read.
host::Status read_logged_versions(const std::string& dir, std::vector<host::VersionFile>* versions);

}  // namespace pure::tools
