// runtime/store_nodes.h — private: where B+tree nodes come from and where they go. Copy-on-write
// of shared nodes, retirement while snapshots may read them, and reuse once none can.
// Depends on store_btree.h only; knows nothing of undo logs or the Store interface.
//
// Lifetimes. A node is in exactly one place: the live tree, the owner's pending list (retired
// since the last publish), the retired list of one held snapshot, the registry's returned list,
// or a spare pool. A retired node N made in generation m and replaced in generation r can be
// read by snapshots with generation in [m, r-1]. It hangs on the newest held snapshot in that
// range; when that snapshot is released, N moves to the next older held snapshot if that one is
// still >= m, otherwise to `returned`, which the owner drains into its spare pools (releasing
// the node's texts there, on the owner thread). Retired entries carry made/list/kind, so handing
// them down never reads the (cold) node itself.
//
// Texts. Each text cell of the live tree owns one reference. Copying a shared node moves those
// references to the copy (no count changes: a leaf of a wide row holds up to a hundred texts, and
// touching each one's count was a cache miss per text); the retired original owns none and is
// reused without looking at its texts. So a reference that leaves the live tree (a replaced or
// removed cell, a dropped separator) may still be read through a retired node by a held
// snapshot: it retires like a node (Retired::kText, made 0: any snapshot published before now may
// read it) and is released when those snapshots are gone, or at once when none is held.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/store_btree.h"

namespace pure::rt::store {

struct Retired {
  // kind: a leaf or inner node whose texts moved to its copy (it owns none), a shared node that
  // left the tree with its texts (it still owns them), or one text reference (node is a Text*).
  enum Kind : uint32_t { kInner = 0, kLeaf = 1, kInnerOwning = 2, kLeafOwning = 3, kText = 4 };
  Node* node;
  uint64_t made;
  uint32_t list;
  uint32_t kind;
  bool is_leaf() const { return kind == kLeaf || kind == kLeafOwning; }
};

// One held snapshot in the registry's chain (ordered by generation, oldest first).
struct SnapshotRecord {
  uint64_t generation = 0;
  SnapshotRecord* older = nullptr;
  SnapshotRecord* newer = nullptr;
  std::vector<Retired> retired;  // nodes the newest snapshot able to read them is this one
};

// Shared by the owner and every snapshot. The lock is taken by publish and by the release of a
// snapshot, never by reads.
struct Registry {
  std::mutex lock;
  SnapshotRecord* newest = nullptr;
  std::vector<Retired> returned;  // nodes no snapshot can read; the owner drains them
  std::atomic<bool> has_returned{false};
  std::atomic<uint64_t> returned_total{0};  // for tests and stats

  // Owner: `pending` goes to the newest held snapshot (or to free_now), then `record` is linked.
  void publish(SnapshotRecord* record, std::vector<Retired>& pending, std::vector<Retired>& free_now);
  // Any thread: unlinks the record and hands its retired nodes down the chain.
  void release(SnapshotRecord* record);
};

struct NodeStats {
  uint64_t allocated = 0;  // nodes taken from malloc
  uint64_t reused = 0;     // nodes taken from a spare pool
  uint64_t freed = 0;      // nodes given back to free
  uint64_t copied = 0;     // copy-on-write copies
  uint64_t retired = 0;    // nodes retired while a snapshot might read them
  uint64_t node_bytes = 0; // bytes of every node allocated and not freed
  uint64_t spare_nodes = 0;
  uint64_t pending_nodes = 0;
};

// Owner-side node management for all lists of one store.
class Nodes {
 public:
  Nodes(const std::vector<ListShape>& shapes, Registry& registry);
  ~Nodes();
  Nodes(const Nodes&) = delete;
  Nodes& operator=(const Nodes&) = delete;

  uint64_t generation() const { return generation_; }
  bool is_private(const Node* n) const { return n->made == generation_; }

  Node* acquire(const ListShape& s, bool leaf);         // empty private node
  Node* make_private(const ListShape& s, Node* node);   // the node itself, or a private copy
  // The node left the live tree. A private node's contents must have been moved out already;
  // a shared one keeps its texts until it comes back.
  void drop(const ListShape& s, Node* node);
  // A text reference left the live tree: released now when no snapshot is held, else when every
  // snapshot published so far is gone (see "Texts" above).
  void retire_text(Text* t);

  // Publishing: hands pending nodes to the registry, links the record, starts a new generation.
  void publish(SnapshotRecord* record);
  // Takes back what released snapshots returned (cheap when nothing came back).
  void drain_returned();

  // Frees a whole tree (store teardown): releases its texts too.
  void free_tree(const ListShape& s, Node* node, uint32_t height);
  NodeStats stats() const;
  // The bytes of the live nodes alone: O(1), for what is read after every event (stats() counts the
  // spare and pending lists too).
  uint64_t node_bytes() const { return stats_.node_bytes; }
  Registry& registry() { return registry_; }

 private:
  struct Pool {
    std::vector<Node*> spare;
    uint64_t demand = 0;  // nodes acquired recently (halved at each drain)
    uint64_t limit = 8;   // spares kept; the excess is freed
  };
  Pool& pool(uint32_t list, bool leaf) { return pools_[list * 2 + (leaf ? 1 : 0)]; }
  size_t node_size(const ListShape& s, bool leaf) const { return leaf ? s.leaf_bytes : s.inner_bytes; }
  void release_texts(const ListShape& s, Node* node);
  void give_back(const ListShape& s, Node* node, bool leaf);
  void free_node(const ListShape& s, Node* node, bool leaf);
  void take_back(std::vector<Retired>& nodes);

  const std::vector<ListShape>& shapes_;
  Registry& registry_;
  uint64_t generation_ = 1;
  std::vector<Pool> pools_;
  std::vector<Retired> pending_;
  std::vector<Retired> scratch_;
  NodeStats stats_;
};

}  // namespace pure::rt::store
