// runtime/store_live_tree.h — private: the owner's writable view of one list's B+tree.
// Depends on store_nodes.h; knows nothing of undo logs, texts' borrowing rules or snapshots.
//
// Every write first makes the root-to-leaf path private (Nodes::make_private, top-down), then
// changes nodes in place. Ownership of texts moves with cells: put/append take cells whose texts
// the tree now owns; the replaced or removed cells are handed back to the caller, who owns them.
#pragma once
#include "runtime/store_nodes.h"

namespace pure::rt::store {

class LiveTree {
 public:
  LiveTree(const ListShape& shape, Nodes& nodes) : shape_(shape), nodes_(nodes) {}

  const TreeRoot& tree() const { return tree_; }
  uint64_t descents() const { return descents_; }  // root-to-leaf searches so far (tests)
  uint64_t finger_scans() const { return finger_scans_; }  // finger_for calls so far (tests)
  TreeRoot& tree() { return tree_; }
  // Reads of the live list, through the finger.
  const Cell* find(const Cell* key);

  // Keyed lists. put returns true if the key was new; otherwise the old row goes to old_row.
  bool put(const Cell* row, Cell* old_row);
  bool remove(const Cell* key, Cell* old_row);
  // Keyed: key is the full key; sequence: key[0] is the position. column counts key cells too.
  // Returns the changed row (its key cells are the tree's own), or nullptr if absent.
  const Cell* set(const Cell* key, uint32_t column, Cell value, Cell* old_value);
  // Sequences.
  void append(const Cell* row);
  bool pop(Cell* old_row);

 private:
  struct Path {
    Node* node[kMaxHeight + 1];
    uint32_t index[kMaxHeight + 1];  // child taken at each inner level
  };
  // Descends to the leaf for `key`; returns the row index there and whether the key is present.
  uint32_t descend(const Cell* key, Path& path, bool& found) const;
  void sequence_path(int64_t position, Path& path) const;
  void make_path_private(Path& path);
  void insert_in_leaf(Path& path, uint32_t index, const Cell* row);
  bool shift_into_sibling(Path& path, uint32_t index, const Cell* row);
  void set_separator(Cell* separator, const Cell* key);
  void insert_child(Path& path, uint32_t level, Cell* separator, Node* child);
  // A new root over a split old root: left, right, and separator_ between them.
  void grow_root(Node* left, Node* right);
  void remove_child(Node* parent, uint32_t child, bool release_separator);
  void rebalance(Path& path, uint32_t level);
  void collapse_root();
  void release_separator(Cell* separator);
  struct Finger;
  Node* leaf_finger_for(const Cell* key, uint32_t& index, bool& found);
  void set_finger(const Path& path);
  const Finger* finger_for(const Cell* key) const;
  // Once per search, before finger_for: whether this search uses the fingers (see fingers_on_).
  bool fingers_on() { return fingers_on_ = finger_misses_ < kColdAfter; }
  void finger_found(bool found) {
    if (found) finger_misses_ = 0;
    else if (finger_misses_ < kColdAfter) ++finger_misses_;
  }
  void clear_fingers();
  void moved_leaf(const Node* old_leaf, const Node* copy);

  // The last row a search found, with the path to it: an event that reads a row and then writes
  // its fields (stock[w, i] then stock[w, i].quantity = q) searches once. Valid until the next
  // write to this list other than a set() of that row (any write may copy or move the path's
  // nodes); a publish does not matter, since make_path_private copies what became shared.
  bool hit_from(const Cell* key) const {
    return hit_valid_ && shape_.compare(leaf_rows(hit_.node[tree_.height]) + size_t(hit_index_) * shape_.row_width, key,
                                        shape_.key_width) == 0;
  }
  void remember(const Path& path, uint32_t index) {
    for (uint32_t level = 0; level <= tree_.height; ++level) {
      hit_.node[level] = path.node[level];
      hit_.index[level] = path.index[level];
    }
    hit_index_ = index;
    hit_valid_ = true;
  }

  const ListShape& shape_;
  Nodes& nodes_;
  TreeRoot tree_;
  Path hit_;
  uint32_t hit_index_ = 0;
  bool hit_valid_ = false;
  mutable uint64_t descents_ = 0;
  mutable uint64_t finger_scans_ = 0;
  // Fingers: the leaves the last few operations reached, each with the separators that bound
  // its key range (raw copies; valid because any change to a separator clears every finger
  // first, and a leaf that is copied is forgotten). An event that reads rows and then writes
  // them (a transfer: find a, find b, set a, set b) finds each leaf once.
  // Keys of more than kFingerKeyCells cells get no fingers (every search descends).
  static constexpr uint32_t kFingerKeyCells = 8;
  struct Finger {
    const Node* leaf = nullptr;
    bool has_low = false, has_high = false;
    Cell low[kFingerKeyCells], high[kFingerKeyCells];
  };
  static constexpr uint32_t kFingers = 4;
  Finger fingers_[kFingers];
  uint32_t next_finger_ = 0;
  // Cold fingers. A list searched at scattered keys (TPC-C's stock and item: each New-Order line
  // a random row) misses every finger, and each miss paid a scan of the four and a copy of the
  // new leaf's fences for nothing. After kColdAfter searches in a row that no finger served, the
  // list's searches descend without them; two descents in a row that reach the same leaf (the
  // keys came together again) warm it: that second one sets a finger as before. Writes keep
  // the fingers valid either way, so a warm list may use the ones it had.
  static constexpr uint32_t kColdAfter = 8;
  uint32_t finger_misses_ = 0;
  bool fingers_on_ = true;             // this search's fingers_on()
  const Node* cold_leaf_ = nullptr;    // the leaf the last cold descent reached (compared only)
  std::vector<Node*> scratch_children_;
  std::vector<Cell> scratch_separators_;
  std::vector<Cell> separator_;
  std::vector<Cell> scratch_rows_;
};

}  // namespace pure::rt::store
