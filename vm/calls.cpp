// vm/calls.cpp — calls and returns, events as transactions, faults and unwinding, run_main.
#include <algorithm>
#include <cstdio>
#include <new>
#include <type_traits>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "base/assert.h"
#include "runtime/memory.h"
#include "vm/exec.h"

namespace pure::vm {

constexpr size_t kStackSlots = limits::kStackSlots;

// Address space for one of a machine's fixed stacks (the slot stack, the call records): its pages
// come as calls go deep, 4 KiB at a time. Not from malloc, which in the shipped programs maps
// large blocks on 2 MiB pages (tools/allocator.h): a host's event touches the first few KiB of
// the 32 MiB slot stack and of the call records, and each of the two would cost a whole huge page
// on every thread that runs machines (4 MiB a thread, 8 in pure-serve's owner and I/O thread).
// Sanitizer builds take the arrays from the heap, where out-of-bounds reads are caught.
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define PURE_STACK_MAPPED 1
#else
#define PURE_STACK_MAPPED 0
#endif
template <class T>
class StackSpace {
 public:
  explicit StackSpace(size_t n) : bytes_(n * sizeof(T)) {
#if PURE_STACK_MAPPED
    void* m = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    madvise(m, bytes_, MADV_NOHUGEPAGE);  // a hint: without it (THP "always") the pages are larger
    p_ = static_cast<T*>(m);
#else
    p_ = static_cast<T*>(::operator new(bytes_));
#endif
  }
  ~StackSpace() {
#if PURE_STACK_MAPPED
    munmap(p_, bytes_);
#else
    ::operator delete(p_);
#endif
  }
  StackSpace(const StackSpace&) = delete;
  StackSpace& operator=(const StackSpace&) = delete;
  T* get() const { return p_; }

