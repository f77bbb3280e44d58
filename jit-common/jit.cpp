// jit-common/jit.cpp — the tier: decides which hot loops to compile, runs the compiles on one
// background thread (or inline when asked, for tests) and publishes their entries; the switches
// from the environment. Shared by every backend; no backend code here.
#include "jit-common/jit.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>


namespace pure::jit {

bool runtime_work(const vm::Instr& in, bool row_known, bool a_text) {
  switch (in.op) {
    case vm::Op::INT_TEXT: return true;
    case vm::Op::SEQ_GET: case vm::Op::SEQ_PUSH: return a_text;
    case vm::Op::MAP_ENSURE: case vm::Op::MAP_GET_FIELD: case vm::Op::MAP_SET_FIELD: return !row_known;
    default: return false;
  }
}

using vm::Op;

// ir/ops.def's `native` flag. What the JITs do with those: arithmetic, comparisons and jumps in
// registers; plain sequences in place (bounds checked), other rows through a runtime call or
// pure_step; texts and keyed lists with a one-cell key through runtime calls for the common case,
// pure_step for the rest; an inlined call's step and slot check (its depth check holds in native
// code: vm/driver.cpp); ITER_NEXT's next row of a leaf run inline, a new run of a snapshot's rows
// through pure_jit_iter_refill, the rest (the end of a run of another kind, a changed list, the
// budget) through pure_step; ST_ITER and ITER_END through pure_jit_st_iter and pure_jit_iter_end
// (runtime_calls.def). Calls, returns and FAIL always leave to the interpreter.
Lowering shared_lowering(Op op) {
  if (ir::op_flags(op) & ir::opf::native) return Lowering::Native;
  return ir::op_changes_frame(op) || ir::op_ends_block(op) ? Lowering::Exit : Lowering::Step;
}

double native_share(const BackendKind& backend, const vm::Function& function, const vm::LoopInfo& loop) {
  std::vector<bool> text(function.stack_need + 1u, false);
  for (uint16_t t : function.text_slots)
    if (t < text.size()) text[t] = true;
  std::vector<bool> in_loop(function.code.size(), false);
  for (uint32_t b : loop.blocks)
    for (uint32_t pc = function.blocks[b].start_pc; pc < function.blocks[b].end_pc; ++pc) in_loop[pc] = true;
  const std::vector<bool> known = backend.call_cost ? rows_known(function, in_loop) : std::vector<bool>();
  uint64_t total = 0, native = 0;
  for (uint32_t b : loop.blocks)
    for (uint32_t pc = function.blocks[b].start_pc; pc < function.blocks[b].end_pc; ++pc) {
      const vm::Instr& in = function.code[pc];
      ++total;
      // ITER_NEXT through pure_step costs more per row than the interpreter's inline leaf-run
      // path (bench/README.md, "The JIT tier's settings"): such loops
      // stay interpreted while the backend does not compile ITER_NEXT natively. A backend that
      // does serves rows only from the leaf runs of a stored list's snapshot (a walk in main or
      // a query); over an event list, or a stored list walked live in an event, it would step
      // every row, so those loops stay interpreted too
      if (in.op == vm::Op::ITER_NEXT) {
        // a loop over a text's pieces (TEXT_ITER): its ITER_NEXT is the runtime's work (cut the
        // piece, make or rewrite its text) through a runtime call on every engine
        // (pure_jit_iter_next_piece): weighed like one, so the body around it decides
        bool pieces = false;
        for (const vm::Instr& from : function.code) pieces |= from.op == vm::Op::TEXT_ITER && from.a == in.b;
        if (pieces) {
          if (backend.call_cost) total += backend.call_cost - 1;
          else ++native;
          continue;
        }
        if (backend.lowering_of(in.op) != Lowering::Native) return 0.0;
        bool stored = false;
        for (const vm::Instr& from : function.code) stored |= from.op == vm::Op::ST_ITER && from.a == in.b;
        if (function.kind == FuncKind::Event || !stored) return 0.0;
        ++native;
        continue;
      }
      // SEQ_SET of a text takes the pure_step path (it counts references); SEQ_GET and SEQ_PUSH
      // of one take a runtime call that counts them (runtime_calls.h)
      bool texts = in.op == vm::Op::SEQ_SET && in.a < text.size() && text[in.a];
      bool is_native = backend.lowering_of(in.op) == Lowering::Native && !texts;
      if (is_native && backend.call_cost && runtime_work(in, known[pc], in.a < text.size() && text[in.a])) {
        total += backend.call_cost - 1;  // (the one above counted already)
        is_native = false;
      }
      native += is_native;
    }
  return total ? static_cast<double>(native) / static_cast<double>(total) : 0.0;
}

uint32_t iter_row_width(const std::vector<vm::Instr>& code, uint32_t pc) {
  const vm::Instr& in = code[pc];
  if (in.b <= in.a || in.b - in.a > 64) return 0;
  uint32_t width = in.b - in.a;
  const vm::Instr* body = pc + 1 < code.size() ? &code[pc + 1] : nullptr;
  if (body && body->op == vm::Op::JUMP && body->imm > 0 && pc + 1 + static_cast<uint64_t>(body->imm) < code.size())
    body = &code[pc + 1 + static_cast<size_t>(body->imm)];
  if (width > 1 && body && body->op == vm::Op::ADDI_INT && body->a == in.b - 1 && body->b == in.b - 1 && body->imm == 1)
    --width;  // the position's slot
  return width;
}

static bool is_map_field_op(vm::Op op) {
  return op == vm::Op::MAP_ENSURE || op == vm::Op::MAP_GET_FIELD || op == vm::Op::MAP_SET_FIELD;
}

// Instructions that touch no list and call nothing that could (their faults leave native code).
static bool touches_no_list(vm::Op op) {
  switch (op) {
    case vm::Op::CONST: case vm::Op::MOVE: case vm::Op::TAKE:
    case vm::Op::ADD_INT: case vm::Op::SUB_INT: case vm::Op::MUL_INT: case vm::Op::DIV_INT: case vm::Op::MOD_INT:
    case vm::Op::ADDI_INT: case vm::Op::NEG_INT:
    case vm::Op::AND_INT: case vm::Op::OR_INT: case vm::Op::XOR_INT: case vm::Op::BNOT_INT:
    case vm::Op::SHL_INT: case vm::Op::SHR_INT:
    case vm::Op::ADD_NUM: case vm::Op::SUB_NUM: case vm::Op::MUL_NUM: case vm::Op::DIV_NUM: case vm::Op::MOD_NUM:
    case vm::Op::NEG_NUM:
    case vm::Op::EQ_INT: case vm::Op::NE_INT: case vm::Op::LT_INT: case vm::Op::LE_INT:
    case vm::Op::EQ_NUM: case vm::Op::NE_NUM: case vm::Op::LT_NUM: case vm::Op::LE_NUM:
    case vm::Op::NOT: case vm::Op::INT_TO_NUM: case vm::Op::NUM_TO_INT:
      return true;
    default:
      return false;
  }
}

EntryConstants entry_constants(const vm::Function& function) {
  EntryConstants out;
  const size_t n = static_cast<size_t>(function.stack_need) + 1;
  out.constant.assign(n, false);
  out.value.assign(n, 0);
  for (auto [s, value] : function.entry_constants)
    if (s < n) {
      out.constant[s] = true;
      out.value[s] = value;
    }
  return out;
}

std::vector<bool> written_in(const vm::Function& function, const std::vector<bool>& in_region) {
  const size_t n = static_cast<size_t>(function.stack_need) + 1;
  std::vector<bool> out(n, false);
  auto from = [&](size_t first, size_t end) {
    for (size_t s = first; s < end && s < n; ++s) out[s] = true;
  };
  for (uint32_t pc = 0; pc < function.code.size(); ++pc) {
    if (pc >= in_region.size() || !in_region[pc]) continue;
    const vm::Instr& in = function.code[pc];
    const uint16_t operands[3] = {in.a, in.b, in.c};
    for (int i = 0; i < 3; ++i) {
      const uint32_t s = operands[i];
      switch (ir::op_mode(in.op, i)) {
        case ir::OperandMode::Write: case ir::OperandMode::Modify: from(s, s + 1u); break;
        case ir::OperandMode::WriteRun: from(s, s < function.frame_slots ? function.frame_slots : n); break;
        case ir::OperandMode::Frame: from(s, n); break;
        default: break;
      }
    }
    if (int32_t to = vm::plain_call_result_slot(in); to >= 0) from(static_cast<size_t>(to), static_cast<size_t>(to) + 1);
  }
  return out;
}

std::vector<bool> rows_known(const vm::Function& function, const std::vector<bool>& in_region) {
  const std::vector<vm::Instr>& code = function.code;
  std::vector<bool> target(code.size() + 1, false), known(code.size(), false);
  for (uint32_t pc = 0; pc < code.size(); ++pc)
    if (ir::op_jumps(code[pc].op)) {
      int64_t to = static_cast<int64_t>(pc) + code[pc].imm;
      if (to >= 0 && static_cast<uint64_t>(to) < code.size()) target[static_cast<size_t>(to)] = true;
    }
  for (uint32_t pc = 1; pc < code.size(); ++pc) {
    const vm::Instr& in = code[pc];
    if (!in_region[pc] || !is_map_field_op(in.op) || target[pc]) continue;
    for (uint32_t p = pc - 1;; --p) {
      const vm::Instr& before = code[p];
      if (!in_region[p]) break;
      if (is_map_field_op(before.op)) {
        known[pc] = before.b == in.b && before.c == in.c;
        break;
      }
      bool writes = before.a == in.b || before.a == in.c ||
                    (before.op == vm::Op::TAKE && (before.b == in.b || before.b == in.c));
      if (!touches_no_list(before.op) || writes || target[p] || p == 0) break;
    }
  }
  return known;
}

namespace {

double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

uint64_t loop_instructions(const vm::Function& function, const vm::LoopInfo& loop) {
  uint64_t n = 0;
  for (uint32_t b : loop.blocks) n += function.blocks[b].end_pc - function.blocks[b].start_pc;
  return n;
}

using Clock = std::chrono::steady_clock;

struct Job {
  const vm::Program* program;
  const vm::Function* function;
  uint32_t loop;
  Clock::time_point queued;
  std::vector<uint32_t> also;  // loops nested in it that take its code too (Options::nested)
};

}  // namespace

// How long the compile thread waits with nothing queued before the backend gives back what only
// compiling needs (Backend::idle): longer than the gaps between a program's first hot loops,
// short next to a server's life.
constexpr std::chrono::milliseconds kIdleDelay{250};

struct Jit::Impl {
  const BackendKind* kind;
  Options options;
  std::mutex lock;
  std::condition_variable wake, idle;
  std::deque<Job> queue;
  bool busy = false, stopping = false;
  std::atomic<bool> cancel{false};  // stop(): the compile in flight gives up at its next phase
  std::thread worker;
  std::unique_ptr<Backend> backend;  // made by the first compile, on the thread that compiles
  Stats stats;                        // under lock
  bool debug = std::getenv("PURE_JIT_DEBUG") != nullptr;
  // Options::payoff: the passes counted so far of each hot loop whose compile has not paid yet
  // (under lock), and whether a compile has been queued (the next ones do not pay the set-up)
  std::unordered_map<const vm::LoopInfo*, uint64_t> passes;
  // loops queued for a compile that serves loops nested in them too (Options::nested; under lock)
  std::unordered_set<const vm::LoopInfo*> nest_queued;
  bool set_up = false;

