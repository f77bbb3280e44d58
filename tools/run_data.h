// tools/run_data.h — `pure-run --data DIR`: main against durable state. Recovers DIR (checkpoint,
// then the log), runs main with every committed event appended to DIR's event log (group commit
// on the log thread), holds main's output back until the events before it are durable, makes the
// log durable before returning, and writes a checkpoint when the log has grown enough.
// Depends on host/host.h and vm/vm.h.
#pragma once
#include <cstdint>
#include <string>

#include "vm/vm.h"

namespace pure::tools {

struct DataOptions {
  std::string dir;
  bool sync_always = true;             // --sync always|none
  uint64_t checkpoint_every = 100000;  // records since the newest checkpoint that make an exit write one; 0: never
  bool accept_data_loss = false;       // --accept-data-loss: start from what is left when the manifest's files are missing
};

inline constexpr int kExitData = 4;  // the data directory could not be opened, recovered or written

// Runs main; returns pure-run's exit code (0, 3 for a runtime error in main, kExitData) after
// printing any message. options.write_output and options.on_commit are taken over.
int run_with_data(const vm::Program& program, const std::string& path, vm::RunOptions options,
                  const DataOptions& data);

}  // namespace pure::tools
