// runtime/store_nodes.cpp — copy-on-write, retirement and reuse of B+tree nodes (see store_nodes.h).
// Depends on store_btree.h; never touches the Store interface.
#include "runtime/store_nodes.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "runtime/memory.h"

namespace pure::rt::store {

void Registry::publish(SnapshotRecord* record, std::vector<Retired>& pending, std::vector<Retired>& free_now) {
  std::lock_guard<std::mutex> guard(lock);
  SnapshotRecord* held = newest;
  if (held) {
    // Everything in pending was retired after `held` was published, so it can read it iff it
    // is not older than the node.
    if (held->retired.empty() && !pending.empty() && pending.front().made <= held->generation &&
        std::all_of(pending.begin(), pending.end(), [&](const Retired& r) { return r.made <= held->generation; })) {
      held->retired.swap(pending);
    } else {
      for (const Retired& r : pending) (r.made <= held->generation ? held->retired : free_now).push_back(r);
    }
  } else {
    free_now.insert(free_now.end(), pending.begin(), pending.end());
  }
  pending.clear();
  record->older = newest;
  if (newest) newest->newer = record;
  newest = record;
}

void Registry::release(SnapshotRecord* record) {
  std::lock_guard<std::mutex> guard(lock);
  SnapshotRecord* older = record->older;
  if (older) older->newer = record->newer;
  if (record->newer) record->newer->older = older;
  else newest = older;
  size_t before = returned.size();
  if (!older) {
    if (returned.empty()) returned.swap(record->retired);
    else returned.insert(returned.end(), record->retired.begin(), record->retired.end());
  } else {
    for (const Retired& r : record->retired)
      (r.made <= older->generation ? older->retired : returned).push_back(r);
  }
  record->retired.clear();
  if (returned.size() > before) {
    uint64_t nodes = 0;  // returned_total counts nodes, not retired text references
    for (size_t i = before; i < returned.size(); ++i) nodes += returned[i].kind != Retired::kText;
    returned_total.fetch_add(nodes, std::memory_order_relaxed);
    has_returned.store(true, std::memory_order_release);
  }
}

Nodes::Nodes(const std::vector<ListShape>& shapes, Registry& registry)
    : shapes_(shapes), registry_(registry), pools_(shapes.size() * 2) {}

Nodes::~Nodes() {
  drain_returned();
  take_back(pending_);
  for (size_t i = 0; i < pools_.size(); ++i)
    for (Node* n : pools_[i].spare) free_node(shapes_[i / 2], n, i % 2 == 1);
}

Node* Nodes::acquire(const ListShape& s, bool leaf) {
  Pool& p = pool(s.list_index, leaf);
  ++p.demand;
  Node* n;
  if (!p.spare.empty()) {
    n = p.spare.back();
    p.spare.pop_back();
    ++stats_.reused;
  } else {
    size_t bytes = node_size(s, leaf);
    n = static_cast<Node*>(std::malloc(bytes));
    if (!n) throw std::bad_alloc();
    // counted, never refused here: a write must not stop half-way; the VM checks the meter after
    memory_note(charged_size(bytes));
    stats_.node_bytes += bytes;
    ++stats_.allocated;
  }
  n->made = generation_;
  n->count = 0;
  n->leaf = leaf ? 1 : 0;
  return n;
}

Node* Nodes::make_private(const ListShape& s, Node* node) {
  if (node->made == generation_) return node;
  bool leaf = node->leaf != 0;
  Node* copy = acquire(s, leaf);
  copy->count = node->count;
  if (leaf) {
    std::memcpy(leaf_rows(copy), leaf_rows(node), size_t(node->count) * s.row_width * 8);
  } else {
    std::memcpy(children(copy), children(node), size_t(node->count) * sizeof(Node*));
    if (node->count > 1)
      std::memcpy(separators(copy, s), separators(node, s), size_t(node->count - 1) * s.key_width * 8);
  }
  // The copy takes over the old node's text references (see store_nodes.h, "Texts"): the old
  // node, retired, only lends them to the snapshots that can still read it.
  ++stats_.copied;
  ++stats_.retired;
  pending_.push_back({node, node->made, s.list_index, leaf ? Retired::kLeaf : Retired::kInner});
  return copy;
}

void Nodes::drop(const ListShape& s, Node* node) {
  if (node->made == generation_) {
    give_back(s, node, node->leaf != 0);
  } else {
    ++stats_.retired;
    pending_.push_back({node, node->made, s.list_index, node->leaf ? Retired::kLeafOwning : Retired::kInnerOwning});
  }
}

void Nodes::retire_text(Text* t) {
  if (!t || t->immortal()) return;
  bool held;
  {
    std::lock_guard<std::mutex> guard(registry_.lock);
    held = registry_.newest != nullptr;
  }
  // No snapshot held: no retired node can be read, and only the owner publishes new ones.
  if (!held) {
    text_store_release(t);
    return;
  }
  pending_.push_back({reinterpret_cast<Node*>(t), 0, 0, Retired::kText});
}

void Nodes::publish(SnapshotRecord* record) {
  record->generation = generation_;
  scratch_.clear();
  registry_.publish(record, pending_, scratch_);
  ++generation_;  // every node now in the live tree is shared with `record`
  take_back(scratch_);
}

void Nodes::drain_returned() {
  if (!registry_.has_returned.load(std::memory_order_acquire)) return;
  scratch_.clear();
  {
    std::lock_guard<std::mutex> guard(registry_.lock);
    scratch_.swap(registry_.returned);
    registry_.has_returned.store(false, std::memory_order_relaxed);
  }
  // Size each pool by recent demand: keep as many spares as nodes were acquired lately.
  for (Pool& p : pools_) {
    p.limit = std::max<uint64_t>(8, p.demand);
    p.demand /= 2;
  }
  take_back(scratch_);
}

void Nodes::take_back(std::vector<Retired>& nodes) {
  for (const Retired& r : nodes) {
    if (r.kind == Retired::kText) {
      text_store_release(reinterpret_cast<Text*>(r.node));
      continue;
    }
    const ListShape& s = shapes_[r.list];
    if (r.kind == Retired::kLeafOwning || r.kind == Retired::kInnerOwning) release_texts(s, r.node);
    give_back(s, r.node, r.is_leaf());
  }
  nodes.clear();
}

static std::atomic<bool> g_node_reuse{true};

void Nodes::give_back(const ListShape& s, Node* node, bool leaf) {
  Pool& p = pool(s.list_index, leaf);
  if (p.spare.size() < p.limit && g_node_reuse.load(std::memory_order_relaxed)) p.spare.push_back(node);
  else free_node(s, node, leaf);
}

void Nodes::free_node(const ListShape& s, Node* node, bool leaf) {
  stats_.node_bytes -= node_size(s, leaf);
  memory_credit(charged_size(node_size(s, leaf)));
  ++stats_.freed;
  std::free(node);
}

void Nodes::release_texts(const ListShape& s, Node* node) {
  if (node->leaf) {
    if (s.text_columns.empty()) return;
    Cell* rows = leaf_rows(node);
    for (uint32_t i = 0; i < node->count; ++i)
      for (uint32_t c : s.text_columns) text_store_release(reinterpret_cast<Text*>(rows[i * s.row_width + c]));
  } else {
    if (s.text_key_columns.empty() || node->count < 2) return;
    Cell* seps = separators(node, s);
    for (uint32_t i = 0; i + 1 < node->count; ++i)
      for (uint32_t c : s.text_key_columns) text_store_release(reinterpret_cast<Text*>(seps[i * s.key_width + c]));
  }
}

void Nodes::free_tree(const ListShape& s, Node* node, uint32_t height) {
  if (!node) return;
  if (height > 0)
    for (uint32_t i = 0; i < node->count; ++i) free_tree(s, children(node)[i], height - 1);
  release_texts(s, node);
  free_node(s, node, height == 0);
}

NodeStats Nodes::stats() const {
  NodeStats out = stats_;
  for (const Pool& p : pools_) out.spare_nodes += p.spare.size();
  for (const Retired& r : pending_) out.pending_nodes += r.kind != Retired::kText;
  return out;
}

}  // namespace pure::rt::store

namespace pure::rt {
void set_node_reuse(bool on) { store::g_node_reuse.store(on, std::memory_order_relaxed); }
}  // namespace pure::rt
