// runtime/event_list.h — event lists: the transient lists of one event, query or main.
// A sequence is a flat array of rows. A keyed list whose key is one small, dense int is an array
// indexed by key; any other keyed list (sparse ints, text or composite keys) is an ordered tree,
// which gives the key order, with a hash index beside it from key to row, which finds a row with
// one hash and one key comparison (runtime/key_index.h).
// Depends on runtime/store.h (Cell, ColType), runtime/text.h and runtime/key_index.h.
//
// Text cells own a VM reference (or borrow a store text, whose count the VM never changes).
//
// Narrow sequences. A sequence whose rows are one bool (`seq bool`, or a `seq` of items with one
// bool field) keeps one byte per row (0 or 1) instead of an 8-byte Cell: `repeat(false, n)` then
// fills n bytes, and a loop over it touches an eighth of the memory (bench/kernels/sieve.pure).
// A bool always fits in a byte, so such a list never widens; which lists are narrow follows from
// the shape alone (ListShape::narrow()), never from the values, and what a program or a host
// sees does not change (only the memory the list charges: one byte a row). Only bools are
// narrowed, not ints or nums, which would have to widen on a value that does not fit:
// docs/architecture.md, "Narrow sequences", says why. A narrow list has no Cell array: at() and
// at_mut() must not be called on it (asserted); readers use get(), read_row() or row(), writers
// set(), set_value() and push(). It is never "plain" (NativeLayout): native code that reads cells
// in place skips it, and jit-llvm/ reads and writes its bytes through NativeLayout::narrow and
// bytes instead.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "base/assert.h"
#include "runtime/key_index.h"
#include "runtime/store.h"

namespace pure::rt {

// Most rows an event list may hold; the VM refuses to grow past it with a runtime error.
inline constexpr int64_t kMaxListRows = limits::kListRows;

// The shape shared by all lists of one type.
struct ListShape {
  bool sequence = false;
  uint32_t key_count = 0;
  std::vector<ColType> cols;      // row columns, keys first
  std::vector<Cell> defaults;     // one per non-key column (texts: a Text* the shape keeps alive)
  bool all_defaults = false;
  bool any_text = false;          // some column is text (set by whoever fills cols; see finish())
  uint32_t width() const { return static_cast<uint32_t>(cols.size()); }
  bool has_text() const;
  void finish() { any_text = has_text(); }
  // A sequence of one bool column: its rows are kept as one byte each (see the top of the file).
  bool narrow() const { return sequence && cols.size() == 1 && cols[0] == ColType::Bool; }
  int compare_keys(const Cell* a, const Cell* b, uint32_t n) const;  // first n key cells
  int compare_cell(uint32_t col, Cell a, Cell b) const;              // two cells of column col
};

// One key of EventList::sort_by: a column, and whether it sorts descending.
struct SortKey {
  uint32_t col = 0;
  bool descending = false;
};

class EventList {
 public:
  explicit EventList(const ListShape* shape);
  ~EventList();
  EventList(const EventList&) = delete;
  EventList& operator=(const EventList&) = delete;

  uint32_t rc = 1;  // references from VM slots (owner thread only)
  const ListShape& shape() const { return *shape_; }
  int64_t count() const { return count_; }
  uint64_t shape_version() const { return shape_version_; }

