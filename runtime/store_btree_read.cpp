// runtime/store_btree_read.cpp — searching B+tree nodes and walking them with cursors (fingers).
// Reads only: never writes a node, so it serves live lists and snapshots alike.
#include <algorithm>
#include <typeinfo>

#include "runtime/store_btree.h"

namespace pure::rt::store {

ListShape::ListShape(const ListSchema& s, uint32_t index, uint32_t node_bytes)
    : schema(s), list_index(index), row_width(s.row_width()), key_width(s.key_width()), sequence(s.is_sequence) {
  for (uint32_t c = 0; c < row_width; ++c) {
    ColType t = c < key_width ? s.key[c] : s.fields[c - key_width];
    if (t == ColType::Text) text_columns.push_back(c);
    column_is_text.push_back(t == ColType::Text ? 1 : 0);
    if (t == ColType::Text && c < key_width) text_key_columns.push_back(c);
  }
  text_keys = !text_key_columns.empty();
  uint32_t row_bytes = std::max<uint32_t>(row_width, 1) * 8;
  leaf_capacity = std::max<uint32_t>(8, (node_bytes - sizeof(Node)) / row_bytes);
  // An inner entry is a child pointer and a separator.
  inner_capacity = std::max<uint32_t>(8, (node_bytes - sizeof(Node)) / (8 + key_width * 8));
  leaf_bytes = sizeof(Node) + leaf_capacity * row_bytes;
  inner_bytes = sizeof(Node) + inner_capacity * 8 + (inner_capacity - 1) * key_width * 8;
}

int ListShape::compare_slow(const Cell* a, const Cell* b, uint32_t n) const {
  for (uint32_t i = 0; i < n; ++i) {
    int c;
    if (schema.key[i] == ColType::Text) {
      c = text_compare(reinterpret_cast<const Text*>(a[i]), reinterpret_cast<const Text*>(b[i]));
    } else {
      int64_t x = static_cast<int64_t>(a[i]), y = static_cast<int64_t>(b[i]);
      c = x < y ? -1 : (x > y ? 1 : 0);
    }
    if (c != 0) return c;
  }
  return 0;
}

namespace {

// Integer keys of N cells (TPC-C's are 2 to 5): the comparison unrolled, no per-column type test.
template <uint32_t N>
inline int compare_ints(const Cell* a, const Cell* b) {
  for (uint32_t i = 0; i < N; ++i) {
    int64_t x = static_cast<int64_t>(a[i]), y = static_cast<int64_t>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// Whether the entry's first N cells are below key (or not above it when Upper).
template <uint32_t N, bool Upper>
inline bool before_key(const Cell* entry, const Cell* key) {
  int c = compare_ints<N>(entry, key);
  return Upper ? c <= 0 : c < 0;
}

// First of count entries `stride` cells apart whose first N cells are >= key (or > key when
// Upper: the first separator above the key). For one cell, branch-free halving: a seek's
// probes go left or right at random (a BFS visits its nodes in queue order), so the step is a
// conditional move, not a jump the processor guesses wrong half the time. Invariant: every
// entry below `first` is before the key and the answer is at most first + len.
template <uint32_t N, bool Upper>
inline uint32_t search_ints(const Cell* at, uint32_t count, uint32_t stride, const Cell* key) {
  if constexpr (N > 1) {
    // composite keys (TPC-C's): the compare's own early exits jump anyway, and the branch-free
    // form makes one compare more per search
    uint32_t lo = 0, hi = count;
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      if (before_key<N, Upper>(at + size_t(mid) * stride, key)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  if (count == 0) return 0;
  uint32_t first = 0, len = count;
  while (len > 1) {
    uint32_t half = len / 2;
    first = before_key<N, Upper>(at + size_t(first + half) * stride, key) ? first + half : first;
    len -= half;
  }
  return first + (before_key<N, Upper>(at + size_t(first) * stride, key) ? 1 : 0);
}

// search_ints for the n of a list with integer keys; false when n has no unrolled form.
template <bool Upper>
inline bool search_ints_n(uint32_t n, const Cell* at, uint32_t count, uint32_t stride, const Cell* key, uint32_t& out) {
  switch (n) {
    case 1: out = search_ints<1, Upper>(at, count, stride, key); return true;
    case 2: out = search_ints<2, Upper>(at, count, stride, key); return true;
    case 3: out = search_ints<3, Upper>(at, count, stride, key); return true;
    case 4: out = search_ints<4, Upper>(at, count, stride, key); return true;
    case 5: out = search_ints<5, Upper>(at, count, stride, key); return true;
    default: return false;
  }
}

}  // namespace

uint32_t leaf_lower_bound(const ListShape& s, const Node* leaf, const Cell* key, uint32_t n) {
  const Cell* rows = leaf_rows(leaf);
  uint32_t lo = 0, hi = leaf->count, w = s.row_width;
  if (!s.text_keys && search_ints_n<false>(n, rows, hi, w, key, lo)) return lo;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (s.compare(rows + mid * w, key, n) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

uint32_t inner_child_for(const ListShape& s, const Node* inner, const Cell* key) {
  const Cell* seps = separators(inner, s);
  uint32_t lo = 0, hi = inner->count - 1, w = s.key_width;
  if (!s.text_keys && search_ints_n<true>(w, seps, hi, w, key, lo)) return lo;
  while (lo < hi) {  // first separator > key; its index is the child
    uint32_t mid = (lo + hi) / 2;
    if (s.compare(seps + mid * w, key, w) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

uint32_t inner_child_lower(const ListShape& s, const Node* inner, const Cell* key, uint32_t n) {
  const Cell* seps = separators(inner, s);
  uint32_t lo = 0, hi = inner->count - 1, w = s.key_width;
  if (!s.text_keys && search_ints_n<false>(n, seps, hi, w, key, lo)) return lo;
  while (lo < hi) {  // first separator whose prefix is >= key
    uint32_t mid = (lo + hi) / 2;
    if (s.compare(seps + mid * w, key, n) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

namespace {

const Node* sequence_leaf(const ListShape& s, const TreeRoot& t, int64_t& position) {
  const Node* node = t.root;
  for (uint32_t h = t.height; h > 0; --h) {
    int64_t below = s.rows_below(h);
    node = children(node)[position / below];
    position %= below;
  }
  return node;
}

bool leaf_holds(const ListShape& s, const Node* leaf, const Cell* key) {
  if (leaf->count == 0) return false;
  const Cell* rows = leaf_rows(leaf);
  return s.compare(rows, key, s.key_width) <= 0 &&
         s.compare(rows + (leaf->count - 1) * s.row_width, key, s.key_width) >= 0;
}

}  // namespace

const Cell* tree_find(const ListShape& s, const TreeRoot& t, const Cell* key, const Node** hint) {
  if (!t.root) return nullptr;
  if (s.sequence) {
    int64_t p = static_cast<int64_t>(key[0]);
    if (p < 0 || p >= t.count) return nullptr;
    const Node* leaf = sequence_leaf(s, t, p);
    return leaf_rows(leaf) + p * s.row_width;
  }
  const Node* leaf = nullptr;
  // A finger: keys between a leaf's first and last row can only live in that leaf.
  if (hint && *hint && leaf_holds(s, *hint, key)) {
    leaf = *hint;
  } else {
    leaf = t.root;
    for (uint32_t h = t.height; h > 0; --h) {
      leaf = children(leaf)[inner_child_for(s, leaf, key)];
      prefetch_node(leaf, h == 1 ? s.leaf_bytes : s.inner_bytes);
    }
    if (hint) *hint = leaf;
  }
  uint32_t i = leaf_lower_bound(s, leaf, key, s.key_width);
  const Cell* row = leaf_rows(leaf) + i * s.row_width;
  if (i < leaf->count && s.compare(row, key, s.key_width) == 0) return row;
  return nullptr;
}

const Cell* tree_first(const ListShape& s, const TreeRoot& t) {
  if (!t.root) return nullptr;
  const Node* node = t.root;
  for (uint32_t h = t.height; h > 0; --h) node = children(node)[0];
  return leaf_rows(node);
}

const Cell* tree_last(const ListShape& s, const TreeRoot& t) {
  if (!t.root) return nullptr;
  const Node* node = t.root;
  for (uint32_t h = t.height; h > 0; --h) node = children(node)[node->count - 1];
  return leaf_rows(node) + (node->count - 1) * s.row_width;
}

namespace {

// A cursor over a whole list, a key prefix or a range, moving with a Finger (store_btree.h): next()
// stays in the leaf and moves to the following leaf through the nearest ancestor.
class TreeCursor final : public Cursor {
 public:
  enum class End : uint8_t { None, Prefix, Below };

  TreeCursor(const ListShape& s, const TreeRoot& t) : shape_(s), f_(t) {}

  // Makes this cursor new again over t (a list of the same shape), without allocating.
  void restart(const TreeRoot& t) {
    f_.height = t.height;
    f_.root = t.root;
    valid_ = false;
    end_ = End::None;
    position_ = 0;
  }
  const ListShape& shape() const { return shape_; }

  bool valid() const override { return valid_; }
  const Cell* row() const override { return f_.row(shape_); }
  int64_t position() const override { return shape_.sequence ? position_ : -1; }
  const Cell* take() override {  // one virtual call per row for the VM's loops
    if (!valid_) return nullptr;
    const Cell* r = row();
    next();
    return r;
  }
  // The rows of the current leaf from here on that are within the end (at most max); the
  // cursor moves past them. Leaves keep rows side by side, so the run is one array.
  size_t take_run(const Cell** first, size_t max) override {
    if (!valid_ || max == 0) return 0;
    const Node* leaf = f_.path[f_.height];
    const Cell* rows = leaf_rows(leaf);
    uint32_t width = shape_.row_width;
    uint32_t i = f_.index[f_.height];
    *first = rows + static_cast<size_t>(i) * width;
    size_t n = 1;  // the current row is within the end: valid_ says so
    size_t in_leaf = std::min<size_t>(max, leaf->count - i);
    if (end_ == End::None) {
      n = in_leaf;  // no end inside the list: the rest of the leaf is the run
    } else if (end_ == End::Below && shape_.sequence) {
      n = std::min<size_t>(in_leaf, static_cast<size_t>(hi_ - position_));
    } else if (end_ == End::Prefix && prefix_n_ == 1 && !shape_.text_keys) {
      // one integer key cell bounds the run (edges[v]): compare it directly
      const Cell want = prefix_[0];
      const Cell* r = rows + static_cast<size_t>(i + 1) * width;
      while (n < in_leaf && *r == want) {
        ++n;
        r += width;
      }
    } else {
      while (n < in_leaf && row_within_end(rows + static_cast<size_t>(i + n) * width, position_ + static_cast<int64_t>(n)))
        ++n;
    }
    position_ += static_cast<int64_t>(n);
    f_.index[f_.height] = i + static_cast<uint32_t>(n);
    if (f_.index[f_.height] >= leaf->count && !f_.next_leaf()) {
      valid_ = false;
      return n;
    }
    valid_ = within_end();
    return n;
  }
  void next() override {
    ++position_;
    if (++f_.index[f_.height] >= f_.path[f_.height]->count && !f_.next_leaf()) {
      valid_ = false;
      return;
    }
    valid_ = within_end();
  }

  void seek_start() {
    if (!f_.root) return;
    f_.descend_edge(0, f_.root, false);
    position_ = 0;
    valid_ = within_end();
  }
  void seek_position(int64_t p) {
    if (!f_.root) return;
    position_ = p;
    f_.seek_position(shape_, p);
    valid_ = f_.index[f_.height] < f_.path[f_.height]->count && within_end();
  }
  // First row whose first n key cells are >= key.
  void seek_lower(const Cell* key, uint32_t n) {
    if (!f_.root) return;
    if (!shape_.text_keys) switch (n) {  // integer keys: one descent with the search unrolled
        case 1: return seek_lower_ints<1>(key);
        case 2: return seek_lower_ints<2>(key);
        case 3: return seek_lower_ints<3>(key);
        case 4: return seek_lower_ints<4>(key);
        case 5: return seek_lower_ints<5>(key);
        default: break;
      }
    f_.descend(shape_, key, n, false);
    if (f_.index[f_.height] >= f_.path[f_.height]->count && !f_.next_leaf()) return;
    valid_ = within_end();
  }
  // seek_lower for N integer key cells: the same positions as inner_child_lower and
  // leaf_lower_bound give, with their searches inlined into one loop.
  template <uint32_t N>
  void seek_lower_ints(const Cell* key) {
    const Node* node = f_.root;
    const uint32_t key_width = shape_.key_width, height = f_.height;
    for (uint32_t level = 0; level < height; ++level) {
      f_.path[level] = node;
      uint32_t i = search_ints<N, false>(separators(node, shape_), node->count - 1, key_width, key);
      f_.index[level] = i;
      node = children(node)[i];
      prefetch_node(node, level + 1 == height ? shape_.leaf_bytes : shape_.inner_bytes);
    }
    f_.path[height] = node;
    f_.index[height] = search_ints<N, false>(leaf_rows(node), node->count, shape_.row_width, key);
    if (f_.index[height] >= node->count && !f_.next_leaf()) return;
    valid_ = within_end();
  }
  void end_at_prefix(const Cell* prefix, uint32_t n) {
    end_ = End::Prefix;
    prefix_n_ = n;
    Cell* copy = prefix_inline_;
    if (n > kInlinePrefix) {  // never for real schemas; kept correct anyway
      prefix_heap_ = std::make_unique<Cell[]>(n);
      copy = prefix_heap_.get();
    }
    std::memcpy(copy, prefix, size_t(n) * 8);
    prefix_ = copy;
  }
  void end_below(int64_t hi) {
    end_ = End::Below;
    hi_ = hi;
  }

 private:
  bool within_end() const { return row_within_end(row(), position_); }
  bool row_within_end(const Cell* r, int64_t position) const {
    switch (end_) {
      case End::None: return true;
      case End::Prefix: return shape_.compare(r, prefix_, prefix_n_) == 0;
      case End::Below: return shape_.sequence ? position < hi_ : static_cast<int64_t>(r[0]) < hi_;
    }
    return false;
  }

  const ListShape& shape_;
  bool valid_ = false;
  End end_ = End::None;
  int64_t position_ = 0;
  int64_t hi_ = 0;
  // The prefix lives inside the cursor: a slice costs one allocation (the cursor), not two.
  static constexpr uint32_t kInlinePrefix = 8;
  Cell prefix_inline_[kInlinePrefix];
  std::unique_ptr<Cell[]> prefix_heap_;
  const Cell* prefix_ = nullptr;
  uint32_t prefix_n_ = 0;
  Finger f_;
};

}  // namespace

std::unique_ptr<Cursor> tree_scan(const ListShape& s, const TreeRoot& t) {
  auto cursor = std::make_unique<TreeCursor>(s, t);
  cursor->seek_start();
  return cursor;
}

std::unique_ptr<Cursor> tree_prefix(const ListShape& s, const TreeRoot& t, const Cell* prefix, uint32_t n) {
  return tree_prefix_again(s, t, nullptr, prefix, n);
}

std::unique_ptr<Cursor> tree_prefix_again(const ListShape& s, const TreeRoot& t, std::unique_ptr<Cursor> spare,
                                          const Cell* prefix, uint32_t n) {
  std::unique_ptr<TreeCursor> cursor;
  auto* old = spare && typeid(*spare) == typeid(TreeCursor) ? static_cast<TreeCursor*>(spare.get()) : nullptr;
  if (old && &old->shape() == &s) {
    spare.release();
    cursor.reset(old);
    cursor->restart(t);
  } else {
    cursor = std::make_unique<TreeCursor>(s, t);
  }
  if (s.sequence) {
    int64_t p = static_cast<int64_t>(prefix[0]);
    cursor->end_below(p + 1);
    if (p >= 0 && p < t.count) cursor->seek_position(p);
    return cursor;
  }
  cursor->end_at_prefix(prefix, n);
  cursor->seek_lower(prefix, n);
  return cursor;
}

std::unique_ptr<Cursor> tree_range(const ListShape& s, const TreeRoot& t, int64_t lo, int64_t hi) {
  auto cursor = std::make_unique<TreeCursor>(s, t);
  cursor->end_below(hi);
  if (s.sequence) {
    if (lo < 0) lo = 0;
    if (lo < t.count && lo < hi) cursor->seek_position(lo);
    return cursor;
  }
  Cell low = static_cast<Cell>(lo);
  cursor->seek_lower(&low, 1);
  return cursor;
}

}  // namespace pure::rt::store
