// jit-common/jit.h — the engine-independent half of Pure's JITs: the tier (which hot loops to
// compile, one background compile thread, publishing entries, stats, cancelling at exit) over an
// abstract Backend that turns one loop into machine code. jit-llvm/ (x86-64, LLVM 19) and
// jit-aarch64/ (asmjit's a64 assembler) are the backends; the build links the one for its target,
// and `native_backend()` names it. No backend types appear here.
// Depends on vm/ (the seam, vm/engine.h); vm/ never depends on this.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/engine.h"

namespace pure::jit {

// How a backend handles one instruction of a loop.
enum class Lowering : uint8_t {
  Native,  // machine code (faults leave to the interpreter at the instruction)
  Step,    // a call to pure_step, slots stored before and reloaded after
  Exit,    // leave to the interpreter at the instruction (calls, returns, fail)
};

// The decision both backends make alike: what each compiles natively (jit-llvm/, jit-aarch64/
// and their READMEs say how), what leaves to the interpreter, and the rest through pure_step. A
// backend's own lowering_of starts from it and says where it differs (AArch64: the bitwise ops).
Lowering shared_lowering(vm::Op op);

// The start of a Backend's error for a loop refused as too large (base/limits.h, kJitLoopIr).
inline constexpr const char kTooLarge[] = "too large: ";

// Turns one loop into machine code. A backend is made on the compile thread at the first compile
// (LLVM's set-up is costly) and used from that thread only.
class Backend {
 public:
  virtual ~Backend() = default;
  // Compiles loop `loop` of `function` and returns its entry (vm::NativeLoop's contract), or null
  // with `error` set. Gives up soon (null, error "cancelled") once *cancel is set. A loop whose
  // code would be too large to compile in bounded time is refused before the costly part, with
  // `error` starting with kTooLarge; the tier then tries the loops nested in it instead.
  virtual vm::NativeLoop compile(const vm::Function& function, uint32_t loop, std::string& error,
                                 const std::atomic<bool>* cancel) = 0;
  // Called on the compile thread when the queue has run dry after a compile: a backend may give
  // back memory it needs only while compiling (the LLVM engine: its code pages).
  virtual void idle() {}
  // The part a persistent code cache (the LLVM backend's, PURE_JIT_CACHE) had in the last
  // compile: none (no cache, or the loop refused before it), a hit (the code loaded from it;
  // made_ms the processor time its compile took when the entry was made) or a miss (compiled,
  // and kept for the next run).
  struct CacheUse {
    enum Kind : uint8_t { none, hit, miss } kind = none;
    double made_ms = 0;
  };
  virtual CacheUse last_cache_use() const { return {}; }
};

// What the tier knows of a backend before any compile.
struct BackendKind {
  const char* name;                    // "llvm", "aarch64"
  Lowering (*lowering_of)(vm::Op op);  // the native-or-step decision, per op
  std::unique_ptr<Backend> (*make)();  // called on the compile thread at the first compile
  // What an instruction whose native code does the runtime's work at every pass (runtime_work: a
  // text made, counted or freed, a keyed-list row found) counts in the native share: 0, one
  // native instruction; N > 0, N instructions none of them native. The saving of compiling such
  // an instruction is an interpreter dispatch next to that work, so a backend whose compiles cost
  // much (LLVM) loses on loops made of them, and one whose compiles are cheap (asmjit) wins on
  // them (bench/README.md, "The JIT tier's settings", has the measurements).
  uint32_t call_cost = 0;
  // What a compile is expected to cost in processor time, in the interpreter's loop instructions
  // done in the same time: setup_cost for the first compile (the engine's loading and set-up),
  // loop_cost for each, and instruction_cost per instruction of its loop. All 0: compiles too
  // cheap to wait for (asmjit), the threshold alone decides. See Options::payoff.
  uint64_t setup_cost = 0, loop_cost = 0, instruction_cost = 0;
  // The code of a loop may also be entered at the head (LOOP, ITER_NEXT) of any loop nested in it,
  // as at its own: one compile of the enclosing loop then serves its inner loops too
  // (Options::nested). LLVM and AArch64: true (their entry dispatch takes every such head).
  bool nested_entries = false;
};

// Whether the native code of `in` (slot A a text slot: a_text) does the runtime's work at every
// pass: INT_TEXT (a new text), SEQ_GET and SEQ_PUSH of a text (a reference counted), MAP_ENSURE,
// MAP_GET_FIELD and MAP_SET_FIELD that find their row (not those that reuse the row found
// before: rows_known).
bool runtime_work(const vm::Instr& in, bool row_known, bool a_text);

// The backend this build has for its target (defined by the JIT library linked: jit-llvm on
// x86-64, jit-aarch64 on AArch64). Only declared where PURE_HAVE_JIT is defined.
const BackendKind& native_backend();

struct Options {
  uint32_t threshold = 1000;     // loop passes before a loop is compiled (0: on first entry)
  // Compile on the interpreter's thread inside hot(), so tests see native code from the second
  // pass on. Tests only: a normal run never waits for a compile.
  bool synchronous = false;
  // A loop is compiled only when at least this share of its instructions is compiled natively
  // (the rest run through pure_step or leave to the interpreter); below it stays interpreted: the
  // compile then costs more than the few dispatches it saves (bench/README.md, "The JIT tier's
  // settings").
  double min_native_share = 0.8;
  // Ski rental: a hot loop is compiled only once the interpreter has done in it (its passes times
  // its instructions) at least the expected cost of the compile (BackendKind's costs), so that a
  // loop that ends soon after it gets hot never pays a compile that does not pay back, and one
  // that runs long loses at most that cost. Checked every `threshold` passes; threshold 0 (on
  // first entry) or payoff false: the threshold alone decides.
  bool payoff = true;
  // With a backend whose code takes nested entries (BackendKind::nested_entries): a hot loop
  // inside loops that are still interpreted (not rejected, not queued) and would compile is not
  // compiled alone: the outermost such enclosing loop is, and its code is published for each loop
  // on the way (their entries are heads inside it). One inside a loop already compiled takes that
  // loop's code, with no compile, instead of a second compile of the inner loop alone
  // (bench/README.md, "One compile for nested loops").
  bool nested = true;
};

struct Stats {
  uint32_t compiled = 0;            // loops with native code
  uint32_t nested = 0;              // of those, loops that run the code of a loop enclosing them (Options::nested)
  uint32_t rejected = 0;            // loops kept interpreted (too little native, or a failed compile)
  uint32_t too_large = 0;           // of those, loops refused as too large (Backend::compile, kTooLarge)
  uint64_t instructions = 0;        // instructions of the compiled loops
  uint64_t native_instructions = 0;  // of those, compiled to machine code (not pure_step, not exits)
  uint32_t waited = 0;               // hot loops not compiled when they got hot: their compile would not have paid yet (some compile later)
  uint32_t waits = 0;                // the checks that found so (every threshold passes of such a loop)
  double compile_ms = 0;            // thread CPU time of all compiles (the backend's set-up included)
  double setup_ms = 0;              // of that, the backend's set-up (the engine's loading: the first compile)
  double first_ms = -1;             // wall time from the first loop queued to its native code (-1: none)
  std::vector<double> loop_ms;      // per compiled loop, in the order they finished (set-up not included)
  uint32_t cache_hits = 0;          // compiles whose code came from the code cache (Backend::CacheUse)
  uint32_t cache_misses = 0;        // compiles the code cache did not have (compiled and kept)
  double cache_saved_ms = 0;        // the hits' compile time when their entries were made, less their own
};

// The tier. Destroying it cancels queued compiles and waits for the one in flight; its native
// code lives as long as it does (the backend owns it), so it must outlive every run that uses it.
class Jit final : public vm::Tier {
 public:
  explicit Jit(const BackendKind& backend, const Options& options = {});
  ~Jit() override;
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;
  void hot(const vm::Program& program, const vm::Function& function, uint32_t loop) override;
  // Waits until every queued compile has finished (tests and benchmarks of compile time).
  void drain();
  // Cancels queued compiles and the one in flight (which gives up at its backend's next check)
  // and waits for it; hot() queues nothing after it. A run that ends as a loop gets hot does not
  // wait for its compile. Published code stays valid until the Jit is destroyed.
  void stop();
  // stop() without the wait: cancels as stop() does and answers whether a compile is still in
  // flight (its thread busy: in LLVM's set-up, which cannot be cancelled, or a phase). A program
  // at its very end may then leave without waiting for it (pure-run: _exit after its output);
  // anything else must call stop() before the Jit or a compiled program goes.
  bool cancel();
  Stats stats() const;
  const BackendKind& backend() const;

