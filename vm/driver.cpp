// vm/driver.cpp — the one driver loop. Every invocation (main from pure-run, an event or a
// query from a host) runs through drive(), whatever the engine: it is the only place where a
// fault becomes a failed event (unwind the frames above the event, roll back, restore the
// caller's budget, hand the reason to the caller) or the RuntimeError that ends the invocation.
// Also here: the no-throw pure_step for native code, the step engine, and tier-up.
#include <algorithm>
#include <cstdio>
#include <new>

#include "base/assert.h"
#include "runtime/memory.h"
#include "vm/exec.h"

namespace pure::vm {

const Instr kFaulted[1] = {Instr{Op::FAIL, 0, 0, 0, 0}};

static Loc loc_of(const Function& f, const Instr* ip) {
  if (!ip || ip < f.code.data() || ip >= f.code.data() + f.code.size()) return Loc{0, f.line, 1};
  return f.locs[ip - f.code.data()];
}

static std::vector<StackEntry> stack_trace(const VM& vm, const Instr* fault_ip) {
  std::vector<StackEntry> stack;
  const Instr* ip = fault_ip;
  for (size_t i = vm.calls.size(); i-- > 0;) {
    const CallInfo& ci = vm.calls[i];
    // code of an inlined call (ir/inline.cpp) shows the callee's frame, as the call would have
    const Function& f = *ci.fn;
    if (ip >= f.code.data() && ip < f.code.data() + f.code.size())
      if (const Function::InlinedCall* call = f.inlined_call(static_cast<uint32_t>(ip - f.code.data()))) {
        stack.push_back({vm.prog.functions[call->callee].name, loc_of(f, ip)});
        stack.push_back({f.name, call->call});
        ip = ci.return_ip ? ci.return_ip - 1 : nullptr;
        continue;
      }
    stack.push_back({f.name, loc_of(f, ip)});
    ip = ci.return_ip ? ci.return_ip - 1 : nullptr;
  }
  return stack;
}

// Unwinds every frame above calls[keep], releasing what they own.
static void unwind_to(VM& vm, size_t keep) {
  while (vm.calls.size() > keep) {
    const CallInfo& ci = vm.calls.back();
    release_iterators(vm, ci.iter_base);
    release_frame(vm, ci);
    vm.calls.pop_back();
  }
}

// Deep stacks (a runaway recursion) show their innermost and outermost calls only.
std::string RuntimeError::render(const std::string& path) const {
  return render([&path](Loc at) { return path + ":" + std::to_string(at.line) + ":" + std::to_string(at.col); });
}

std::string RuntimeError::render(const std::function<std::string(Loc)>& place) const {
  constexpr size_t kInner = 20, kOuter = 5;
  std::string out = place(loc) + ": runtime error: " + message + "\n";
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack.size() > kInner + kOuter && i == kInner) {
      out += "  ... " + std::to_string(stack.size() - kInner - kOuter) + " more calls ...\n";
      i = stack.size() - kOuter;
    }
    out += std::string(i == 0 ? "  in " : "  called from ") + stack[i].function + " at " + place(stack[i].loc) + "\n";
  }
  return out;
}

// The descriptor of result slot i that holds a list: the result itself, or an item's list field.
static int result_desc(const Function& fn, size_t i) {
  const ir::ValueType& t = fn.result_type;
  int desc = t.slot(static_cast<uint32_t>(i)).desc;
  PURE_ASSERT(desc >= 0);
  return desc;
}

static Engine& engine_of(VM& vm) { return vm.options.engine ? *vm.options.engine : interpreter(); }

