// jit-common/runtime_calls.h — the small no-throw runtime functions native code of every backend
// calls for event-list instructions (runtime_calls.cpp): each does the common case of one
// instruction (exactly as vm/exec.h does it) and reports whether it could; when not, native code
// runs the instruction through pure_step, which does the rest or faults with the interpreter's
// own message. The stored-list loop calls run the VM's own code for their instruction.
#pragma once
#include <cstdint>

namespace pure::jit {
// What the event-list runtime calls return: a cell, and whether the common case applied
// (returned in two registers: rax/rdx on x86-64, x0/x1 on AArch64).
struct CellResult {
  uint64_t value;
  uint64_t ok;
};
}  // namespace pure::jit

namespace pure::rt {
class EventList;
struct Text;
}
namespace pure::vm {
struct VMCore;
union Slot;
struct Instr;
struct Iterator;
}
extern "C" {
pure::jit::CellResult pure_jit_seq_get(pure::rt::EventList* l, int64_t pos) noexcept;
pure::jit::CellResult pure_jit_seq_get_field(pure::rt::EventList* l, int64_t pos, int64_t field) noexcept;
uint64_t pure_jit_seq_set(pure::rt::EventList* l, int64_t pos, uint64_t value) noexcept;
uint64_t pure_jit_seq_set_field(pure::rt::EventList* l, int64_t pos, int64_t field, uint64_t value) noexcept;
int64_t pure_jit_list_count(pure::rt::EventList* l) noexcept;
// Texts and keyed lists (the loops of group-by: `for w in words { counts[w].n += 1 }`). Native code
// reads and pushes a `seq text`'s cells in place and counts their references itself
// (EventList::NativeLayout); a count that reaches zero frees the text here (rt::text_free).
void pure_jit_text_free(pure::rt::Text* t) noexcept;
// The row of keyed list l with this one-cell key, found as EventList::find finds it (the row found
// last, the hash index, the tree), as a pointer to its cells; 0 when it is missing or the key has
// more cells. Native code then reads or writes a field that is not text in place (the checks of
// exec_MAP_GET_FIELD / exec_MAP_SET_FIELD) and keeps the pointer for the next instructions on the
// same list and key while nothing else runs (a row found is where it stays until the list is
// changed, which only pure_step does); a missing row is pure_step's (MAP_ENSURE inserts it).
uint64_t pure_jit_map_row(pure::rt::EventList* l, uint64_t key) noexcept;
// INT_TEXT: the decimal text of v, slot A's old text released: {text, 1}; {0, 0} when the memory
// budget (or the system) refuses the text: pure_step then runs the instruction and faults.
pure::jit::CellResult pure_jit_int_text(int64_t v, uint64_t old) noexcept;
double pure_jit_fmod(double a, double b) noexcept;
// Stored-list loops (vm/lists.cpp), called instead of pure_step:
// ST_ITER at ip, whole: reads the key slots C.., writes slot A. 1 when done; 0 when it faulted,
// with the fault kept for the interpreter exactly as pure_step keeps it (native code returns
// vm::kFaulted). ST_ITER spends no step.
uint64_t pure_jit_st_iter(pure::vm::VMCore* core, pure::vm::Slot* base, const pure::vm::Instr* ip) noexcept;
// ITER_NEXT's refill, once native code has spent the step: the next leaf run of an iterator
// whose rows come in runs (Iterator::width != 0). {first row, 1}, with the iterator's run set for
// the rest, or {0, 0} when the rows are done (ITER_NEXT then jumps to IMM). Never faults.
pure::jit::CellResult pure_jit_iter_refill(pure::vm::Iterator* it) noexcept;
// ITER_NEXT at ip of a loop over a text's pieces (TEXT_ITER), once native code has spent the step:
// vm::iter_next itself (the next piece into slot A, in place when it can be). 1: a piece; 3: no more
// pieces (jump to IMM); 2: the iterator is not a text's pieces (native code gives the step back and
// runs pure_step); 0: it faulted (the memory budget), kept as pure_jit_st_iter keeps it. Slot A
// and B (the iterator's index) must be in the frame before the call; it writes no other slot.
uint64_t pure_jit_iter_next_piece(pure::vm::VMCore* core, pure::vm::Slot* base, const pure::vm::Instr* ip) noexcept;
// ITER_END: releases the iterators from `down_to` up (slot B's value). Never faults.
void pure_jit_iter_end(pure::vm::VMCore* core, int64_t down_to) noexcept;
// A flat form's prefix walked by native code without an iterator (jit-aarch64): the run left, the
// ST_ITER that began the walk (null: no walk) and the row width its ITER_NEXT expects, in native
// code's own frame.
struct PureWalkSite;
struct PureNativeWalk {
  const uint64_t* run;
  uint64_t run_left;
  const pure::vm::Instr* ip;
  uint64_t width;
  PureWalkSite* site;  // null, or where one ST_ITER keeps what it needs to look its rows up itself
};
// One ST_ITER's lookup, filled by pure_jit_st_iter_rows when the rows came from a dense flat form
// (rt::ListReader::DenseRows; starts null until then): native code that knows the iterator stack
// is as deep at every pass of that ST_ITER (jit-aarch64: plan_walks) looks the next prefixes up
// itself while the meter is not over its limit (st_iter's other checks cannot change while it
// runs: the query's snapshot, the list, the width, the stack's room).
struct PureWalkSite {
  const uint32_t* starts;
  const void* meter;  // the thread's rt::MemoryMeter (MemoryMeter::native_layout), or one never over
  int64_t base;
  uint64_t span;
  const uint64_t* rows;
  uint64_t row_bytes;
  const pure::vm::Instr* ip;
  uint64_t unused;
};
// ST_ITER at ip through vm::st_iter_rows for rows of walk->width cells: 1 when the rows came back
// (walk set: run, run_left, ip; slot A not written), 2 when ST_ITER ran whole (slot A has an
// iterator), 0 when it faulted (kept as pure_jit_st_iter keeps it). Four arguments: AArch64 native
// code keeps slots in x4..x8 across such calls.
uint64_t pure_jit_st_iter_rows(pure::vm::VMCore* core, pure::vm::Slot* base, const pure::vm::Instr* ip,
                               PureNativeWalk* walk) noexcept;
// The walk's iterator made after all (vm::materialize_flat_iterator), its number in slot A of
// walk->ip in the frame at base; walk->ip cleared. Native code calls it before it leaves in the
// middle of a walk, so the interpreter finds the iterator it would have had. Never faults.
void pure_jit_walk_materialize(pure::vm::VMCore* core, pure::vm::Slot* base, PureNativeWalk* walk) noexcept;
}
