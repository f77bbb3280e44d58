// vm/vm.h — the virtual machine's interface for hosts (pure-run, the durable host, pure-serve):
// run a module's main, or call one of its events or queries by name with argument values.
// Hosts include only this header (and bytecode.h) from vm/; engines also see vm/engine.h.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/store.h"
#include "vm/bytecode.h"

namespace pure::vm {

class Engine;
class Tier;

struct StackEntry {
  std::string function;
  Loc loc;
};

// A runtime error: what went wrong, where, and the calls that led there (innermost first).
struct RuntimeError {
  std::string message;
  Loc loc;
  std::vector<StackEntry> stack;
  bool is_fail = false;  // the program's own `fail "text"`: message is "failed: " + the text
  std::string render(const std::string& path) const;  // FILE:LINE:COL: runtime error: ... + stack
  // The same with each place written by place(loc) as "FILE:LINE:COL": a module made of several
  // files (imports) names each place's own file and line.
  std::string render(const std::function<std::string(Loc)>& place) const;
};

// An argument or a result. Items are their fields in declaration order; sequences their
// elements; keyed lists their rows (each an Item, keys first) in key order.
struct Value {
  enum class Kind : uint8_t { Int, Num, Bool, Text, Item, List };
  Kind kind = Kind::Int;
  int64_t i = 0;             // Int; Bool as 0/1
  double n = 0;              // Num
  std::string text;          // Text
  std::vector<Value> items;  // Item fields, List elements

  static Value of_int(int64_t v) { Value x; x.kind = Kind::Int; x.i = v; return x; }
  static Value of_num(double v) { Value x; x.kind = Kind::Num; x.n = v; return x; }
  static Value of_bool(bool v) { Value x; x.kind = Kind::Bool; x.i = v; return x; }
  static Value of_text(std::string v) { Value x; x.kind = Kind::Text; x.text = std::move(v); return x; }
};

inline constexpr size_t kOutputFlushBytes = size_t{1} << 16;  // print's buffer is written out past 64 KiB

struct RunOptions {
  uint64_t max_steps = 10'000'000'000ull;  // per invocation: main, and each event or query
  // Bytes of texts, event lists and stored rows one invocation (main and everything it calls, or
  // one event or query a host calls) may allocate and hold at once; past it an allocation is a
  // runtime error. Counted, not measured, on the invocation's thread: see runtime/memory.h.
  uint64_t max_memory = uint64_t{4} << 30;
  // Bytes already held against max_memory when the invocation starts (a host's stored state: the
  // budget covers the state and what the event adds to it), and the option that sets the budget,
  // named in the budget's message.
  uint64_t memory_held = 0;
  const char* memory_option = "--max-memory";
  const char* steps_option = "--max-steps";  // the option that sets max_steps, named when it is spent
  // A host's bound on a query's or event's result (0: none): when the result's JSON would take at
  // least this many bytes (its numbers' digits, texts' bytes and quotes, one separator per element;
  // counted before anything is built), it is not read out: CallResult::result_too_large is set.
  uint64_t max_result_bytes = 0;
  // print/write; default: stdout. Output is buffered and handed over when the buffer passes
  // kOutputFlushBytes, at each new line with flush_lines, and when the run ends: the bytes are the
  // same whatever the chunks.
  std::function<void(std::string_view)> write_output;
  bool flush_lines = false;  // hand output over at each new line (pure-run: when stdout is a terminal)
  std::function<std::string()> read_input;             // input(); default: empty text
  std::vector<std::string> args;                       // main's arguments (valid UTF-8: the host checks)
  Engine* engine = nullptr;  // how to run bytecode (vm/engine.h); null: the interpreter
  Tier* tier = nullptr;      // a JIT's tier-up hook (vm/engine.h); null: interpret only
  // Called on the running thread each time an event that main called commits, right after the
  // store's commit and before main goes on: the event's function index and the argument values
  // it was called with (as call_event takes them), for a host that logs committed events
  // (pure-run --data). A non-empty result ends the run with that message as a runtime error at
  // the call (the event stays committed in the store). Events a host runs with call_event do not
  // call it: the host knows what it ran. Empty: nothing is called.
  std::function<std::string(uint32_t event, std::span<const Value> args)> on_commit;
  // Called on the running thread each time an event that main called fails (rolled back, main
  // gets the failed outcome): the event's function index, its arguments (as on_commit) and the
  // reason main's outcome holds, for a host that logs failed events as audit records (pure-run
  // --data --audit-failed). It cannot stop the run (a host reports its own failure later, as at
  // its next on_commit). Empty: nothing is called.
  std::function<void(uint32_t event, std::span<const Value> args, std::string_view reason)> on_fail;
  // A host's way to stop a running call from another thread (pure-serve: a query past
  // --query-timeout-ms, or whose client left). Null: never cancelled, no cost. Otherwise the call
  // gets its step budget in slices of limits::kStepSlice steps, and when a slice runs out and
  // *cancel holds a message, the call ends with that message as its runtime error (at the
  // instruction it had reached; CallResult::cancelled set). The host stores the message (a text
  // that outlives the call) with release order, once. Step counts, the step budget and its message
  // are the same with or without it.
  const std::atomic<const char*>* cancel = nullptr;
};

// Runs the module's main against the store (its stored lists). Returns the error that ended
// it, or nothing on success. Events called by main run as transactions on the store.
std::optional<RuntimeError> run_main(const Program& program, rt::Store& store, const RunOptions& options);

// ---- calling events and queries from a host ----------------------------------------------------

struct CallResult {
  bool ok = true;        // event: committed; query: returned a value
  std::string reason;    // event that failed: its `fail` text, or "runtime error at L:C: ..."
  std::optional<RuntimeError> error;  // query (or bad call) that failed: the error
  Value value;           // query, or event that committed: its result (Kind::Int 0 when none)
  // The result was not read out (value is empty; an event is committed all the same): the lower
  // bound of its JSON size when it passed RunOptions::max_result_bytes, with result_error saying
  // so; or the system refused the memory to copy it (result_error says that).
  uint64_t result_bytes_at_least = 0;
  std::string result_error;
  bool cancelled = false;  // RunOptions::cancel stopped it: error holds the host's message
};

// The index of the event, query or function with this name, or -1.
int find_function(const Program& program, std::string_view name);

// Ok when args fit the function's parameters (count, and each value's kind and shape);
// otherwise an error naming the parameter and the expected type.
base::Status check_args(const Function& fn, std::span<const Value> args);

// Runs event `fn` as one transaction on the store, on the store's owner thread: committed when
// it returns, rolled back when it fails or hits a runtime error (ok = false, reason set). Its
// own budget of options.max_steps. Publishes nothing: the host publishes snapshots.
CallResult call_event(const Program& program, rt::Store& store, uint32_t fn, std::span<const Value> args,
                      const RunOptions& options = {});

// Runs query `fn` against a published snapshot, on any thread, concurrently with the owner's
// events and with other queries. A runtime error gives ok = false and the error.
CallResult call_query(const Program& program, std::shared_ptr<const rt::Snapshot> snapshot, uint32_t fn,
                      std::span<const Value> args, const RunOptions& options = {});

// How a "step" is counted: once per loop iteration (each pass through a loop header), once per
// call, and by a standard function for its work (vm/exec.h: spend_work; the table of costs in
// docs/language.md, "The step budget"). Every engine counts the same way, so a budget stops all of
// them at one place.
inline constexpr const char* kStepDefinition =
    "one step = one loop iteration, one call, or 64 bytes or one item a standard function works through";

}  // namespace pure::vm
