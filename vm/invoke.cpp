// vm/invoke.cpp — the hosting seam: run main, or call one event or query by name with argument
// values. Each invocation gets a machine (its memory reused per thread) and runs through the one
// driver loop (driver.cpp).
#include <bit>
#include <cstring>

#include "base/assert.h"
#include "vm/exec.h"

namespace pure::vm {

using Kind = ir::ValueType::Kind;

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
  VM vm(program, &store, options);
  const Function& main_fn = program.functions[program.main];
  Slot* base = vm.stack;
  std::memset(base, 0, main_fn.stack_need * sizeof(Slot));
  if (main_fn.param_slots == 1) base[0].l = make_args(program, options.args);
  vm.calls.push_back({&main_fn, base, nullptr, 0, Boundary::None, 0, base});
  return drive(vm, base, main_fn.code.data());
}

int find_function(const Program& program, std::string_view name) {
  for (size_t i = 0; i < program.functions.size(); ++i)
    if (program.functions[i].name == name) return static_cast<int>(i);
  return -1;
}

static const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Int: return "int";
    case Value::Kind::Num: return "num";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Text: return "text";
    case Value::Kind::Item: return "item";
    case Value::Kind::List: return "list";
  }
  return "?";
}

static bool scalar_fits(const ir::ValueType& t, const Value& v) {
  switch (t.kind) {
    case Kind::Int: return v.kind == Value::Kind::Int;
    case Kind::Num: return v.kind == Value::Kind::Num;
    case Kind::Bool: return v.kind == Value::Kind::Bool;
    case Kind::Text: return v.kind == Value::Kind::Text;
    default: return false;
  }
}

// The item type of a sequence of items' rows, for checking an element.
static ir::ValueType item_of_row(const ir::ValueType& seq) {
  ir::ValueType item;
  item.kind = Kind::Item;
  item.name = seq.name.starts_with("seq ") ? seq.name.substr(4) : seq.name;
  item.field_names = seq.field_names;
  item.fields = seq.fields;
  return item;
}

static base::Status check_value(const std::string& what, const ir::ValueType& t, const Value& v) {
  if (t.kind == Kind::Item) {
    if (v.kind != Value::Kind::Item) return base::Status::failure(what + ": expected " + t.name + " (an item), got " + kind_name(v.kind));
    if (v.items.size() != t.fields.size())
      return base::Status::failure(what + ": " + t.name + " has " + std::to_string(t.fields.size()) + " fields, got " + std::to_string(v.items.size()));
    for (size_t i = 0; i < t.fields.size(); ++i) {
      base::Status e = check_value(what + "." + t.field_names[i], t.fields[i], v.items[i]);
      if (!e.ok()) return e;
    }
    return base::Status::success();
  }
  if (t.kind == Kind::Seq) {
    if (v.kind != Value::Kind::List) return base::Status::failure(what + ": expected " + t.name + " (a list), got " + kind_name(v.kind));
    if (t.desc < 0) return base::Status::failure(what + ": " + t.name + " cannot be passed by a host");
    const ir::ValueType element = t.row_is_item ? item_of_row(t) : t.fields[0];
    for (size_t i = 0; i < v.items.size(); ++i) {
      base::Status e = check_value(what + "[" + std::to_string(i) + "]", element, v.items[i]);
      if (!e.ok()) return e;
    }
    return base::Status::success();
  }
  if (t.kind == Kind::Keyed) return base::Status::failure(what + ": keyed list parameters are not supported by hosts");
  if (!scalar_fits(t, v)) return base::Status::failure(what + ": expected " + ir::value_type_name(t) + ", got " + kind_name(v.kind));
  return base::Status::success();
}

// Whether v fits t, without making messages (the common case: a sequence's every element).
static bool fits(const ir::ValueType& t, const Value& v) {
  switch (t.kind) {
    case Kind::Item:
      if (v.kind != Value::Kind::Item || v.items.size() != t.fields.size()) return false;
      for (size_t i = 0; i < t.fields.size(); ++i)
        if (!fits(t.fields[i], v.items[i])) return false;
      return true;
    case Kind::Seq:
      if (v.kind != Value::Kind::List || t.desc < 0) return false;
      for (const Value& e : v.items) {
        if (!t.row_is_item) {
          if (!scalar_fits(t.fields[0], e)) return false;
          continue;
        }
        if (e.kind != Value::Kind::Item || e.items.size() != t.fields.size()) return false;
        for (size_t c = 0; c < t.fields.size(); ++c)
          if (!scalar_fits(t.fields[c], e.items[c])) return false;
      }
      return true;
    case Kind::Keyed: return false;
    default: return scalar_fits(t, v);
  }
}

