// runtime/store_live_tree.cpp — writes to one list's B+tree: copy-on-write paths, splits,
// merges, and the sequence radix tree. Depends on store_nodes.h and store_btree.h only.
#include "runtime/store_live_tree.h"

#include <algorithm>

#include "base/assert.h"

namespace pure::rt::store {

namespace {
Cell* row_at(Node* leaf, uint32_t index, uint32_t width) { return leaf_rows(leaf) + size_t(index) * width; }
}  // namespace

uint32_t LiveTree::descend(const Cell* key, Path& path, bool& found) const {
  ++descents_;
  Node* node = tree_.root;
  for (uint32_t level = 0; level < tree_.height; ++level) {
    path.node[level] = node;
    path.index[level] = inner_child_for(shape_, node, key);
    node = children(node)[path.index[level]];
    prefetch_node(node, level + 1 == tree_.height ? shape_.leaf_bytes : shape_.inner_bytes);
  }
  path.node[tree_.height] = node;
  uint32_t i = leaf_lower_bound(shape_, node, key, shape_.key_width);
  found = i < node->count && shape_.compare(row_at(node, i, shape_.row_width), key, shape_.key_width) == 0;
  return i;
}

void LiveTree::sequence_path(int64_t position, Path& path) const {
  Node* node = tree_.root;
  for (uint32_t level = 0; level < tree_.height; ++level) {
    int64_t below = shape_.rows_below(tree_.height - level);
    path.node[level] = node;
    path.index[level] = static_cast<uint32_t>(position / below);
    node = children(node)[path.index[level]];
    position %= below;
  }
  path.node[tree_.height] = node;
  path.index[tree_.height] = static_cast<uint32_t>(position);
}

void LiveTree::make_path_private(Path& path) {
  const Node* old_leaf = path.node[tree_.height];
  tree_.root = path.node[0] = nodes_.make_private(shape_, path.node[0]);
  for (uint32_t level = 0; level < tree_.height; ++level) {
    Node** slot = &children(path.node[level])[path.index[level]];
    *slot = path.node[level + 1] = nodes_.make_private(shape_, *slot);
  }
  if (path.node[tree_.height] != old_leaf) moved_leaf(old_leaf, path.node[tree_.height]);
}

// A finger covers every key between the separators around its leaf: such a key can only be in
// that leaf. Writes use it only when the leaf is private (no copy needed).
const LiveTree::Finger* LiveTree::finger_for(const Cell* key) const {
  ++finger_scans_;
  uint32_t k = shape_.key_width;
  for (const Finger& f : fingers_) {
    if (!f.leaf) continue;
    if (f.has_low && shape_.compare(f.low, key, k) > 0) continue;
    if (f.has_high && shape_.compare(key, f.high, k) >= 0) continue;
    return &f;
  }
  return nullptr;
}

void LiveTree::clear_fingers() {
  for (Finger& f : fingers_) f.leaf = nullptr;
}

// A leaf that was copied must not be read through a finger again; its copy has the same fences
// (copying changes no separator), so the finger moves to the copy.
void LiveTree::moved_leaf(const Node* old_leaf, const Node* copy) {
  for (Finger& f : fingers_)
    if (f.leaf == old_leaf) f.leaf = copy;
}

void LiveTree::set_finger(const Path& path) {
  if (shape_.key_width > kFingerKeyCells) return;
  const Node* leaf = path.node[tree_.height];
  if (!fingers_on_) {
    bool again = leaf == cold_leaf_;
    cold_leaf_ = leaf;
    if (!again) return;
    finger_misses_ = 0;
    cold_leaf_ = nullptr;
  }
  Finger* slot = nullptr;
  for (Finger& f : fingers_)
    if (f.leaf == leaf) slot = &f;
  if (!slot) {
    slot = &fingers_[next_finger_];
    next_finger_ = (next_finger_ + 1) % kFingers;
  }
  Finger& f = *slot;
  f.leaf = leaf;
  f.has_low = f.has_high = false;
  uint32_t k = shape_.key_width;
  for (uint32_t level = tree_.height; level-- > 0 && !(f.has_low && f.has_high);) {
    const Node* node = path.node[level];
    uint32_t i = path.index[level];
    const Cell* seps = separators(node, shape_);
    if (!f.has_low && i > 0) {
      std::memcpy(f.low, seps + size_t(i - 1) * k, k * 8);
      f.has_low = true;
    }
    if (!f.has_high && i + 1 < node->count) {
      std::memcpy(f.high, seps + size_t(i) * k, k * 8);
      f.has_high = true;
    }
  }
}

Node* LiveTree::leaf_finger_for(const Cell* key, uint32_t& index, bool& found) {
  if (!fingers_on()) return nullptr;
  const Finger* f = finger_for(key);
  finger_found(f != nullptr);
  if (!f || !nodes_.is_private(f->leaf)) return nullptr;
  Node* leaf = const_cast<Node*>(f->leaf);
  uint32_t k = shape_.key_width;
  index = leaf_lower_bound(shape_, leaf, key, k);
  found = index < leaf->count && shape_.compare(row_at(leaf, index, shape_.row_width), key, k) == 0;
  return leaf;
}

const Cell* LiveTree::find(const Cell* key) {
  if (!tree_.root) return nullptr;
  if (shape_.sequence) return tree_find(shape_, tree_, key, nullptr);
  if (hit_from(key)) return row_at(hit_.node[tree_.height], hit_index_, shape_.row_width);
  uint32_t k = shape_.key_width;
  const Finger* f = nullptr;
  if (fingers_on()) {
    f = finger_for(key);
    finger_found(f != nullptr);
  }
  if (!f) {
    Path path;
    bool found = false;
    uint32_t i = descend(key, path, found);
    set_finger(path);
    if (!found) return nullptr;
    remember(path, i);
    return row_at(path.node[tree_.height], i, shape_.row_width);
  }
  const Node* leaf = f->leaf;
  uint32_t i = leaf_lower_bound(shape_, leaf, key, k);
  const Cell* row = leaf_rows(leaf) + size_t(i) * shape_.row_width;
  return i < leaf->count && shape_.compare(row, key, k) == 0 ? row : nullptr;
}

bool LiveTree::put(const Cell* row, Cell* old_row) {
  hit_valid_ = false;
  uint32_t w = shape_.row_width;
  if (!tree_.root) {
    Node* leaf = nodes_.acquire(shape_, true);
    std::memcpy(leaf_rows(leaf), row, w * 8);
    leaf->count = 1;
    tree_ = {leaf, 0, 1};
    clear_fingers();
    return true;
  }
  uint32_t i = 0;
  bool found = false;
  Node* leaf = leaf_finger_for(row, i, found);
  if (!leaf || (!found && leaf->count == shape_.leaf_capacity)) {
    Path path;
    i = descend(row, path, found);
    make_path_private(path);
    leaf = path.node[tree_.height];
    if (!found && leaf->count == shape_.leaf_capacity) {
      clear_fingers();  // separators change; the next operations find new fingers
      insert_in_leaf(path, i, row);
      ++tree_.count;
      return true;
    }
    set_finger(path);
  }
  Cell* slot = row_at(leaf, i, w);
  if (found) {
    std::memcpy(old_row, slot, w * 8);
    std::memcpy(slot, row, w * 8);
    return false;
  }
  std::memmove(slot + w, slot, size_t(leaf->count - i) * w * 8);
  std::memcpy(slot, row, w * 8);
  ++leaf->count;
  ++tree_.count;
  return true;
}

// A full leaf first tries to pass rows to a neighbour with room (same parent), so random inserts
// fill leaves to ~80% instead of the ~69% that splitting alone gives.
bool LiveTree::shift_into_sibling(Path& path, uint32_t index, const Cell* row) {
  if (tree_.height == 0) return false;
  Node* parent = path.node[tree_.height - 1];
  uint32_t at = path.index[tree_.height - 1], cap = shape_.leaf_capacity, w = shape_.row_width;
  Node** kids = children(parent);
  uint32_t spare_right = at + 1 < parent->count ? cap - kids[at + 1]->count : 0;
  uint32_t spare_left = at > 0 ? cap - kids[at - 1]->count : 0;
  if (std::max(spare_left, spare_right) < 2 || index == cap) return false;  // appends split instead
  bool to_right = spare_right >= spare_left;
  uint32_t left_at = to_right ? at : at - 1;
  Node* left = kids[left_at] = nodes_.make_private(shape_, kids[left_at]);
  Node* right = kids[left_at + 1] = nodes_.make_private(shape_, kids[left_at + 1]);
  // Lay out both leaves' rows plus the new one in order, then cut in the middle.
  uint32_t total = left->count + right->count + 1;
  uint32_t insert_at = to_right ? index : left->count + index;
  scratch_rows_.resize(size_t(total) * w);
  Cell* out = scratch_rows_.data();
  std::memcpy(out, leaf_rows(left), size_t(left->count) * w * 8);
  std::memcpy(out + size_t(left->count) * w, leaf_rows(right), size_t(right->count) * w * 8);
  std::memmove(out + size_t(insert_at + 1) * w, out + size_t(insert_at) * w, size_t(total - 1 - insert_at) * w * 8);
  std::memcpy(out + size_t(insert_at) * w, row, w * 8);
  uint32_t keep = (total + 1) / 2;
  std::memcpy(leaf_rows(left), out, size_t(keep) * w * 8);
  std::memcpy(leaf_rows(right), out + size_t(keep) * w, size_t(total - keep) * w * 8);
  left->count = keep;
  right->count = total - keep;
  PURE_ASSERT(keep >= 1 && keep <= cap && total - keep >= 1 && total - keep <= cap);
  set_separator(separators(parent, shape_) + size_t(left_at) * shape_.key_width, leaf_rows(right));
  return true;
}

void LiveTree::set_separator(Cell* separator, const Cell* key) {
  for (uint32_t c : shape_.text_key_columns) text_store_retain(reinterpret_cast<Text*>(key[c]));
  release_separator(separator);
  std::memcpy(separator, key, shape_.key_width * 8);
}

void LiveTree::insert_in_leaf(Path& path, uint32_t index, const Cell* row) {
  Node* leaf = path.node[tree_.height];
  uint32_t w = shape_.row_width, k = shape_.key_width, n = leaf->count;
  PURE_ASSERT(index <= n && n <= shape_.leaf_capacity);
  PURE_ASSERT(nodes_.is_private(leaf));  // the path was made private before the write
  if (n == shape_.leaf_capacity && shift_into_sibling(path, index, row)) return;
  Node* target = leaf;
  uint32_t at = index;
  Node* right = nullptr;
  if (n == shape_.leaf_capacity) {
    right = nodes_.acquire(shape_, true);
    // A row past the end of a full leaf starts a new one: ascending loads leave full leaves.
    uint32_t split = index == n ? n : n / 2;
    std::memcpy(leaf_rows(right), row_at(leaf, split, w), size_t(n - split) * w * 8);
    right->count = n - split;
    leaf->count = split;
    if (!(index <= split && split < n)) {
      target = right;
      at = index - split;
    }
  }
  Cell* slot = row_at(target, at, w);
  std::memmove(slot + w, slot, size_t(target->count - at) * w * 8);
  std::memcpy(slot, row, w * 8);
  ++target->count;
  PURE_ASSERT(target->count <= shape_.leaf_capacity);
  if (!right) return;
  PURE_ASSERT(leaf->count >= 1 && right->count >= 1);
  separator_.assign(leaf_rows(right), leaf_rows(right) + k);
  for (uint32_t c : shape_.text_key_columns) text_store_retain(reinterpret_cast<Text*>(separator_[c]));
  if (tree_.height == 0) {
    grow_root(leaf, right);
    return;
  }
  insert_child(path, tree_.height - 1, separator_.data(), right);
}

void LiveTree::insert_child(Path& path, uint32_t level, Cell* separator, Node* child) {
  Node* node = path.node[level];
  uint32_t pos = path.index[level] + 1, n = node->count, k = shape_.key_width;
  Node** kids = children(node);
  Cell* seps = separators(node, shape_);
  PURE_ASSERT(pos >= 1 && pos <= n && n <= shape_.inner_capacity);
  PURE_ASSERT(nodes_.is_private(node));
  if (n < shape_.inner_capacity) {
    std::memmove(kids + pos + 1, kids + pos, size_t(n - pos) * sizeof(Node*));
    kids[pos] = child;
    std::memmove(seps + size_t(pos) * k, seps + size_t(pos - 1) * k, size_t(n - pos) * k * 8);
    std::memcpy(seps + size_t(pos - 1) * k, separator, k * 8);
    ++node->count;
    return;
  }
  // Full: lay the n+1 children and n separators out in order, then cut.
  scratch_children_.assign(kids, kids + pos);
  scratch_children_.push_back(child);
  scratch_children_.insert(scratch_children_.end(), kids + pos, kids + n);
  scratch_separators_.assign(seps, seps + size_t(pos - 1) * k);
  scratch_separators_.insert(scratch_separators_.end(), separator, separator + k);
  scratch_separators_.insert(scratch_separators_.end(), seps + size_t(pos - 1) * k, seps + size_t(n - 1) * k);
  uint32_t keep = pos == n ? n : (n + 1) / 2;  // children staying left; appends keep it full
  Node* right = nodes_.acquire(shape_, false);
  std::memcpy(kids, scratch_children_.data(), keep * sizeof(Node*));
  std::memcpy(seps, scratch_separators_.data(), size_t(keep - 1) * k * 8);
  node->count = keep;
  std::memcpy(children(right), scratch_children_.data() + keep, size_t(n + 1 - keep) * sizeof(Node*));
  std::memcpy(separators(right, shape_), scratch_separators_.data() + size_t(keep) * k, size_t(n - keep) * k * 8);
  right->count = n + 1 - keep;
  PURE_ASSERT(keep >= 1 && keep <= shape_.inner_capacity && right->count >= 1 && right->count <= shape_.inner_capacity);
  // The separator between the halves moves up (its text references move with it).
  separator_.assign(scratch_separators_.begin() + size_t(keep - 1) * k, scratch_separators_.begin() + size_t(keep) * k);
  if (level == 0) {
    grow_root(node, right);
    return;
  }
  insert_child(path, level - 1, separator_.data(), right);
}

void LiveTree::grow_root(Node* left, Node* right) {
  PURE_ASSERT(tree_.height < kMaxHeight);  // Path holds kMaxHeight + 1 levels
  Node* root = nodes_.acquire(shape_, false);
  children(root)[0] = left;
  children(root)[1] = right;
  std::memcpy(separators(root, shape_), separator_.data(), size_t(shape_.key_width) * 8);
  root->count = 2;
  tree_.root = root;
  ++tree_.height;
}

bool LiveTree::remove(const Cell* key, Cell* old_row) {
  hit_valid_ = false;
  if (!tree_.root) return false;
  uint32_t w = shape_.row_width, i = 0;
  uint32_t min_rows = std::max<uint32_t>(1, shape_.leaf_capacity / 4);
  bool found = false;
  Node* leaf = leaf_finger_for(key, i, found);
  if (leaf && !found) return false;  // bracketed by this leaf yet absent: absent everywhere
  if (leaf && leaf->count > min_rows) {
    Cell* slot = row_at(leaf, i, w);
    std::memcpy(old_row, slot, w * 8);
    std::memmove(slot, slot + w, size_t(leaf->count - i - 1) * w * 8);
    --leaf->count;
    --tree_.count;
    return true;
  }
  Path path;
  i = descend(key, path, found);
  if (!found) return false;
  make_path_private(path);
  leaf = path.node[tree_.height];
  Cell* slot = row_at(leaf, i, w);
  std::memcpy(old_row, slot, w * 8);
  std::memmove(slot, slot + w, size_t(leaf->count - i - 1) * w * 8);
  --leaf->count;
  --tree_.count;
  set_finger(path);
  rebalance(path, tree_.height);
  return true;
}

void LiveTree::release_separator(Cell* separator) {
  for (uint32_t c : shape_.text_key_columns) nodes_.retire_text(reinterpret_cast<Text*>(separator[c]));
}

void LiveTree::remove_child(Node* parent, uint32_t child, bool release) {
  uint32_t n = parent->count, k = shape_.key_width;
  PURE_ASSERT(child < n && !parent->leaf);
  Node** kids = children(parent);
  Cell* seps = separators(parent, shape_);
  std::memmove(kids + child, kids + child + 1, size_t(n - child - 1) * sizeof(Node*));
  if (n > 1) {
    uint32_t gone = child > 0 ? child - 1 : 0;  // the separator bounding the removed child
    if (release) release_separator(seps + size_t(gone) * k);
    std::memmove(seps + size_t(gone) * k, seps + size_t(gone + 1) * k, size_t(n - 2 - gone) * k * 8);
  }
  --parent->count;
}

void LiveTree::rebalance(Path& path, uint32_t level) {
  Node* node = path.node[level];
  bool leaf = node->leaf != 0;
  if (level == 0) {
    if (node->count == 0) {
      nodes_.drop(shape_, node);
      tree_ = {};
      clear_fingers();
    } else {
      collapse_root();
    }
    return;
  }
  uint32_t capacity = leaf ? shape_.leaf_capacity : shape_.inner_capacity;
  if (node->count >= std::max<uint32_t>(1, capacity / 4)) return;
  clear_fingers();
  Node* parent = path.node[level - 1];
  uint32_t at = path.index[level - 1];
  if (node->count == 0) {
    remove_child(parent, at, true);
    nodes_.drop(shape_, node);
    rebalance(path, level - 1);
    return;
  }
  uint32_t left_at;
  if (at + 1 < parent->count) left_at = at;
  else if (at > 0) left_at = at - 1;
  else return;
  Node** kids = children(parent);
  if (kids[left_at]->count + kids[left_at + 1]->count > capacity) return;
  Node* left = kids[left_at] = nodes_.make_private(shape_, kids[left_at]);
  Node* right = kids[left_at + 1] = nodes_.make_private(shape_, kids[left_at + 1]);
  uint32_t k = shape_.key_width;
  if (leaf) {
    std::memcpy(row_at(left, left->count, shape_.row_width), leaf_rows(right), size_t(right->count) * shape_.row_width * 8);
    left->count += right->count;
    remove_child(parent, left_at + 1, true);
  } else {
    // The parent's separator between the two comes down between their children.
    Cell* left_seps = separators(left, shape_);
    std::memcpy(left_seps + size_t(left->count - 1) * k, separators(parent, shape_) + size_t(left_at) * k, k * 8);
    std::memcpy(left_seps + size_t(left->count) * k, separators(right, shape_), size_t(right->count - 1) * k * 8);
    std::memcpy(children(left) + left->count, children(right), size_t(right->count) * sizeof(Node*));
    left->count += right->count;
    remove_child(parent, left_at + 1, false);
  }
  PURE_ASSERT(left->count <= capacity);
  right->count = 0;  // its contents moved to `left`
  nodes_.drop(shape_, right);
  rebalance(path, level - 1);
}

void LiveTree::collapse_root() {
  while (tree_.height > 0 && tree_.root->count == 1) {
    Node* old = tree_.root;
    tree_.root = children(old)[0];
    --tree_.height;
    nodes_.drop(shape_, old);  // an inner node with one child holds no separator
  }
}

const Cell* LiveTree::set(const Cell* key, uint32_t column, Cell value, Cell* old_value) {
  if (!tree_.root) return nullptr;
  Path path;
  uint32_t i = 0;
  Node* leaf = nullptr;
  if (shape_.sequence) {
    int64_t p = static_cast<int64_t>(key[0]);
    if (p < 0 || p >= tree_.count) return nullptr;
    sequence_path(p, path);
    i = path.index[tree_.height];
    make_path_private(path);
    leaf = path.node[tree_.height];
  } else if (hit_from(key)) {
    // The row the last search found: its path is still the tree's (no write since but set()s).
    i = hit_index_;
    leaf = hit_.node[tree_.height];
    if (!nodes_.is_private(leaf)) {
      make_path_private(hit_);  // (a finger on the leaf moves to its copy)
      leaf = hit_.node[tree_.height];
    }
  } else {
    hit_valid_ = false;
    bool found = false;
    leaf = leaf_finger_for(key, i, found);
    if (leaf && !found) return nullptr;
    if (!leaf) {
      i = descend(key, path, found);
      if (!found) return nullptr;
      make_path_private(path);
      leaf = path.node[tree_.height];
      set_finger(path);
      remember(path, i);
    }
  }
  Cell* row = row_at(leaf, i, shape_.row_width);
  *old_value = row[column];
  row[column] = value;
  return row;
}

void LiveTree::append(const Cell* row) {
  hit_valid_ = false;
  uint32_t w = shape_.row_width;
  if (!tree_.root) {
    tree_ = {nodes_.acquire(shape_, true), 0, 0};
  } else if (tree_.count == shape_.capacity_at(tree_.height)) {
    Node* root = nodes_.acquire(shape_, false);
    children(root)[0] = tree_.root;
    root->count = 1;
    tree_.root = root;
    ++tree_.height;
  }
  Node* node = tree_.root = nodes_.make_private(shape_, tree_.root);
  int64_t p = tree_.count;
  for (uint32_t h = tree_.height; h > 0; --h) {
    int64_t below = shape_.rows_below(h);
    uint32_t at = static_cast<uint32_t>(p / below);
    p %= below;
    Node** slot = &children(node)[at];
    if (at == node->count) {
      *slot = nodes_.acquire(shape_, h == 1);
      ++node->count;
    } else {
      *slot = nodes_.make_private(shape_, *slot);
    }
    node = *slot;
  }
  std::memcpy(row_at(node, node->count, w), row, w * 8);
  ++node->count;
  ++tree_.count;
}

bool LiveTree::pop(Cell* old_row) {
  hit_valid_ = false;
  if (tree_.count == 0) return false;
  Path path;
  sequence_path(tree_.count - 1, path);
  make_path_private(path);
  Node* leaf = path.node[tree_.height];
  std::memcpy(old_row, row_at(leaf, path.index[tree_.height], shape_.row_width), shape_.row_width * 8);
  --leaf->count;
  --tree_.count;
  for (uint32_t level = tree_.height; level > 0 && path.node[level]->count == 0; --level) {
    nodes_.drop(shape_, path.node[level]);
    --path.node[level - 1]->count;
  }
  if (tree_.root->count == 0) {
    nodes_.drop(shape_, tree_.root);
    tree_ = {};
    return true;
  }
  while (tree_.height > 0 && tree_.count <= shape_.capacity_at(tree_.height - 1)) {
    Node* old = tree_.root;
    tree_.root = children(old)[0];
    --tree_.height;
    nodes_.drop(shape_, old);
  }
  return true;
}

}  // namespace pure::rt::store