std::optional<RuntimeError> drive(VM& vm, Slot* base, const Instr* ip) {
  Engine& engine = engine_of(vm);
  // The invocation's memory budget (runtime/memory.h), on the thread that runs it: main and all
  // it calls, or one event or query a host calls.
  rt::MemoryMeter meter(vm.options.max_memory);
  meter.set_option(vm.options.memory_option);
  meter.add(vm.options.memory_held);  // the host's state, already held against the same budget
  rt::MeterScope metered(meter);
  while (true) {
    try {
      try {
        engine.run(vm, base, ip);
      } catch (const std::bad_alloc& e) {
        // out of memory where no instruction turned it into a fault: a runtime error like any other
        throw Fault{out_of_memory_message(e), nullptr};
      }
      PURE_ASSERT(vm.calls.empty() && vm.transaction_depth == 0);
      return std::nullopt;
    } catch (Fault& f) {
      PURE_ASSERT(!vm.calls.empty());
      vm.core.faulted = 0;
      vm.pending.reset();
      // An event fails as a whole: undo it and hand the reason to its caller. So does a query main
      // called with `try` (it changed nothing: there is nothing to undo), and an event another
      // event called with `try` (its own changes are undone, back to its savepoint). The innermost
      // of these catches the fault; an event called plainly by another fails with its caller. A
      // spent step budget or a cancel is the outer event's: no `try` inside it can go on without
      // steps, so a savepoint lets those through.
      const bool budget_gone = budget_left(vm) < 0 || vm.cancelled;
      size_t boundary = SIZE_MAX;
      for (size_t i = vm.calls.size(); i-- > 0 && boundary == SIZE_MAX;) {
        Boundary b = vm.calls[i].boundary;
        if (b == Boundary::Event || b == Boundary::Caught || (b == Boundary::Savepoint && !budget_gone)) boundary = i;
      }
      if (boundary == SIZE_MAX) {
        RuntimeError err;
        err.message = f.is_fail ? "failed: " + f.message : f.message;
        err.is_fail = f.is_fail;
        err.stack = stack_trace(vm, f.ip);
        err.loc = err.stack.empty() ? Loc{} : err.stack[0].loc;
        unwind_to(vm, 0);
        vm.snapshot.reset();
        vm.transaction_depth = 0;
        return err;
      }
      std::string reason = f.message;
      if (!f.is_fail) {
        Loc l = loc_of(*vm.calls.back().fn, f.ip);
        reason = "runtime error at " + std::to_string(l.line) + ":" + std::to_string(l.col) + ": " + f.message;
      }
      CallInfo event = vm.calls[boundary];
      if (event.boundary == Boundary::Event && event.return_ip && vm.options.on_fail) {  // main's event failed
        vm.options.on_fail(static_cast<uint32_t>(event.fn - vm.prog.functions.data()), vm.event_args, reason);
        vm.event_args.clear();
      }
      unwind_to(vm, boundary);
      if (event.boundary == Boundary::Savepoint) {
        vm.store->rollback_to(event.savepoint);  // the caller's transaction and budget go on
        resume_walks(vm, event.kept_walks, event.iter_base);  // its walks as if the inner event had not run
      } else {
        if (event.boundary == Boundary::Event) vm.store->rollback();
        else vm.snapshot.reset();
        vm.transaction_depth = 0;
        set_budget(vm, event.saved_steps);  // the caller's budget, as a normal return restores it
      }
      event.base[0].i = 0;                      // outcome.ok
      rt::MeterNoThrow counted_only;            // the reason is handed over even when memory ran out
      event.base[1].t = rt::text_new(reason);   // outcome.reason: owned by the caller's call area
      if (!event.return_ip) return std::nullopt;  // a host called the event: the outcome is in base
      // A result the event declared: its slots get zeros, "" and empty lists, so that they hold valid
      // values (main cannot read them: CHECK_VALUE stops '.value', and a failed outcome prints without).
      const Function& fn = *event.fn;
      for (size_t i = 0; i < fn.result_kind.size(); ++i) {
        Slot& v = event.base[2 + i];
        if (fn.result_kind[i] == 1) v.t = vm.prog.texts[2];
        else if (fn.result_kind[i] == 2) v.l = new rt::EventList(vm.prog.shapes[result_desc(fn, i)].get());
        else v.u = 0;
      }
      base = vm.calls.back().base;
      ip = event.return_ip;
    }
  }
}

// The fault pure_step kept for native code (kFaulted) goes on as the exception the driver catches.
[[noreturn]] static void rethrow_pending(VM& vm) {
  PURE_ASSERT(vm.pending.has_value());
  Fault f = std::move(*vm.pending);
  vm.pending.reset();
  vm.core.faulted = 0;
  throw f;
}

// ---- engines -----------------------------------------------------------------------------------

namespace {
class Interpreter final : public Engine {
 public:
  const char* name() const override { return "interpreter"; }
  void run(VM& vm, Slot* base, const Instr* ip) override { interpret(vm, base, ip); }
};
}  // namespace

Engine& interpreter() {
  static Interpreter engine;
  return engine;
}

void StepEngine::run(VM& vm, Slot* base, const Instr* ip) {
  while (ip) {
    ip = pure_step(&vm.core, &base, ip);
    ++instructions;
    if (ip == kFaulted) rethrow_pending(vm);
  }
}

// ---- tier-up -------------------------------------------------------------------------------------

