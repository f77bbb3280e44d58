// runtime/store_btree_check.cpp — the B+tree checker, SQLite's integrity_check for one list:
// key order inside leaves and across them, separators bounding their children, node fill,
// every leaf at one depth, the row count, sequences full but for their last leaf, and the
// generations (a node is never newer than the store; a private node's parent is private too).
// Tests call it after every batch of operations; it only reads.
#include <string>

#include "runtime/store_btree.h"

namespace pure::rt::store {

namespace {

struct Checker {
  const ListShape& s;
  uint64_t generation;
  std::string problem;
  int64_t rows = 0;
  const Cell* previous = nullptr;  // last key seen, in key order
  uint32_t leaves_seen = 0;
  bool seen_partial_leaf = false;  // sequences: only the last leaf may be partial

  bool fail(const std::string& what, uint32_t depth) {
    if (problem.empty()) problem = "list '" + s.schema.name + "' at depth " + std::to_string(depth) + ": " + what;
    return false;
  }

  // low/high: the separators bounding this subtree (null: unbounded).
  bool node(const Node* n, uint32_t height, uint32_t depth, const Cell* low, const Cell* high, uint64_t parent_made) {
    if (!n) return fail("null child", depth);
    if (n->made > generation) return fail("node made in generation " + std::to_string(n->made) + ", after the store's " + std::to_string(generation), depth);
    if (parent_made != generation && n->made == generation) return fail("a private node under a shared parent", depth);
    if ((height == 0) != (n->leaf == 1)) return fail(height == 0 ? "an inner node where leaves belong" : "a leaf above the leaf level", depth);
    if (n->leaf) return leaf(n, depth, low, high);
    // underfull nodes are allowed (a merge happens only when two siblings fit in one), but an
    // inner root has two children at least (a root with one is collapsed) and no node is empty
    if (n->count < (depth == 0 ? 2u : 1u) || n->count > s.inner_capacity)
      return fail("inner node holds " + std::to_string(n->count) + " children", depth);
    Node* const* kids = children(n);
    const Cell* seps = s.sequence ? nullptr : separators(n, s);
    for (uint32_t i = 0; i < n->count; ++i) {
      const Cell* lo = i == 0 ? low : seps + (i - 1) * s.key_width;
      const Cell* hi = i + 1 == n->count ? high : seps + i * s.key_width;
      if (!s.sequence && i > 0 && i + 1 < n->count && s.compare(lo, hi, s.key_width) >= 0)
        return fail("separators out of order", depth);
      if (!node(kids[i], height - 1, depth + 1, s.sequence ? nullptr : lo, s.sequence ? nullptr : hi, n->made)) return false;
    }
    return true;
  }

  bool leaf(const Node* n, uint32_t depth, const Cell* low, const Cell* high) {
    if (n->count > s.leaf_capacity) return fail("leaf holds " + std::to_string(n->count) + " rows", depth);
    if (n->count == 0 && depth > 0) return fail("an empty leaf below the root", depth);
    if (s.sequence) {
      if (seen_partial_leaf) return fail("a partial sequence leaf before the last one", depth);
      if (n->count < s.leaf_capacity) seen_partial_leaf = true;
    }
    const Cell* rows_at = leaf_rows(n);
    for (uint32_t i = 0; i < n->count; ++i) {
      const Cell* key = rows_at + static_cast<size_t>(i) * s.row_width;
      if (!s.sequence) {
        if (previous && s.compare(previous, key, s.key_width) >= 0) return fail("keys out of order at row " + std::to_string(rows), depth);
        if (low && s.compare(key, low, s.key_width) < 0) return fail("a key below its separator", depth);
        if (high && s.compare(key, high, s.key_width) >= 0) return fail("a key at or above the next separator", depth);
        previous = key;
      }
      ++rows;
    }
    ++leaves_seen;
    return true;
  }
};

}  // namespace

std::string check_tree(const ListShape& s, const TreeRoot& t, uint64_t generation) {
  Checker c{s, generation, {}};
  if (!t.root) return t.count == 0 && t.height == 0 ? "" : "list '" + s.schema.name + "': no root but a count or height";
  if (t.height > kMaxHeight) return "list '" + s.schema.name + "': height " + std::to_string(t.height);
  if (!c.node(t.root, t.height, 0, nullptr, nullptr, generation)) return c.problem;
  if (c.rows != t.count)
    return "list '" + s.schema.name + "': count says " + std::to_string(t.count) + ", leaves hold " + std::to_string(c.rows);
  return "";
}

}  // namespace pure::rt::store