  // Whether `loop` has run long enough interpreted to pay for its compile (ski rental); counts
  // `threshold` more passes. Called with lock held.
  bool repaid(const vm::Function& function, const vm::LoopInfo& loop) {
    if (!options.payoff || options.threshold == 0) return true;
    const uint64_t cost = (set_up ? 0 : kind->setup_cost) + kind->loop_cost +
                          kind->instruction_cost * loop_instructions(function, loop);
    if (cost == 0) return true;
    uint64_t& seen = passes[&loop];
    seen += options.threshold;
    if (seen * loop_instructions(function, loop) >= cost) {
      if (debug)
        std::fprintf(stderr, "pure-jit: %s loop %u (%llu instructions) queued after %llu passes (expected cost %llu loop instructions)\n",
                     function.name.c_str(), static_cast<unsigned>(&loop - function.loops.data()),
                     static_cast<unsigned long long>(loop_instructions(function, loop)),
                     static_cast<unsigned long long>(seen), static_cast<unsigned long long>(cost));
      passes.erase(&loop);
      return true;
    }
    if (seen == options.threshold) ++stats.waited;
    ++stats.waits;
    return false;
  }

  void compile(Job job) {
    double start = thread_cpu_ms();
    std::string error = "cancelled";
    vm::NativeLoop entry = nullptr;
    double setup = 0;
    uint32_t too_large = 0;
    Backend::CacheUse cached;
    if (!cancel.load(std::memory_order_relaxed)) {
      if (!backend) {
        backend = kind->make();  // the JIT itself: on the first compile
        setup = thread_cpu_ms() - start;
      }
      entry = backend->compile(*job.function, job.loop, error, &cancel);
      // A loop nest refused as too large (Options::nested took the enclosing loop): the loop
      // inside it on the way to the one that got hot is tried instead, the refused one kept
      // interpreted. The refusal comes before the backend's costly part, so each try is cheap.
      while (!entry && !job.also.empty() && error.compare(0, sizeof kTooLarge - 1, kTooLarge) == 0 &&
             !cancel.load(std::memory_order_relaxed)) {
        if (debug) std::fprintf(stderr, "pure-jit: %s loop %u not compiled: %s\n", job.function->name.c_str(), job.loop, error.c_str());
        vm::reject_loop(*job.program, job.function->loops[job.loop]);
        ++too_large;
        job.loop = job.also.back();
        job.also.pop_back();
        entry = backend->compile(*job.function, job.loop, error, &cancel);
      }
      cached = backend->last_cache_use();
    }
    const vm::LoopInfo& loop = job.function->loops[job.loop];
    double ms = thread_cpu_ms() - start;
    double wall = std::chrono::duration<double, std::milli>(Clock::now() - job.queued).count();
    if (!entry && cancel.load(std::memory_order_relaxed)) return;  // stopped: nothing will run it
    if (entry) {
      vm::publish_loop(loop, entry);
      for (uint32_t inner : job.also) vm::publish_loop(job.function->loops[inner], entry);
    } else {
      vm::reject_loop(*job.program, loop);
      for (uint32_t inner : job.also) vm::reject_loop(*job.program, job.function->loops[inner]);
      if (debug) std::fprintf(stderr, "pure-jit: %s loop %u not compiled: %s\n", job.function->name.c_str(), job.loop, error.c_str());
    }
    std::lock_guard<std::mutex> guard(lock);
    stats.compile_ms += ms;
    stats.setup_ms += setup;
    stats.rejected += too_large;
    stats.too_large += too_large;
    if (!entry && error.compare(0, sizeof kTooLarge - 1, kTooLarge) == 0) ++stats.too_large;
    if (entry) {
      stats.compiled += 1 + static_cast<uint32_t>(job.also.size());
      stats.nested += static_cast<uint32_t>(job.also.size());
      stats.loop_ms.push_back(ms - setup);
      if (cached.kind == Backend::CacheUse::hit) {
        ++stats.cache_hits;
        stats.cache_saved_ms += cached.made_ms - (ms - setup);
      } else if (cached.kind == Backend::CacheUse::miss) {
        ++stats.cache_misses;
      }
      if (stats.first_ms < 0) stats.first_ms = wall;
      uint64_t n = loop_instructions(*job.function, loop);
      stats.instructions += n;
      stats.native_instructions += static_cast<uint64_t>(native_share(*kind, *job.function, loop) * static_cast<double>(n) + 0.5);
    } else {
      stats.rejected += 1 + static_cast<uint32_t>(job.also.size());
    }
  }

