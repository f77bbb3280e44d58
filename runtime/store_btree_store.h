// runtime/store_btree_store.h — private: the B+tree store's constructor and its test hooks.
// Depends on runtime/store.h and store_nodes.h only.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/store.h"
#include "runtime/store_nodes.h"

namespace pure::rt {

// Bytes of one node (leaf or inner) before rounding to whole rows/entries.
inline constexpr uint32_t kDefaultNodeBytes = 2048;

std::unique_ptr<Store> make_btree_store(std::vector<ListSchema> lists, uint32_t node_bytes = kDefaultNodeBytes);

// What tests and benchmarks may look at inside a B+tree store.
struct StoreStats {
  store::NodeStats nodes;
  uint64_t returned_total = 0;  // retired nodes handed back by released snapshots (or at publish)
  uint64_t undo_entries = 0;
  uint64_t descents = 0;  // root-to-leaf searches of the live lists' keyed trees (reads and writes)
  uint64_t finger_scans = 0;  // searches of the live lists that looked at their fingers first
};
// false if `store` is not a B+tree store.
bool btree_store_stats(const Store& store, StoreStats& out);

// The B+tree checker over every live list (store::check_tree): "" when all hold, else the first
// problem; "not a B+tree store" for another store. Tests call it after each batch.
std::string btree_store_check(const Store& store);

// Whether retired nodes are kept for reuse (the default) or freed as they come back. Only
// bench/store turns it off, to measure what reuse gives (the seeds' change 107). Process-wide.
void set_node_reuse(bool on);

}  // namespace pure::rt
