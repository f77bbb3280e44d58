// tools/run_data.h — `pure-run --data DIR`: main against durable state. Recovers DIR (checkpoint,
// then the log), runs main with every committed event appended to DIR's event log (group commit
// on the log thread), holds main's output back until the events before it are durable, makes the
// log durable before returning, and writes a checkpoint when the log has grown enough.
// Depends on host/host.h and vm/vm.h.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "host/versions.h"
#include "vm/vm.h"

namespace pure::tools {

struct DataOptions {
  std::string dir;
  bool sync_always = true;             // --sync always|none
  uint64_t checkpoint_every = 100000;  // records since the newest checkpoint that make an exit write one; 0: never
  bool accept_data_loss = false;       // --accept-data-loss: start from what is left when the manifest's files are missing
  host::Retention retain;              // --retain: the history a checkpoint keeps (docs/history.md)
  bool audit_failed = true;            // --audit-failed on|off: failed events logged as audit-only records
  // Versions (docs/upgrades.md): the source as run (kept as a version of the directory), its
  // stored lists, the module's name (default: the file's name without ".pure"), and what to do
  // when the source differs from the directory's version.
  std::string source;
  host::SchemaSpec schema;
  std::string module;
  bool upgrade = false;     // --upgrade: apply the plan
  bool allow_drop = false;  // --allow-drop: a plan that loses lists or fields may be applied
  bool plan_only = false;   // --plan: print the plan and exit
  bool has_migrate = false;  // the source has a migrate block (docs/upgrades.md, "Migrations")
  uint64_t migration_steps = 0;  // --migration-steps: its step budget at the upgrade
  // The imported files' lines in source (CompileSteps::files), for runtime errors' places.
  std::vector<std::pair<uint32_t, std::string>> files;
};

inline constexpr int kExitData = 4;  // the data directory could not be opened, recovered or written

// Runs main; returns pure-run's exit code (0, 3 for a runtime error in main, kExitData) after
// printing any message. options.write_output and options.on_commit are taken over.
int run_with_data(const vm::Program& program, const std::string& path, vm::RunOptions options,
                  const DataOptions& data);

}  // namespace pure::tools
