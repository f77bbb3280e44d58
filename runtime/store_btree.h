// runtime/store_btree.h — private: node layout, list shapes and read paths of the B+tree store.
// Depends on runtime/store.h only; nothing here knows about snapshots' lifetimes or undo logs.
//
// Layout (see docs/store.md). Every node starts with a 16-byte NodeHeader.
//  * Leaf: `count` rows stored row-wise (key cells then field cells, row_width cells each),
//    because the interface hands out `const Cell*` rows; rows are sorted by key.
//  * Keyed inner node: `count` children, then `count - 1` separators of key_width cells each.
//    Invariant: every key in child i+1 is >= separator i, every key in child i is < separator i.
//  * Sequence inner node: children only. A sequence is a radix tree: every leaf is full except
//    the last one, so position p is found by arithmetic, not by comparing keys.
//  * A node owns one reference to every Text in it (leaf rows and inner separators alike): a
//    copy retains them, a node that leaves the store releases them, on the owner thread.
//  * made: the generation in which the owner created or copied the node. A node with
//    made == the store's current generation is private to the live tree (no snapshot has seen it)
//    and is written in place; any other node is shared and is copied before a write.
//    If a node is private, so is every node above it (copies are made top-down).
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/store.h"

namespace pure::rt::store {

struct Node {
  uint64_t made;   // generation of creation or copy
  uint32_t count;  // rows (leaf) or children (inner)
  uint32_t leaf;   // 1 for a leaf
};
static_assert(sizeof(Node) == 16);

// Constants of one list, fixed when the store is made.
struct ListShape {
  ListSchema schema;
  uint32_t list_index = 0;
  uint32_t row_width = 0;
  uint32_t key_width = 0;  // 0 for sequences
  uint32_t leaf_capacity = 0;
  uint32_t inner_capacity = 0;
  uint32_t leaf_bytes = 0;
  uint32_t inner_bytes = 0;
  bool sequence = false;
  bool text_keys = false;                  // some key column is Text
  std::vector<uint32_t> text_columns;      // row columns holding texts
  std::vector<uint32_t> text_key_columns;  // key columns holding texts
  std::vector<uint8_t> column_is_text;     // per row column: 1 when it holds texts

