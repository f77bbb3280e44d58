// runtime/event_list.h — event lists: the transient lists of one event, query or main.
// A sequence is a flat array of rows. A keyed list whose key is one small, dense int is an array
// indexed by key; any other keyed list (sparse ints, text or composite keys) is an ordered tree.
// Depends on runtime/store.h (Cell, ColType) and runtime/text.h.
//
// Text cells own a VM reference (or borrow a store text, whose count the VM never changes).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

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
  int compare_keys(const Cell* a, const Cell* b, uint32_t n) const;  // first n key cells
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

  // Sequences: rows by position.
  const Cell* at(int64_t pos) const { return &cells_[static_cast<size_t>(pos) * width_]; }
  Cell* at_mut(int64_t pos) { return &cells_[static_cast<size_t>(pos) * width_]; }
  void push(const Cell* row);            // retains texts
  void pop(Cell* out);                   // moves the row's references to out
  void set_cell(Cell* where, uint32_t col, Cell value);  // retains new, releases old text

  // Keyed lists: a row holds its key cells first.
  const Cell* find(const Cell* key) const;
  Cell* find_mut(const Cell* key);
  Cell* put(const Cell* key, const Cell* fields);  // insert or replace; retains texts
  Cell* ensure(const Cell* key);                   // insert with defaults if missing
  bool remove(const Cell* key);

  struct KeyLess {
    const ListShape* shape;
    bool operator()(const std::vector<Cell>& a, const std::vector<Cell>& b) const {
      return shape->compare_keys(a.data(), b.data(), shape->key_count) < 0;
    }
  };
  using Tree = std::map<std::vector<Cell>, std::vector<Cell>, KeyLess>;

  // Ordered walk over keyed lists (all rows, rows with a key prefix, or a range of the first
  // key). Start with a default Walk; walk_next returns nullptr when done.
  struct Walk {
    int64_t dense_index = -1;
    Tree::const_iterator it;
    bool started = false;
  };
  const Cell* walk_next(Walk& w, const Cell* prefix, uint32_t prefix_len, bool range, int64_t lo, int64_t hi) const;

  // Sorting and reversing sequences (stable; texts by code point).
  void sort_by(uint32_t col);
  void reverse();
  void clear();

 private:
  const ListShape* shape_;
  uint32_t width_;
  int64_t count_ = 0;
  uint64_t shape_version_ = 0;
  bool dense_ = true;                 // keyed: array by key while keys stay small and dense
  std::vector<Cell> cells_;           // sequence rows, or dense rows indexed by key
  std::vector<uint8_t> present_;      // dense: which keys exist
  Tree tree_;

  bool dense_fits(int64_t key) const;
  void go_sparse();
  void retain_row(const Cell* row) const;
  void release_row(const Cell* row) const;
};

void list_retain(EventList* l);
void list_release(EventList* l);

}  // namespace pure::rt
