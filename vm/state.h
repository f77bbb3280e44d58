// vm/state.h — the machine's state while it runs: the slot stack, the call stack, iterators,
// the step budget. Private to vm/ (and the JITs, which run on the same frames).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/limits.h"
#include "stdlib/text.h"
#include "vm/engine.h"
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

// What a TEXT_ITER walks: the pieces of `text` (counted while the walk lives, and so is the
// separator); flags is kTextAscii when the text is known to be ASCII (its pieces then are too).
struct TextPieces {
  rt::Text* text = nullptr;
  rt::Text* separator = nullptr;
  text::Pieces pieces;
  uint16_t flags = 0;
  // A split by one byte (`t.split(" ")`, the common case), cut here without text::Pieces' kind
  // and separator tests: the next piece starts at `at` (null once the last one was cut; `text`
  // holds the bytes while the walk lives), `end` is the text's end, `pattern`
  // text::byte_pattern(separator_byte). by_byte false: text::Pieces cuts.
  bool by_byte = false;
  char separator_byte = 0;
  const char* at = nullptr;
  const char* end = nullptr;
  uint64_t pattern = 0;
  TextPieces() = default;
  TextPieces(const TextPieces&) = delete;
  TextPieces& operator=(const TextPieces&) = delete;
  ~TextPieces() {
    rt::text_release(text);
    rt::text_release(separator);
  }
};

// 256 bytes (padded): a call records how many iterators lie below it and a return compares, so
// counting them must be a shift, not a division.
struct alignas(256) Iterator {
  rt::EventList* list = nullptr;   // event lists (counted while the iterator lives)
  rt::EventList::Walk walk;
  std::vector<rt::Cell> prefix;
  uint32_t prefix_len = 0;
  bool range = false;
  int64_t lo = 0, hi = 0;
  uint64_t version = 0;
  uint32_t stored = UINT32_MAX;    // stored lists: which one
  bool from_snapshot = false;      // reads a snapshot (a query's or its own), which never changes
  // A loop outside events and queries (in main) holds a snapshot of its own, published when the
  // loop starts: it walks the state as of that moment, and the nodes and texts it reads stay
  // alive whatever events and queries the loop body calls.
  std::shared_ptr<const rt::Snapshot> snapshot;
  std::unique_ptr<rt::Cursor> cursor;
  const rt::ListWriter* live = nullptr;  // inside an event: the live list, whose shape_version is checked
  const rt::ListShape* shape = nullptr;  // row layout of the stored list
  // Rows of a snapshot taken in one run (text-free rows only): ITER_NEXT serves them inline.
  // Native code reads and writes these three at iterator_layout() (vm/engine.h). width is the
  // row's cell count from ST_ITER on for an iterator whose rows come in runs, else 0.
  const rt::Cell* run = nullptr;
  size_t run_left = 0;
  uint32_t width = 0;
  // The whole walk is the one run st_iter set from a flat form (there is no cursor): once it is
  // empty the rows are done, with no call to take_leaf_run (native code reads it at one_run).
  bool one_run = false;
  // A slice (SLICE_ITER) of an event list walks with slice_next; slice.prefix points into prefix.
  // A stored list walked live inside an event keeps its walk in slice too (its prefix's length,
  // bounds and direction; no prefix pointer), for resume_walks (lists.cpp): prefix then holds the
  // key of the row it gives next, kept when an inner event is called with `try`, and past_end
  // that it had none left.
  bool sliced = false;
  bool past_end = false;
  bool reverse = false;            // the cursor or walk goes backwards
  rt::Slice slice;
  // ITER_SKIP: the text fields (a bit per field) that ITER_NEXT leaves unloaded in a stored row.
  uint64_t skip_texts = 0;
  // TEXT_ITER: the pieces of a text, cut one at a time by ITER_NEXT (lists.cpp). Its own
  // allocation, one a loop: the iterator's 256 bytes have no room for it.
  std::unique_ptr<TextPieces> pieces;
};
static_assert(sizeof(Iterator) == 256);

// Caught: a query main called with `try`, whose failure becomes its outcome (as an event's does).
// Savepoint: an event another event called with `try`: inside the caller's transaction, with the
// caller's budget; its failure undoes its own changes only (the store's rollback_to) and becomes
// its outcome. An event another event calls plainly has no boundary: its failure is the caller's.
enum class Boundary : uint8_t { None, Event, Query, Caught, Savepoint };

