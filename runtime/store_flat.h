// runtime/store_flat.h — private: the flat form of one snapshot list (docs/store.md, "Flat
// form"): the rows in key order as one array, and an index from the first key cell to the run of
// rows that start with it. A snapshot never changes, so its flat form is built once (after the
// list has been sought by prefix often enough) and dropped with the snapshot; the next write
// makes a new snapshot, which starts without one.
// Depends on store_btree.h only.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/store_btree.h"

namespace pure::rt::store {

// Lists that can have a flat form: keyed, first key column Int, no text anywhere in the row
// (rows are copied cell for cell, and the VM takes runs only of text-free rows).
bool flat_eligible(const ListShape& s);

class FlatList {
 public:
  ~FlatList();
  FlatList(const FlatList&) = delete;
  FlatList& operator=(const FlatList&) = delete;
  // The rows whose first key cell is k: *n rows (0 when none) from *first, row_width cells apart.
  void rows_of(Cell k, const Cell** first, size_t* n) const {
    size_t at;
    if (dense_) {
      uint64_t i = static_cast<uint64_t>(k) - static_cast<uint64_t>(base_);
      if (i >= span_) {
        *n = 0;
        return;
      }
      at = static_cast<size_t>(i);
    } else {
      at = sparse_index(static_cast<int64_t>(k));
      if (at == SIZE_MAX) {
        *n = 0;
        return;
      }
    }
    uint32_t from = starts_[at], to = starts_[at + 1];
    *first = rows_ + size_t(from) * width_;
    *n = to - from;
  }
  uint64_t bytes() const { return bytes_; }
  bool dense() const { return dense_; }
  // dense(): the index as rows_of reads it (ListReader::DenseRows)
  void dense_index(const Cell** rows, const uint32_t** starts, int64_t* base, uint64_t* span, uint32_t* width) const {
    *rows = rows_;
    *starts = starts_.data();
    *base = base_;
    *span = span_;
    *width = width_;
  }

  // Builds the flat form of tree t, or nullptr when the process-wide budget has no room for it
  // (or memory ran out, or the list is too long for 32-bit row numbers).
  static std::unique_ptr<FlatList> build(const ListShape& s, const TreeRoot& t);

 private:
  FlatList() = default;
  size_t sparse_index(int64_t k) const;

  uint32_t width_ = 0;
  bool dense_ = true;
  int64_t base_ = 0;         // dense: the first key of starts_[0]
  uint64_t span_ = 0;        // dense: keys base_ .. base_ + span_ - 1 have an entry
  Cell* rows_ = nullptr;     // count * width_ cells, in key order (malloc'd: store_flat.cpp alloc_rows)
  std::vector<uint32_t> starts_;  // dense: span_ + 1 entries; sparse: keys_.size() + 1
  std::vector<int64_t> keys_;     // sparse: the distinct first keys, ascending
  uint64_t bytes_ = 0;            // charged against the budget until destroyed
};

// The flat forms' process-wide budget (bytes held by every flat form at once; 0: none are
// built) and how many prefix seeks a snapshot list takes before it builds one:
// max(min_seeks, count / rows_per_seek). PURE_FLAT_BUDGET=BYTES in the environment sets the
// budget at start (PURE_FLAT_BUDGET=0 turns flat forms off, for comparisons).
struct FlatPolicy {
  uint64_t budget = 256ull << 20;
  // A build copies each row once (about 10 AArch64 instructions a row, bench/bfs's 30000-row
  // edges); a tree seek costs about 840 more than a flat one: count / 64 seeks cost about what the
  // build does, so a list built then has paid at most about twice what it would have either way.
  uint64_t min_seeks = 256;
  uint64_t rows_per_seek = 64;
  uint64_t seeks_needed(int64_t count) const {
    uint64_t by_rows = rows_per_seek ? static_cast<uint64_t>(count) / rows_per_seek : 0;
    return by_rows > min_seeks ? by_rows : min_seeks;
  }
};
FlatPolicy flat_policy();
void set_flat_policy(const FlatPolicy& p);
uint64_t flat_bytes_in_use();  // every flat form now held, in this process
uint64_t flat_builds();        // flat forms built in this process (tests, stats)

}  // namespace pure::rt::store
