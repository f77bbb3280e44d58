// vm/calls.cpp — calls and returns, events as transactions, faults and unwinding, run_main.
#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include "vm/exec.h"

namespace pure::vm {

constexpr size_t kStackSlots = size_t{1} << 22;  // 32 MiB of slots

VM::VM(const Program& p, rt::Store& s, const RunOptions& o)
    : prog(p), store(s), options(o), stack(new Slot[kStackSlots]), stack_end(stack.get() + kStackSlots),
      steps_left(static_cast<int64_t>(std::min<uint64_t>(o.max_steps, INT64_MAX))) {
  calls.reserve(1024);
  spare_cursors.resize(p.stored.size());
}

VM::~VM() { flush_output(); }

void VM::flush_output() {
  if (output.empty()) return;
  if (options.write_output) options.write_output(output);
  else std::fwrite(output.data(), 1, output.size(), stdout);
  output.clear();
}

void fault(const Instr* ip, std::string message) { throw Fault{std::move(message), ip}; }

void overflow(const Instr* ip, const char* op, int64_t a, int64_t b) {
  fault(ip, "integer overflow: " + std::to_string(a) + " " + op + " " + std::to_string(b) + " does not fit in 64 bits");
}

void budget_spent(VM& vm, const Instr* ip) {
  uint64_t n = vm.options.max_steps;
  fault(ip, "step budget spent (" + std::to_string(n) + (n == 1 ? " step; " : " steps; ") + kStepDefinition +
                "); raise it with --max-steps");
}

void index_error(const Instr* ip, int64_t pos, int64_t count) {
  fault(ip, "index " + std::to_string(pos) + " is out of range for a sequence of " + std::to_string(count) +
                (count == 1 ? " item" : " items"));
}

rt::Text* concat(const Instr* ip, rt::Text* a, rt::Text* b, bool in_place) {
  uint64_t len = uint64_t{a->len} + b->len;
  if (len > rt::kMaxTextBytes) fault(ip, "text too long (" + std::to_string(len) + " bytes; the limit is 1 GiB)");
  if (in_place && len <= a->cap) {  // s = s + t with s unshared: append where it is
    std::memcpy(a->bytes + a->len, b->bytes, b->len);
    a->len = static_cast<uint32_t>(len);
    return a;
  }
  // Grow geometrically when appending to an unshared text, so building a text by repeated
  // appends costs linear time overall.
  uint64_t cap = in_place ? std::min<uint64_t>(std::max<uint64_t>(len, uint64_t{a->cap} * 2), rt::kMaxTextBytes) : len;
  rt::Text* r = rt::text_alloc(static_cast<uint32_t>(len), static_cast<uint32_t>(cap));
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

void release_iterators(VM& vm, uint32_t down_to) {
  while (vm.iters.size() > down_to) {
    Iterator& it = vm.iters.back();
    rt::list_release(it.list);
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

const Instr* call_function(VM& vm, Slot*& s, const Instr* ip) {
  const Function& callee = vm.prog.functions[ip->imm];
  if (--vm.steps_left < 0) budget_spent(vm, ip);
  Slot* base = s + ip->a;
  if (base + callee.stack_need > vm.stack_end || vm.calls.size() >= kMaxCallDepth) stack_overflow(vm, ip);
  // Text and list slots start empty (writes release the old value); parameters arrive owned.
  for (uint16_t i : callee.text_slots)
    if (i >= callee.param_slots) base[i].u = 0;
  for (uint16_t i : callee.list_slots)
    if (i >= callee.param_slots) base[i].u = 0;
  CallInfo ci{&callee, base, ip + 1, static_cast<uint32_t>(vm.iters.size()), Boundary::None, 0};
  if (vm.transaction_depth == 0 && (callee.kind == FuncKind::Event || callee.kind == FuncKind::Query)) {
    ci.boundary = callee.kind == FuncKind::Event ? Boundary::Event : Boundary::Query;
    // Each invocation from outside gets a budget of its own; the caller's is set aside.
    ci.saved_steps = vm.steps_left;
    vm.steps_left = static_cast<int64_t>(std::min<uint64_t>(vm.options.max_steps, INT64_MAX));
    if (ci.boundary == Boundary::Event) vm.store.begin();
    else vm.snapshot = vm.store.publish();  // the query reads the state as of its start
    ++vm.transaction_depth;
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
  for (uint32_t i = 0; i < n; ++i) s[i] = out[i];
  if (ci.boundary != Boundary::None) {
    --vm.transaction_depth;
    vm.steps_left = ci.saved_steps;
    if (ci.boundary == Boundary::Event) {
      vm.store.commit();
      s[0].i = 1;                // outcome.ok
      s[1].t = vm.prog.texts[2];  // outcome.reason = ""
    } else {
      for (uint32_t i = 0; i < n; ++i)
        if (f.result_kind[i]) materialize(vm, s[i], f.result_kind[i] == 2);
      vm.snapshot.reset();
    }
  }
  vm.calls.pop_back();
  if (!ci.return_ip) return nullptr;
  s = vm.calls.back().base;
  return ci.return_ip;
}

static Loc loc_of(const Function& f, const Instr* ip) {
  if (!ip || ip < f.code.data() || ip >= f.code.data() + f.code.size()) return Loc{0, f.line, 1};
  return f.locs[ip - f.code.data()];
}

static std::vector<StackEntry> stack_trace(const VM& vm, const Instr* fault_ip) {
  std::vector<StackEntry> stack;
  const Instr* ip = fault_ip;
  for (size_t i = vm.calls.size(); i-- > 0;) {
    const CallInfo& ci = vm.calls[i];
    stack.push_back({ci.fn->name, loc_of(*ci.fn, ip)});
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
  constexpr size_t kInner = 20, kOuter = 5;
  std::string out = path + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": runtime error: " + message + "\n";
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack.size() > kInner + kOuter && i == kInner) {
      out += "  ... " + std::to_string(stack.size() - kInner - kOuter) + " more calls ...\n";
      i = stack.size() - kOuter;
    }
    out += std::string(i == 0 ? "  in " : "  called from ") + stack[i].function + " at " + path + ":" +
           std::to_string(stack[i].loc.line) + ":" + std::to_string(stack[i].loc.col) + "\n";
  }
  return out;
}

static rt::EventList* make_args(const Program& p, const std::vector<std::string>& args) {
  // the shape of `seq text` is created by the loader as shape 0
  auto* l = new rt::EventList(p.shapes[0].get());
  for (const std::string& a : args) {
    rt::Cell c = reinterpret_cast<rt::Cell>(rt::text_new(a));
    l->push(&c);
    rt::text_release(reinterpret_cast<rt::Text*>(c));
  }
  return l;
}

std::optional<RuntimeError> run_main(const Program& program, rt::Store& store, const RunOptions& options) {
  if (program.main < 0) return RuntimeError{"the module has no main to run", Loc{0, 1, 1}, {}};
  VM vm(program, store, options);
  const Function& main_fn = program.functions[program.main];
  Slot* base = vm.stack.get();
  std::memset(base, 0, (main_fn.frame_slots + main_fn.call_area) * sizeof(Slot));
  if (main_fn.param_slots == 1) base[0].l = make_args(program, options.args);
  vm.calls.push_back({&main_fn, base, nullptr, 0, Boundary::None, 0});
  const Instr* ip = main_fn.code.data();
  while (true) {
    try {
      interpret(vm, base, ip);
      return std::nullopt;
    } catch (Fault& f) {
      // An event called from main fails as a whole: undo it and hand the reason to main.
      size_t boundary = 0;
      for (size_t i = vm.calls.size(); i-- > 1;)
        if (vm.calls[i].boundary == Boundary::Event) boundary = i;
      if (boundary == 0) {
        RuntimeError err;
        err.message = f.is_fail ? "failed: " + f.message : f.message;
        err.stack = stack_trace(vm, f.ip);
        err.loc = err.stack.empty() ? Loc{} : err.stack[0].loc;
        unwind_to(vm, 0);
        return err;
      }
      std::string reason = f.message;
      if (!f.is_fail) {
        Loc l = loc_of(*vm.calls.back().fn, f.ip);
        reason = "runtime error at " + std::to_string(l.line) + ":" + std::to_string(l.col) + ": " + f.message;
      }
      CallInfo event = vm.calls[boundary];
      unwind_to(vm, boundary);
      vm.store.rollback();
      vm.transaction_depth = 0;
      vm.steps_left = event.saved_steps;
      event.base[0].i = 0;
      event.base[1].t = rt::text_new(reason);  // owned by main's call area, taken by TAKE_REF
      base = vm.calls.back().base;
      ip = event.return_ip;
    }
  }
}

}  // namespace pure::vm