  // Sequences: rows by position. at() and at_mut() point into the Cell array, which a narrow list
  // does not have; get(), read_row(), row() and set() serve every sequence.
  bool narrow() const { return narrow_; }
  const Cell* at(int64_t pos) const {
    PURE_ASSERT(!narrow_);
    return &cells_[static_cast<size_t>(pos) * width_];
  }
  Cell* at_mut(int64_t pos) {
    PURE_ASSERT(!narrow_);
    return &cells_[static_cast<size_t>(pos) * width_];
  }
  // The cell of column col in row pos (not retained).
  Cell get(int64_t pos, uint32_t col) const {
    if (narrow_) return bytes_[static_cast<size_t>(pos)];
    return cells_[static_cast<size_t>(pos) * width_ + col];
  }
  // Row pos: in place, or (narrow) copied into *scratch, valid until scratch is written again.
  const Cell* row(int64_t pos, Cell* scratch) const {
    if (!narrow_) return at(pos);
    *scratch = bytes_[static_cast<size_t>(pos)];
    return scratch;
  }
  void read_row(int64_t pos, Cell* out) const;  // copies the row's cells (texts not retained)
  // Sets one cell of row pos: retains a new text and releases the old, as set_cell does. A bool
  // is 0 or 1 in every slot (asserted); a narrow list stores value != 0 all the same.
  void set(int64_t pos, uint32_t col, Cell value) {
    if (narrow_) {
      PURE_ASSERT(value <= 1);
      bytes_[static_cast<size_t>(pos)] = value != 0;
      return;
    }
    set_cell(at_mut(pos), col, value);
  }
  // set() of a column that is not text (the interpreter's SEQ_SET): no reference to count.
  void set_value(int64_t pos, uint32_t col, Cell value) {
    PURE_ASSERT(shape_->cols[col] != ColType::Text);
    if (narrow_) {
      PURE_ASSERT(value <= 1);
      bytes_[static_cast<size_t>(pos)] = value != 0;
      return;
    }
    cells_[static_cast<size_t>(pos) * width_ + col] = value;
  }
  // Retains texts; grows by doubling (may throw, see below). Inline for the common one-cell row
  // with room (an int, or a text whose count goes up).
  void push(const Cell* row) {
    if (width_ == 1 && !narrow_ && push_fits()) [[likely]] {
      if (text1_) text_retain(reinterpret_cast<Text*>(row[0]));
      cells_.push_back(row[0]);
      ++count_;
      ++shape_version_;
      return;
    }
    push_general(row);
  }
  // A push of a one-cell row that takes the cell's reference (a new text: no count to add), into
  // room made before (push_fits(), e.g. by reserve()).
  void push_taken(Cell c) {
    PURE_ASSERT(width_ == 1 && !narrow_ && push_fits());
    cells_.push_back(c);
    ++count_;
    ++shape_version_;
  }
  void push_copies(const Cell* row, int64_t n);  // n pushes of the same row, room made once
  bool push_fits() const { return count_ < cap_rows_; }  // push will not grow
  void reserve(int64_t rows);            // sequences: room for this many rows
  void pop(Cell* out);                   // moves the row's references to out
  void set_cell(Cell* where, uint32_t col, Cell value);  // retains new, releases old text

  // Keyed lists: a row holds its key cells first.
  const Cell* find(const Cell* key) const;
  // The VM's hot path, inline: the row with this key when it is the row found or inserted last
  // (so the read and the write of `xs[k].f += 1` find it again at once) or when the hash index
  // finds it; nullptr when the row is missing or the index cannot tell (then call find/ensure).
  // A short text key is compared with the words kept of the row found last (last_words_), so
  // that the row's key text is not read.
  Cell* find_fast(const Cell* key) const {
    if (last_) [[likely]] {
      if (last_words_.exact && text_key_) {
        const Text* t = reinterpret_cast<const Text*>(key[0]);
        if (t->len == last_words_.len && text_key_words(t->bytes, t->len) == last_words_) return const_cast<Cell*>(last_);
      } else if (same_key(last_, key)) {
        return const_cast<Cell*>(last_);
      }
    }
    return find_indexed(key);
  }
  Cell* find_indexed(const Cell* key) const;
  Cell* find_mut(const Cell* key);
  Cell* put(const Cell* key, const Cell* fields);  // insert or replace; retains texts
  Cell* ensure(const Cell* key);                   // insert with defaults if missing
  bool remove(const Cell* key);
  bool indexed() const { return indexed_; }  // a tree that still finds rows by its hash index

  // Orders tree keys; also compares a key with the leading cells of a probe, so that finding
  // or bounding needs no vector built for the probe.
  struct Probe {
    const Cell* cells;
    uint32_t n;
  };
  struct KeyLess {
    using is_transparent = void;
    const ListShape* shape;
    bool operator()(const std::vector<Cell>& a, const std::vector<Cell>& b) const {
      return shape->compare_keys(a.data(), b.data(), shape->key_count) < 0;
    }
    bool operator()(const std::vector<Cell>& a, Probe b) const { return shape->compare_keys(a.data(), b.cells, b.n) < 0; }
    bool operator()(Probe a, const std::vector<Cell>& b) const { return shape->compare_keys(a.cells, b.data(), a.n) < 0; }
  };
  using Tree = std::map<std::vector<Cell>, std::vector<Cell>, KeyLess>;

