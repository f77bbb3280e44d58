// vm/lists.cpp — keyed event lists, stored lists and iterators: the list instructions that
// are too large to inline into the interpreter loop.
#include "base/assert.h"
#include "runtime/memory.h"
#include "vm/exec.h"

namespace pure::vm {

static const rt::Cell* cells(const Slot* s) { return reinterpret_cast<const rt::Cell*>(s); }

static std::string key_text(const rt::ListShape& shape, const Slot* key, uint32_t n) {
  std::string out;
  for (uint32_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    switch (shape.cols[i]) {
      case rt::ColType::Text: out += "\"" + std::string(key[i].t->view()) + "\""; break;
      case rt::ColType::Bool: out += key[i].i ? "true" : "false"; break;
      case rt::ColType::Num: out += numtext::format_num(key[i].n); break;
      default: out += std::to_string(key[i].i);
    }
  }
  return out;
}

[[noreturn]] static void missing_key(const Instr* ip, const std::string& list, const rt::ListShape& shape, const Slot* key) {
  fault(ip, "no item with key " + key_text(shape, key, shape.key_count) + " in " + list);
}

// Copies a row into slots, borrowing or copying store texts as the context requires. The text
// fields in skip (a bit per field, ITER_SKIP: the loop never reads them) are left alone: their
// slots keep what they hold, and the texts are not touched.
static void row_to_slots(VM& vm, Slot* dst, const rt::Cell* row, const std::vector<rt::ColType>& cols, uint32_t from, uint32_t n,
                         uint64_t skip = 0) {
  for (uint32_t i = 0; i < n; ++i) {
    rt::Cell c = row[i];
    if (cols[from + i] != rt::ColType::Text) dst[i].u = c;
    else if (i >= 64 || !((skip >> i) & 1)) set_text(dst[i], load_text_cell(vm, c));
  }
}

static void load_cell(VM& vm, Slot& dst, rt::Cell c, rt::ColType t) {
  if (t == rt::ColType::Text) set_text(dst, load_text_cell(vm, c));
  else dst.u = c;
}

void list_too_long(const Instr* ip) {
  fault(ip, "list too long: an event list holds at most " + std::to_string(rt::kMaxListRows) + " items");
}

// ---- running out of memory -------------------------------------------------------------------
static std::string bytes_text(uint64_t n) {
  if (n >= (uint64_t{1} << 30) && n % (uint64_t{1} << 30) == 0) return std::to_string(n >> 30) + " GiB";
  if (n >= (uint64_t{1} << 20) && n % (uint64_t{1} << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= (uint64_t{1} << 10) && n % (uint64_t{1} << 10) == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

static std::string budget_message() {
  const rt::MemoryMeter* m = rt::current_meter();
  return "memory budget spent (" + (m ? bytes_text(m->limit()) : std::string("?")) +
         " of texts, lists and stored rows held at once); raise it with " + (m ? std::string(m->option()) : std::string("--max-memory"));
}

std::string out_of_memory_message(const std::bad_alloc& e) {
  if (dynamic_cast<const rt::MemoryBudgetSpent*>(&e) || rt::memory_over()) return budget_message();
  const rt::MemoryMeter* m = rt::current_meter();
  return "out of memory: the system refused an allocation" +
         (m ? " (the memory budget, " + std::string(m->option()) + ", is " + bytes_text(m->limit()) + ")" : std::string());
}

void out_of_memory(const Instr* ip, const std::bad_alloc& e) { fault(ip, out_of_memory_message(e)); }
void memory_budget_spent(const Instr* ip) { fault(ip, budget_message()); }

const Instr* seq_push_grow(VM& vm, Slot* s, const Instr* ip) {
  rt::EventList* l = s[ip->b].l;
  if (l->count() >= rt::kMaxListRows) list_too_long(ip);
  try {
    l->push(reinterpret_cast<const rt::Cell*>(s + ip->a));
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
  return ip + 1;
}

static const Instr* list_op_inner(VM& vm, Slot* s, const Instr* ip);

const Instr* list_op(VM& vm, Slot* s, const Instr* ip) {
  try {
    return list_op_inner(vm, s, ip);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
}

static const Instr* list_op_inner(VM& vm, Slot* s, const Instr* ip) {
  rt::EventList* l = s[ip->b].l;
  const rt::ListShape& shape = l->shape();
  const Slot* key = s + ip->c;
  switch (ip->op) {
    case Op::SEQ_POP: {
      if (l->count() == 0) fault(ip, "pop from an empty sequence");
      std::vector<rt::Cell> row(shape.width());
      l->pop(row.data());
      for (uint32_t i = 0; i < shape.width(); ++i) {
        if (shape.cols[i] == rt::ColType::Text) set_text(s[ip->a + i], reinterpret_cast<rt::Text*>(row[i]));
        else s[ip->a + i].u = row[i];
      }
      return ip + 1;
    }
    case Op::MAP_GET: {
      const rt::Cell* row = l->find(cells(key));
      if (!row) missing_key(ip, "the list", shape, key);
      copy_row_out(s + ip->a, row, shape);
      return ip + 1;
    }
    case Op::MAP_GET_FIELD: {
      const rt::Cell* row = l->find(cells(key));
      if (!row) missing_key(ip, "the list", shape, key);
      load_cell(vm, s[ip->a], row[ip->imm], shape.cols[ip->imm]);
      return ip + 1;
    }
    case Op::MAP_LOOKUP: {
      const rt::Cell* row = l->find(cells(key));
      if (!row) return ip + ip->imm;
      copy_row_out(s + ip->a, row, shape);
      return ip + 1;
    }
    case Op::MAP_HAS: s[ip->a].i = l->find(cells(key)) != nullptr; return ip + 1;
    case Op::MAP_PUT:
      if (l->count() >= rt::kMaxListRows && !l->find(cells(key))) list_too_long(ip);
      l->put(cells(key), cells(s + ip->a));
      return ip + 1;
    case Op::MAP_SET_FIELD: {
      rt::Cell* row = l->find_mut(cells(key));
      if (!row) missing_key(ip, "the list", shape, key);
      l->set_cell(row, static_cast<uint32_t>(ip->imm), s[ip->a].u);
      return ip + 1;
    }
    case Op::MAP_ENSURE:
      if (l->count() >= rt::kMaxListRows && !l->find(cells(key))) list_too_long(ip);
      l->ensure(cells(key));
      return ip + 1;
    case Op::MAP_REMOVE: s[ip->a].i = l->remove(cells(key)); return ip + 1;
    case Op::LIST_ITER: {
      s[ip->a].i = static_cast<int64_t>(vm.iters.size());
      Iterator& it = push_iterator(vm);
      it.list = l;
      rt::list_retain(l);
      it.version = l->shape_version();
      if (ip->imm > 0) {
        it.prefix.assign(cells(key), cells(key) + ip->imm);
        it.prefix_len = static_cast<uint32_t>(ip->imm);
      } else if (ip->imm < 0) {
        it.range = true;
        it.lo = key[0].i;
        it.hi = key[1].i;
      }
      return ip + 1;
    }
    default: fault(ip, "bad list instruction");
  }
}

// ---- stored lists ----------------------------------------------------------------------------
static std::string stored_name(VM& vm, uint32_t i) { return "stored list '" + vm.prog.stored[i].name + "'"; }

static rt::ListWriter& writer(VM& vm, const Instr* ip) {
  if (!vm.store || !vm.store->in_event() || vm.snapshot) fault(ip, "stored lists change only inside events");
  return vm.store->list(ip->b);
}

static const Instr* store_op_inner(VM& vm, Slot* s, const Instr* ip);

Iterator& begin_stored_iterator(VM& vm, Slot* s, const Instr* ip, uint32_t li, const rt::ListReader*& from) {
  s[ip->a].i = static_cast<int64_t>(vm.iters.size());
  Iterator& it = push_iterator(vm);
  it.stored = li;
  it.shape = vm.prog.stored_shapes[li].get();
  from = &vm.reader(li);
  if (vm.snapshot) {
    it.from_snapshot = true;  // a query's loop: its snapshot outlives the loop
  } else if (vm.transaction_depth == 0) {
    // A loop in main walks the state as of its start: the events it calls change the live
    // lists, never what it walks (see "Loops over stored lists" in docs/language.md).
    it.snapshot = vm.store->publish();
    it.from_snapshot = true;
    from = &it.snapshot->list(li);
  } else {
    // Inside an event: the live list; an insert or removal while walking it is an error.
    it.live = &vm.store->list(li);
    it.version = it.live->shape_version();
  }
  return it;
}

// Stored rows are counted against the memory budget but never refused half-way through a write
// (runtime/memory.h): the meter is checked once the write is done, and the event then fails
// whole and is rolled back.
// The commonest stored-list instructions on a keyed list, without store_op_inner's setup (its
// lambdas, the sequence bounds, two virtual calls for the list): a field read, a field write, a
// has. TPC-C's New-Order and Payment read and write single fields, mostly of a row the list's
// last search found, so that setup was most of their cost. Null when the general path must run:
// a sequence, another instruction, or a missing row (which the general path reports).
static inline const Instr* keyed_field_op(VM& vm, Slot* s, const Instr* ip) {
  uint32_t li = ip->b;
  const rt::ListSchema& schema = vm.prog.stored[li];
  if (schema.is_sequence) return nullptr;
  const rt::Cell* key = cells(s + ip->c);
  switch (ip->op) {
    case Op::ST_GET_FIELD: {
      const rt::Cell* row = vm.reader(li).find(key);
      if (!row) return nullptr;
      load_cell(vm, s[ip->a], row[ip->imm], vm.prog.stored_shapes[li]->cols[ip->imm]);
      return ip + 1;
    }
    case Op::ST_SET_FIELD: {
      uint32_t field = static_cast<uint32_t>(ip->imm) - static_cast<uint32_t>(schema.key.size());
      if (!writer(vm, ip).set_field(key, field, s[ip->a].u)) return nullptr;
      return ip + 1;
    }
    case Op::ST_HAS: s[ip->a].i = vm.reader(li).find(key) != nullptr; return ip + 1;
    default: return nullptr;
  }
}

const Instr* store_op(VM& vm, Slot* s, const Instr* ip) {
  const Instr* next;
  try {
    next = keyed_field_op(vm, s, ip);
    if (!next) next = store_op_inner(vm, s, ip);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
  if (__builtin_expect(rt::memory_over(), 0)) memory_budget_spent(ip);
  return next;
}

static const Instr* store_op_inner(VM& vm, Slot* s, const Instr* ip) {
  uint32_t li = ip->b;
  // Reads go to the query's snapshot when there is one; writes only happen inside events.
  const rt::ListReader& r = vm.reader(li);
  const rt::ListSchema& schema = vm.prog.stored[li];
  const rt::ListShape& shape = *vm.prog.stored_shapes[li];
  bool seq = schema.is_sequence;
  uint32_t kw = schema.key_width();
  const Slot* key = s + ip->c;
  // Row cells as the store keeps them: keyed rows are keys then fields; sequence rows are fields.
  const std::vector<rt::ColType>& cols = shape.cols;
  auto find = [&]() -> const rt::Cell* {
    if (seq && (key[0].i < 0 || key[0].i >= r.count())) return nullptr;
    return r.find(cells(key));
  };
  auto missing = [&]() {
    if (seq) index_error(ip, key[0].i, r.count());
    fault(ip, "no item with key " + key_text(shape, key, shape.key_count) + " in " + stored_name(vm, li));
  };
  switch (ip->op) {
    case Op::ST_COUNT: s[ip->a].i = r.count(); return ip + 1;
    case Op::ST_GET: {
      const rt::Cell* row = find();
      if (!row) missing();
      row_to_slots(vm, s + ip->a, row, cols, 0, shape.width());
      return ip + 1;
    }
    case Op::ST_GET_FIELD: {
      const rt::Cell* row = find();
      if (!row) missing();
      load_cell(vm, s[ip->a], row[ip->imm], cols[ip->imm]);
      return ip + 1;
    }
    case Op::ST_LOOKUP: {
      const rt::Cell* row = find();
      if (!row) return ip + ip->imm;
      row_to_slots(vm, s + ip->a, row, cols, 0, shape.width());
      return ip + 1;
    }
    case Op::ST_HAS: s[ip->a].i = find() != nullptr; return ip + 1;
    case Op::ST_PUT: {
      rt::ListWriter& w = writer(vm, ip);
      // the row on the stack for the usual widths (TPC-C's widest has 21 cells); no malloc per put
      size_t width = kw + schema.fields.size();
      rt::Cell local[32];
      std::vector<rt::Cell> heap(width > 32 ? width : 0);
      rt::Cell* row = width > 32 ? heap.data() : local;
      for (uint32_t i = 0; i < kw; ++i) row[i] = key[i].u;
      for (size_t i = 0; i < schema.fields.size(); ++i) row[kw + i] = s[ip->a + i].u;
      w.put(row);
      return ip + 1;
    }
    case Op::ST_SET_FIELD: {
      rt::ListWriter& w = writer(vm, ip);
      uint32_t field = static_cast<uint32_t>(ip->imm) - kw;
      // One search: set_field reports a missing row itself (positions are checked first, as find does).
      if ((seq && (key[0].i < 0 || key[0].i >= w.count())) || !w.set_field(cells(key), field, s[ip->a].u)) missing();
      return ip + 1;
    }
    case Op::ST_ENSURE: {
      rt::ListWriter& w = writer(vm, ip);
      if (find()) return ip + 1;
      std::vector<rt::Cell> row(kw + schema.fields.size());
      for (uint32_t i = 0; i < kw; ++i) row[i] = key[i].u;
      for (size_t i = 0; i < schema.fields.size(); ++i) row[kw + i] = shape.defaults[i];
      w.put(row.data());
      return ip + 1;
    }
    case Op::ST_REMOVE: s[ip->a].i = writer(vm, ip).remove(cells(key)); return ip + 1;
    case Op::ST_APPEND: writer(vm, ip).append(cells(s + ip->a)); return ip + 1;
    case Op::ST_CLEAR: {
      // m.clear() and m[prefix].clear(): one row at a time, each found by one descent (a cursor
      // does not outlive a write) and removed as ST_REMOVE removes it, so the event's rollback
      // and the log treat it like any other removal; one step per row, spent before it goes
      rt::ListWriter& w = writer(vm, ip);
      if (seq) {
        for (int64_t left = w.count(); left > 0; --left) {
          spend_work(vm, ip, 0, 1);
          w.pop();
        }
        return ip + 1;
      }
      uint32_t given = static_cast<uint32_t>(ip->imm);
      std::vector<rt::Cell> row_key(kw);
      for (;;) {
        std::unique_ptr<rt::Cursor> c = given ? w.prefix(cells(key), given) : w.scan();
        if (!c->valid()) break;
        spend_work(vm, ip, 0, 1);
        // the row's own key cells: its texts stay alive until the event commits (rollback needs them)
        std::copy(c->row(), c->row() + kw, row_key.begin());
        c.reset();
        w.remove(row_key.data());
      }
      return ip + 1;
    }
    case Op::ST_POP: {
      rt::ListWriter& w = writer(vm, ip);
      if (w.count() == 0) fault(ip, "pop from an empty " + stored_name(vm, li));
      rt::Cell pos = static_cast<rt::Cell>(w.count() - 1);
      const rt::Cell* row = w.find(&pos);
      // copy the texts before the store may let them go
      for (uint32_t i = 0; i < shape.width(); ++i) {
        if (cols[i] == rt::ColType::Text) set_text(s[ip->a + i], rt::text_new(reinterpret_cast<rt::Text*>(row[i])->view()));
        else s[ip->a + i].u = row[i];
      }
      w.pop();
      return ip + 1;
    }
    default: fault(ip, "bad stored-list instruction");
  }
}

// st_iter's first case: the common loop of a query, `for e in edges[v]` over text-free rows of
// the snapshot's flat form, without begin_stored_iterator's cases (the iterator reads the query's
// snapshot, the whole prefix one run, no cursor); within the iterators' capacity (allocates nothing).
static bool flat_case(const VM& vm, const Instr* ip, const rt::ListShape& shape) {
  return ip->imm == 1 && vm.snapshot && !shape.any_text && vm.iters.size() < vm.iters.capacity();
}

static void push_flat_iterator(VM& vm, Slot* s, const Instr* ip, const rt::Cell* run, size_t run_left) {
  s[ip->a].i = static_cast<int64_t>(vm.iters.size());
  Iterator& it = push_iterator(vm);  // within capacity: allocates nothing
  it.stored = ip->b;
  it.shape = vm.prog.stored_shapes[ip->b].get();
  it.from_snapshot = true;
  it.width = it.shape->width();
  it.prefix_len = 1;
  it.run = run;
  it.run_left = run_left;
  it.one_run = true;
}

// .range(lo, hi) of a stored list, lo and hi in the slots at key: an Int first key through
// range(), a Text one as a bounded slice (runtime/store.h: the bounds are the slots' Text*, which
// the lowering keeps in slots of their own for as long as the loop runs).
static std::unique_ptr<rt::Cursor> range_cursor(const rt::ListReader& from, const rt::ListShape& shape, const Slot* key) {
  if (shape.cols[0] != rt::ColType::Text) return from.range(key[0].i, key[1].i);
  rt::Slice slice;
  slice.bounded = true;
  slice.lo = key[0].i;
  slice.hi = key[1].i;
  return from.slice(slice);
}

// st_iter's general case; `asked`: the flat form was asked already (and was not ready).
static void st_iter_general(VM& vm, Slot* s, const Instr* ip, bool asked) {
  uint32_t li = ip->b;
  const Slot* key = s + ip->c;
  const rt::ListReader* from = nullptr;
  Iterator& it = begin_stored_iterator(vm, s, ip, li, from);
  // rows that will come in leaf runs have their width known from the start (native code
  // relies on it: an ITER_NEXT of such an iterator writes exactly its slots A..A+width-1)
  if (it.from_snapshot && !it.shape->any_text) it.width = it.shape->width();
  if (ip->imm > 0) {
    it.prefix_len = static_cast<uint32_t>(ip->imm);  // marks the cursor as reusable
    const rt::Cell* first;
    size_t n;
    if (it.width && it.prefix_len == 1 && !asked && from->prefix_rows(key[0].u, &first, &n)) {
      // the snapshot's flat form (docs/store.md): the whole prefix is one run, and no cursor
      // (take_leaf_run then ends the loop); the same rows, steps and faults as the cursor's
      it.run = first;
      it.run_left = n;
      it.one_run = true;
    } else {
      it.cursor = from->prefix_again(std::move(vm.spare_cursors[li]), cells(key), it.prefix_len);
    }
  }
  else if (ip->imm < 0) it.cursor = range_cursor(*from, *it.shape, key);
  else it.cursor = from->scan();
  if (it.live) {  // the walk as a slice, for resume_walks
    it.slice.prefix_len = ip->imm > 0 ? static_cast<uint32_t>(ip->imm) : 0;
    it.slice.bounded = ip->imm < 0;
    it.slice.lo = it.slice.bounded ? key[0].i : 0;
    it.slice.hi = it.slice.bounded ? key[1].i : 0;
  }
}

namespace {

// A cursor with no rows: a resumed walk that had given all of its rows.
class NoRows final : public rt::Cursor {
 public:
  bool valid() const override { return false; }
  const rt::Cell* row() const override { return nullptr; }
  int64_t position() const override { return -1; }
  void next() override {}
};

}  // namespace

uint64_t keep_walks(VM& vm) {
  uint64_t kept = 0;
  for (size_t i = 0, n = std::min<size_t>(vm.iters.size(), 64); i < n; ++i) {
    Iterator& it = vm.iters[i];
    if (!it.live || !it.cursor || it.live->shape_version() != it.version) continue;
    // the row the walk gives next (a set_field since it moved leaves the key as it was)
    it.past_end = !it.cursor->valid();
    if (!it.past_end) {
      const rt::Cell* row = it.cursor->row();
      if (it.shape->sequence) it.prefix.assign(1, static_cast<rt::Cell>(it.cursor->position()));
      else it.prefix.assign(row, row + it.shape->key_count);
    }
    kept |= uint64_t{1} << i;
  }
  return kept;
}

void resume_walks(VM& vm, uint64_t kept, uint32_t below) {
  for (uint32_t i = 0; i < below && i < 64; ++i) {
    Iterator& it = vm.iters[i];
    if (!(kept >> i & 1) || it.live->shape_version() == it.version) continue;  // unchanged: its cursor is good
    it.version = it.live->shape_version();
    if (it.past_end) {
      it.cursor = std::make_unique<NoRows>();
      continue;
    }
    // the same slice from its next row: the prefix is that row's first cells
    rt::Slice s = it.slice;
    s.reverse = it.reverse;
    s.prefix = it.prefix.data();
    s.from = it.prefix.data();
    it.cursor = it.live->slice(s);
  }
}

// ST_ITER alone, without store_op's switch: exec.h and the JITs' runtime call
// (jit-common/runtime_calls.cpp) both run this, so a loop starts the same way in every engine.
// Its faults are store_op's: out of memory, or the budget spent once the iterator exists.
const Instr* st_iter(VM& vm, Slot* s, const Instr* ip) {
  try {
    // The flat form is asked once either way (it counts the seeks that decide when it is built):
    // when it is not ready, the general case goes on with that answer.
    bool asked = false;
    if (flat_case(vm, ip, *vm.prog.stored_shapes[ip->b])) {
      const rt::Cell* first;
      size_t n;
      asked = true;
      if (vm.snapshot->list(ip->b).prefix_rows(s[ip->c].u, &first, &n)) {
        push_flat_iterator(vm, s, ip, first, n);
        if (__builtin_expect(rt::memory_over(), 0)) memory_budget_spent(ip);
        return ip + 1;
      }
    }
    st_iter_general(vm, s, ip, asked);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
  if (__builtin_expect(rt::memory_over(), 0)) memory_budget_spent(ip);
  return ip + 1;
}

bool st_iter_rows(VM& vm, Slot* s, const Instr* ip, uint32_t width, const rt::Cell** first, size_t* n) {
  const rt::ListShape& shape = *vm.prog.stored_shapes[ip->b];
  if (!flat_case(vm, ip, shape) || shape.width() != width) {
    st_iter(vm, s, ip);
    return false;
  }
  try {
    if (vm.snapshot->list(ip->b).prefix_rows(s[ip->c].u, first, n)) {
      // st_iter's first case but for the iterator, which native code keeps itself
      if (__builtin_expect(rt::memory_over(), 0)) memory_budget_spent(ip);
      return true;
    }
    st_iter_general(vm, s, ip, true);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
  if (__builtin_expect(rt::memory_over(), 0)) memory_budget_spent(ip);
  return false;
}

void materialize_flat_iterator(VM& vm, Slot* s, const Instr* ip, const rt::Cell* run, size_t run_left) {
  PURE_ASSERT(vm.iters.size() < vm.iters.capacity());
  push_flat_iterator(vm, s, ip, run, run_left);
}

const rt::Cell* take_leaf_run(Iterator& it) {
  PURE_ASSERT(it.from_snapshot && !it.list && !it.shape->any_text);
  if (!it.cursor) return nullptr;  // a flat form's run was the whole prefix (st_iter: one_run)
  const rt::Cell* first;
  size_t n = it.cursor->take_run(&first, SIZE_MAX);
  if (n == 0) return nullptr;
  it.width = it.shape->width();
  it.run = first + it.width;
  it.run_left = n - 1;
  return first;
}

const Instr* text_iter(VM& vm, Slot* s, const Instr* ip) {
  try {
    rt::Text* t = s[ip->b].t;
    rt::Text* separator = ip->imm == 0 ? s[ip->c].t : nullptr;
    s[ip->a].i = static_cast<int64_t>(vm.iters.size());
    auto walk = std::make_unique<TextPieces>();
    rt::text_retain(t);
    rt::text_retain(separator);
    walk->text = t;
    walk->separator = separator;
    auto kind = ip->imm == 0 ? text::Pieces::Split : ip->imm == 1 ? text::Pieces::Words : text::Pieces::Lines;
    walk->pieces = text::Pieces(t->view(), kind, separator ? separator->view() : std::string_view{});
    walk->flags = t->flags & rt::kTextAscii;
    if (ip->imm == 0 && separator->len == 1) {
      walk->by_byte = true;
      walk->separator_byte = separator->bytes[0];
      walk->pattern = text::byte_pattern(separator->bytes[0]);
      walk->at = t->bytes;
      walk->end = t->bytes + t->len;
    }
    Iterator& it = push_iterator(vm);
    it.pieces = std::move(walk);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
  return ip + 1;
}

// ITER_NEXT of a TEXT_ITER: the next piece into slot A. The text the slot holds from the last
// piece is written over in place when nothing else holds it (its count is 1, as CONCAT appends in
// place) and it has room: a piece used only as a key, compared or printed costs no allocation.
// A piece kept (a keyed list's new key, pushed, stored in a local) is counted again, so the next
// one is a new text.
[[gnu::noinline]] static const Instr* new_piece(Slot& to, const Instr* ip, std::string_view piece, uint16_t flags) {
  // room for the short pieces to come (a word, a field), so that one text serves them all
  constexpr uint32_t kRoom = 24;
  uint32_t n = static_cast<uint32_t>(piece.size());
  rt::Text* made = rt::text_new(piece, n < kRoom ? kRoom - n : 0);
  made->flags = flags;
  set_text(to, made);
  if (__builtin_expect(rt::memory_over(), 0)) memory_budget_spent(ip);
  return ip + 1;
}

// The next piece of a split by one byte (TextPieces::by_byte): text::Pieces' Split with a
// one-byte separator (text::find_byte), the same pieces.
static inline bool next_by_byte(TextPieces& walk, std::string_view& piece) {
  const char* p = walk.at;
  if (!p) return false;
  const char* end = walk.end;
  const char* hit = text::find_byte(p, end, walk.separator_byte, walk.pattern);
  piece = std::string_view(p, static_cast<size_t>(hit - p));
  walk.at = hit == end ? nullptr : hit + 1;
  return true;
}

static const Instr* next_piece(Slot* s, const Instr* ip, TextPieces& walk) {
  std::string_view piece;
  if (!(walk.by_byte ? next_by_byte(walk, piece) : walk.pieces.next(piece))) return ip + ip->imm;
  Slot& to = s[ip->a];
  rt::Text* t = to.t;
  uint32_t n = static_cast<uint32_t>(piece.size());
  if (t && t->rc == 1 && !(t->flags & (rt::kTextStored | rt::kTextPiece)) && t->cap >= n) {
    t->len = n;
    t->flags = walk.flags;
    rt::TextBatch::copy_short(t->bytes, piece.data(), n);
    return ip + 1;
  }
  return new_piece(to, ip, piece, walk.flags);
}

[[gnu::noinline]] static const Instr* iter_next_inner(VM& vm, Slot* s, const Instr* ip);

[[gnu::noinline]] static const Instr* iter_next_slow(VM& vm, Slot* s, const Instr* ip) {
  try {
    // a loop over pieces first, without the list walks' frame (the common case of its loops)
    Iterator& it = vm.iters[s[ip->b].i];
    if (it.pieces) return next_piece(s, ip, *it.pieces);
    return iter_next_inner(vm, s, ip);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
}

const Instr* iter_next(VM& vm, Slot* s, const Instr* ip) {
  // A split by one byte whose piece goes in place (next_piece's first case), in a function of
  // its own that cannot throw and so saves few registers; anything else (a new text to make, the
  // end, another iterator) goes the whole way, the piece cut again there.
  Iterator& it = vm.iters[s[ip->b].i];
  if (TextPieces* walk = it.pieces.get(); walk && walk->by_byte && walk->at) {
    rt::Text* t = s[ip->a].t;
    if (t && t->rc == 1 && !(t->flags & (rt::kTextStored | rt::kTextPiece))) {
      std::string_view piece;
      const char* at = walk->at;
      next_by_byte(*walk, piece);
      uint32_t n = static_cast<uint32_t>(piece.size());
      if (t->cap >= n) {
        t->len = n;
        t->flags = walk->flags;
        rt::TextBatch::copy_short(t->bytes, piece.data(), n);
        return ip + 1;
      }
      walk->at = at;  // cut again by next_piece, which makes the new text
    }
  }
  return iter_next_slow(vm, s, ip);
}

static const Instr* iter_next_inner(VM& vm, Slot* s, const Instr* ip) {
  Iterator& it = vm.iters[s[ip->b].i];
  if (it.list) {
    if (it.list->shape_version() != it.version)
      fault(ip, "the list was changed (an item added or removed) while a loop was walking it");
    const rt::Cell* row = it.sliced ? it.list->slice_next(it.walk, it.slice)
                                    : it.list->walk_next(it.walk, it.prefix.data(), it.prefix_len, it.range, it.lo, it.hi);
    if (!row) return ip + ip->imm;
    copy_row_out(s + ip->a, row, it.list->shape());
    return ip + 1;
  }
  if (it.live && it.live->shape_version() != it.version)
    fault(ip, "stored list '" + vm.prog.stored[it.stored].name + "' was changed (an item added or removed) while a loop was walking it");
  const rt::ListShape& shape = *it.shape;
  if (it.from_snapshot && !shape.any_text) {
    // A snapshot never changes while held: take the rest of the leaf in one call.
    const rt::Cell* first = take_leaf_run(it);
    if (!first) return ip + ip->imm;
    for (uint32_t i = 0; i < it.width; ++i) s[ip->a + i].u = first[i];
    return ip + 1;
  }
  const rt::Cell* row = it.cursor->take();
  if (!row) return ip + ip->imm;
  if (it.live) {
    // An event's loop sees the event's own field writes. The cursor may stand in a leaf that a
    // write has since copied (the first write after a snapshot copies it), so the row is read
    // where it is now; no insert or removal happened, so it is there.
    if (it.shape->sequence) {
      rt::Cell pos = static_cast<rt::Cell>(it.cursor->position() + (it.reverse ? 1 : -1));
      row = it.live->find(&pos);
    } else {
      row = it.live->find(row);
    }
  }
  if (!shape.any_text)
    for (uint32_t i = 0, w = shape.width(); i < w; ++i) s[ip->a + i].u = row[i];
  else row_to_slots(vm, s + ip->a, row, shape.cols, 0, shape.width(), it.skip_texts);
  return ip + 1;
}

}  // namespace pure::vm