 private:
  size_t bytes_;
  T* p_;
};

// The slot stack ends at kStackSlots; the spare slots past it are for inlined calls' code, which
// may use up to limits::kInlineSlots slots past what a call of its function checked (ir/inline.cpp).
// (Slot and CallInfo have no constructors: nothing is written until a call writes it.)
struct MachineMemory {
  StackSpace<Slot> stack{kStackSlots + limits::kInlineSlots};
  StackSpace<CallInfo> calls{kMaxCallDepth};
  std::vector<Iterator> iters;
};
static_assert(std::is_trivially_default_constructible_v<Slot> && std::is_trivially_default_constructible_v<CallInfo>);

// One spare per thread: a machine takes it when it starts and gives it back when it ends, so a
// host's calls reuse the slot stack and the stacks' capacity instead of allocating them.
static thread_local std::unique_ptr<MachineMemory> t_spare_memory;

VM::VM(const Program& p, rt::Store* s, const RunOptions& o)
    : core{static_cast<int64_t>(std::min<uint64_t>(o.max_steps, INT64_MAX)), nullptr, this,
           // a Program whose loops are all rejected has nothing left to tier up: no check at all
           o.tier != nullptr && p.open_loops.load(std::memory_order_seq_cst) != 0, 0, o.tier ? std::min(o.tier->threshold, kLoopParked - 1) : 0, nullptr, p.loop_hits.get()},
      prog(p), store(s), options(o), memory(t_spare_memory ? std::move(t_spare_memory) : std::make_unique<MachineMemory>()) {
  stack = memory->stack.get();
  core.stack_end = stack + kStackSlots;
  calls.attach(memory->calls.get(), kMaxCallDepth);
  iters.swap(memory->iters);
  core.iters = iters.data();
  spare_cursors.resize(p.stored.size());
  set_budget(*this, core.steps_left);
}

void set_budget(VM& vm, int64_t steps) {
  vm.core.steps_left = vm.options.cancel ? std::min(steps, limits::kStepSlice) : steps;
  vm.steps_reserve = steps - vm.core.steps_left;
}

VM::~VM() {
  flush_output();
  PURE_ASSERT(calls.empty() && iters.empty());
  calls.clear();
  iters.clear();
  iters.swap(memory->iters);
  if (!t_spare_memory) t_spare_memory = std::move(memory);
}

void VM::flush_output() {
  if (output.empty()) return;
  if (options.write_output) {
    options.write_output(output);
  } else {
    // past stdio's own buffer too, so what was flushed is on its way (a pipe, a terminal)
    std::fwrite(output.data(), 1, output.size(), stdout);
    std::fflush(stdout);
  }
  output.clear();
}

void fault(const Instr* ip, std::string message) { throw Fault{std::move(message), ip}; }

void overflow(const Instr* ip, const char* op, int64_t a, int64_t b) {
  fault(ip, "integer overflow: " + std::to_string(a) + " " + op + " " + std::to_string(b) + " does not fit in 64 bits");
}

void bad_shift(const Instr* ip, const char* op, int64_t a, int64_t n) {
  fault(ip, "shift amount out of range: " + std::to_string(a) + " " + op + " " + std::to_string(n) +
                " (the amount must be 0 to 63)");
}

void budget_spent(VM& vm, const Instr* ip) {
  if (vm.options.cancel) {  // a slice ran out: cancelled, the next slice, or the budget spent
    if (const char* why = vm.options.cancel->load(std::memory_order_acquire)) {
      vm.cancelled = true;
      fault(ip, why);
    }
    if (int64_t left = budget_left(vm); left >= 0) return set_budget(vm, left);
  }
  uint64_t n = vm.options.max_steps;
  fault(ip, "step budget spent (" + std::to_string(n) + (n == 1 ? " step; " : " steps; ") + kStepDefinition +
                "); raise it with " + vm.options.steps_option);
}

void no_value(const Instr* ip, const rt::Text* reason) {
  fault(ip, "the event failed, so its outcome has no value (reason: " + std::string(reason->view()) +
                "); check '.ok' before reading '.value'");
}

void index_error(const Instr* ip, int64_t pos, int64_t count) {
  fault(ip, "index " + std::to_string(pos) + " is out of range for a sequence of " + std::to_string(count) +
                (count == 1 ? " item" : " items"));
}

rt::Text* concat(const Instr* ip, rt::Text* a, rt::Text* b, bool in_place) {
  uint64_t len = uint64_t{a->len} + b->len;
  if (len > rt::kMaxTextBytes) fault(ip, "text too long (" + std::to_string(len) + " bytes; the limit is " + limits::kTextBytesText + ")");
  if (in_place && len <= a->cap) {  // s = s + t with s unshared: append where it is
    std::memcpy(a->bytes + a->len, b->bytes, b->len);
    a->len = static_cast<uint32_t>(len);
    // all ASCII stays true only if b is known to be; not all ASCII stays true
    if ((a->flags & rt::kTextAscii) && !(b->flags & rt::kTextAscii)) a->flags &= static_cast<uint16_t>(~rt::kTextAscii);
    return a;
  }
  // Grow geometrically when appending to an unshared text, so building a text by repeated
  // appends costs linear time overall.
  uint64_t cap = in_place ? std::min<uint64_t>(std::max<uint64_t>(len, uint64_t{a->cap} * 2), rt::kMaxTextBytes) : len;
  rt::Text* r = alloc_text(ip, static_cast<uint32_t>(len), static_cast<uint32_t>(cap));
  std::memcpy(r->bytes, a->bytes, a->len);
  std::memcpy(r->bytes + a->len, b->bytes, b->len);
  return r;
}

rt::Text* load_text_cell(VM& vm, rt::Cell c) {
  rt::Text* t = reinterpret_cast<rt::Text*>(c);
  if (t->stored() && vm.transaction_depth == 0) return rt::text_new(t->view());
  rt::text_retain(t);
  return t;
}

// A store text leaving an event or query becomes the VM's own copy.
static rt::Text* own_text(rt::Text* t) {
  if (!t || !t->stored()) return t;
  return rt::text_new(t->view());  // the slot's borrowed pointer needs no release
}

void materialize(VM& vm, Slot& slot, bool is_list) {
  rt::MeterNoThrow counted_only;  // runs while a query's frame is half gone: must not stop here
  if (!is_list) {
    slot.t = own_text(slot.t);
    return;
  }
  rt::EventList* l = slot.l;
  const rt::ListShape& shape = l->shape();
  if (!shape.any_text) return;
  // rewrite every stored text cell in place (sequences only hold rows in cells)
  for (int64_t i = 0; i < l->count() && shape.sequence; ++i) {
    rt::Cell* row = l->at_mut(i);
    for (uint32_t c = 0; c < shape.width(); ++c)
      if (shape.cols[c] == rt::ColType::Text) row[c] = reinterpret_cast<rt::Cell>(own_text(reinterpret_cast<rt::Text*>(row[c])));
  }
  if (!shape.sequence) {
    rt::EventList::Walk w;
    while (const rt::Cell* row = l->walk_next(w, nullptr, 0, false, 0, 0)) {
      rt::Cell* r = const_cast<rt::Cell*>(row);
      for (uint32_t c = 0; c < shape.width(); ++c)
        if (shape.cols[c] == rt::ColType::Text) r[c] = reinterpret_cast<rt::Cell>(own_text(reinterpret_cast<rt::Text*>(r[c])));
    }
  }
}

IteratorLayout iterator_layout() {
  // measured on an instance: Iterator is not standard-layout, so offsetof does not apply
  Iterator it;
  auto at = [&](const void* field) {
    return static_cast<uint32_t>(static_cast<const char*>(field) - reinterpret_cast<const char*>(&it));
  };
  static_assert(sizeof(it.run_left) == 8 && sizeof(it.width) == 4 && sizeof(it.one_run) == 1);
  return IteratorLayout{static_cast<uint32_t>(sizeof(Iterator)), at(&it.run), at(&it.run_left), at(&it.width), at(&it.one_run)};
}

void release_iterators(VM& vm, uint32_t down_to) {
  while (vm.iters.size() > down_to) {
    Iterator& it = vm.iters.back();
    if (it.list) rt::list_release(it.list);
    if (it.cursor && it.prefix_len > 0) vm.spare_cursors[it.stored] = std::move(it.cursor);
    vm.iters.pop_back();
  }
}

// Releases what a frame owns. Only text and list slots own anything; the call area never does
// (writes into it do not release), so nothing else needs clearing.
void release_frame(VM& vm, const CallInfo& ci) {
  const Function& f = *ci.fn;
  for (uint16_t i : f.text_slots) {
    rt::text_release(ci.base[i].t);
    ci.base[i].u = 0;
  }
  for (uint16_t i : f.list_slots) {
    rt::list_release(ci.base[i].l);
    ci.base[i].u = 0;
  }
}

void stack_overflow(VM& vm, const Instr* ip) {
  fault(ip, "stack overflow: calls nested " + std::to_string(vm.calls.size()) + " deep");
}

// An event or query that main calls gets its own copy of each list argument, as a client's call
// would: what it does to the list is not seen by main (nor undone with a rolled-back event).
static void copy_list_args(const Function& callee, Slot* base) {
  Slot* slot = base;
  for (const ir::ValueType& param : callee.param_types) {
    // an item's list fields (`o: Order` with `lines: seq Line`, at any depth) are copied as a list
    // parameter is
    for (uint32_t k = 0; k < param.width(); ++k, ++slot) {
      const ir::ValueType& t = param.slot(k);
      if (t.kind != ir::ValueType::Kind::Seq) continue;
      rt::EventList* from = slot->l;
      std::unique_ptr<rt::EventList, void (*)(rt::EventList*)> copy(new rt::EventList(&from->shape()), rt::list_release);
      copy->reserve(from->count());  // past the memory budget: a fault (the caller releases the arguments)
      std::vector<rt::Cell> row(from->shape().width());
      for (int64_t i = 0; i < from->count(); ++i) {
        from->read_row(i, row.data());
        copy->push(row.data());
      }
      rt::list_release(from);
      slot->l = copy.release();
    }
  }
}

// The arguments of a call that faults before its frame exists: the parameters arrive owned in the
// caller's call area, which nothing releases (release_frame), so they are released here.
static void release_args(const Function& callee, Slot* base) {
  for (uint16_t i : callee.text_slots)
    if (i < callee.param_slots) {
      rt::text_release(base[i].t);
      base[i].u = 0;
    }
  for (uint16_t i : callee.list_slots)
    if (i < callee.param_slots) {
      rt::list_release(base[i].l);
      base[i].u = 0;
    }
}

const Instr* call_function(VM& vm, Slot*& s, const Instr* ip) {
  const Function& callee = vm.prog.functions[ip->imm];
  Slot* base = s + ip->a;
  try {
    if (--vm.core.steps_left < 0) budget_spent(vm, ip);  // returns when a slice of a cancellable run ends
    if (base + callee.overflow_need > vm.core.stack_end || vm.calls.full()) stack_overflow(vm, ip);
  } catch (...) {
    release_args(callee, base);
    throw;
  }
  // Text and list slots start empty (writes release the old value); parameters arrive owned.
  for (uint16_t i : callee.text_slots)
    if (i >= callee.param_slots) base[i].u = 0;
  for (uint16_t i : callee.list_slots)
    if (i >= callee.param_slots) base[i].u = 0;
  CallInfo ci{&callee, base, ip + 1, static_cast<uint32_t>(vm.iters.size()), Boundary::None, 0, base};
  if (vm.transaction_depth == 0 && (callee.kind == FuncKind::Event || callee.kind == FuncKind::Query)) {
    ci.boundary = callee.kind == FuncKind::Event ? Boundary::Event : ip->c == 1 ? Boundary::Caught : Boundary::Query;
    // Each invocation from outside gets a budget of its own; the caller's is set aside.
    ci.saved_steps = budget_left(vm);
    set_budget(vm, static_cast<int64_t>(std::min<uint64_t>(vm.options.max_steps, INT64_MAX)));
    try {
      copy_list_args(callee, base);  // past the memory budget: a fault at the call
    } catch (...) {  // a Fault, or the memory budget spent
      release_args(callee, base);
      throw;
    }
    if (ci.boundary == Boundary::Event) {
      vm.store->begin();
      if (vm.options.on_commit || vm.options.on_fail) {  // a host logs events: keep what this one was called with
        vm.event_args.clear();
        const Slot* in = base;
        for (const ir::ValueType& t : callee.param_types) vm.event_args.push_back(copy_value(in, t));
      }
    } else {
      vm.snapshot = vm.store->publish();
    }  // the query reads the state as of its start
    ++vm.transaction_depth;
  } else if (callee.kind == FuncKind::Event) {
    // An event called by the running event: inside its transaction and budget, with its own copy
    // of each list argument as a client's call would have. With `try`, a savepoint first.
    try {
      copy_list_args(callee, base);
    } catch (...) {
      release_args(callee, base);
      throw;
    }
    if (ip->c == 1) {
      ci.boundary = Boundary::Savepoint;
      ci.savepoint = vm.store->savepoint();
      ci.kept_walks = keep_walks(vm);  // the caller's walks of live stored lists, should this one fail
    }
  }
  vm.calls.push_back(ci);
  s = base;
  return callee.code.data();
}

const Instr* return_from(VM& vm, Slot*& s, const Instr* ip) {
  CallInfo ci = vm.calls.back();
  const Function& f = *ci.fn;
  uint32_t n = ip->c;
  Slot results[16];
  std::vector<Slot> many;
  Slot* out = n <= 16 ? results : (many.resize(n), many.data());
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = s[ip->b + i];
    if (f.result_kind[i] == 1) rt::text_retain(out[i].t);
    if (f.result_kind[i] == 2) rt::list_retain(out[i].l);
  }
  release_iterators(vm, ci.iter_base);
  release_frame(vm, ci);
  // An event's result goes after its outcome's ok and reason (frontend/types.h: Type::value), and
  // so does that of a query main called with `try`.
  // An event called plainly by another event gives its result alone, as a function does.
  const uint32_t at = (f.kind == FuncKind::Event && ci.boundary != Boundary::None) || ci.boundary == Boundary::Caught ? 2 : 0;
  if (n == 1 && ci.result_to != ci.base) *ci.result_to = out[0];  // CALL_PLAIN's destination
  else
    for (uint32_t i = 0; i < n; ++i) s[at + i] = out[i];
  if (ci.boundary == Boundary::Savepoint) {
    // Committed into the caller's transaction: the savepoint is simply no longer needed. Texts it
    // returns stay valid as the caller's own reads do (until the outer commit or rollback).
    s[0].i = 1;                 // outcome.ok
    s[1].t = vm.prog.texts[2];  // outcome.reason = ""
  } else if (ci.boundary != Boundary::None) {
    --vm.transaction_depth;
    set_budget(vm, ci.saved_steps);
    if (ci.boundary == Boundary::Event) {
      vm.store->commit();
      s[0].i = 1;                // outcome.ok
      s[1].t = vm.prog.texts[2];  // outcome.reason = ""
      for (uint32_t i = 0; i < n; ++i)
        if (f.result_kind[i]) materialize(vm, s[at + i], f.result_kind[i] == 2);
    } else {
      if (ci.boundary == Boundary::Caught) {
        s[0].i = 1;                // outcome.ok
        s[1].t = vm.prog.texts[2];  // outcome.reason = ""
      }
      for (uint32_t i = 0; i < n; ++i)
        if (f.result_kind[i]) materialize(vm, s[at + i], f.result_kind[i] == 2);
      vm.snapshot.reset();
    }
  }
  vm.calls.pop_back();
  if (ci.boundary == Boundary::Event && vm.options.on_commit && ci.return_ip) {
    std::string error = vm.options.on_commit(static_cast<uint32_t>(&f - vm.prog.functions.data()), vm.event_args);
    vm.event_args.clear();
    if (!error.empty()) fault(ci.return_ip - 1, std::move(error));  // located at main's call of the event
  }
  if (!ci.return_ip) return nullptr;
  s = vm.calls.back().base;
  return ci.return_ip;
}

}  // namespace pure::vm
