// jit-common/runtime_calls.cpp — the small runtime functions native code (of every backend) calls
// for event-list instructions: each does the common case of one instruction (exactly as vm/exec.h does it) and
// reports whether it could; when not (an index out of range, a row of several cells or with
// texts), native code runs the instruction through pure_step, which does the rest or faults
// with the interpreter's own message. They never throw and touch no frame slot.
#include <cmath>

#include "jit-common/runtime_calls.h"
#include "runtime/event_list.h"
#include "runtime/memory.h"
#include "runtime/store.h"
#include "vm/exec.h"

using pure::rt::Cell;
using pure::rt::ColType;
using pure::rt::EventList;

namespace {
bool in_range(const EventList* l, int64_t pos) {
  return static_cast<uint64_t>(pos) < static_cast<uint64_t>(l->count());
}
}  // namespace

extern "C" {

// SEQ_GET of a one-cell row without texts.
pure::jit::CellResult pure_jit_seq_get(EventList* l, int64_t pos) noexcept {
  const pure::rt::ListShape& shape = l->shape();
  if (!in_range(l, pos) || shape.width() != 1 || shape.any_text) return {0, 0};
  return {l->get(pos, 0), 1};  // a narrow list too
}

// SEQ_GET_FIELD of a column that is not text.
pure::jit::CellResult pure_jit_seq_get_field(EventList* l, int64_t pos, int64_t field) noexcept {
  if (!in_range(l, pos) || l->shape().cols[static_cast<size_t>(field)] == ColType::Text) return {0, 0};
  return {l->get(pos, static_cast<uint32_t>(field)), 1};
}

// SEQ_SET of a one-cell row without texts.
uint64_t pure_jit_seq_set(EventList* l, int64_t pos, uint64_t value) noexcept {
  const pure::rt::ListShape& shape = l->shape();
  if (!in_range(l, pos) || shape.width() != 1 || shape.any_text) return 0;
  l->set_value(pos, 0, value);  // a narrow list too
  return 1;
}

// SEQ_SET_FIELD of a column that is not text.
uint64_t pure_jit_seq_set_field(EventList* l, int64_t pos, int64_t field, uint64_t value) noexcept {
  if (!in_range(l, pos) || l->shape().cols[static_cast<size_t>(field)] == ColType::Text) return 0;
  l->set(pos, static_cast<uint32_t>(field), value);
  return 1;
}

int64_t pure_jit_list_count(EventList* l) noexcept { return l->count(); }

void pure_jit_text_free(pure::rt::Text* t) noexcept { pure::rt::text_free(t); }

uint64_t pure_jit_map_row(EventList* l, uint64_t key) noexcept {
  if (l->shape().key_count != 1) return 0;
  Cell k = key;
  // the hash index first: native code keeps the row it found for the instructions after, so the
  // row found last (find's first guess) is seldom the one asked for here
  if (Cell* row = l->find_indexed(&k)) return reinterpret_cast<uint64_t>(row);
  return reinterpret_cast<uint64_t>(l->find(&k));
}

pure::jit::CellResult pure_jit_int_text(int64_t v, uint64_t old) noexcept {
  char digits[20];
  pure::rt::Text* t;
  try {
    t = pure::rt::text_new(std::string_view(digits, pure::numtext::format_int_to(digits, v)));
  } catch (...) {
    return {0, 0};
  }
  pure::rt::text_release(reinterpret_cast<pure::rt::Text*>(old));
  return {reinterpret_cast<uint64_t>(t), 1};
}

double pure_jit_fmod(double a, double b) noexcept { return std::fmod(a, b); }

// vm::st_iter is ST_ITER itself; a fault is kept as pure_step keeps one (vm/driver.cpp).
uint64_t pure_jit_st_iter(pure::vm::VMCore* core, pure::vm::Slot* base, const pure::vm::Instr* ip) noexcept {
  pure::vm::VM& vm = *core->vm;
  if (pure::vm::keep_fault(vm, ip, [&] { pure::vm::st_iter(vm, base, ip); })) return 1;
  core->faulted = 1;
  return 0;
}

pure::jit::CellResult pure_jit_iter_refill(pure::vm::Iterator* it) noexcept {
  const Cell* first = pure::vm::take_leaf_run(*it);
  return {reinterpret_cast<uint64_t>(first), first != nullptr};
}

uint64_t pure_jit_iter_next_piece(pure::vm::VMCore* core, pure::vm::Slot* base, const pure::vm::Instr* ip) noexcept {
  pure::vm::VM& vm = *core->vm;
  if (!vm.iters[base[ip->b].i].pieces) return 2;
  const pure::vm::Instr* next = nullptr;
  if (!pure::vm::keep_fault(vm, ip, [&] { next = pure::vm::iter_next(vm, base, ip); })) {
    core->faulted = 1;
    return 0;
  }
  return next == ip + 1 ? 1 : 3;
}

void pure_jit_iter_end(pure::vm::VMCore* core, int64_t down_to) noexcept {
  pure::vm::release_iterators(*core->vm, static_cast<uint32_t>(down_to));
}

uint64_t pure_jit_st_iter_rows(pure::vm::VMCore* core, pure::vm::Slot* base, const pure::vm::Instr* ip,
                               PureNativeWalk* walk) noexcept {
  pure::vm::VM& vm = *core->vm;
  const Cell* first = nullptr;
  size_t n = 0;
  bool rows = false;
  if (!pure::vm::keep_fault(vm, ip, [&] { rows = pure::vm::st_iter_rows(vm, base, ip, static_cast<uint32_t>(walk->width), &first, &n); })) {
    core->faulted = 1;
    return 0;
  }
  if (!rows) return 2;
  walk->run = first;
  walk->run_left = n;
  walk->ip = ip;
  pure::rt::ListReader::DenseRows dense;
  if (PureWalkSite* site = walk->site; site && vm.snapshot->list(ip->b).dense_rows(&dense) && dense.width == walk->width) {
    static const pure::rt::MemoryMeter never_over(UINT64_MAX);
    const pure::rt::MemoryMeter* meter = pure::rt::current_meter();
    site->meter = meter ? meter : &never_over;
    site->base = dense.base;
    site->span = dense.span;
    site->rows = dense.rows;
    site->row_bytes = dense.width * sizeof(Cell);
    site->ip = ip;
    site->starts = dense.starts;
  }
  return 1;
}

void pure_jit_walk_materialize(pure::vm::VMCore* core, pure::vm::Slot* base, PureNativeWalk* walk) noexcept {
  pure::vm::materialize_flat_iterator(*core->vm, base, walk->ip, walk->run, walk->run_left);
  walk->ip = nullptr;
}

}  // extern "C"
