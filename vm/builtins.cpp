// vm/builtins.cpp — the standard functions and methods (one row each in frontend/builtins.def,
// which also says which of them spend the bytes of an argument: call_builtin does that here).
// Arguments are borrowed from the call area; results are written over them, owned.
#include <algorithm>

#include "base/assert.h"
#include "frontend/builtins.h"
#include "runtime/memory.h"
#include "stdlib/math.h"
#include "stdlib/text.h"
#include "stdlib/utf8.h"
#include "vm/exec.h"

namespace pure::vm {
namespace {

std::string_view sv(const Slot& s) { return s.t->view(); }
uint64_t bytes_of(const Slot& s) { return s.t->len; }

rt::Text* make_text(const Instr* ip, std::string_view s) {
  if (s.size() > rt::kMaxTextBytes) fault(ip, "text too long");
  return rt::text_new(s);
}

// A new VM text of bytes known to be ASCII (a piece of an ASCII text).
rt::Text* ascii_text(const Instr* ip, std::string_view s) {
  rt::Text* t = make_text(ip, s);
  t->flags |= rt::kTextAscii;
  return t;
}

// A `seq text` of the pieces that `cut` hands out. `cut(each)` calls each(piece) for every piece in
// order, and is called twice: first to count and measure the pieces, then to make them, so that
// the list is made its final size at once and the pieces share blocks (rt::TextBatch) instead of
// one allocation each. Too many pieces are the list limit's error, too many bytes the memory
// budget's, before any piece is made. `flags`: kTextAscii when the pieces are known to be.
// Spends the steps of reading `read` bytes and making the pieces (spend_work) once they are counted.
template <class Cut>
rt::EventList* text_pieces(VM& vm, const Instr* ip, uint16_t flags, uint64_t read, Cut cut) {
  uint64_t n = 0, bytes = 0;
  cut([&](std::string_view p) {
    ++n;
    bytes += rt::TextBatch::piece_bytes(p.size());
  });
  if (n > static_cast<uint64_t>(rt::kMaxListRows)) list_too_long(ip);
  spend_work(vm, ip, read, n);
  auto* l = new rt::EventList(vm.prog.shapes[0].get());  // shape 0 is `seq text`
  try {
    l->reserve(static_cast<int64_t>(n));
    rt::TextBatch batch(bytes);
    cut([&](std::string_view p) { l->push_taken(reinterpret_cast<rt::Cell>(batch.make(p, flags))); });
  } catch (...) {
    rt::list_release(l);
    throw;
  }
  return l;
}

// The pieces of an all-ASCII text are too (a flag only ever cached, never computed here).
uint16_t piece_flags(const rt::Text* t) { return t->flags & rt::kTextAscii; }

// n bytes from src to out, without a call for the short pieces a join mostly copies.
inline char* copy_bytes(char* out, const char* src, size_t n) {
  if (n >= 8 && n <= 16) {
    uint64_t x, y;
    std::memcpy(&x, src, 8);
    std::memcpy(&y, src + n - 8, 8);
    std::memcpy(out, &x, 8);
    std::memcpy(out + n - 8, &y, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t x, y;
    std::memcpy(&x, src, 4);
    std::memcpy(&y, src + n - 4, 4);
    std::memcpy(out, &x, 4);
    std::memcpy(out + n - 4, &y, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) out[i] = src[i];
  } else {
    std::memcpy(out, src, n);
  }
  return out + n;
}

// Faults now if a result of about `bytes` could not fit in the memory budget, before building it.
void need_memory(const Instr* ip, uint64_t bytes) {
  const rt::MemoryMeter* m = rt::current_meter();
  if (m && !m->fits(rt::charged_size(bytes))) memory_budget_spent(ip);
}

// splitmix64: a fixed, well-mixed function of the state; the same bits on every device.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Walks the rows of an event or stored list in order, spending one step per row it hands out
// (spend_work), so that a walk over a long list stops at its budget instead of after it.
class RowWalker {
 public:
  RowWalker(VM& vm, const Slot* args, const Instr* ip) : vm_(vm), ip_(ip) {
    if (ip->c & 1) {
      uint32_t li = ip->c >> 1;
      shape_ = vm.prog.stored_shapes[li].get();
      cursor_ = vm.reader(li).scan();
    } else {
      list_ = args[0].l;
      shape_ = &list_->shape();
    }
  }
  const rt::ListShape& shape() const { return *shape_; }
  const rt::Cell* next() {
    const rt::Cell* row = advance();
    if (row) spend_work(vm_, ip_, 0, 1);
    return row;
  }

 private:
  const rt::Cell* advance() {
    if (cursor_) {
      if (!cursor_->valid()) return nullptr;
      const rt::Cell* row = cursor_->row();
      if (started_) {
        cursor_->next();
        if (!cursor_->valid()) return nullptr;
        row = cursor_->row();
      }
      started_ = true;
      return row;
    }
    if (list_->shape().sequence) return pos_ < list_->count() ? list_->row(pos_++, &scratch_) : nullptr;
    return list_->walk_next(walk_, nullptr, 0, false, 0, 0);
  }

  VM& vm_;
  const Instr* ip_;
  rt::EventList* list_ = nullptr;
  const rt::ListShape* shape_ = nullptr;
  std::unique_ptr<rt::Cursor> cursor_;
  rt::EventList::Walk walk_;
  int64_t pos_ = 0;
  rt::Cell scratch_ = 0;  // a narrow list's row (EventList::row)
  bool started_ = false;
};

}  // namespace

// min and max of two nums, for min(x, y) and max(x, y) and, folded over the items, for a list's
// min() and max(): a NaN wins, so that neither ever hides a NaN, and -0.0 orders below 0.0
// (IEEE 754-2019 minimum/maximum), so the result never depends on the order of the values.
double num_min_max(double x, double y, bool want_min) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == y) return std::signbit(x) == want_min ? x : y;
  return want_min ? (y < x ? y : x) : (y > x ? y : x);
}

