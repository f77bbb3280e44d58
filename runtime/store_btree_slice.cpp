// runtime/store_btree_slice.cpp — slices of a B+tree list (store.h: Slice): a key prefix, a
// bound on the key after it, walked forwards or backwards. One descent to the slice's first (or
// last) row, then the leaf chain through the cursor's path; never a scan of the whole list.
// Reads only, like store_btree_read.cpp, whose search helpers it uses.
#include <algorithm>
#include <cstring>

#include "runtime/store_btree.h"

namespace pure::rt::store {

namespace {

// A finger over one slice: the path from the root to the current row. Forwards it moves to the
// next leaf through the nearest ancestor with a child to the right; backwards, to the left.
class SliceCursor final : public Cursor {
 public:
  SliceCursor(const ListShape& s, const TreeRoot& t, const Slice& slice)
      : shape_(s), count_(t.count), prefix_n_(slice.prefix_len), bounded_(slice.bounded),
        reverse_(slice.reverse), lo_(slice.lo), hi_(slice.hi), from_(slice.from), f_(t) {
    text_bound_ = bounded_ && !shape_.sequence && shape_.schema.key.at(prefix_n_) == ColType::Text;
    // The probe is the prefix and, when bounded, the bound next to it: kept inside the cursor
    // (one allocation per slice, the cursor), on the heap only past kInlineProbe cells.
    if (prefix_n_ + 1 > kInlineProbe) {
      probe_heap_ = std::make_unique<Cell[]>(prefix_n_ + 1);
      probe_ = probe_heap_.get();
    }
    std::copy(slice.prefix, slice.prefix + prefix_n_, probe_);
    probe_[prefix_n_] = 0;
    if (!f_.root) return;
    if (shape_.sequence) start_sequence();
    else start_keyed();
  }

  bool valid() const override { return valid_; }
  const Cell* row() const override { return f_.row(shape_); }
  int64_t position() const override { return shape_.sequence ? position_ : -1; }
  void next() override {
    if (reverse_) {
      --position_;
      valid_ = step_back() && within();
    } else {
      ++position_;
      valid_ = step_forward() && within();
    }
  }
  // Forwards, the rows of the current leaf from here on within the slice are one array.
  size_t take_run(const Cell** first, size_t max) override {
    if (reverse_) return Cursor::take_run(first, max);
    if (!valid_ || max == 0) return 0;
    const Node* leaf = f_.path[f_.height];
    const Cell* rows = leaf_rows(leaf);
    uint32_t width = shape_.row_width, i = f_.index[f_.height];
    *first = rows + static_cast<size_t>(i) * width;
    size_t n = 1, in_leaf = std::min<size_t>(max, leaf->count - i);
    while (n < in_leaf && row_within(rows + static_cast<size_t>(i + n) * width, position_ + static_cast<int64_t>(n))) ++n;
    position_ += static_cast<int64_t>(n) - 1;
    f_.index[f_.height] = i + static_cast<uint32_t>(n) - 1;
    next();
    return n;
  }

 private:
  void start_sequence() {
    int64_t from = 0, to = count_;  // positions from .. to-1
    if (bounded_) {
      from = std::max<int64_t>(lo_, 0);
      to = std::min<int64_t>(hi_, count_);
    }
    if (from_) {  // at that position, or past it in the walk's direction
      int64_t p = static_cast<int64_t>(*from_);
      if (reverse_) to = std::min(to, p + 1);
      else from = std::max(from, p);
    }
    if (from >= to) return;
    position_ = reverse_ ? to - 1 : from;
    f_.seek_position(shape_, position_);
    valid_ = true;
  }

  void start_keyed() {
    uint32_t n = prefix_n_;
    if (from_) {  // a resumed walk: at that full key or past it, then the slice's own tests
      f_.descend(shape_, from_, shape_.key_width, reverse_);  // forwards the first row >= it; backwards the one before the first > it
      valid_ = (reverse_ ? step_back() : settle_forward()) && within();
      return;
    }
    if (!reverse_) {
      if (bounded_) {
        probe_[n] = static_cast<Cell>(lo_);
        f_.descend(shape_, probe_, n + 1, false);  // the first row >= prefix + lo
      } else if (n > 0) {
        f_.descend(shape_, probe_, n, false);      // the first row >= prefix
      } else {
        f_.descend_edge(0, f_.root, false);
      }
      valid_ = settle_forward() && within();
      return;
    }
    if (bounded_) {
      probe_[n] = static_cast<Cell>(hi_);
      f_.descend(shape_, probe_, n + 1, false);  // the first row >= prefix + hi; the one before it
    } else if (n > 0) {
      f_.descend(shape_, probe_, n, true);       // the first row > prefix; the one before it
    } else {
      f_.descend_edge(0, f_.root, true);
      f_.index[f_.height] = f_.path[f_.height]->count;  // one past the last row
    }
    valid_ = step_back() && within();
  }

  // From an index that may be past its leaf's end: onto a row, or false at the list's end.
  bool settle_forward() {
    while (f_.index[f_.height] >= f_.path[f_.height]->count)
      if (!f_.next_leaf()) return false;
    return true;
  }
  bool step_forward() {
    ++f_.index[f_.height];
    return settle_forward();
  }
  bool step_back() {
    while (f_.index[f_.height] == 0)
      if (!f_.prev_leaf()) return false;
    --f_.index[f_.height];
    return true;
  }

  bool within() const { return row_within(row(), position_); }
  bool row_within(const Cell* r, int64_t position) const {
    if (shape_.sequence) return !bounded_ || (position >= lo_ && position < hi_);
    if (prefix_n_ && shape_.compare(r, probe_, prefix_n_) != 0) return false;
    if (!bounded_) return true;
    if (text_bound_) {  // store.h: a Text key column's bounds are Text* cells
      const Text* k = reinterpret_cast<const Text*>(r[prefix_n_]);
      return text_compare(k, reinterpret_cast<const Text*>(lo_)) >= 0 && text_compare(k, reinterpret_cast<const Text*>(hi_)) < 0;
    }
    int64_t k = static_cast<int64_t>(r[prefix_n_]);
    return k >= lo_ && k < hi_;
  }

  const ListShape& shape_;
  int64_t count_;
  uint32_t prefix_n_;
  bool bounded_, reverse_;
  int64_t lo_, hi_;
  bool text_bound_ = false;  // the bounded key column is a Text: lo_ and hi_ are Text* cells
  const Cell* from_;         // Slice::from: read while the cursor starts only
  bool valid_ = false;
  int64_t position_ = 0;
  static constexpr uint32_t kInlineProbe = 9;
  Cell probe_inline_[kInlineProbe];
  std::unique_ptr<Cell[]> probe_heap_;
  Cell* probe_ = probe_inline_;  // the prefix, then one cell for a bound
  Finger f_;
};

}  // namespace

std::unique_ptr<Cursor> tree_slice(const ListShape& s, const TreeRoot& t, const Slice& slice) {
  return std::make_unique<SliceCursor>(s, t, slice);
}

}  // namespace pure::rt::store
