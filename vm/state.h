// vm/state.h — the machine's state while it runs: the slot stack, the call stack, iterators,
// the step budget. Private to vm/ (and the JITs, which run on the same frames).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "vm/vm.h"

namespace pure::vm {

// Thrown by an instruction that cannot complete; the interpreter turns it into a fail of the
// running event, or a RuntimeError.
struct Fault {
  std::string message;
  const Instr* ip;
  bool is_fail = false;  // raised by `fail`: the message is the user's reason
};

[[noreturn]] void fault(const Instr* ip, std::string message);

struct Iterator {
  rt::EventList* list = nullptr;   // event lists (counted while the iterator lives)
  rt::EventList::Walk walk;
  std::vector<rt::Cell> prefix;
  uint32_t prefix_len = 0;
  bool range = false;
  int64_t lo = 0, hi = 0;
  uint64_t version = 0;
  uint32_t stored = UINT32_MAX;    // stored lists: which one
  bool from_snapshot = false;      // reads a query's snapshot, which never changes
  std::unique_ptr<rt::Cursor> cursor;
  const rt::ListWriter* live = nullptr;  // the live list, whose shape_version is checked
  const rt::ListShape* shape = nullptr;  // row layout of the stored list
  // Rows of a snapshot taken in one run (text-free rows only): ITER_NEXT serves them inline.
  const rt::Cell* run = nullptr;
  size_t run_left = 0;
  uint32_t width = 0;
};

enum class Boundary : uint8_t { None, Event, Query };

inline constexpr size_t kMaxCallDepth = 200000;

struct CallInfo {
  const Function* fn;
  Slot* base;
  const Instr* return_ip;   // where the caller continues (null for the entry frame)
  uint32_t iter_base;       // iterators above this belong to the frame
  Boundary boundary;        // this call is an event or query called from outside
  int64_t saved_steps;      // the caller's budget, restored when the boundary returns
};

struct VM {
  VM(const Program& p, rt::Store& s, const RunOptions& o);
  ~VM();
  const Program& prog;
  rt::Store& store;
  const RunOptions& options;
  std::unique_ptr<Slot[]> stack;
  Slot* stack_end;
  std::vector<CallInfo> calls;
  std::vector<Iterator> iters;
  int64_t steps_left;
  int transaction_depth = 0;   // >0 inside an event or query: store texts may be borrowed
  // While a query called from outside runs, it reads this snapshot, published when it began.
  std::shared_ptr<const rt::Snapshot> snapshot;
  const rt::ListReader& reader(uint32_t list) const {
    return snapshot ? snapshot->list(list) : store.list(list);
  }
  std::string output;          // buffered print output
  // One finished prefix cursor kept per stored list, for the next slice of that list.
  std::vector<std::unique_ptr<rt::Cursor>> spare_cursors;

  void flush_output();
};

// The instruction loop; runs until the entry frame returns. Defined in interp.cpp.
void interpret(VM& vm, Slot* base, const Instr* ip);
// Executes exactly one instruction and returns the next (a JIT calls this for instructions it
// does not compile). base may change across CALL and RET.
const Instr* step(VM& vm, Slot*& base, const Instr* ip);

// Standard functions (builtins.cpp).
void call_builtin(VM& vm, Slot* args, const Instr* ip);

// Frame and unwinding helpers (frames.cpp).
void release_frame(VM& vm, const CallInfo& ci);
void release_iterators(VM& vm, uint32_t down_to);
rt::Text* load_text_cell(VM& vm, rt::Cell c);
void materialize(VM& vm, Slot& slot, bool is_list);

}  // namespace pure::vm