  // Ordered walk over keyed lists (all rows, rows with a key prefix, or a range of the first
  // key). Start with a default Walk; walk_next returns nullptr when done.
  struct Walk {
    int64_t dense_index = -1;
    Tree::const_iterator it;
    bool started = false;
    bool done = false;  // slice_next walking backwards: the first row was passed
    Cell cell = 0;      // slice_next of a narrow list: the row it returns (valid until the next call)
  };
  const Cell* walk_next(Walk& w, const Cell* prefix, uint32_t prefix_len, bool range, int64_t lo, int64_t hi) const;
  // The rows of a slice (runtime/store.h: a key prefix, a bound on the next key; a sequence is
  // bounded by position), forwards or backwards. Trees search once, then step; the slice's
  // prefix must stay put while the walk goes on.
  const Cell* slice_next(Walk& w, const Slice& s) const;

  // Memory: every list charges its arrays and tree entries to the thread's memory meter
  // (runtime/memory.h). Growth is charged before it happens: push, put, ensure and reserve throw
  // MemoryBudgetSpent (a std::bad_alloc) and leave the list as it was when the budget would be
  // passed. What it frees is credited.
  uint64_t charged_bytes() const { return charged_; }

  // Where native code (jit-llvm/) finds a sequence's rows: byte offsets into an EventList, and
  // whether they hold on this build (std::vector keeps its begin, end and capacity pointers, in
  // that order, as its only members). A "plain" sequence has rows of one cell that is not a text:
  // native code reads, writes and pushes those cells itself, as at(), at_mut() and push() do. A
  // narrow sequence (one byte per row) is never plain; its bytes start at `bytes` (a uint8_t*,
  // the first word of a std::vector<uint8_t>) and native code may read and write them in place
  // as get() and set() do (0 or 1; count checked as for plain lists).
  struct NativeLayout {
    bool ok = false;
    uint32_t plain = 0;      // bool
    uint32_t narrow = 0;     // bool
    uint32_t bytes = 0;      // uint8_t*: a narrow list's rows
    uint32_t count = 0;      // int64_t
    uint32_t cap_rows = 0;   // int64_t: rows held without growing
    uint32_t version = 0;    // uint64_t shape version, one more per push
    uint32_t begin = 0;      // Cell*: the rows
    uint32_t end = 0;        // Cell*: one past the last row's cell
    // Lists of texts and keyed lists (jit-common/runtime_calls.h): a sequence whose rows are one
    // text (`text1`, bool), which native code reads and pushes in place counting the references
    // as text_retain and text_release do (a Text's rc, a uint32_t at `text_rc`, and flags, a
    // uint16_t at `text_flags`: kTextStored texts are not counted; a count that reaches zero
    // goes to pure_jit_text_free); and which columns are text (`text_cols`, uint64_t, bit i for
    // column i < 64), so that native code that holds a keyed list's row reads and writes a field
    // that is not text in place.
    uint32_t text1 = 0;
    uint32_t text_cols = 0;
    uint32_t text_rc = 0;
    uint32_t text_flags = 0;
  };
  static NativeLayout native_layout();

  // Sorting and reversing sequences (stable; texts by code point).
  // A stable sort by the keys in order (the first compared first), each ascending or descending:
  // rows equal in every key keep their order. Text by bytes; a nan after every number either way.
  void sort_by(const std::vector<SortKey>& keys);
  void reverse();
  void clear();

