// tools/run_as_of.h — `pure-run --data DIR --as-of SEQ FILE`: main run against the state DIR held
// at sequence SEQ (host/as_of.h: the checkpoint at or before it, the log replayed up to it with each
// record's own version's code), in memory and read only: no lock, nothing recovered, appended,
// checkpointed or upgraded in DIR, so it runs beside a server on the same directory. The events
// main calls change only that copy, and are forgotten at exit. See docs/history.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host/versions.h"
#include "runtime/store.h"
#include "vm/vm.h"

namespace pure::tools {

struct AsOfRun {
  std::string dir;
  uint64_t sequence = 0;
  std::string source;       // FILE's text: it must be the directory's running version
  host::SchemaSpec schema;  // FILE's stored lists
  bool has_migrate = false;  // FILE has a migrate block: replay runs it where the log upgraded to FILE's version
  std::vector<std::pair<uint32_t, std::string>> files;  // FILE's sources, for the migrate block's messages
};

// The state of options.dir as of options.sequence, for FILE's program: 0 with *store set, else
// pure-run's exit code after printing why: 4 (kExitData) for a directory that cannot be read as of
// that sequence (past its retention: the oldest sequence it can be; beyond its log: where it ends;
// damage: the file and offset; another module's; FILE not its running version).
int load_as_of(const vm::Program& program, const std::string& path, const AsOfRun& options,
               std::unique_ptr<rt::Store>* store);

// `pure-run --data DIR --verify FILE` (a backup's copy, or any directory not being written):
// host::verify_directory, printing what it checked, one line each, then "DIR: verified"; 0, or 4
// (kExitData) with the first damage found (its file and offset) on stderr. Read only.
int verify_data(const vm::Program& program, const std::string& path, const AsOfRun& options);

// `pure-run --data DIR --restore-to SEQ FILE`: cuts DIR back to the state as of sequence
// options.sequence (host::restore_data_dir_to: built beside DIR, exchanged with it in one step, the
// former DIR kept as DIR.before-restore-N), holding DIR's lock meanwhile; prints what it did. 0, or 4
// (kExitData) for a sequence beyond the log or past retention, a directory in use or damaged.
int restore_data(const vm::Program& program, const std::string& path, const AsOfRun& options);

}  // namespace pure::tools
