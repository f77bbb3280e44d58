// vm/slices.cpp — slices of lists (ir/ops.def: SLICE_ITER, SLICE_GET, SLICE_LOOKUP, SLICE_AGG):
// a key prefix, a bound on the key after it, forwards or backwards. Stored lists read them with
// one descent and the leaf chain (runtime/store.h: ListReader::slice); event lists with
// EventList::slice_next. Neither ever walks the rest of the list.
#include "runtime/memory.h"
#include "vm/exec.h"

namespace pure::vm {

namespace {

namespace sw = ir::slice_word;

// The slice C.. names: its word, the prefix's key cells, then lo and hi when bounded.
rt::Slice read_slice(const Slot* c) {
  int64_t word = c[0].i;
  rt::Slice slice;
  slice.prefix_len = static_cast<uint32_t>(word & sw::kPrefixMask);
  slice.prefix = reinterpret_cast<const rt::Cell*>(c + 1);
  slice.bounded = (word & sw::kBounded) != 0;
  if (slice.bounded) {
    slice.lo = c[1 + slice.prefix_len].i;
    slice.hi = c[2 + slice.prefix_len].i;
  }
  slice.reverse = (word & sw::kReverse) != 0;
  return slice;
}

// The rows of one slice in its order, whichever kind of list holds it.
class SliceRows {
 public:
  SliceRows(VM& vm, Slot* s, const Instr* ip) : slice_(read_slice(s + ip->c)) {
    if (s[ip->c].i & sw::kStored) {
      name_ = &vm.prog.stored[ip->b].name;
      shape_ = vm.prog.stored_shapes[ip->b].get();
      cursor_ = vm.reader(ip->b).slice(slice_);
    } else {
      list_ = s[ip->b].l;
      shape_ = &list_->shape();
    }
  }
  const rt::Cell* next() { return cursor_ ? cursor_->take() : list_->slice_next(walk_, slice_); }
  const rt::ListShape& shape() const { return *shape_; }

  // "first of an empty slice: stored list 'orders' has no item with key prefix 1, 2"
  [[noreturn]] void empty(const Instr* ip) const {
    if (!slice_.prefix_len && !slice_.bounded) fault(ip, std::string(slice_.reverse ? "last" : "first") + " of an empty list");
    std::string list = name_ ? "stored list '" + *name_ + "'" : "the list";
    std::string what = std::string(slice_.reverse ? "last" : "first") + " of an empty slice: " + list + " has no item";
    if (slice_.prefix_len) what += " with key prefix " + keys_text();
    if (slice_.bounded) {
      what += slice_.prefix_len ? " and the next key" : " with the first key";
      uint32_t n = slice_.prefix_len;
      what += " in " + cell_text(n, static_cast<rt::Cell>(slice_.lo)) + " .. " + cell_text(n, static_cast<rt::Cell>(slice_.hi));
    }
    fault(ip, what);
  }

 private:
  std::string keys_text() const {
    std::string out;
    for (uint32_t i = 0; i < slice_.prefix_len; ++i) {
      if (i) out += ", ";
      out += cell_text(i, slice_.prefix[i]);
    }
    return out;
  }
  // A key cell of column col as the message shows it: "text" quoted, ints and bools as written.
  std::string cell_text(uint32_t col, rt::Cell c) const {
    switch (shape_->cols[col]) {
      case rt::ColType::Text: return "\"" + std::string(reinterpret_cast<const rt::Text*>(c)->view()) + "\"";
      case rt::ColType::Bool: return c ? "true" : "false";
      default: return std::to_string(static_cast<int64_t>(c));
    }
  }

