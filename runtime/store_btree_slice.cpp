// runtime/store_btree_slice.cpp — slices of a B+tree list (store.h: Slice): a key prefix, a
// bound on the key after it, walked forwards or backwards. One descent to the slice's first (or
// last) row, then the leaf chain through the cursor's path; never a scan of the whole list.
// Reads only, like store_btree_read.cpp, whose search helpers it uses.
#include <algorithm>
#include <cstring>

#include "runtime/store_btree.h"

namespace pure::rt::store {

namespace {

// Child of an inner node where rows whose first n cells are > key can start: the number of
// separators whose first n cells are <= key.
uint32_t inner_child_upper(const ListShape& s, const Node* inner, const Cell* key, uint32_t n) {
  const Cell* seps = separators(inner, s);
  uint32_t lo = 0, hi = inner->count - 1, w = s.key_width;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (s.compare(seps + mid * w, key, n) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// First row index in a leaf whose first n key cells are > key.
uint32_t leaf_upper_bound(const ListShape& s, const Node* leaf, const Cell* key, uint32_t n) {
  const Cell* rows = leaf_rows(leaf);
  uint32_t lo = 0, hi = leaf->count, w = s.row_width;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (s.compare(rows + mid * w, key, n) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// A finger over one slice: the path from the root to the current row. Forwards it moves to the
// next leaf through the nearest ancestor with a child to the right; backwards, to the left.
class SliceCursor final : public Cursor {
 public:
  SliceCursor(const ListShape& s, const TreeRoot& t, const Slice& slice)
      : shape_(s), height_(t.height), root_(t.root), count_(t.count), prefix_n_(slice.prefix_len),
        bounded_(slice.bounded), reverse_(slice.reverse), lo_(slice.lo), hi_(slice.hi) {
    // The probe is the prefix and, when bounded, the bound next to it: kept inside the cursor
    // (one allocation per slice, the cursor), on the heap only past kInlineProbe cells.
    if (prefix_n_ + 1 > kInlineProbe) {
      probe_heap_ = std::make_unique<Cell[]>(prefix_n_ + 1);
      probe_ = probe_heap_.get();
    }
    std::copy(slice.prefix, slice.prefix + prefix_n_, probe_);
    probe_[prefix_n_] = 0;
    if (!root_) return;
    if (shape_.sequence) start_sequence();
    else start_keyed();
  }

  bool valid() const override { return valid_; }
  const Cell* row() const override { return leaf_rows(path_[height_]) + index_[height_] * shape_.row_width; }
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
    const Node* leaf = path_[height_];
    const Cell* rows = leaf_rows(leaf);
    uint32_t width = shape_.row_width, i = index_[height_];
    *first = rows + static_cast<size_t>(i) * width;
    size_t n = 1, in_leaf = std::min<size_t>(max, leaf->count - i);
    while (n < in_leaf && row_within(rows + static_cast<size_t>(i + n) * width, position_ + static_cast<int64_t>(n))) ++n;
    position_ += static_cast<int64_t>(n) - 1;
    index_[height_] = i + static_cast<uint32_t>(n) - 1;
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
    if (from >= to) return;
    seek_position(reverse_ ? to - 1 : from);
    valid_ = true;
  }

  void start_keyed() {
    uint32_t n = prefix_n_;
    if (!reverse_) {
      if (bounded_) {
        probe_[n] = static_cast<Cell>(lo_);
        descend(probe_, n + 1, false);  // the first row >= prefix + lo
      } else if (n > 0) {
        descend(probe_, n, false);      // the first row >= prefix
      } else {
        descend_edge(0, root_, false);
      }
      valid_ = settle_forward() && within();
      return;
    }
    if (bounded_) {
      probe_[n] = static_cast<Cell>(hi_);
      descend(probe_, n + 1, false);  // the first row >= prefix + hi; the one before it
    } else if (n > 0) {
      descend(probe_, n, true);       // the first row > prefix; the one before it
    } else {
      descend_edge(0, root_, true);
      index_[height_] = path_[height_]->count;  // one past the last row
    }
    valid_ = step_back() && within();
  }

  // Stands on the first row >= key (upper: > key) in its first n cells; the index may be one
  // past the leaf's last row (settle_forward moves on, step_back moves to the row before).
  void descend(const Cell* key, uint32_t n, bool upper) {
    const Node* node = root_;
    for (uint32_t level = 0; level < height_; ++level) {
      path_[level] = node;
      index_[level] = upper ? inner_child_upper(shape_, node, key, n) : inner_child_lower(shape_, node, key, n);
      node = children(node)[index_[level]];
    }
    path_[height_] = node;
    index_[height_] = upper ? leaf_upper_bound(shape_, node, key, n) : leaf_lower_bound(shape_, node, key, n);
  }

  // Down to the leftmost (or rightmost) row under node, from this level.
  void descend_edge(uint32_t level, const Node* node, bool right) {
    for (; level < height_; ++level) {
      path_[level] = node;
      index_[level] = right ? node->count - 1 : 0;
      node = children(node)[index_[level]];
    }
    path_[height_] = node;
    index_[height_] = right && node->count > 0 ? node->count - 1 : 0;
  }

  void seek_position(int64_t p) {
    position_ = p;
    const Node* node = root_;
    for (uint32_t level = 0; level < height_; ++level) {
      int64_t below = shape_.rows_below(height_ - level);
      path_[level] = node;
      index_[level] = static_cast<uint32_t>(p / below);
      node = children(node)[index_[level]];
      p %= below;
    }
    path_[height_] = node;
    index_[height_] = static_cast<uint32_t>(p);
  }

  // From an index that may be past its leaf's end: onto a row, or false at the list's end.
  bool settle_forward() {
    while (index_[height_] >= path_[height_]->count)
      if (!next_leaf()) return false;
    return true;
  }
  bool step_forward() {
    ++index_[height_];
    return settle_forward();
  }
  bool step_back() {
    while (index_[height_] == 0)
      if (!prev_leaf()) return false;
    --index_[height_];
    return true;
  }
  bool next_leaf() {
    for (uint32_t level = height_; level-- > 0;) {
      if (index_[level] + 1 < path_[level]->count) {
        ++index_[level];
        descend_edge(level + 1, children(path_[level])[index_[level]], false);
        return true;
      }
    }
    return false;
  }
  // To the leaf on the left, standing one past its last row (step_back then takes that row).
  bool prev_leaf() {
    for (uint32_t level = height_; level-- > 0;) {
      if (index_[level] > 0) {
        --index_[level];
        descend_edge(level + 1, children(path_[level])[index_[level]], true);
        index_[height_] = path_[height_]->count;
        return true;
      }
    }
    return false;
  }

  bool within() const { return row_within(row(), position_); }
  bool row_within(const Cell* r, int64_t position) const {
    if (shape_.sequence) return !bounded_ || (position >= lo_ && position < hi_);
    if (prefix_n_ && shape_.compare(r, probe_, prefix_n_) != 0) return false;
    if (!bounded_) return true;
    int64_t k = static_cast<int64_t>(r[prefix_n_]);
    return k >= lo_ && k < hi_;
  }

  const ListShape& shape_;
  uint32_t height_;
  const Node* root_;
  int64_t count_;
  uint32_t prefix_n_;
  bool bounded_, reverse_;
  int64_t lo_, hi_;
  bool valid_ = false;
  int64_t position_ = 0;
  static constexpr uint32_t kInlineProbe = 9;
  Cell probe_inline_[kInlineProbe];
  std::unique_ptr<Cell[]> probe_heap_;
  Cell* probe_ = probe_inline_;  // the prefix, then one cell for a bound
  const Node* path_[kMaxHeight + 1];
  uint32_t index_[kMaxHeight + 1];
};

}  // namespace

std::unique_ptr<Cursor> tree_slice(const ListShape& s, const TreeRoot& t, const Slice& slice) {
  return std::make_unique<SliceCursor>(s, t, slice);
}

}  // namespace pure::rt::store