 private:
  const ListShape* shape_;
  uint32_t width_;
  int64_t count_ = 0;
  uint64_t shape_version_ = 0;
  bool dense_ = true;                 // keyed: array by key while keys stay small and dense
  std::vector<Cell> cells_;           // sequence rows, or dense rows indexed by key
  std::vector<uint8_t> bytes_;        // a narrow sequence's rows, one byte (0 or 1) each
  std::vector<uint8_t> present_;      // dense: which keys exist
  Tree tree_;
  mutable uint64_t charged_ = 0;      // bytes this list has charged to the memory meter (index_drop)
  int64_t cap_rows_ = 0;              // sequences: rows cells_ holds without growing
  bool plain_ = false;                // a sequence of one non-text cell per row (NativeLayout)
  bool narrow_ = false;               // a sequence of one bool per row, kept in bytes_
  bool text1_ = false;                // rows of one text cell (a `seq text`, or keys of one text)
  uint64_t text_cols_ = 0;            // bit i: column i (< 64) is text (NativeLayout)
  void push_general(const Cell* row);

  // A tree also keeps a hash index from key to row (runtime/key_index.h; rows never move in a
  // std::map). A list whose probes grow too long drops its index for good (indexed_ false) and
  // searches its tree alone. Dense and sequence lists have no index (indexed_ false). The index's
  // table is charged to the memory meter with the tree (footprint()).
  mutable KeyIndex index_;
  mutable bool indexed_ = false;
  bool text_key_ = false;               // the key is one text
  mutable const Cell* last_ = nullptr;  // the row found or inserted last (tree rows only)
  mutable KeyWords last_words_;         // its key's words when found by them (else not exact)

  uint64_t footprint() const;         // what the list should have charged now
  uint64_t tree_entry_bytes() const;  // one tree entry: node, key and row arrays
  void charge(uint64_t bytes);        // before growing: may throw, then nothing changed
  void settle();                      // after any change: charge or credit the difference
  void grow_rows(size_t rows);        // sequences: capacity for at least this many rows
  bool dense_fits(int64_t key) const;
  void go_sparse();
  // What the index keeps of a key (KeyWords): a text's words, an int's value, nothing of a
  // composite key.
  KeyWords key_words(const Cell* key) const {
    if (text_key_) {
      const Text* t = reinterpret_cast<const Text*>(key[0]);
      return text_key_words(t->bytes, t->len);
    }
    if (shape_->key_count == 1 && shape_->cols[0] != ColType::Text) return int_key_words(key[0]);
    return KeyWords{};
  }
  uint64_t hash_key(const Cell* key, const KeyWords& w) const {
    if (text_key_) {
      const Text* t = reinterpret_cast<const Text*>(key[0]);
      return text_key_hash(t->bytes, t->len, w);
    }
    return hash_key(key);
  }
  uint64_t hash_key(const Cell* key) const {
    if (text_key_) {
      const Text* t = reinterpret_cast<const Text*>(key[0]);
      return text_key_hash(t->bytes, t->len);
    }
    uint64_t h = 0;
    for (uint32_t i = 0; i < shape_->key_count; ++i) {
      if (shape_->cols[i] == ColType::Text) {
        const Text* t = reinterpret_cast<const Text*>(key[i]);
        h = hash_bytes(h, t->bytes, t->len);
      } else {
        h = (h ^ key[i]) * kHashMul;
      }
      h = hash_finish(h);
    }
    return h;
  }
  bool same_key(const Cell* row, const Cell* key) const {
    if (text_key_) return texts_equal(reinterpret_cast<const Text*>(row[0]), reinterpret_cast<const Text*>(key[0]));
    for (uint32_t i = 0; i < shape_->key_count; ++i) {
      if (row[i] == key[i]) continue;  // equal ints, or the same text
      if (shape_->cols[i] != ColType::Text ||
          !texts_equal(reinterpret_cast<const Text*>(row[i]), reinterpret_cast<const Text*>(key[i])))
        return false;
    }
    return true;
  }
  Cell* tree_find(const Cell* key) const;
  Cell* tree_locate(const Cell* key, bool& inserted);
  void index_add(Cell* row);
  void index_drop() const;
  void retain_fields(const Cell* row) const;
  void release_fields(const Cell* row) const;
  void retain_row(const Cell* row) const;
  void release_row(const Cell* row) const;
};

void list_retain(EventList* l);
void list_release(EventList* l);

}  // namespace pure::rt