inline constexpr size_t kMaxCallDepth = limits::kCallDepth;

struct CallInfo {
  const Function* fn;
  Slot* base;
  const Instr* return_ip;   // where the caller continues (null for the entry frame)
  uint32_t iter_base;       // iterators above this belong to the frame
  Boundary boundary;        // this call is an event or query called from outside
  int64_t saved_steps;      // the caller's budget, restored when the boundary returns
  Slot* result_to;          // where a plain function's one result goes (the callee's slot 0 but
                            // for CALL_PLAIN, which returns it straight to the caller's slot)
  size_t savepoint;         // Savepoint: the store's savepoint() before the inner event ran
  // Savepoint: bit i is set when iterator i (i < 64) walked a live stored list that was unchanged
  // at the savepoint (keep_walks); if the inner event fails, those walks go on (resume_walks).
  uint64_t kept_walks;
};

// The call stack: a fixed array of kMaxCallDepth frames' records, reserved once per machine
// memory (pages are touched only as deep as calls go). A call checks full() with one compare.
class CallStack {
 public:
  void attach(CallInfo* storage, size_t capacity) {
    base_ = top_ = storage;
    end_ = storage + capacity;
  }
  bool empty() const { return top_ == base_; }
  bool full() const { return top_ == end_; }
  size_t size() const { return static_cast<size_t>(top_ - base_); }
  CallInfo& back() { return top_[-1]; }
  const CallInfo& back() const { return top_[-1]; }
  CallInfo& operator[](size_t i) { return base_[i]; }
  const CallInfo& operator[](size_t i) const { return base_[i]; }
  void push_back(const CallInfo& ci) { *top_++ = ci; }  // the caller checked full()
  void pop_back() { --top_; }
  void clear() { top_ = base_; }

 private:
  CallInfo* base_ = nullptr;
  CallInfo* top_ = nullptr;
  CallInfo* end_ = nullptr;
};

// The memory a machine reuses from one invocation to the next on the same thread (a server makes
// millions of calls): the slot stack and the capacity of the call and iterator stacks.
struct MachineMemory;

struct VM {
  // store: the module's store, for main and events (owner thread); null for a query called by
  // a host, which reads only `snapshot`.
  VM(const Program& p, rt::Store* s, const RunOptions& o);
  ~VM();
  VM(const VM&) = delete;
  VM& operator=(const VM&) = delete;
  VMCore core;                 // first: what native code touches (vm/engine.h)
  const Program& prog;
  rt::Store* const store;
  const RunOptions& options;
  std::unique_ptr<MachineMemory> memory;
  Slot* stack;                 // the slot stack (core.stack_end is its end)
  CallStack calls;
  std::vector<Iterator> iters;  // grown only by push_iterator(), which keeps core.iters current
  int transaction_depth = 0;   // >0 inside an event or query: store texts may be borrowed
  // While a query called from outside runs, it reads this snapshot, published when it began.
  std::shared_ptr<const rt::Snapshot> snapshot;
  const rt::ListReader& reader(uint32_t list) const {
    return snapshot ? snapshot->list(list) : store->list(list);
  }
  std::string output;          // buffered print output
  // One finished prefix cursor kept per stored list, for the next slice of that list.
  std::vector<std::unique_ptr<rt::Cursor>> spare_cursors;
  std::optional<Fault> pending;  // a fault pure_step caught for native code (core.faulted)
  // The arguments of the event main is running, copied when it was called, for
  // options.on_commit and on_fail (only when one is set).
  std::vector<Value> event_args;
  // With RunOptions::cancel: the running invocation's steps not yet handed to core.steps_left
  // (its budget left is the sum of the two; see set_budget). Always 0 without it.
  int64_t steps_reserve = 0;
  bool cancelled = false;  // the cancel's fault was raised

  void flush_output();
};

// A new iterator on top of vm.iters (its index is vm.iters.size() - 1); keeps core.iters current.
inline Iterator& push_iterator(VM& vm) {
  Iterator& it = vm.iters.emplace_back();
  vm.core.iters = vm.iters.data();
  return it;
}

// The running invocation's budget left, and setting it (in a slice and a reserve when the call
// may be cancelled, vm/calls.cpp).
inline int64_t budget_left(const VM& vm) { return vm.core.steps_left + vm.steps_reserve; }
void set_budget(VM& vm, int64_t steps);