base::Status check_args(const Function& fn, std::span<const Value> args) {
  if (args.size() != fn.param_types.size())
    return base::Status::failure(fn.name + " takes " + std::to_string(fn.param_types.size()) + " argument" +
                           (fn.param_types.size() == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    if (fits(fn.param_types[i], args[i])) continue;
    base::Status e = check_value("parameter '" + fn.param_names[i] + "'", fn.param_types[i], args[i]);
    if (!e.ok()) return e;
  }
  return base::Status::success();
}

static uint64_t cell_of(const ir::ValueType& t, const Value& v) {
  switch (t.kind) {
    case Kind::Num: return std::bit_cast<uint64_t>(v.n);
    case Kind::Text: return reinterpret_cast<uint64_t>(rt::text_new(v.text));
    case Kind::Bool: return v.i != 0;  // 0 or 1, as in every slot
    default: return static_cast<uint64_t>(v.i);
  }
}

// Writes a checked value into slots; texts become owned VM texts, a sequence a new event list.
static Slot* put_value(const Program& p, Slot* out, const ir::ValueType& t, const Value& v) {
  if (t.kind == Kind::Item) {
    for (size_t i = 0; i < t.fields.size(); ++i) out = put_value(p, out, t.fields[i], v.items[i]);
    return out;
  }
  switch (t.kind) {
    case Kind::Num: out->n = v.n; break;
    case Kind::Text: out->t = rt::text_new(v.text); break;
    case Kind::Seq: {
      out->l = new rt::EventList(p.shapes[t.desc].get());  // owned by the slot from here on
      out->l->reserve(static_cast<int64_t>(v.items.size()));
      std::vector<rt::Cell> row(t.fields.size());
      for (const Value& element : v.items) {
        for (size_t c = 0; c < row.size(); ++c) row[c] = cell_of(t.fields[c], t.row_is_item ? element.items[c] : element);
        out->l->push(row.data());  // retains the texts: the row's own references go
        for (size_t c = 0; c < row.size(); ++c)
          if (t.fields[c].kind == Kind::Text) rt::text_release(reinterpret_cast<rt::Text*>(row[c]));
      }
      break;
    }
    default: out->i = v.i; break;
  }
  return out + 1;
}

static Value cell_value(const ir::ValueType& t, uint64_t cell) {
  switch (t.kind) {
    case Kind::Int: return Value::of_int(static_cast<int64_t>(cell));
    case Kind::Bool: return Value::of_bool(cell != 0);
    case Kind::Num: {
      double d;
      std::memcpy(&d, &cell, sizeof d);
      return Value::of_num(d);
    }
    case Kind::Text: return Value::of_text(std::string(reinterpret_cast<const rt::Text*>(cell)->view()));
    default: return Value{};
  }
}

static Value row_value(const ir::ValueType& list, const rt::Cell* row) {
  if (list.kind == Kind::Seq && !list.row_is_item) return cell_value(list.fields[0], row[0]);
  Value item;
  item.kind = Value::Kind::Item;
  for (size_t c = 0; c < list.fields.size(); ++c) item.items.push_back(cell_value(list.fields[c], row[c]));
  return item;
}

// Reads a result out of its slots and releases what the slots own.
static Value take_value(Slot* in, const ir::ValueType& t) {
  switch (t.kind) {
    case Kind::Void: return Value{};
    case Kind::Item: {
      Value item;
      item.kind = Value::Kind::Item;
      for (size_t i = 0; i < t.fields.size(); ++i) {  // a field that is an item: its slots in place
        item.items.push_back(take_value(in, t.fields[i]));
        in += t.fields[i].width();
      }
      return item;
    }
    case Kind::Text: {
      Value v = Value::of_text(std::string(in->t->view()));
      rt::text_release(in->t);
      return v;
    }
    case Kind::Seq:
    case Kind::Keyed: {
      Value v;
      v.kind = Value::Kind::List;
      rt::EventList* l = in->l;
      if (t.kind == Kind::Seq) {
        rt::Cell scratch = 0;  // a narrow list's row (EventList::row)
        for (int64_t i = 0; i < l->count(); ++i) v.items.push_back(row_value(t, l->row(i, &scratch)));
      } else {
        rt::EventList::Walk w;
        while (const rt::Cell* row = l->walk_next(w, nullptr, 0, false, 0, 0)) v.items.push_back(row_value(t, row));
      }
      rt::list_release(l);
      return v;
    }
    default: return cell_value(t, in->u);
  }
}

// ---- bounding a result before it is read out (RunOptions::max_result_bytes) --------------------

// The fewest bytes a cell takes as JSON: an int's digits (and sign), a bool's "true", a num's one
// digit, a text's bytes and two quotes.
static uint64_t cell_json_at_least(const ir::ValueType& t, uint64_t cell) {
  switch (t.kind) {
    case Kind::Int: {
      int64_t v = static_cast<int64_t>(cell);
      uint64_t n = v < 0 ? 2 : 1;
      uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      while (m >= 10) m /= 10, ++n;
      return n;
    }
    case Kind::Bool: return 4;
    case Kind::Text: return reinterpret_cast<const rt::Text*>(cell)->view().size() + 2;
    default: return 1;
  }
}

static uint64_t row_json_at_least(const ir::ValueType& list, const rt::Cell* row) {
  if (list.kind == Kind::Seq && !list.row_is_item) return cell_json_at_least(list.fields[0], row[0]);
  uint64_t n = 2 + (list.fields.empty() ? 0 : list.fields.size() - 1);
  for (size_t c = 0; c < list.fields.size(); ++c) n += cell_json_at_least(list.fields[c], row[c]);
  return n;
}

// A lower bound of the result's JSON size, counted up to just past `limit` (then it stops).
static uint64_t json_at_least(const Slot* in, const ir::ValueType& t, uint64_t limit) {
  switch (t.kind) {
    case Kind::Void: return 0;
    case Kind::Item: {
      uint64_t n = 2 + (t.fields.empty() ? 0 : t.fields.size() - 1);
      for (size_t i = 0; i < t.fields.size() && n <= limit; ++i) {
        n += json_at_least(in, t.fields[i], limit);
        in += t.fields[i].width();
      }
      return n;
    }
    case Kind::Text: return in->t->view().size() + 2;
    case Kind::Seq:
    case Kind::Keyed: {
      const rt::EventList* l = in->l;
      uint64_t n = 2 + (l->count() > 0 ? static_cast<uint64_t>(l->count()) - 1 : 0);
      if (t.kind == Kind::Seq) {
        rt::Cell scratch = 0;
        for (int64_t i = 0; i < l->count() && n <= limit; ++i) n += row_json_at_least(t, l->row(i, &scratch));
      } else {
        rt::EventList::Walk w;
        while (n <= limit)
          if (const rt::Cell* row = l->walk_next(w, nullptr, 0, false, 0, 0)) n += row_json_at_least(t, row);
          else break;
      }
      return n;
    }
    default: return cell_json_at_least(t, in->u);
  }
}

// Releases what a result's slots own without reading them out.
static void release_value(Slot* in, const ir::ValueType& t) {
  switch (t.kind) {
    case Kind::Item:
      for (size_t i = 0; i < t.fields.size(); ++i) {
        release_value(in, t.fields[i]);
        in += t.fields[i].width();
      }
      return;
    case Kind::Text: rt::text_release(in->t); return;
    case Kind::Seq:
    case Kind::Keyed: rt::list_release(in->l); return;
    default: return;
  }
}

// Reads the result out into r.value unless it passes options.max_result_bytes or the system
// refuses the memory (r.result_error then says which; the slots are released either way).
static void read_result(Slot* in, const ir::ValueType& t, const RunOptions& options, CallResult& r) {
  if (options.max_result_bytes) {
    uint64_t at_least = json_at_least(in, t, options.max_result_bytes);
    if (at_least > options.max_result_bytes) {
      release_value(in, t);
      r.result_bytes_at_least = at_least;
      r.result_error = "the result is too large: its JSON would take more than " +
                       std::to_string(options.max_result_bytes) + " bytes";
      return;
    }
  }
  try {
    r.value = take_value(in, t);
  } catch (const std::bad_alloc&) {
    // what take_value had not released yet stays allocated: a leak bounded by one result, rather
    // than a call that takes its thread (an owner, an I/O thread) down
    r.value = Value{};
    r.result_error = "out of memory: the system refused the memory to copy the result out";
  }
}

Value copy_value(const Slot*& in, const ir::ValueType& t) {
  if (t.kind == Kind::Item) {
    Value item;
    item.kind = Value::Kind::Item;
    for (const ir::ValueType& field : t.fields) item.items.push_back(copy_value(in, field));
    return item;
  }
  const Slot& slot = *in++;
  switch (t.kind) {
    case Kind::Text: return Value::of_text(std::string(slot.t->view()));
    case Kind::Seq:
    case Kind::Keyed: {  // not an event parameter today (hosts pass none); copied all the same
      Value v;
      v.kind = Value::Kind::List;
      rt::EventList* l = slot.l;
      if (t.kind == Kind::Seq) {
        rt::Cell scratch = 0;  // a narrow list's row (EventList::row)
        for (int64_t i = 0; i < l->count(); ++i) v.items.push_back(row_value(t, l->row(i, &scratch)));
      } else {
        rt::EventList::Walk w;
        while (const rt::Cell* row = l->walk_next(w, nullptr, 0, false, 0, 0)) v.items.push_back(row_value(t, row));
      }
      return v;
    }
    default: return cell_value(t, slot.u);
  }
}

static CallResult bad_call(const Function* fn, std::string message) {
  CallResult r;
  r.ok = false;
  r.reason = message;
  r.error = RuntimeError{std::move(message), fn ? Loc{0, fn->line, 1} : Loc{}, {}};
  return r;
}

// Sets up the frame of fn as the entry frame of vm, called from outside as a transaction
// boundary, with its arguments in the parameter slots.
static Slot* enter(VM& vm, const Function& fn, Boundary boundary, std::span<const Value> args) {
  Slot* base = vm.stack;
  std::memset(base, 0, std::max<uint32_t>(fn.stack_need, 2) * sizeof(Slot));
  Slot* out = base;
  for (size_t i = 0; i < args.size(); ++i) out = put_value(vm.prog, out, fn.param_types[i], args[i]);
  PURE_ASSERT(out == base + fn.param_slots);
  vm.calls.push_back({&fn, base, nullptr, 0, boundary, budget_left(vm), base});
  vm.transaction_depth = 1;
  return base;
}

CallResult call_event(const Program& program, rt::Store& store, uint32_t index, std::span<const Value> args,
                      const RunOptions& options) {
  if (index >= program.functions.size() || program.functions[index].kind != FuncKind::Event)
    return bad_call(nullptr, "not an event");
  const Function& fn = program.functions[index];
  if (base::Status e = check_args(fn, args); !e.ok()) return bad_call(&fn, e.error);
  VM vm(program, &store, options);
  Slot* base = enter(vm, fn, Boundary::Event, args);
  store.begin();
  CallResult r;
  if (std::optional<RuntimeError> err = drive(vm, base, fn.code.data())) {
    // a fault outside any event frame cannot happen: the entry frame is the event
    PURE_ASSERT(false);
    r.ok = false;
    r.reason = err->message;
    r.error = std::move(err);
    return r;
  }
  r.ok = base[0].i != 0;
  if (!r.ok) {
    r.reason = std::string(base[1].t->view());
    rt::text_release(base[1].t);
  } else {
    read_result(base + 2, fn.result_type, options, r);  // the result the event declared, if any
  }
  return r;
}

CallResult call_query(const Program& program, std::shared_ptr<const rt::Snapshot> snapshot, uint32_t index,
                      std::span<const Value> args, const RunOptions& options) {
  if (index >= program.functions.size() || program.functions[index].kind != FuncKind::Query)
    return bad_call(nullptr, "not a query");
  const Function& fn = program.functions[index];
  if (base::Status e = check_args(fn, args); !e.ok()) return bad_call(&fn, e.error);
  VM vm(program, nullptr, options);
  vm.snapshot = std::move(snapshot);
  Slot* base = enter(vm, fn, Boundary::Query, args);
  CallResult r;
  if (std::optional<RuntimeError> err = drive(vm, base, fn.code.data())) {
    r.ok = false;
    r.reason = err->message;
    r.error = std::move(err);
    r.cancelled = vm.cancelled;
    return r;
  }
  read_result(base, fn.result_type, options, r);
  return r;
}

}  // namespace pure::vm