namespace {

std::string cell_text(const rt::Cell c, rt::ColType t) {
  switch (t) {
    case rt::ColType::Int: return numtext::format_int(static_cast<int64_t>(c));
    case rt::ColType::Num: return numtext::format_num(std::bit_cast<double>(c));
    case rt::ColType::Bool: return c ? "true" : "false";
    case rt::ColType::Text: return text::quote(reinterpret_cast<const rt::Text*>(c)->view());
  }
  return "";
}

// A cell as print shows it; an enum column's cell (an index) as its member's name.
static std::string column_text(rt::Cell c, rt::ColType t, const std::vector<std::string>& members) {
  if (!members.empty() && t == rt::ColType::Int && c < members.size()) return members[c];
  return cell_text(c, t);
}

std::string list_text(VM& vm, const Slot* args, const Instr* ip, const std::vector<std::string>& names,
                      const std::vector<std::vector<std::string>>& members) {
  RowWalker walk(vm, args, ip);
  const rt::ListShape& shape = walk.shape();
  static const std::vector<std::string> none;
  auto members_of = [&](uint32_t i) -> const std::vector<std::string>& { return i < members.size() ? members[i] : none; };
  std::string out = "[";
  bool first = true;
  while (const rt::Cell* row = walk.next()) {
    if (!first) out += ", ";
    first = false;
    if (names.size() == 1 && names[0] == "value") {
      out += column_text(row[0], shape.cols[0], members_of(0));
      continue;
    }
    out += "{ ";
    for (uint32_t i = 0; i < shape.width(); ++i) {
      if (i) out += ", ";
      out += names[i] + ": " + column_text(row[i], shape.cols[i], members_of(i));
    }
    out += " }";
    if (out.size() > rt::kMaxTextBytes) fault(ip, "text too long");
  }
  spend_work(vm, ip, out.size());  // the rows were spent by the walk
  return out + "]";
}

// The row returned by first()/last(): written over the arguments.
void row_result(VM& vm, Slot* a, const rt::Cell* row, const rt::ListShape& shape) {
  uint32_t i = 0;
  try {
    for (; i < shape.width(); ++i) {
      if (shape.cols[i] == rt::ColType::Text) a[i].t = load_text_cell(vm, row[i]);
      else a[i].u = row[i];
    }
  } catch (...) {  // the call area owns nothing: let go of the texts already copied
    for (uint32_t j = 0; j < i; ++j)
      if (shape.cols[j] == rt::ColType::Text) {
        rt::text_release(a[j].t);
        a[j].u = 0;
      }
    throw;
  }
}

void aggregate(VM& vm, Slot* a, const Instr* ip, Builtin b, uint32_t nargs) {
  RowWalker walk(vm, a, ip);
  const rt::ListShape& shape = walk.shape();
  uint32_t col = 0;
  if (nargs >= 1 && (ip->c & 1 ? nargs == 1 : nargs == 2)) col = static_cast<uint32_t>(a[nargs - 1].i);
  rt::ColType t = shape.cols[col];
  int64_t isum = 0;
  double nsum = 0;
  // the best cell so far, by value: a row the walker hands out lives only until the next one
  // (a narrow list's row is the walker's own scratch cell)
  bool have_best = false;
  rt::Cell best = 0;
  double nbest = 0;
  int64_t count = 0;
  while (const rt::Cell* row = walk.next()) {
    ++count;
    rt::Cell c = row[col];
    if (b != Builtin::LSum && t == rt::ColType::Num) {  // the two-argument rule, folded
      double v = std::bit_cast<double>(c);
      nbest = have_best ? num_min_max(nbest, v, b == Builtin::LMin) : v;
      have_best = true;
      continue;
    }
    if (b == Builtin::LSum) {
      if (t == rt::ColType::Int) {
        if (__builtin_add_overflow(isum, static_cast<int64_t>(c), &isum)) fault(ip, "integer overflow in sum");
      } else {
        nsum += std::bit_cast<double>(c);
      }
      continue;
    }
    if (!have_best) {
      have_best = true;
      best = c;
      continue;
    }
    rt::Cell o = best;
    bool less, greater;
    if (t == rt::ColType::Int) {
      less = static_cast<int64_t>(c) < static_cast<int64_t>(o);
      greater = static_cast<int64_t>(c) > static_cast<int64_t>(o);
    } else {
      int order = rt::text_compare(reinterpret_cast<rt::Text*>(c), reinterpret_cast<rt::Text*>(o));
      less = order < 0;
      greater = order > 0;
    }
    if ((b == Builtin::LMin && less) || (b == Builtin::LMax && greater)) best = c;
  }
  if (b == Builtin::LSum) {
    if (t == rt::ColType::Int) a[0].i = isum;
    else a[0].n = nsum;
    return;
  }
  if (!have_best) fault(ip, std::string(b == Builtin::LMin ? "min" : "max") + " of an empty list");
  if (t == rt::ColType::Text) a[0].t = load_text_cell(vm, best);
  else if (t == rt::ColType::Num) a[0].n = nbest;
  else a[0].u = best;
}

// Runs builtin b; its WORK (frontend/builtins.def) when that is `first` or `second` is spent
// by call_builtin, before.
void run_builtin(VM& vm, Slot* a, const Instr* ip, Builtin b) {
  uint32_t nargs = ip->b;
  try {
    switch (b) {
      case Builtin::Print:
      case Builtin::Write:
        vm.output.append(sv(a[0]));
        if (b == Builtin::Print) vm.output += '\n';
        if (vm.output.size() > kOutputFlushBytes ||
            (vm.options.flush_lines && (b == Builtin::Print || sv(a[0]).find('\n') != std::string_view::npos)))
          vm.flush_output();
        a[0].u = 0;
        return;
      case Builtin::Input: {
        std::string in = vm.options.read_input ? vm.options.read_input() : std::string();
        spend_work(vm, ip, in.size());
        if (auto err = text::utf8_check(in)) fault(ip, "input is not valid UTF-8: " + text::utf8_error_message(in));
        a[0].t = make_text(ip, in);
        return;
      }
      case Builtin::Sqrt: a[0].n = math::sqrt(a[0].n); return;
      case Builtin::Floor: a[0].n = math::floor(a[0].n); return;
      case Builtin::Ceil: a[0].n = math::ceil(a[0].n); return;
      case Builtin::Round: a[0].n = math::round(a[0].n); return;
      case Builtin::Trunc: a[0].n = math::trunc(a[0].n); return;
      case Builtin::Exp: a[0].n = math::exp(a[0].n); return;
      case Builtin::Log: a[0].n = math::log(a[0].n); return;
      case Builtin::Log2: a[0].n = math::log2(a[0].n); return;
      case Builtin::Log10: a[0].n = math::log10(a[0].n); return;
      case Builtin::Sin: a[0].n = math::sin(a[0].n); return;
      case Builtin::Cos: a[0].n = math::cos(a[0].n); return;
      case Builtin::Tan: a[0].n = math::tan(a[0].n); return;
      case Builtin::Asin: a[0].n = math::asin(a[0].n); return;
      case Builtin::Acos: a[0].n = math::acos(a[0].n); return;
      case Builtin::Atan: a[0].n = math::atan(a[0].n); return;
      case Builtin::Cbrt: a[0].n = math::cbrt(a[0].n); return;
      case Builtin::Pow: a[0].n = math::pow(a[0].n, a[1].n); a[1].u = 0; return;
      case Builtin::Atan2: a[0].n = math::atan2(a[0].n, a[1].n); a[1].u = 0; return;
      case Builtin::Hypot: a[0].n = math::hypot(a[0].n, a[1].n); a[1].u = 0; return;
      case Builtin::IsNan: a[0].i = a[0].n != a[0].n; return;
      case Builtin::Abs:
        if (ip->c == static_cast<uint32_t>(TypeKind::Num)) {
          a[0].n = math::abs(a[0].n);
        } else {
          if (a[0].i == INT64_MIN) fault(ip, "integer overflow: abs(-9223372036854775808) does not fit in 64 bits");
          a[0].i = a[0].i < 0 ? -a[0].i : a[0].i;
        }
        return;
      case Builtin::Min:
      case Builtin::Max: {
        bool want_min = b == Builtin::Min;
        if (ip->c == static_cast<uint32_t>(TypeKind::Text)) {
          spend_work(vm, ip, std::min(bytes_of(a[0]), bytes_of(a[1])));  // compared up to the shorter
          int c = rt::text_compare(a[0].t, a[1].t);
          rt::Text* r = (want_min ? c <= 0 : c >= 0) ? a[0].t : a[1].t;
          rt::text_retain(r);
          a[0].t = r;
        } else if (ip->c == static_cast<uint32_t>(TypeKind::Num)) {
          a[0].n = num_min_max(a[0].n, a[1].n, want_min);
        } else {
          a[0].i = want_min ? std::min(a[0].i, a[1].i) : std::max(a[0].i, a[1].i);
        }
        a[1].u = 0;
        return;
      }
      case Builtin::Repeat: {
        int64_t n = a[nargs - 1].i;
        if (n < 0) fault(ip, "repeat: count " + std::to_string(n) + " is negative");
        if (n > rt::kMaxListRows) list_too_long(ip);  // the one limit of every event list
        spend_work(vm, ip, 0, static_cast<uint64_t>(n));
        auto* l = new rt::EventList(vm.prog.shapes[ip->c].get());
        try {
          l->reserve(n);  // charged whole before any row is written
          std::vector<rt::Cell> row(nargs - 1);
          for (uint32_t i = 0; i + 1 < nargs; ++i) row[i] = a[i].u;
          l->push_copies(row.data(), n);
        } catch (...) {
          rt::list_release(l);
          throw;
        }
        for (uint32_t i = 0; i < nargs; ++i) a[i].u = 0;
        a[0].l = l;
        return;
      }
      case Builtin::Join:  // join(xs, sep): the event list comes first, as for xs.join(sep)
      case Builtin::LJoin: {
        // an event list comes as the first argument; a stored list is named by C instead
        uint32_t first_arg = ip->c & 1 ? 0 : 1;
        if (!(ip->c & 1) && a[0].l->shape().sequence && !a[0].l->narrow()) {
          // a sequence's texts in place: measured, then copied (no list of their views)
          const rt::EventList* l = a[0].l;
          int64_t n = l->count();
          std::string_view separator = sv(a[1]);
          uint64_t length = n > 0 ? separator.size() * static_cast<uint64_t>(n - 1) : 0;
          for (int64_t i = 0; i < n; ++i) length += reinterpret_cast<const rt::Text*>(l->at(i)[0])->len;
          if (length > rt::kMaxTextBytes)
            fault(ip, "text too long (" + std::to_string(length) + " bytes; the limit is " + limits::kTextBytesText + ")");
          spend_work(vm, ip, length, static_cast<uint64_t>(n));
          rt::Text* r = rt::text_alloc(static_cast<uint32_t>(length), static_cast<uint32_t>(length));
          char* out = r->bytes;
          for (int64_t i = 0; i < n; ++i) {
            if (i > 0) {
              if (separator.size() == 1) *out++ = separator[0];
              else out = copy_bytes(out, separator.data(), separator.size());
            }
            const rt::Text* t = reinterpret_cast<const rt::Text*>(l->at(i)[0]);
            out = copy_bytes(out, t->bytes, t->len);
          }
          for (uint32_t i = 0; i < nargs; ++i) a[i].u = 0;
          a[0].t = r;
          return;
        }
        RowWalker walk(vm, a, ip);
        std::vector<std::string_view> parts;
        uint64_t length = 0;
        while (const rt::Cell* row = walk.next()) {
          parts.push_back(reinterpret_cast<const rt::Text*>(row[0])->view());
          length += parts.back().size();
        }
        std::string_view separator = sv(a[first_arg]);
        if (!parts.empty()) length += separator.size() * (parts.size() - 1);
        if (length > rt::kMaxTextBytes)
          fault(ip, "text too long (" + std::to_string(length) + " bytes; the limit is " + limits::kTextBytesText + ")");
        spend_work(vm, ip, length);  // the rows were spent by the walk
        rt::Text* r = rt::text_alloc(static_cast<uint32_t>(length), static_cast<uint32_t>(length));  // joined in place
        char* out = r->bytes;
        for (size_t i = 0; i < parts.size(); ++i) {
          if (i > 0 && !separator.empty()) out = std::copy(separator.begin(), separator.end(), out);
          if (!parts[i].empty()) out = std::copy(parts[i].begin(), parts[i].end(), out);
        }
        for (uint32_t i = 0; i < nargs; ++i) a[i].u = 0;
        a[0].t = r;
        return;
      }
      case Builtin::ParseInt: {
        int64_t v;
        bool out_of_range;
        if (!numtext::parse_int(sv(a[0]), v, &out_of_range))
          fault(ip, "parse_int: \"" + std::string(sv(a[0]).substr(0, 60)) + "\"" +
                        (out_of_range ? " is out of range (an int is -9223372036854775808 .. 9223372036854775807)"
                                      : " is not an integer"));
        a[0].i = v;
        return;
      }
      case Builtin::ParseNum: {
        double v;
        bool out_of_range;
        if (!numtext::parse_num(sv(a[0]), v, &out_of_range))
          fault(ip, "parse_num: \"" + std::string(sv(a[0]).substr(0, 60)) + "\"" +
                        (out_of_range ? " is out of range (beyond about 1.8e308)" : " is not a number"));
        a[0].n = v;
        return;
      }
      case Builtin::Fixed: {
        int64_t d = a[1].i;
        if (d < 0 || d > 30) fault(ip, "fixed: " + std::to_string(d) + " decimals is outside 0..30");
        a[1].u = 0;
        a[0].t = make_text(ip, numtext::format_fixed(a[0].n, static_cast<int>(d)));
        return;
      }
      case Builtin::RandNext: a[0].i = static_cast<int64_t>(mix(a[0].u)); return;
      case Builtin::RandInt: {
        int64_t lo = a[1].i, hi = a[2].i;
        if (hi <= lo) fault(ip, "rand_int: empty range " + std::to_string(lo) + " .. " + std::to_string(hi));
        uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
        uint64_t r = static_cast<uint64_t>((static_cast<unsigned __int128>(mix(a[0].u)) * range) >> 64);
        a[0].i = static_cast<int64_t>(static_cast<uint64_t>(lo) + r);
        a[1].u = a[2].u = 0;
        return;
      }
      case Builtin::RandNum: a[0].n = static_cast<double>(mix(a[0].u) >> 11) * 0x1.0p-53; return;
      case Builtin::Char:
        if (a[0].i >= 0 && a[0].i < 0x80) {  // one ASCII byte: no std::string on the way
          char c = static_cast<char>(a[0].i);
          a[0].t = ascii_text(ip, std::string_view(&c, 1));
          return;
        }
        a[0].t = make_text(ip, text::from_code_point(a[0].i));
        return;
      case Builtin::Zpad: {
        int64_t w = a[1].i;
        if (w < 0 || w > numtext::kMaxWidth) fault(ip, "zpad: width " + std::to_string(w) + " is outside 0..100");
        a[1].u = 0;
        a[0].t = make_text(ip, numtext::format_int_padded(a[0].i, static_cast<int>(w)));
        return;
      }
      case Builtin::Quote: {
        spend_work(vm, ip, bytes_of(a[0]));
        std::string r = text::quote(sv(a[0]));
        spend_work(vm, ip, r.size());
        a[0].t = make_text(ip, r);
        return;
      }
      case Builtin::ToText: {
        std::string r = list_text(vm, a, ip, vm.prog.shape_columns[ip->c >> 1], vm.prog.shape_members[ip->c >> 1]);
        a[0].t = make_text(ip, r);
        return;
      }
      // ---- text methods ----
      // at, slice, len and code take O(1) on an all-ASCII text (runtime/text.h); anything out of
      // range goes the general way, which gives the error
      case Builtin::TLen: {
        rt::Text* t = a[0].t;
        if (rt::text_is_ascii(t)) {
          a[0].i = t->len;
          return;
        }
        spend_work(vm, ip, t->len);
        a[0].i = text::length(t->view());
        return;
      }
      case Builtin::TByteLen: a[0].i = a[0].t->len; return;
      case Builtin::TSlice: {
        rt::Text* t = a[0].t;
        int64_t from = a[1].i, to = a[2].i;
        if (from >= 0 && from <= to && to <= int64_t{t->len} && rt::text_is_ascii(t)) {
          a[1].u = a[2].u = 0;
          spend_work(vm, ip, static_cast<uint64_t>(to - from));
          a[0].t = ascii_text(ip, t->view().substr(static_cast<size_t>(from), static_cast<size_t>(to - from)));
          return;
        }
        spend_work(vm, ip, bytes_of(a[0]));
        std::string r = text::slice(sv(a[0]), a[1].i, a[2].i);
        spend_work(vm, ip, r.size());
        a[1].u = a[2].u = 0;
        a[0].t = make_text(ip, r);
        return;
      }
      case Builtin::TFind: { int64_t r = text::find(sv(a[0]), sv(a[1])); a[1].u = 0; a[0].i = r; return; }
      case Builtin::TContains: { bool r = text::contains(sv(a[0]), sv(a[1])); a[1].u = 0; a[0].i = r; return; }
      case Builtin::TStartsWith: { bool r = text::starts_with(sv(a[0]), sv(a[1])); a[1].u = 0; a[0].i = r; return; }
      case Builtin::TEndsWith: { bool r = text::ends_with(sv(a[0]), sv(a[1])); a[1].u = 0; a[0].i = r; return; }
      case Builtin::TSplit: {
        std::string_view t = sv(a[0]), separator = sv(a[1]);
        rt::EventList* l = text_pieces(vm, ip, piece_flags(a[0].t), t.size(), [&](auto&& each) { text::split_each(t, separator, each); });
        a[1].u = 0;
        a[0].l = l;
        return;
      }
      case Builtin::TWords: {
        std::string_view t = sv(a[0]);
        a[0].l = text_pieces(vm, ip, piece_flags(a[0].t), t.size(), [&](auto&& each) { text::split_whitespace_each(t, each); });
        return;
      }
      case Builtin::TLines: {
        std::string_view t = sv(a[0]);
        a[0].l = text_pieces(vm, ip, piece_flags(a[0].t), t.size(), [&](auto&& each) {
          text::Pieces lines(t, text::Pieces::Lines);
          for (std::string_view line; lines.next(line);) each(line);
        });
        return;
      }
      case Builtin::TReplace: {
        spend_work(vm, ip, bytes_of(a[0]));
        std::string r = text::replace(sv(a[0]), sv(a[1]), sv(a[2]));
        spend_work(vm, ip, r.size());
        a[1].u = a[2].u = 0;
        a[0].t = make_text(ip, r);
        return;
      }
      case Builtin::TUpper:
      case Builtin::TLower:
      case Builtin::TTrim:
      case Builtin::TReverse: {
        spend_work(vm, ip, bytes_of(a[0]));
        std::string_view t = sv(a[0]);
        std::string r = b == Builtin::TUpper ? text::upper(t)
                        : b == Builtin::TLower ? text::lower(t)
                        : b == Builtin::TTrim  ? text::trim(t)
                                               : text::reverse(t);
        spend_work(vm, ip, r.size());
        a[0].t = make_text(ip, r);
        return;
      }
      case Builtin::TRepeat: {
        if (a[1].i > 0 && static_cast<uint64_t>(a[1].i) <= rt::kMaxTextBytes)  // the text limit is text::repeat's to report
          need_memory(ip, 2 * sizeof(rt::Text) + uint64_t{a[0].t->len} * static_cast<uint64_t>(a[1].i));
        if (a[1].i > 0 && static_cast<uint64_t>(a[1].i) <= rt::kMaxTextBytes) {  // the bytes it is to make (both < 2^31)
          uint64_t made = uint64_t{a[0].t->len} * static_cast<uint64_t>(a[1].i);
          if (made <= rt::kMaxTextBytes) spend_work(vm, ip, made);
        }
        std::string r = text::repeat(sv(a[0]), a[1].i);
        a[1].u = 0;
        a[0].t = make_text(ip, r);
        return;
      }
      case Builtin::TPadLeft:
      case Builtin::TPadRight: {
        std::string r = b == Builtin::TPadLeft ? text::pad_left(sv(a[0]), a[1].i) : text::pad_right(sv(a[0]), a[1].i);
        spend_work(vm, ip, r.size());
        a[1].u = 0;
        a[0].t = make_text(ip, r);
        return;
      }
      case Builtin::TCode:
        if (a[1].i >= 0 && a[1].i < int64_t{a[0].t->len} && rt::text_is_ascii(a[0].t)) {
          a[0].i = static_cast<unsigned char>(a[0].t->bytes[a[1].i]);
          a[1].u = 0;
          return;
        }
        { spend_work(vm, ip, bytes_of(a[0])); int64_t r = text::code_point_at(sv(a[0]), a[1].i); a[1].u = 0; a[0].i = r; return; }
      case Builtin::TAt:
        if (a[1].i >= 0 && a[1].i < int64_t{a[0].t->len} && rt::text_is_ascii(a[0].t)) {
          rt::Text* t = a[0].t;
          size_t i = static_cast<size_t>(a[1].i);
          a[1].u = 0;
          a[0].t = ascii_text(ip, t->view().substr(i, 1));
          return;
        }
        { spend_work(vm, ip, bytes_of(a[0])); std::string r = text::char_at(sv(a[0]), a[1].i); a[1].u = 0; a[0].t = make_text(ip, r); return; }
      // ---- list methods ----
      case Builtin::LFirst:
      case Builtin::LLast: {
        const rt::Cell* row = nullptr;
        rt::Cell scratch = 0;  // a narrow list's row (EventList::row)
        const rt::ListShape* shape;
        if (ip->c & 1) {
          uint32_t li = ip->c >> 1;
          shape = vm.prog.stored_shapes[li].get();
          row = b == Builtin::LFirst ? vm.reader(li).first() : vm.reader(li).last();
        } else {
          rt::EventList* l = a[0].l;
          shape = &l->shape();
          if (l->count() > 0) {
            if (shape->sequence) {
              row = l->row(b == Builtin::LFirst ? 0 : l->count() - 1, &scratch);
            } else {
              rt::EventList::Walk w;
              for (const rt::Cell* r = l->walk_next(w, nullptr, 0, false, 0, 0); r; r = l->walk_next(w, nullptr, 0, false, 0, 0)) {
                spend_work(vm, ip, 0, 1);
                row = r;
                if (b == Builtin::LFirst) break;
              }
            }
          }
        }
        if (!row) fault(ip, std::string(b == Builtin::LFirst ? "first" : "last") + " of an empty list");
        row_result(vm, a, row, *shape);
        return;
      }
      case Builtin::LSort:
      case Builtin::LSortBy: {  // n items, each compared about log2(n) times
        uint64_t n = static_cast<uint64_t>(a[0].l->count());
        spend_work(vm, ip, 0, n * static_cast<uint64_t>(std::bit_width(n)));
        // sort_by's arguments after the list are its keys, each (field << 1) | descending
        std::vector<rt::SortKey> keys;
        if (b == Builtin::LSort) keys.push_back({0, false});
        for (uint32_t i = 1; b == Builtin::LSortBy && i < nargs; ++i)
          keys.push_back({static_cast<uint32_t>(a[i].i >> 1), (a[i].i & 1) != 0});
        a[0].l->sort_by(keys);
        for (uint32_t i = 0; i < nargs; ++i) a[i].u = 0;
        return;
      }
      case Builtin::LSum:
      case Builtin::LMin:
      case Builtin::LMax: {
        aggregate(vm, a, ip, b, nargs);
        for (uint32_t i = 1; i < nargs; ++i) a[i].u = 0;
        return;
      }
      case Builtin::LClear:
      case Builtin::LReverse:
        spend_work(vm, ip, 0, static_cast<uint64_t>(a[0].l->count()));
        if (b == Builtin::LClear) a[0].l->clear();
        else a[0].l->reverse();
        a[0].u = 0;
        return;
      case Builtin::LTake:
      case Builtin::LSlice: {
        // xs.take(n): the first n items (all of them when there are fewer); xs.slice(lo, hi): the
        // items at lo .. hi-1, a runtime error unless 0 <= lo <= hi <= count. A new list.
        const rt::EventList* src = a[0].l;
        const int64_t count = src->count();
        int64_t lo = 0, hi = 0;
        if (b == Builtin::LTake) {
          if (a[1].i < 0) fault(ip, "take: count " + std::to_string(a[1].i) + " is negative");
          hi = std::min(a[1].i, count);
        } else {
          lo = a[1].i;
          hi = a[2].i;
          if (lo < 0 || hi < lo || hi > count)
            fault(ip, "slice(" + std::to_string(lo) + ", " + std::to_string(hi) + ") of a list of " + std::to_string(count) +
                          " items: needs 0 <= lo <= hi <= " + std::to_string(count));
        }
        spend_work(vm, ip, 0, static_cast<uint64_t>(hi - lo));
        auto* l = new rt::EventList(&src->shape());
        try {
          l->reserve(hi - lo);  // charged whole before any row is written
          rt::Cell scratch = 0;
          for (int64_t i = lo; i < hi; ++i) l->push(src->row(i, &scratch));  // texts retained
        } catch (...) {
          rt::list_release(l);
          throw;
        }
        for (uint32_t i = 0; i < nargs; ++i) a[i].u = 0;
        a[0].l = l;
        return;
      }
      case Builtin::LContains: {
        uint32_t first_arg = ip->c & 1 ? 0 : 1;
        RowWalker walk(vm, a, ip);
        rt::ColType t = walk.shape().cols[0];
        Slot v = a[first_arg];
        bool found = false;
        while (const rt::Cell* row = walk.next()) {
          rt::Cell c = row[0];
          if (t == rt::ColType::Text) found = rt::text_equal(reinterpret_cast<rt::Text*>(c), v.t);
          else if (t == rt::ColType::Num) found = std::bit_cast<double>(c) == v.n;
          else found = c == v.u;
          if (found) break;
        }
        for (uint32_t i = 0; i < nargs; ++i) a[i].u = 0;
        a[0].i = found;
        return;
      }
      default: fault(ip, std::string("standard function '") + builtin_name(b) + "' is not available here");
    }
  } catch (text::TextError& e) {
    fault(ip, e.what());
  } catch (const std::bad_alloc& e) {
    out_of_memory(ip, e);
  }
}

}  // namespace

// The WORK column of b's row (frontend/builtins.def): the bytes of the first or the second
// argument spent here, before the function reads them; `none` checked to spend nothing.
void call_builtin(VM& vm, Slot* a, const Instr* ip) {
  Builtin b = static_cast<Builtin>(ip->imm);
  BuiltinWork work = builtin_info(b).work;
  if (work == BuiltinWork::First) spend_work(vm, ip, bytes_of(a[0]));
  else if (work == BuiltinWork::Second) spend_work(vm, ip, bytes_of(a[1]));
  [[maybe_unused]] const int64_t steps_before = vm.core.steps_left;
  run_builtin(vm, a, ip, b);
  PURE_ASSERT(work != BuiltinWork::None || vm.core.steps_left == steps_before);
}

}  // namespace pure::vm