  rt::Slice slice_;
  const std::string* name_ = nullptr;  // a stored list's name; null for an event list
  const rt::ListShape* shape_ = nullptr;
  std::unique_ptr<rt::Cursor> cursor_;
  rt::EventList* list_ = nullptr;
  rt::EventList::Walk walk_;
};

// A row into slots A..: texts are the VM's own references (a store text read outside an event
// or query is copied, as every read of a stored row is).
void row_out(VM& vm, Slot* dst, const rt::Cell* row, const rt::ListShape& shape) {
  for (uint32_t i = 0; i < shape.width(); ++i) {
    if (shape.cols[i] == rt::ColType::Text) set_text(dst[i], load_text_cell(vm, row[i]));
    else dst[i].u = row[i];
  }
}

// count, sum, min, max over the slice, as a list's count(), sum(f), min(f) and max(f) are.
void fold(VM& vm, Slot* s, const Instr* ip, SliceRows& rows) {
  auto agg = static_cast<ir::SliceAgg>(ip->imm & 0xFF);
  uint32_t col = static_cast<uint32_t>(ip->imm >> 8);
  Slot& out = s[ip->a];
  if (agg == ir::SliceAgg::Count) {
    int64_t n = 0;
    while (rows.next()) ++n;
    out.i = n;
    return;
  }
  rt::ColType t = rows.shape().cols[col];
  if (agg == ir::SliceAgg::Sum) {
    int64_t isum = 0;
    double nsum = 0;
    while (const rt::Cell* row = rows.next()) {
      if (t == rt::ColType::Int) {
        if (__builtin_add_overflow(isum, static_cast<int64_t>(row[col]), &isum)) fault(ip, "integer overflow in sum");
      } else {
        nsum += std::bit_cast<double>(row[col]);
      }
    }
    if (t == rt::ColType::Int) out.i = isum;
    else out.n = nsum;
    return;
  }
  bool want_min = agg == ir::SliceAgg::Min;
  // the best cell so far, by value: a row lives only until the next (a narrow list's row is the
  // walk's own cell, EventList::Walk::cell)
  bool have_best = false;
  rt::Cell best = 0;
  double nbest = 0;
  while (const rt::Cell* row = rows.next()) {
    rt::Cell c = row[col];
    if (t == rt::ColType::Num) {  // the two-argument rule, folded: a NaN wins, -0.0 < 0.0
      double v = std::bit_cast<double>(c);
      nbest = have_best ? num_min_max(nbest, v, want_min) : v;
      have_best = true;
      continue;
    }
    if (!have_best) {
      have_best = true;
      best = c;
      continue;
    }
    int order;
    if (t == rt::ColType::Text) {
      order = rt::text_compare(reinterpret_cast<const rt::Text*>(c), reinterpret_cast<const rt::Text*>(best));
    } else {
      int64_t x = static_cast<int64_t>(c), y = static_cast<int64_t>(best);
      order = x < y ? -1 : (x > y ? 1 : 0);
    }
    if (want_min ? order < 0 : order > 0) best = c;
  }
  if (!have_best) fault(ip, std::string(want_min ? "min" : "max") + " of an empty slice");
  if (t == rt::ColType::Text) set_text(out, load_text_cell(vm, best));
  else if (t == rt::ColType::Num) out.n = nbest;
  else out.u = best;
}

// SLICE_ITER: a loop's iterator, with the snapshot rules of ST_ITER for stored lists.
void begin_iterator(VM& vm, Slot* s, const Instr* ip) {
  rt::Slice slice = read_slice(s + ip->c);
  if (s[ip->c].i & sw::kStored) {
    const rt::ListReader* from = nullptr;
    Iterator& it = begin_stored_iterator(vm, s, ip, ip->b, from);
    it.reverse = slice.reverse;
    it.cursor = from->slice(slice);  // copies the prefix it needs
    if (it.live) {  // the walk, for resume_walks (lists.cpp): its prefix is the row it resumes at
      it.slice = slice;
      it.slice.prefix = nullptr;
    }
    return;
  }
  s[ip->a].i = static_cast<int64_t>(vm.iters.size());
  Iterator& it = push_iterator(vm);
  it.list = s[ip->b].l;
  rt::list_retain(it.list);
  it.version = it.list->shape_version();
  it.sliced = true;
  it.reverse = slice.reverse;
  it.prefix.assign(slice.prefix, slice.prefix + slice.prefix_len);
  it.slice = slice;
  it.slice.prefix = it.prefix.data();
}

const Instr* slice_op_inner(VM& vm, Slot* s, const Instr* ip) {
  if (ip->op == Op::SLICE_ITER) {
    begin_iterator(vm, s, ip);
    return ip + 1;
  }
  SliceRows rows(vm, s, ip);
  switch (ip->op) {
    case Op::SLICE_GET:
    case Op::SLICE_LOOKUP: {
      const rt::Cell* row = rows.next();
      if (!row) {
        if (ip->op == Op::SLICE_LOOKUP) return ip + ip->imm;
        rows.empty(ip);
      }
      row_out(vm, s + ip->a, row, rows.shape());
      return ip + 1;
    }
    case Op::SLICE_AGG: fold(vm, s, ip, rows); return ip + 1;
    default: fault(ip, "bad slice instruction");
  }
}

}  // namespace

const Instr* slice_op(VM& vm, Slot* s, const Instr* ip) {
  try {
    return slice_op_inner(vm, s, ip);
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
}

}  // namespace pure::vm