// The instruction loop; runs until the entry frame returns. Defined in interp.cpp.
void interpret(VM& vm, Slot* base, const Instr* ip);
// Executes exactly one instruction and returns the next; throws Fault. base may change across
// CALL and RET. Native code uses the no-throw pure_step (vm/engine.h) instead.
const Instr* step(VM& vm, Slot*& base, const Instr* ip);

// Tier-up at a loop's LOOP or ITER_NEXT when tier_check (exec.h) finds the loop at its threshold
// or compiled (driver.cpp): enters the loop's native code when it has some, else counts the pass
// and, at the threshold, hands the loop to the Tier. Returns the pc to go on with, or null to
// execute ip as usual. `index` is the loop's program-wide index (LoopInfo::index), a loop of the
// running function (whose loops have consecutive indexes).
const Instr* tier_up(VM& vm, Slot*& base, const Instr* ip, uint32_t index);

// Runs engine from ip on the entry frame calls[0] (driver.cpp): the one place that turns a fault
// into an event's failed outcome (unwind, roll back, restore the caller's budget) or into the
// RuntimeError that ends the invocation.
std::optional<RuntimeError> drive(VM& vm, Slot* base, const Instr* ip);

// A new iterator over stored list li in slot A of ip: reading the query's snapshot, a snapshot of
// its own (a loop in main) or the live list (in an event); `from` is what it reads (lists.cpp).
Iterator& begin_stored_iterator(VM& vm, Slot* s, const Instr* ip, uint32_t li, const rt::ListReader*& from);
// An event's loops over its live stored lists and an inner event called with `try` (lists.cpp):
// keep_walks notes, before the inner event runs, where each unchanged walk stands; when the inner
// event fails and rollback_to has undone it, resume_walks starts each one's cursor again there
// (the list holds the rows it held then, but its changes left the cursors stale). A walk changed
// by the outer event before the call, or by an inner event that succeeds, still faults.
uint64_t keep_walks(VM& vm);
void resume_walks(VM& vm, uint64_t kept, uint32_t below);

// ST_ITER, with its faults (lists.cpp): exec.h and the JITs' runtime call run this one definition.
const Instr* st_iter(VM& vm, Slot* s, const Instr* ip);
// ST_ITER for native code that walks a flat form's prefix itself (jit-aarch64): when st_iter's
// first case applies to rows of `width` cells, their run in *first / *n, with no iterator made
// and slot A left alone (true); else st_iter whole (false). The same seeks and faults as st_iter.
bool st_iter_rows(VM& vm, Slot* s, const Instr* ip, uint32_t width, const rt::Cell** first, size_t* n);
// The iterator st_iter_rows did not make, with `run_left` rows left at `run`, on top of vm.iters
// and its number in slot A, as st_iter's first case makes it. Allocates nothing (st_iter_rows
// saw room for it, and no iterator is made in between).
void materialize_flat_iterator(VM& vm, Slot* s, const Instr* ip, const rt::Cell* run, size_t run_left);
// The next leaf run of a stored iterator that reads a snapshot and holds no texts (it.width != 0
// once it has rows): the first row, with it.run and it.run_left set for the rest; null when the
// rows are done. Never throws. What ITER_NEXT does when its run is empty (lists.cpp).
const rt::Cell* take_leaf_run(Iterator& it);
// The SLICE_ instructions (slices.cpp).
const Instr* slice_op(VM& vm, Slot* s, const Instr* ip);

// Standard functions (builtins.cpp).
void call_builtin(VM& vm, Slot* args, const Instr* ip);
// min or max of two nums as min(x, y) and a list's min() fold them: a NaN wins, -0.0 < 0.0.
double num_min_max(double x, double y, bool want_min);

// Frame and unwinding helpers (calls.cpp).
void release_frame(VM& vm, const CallInfo& ci);
void release_iterators(VM& vm, uint32_t down_to);
rt::Text* load_text_cell(VM& vm, rt::Cell c);
void materialize(VM& vm, Slot& slot, bool is_list);
// Copies the value of type t starting at in (an argument in its parameter slots) and advances
// in past it; the slots keep what they own (invoke.cpp).
Value copy_value(const Slot*& in, const ir::ValueType& t);

}  // namespace pure::vm
