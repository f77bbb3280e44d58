// vm/vm.h — the virtual machine's interface: run a module's main, call its events and queries.
// Other layers and the tools include only this header (and bytecode.h) from vm/.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/store.h"
#include "vm/bytecode.h"

namespace pure::vm {

struct StackEntry {
  std::string function;
  Loc loc;
};

// A runtime error: what went wrong, where, and the calls that led there (innermost first).
struct RuntimeError {
  std::string message;
  Loc loc;
  std::vector<StackEntry> stack;
  std::string render(const std::string& path) const;  // FILE:LINE:COL: runtime error: ... + stack
};

struct RunOptions {
  uint64_t max_steps = 10'000'000'000ull;  // per invocation: main, and each event or query
  std::function<void(std::string_view)> write_output;  // print/write; default: stdout
  std::function<std::string()> read_input;             // input(); default: empty text
  std::vector<std::string> args;                       // main's arguments
};

// Runs the module's main against the store (its stored lists). Returns the error that ended
// it, or nothing on success. Events called by main run as transactions on the store.
std::optional<RuntimeError> run_main(const Program& program, rt::Store& store, const RunOptions& options);

// How a "step" is counted: once per loop iteration (each pass through a loop header) and once
// per call. Every engine counts the same way, so a budget stops all of them at one place.
inline constexpr const char* kStepDefinition = "one step = one loop iteration or one call";

}  // namespace pure::vm