  struct Impl;

 private:
  void hot_first(const vm::Program& program, const vm::Function& function, const vm::LoopInfo& info, double cut);
  void queue_if_repaid(const vm::Program& program, const vm::Function& function, uint32_t loop);
  std::unique_ptr<Impl> impl_;
};

// The share of a loop's instructions that the backend compiles natively, as hot() measures it.
// Loops below Options::min_native_share stay interpreted.
double native_share(const BackendKind& backend, const vm::Function& function, const vm::LoopInfo& loop);

// The number of slots the ITER_NEXT at pc writes (A..A+width-1), as ir/lower.cpp allocates them:
// the row's slots, then the position's of `for i, x in ...` (which the body's first instruction
// counts up), then the iterator's. Only a guess (0: none): native code checks it against the
// iterator's width at every row and runs the instruction through pure_step if it differs, so a
// wrong guess costs speed, never correctness. Both backends serve rows of this width inline.
uint32_t iter_row_width(const std::vector<vm::Instr>& code, uint32_t pc);

// Keyed-list rows found once and used again (`counts[w].n += 1` is MAP_ENSURE, MAP_GET_FIELD,
// ADD_INT, MAP_SET_FIELD on one list and key): known[pc] is true when the MAP_ENSURE,
// MAP_GET_FIELD or MAP_SET_FIELD at pc of the loop (`in_region`) finds the row that the previous
// one of the same list slot and key slot found: between them only instructions that touch no list,
// make no call into the VM and write neither slot, and none of them (nor pc) a jump target, so
// control reaches pc only through that one. Native code then keeps the row (or 0, when that one
// found none and ran through pure_step) instead of finding it again: rows do not move while a list
// is unchanged, and only pure_step changes one.
std::vector<bool> rows_known(const vm::Function& function, const std::vector<bool>& in_region);

// vm::Function::entry_constants by slot: the slots that hold one value wherever the function's
// loops run (`2` in spectralnorm's `ij * (ij + 1) / 2`, the loader's constant of an inlined leaf).
// value[s] is the constant when constant[s]. Native code may use the value where the loop reads
// the slot, and need not store it back or reload it: no instruction writes it.
struct EntryConstants {
  std::vector<bool> constant;  // per slot, sized stack_need + 1
  std::vector<int64_t> value;
  bool is(uint32_t s) const { return s < constant.size() && constant[s]; }
};
EntryConstants entry_constants(const vm::Function& function);

// The slots an instruction of the region may write, by ir/ops.def's operand columns: a slot
// written or modified, a run of written slots (as wide as a list's rows, which the bytecode does
// not say: one starting among the frame's own slots is taken to reach frame_slots, one in the call
// area its end), a callee's frame (every slot from it up), and a plain call's result sent to slot
// IMM >> 48. Sized stack_need + 1. A slot not in it keeps, wherever the region runs, the value it
// had when the region was entered (a list slot: the same live list).
std::vector<bool> written_in(const vm::Function& function, const std::vector<bool>& in_region);

// ---- the switches pure-run (and any host) reads, the same for every backend ---------------------
//  PURE_JIT            0/off/interp: the interpreter; 1/on (the default where a JIT is built), or
//                      the backend's name: the JIT; sync: the JIT compiling on the running thread
//                      (tests only)
//  PURE_JIT_THRESHOLD  loop passes before a compile (default 1000; 0 = on first entry)
//  PURE_JIT_MIN_SHARE  the native-share cut-off (default 0.8; tests set 0 to compile every loop)
//  PURE_JIT_PAYOFF     0: compile every loop at the threshold (no ski rental, Options::payoff)
//  PURE_JIT_NESTED     0: compile each hot loop alone, never its enclosing loop (Options::nested)
//  PURE_JIT_COSTS      SETUP,LOOP,INSTRUCTION: the LLVM backend's BackendKind costs (measurements only)
//  PURE_JIT_STATS      1: print stats_line() to stderr at exit
//  PURE_JIT_CACHE      DIR: the LLVM backend keeps compiled loops in DIR and loads them in later
//                      runs (jit-llvm/code_cache.h; read by the engine; default off)
struct EnvSettings {
  bool use_jit = false;
  bool stats = false;
  Options options;
};
// Reads the environment. `available` is whether this build has a JIT (named `backend_name`, or
// null). False with `error` set on a malformed value or a JIT asked of a build without one.
bool read_env(bool available, const char* backend_name, EnvSettings& out, std::string& error);
// "pure-jit: N loops compiled, M rejected (L too large), W waited; P% of their instructions native;
// compile X ms CPU (set-up S; per loop: ...; p50 A, p90 B, p99 C, max D); first native code F ms
// after its loop got hot"
std::string stats_line(const Stats& stats);

}  // namespace pure::jit