  void run() {
    std::unique_lock<std::mutex> guard(lock);
    while (true) {
      wake.wait(guard, [&] { return stopping || !queue.empty(); });
      if (stopping) break;
      Job job = queue.front();
      queue.pop_front();
      busy = true;
      guard.unlock();
      compile(job);
      guard.lock();
      busy = false;
      if (queue.empty()) idle.notify_all();
      // Nothing queued: the backend may give back what only compiling needs (LLVM's code pages),
      // once no compile has come for kIdleDelay. At once, a program whose loops get hot one after
      // another (sieve's two, spectralnorm's five) faulted the engine's pages back in for each.
      if (queue.empty() && backend && !stopping &&
          !wake.wait_for(guard, kIdleDelay, [&] { return stopping || !queue.empty(); })) {
        guard.unlock();
        backend->idle();
        guard.lock();
      }
    }
    busy = false;
    idle.notify_all();
  }
};

Jit::Jit(const BackendKind& backend, const Options& options) : impl_(std::make_unique<Impl>()) {
  impl_->kind = &backend;
  impl_->options = options;
  threshold = options.threshold;
}

Jit::~Jit() { stop(); }

bool Jit::cancel() {
  std::lock_guard<std::mutex> guard(impl_->lock);
  impl_->stopping = true;
  impl_->queue.clear();  // compiles nobody will use
  impl_->cancel.store(true, std::memory_order_relaxed);
  impl_->wake.notify_all();
  return impl_->busy;
}

void Jit::stop() {
  cancel();
  if (impl_->worker.joinable()) impl_->worker.join();
}

void Jit::hot(const vm::Program& program, const vm::Function& function, uint32_t loop) {
  const vm::LoopInfo& info = function.loops[loop];
  const double cut = impl_->options.min_native_share;
  bool waiting;  // checked before (Options::payoff): its share, and every other loop's, is known
  {
    std::lock_guard<std::mutex> guard(impl_->lock);
    waiting = impl_->passes.count(&info) != 0;
  }
  if (!waiting) hot_first(program, function, info, cut);
  if (info.state.load(std::memory_order_relaxed) == static_cast<uint8_t>(vm::LoopState::Rejected)) return;
  queue_if_repaid(program, function, loop);
}

// hot()'s first check of a loop: the rejections by native share.
void Jit::hot_first(const vm::Program& program, const vm::Function& function, const vm::LoopInfo& info, double cut) {
  // A loop's native share is fixed by its code, so every other loop of the program still
  // undecided that would be rejected when it got hot is rejected now, claimed first as tier_up()
  // claims a hot loop (interpreted -> queued), so each loop is decided once whichever thread gets
  // there first. A program whose loops all compile too little then stops its tier check at its
  // first hot loop (vm/driver.cpp), not only once every loop has got hot, which loops of fewer
  // passes than the threshold never do (textkeys' first and last). Loops that would compile stay
  // undecided and are measured again at the next hot(): at most once per loop of the program.
  uint32_t early = 0;
  if (cut > 0)
    for (const vm::Function& f : program.functions)
      for (const vm::LoopInfo& other : f.loops) {
        uint8_t expected = static_cast<uint8_t>(vm::LoopState::Interpreted);
        if (&other == &info || other.state.load(std::memory_order_relaxed) != expected ||
            native_share(*impl_->kind, f, other) >= cut ||
            !other.state.compare_exchange_strong(expected, static_cast<uint8_t>(vm::LoopState::Queued)))
          continue;
        vm::reject_loop(program, other);
        ++early;
      }
  if (early) {
    std::lock_guard<std::mutex> guard(impl_->lock);
    impl_->stats.rejected += early;
  }
  if (native_share(*impl_->kind, function, info) < cut) {
    vm::reject_loop(program, info);
    std::lock_guard<std::mutex> guard(impl_->lock);
    ++impl_->stats.rejected;
  }
}

void Jit::queue_if_repaid(const vm::Program& program, const vm::Function& function, uint32_t loop) {
  const vm::LoopInfo& info = function.loops[loop];
  {
    std::lock_guard<std::mutex> guard(impl_->lock);
    if (!impl_->repaid(function, info)) {
      // not yet: interpreted again, counted afresh from 0 (vm/driver.cpp parked its counter
      // before this call; another VM's count racing with this may only bring the next check on)
      info.hits.store(0, std::memory_order_relaxed);
      info.state.store(static_cast<uint8_t>(vm::LoopState::Interpreted), std::memory_order_seq_cst);
      return;
    }
  }
  // Options::nested: the outermost enclosing loop still interpreted that would compile is
  // compiled instead, claimed as tier_up() claims a hot loop, and its code serves each loop on
  // the way; an enclosing loop already compiled lends its code with no compile.
  // An enclosing loop that has got hot itself (its passes reached the threshold: it is waiting
  // for its own compile to pay, Options::payoff) is taken whatever its size: its passes enter the
  // inner loop again and again, and each entry from the interpreter pays its way in and out of
  // native code (fannkuch's outer loop of 77 instructions around six short loops: 0.65 s
  // compiled loop by loop, 0.5 s as one nest). One not hot, at most 3 times the hot loop's own
  // compile (BackendKind's costs, the set-up aside): a loop nested in a large one that would never
  // repay its compile (a program's outer loop of a few passes) loses no more than that.
  Job job{&program, &function, loop, Clock::now(), {}};
  const BackendKind& kind = *impl_->kind;
  auto compile_cost = [&](const vm::LoopInfo& l) { return kind.loop_cost + kind.instruction_cost * loop_instructions(function, l); };
  if (kind.nested_entries && impl_->options.nested) {
    for (int32_t p = function.loops[job.loop].parent; p >= 0; p = function.loops[static_cast<size_t>(p)].parent) {
      const vm::LoopInfo& outer = function.loops[static_cast<size_t>(p)];
      const auto state = static_cast<vm::LoopState>(outer.state.load(std::memory_order_acquire));
      if (state == vm::LoopState::Compiled) {
        vm::NativeLoop entry = outer.entry.load(std::memory_order_acquire);
        vm::publish_loop(function.loops[job.loop], entry);
        for (uint32_t inner : job.also) vm::publish_loop(function.loops[inner], entry);
        std::lock_guard<std::mutex> guard(impl_->lock);
        impl_->stats.compiled += 1 + static_cast<uint32_t>(job.also.size());
        impl_->stats.nested += 1 + static_cast<uint32_t>(job.also.size());
        return;
      }
      if (state == vm::LoopState::Queued && impl_->nest_queued.count(&outer)) {
        // being compiled as a nest whose code will take this loop too: interpreted meanwhile,
        // counted again, and given that code (above) when next hot, instead of a compile alone
        info.hits.store(0, std::memory_order_relaxed);
        info.state.store(static_cast<uint8_t>(vm::LoopState::Interpreted), std::memory_order_seq_cst);
        return;
      }
      uint8_t expected = static_cast<uint8_t>(vm::LoopState::Interpreted);
      bool outer_hot;
      {
        std::lock_guard<std::mutex> guard(impl_->lock);
        outer_hot = impl_->passes.count(&outer) != 0;
      }
      if (state != vm::LoopState::Interpreted || (!outer_hot && compile_cost(outer) > 3 * compile_cost(info)) ||
          native_share(*impl_->kind, function, outer) < impl_->options.min_native_share ||
          !outer.state.compare_exchange_strong(expected, static_cast<uint8_t>(vm::LoopState::Queued)))
        break;
      outer.hits.store(vm::kLoopParked, std::memory_order_seq_cst);  // counted no more
      job.also.push_back(job.loop);
      job.loop = static_cast<uint32_t>(p);
      std::lock_guard<std::mutex> guard(impl_->lock);
      impl_->passes.erase(&outer);
    }
  }
  {
    std::lock_guard<std::mutex> guard(impl_->lock);
    impl_->set_up = true;
    if (kind.nested_entries && impl_->options.nested) impl_->nest_queued.insert(&function.loops[job.loop]);
  }
  if (impl_->options.synchronous) {
    impl_->compile(job);
    return;
  }
  {
    std::lock_guard<std::mutex> guard(impl_->lock);
    if (impl_->stopping) return;
    impl_->queue.push_back(std::move(job));
    if (!impl_->worker.joinable()) impl_->worker = std::thread([this] { impl_->run(); });
  }
  impl_->wake.notify_one();
}

void Jit::drain() {
  std::unique_lock<std::mutex> guard(impl_->lock);
  impl_->idle.wait(guard, [&] { return impl_->queue.empty() && !impl_->busy; });
}

Stats Jit::stats() const {
  std::lock_guard<std::mutex> guard(impl_->lock);
  return impl_->stats;
}

const BackendKind& Jit::backend() const { return *impl_->kind; }

// A 0/1 switch of the environment: `out` unchanged when `name` is unset or empty; false with
// `error` set on any other value, naming what 0 and 1 mean.
static bool read_switch(const char* name, const char* off, const char* on, bool& out, std::string& error) {
  const char* value = std::getenv(name);
  if (!value || !*value) return true;
  std::string v = value;
  if (v != "0" && v != "1") {
    error = std::string(name) + "=" + v + ": expected 0 (" + off + ") or 1 (" + on + ")";
    return false;
  }
  out = v == "1";
  return true;
}

bool read_env(bool available, const char* backend_name, EnvSettings& out, std::string& error) {
  out = EnvSettings{};
  std::string mode = std::getenv("PURE_JIT") ? std::getenv("PURE_JIT") : "";
  if (mode == "0" || mode == "off" || mode == "interp") {
  } else if (mode.empty() || mode == "1" || mode == "on" || mode == "sync" ||
             (backend_name && mode == backend_name)) {
    if (available) {
      out.use_jit = true;
      out.options.synchronous = mode == "sync";
    } else if (!mode.empty()) {
      error = "PURE_JIT=" + mode + " asks for a JIT, and this build has only the interpreter (use PURE_JIT=0)";
      return false;
    }
  } else {
    error = "PURE_JIT=" + mode + ": expected 0 (interpreter), 1 (JIT)" +
            (backend_name ? std::string(", ") + backend_name : std::string()) + " or sync";
    return false;
  }
  if (const char* t = std::getenv("PURE_JIT_THRESHOLD"); t && *t) {
    std::string v = t;
    if (v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
      error = "PURE_JIT_THRESHOLD=" + v + ": expected a whole number of loop passes";
      return false;
    }
    out.options.threshold = static_cast<uint32_t>(std::stoul(v));
  }
  if (const char* m = std::getenv("PURE_JIT_MIN_SHARE"); m && *m) {
    char* end = nullptr;
    double share = std::strtod(m, &end);
    if (*end || !(share >= 0 && share <= 1)) {
      error = std::string("PURE_JIT_MIN_SHARE=") + m + ": expected a share between 0 and 1";
      return false;
    }
    out.options.min_native_share = share;
  }
  if (!read_switch("PURE_JIT_PAYOFF", "compile at the threshold", "once a compile would pay", out.options.payoff, error) ||
      !read_switch("PURE_JIT_NESTED", "each hot loop compiled alone", "its enclosing loop's compile", out.options.nested, error))
    return false;
  out.stats = std::getenv("PURE_JIT_STATS") && std::string(std::getenv("PURE_JIT_STATS")) != "0";
  return true;
}

std::string stats_line(const Stats& st) {
  double share = st.instructions ? 100.0 * static_cast<double>(st.native_instructions) / static_cast<double>(st.instructions) : 0.0;
  std::string per_loop;
  for (double ms : st.loop_ms) {
    char one[32];
    std::snprintf(one, sizeof one, "%s%.1f", per_loop.empty() ? "" : " ", ms);
    per_loop += one;
  }
  // the per-loop times' percentiles (nearest rank), when there are any
  if (!st.loop_ms.empty()) {
    std::vector<double> sorted = st.loop_ms;
    std::sort(sorted.begin(), sorted.end());
    auto rank = [&](double p) { return sorted[static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size()))) - 1]; };
    char one[96];
    std::snprintf(one, sizeof one, "; p50 %.1f, p90 %.1f, p99 %.1f, max %.1f", rank(0.5), rank(0.9), rank(0.99), sorted.back());
    per_loop += one;
  }
  char line[320];
  std::snprintf(line, sizeof line, "pure-jit: %u loops compiled (%u by an enclosing loop's code), %u rejected (%u too large), %u waited; %.0f%% of their instructions native; compile %.1f ms CPU (set-up %.1f; per loop: ",
                st.compiled, st.nested, st.rejected, st.too_large, st.waited, share, st.compile_ms, st.setup_ms);
  std::string out = line + per_loop + ")";
  if (st.first_ms >= 0) {
    std::snprintf(line, sizeof line, "; first native code %.1f ms after its loop got hot", st.first_ms);
    out += line;
  }
  if (st.cache_hits + st.cache_misses > 0) {
    std::snprintf(line, sizeof line, "; code cache: %u hits, %u misses, %.1f ms of compile saved", st.cache_hits, st.cache_misses,
                  st.cache_saved_ms);
    out += line;
  }
  return out;
}

}  // namespace pure::jit