  ListShape(const ListSchema& s, uint32_t index, uint32_t node_bytes);
  // Compares the first n key cells, as store.h orders keys.
  int compare(const Cell* a, const Cell* b, uint32_t n) const {
    if (!text_keys) {
      for (uint32_t i = 0; i < n; ++i) {
        int64_t x = static_cast<int64_t>(a[i]), y = static_cast<int64_t>(b[i]);
        if (x != y) return x < y ? -1 : 1;
      }
      return 0;
    }
    return compare_slow(a, b, n);
  }
  int compare_slow(const Cell* a, const Cell* b, uint32_t n) const;
  // Sequence geometry: rows below one child of a node at this height (height 0 = leaf).
  int64_t rows_below(uint32_t height) const {
    int64_t n = leaf_capacity;
    for (uint32_t h = 1; h < height; ++h) n *= inner_capacity;
    return n;
  }
  int64_t capacity_at(uint32_t height) const { return rows_below(height + 1); }
};

inline Cell* leaf_rows(Node* n) { return reinterpret_cast<Cell*>(n + 1); }
inline const Cell* leaf_rows(const Node* n) { return reinterpret_cast<const Cell*>(n + 1); }
inline Node** children(Node* n) { return reinterpret_cast<Node**>(n + 1); }
inline Node* const* children(const Node* n) { return reinterpret_cast<Node* const*>(n + 1); }
inline Cell* separators(Node* n, const ListShape& s) { return reinterpret_cast<Cell*>(children(n) + s.inner_capacity); }
inline const Cell* separators(const Node* n, const ListShape& s) {
  return reinterpret_cast<const Cell*>(children(n) + s.inner_capacity);
}

// One list's tree as the live list or a snapshot sees it.
struct TreeRoot {
  Node* root = nullptr;  // nullptr when empty
  uint32_t height = 0;   // 0: the root is a leaf
  int64_t count = 0;
};

// Deepest tree the store builds (fan-out >= 8, so 2^63 rows need far fewer levels).
inline constexpr uint32_t kMaxHeight = 24;

// Asks for every cache line of a node at once: a halving search then finds its probes' lines
// arriving together instead of waiting for each in turn (a big list's nodes are rarely cached).
inline void prefetch_node(const Node* node, uint32_t bytes) {
  const char* at = reinterpret_cast<const char*>(node);
#pragma GCC unroll 4
  for (uint32_t off = 0; off < bytes; off += 64) __builtin_prefetch(at + off);
}

// First row index in a leaf whose first n key cells are >= key.
uint32_t leaf_lower_bound(const ListShape& s, const Node* leaf, const Cell* key, uint32_t n);
// Child of an inner node that holds `key` (full key): separators <= key.
uint32_t inner_child_for(const ListShape& s, const Node* inner, const Cell* key);
// Child where rows whose first n cells are >= key start: separators whose first n cells < key.
uint32_t inner_child_lower(const ListShape& s, const Node* inner, const Cell* key, uint32_t n);
// Child of an inner node where rows whose first n cells are > key can start: the number of
// separators whose first n cells are <= key.
inline uint32_t inner_child_upper(const ListShape& s, const Node* inner, const Cell* key, uint32_t n) {
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
inline uint32_t leaf_upper_bound(const ListShape& s, const Node* leaf, const Cell* key, uint32_t n) {
  const Cell* rows = leaf_rows(leaf);
  uint32_t lo = 0, hi = leaf->count, w = s.row_width;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (s.compare(rows + mid * w, key, n) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// A finger into a tree: the path from the root to one row, a node and an index per level (the
// leaf at level `height`). Both cursors (TreeCursor, SliceCursor) move with one: a descent sets
// the whole path, and the next (previous) leaf is reached through the nearest ancestor with a
// child to the right (left), never from the root.
struct Finger {
  uint32_t height;
  const Node* root;
  const Node* path[kMaxHeight + 1];
  uint32_t index[kMaxHeight + 1];

  explicit Finger(const TreeRoot& t) : height(t.height), root(t.root) {}
  const Cell* row(const ListShape& s) const { return leaf_rows(path[height]) + index[height] * s.row_width; }

  // Down to the leftmost (right: rightmost) row under node, from this level.
  void descend_edge(uint32_t level, const Node* node, bool right) {
    for (; level < height; ++level) {
      path[level] = node;
      index[level] = right ? node->count - 1 : 0;
      node = children(node)[index[level]];
    }
    path[height] = node;
    index[height] = right && node->count > 0 ? node->count - 1 : 0;
  }
  // Onto position p of a sequence (the index may be past the leaf's rows when p is the count).
  void seek_position(const ListShape& s, int64_t p) {
    const Node* node = root;
    for (uint32_t level = 0; level < height; ++level) {
      int64_t below = s.rows_below(height - level);
      path[level] = node;
      index[level] = static_cast<uint32_t>(p / below);
      node = children(node)[index[level]];
      p %= below;
    }
    path[height] = node;
    index[height] = static_cast<uint32_t>(p);
  }
  // Onto the first row >= key (upper: > key) in its first n cells; the index may be one past
  // the leaf's last row.
  void descend(const ListShape& s, const Cell* key, uint32_t n, bool upper) {
    const Node* node = root;
    for (uint32_t level = 0; level < height; ++level) {
      path[level] = node;
      index[level] = upper ? inner_child_upper(s, node, key, n) : inner_child_lower(s, node, key, n);
      node = children(node)[index[level]];
    }
    path[height] = node;
    index[height] = upper ? leaf_upper_bound(s, node, key, n) : leaf_lower_bound(s, node, key, n);
  }
  // To the first row of the next leaf; false at the last leaf.
  bool next_leaf() {
    for (uint32_t level = height; level-- > 0;) {
      if (index[level] + 1 < path[level]->count) {
        ++index[level];
        descend_edge(level + 1, children(path[level])[index[level]], false);
        return true;
      }
    }
    return false;
  }
  // To the leaf on the left, one past its last row; false at the first leaf.
  bool prev_leaf() {
    for (uint32_t level = height; level-- > 0;) {
      if (index[level] > 0) {
        --index[level];
        descend_edge(level + 1, children(path[level])[index[level]], true);
        index[height] = path[height]->count;
        return true;
      }
    }
    return false;
  }
};

// Reads shared by live lists and snapshots. `hint` (may be null) is a leaf to try first.
const Cell* tree_find(const ListShape& s, const TreeRoot& t, const Cell* key, const Node** hint);
const Cell* tree_first(const ListShape& s, const TreeRoot& t);
const Cell* tree_last(const ListShape& s, const TreeRoot& t);
std::unique_ptr<Cursor> tree_scan(const ListShape& s, const TreeRoot& t);
std::unique_ptr<Cursor> tree_prefix(const ListShape& s, const TreeRoot& t, const Cell* prefix, uint32_t n);
// The same, reusing spare when it is a cursor of this shape (no allocation).
std::unique_ptr<Cursor> tree_prefix_again(const ListShape& s, const TreeRoot& t, std::unique_ptr<Cursor> spare,
                                          const Cell* prefix, uint32_t n);
std::unique_ptr<Cursor> tree_range(const ListShape& s, const TreeRoot& t, int64_t lo, int64_t hi);
// A slice forwards or backwards (store_btree_slice.cpp).
std::unique_ptr<Cursor> tree_slice(const ListShape& s, const TreeRoot& t, const Slice& slice);

// The B+tree checker (store_btree_check.cpp): "" when the tree keeps every invariant above
// (key order, separator bounds, fill, one leaf depth, the count, generations no newer than
// `generation` with private nodes only under private parents), else the first problem.
std::string check_tree(const ListShape& s, const TreeRoot& t, uint64_t generation);

}  // namespace pure::rt::store
