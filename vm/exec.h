// vm/exec.h — the semantics of every instruction, once: one inline function per opcode.
// interpret() and step() are both generated from these (see interp.cpp), and the JITs call
// step() for what they do not compile. Each function returns the next instruction.
// Depends on vm/state.h, runtime/, stdlib/ (through builtins).
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "stdlib/numtext.h"
#include "vm/state.h"

namespace pure::vm {

#define PURE_ALWAYS_INLINE inline __attribute__((always_inline))
#define EXEC(name) PURE_ALWAYS_INLINE const Instr* exec_##name([[maybe_unused]] VM& vm, [[maybe_unused]] Slot*& s, const Instr* ip)

// Calls an out-of-line function that may move the frame base (f(vm, Slot*&, ...)) through a copy
// of s: s itself never has its address taken, so the interpreter keeps it in a register instead of
// reloading it from memory in every instruction.
template <typename F, typename... Args>
PURE_ALWAYS_INLINE const Instr* with_base(Slot*& s, F f, VM& vm, Args... args) {
  Slot* base = s;
  const Instr* next = f(vm, base, args...);
  s = base;
  return next;
}

inline void set_text(Slot& d, rt::Text* t) {
  rt::Text* old = d.t;
  d.t = t;
  rt::text_release(old);
}

inline void set_list(Slot& d, rt::EventList* l) {
  rt::EventList* old = d.l;
  d.l = l;
  rt::list_release(old);
}

// Running out of memory (the budget of runtime/memory.h, or the system refusing an allocation)
// is a runtime error at the instruction that asked for it (lists.cpp).
[[noreturn]] void out_of_memory(const Instr* ip, const std::bad_alloc& e);
std::string out_of_memory_message(const std::bad_alloc& e);
[[noreturn]] void memory_budget_spent(const Instr* ip);

// The no-throw entries for native code (pure_step, jit-common's runtime calls): runs work(), an
// instruction at ip, and keeps a fault it raises (or an allocation it could not make) in
// vm.pending for the interpreter to rethrow, so no exception crosses native code. False: faulted.
template <class Work>
bool keep_fault(VM& vm, const Instr* ip, Work&& work) noexcept {
  try {
    work();
    return true;
  } catch (Fault& f) {
    vm.pending = std::move(f);
  } catch (const std::bad_alloc& e) {
    vm.pending = Fault{out_of_memory_message(e), ip};
  }
  return false;
}

// A new text of len bytes (uninitialised) with room for cap, or the runtime error.
inline rt::Text* alloc_text(const Instr* ip, uint32_t len, uint32_t cap) {
  try {
    return rt::text_alloc(len, cap);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
}
inline rt::Text* new_text(const Instr* ip, std::string_view s) {
  try {
    return rt::text_new(s);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
}

inline rt::Text* checked_text(const Instr* ip, uint64_t len) {
  if (len > rt::kMaxTextBytes) fault(ip, "text too long (" + std::to_string(len) + " bytes; the limit is " + limits::kTextBytesText + ")");
  return alloc_text(ip, static_cast<uint32_t>(len), static_cast<uint32_t>(len));
}

// ---- constants and moves -------------------------------------------------------------------
EXEC(CONST) { s[ip->a].i = ip->imm; return ip + 1; }
EXEC(CONST_TEXT) { set_text(s[ip->a], vm.prog.texts[ip->imm]); return ip + 1; }
EXEC(MOVE) { s[ip->a] = s[ip->b]; return ip + 1; }
// IMM: bit 0 = the reference is a list (else a text); bit 1 = A is in the call area, which
// never owns anything, so its old content is not released.
EXEC(MOVE_REF) {
  Slot v = s[ip->b];
  if (ip->imm & 1) rt::list_retain(v.l);
  else rt::text_retain(v.t);
  if (ip->imm & 2) s[ip->a] = v;
  else if (ip->imm & 1) set_list(s[ip->a], v.l);
  else set_text(s[ip->a], v.t);
  return ip + 1;
}
EXEC(TAKE) { s[ip->a] = s[ip->b]; s[ip->b].u = 0; return ip + 1; }
EXEC(TAKE_REF) {
  Slot v = s[ip->b];
  s[ip->b].u = 0;
  if (ip->imm == 1) set_list(s[ip->a], v.l);
  else set_text(s[ip->a], v.t);
  return ip + 1;
}

// ---- integers --------------------------------------------------------------------------------
[[noreturn]] void overflow(const Instr* ip, const char* op, int64_t a, int64_t b);

// A = B op C, with the overflow check the builtin gives.
#define PURE_CHECKED_INT(name, builtin, symbol)                                               \
  EXEC(name) {                                                                                \
    int64_t r;                                                                                \
    if (builtin(s[ip->b].i, s[ip->c].i, &r)) overflow(ip, symbol, s[ip->b].i, s[ip->c].i);   \
    s[ip->a].i = r;                                                                           \
    return ip + 1;                                                                            \
  }
PURE_CHECKED_INT(ADD_INT, __builtin_add_overflow, "+")
PURE_CHECKED_INT(SUB_INT, __builtin_sub_overflow, "-")
PURE_CHECKED_INT(MUL_INT, __builtin_mul_overflow, "*")
#undef PURE_CHECKED_INT
EXEC(DIV_INT) {
  int64_t b = s[ip->b].i, c = s[ip->c].i;
  if (c == 0) fault(ip, "division by zero");
  if (b == INT64_MIN && c == -1) overflow(ip, "/", b, c);
  s[ip->a].i = b / c;
  return ip + 1;
}
EXEC(MOD_INT) {
  int64_t b = s[ip->b].i, c = s[ip->c].i;
  if (c == 0) fault(ip, "division by zero (in %)");
  s[ip->a].i = c == -1 ? 0 : b % c;
  return ip + 1;
}
EXEC(ADDI_INT) {
  int64_t r;
  if (__builtin_add_overflow(s[ip->b].i, ip->imm, &r)) overflow(ip, "+", s[ip->b].i, ip->imm);
  s[ip->a].i = r;
  return ip + 1;
}
EXEC(NEG_INT) {
  if (s[ip->b].i == INT64_MIN) fault(ip, "integer overflow: -(-9223372036854775808) does not fit in 64 bits");
  s[ip->a].i = -s[ip->b].i;
  return ip + 1;
}

// Bitwise operations see an int as its 64-bit two's complement pattern. A shift amount outside
// 0..63 is a runtime error (in C++ it would be undefined behaviour); '<<' drops the bits shifted
// out (no overflow error, as for a bit pattern) and '>>' is arithmetic (the sign bit comes in).
[[noreturn]] void bad_shift(const Instr* ip, const char* op, int64_t a, int64_t n);
[[noreturn]] void no_value(const Instr* ip, const rt::Text* reason);
EXEC(AND_INT) { s[ip->a].i = s[ip->b].i & s[ip->c].i; return ip + 1; }
EXEC(OR_INT) { s[ip->a].i = s[ip->b].i | s[ip->c].i; return ip + 1; }
EXEC(XOR_INT) { s[ip->a].i = s[ip->b].i ^ s[ip->c].i; return ip + 1; }
EXEC(BNOT_INT) { s[ip->a].i = ~s[ip->b].i; return ip + 1; }
EXEC(SHL_INT) {
  int64_t b = s[ip->b].i, n = s[ip->c].i;
  if (static_cast<uint64_t>(n) > 63) bad_shift(ip, "<<", b, n);
  s[ip->a].i = static_cast<int64_t>(static_cast<uint64_t>(b) << n);
  return ip + 1;
}
EXEC(SHR_INT) {
  int64_t b = s[ip->b].i, n = s[ip->c].i;
  if (static_cast<uint64_t>(n) > 63) bad_shift(ip, ">>", b, n);
  s[ip->a].i = b >> n;  // arithmetic since C++20
  return ip + 1;
}
// '.value' of an event's outcome: only a committed event has one (vm/calls.cpp: no_value).
EXEC(CHECK_VALUE) {
  if (!s[ip->b].i) no_value(ip, s[ip->c].t);
  return ip + 1;
}

// ---- nums ------------------------------------------------------------------------------------
EXEC(ADD_NUM) { s[ip->a].n = s[ip->b].n + s[ip->c].n; return ip + 1; }
EXEC(SUB_NUM) { s[ip->a].n = s[ip->b].n - s[ip->c].n; return ip + 1; }
EXEC(MUL_NUM) { s[ip->a].n = s[ip->b].n * s[ip->c].n; return ip + 1; }
EXEC(DIV_NUM) { s[ip->a].n = s[ip->b].n / s[ip->c].n; return ip + 1; }
EXEC(MOD_NUM) { s[ip->a].n = std::fmod(s[ip->b].n, s[ip->c].n); return ip + 1; }
EXEC(NEG_NUM) { s[ip->a].n = -s[ip->b].n; return ip + 1; }

// ---- comparisons ---------------------------------------------------------------------------
EXEC(EQ_INT) { s[ip->a].i = s[ip->b].i == s[ip->c].i; return ip + 1; }
EXEC(NE_INT) { s[ip->a].i = s[ip->b].i != s[ip->c].i; return ip + 1; }
EXEC(LT_INT) { s[ip->a].i = s[ip->b].i < s[ip->c].i; return ip + 1; }
EXEC(LE_INT) { s[ip->a].i = s[ip->b].i <= s[ip->c].i; return ip + 1; }
EXEC(EQ_NUM) { s[ip->a].i = s[ip->b].n == s[ip->c].n; return ip + 1; }
EXEC(NE_NUM) { s[ip->a].i = s[ip->b].n != s[ip->c].n; return ip + 1; }
EXEC(LT_NUM) { s[ip->a].i = s[ip->b].n < s[ip->c].n; return ip + 1; }
EXEC(LE_NUM) { s[ip->a].i = s[ip->b].n <= s[ip->c].n; return ip + 1; }
EXEC(EQ_TEXT) { s[ip->a].i = rt::text_equal(s[ip->b].t, s[ip->c].t); return ip + 1; }
EXEC(NE_TEXT) { s[ip->a].i = !rt::text_equal(s[ip->b].t, s[ip->c].t); return ip + 1; }
EXEC(LT_TEXT) { s[ip->a].i = rt::text_compare(s[ip->b].t, s[ip->c].t) < 0; return ip + 1; }
EXEC(LE_TEXT) { s[ip->a].i = rt::text_compare(s[ip->b].t, s[ip->c].t) <= 0; return ip + 1; }
EXEC(NOT) { s[ip->a].i = !s[ip->b].i; return ip + 1; }

// ---- conversions and text ------------------------------------------------------------------
EXEC(INT_TO_NUM) { s[ip->a].n = static_cast<double>(s[ip->b].i); return ip + 1; }
EXEC(NUM_TO_INT) {
  double x = s[ip->b].n;
  // the int64 range is [-2^63, 2^63): both bounds are exact doubles
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
    fault(ip, "int(" + numtext::format_num(x) + "): not a finite number in the int range");
  s[ip->a].i = static_cast<int64_t>(x);
  return ip + 1;
}

rt::Text* concat(const Instr* ip, rt::Text* a, rt::Text* b, bool in_place);

EXEC(CONCAT) {
  rt::Text* a = s[ip->b].t;
  rt::Text* b = s[ip->c].t;
  bool in_place = ip->a == ip->b && a->rc == 1 && !a->stored() && a != b;
  rt::Text* r = concat(ip, a, b, in_place);
  if (r != a || !in_place) set_text(s[ip->a], r);
  return ip + 1;
}
EXEC(INT_TEXT) {
  char digits[20];
  set_text(s[ip->a], new_text(ip, std::string_view(digits, numtext::format_int_to(digits, s[ip->b].i))));
  return ip + 1;
}
EXEC(NUM_TEXT) { set_text(s[ip->a], new_text(ip, numtext::format_num(s[ip->b].n))); return ip + 1; }
EXEC(BOOL_TEXT) { set_text(s[ip->a], vm.prog.texts[s[ip->b].i ? 1 : 0]); return ip + 1; }
EXEC(JOIN_TEXT) {
  uint64_t len = 0;
  for (uint32_t i = 0; i < ip->c; ++i) len += s[ip->b + i].t->len;
  rt::Text* r = checked_text(ip, len);
  char* out = r->bytes;
  for (uint32_t i = 0; i < ip->c; ++i) {
    const rt::Text* t = s[ip->b + i].t;
    if (t->len) std::memcpy(out, t->bytes, t->len);
    out += t->len;
  }
  set_text(s[ip->a], r);
  return ip + 1;
}

// ---- control ---------------------------------------------------------------------------------
EXEC(JUMP) { return ip + ip->imm; }
EXEC(JUMP_IF) { return s[ip->b].i ? ip + ip->imm : ip + 1; }
EXEC(JUMP_IFNOT) { return s[ip->b].i ? ip + 1 : ip + ip->imm; }
EXEC(JLT_INT) { return s[ip->b].i < s[ip->c].i ? ip + ip->imm : ip + 1; }
EXEC(JGE_INT) { return s[ip->b].i >= s[ip->c].i ? ip + ip->imm : ip + 1; }
EXEC(JLT_INT_K) { return s[ip->b].i < static_cast<int16_t>(ip->c) ? ip + ip->imm : ip + 1; }
EXEC(JGE_INT_K) { return s[ip->b].i >= static_cast<int16_t>(ip->c) ? ip + ip->imm : ip + 1; }
EXEC(JEQ_INT) { return s[ip->b].i == s[ip->c].i ? ip + ip->imm : ip + 1; }
EXEC(JNE_INT) { return s[ip->b].i != s[ip->c].i ? ip + ip->imm : ip + 1; }
EXEC(JLT_NUM) { return s[ip->b].n < s[ip->c].n ? ip + ip->imm : ip + 1; }
EXEC(JLE_NUM) { return s[ip->b].n <= s[ip->c].n ? ip + ip->imm : ip + 1; }
EXEC(JNLT_NUM) { return !(s[ip->b].n < s[ip->c].n) ? ip + ip->imm : ip + 1; }
EXEC(JNLE_NUM) { return !(s[ip->b].n <= s[ip->c].n) ? ip + ip->imm : ip + 1; }

// A step spent below zero. The budget's fault; or, for a call that gets its budget in slices
// (RunOptions::cancel), the next slice (returns, and the step stands) or the cancel's fault.
void budget_spent(VM& vm, const Instr* ip);

// The one rule for what a standard function's work costs (vm/builtins.cpp charges through it,
// docs/language.md lists each function's measure): one step per kWorkBytesPerStep bytes it reads
// or writes, rounded down over the call, plus one step per item (a list row, a piece) it reads or
// writes. A function that touches O(1) bytes and items spends nothing. Every engine runs standard
// functions through this code (the JITs through pure_step), so each stops at the same call; a
// budget spent here is the budget's runtime error at the call.
inline constexpr uint64_t kWorkBytesPerStep = 64;
PURE_ALWAYS_INLINE void spend_work(VM& vm, const Instr* ip, uint64_t bytes, uint64_t items = 0) {
  uint64_t steps = bytes / kWorkBytesPerStep + items;  // bytes below 2^31, items below 2^40: no overflow
  if (steps == 0) return;
  vm.core.steps_left -= static_cast<int64_t>(std::min<uint64_t>(steps, uint64_t{1} << 62));
  if (__builtin_expect(vm.core.steps_left < 0, 0)) budget_spent(vm, ip);
}

// Tier-up at a LOOP or ITER_NEXT that heads the loop of program-wide index `index`, while
// core.tier_up is set: one load of the loop's pass counter, compared first with kLoopParked (a loop
// that stays interpreted, queued or rejected, pays only that at every pass), then with the
// threshold while it counts; the out-of-line tier_up() only at the threshold or to enter the
// loop's native code. Null: execute ip as usual.
PURE_ALWAYS_INLINE const Instr* tier_check(VM& vm, Slot*& s, const Instr* ip, uint32_t index) {
  std::atomic<uint32_t>& counter = vm.core.loop_hits[index];
  uint32_t hits = counter.load(std::memory_order_relaxed);
  if (__builtin_expect(hits == kLoopParked, 1)) return nullptr;
  if (uint64_t{hits} + 1 < vm.core.tier_threshold) {  // counting (a lost count on a race only delays)
    counter.store(hits + 1, std::memory_order_relaxed);
    return nullptr;
  }
  return with_base(s, tier_up, vm, ip, index);
}

EXEC(LOOP) {
  // the counter at the loop's program-wide index in A and B (kNoLoopIndex's for a LOOP that heads
  // no loop): one load, no walk from the frame
  if (__builtin_expect(vm.core.tier_up, 0))
    if (const Instr* next = tier_check(vm, s, ip, ip->a | uint32_t{ip->b} << 16)) return next;
  if (__builtin_expect(--vm.core.steps_left < 0, 0)) budget_spent(vm, ip);
  return ip + 1;
}

const Instr* call_function(VM& vm, Slot*& s, const Instr* ip);
const Instr* return_from(VM& vm, Slot*& s, const Instr* ip);

[[noreturn]] void stack_overflow(VM& vm, const Instr* ip);

// Calls and returns of plain functions (no counted references, not events or queries) take
// this short path; everything else goes through call_function / return_from in calls.cpp.
EXEC(CALL) {
  const Function& callee = vm.prog.functions[ip->imm];
  if (!callee.plain) return with_base(s, call_function, vm, ip);
  if (__builtin_expect(--vm.core.steps_left < 0, 0)) budget_spent(vm, ip);
  Slot* base = s + ip->a;
  if (__builtin_expect(base + callee.overflow_need > vm.core.stack_end || vm.calls.full(), 0))
    stack_overflow(vm, ip);
  vm.calls.push_back(CallInfo{&callee, base, ip + 1, static_cast<uint32_t>(vm.iters.size()), Boundary::None, 0, base});
  s = base;
  return callee.code.data();
}
// A call the loader fused with the moves of its arguments and the take of its result (see
// vm/load.cpp: fuse_plain_calls); the callee is plain, so no check of that.
EXEC(CALL_PLAIN) {
  const Function& callee = vm.prog.functions[static_cast<uint32_t>(ip->imm)];
  if (__builtin_expect(--vm.core.steps_left < 0, 0)) budget_spent(vm, ip);
  Slot* base = s + ip->a;
  if (__builtin_expect(base + callee.overflow_need > vm.core.stack_end || vm.calls.full(), 0)) stack_overflow(vm, ip);
  uint64_t imm = static_cast<uint64_t>(ip->imm);
  uint32_t args = (imm >> 32) & 3;
  if (args > 0) base[0] = s[ip->b];
  if (args > 1) base[1] = s[ip->c];
  Slot* result_to = (imm >> 34) & 1 ? s + (imm >> 48) : base;
  vm.calls.push_back(CallInfo{&callee, base, ip + 1, static_cast<uint32_t>(vm.iters.size()), Boundary::None, 0, result_to});
  s = base;
  return callee.code.data();
}
EXEC(RET) {
  const CallInfo& ci = vm.calls.back();
  if (ip->a != 1 || vm.iters.size() != ci.iter_base) return with_base(s, return_from, vm, ip);
  if (ip->c) *ci.result_to = s[ip->b];
  const Instr* back = ci.return_ip;
  vm.calls.pop_back();
  if (!back) return nullptr;
  s = vm.calls.back().base;
  return back;
}
// A call the loader inlined (ir/inline.cpp): the call's step and stack check, in CALL's order and
// with its messages; the callee's code follows. Its slots start at A, as its frame would.
EXEC(CALL_INLINED) {
  if (__builtin_expect(--vm.core.steps_left < 0, 0)) budget_spent(vm, ip);
  if (__builtin_expect(s + ip->b > vm.core.stack_end || vm.calls.full(), 0)) stack_overflow(vm, ip);  // b = a + c
  return ip + 1;
}
EXEC(FAIL) {
  throw Fault{std::string(s[ip->b].t->view()), ip, true};
}
EXEC(BUILTIN) {
  call_builtin(vm, s + ip->a, ip);
  return ip + 1;
}

// ---- event lists -------------------------------------------------------------------------------
const Instr* list_op(VM& vm, Slot* s, const Instr* ip);   // the less frequent list operations
const Instr* store_op(VM& vm, Slot* s, const Instr* ip);  // stored lists
const Instr* iter_next(VM& vm, Slot* s, const Instr* ip);
const Instr* text_iter(VM& vm, Slot* s, const Instr* ip);  // TEXT_ITER (lists.cpp)

inline void copy_row_out(Slot* dst, const rt::Cell* row, const rt::ListShape& shape) {
  uint32_t w = shape.width();
  if (!shape.any_text) {
    std::memcpy(dst, row, w * sizeof(Slot));
    return;
  }
  for (uint32_t i = 0; i < w; ++i) {
    if (shape.cols[i] == rt::ColType::Text) {
      rt::Text* t = reinterpret_cast<rt::Text*>(row[i]);
      rt::text_retain(t);
      set_text(dst[i], t);
    } else {
      dst[i].u = row[i];
    }
  }
}

[[noreturn]] void index_error(const Instr* ip, int64_t pos, int64_t count);

EXEC(NEW_LIST) {
  set_list(s[ip->a], new rt::EventList(vm.prog.shapes[ip->imm].get()));
  return ip + 1;
}
EXEC(LIST_COUNT) { s[ip->a].i = s[ip->b].l->count(); return ip + 1; }
EXEC(SEQ_GET) {
  rt::EventList* l = s[ip->b].l;
  int64_t pos = s[ip->c].i;
  if (static_cast<uint64_t>(pos) >= static_cast<uint64_t>(l->count())) index_error(ip, pos, l->count());
  const rt::ListShape& shape = l->shape();
  if (shape.width() == 1 && !shape.any_text) s[ip->a].u = l->get(pos, 0);  // a narrow list too
  else copy_row_out(s + ip->a, l->at(pos), shape);
  return ip + 1;
}
EXEC(SEQ_GET_FIELD) {
  rt::EventList* l = s[ip->b].l;
  int64_t pos = s[ip->c].i;
  if (static_cast<uint64_t>(pos) >= static_cast<uint64_t>(l->count())) index_error(ip, pos, l->count());
  rt::Cell c = l->get(pos, static_cast<uint32_t>(ip->imm));
  if (l->shape().cols[ip->imm] == rt::ColType::Text) {
    rt::text_retain(reinterpret_cast<rt::Text*>(c));
    set_text(s[ip->a], reinterpret_cast<rt::Text*>(c));
  } else {
    s[ip->a].u = c;
  }
  return ip + 1;
}
EXEC(SEQ_SET) {
  rt::EventList* l = s[ip->b].l;
  int64_t pos = s[ip->c].i;
  if (static_cast<uint64_t>(pos) >= static_cast<uint64_t>(l->count())) index_error(ip, pos, l->count());
  const rt::ListShape& shape = l->shape();
  if (shape.width() == 1 && !shape.any_text) {
    l->set_value(pos, 0, s[ip->a].u);  // a narrow list too
  } else {
    rt::Cell* row = l->at_mut(pos);
    for (uint32_t i = 0; i < shape.width(); ++i) l->set_cell(row, i, s[ip->a + i].u);
  }
  return ip + 1;
}
EXEC(SEQ_SET_FIELD) {
  rt::EventList* l = s[ip->b].l;
  int64_t pos = s[ip->c].i;
  if (static_cast<uint64_t>(pos) >= static_cast<uint64_t>(l->count())) index_error(ip, pos, l->count());
  l->set(pos, static_cast<uint32_t>(ip->imm), s[ip->a].u);
  return ip + 1;
}
[[noreturn]] void list_too_long(const Instr* ip);
const Instr* seq_push_grow(VM& vm, Slot* s, const Instr* ip);  // a push that needs room (lists.cpp)

EXEC(SEQ_PUSH) {
  rt::EventList* l = s[ip->b].l;
  if (__builtin_expect(!l->push_fits(), 0)) return seq_push_grow(vm, s, ip);
  l->push(reinterpret_cast<const rt::Cell*>(s + ip->a));
  return ip + 1;
}
EXEC(SEQ_POP) { return list_op(vm, s, ip); }
EXEC(MAP_GET) { return list_op(vm, s, ip); }
// Finding a row that exists takes no call (find_fast: the row found last, or the hash index);
// a missing row, a text field or a list without an index goes through list_op.
EXEC(MAP_GET_FIELD) {
  rt::EventList* l = s[ip->b].l;
  if (l->shape().cols[ip->imm] != rt::ColType::Text)
    if (const rt::Cell* row = l->find_fast(reinterpret_cast<const rt::Cell*>(s + ip->c))) {
      s[ip->a].u = row[ip->imm];
      return ip + 1;
    }
  return list_op(vm, s, ip);
}
EXEC(MAP_LOOKUP) { return list_op(vm, s, ip); }
EXEC(MAP_HAS) { return list_op(vm, s, ip); }
EXEC(MAP_PUT) { return list_op(vm, s, ip); }
EXEC(MAP_SET_FIELD) {
  rt::EventList* l = s[ip->b].l;
  if (l->shape().cols[ip->imm] != rt::ColType::Text)
    if (rt::Cell* row = l->find_fast(reinterpret_cast<const rt::Cell*>(s + ip->c))) {
      row[ip->imm] = s[ip->a].u;
      return ip + 1;
    }
  return list_op(vm, s, ip);
}
EXEC(MAP_ENSURE) {
  if (s[ip->b].l->find_fast(reinterpret_cast<const rt::Cell*>(s + ip->c))) return ip + 1;
  return list_op(vm, s, ip);
}
EXEC(MAP_REMOVE) { return list_op(vm, s, ip); }
EXEC(LIST_ITER) { return list_op(vm, s, ip); }

// ---- stored lists ------------------------------------------------------------------------------
EXEC(ST_COUNT) { return store_op(vm, s, ip); }
EXEC(ST_GET) { return store_op(vm, s, ip); }
EXEC(ST_GET_FIELD) { return store_op(vm, s, ip); }
EXEC(ST_LOOKUP) { return store_op(vm, s, ip); }
EXEC(ST_HAS) { return store_op(vm, s, ip); }
EXEC(ST_PUT) { return store_op(vm, s, ip); }
EXEC(ST_SET_FIELD) { return store_op(vm, s, ip); }
EXEC(ST_ENSURE) { return store_op(vm, s, ip); }
EXEC(ST_REMOVE) { return store_op(vm, s, ip); }
EXEC(ST_APPEND) { return store_op(vm, s, ip); }
EXEC(ST_POP) { return store_op(vm, s, ip); }
EXEC(ST_CLEAR) { return store_op(vm, s, ip); }
EXEC(ST_ITER) { return st_iter(vm, s, ip); }

// ---- iterators -------------------------------------------------------------------------------
EXEC(ITER_NEXT) {
  // the counter at the loop's program-wide index in C, as LOOP's (kNoLoopIndex's: none)
  if (__builtin_expect(vm.core.tier_up, 0))
    if (const Instr* next = tier_check(vm, s, ip, ip->c)) return next;
  if (__builtin_expect(--vm.core.steps_left < 0, 0)) budget_spent(vm, ip);
  Iterator& it = vm.iters[s[ip->b].i];
  if (!it.run_left) return iter_next(vm, s, ip);
  const rt::Cell* row = it.run;
  for (uint32_t i = 0; i < it.width; ++i) s[ip->a + i].u = row[i];
  it.run = row + it.width;
  --it.run_left;
  return ip + 1;
}
EXEC(TEXT_ITER) { return text_iter(vm, s, ip); }
EXEC(ITER_SKIP) {
  vm.iters[s[ip->b].i].skip_texts = static_cast<uint64_t>(ip->imm);
  return ip + 1;
}
EXEC(ITER_END) {
  release_iterators(vm, static_cast<uint32_t>(s[ip->b].i));
  return ip + 1;
}

// ---- slices (slices.cpp) -----------------------------------------------------------------------
EXEC(SLICE_ITER) { return slice_op(vm, s, ip); }
EXEC(SLICE_GET) { return slice_op(vm, s, ip); }
EXEC(SLICE_LOOKUP) { return slice_op(vm, s, ip); }
EXEC(SLICE_AGG) { return slice_op(vm, s, ip); }

}  // namespace pure::vm