void reject_loop(const Program& program, const LoopInfo& loop) {
  loop.state.store(static_cast<uint8_t>(LoopState::Rejected), std::memory_order_release);
  uint32_t open = program.open_loops.fetch_sub(1, std::memory_order_seq_cst);
  PURE_ASSERT(open > 0 && open <= program.loop_count);
  if (open != 1) {
    loop.hits.store(kLoopParked, std::memory_order_seq_cst);
    return;
  }
  // the last open loop: none is interpreted, queued or compiled, and none ever will be. Every
  // counter goes out of line once more, so a VM still checking stops at its next pass of any loop
  // (not only this one). A store a racing tier_up() makes over one of these only means that VM
  // checks on until its next invocation: slower, never different.
  for (uint32_t i = 1; i <= program.loop_count; ++i) program.loop_hits[i].store(kLoopRecheck, std::memory_order_seq_cst);
}

// Every loop of the program is rejected for good: this VM's LOOP and ITER_NEXT stop checking,
// as without a Tier (the steps they spend are the same either way).
static bool all_rejected(VM& vm) {
  if (vm.prog.open_loops.load(std::memory_order_seq_cst) != 0) return false;
  vm.core.tier_up = 0;
  vm.prog.tier_stops.fetch_add(1, std::memory_order_relaxed);
  return true;
}

const Instr* tier_up(VM& vm, Slot*& s, const Instr* ip, uint32_t index) {
  const Function& fn = *vm.calls.back().fn;
  // a function's loops have consecutive program-wide indexes (vm/load.cpp): the id is the offset
  PURE_ASSERT(!fn.loops.empty() && index >= fn.loops.front().index);
  const uint32_t loop = index - fn.loops.front().index;
  PURE_ASSERT(loop < fn.loops.size() && fn.loops[loop].index == index && heads_loop(fn, *ip, loop));
  const LoopInfo& L = fn.loops[loop];
  // Native code is entered only while the call stack has room for one more call: it makes no
  // calls, so the depth check of a CALL_INLINED inside it (exec_CALL_INLINED) then always passes and
  // only its slot check is made there. A full stack runs the loop here, which faults as it should.
  NativeLoop native = L.entry.load(std::memory_order_acquire);
  if (native && !vm.calls.full()) {
    if (L.hits.load(std::memory_order_relaxed) != kLoopNative) L.hits.store(kLoopNative, std::memory_order_relaxed);
    const Instr* next = native(&vm.core, s, ip);
    if (next == kFaulted) rethrow_pending(vm);
    s = vm.calls.back().base;  // native code may have left in a callee's frame
    PURE_ASSERT(next != nullptr);
    return next;
  }
  if (all_rejected(vm)) return nullptr;  // the counter stays kLoopRecheck for other VMs
  PURE_ASSERT(L.hits.load(std::memory_order_acquire) != kLoopRecheck || vm.prog.open_loops.load() == 0);
  uint8_t expected = static_cast<uint8_t>(LoopState::Interpreted);
  if (L.state.load(std::memory_order_relaxed) != expected) {
    // queued or rejected (another thread's count may have overwritten the mark); stored before
    // open_loops is read again, so that a reject_loop racing with this leaves kLoopRecheck
    L.hits.store(kLoopParked, std::memory_order_seq_cst);
    all_rejected(vm);
    return nullptr;
  }
  uint32_t hits = L.hits.load(std::memory_order_relaxed);
  hits = hits >= kLoopParked ? vm.core.tier_threshold : hits + 1;
  L.hits.store(hits, std::memory_order_relaxed);
  if (hits >= vm.core.tier_threshold &&
      L.state.compare_exchange_strong(expected, static_cast<uint8_t>(LoopState::Queued))) {
    // parked before hot(): a compile that ends inside hot() marks it kLoopNative after this
    L.hits.store(kLoopParked, std::memory_order_seq_cst);
    vm.options.tier->hot(vm.prog, fn, loop);
    all_rejected(vm);  // hot() may have rejected the last open loop
  }
  return nullptr;
}

}  // namespace pure::vm

// ---- the no-throw entry for native code ------------------------------------------------------------

extern "C" const pure::vm::Instr* pure_step(pure::vm::VMCore* core, pure::vm::Slot** base,
                                            const pure::vm::Instr* ip) noexcept {
  using namespace pure::vm;
  VM& vm = *core->vm;
  // step() never tiers up: native code that steps over a loop head must not re-enter itself
  uint32_t tier = core->tier_up;
  core->tier_up = 0;
  const Instr* next = kFaulted;
  keep_fault(vm, ip, [&] { next = step(vm, *base, ip); });
  ip = next;
  core->tier_up = tier;
  core->faulted = ip == kFaulted;
  return ip;
}
