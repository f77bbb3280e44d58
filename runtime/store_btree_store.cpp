// runtime/store_btree_store.cpp — the Store behind make_store(): B+tree lists, an undo log for
// events, O(1) snapshots. Depends on the private store headers; the VM sees only store.h.
//
// Text ownership: a row in a node owns its texts. put/append/set_field copy borrowed texts in
// (TextSlabs::copy: short texts live in the store's slabs, store_texts.h). A replaced or removed
// row (or field) moves into the undo log, which releases it at commit, or puts it back at
// rollback; outside events it waits in `deferred_` until the next commit, rollback or publish.
// Every text count changes on the owner thread.
#include "runtime/store_btree_store.h"

#include <algorithm>
#include <stdexcept>

#include "base/assert.h"
#include "base/limits.h"
#include "runtime/memory.h"
#include "runtime/store_flat.h"
#include "runtime/store_live_tree.h"
#include "runtime/store_texts.h"

namespace pure::rt {
namespace {

using store::ListShape;
using store::LiveTree;
using store::Node;
using store::TreeRoot;

// Everything nodes live in. Shared by the store and its snapshots, so a snapshot stays readable
// even if the store is destroyed first; the last holder frees the nodes.
struct Core {
  std::vector<ListShape> shapes;
  store::TextSlabs texts;  // the short texts of every row (before `nodes`: outlives their release)
  store::Registry registry;
  store::Nodes nodes;
  std::vector<std::unique_ptr<LiveTree>> trees;
  std::atomic<uint64_t> flat_bytes{0};  // the flat forms of this store's held snapshots

  Core(const std::vector<ListSchema>& lists, uint32_t node_bytes)
      : shapes(make_shapes(lists, node_bytes)), nodes(shapes, registry) {
    for (const ListShape& s : shapes) trees.push_back(std::make_unique<LiveTree>(s, nodes));
  }
  ~Core() {
    for (size_t i = 0; i < trees.size(); ++i) nodes.free_tree(shapes[i], trees[i]->tree().root, trees[i]->tree().height);
  }
  static std::vector<ListShape> make_shapes(const std::vector<ListSchema>& lists, uint32_t node_bytes) {
    std::vector<ListShape> out;
    for (size_t i = 0; i < lists.size(); ++i) out.emplace_back(lists[i], static_cast<uint32_t>(i), node_bytes);
    return out;
  }
};

// One list of a snapshot: a root that never changes, shared with the live tree until the owner
// copies over it.
class SnapshotList final : public ListReader {
 public:
  SnapshotList(const ListShape* shape, TreeRoot tree, std::atomic<uint64_t>* flat_bytes)
      : shape_(shape), tree_(tree), flat_bytes_(flat_bytes), flat_state_(initial_state(*shape)) {}
  SnapshotList(const SnapshotList& other)  // (never holds a flat form yet: lists are made first)
      : shape_(other.shape_), tree_(other.tree_), flat_bytes_(other.flat_bytes_), flat_state_(initial_state(*shape_)) {}
  ~SnapshotList() override {
    if (flat_) flat_bytes_->fetch_sub(flat_->bytes(), std::memory_order_relaxed);
  }
  bool prefix_rows(Cell key, const Cell** first, size_t* n) const override {
    uint8_t state = flat_state_.load(std::memory_order_acquire);
    if (__builtin_expect(state == kFlatReady, 1)) {
      flat_->rows_of(key, first, n);
      return true;
    }
    return state == kFlatCounting && count_and_build(key, first, n);
  }
  bool dense_rows(DenseRows* out) const override {
    if (flat_state_.load(std::memory_order_acquire) != kFlatReady || !flat_->dense()) return false;
    uint32_t width;
    flat_->dense_index(&out->rows, &out->starts, &out->base, &out->span, &width);
    out->width = width;
    return true;
  }
  const ListSchema& schema() const override { return shape_->schema; }
  int64_t count() const override { return tree_.count; }
  const Cell* find(const Cell* key) const override {
    // Fingers per reader thread: any leaf of this (immutable) tree is a valid hint for any thread,
    // and each thread writes its own cache line, so concurrent queries do not bounce one line.
    std::atomic<const Node*>& finger = fingers_[reader_slot()].leaf;
    const Node* hint = finger.load(std::memory_order_relaxed);
    const Node* before = hint;
    const Cell* row = store::tree_find(*shape_, tree_, key, &hint);
    if (hint != before) finger.store(hint, std::memory_order_relaxed);
    return row;
  }
  std::unique_ptr<Cursor> scan() const override { return store::tree_scan(*shape_, tree_); }
  std::unique_ptr<Cursor> prefix(const Cell* prefix, uint32_t n) const override {
    return store::tree_prefix(*shape_, tree_, prefix, n);
  }
  std::unique_ptr<Cursor> prefix_again(std::unique_ptr<Cursor> spare, const Cell* prefix, uint32_t n) const override {
    return store::tree_prefix_again(*shape_, tree_, std::move(spare), prefix, n);
  }
  std::unique_ptr<Cursor> range(int64_t lo, int64_t hi) const override { return store::tree_range(*shape_, tree_, lo, hi); }
  std::unique_ptr<Cursor> slice(const Slice& s) const override { return store::tree_slice(*shape_, tree_, s); }
  const Cell* first() const override { return store::tree_first(*shape_, tree_); }
  const Cell* last() const override { return store::tree_last(*shape_, tree_); }

 private:
  static constexpr size_t kReaderSlots = 8;
  struct alignas(64) FingerSlot {
    std::atomic<const Node*> leaf{nullptr};
  };
  // Threads take slots round robin on first use; two threads sharing a slot stay correct.
  static size_t reader_slot() {
    static std::atomic<size_t> next{0};
    thread_local size_t slot = next.fetch_add(1, std::memory_order_relaxed) % kReaderSlots;
    return slot;
  }
  // The flat form (store_flat.h): counting prefix seeks, being built by one thread, ready (flat_
  // is set, and never changes again), or never (not eligible, or the budget had no room).
  enum : uint8_t { kFlatCounting, kFlatBuilding, kFlatReady, kFlatNever };
  static uint8_t initial_state(const ListShape& s) { return store::flat_eligible(s) ? kFlatCounting : kFlatNever; }
  // One more prefix seek; at max(min_seeks, count / 64) of them (FlatPolicy) one thread builds the flat form
  // (the others go on seeking the tree meanwhile). A build copies every row once, about what
  // a 64th as many seeks cost, each a descent with a cache miss or more per level.
  // (out of line: the ready path above then saves no registers)
  __attribute__((noinline)) bool count_and_build(Cell key, const Cell** first, size_t* n) const {
    uint64_t seen = seeks_.load(std::memory_order_relaxed) + 1;
    seeks_.store(seen, std::memory_order_relaxed);  // (a lost count between threads is harmless)
    if (seen < store::flat_policy().seeks_needed(tree_.count)) return false;
    uint8_t expect = kFlatCounting;
    if (!flat_state_.compare_exchange_strong(expect, kFlatBuilding, std::memory_order_acq_rel)) return false;
    std::unique_ptr<store::FlatList> f = store::FlatList::build(*shape_, tree_);
    if (!f) {
      flat_state_.store(kFlatNever, std::memory_order_release);
      return false;
    }
    flat_bytes_->fetch_add(f->bytes(), std::memory_order_relaxed);
    flat_ = std::move(f);
    flat_state_.store(kFlatReady, std::memory_order_release);
    flat_->rows_of(key, first, n);
    return true;
  }

  const ListShape* shape_;
  TreeRoot tree_;
  mutable FingerSlot fingers_[kReaderSlots];
  std::atomic<uint64_t>* flat_bytes_;
  mutable std::atomic<uint8_t> flat_state_;
  mutable std::atomic<uint64_t> seeks_{0};
  mutable std::unique_ptr<store::FlatList> flat_;
};

class BTreeSnapshot final : public Snapshot {
 public:
  explicit BTreeSnapshot(std::shared_ptr<Core> core) : core_(std::move(core)) {
    lists_.reserve(core_->trees.size());
    for (size_t i = 0; i < core_->trees.size(); ++i) lists_.emplace_back(&core_->shapes[i], core_->trees[i]->tree(), &core_->flat_bytes);
  }
  ~BTreeSnapshot() override { core_->registry.release(&record_); }
  size_t list_count() const override { return lists_.size(); }
  const ListReader& list(size_t i) const override { return lists_[i]; }
  uint64_t generation() const override { return record_.generation; }
  store::SnapshotRecord& record() { return record_; }

 private:
  std::shared_ptr<Core> core_;
  std::vector<SnapshotList> lists_;
  store::SnapshotRecord record_;
};

// One entry of the undo log; its cells live in UndoLog::cells.
struct UndoEntry {
  enum Kind : uint8_t { Inserted, Replaced, Removed, FieldSet, Appended, Popped };
  Kind kind;
  uint32_t list;
  uint32_t column;  // FieldSet: the row column changed
  uint32_t offset;  // first cell in UndoLog::cells
};

class BTreeStore;

class BTreeList final : public ListWriter {
 public:
  BTreeList(BTreeStore& store, const ListShape& shape, LiveTree& tree, store::TextSlabs& texts)
      : store_(store), shape_(shape), tree_(tree), texts_(texts), owned_(shape.row_width + 1), old_(shape.row_width + 1) {}
  const ListSchema& schema() const override { return shape_.schema; }
  int64_t count() const override { return tree_.tree().count; }
  // The finger moves on reads too; it is owner-only state, like the live list itself.
  const Cell* find(const Cell* key) const override { return tree_.find(key); }
  std::unique_ptr<Cursor> scan() const override { return store::tree_scan(shape_, tree_.tree()); }
  std::unique_ptr<Cursor> prefix(const Cell* prefix, uint32_t n) const override {
    return store::tree_prefix(shape_, tree_.tree(), prefix, n);
  }
  std::unique_ptr<Cursor> prefix_again(std::unique_ptr<Cursor> spare, const Cell* prefix, uint32_t n) const override {
    return store::tree_prefix_again(shape_, tree_.tree(), std::move(spare), prefix, n);
  }
  std::unique_ptr<Cursor> range(int64_t lo, int64_t hi) const override { return store::tree_range(shape_, tree_.tree(), lo, hi); }
  std::unique_ptr<Cursor> slice(const Slice& s) const override { return store::tree_slice(shape_, tree_.tree(), s); }
  const Cell* first() const override { return store::tree_first(shape_, tree_.tree()); }
  const Cell* last() const override { return store::tree_last(shape_, tree_.tree()); }

  bool put(const Cell* row) override;
  bool set_field(const Cell* key, uint32_t field, Cell value) override;
  bool remove(const Cell* key) override;
  int64_t append(const Cell* fields) override;
  bool pop() override;
  uint64_t shape_version() const override { return shape_version_; }

  // Undo and commit, called by the store. release_*: the cells were made by the event being
  // undone, so no snapshot ever saw them. retire_*: the cells left the committed state, and a
  // held snapshot may still read them through a retired node (store_nodes.h, "Texts").
  void undo(const UndoEntry& entry, Cell* cells);
  void release_row(const Cell* row) const {
    for (uint32_t c : shape_.text_columns) text_store_release(reinterpret_cast<Text*>(row[c]));
  }
  void release_cell(uint32_t column, Cell value) const {
    if (is_text(column)) text_store_release(reinterpret_cast<Text*>(value));
  }
  void retire_row(store::Nodes& nodes, const Cell* row) const {
    for (uint32_t c : shape_.text_columns) nodes.retire_text(reinterpret_cast<Text*>(row[c]));
  }
  void retire_cell(store::Nodes& nodes, uint32_t column, Cell value) const {
    if (is_text(column)) nodes.retire_text(reinterpret_cast<Text*>(value));
  }
  int64_t text_bytes() const { return text_bytes_; }

 private:
  bool is_text(uint32_t column) const { return shape_.column_is_text[column]; }
  int64_t row_text_bytes(const Cell* row) const {
    int64_t n = 0;
    for (uint32_t c : shape_.text_columns) n += reinterpret_cast<const Text*>(row[c])->len;
    return n;
  }
  int64_t cell_text_bytes(uint32_t column, Cell value) const {
    return is_text(column) ? reinterpret_cast<const Text*>(value)->len : 0;
  }
  void own_texts(Cell* row) const {
    for (uint32_t c : shape_.text_columns)
      row[c] = reinterpret_cast<Cell>(texts_.copy(reinterpret_cast<const Text*>(row[c])));
  }
  void row_left(const Cell* row, bool restoring);

  BTreeStore& store_;
  const ListShape& shape_;
  LiveTree& tree_;
  store::TextSlabs& texts_;
  uint64_t shape_version_ = 0;
  int64_t text_bytes_ = 0;
  std::vector<Cell> owned_, old_;  // one row each: the incoming row and the one it replaced
  friend class BTreeStore;
};

class BTreeStore final : public Store {
 public:
  BTreeStore(std::vector<ListSchema> lists, uint32_t node_bytes)
      : core_(std::make_shared<Core>(lists, node_bytes)) {
    for (size_t i = 0; i < core_->trees.size(); ++i)
      lists_.push_back(std::make_unique<BTreeList>(*this, core_->shapes[i], *core_->trees[i], core_->texts));
  }
  ~BTreeStore() override {
    if (in_event_) rollback();
    release_deferred();
    memory_credit(undo_charged_);
  }
  size_t list_count() const override { return lists_.size(); }
  ListWriter& list(size_t i) override { return *lists_[i]; }
  std::string check() const {
    for (size_t i = 0; i < core_->trees.size(); ++i) {
      std::string problem = store::check_tree(core_->shapes[i], core_->trees[i]->tree(), core_->nodes.generation());
      if (!problem.empty()) return problem;
    }
    return "";
  }

  void begin() override {
    PURE_ASSERT(!in_event_);  // begin() inside an event
    newest_.reset();  // an event usually writes; what the snapshot alone held comes back now
    core_->nodes.drain_returned();  // nodes released snapshots handed back serve this event's copies
    in_event_ = true;
  }
  void commit() override {
    for (const UndoEntry& e : undo_) {
      BTreeList& list = *lists_[e.list];
      const Cell* cells = undo_cells_.data() + e.offset;
      switch (e.kind) {
        case UndoEntry::Replaced:
        case UndoEntry::Removed:
        case UndoEntry::Popped: list.retire_row(core_->nodes, cells); break;
        case UndoEntry::FieldSet:
          list.retire_cell(core_->nodes, e.column, cells[list.shape_.key_width > 0 ? list.shape_.key_width : 1]);
          break;
        default: break;
      }
    }
    finish_event();
    check_after_commit();
  }
  // Checked builds (PURE_CHECKS: Debug, sanitizers, fuzzing) run the B+tree checker after every
  // commit on each list small enough (limits::kCheckedCommitRows) that the check stays cheap
  // next to the event; a broken invariant stops the process there, naming the list and depth.
  void check_after_commit() const {
#if PURE_CHECKS
    for (size_t i = 0; i < core_->trees.size(); ++i) {
      if (core_->trees[i]->tree().count > limits::kCheckedCommitRows) continue;
      std::string problem = store::check_tree(core_->shapes[i], core_->trees[i]->tree(), core_->nodes.generation());
      if (!problem.empty()) assert_failed(problem.c_str(), __FILE__, __LINE__);
    }
#endif
  }
  void rollback() override {
    for (size_t i = undo_.size(); i-- > 0;) lists_[undo_[i].list]->undo(undo_[i], undo_cells_.data() + undo_[i].offset);
    finish_event();
  }
  bool in_event() const override { return in_event_; }
  size_t savepoint() const override {
    PURE_ASSERT(in_event_);  // a savepoint outside an event
    return undo_.size();
  }
  void rollback_to(size_t mark) override {
    PURE_ASSERT(in_event_ && mark <= undo_.size());
    if (mark == undo_.size()) return;
    for (size_t i = undo_.size(); i-- > mark;) lists_[undo_[i].list]->undo(undo_[i], undo_cells_.data() + undo_[i].offset);
    undo_cells_.resize(undo_[mark].offset);  // the entries after the mark own the cells after its offset
    undo_.erase(undo_.begin() + static_cast<std::ptrdiff_t>(mark), undo_.end());
  }

  std::shared_ptr<const Snapshot> publish() override {
    PURE_ASSERT(!in_event_);  // publish() inside an event
    release_deferred();
    core_->nodes.drain_returned();
    // Nothing was written since the newest snapshot: it is the current state. (Each loop in
    // main publishes one; loops and queries between two events share it.)
    if (newest_) return newest_;
    auto snapshot = std::make_shared<BTreeSnapshot>(core_);
    core_->nodes.publish(&snapshot->record());
    newest_ = snapshot;
    return snapshot;
  }

  MemoryUse memory() const override {
    MemoryUse m;
    uint64_t row_bytes = 0;
    for (size_t i = 0; i < lists_.size(); ++i) {
      row_bytes += uint64_t(lists_[i]->count()) * core_->shapes[i].row_width * 8;
      m.state_bytes += lists_[i]->text_bytes();
    }
    m.state_bytes += row_bytes;
    uint64_t other = undo_cells_.capacity() * sizeof(Cell) + undo_.capacity() * sizeof(UndoEntry) +
                     deferred_.capacity() * sizeof(Text*);
    m.structure_bytes = core_->nodes.node_bytes() + other - row_bytes;
    m.flat_bytes = core_->flat_bytes.load(std::memory_order_relaxed);
    return m;
  }

  StoreStats stats() const {
    StoreStats s;
    s.nodes = core_->nodes.stats();
    s.returned_total = core_->registry.returned_total.load(std::memory_order_relaxed);
    s.undo_entries = undo_.size();
    for (const auto& tree : core_->trees) {
      s.descents += tree->descents();
      s.finger_scans += tree->finger_scans();
    }
    return s;
  }

  // Called by lists: the log keeps what the event replaced until commit or rollback.
  bool logging() const { return in_event_; }
  void log(UndoEntry::Kind kind, uint32_t list, uint32_t column, const Cell* a, uint32_t na, const Cell* b = nullptr,
           uint32_t nb = 0) {
    undo_.push_back({kind, list, column, static_cast<uint32_t>(undo_cells_.size())});
    undo_cells_.insert(undo_cells_.end(), a, a + na);
    if (nb) undo_cells_.insert(undo_cells_.end(), b, b + nb);  // reserve_log made the room
  }
  // Makes room in the log for one more entry of up to `cells` cells, before a list changes
  // anything: running out of memory then leaves the list as it was, and log() cannot fail.
  void reserve_log(uint32_t cells) {
    if (!in_event_) return;
    bool grew = false;
    if (undo_.size() == undo_.capacity()) {
      undo_.reserve(undo_.size() * 2 + 16);
      grew = true;
    }
    if (undo_cells_.size() + cells > undo_cells_.capacity()) {
      undo_cells_.reserve((undo_cells_.size() + cells) * 2 + 64);
      grew = true;
    }
    if (grew) settle_undo();
  }
  void defer(Text* t) { deferred_.push_back(t); }
  // Before every write: the newest snapshot no longer shows the current state. Holding it until
  // now cost nothing (publishing already made every node shared); letting it go before the
  // write means the nodes the write replaces need not wait for it.
  void wrote() {
    if (newest_) newest_.reset();
  }

 private:
  // The undo log counts against the memory budget (runtime/memory.h) like the rows it guards; a
  // log that grew large in one event is given back rather than kept for the next.
  uint64_t undo_bytes() const { return undo_.capacity() * sizeof(UndoEntry) + undo_cells_.capacity() * sizeof(Cell); }
  void settle_undo() {
    uint64_t now = undo_bytes();
    if (now > undo_charged_) memory_note(now - undo_charged_);
    else memory_credit(undo_charged_ - now);
    undo_charged_ = now;
  }
  void finish_event() {
    undo_.clear();
    undo_cells_.clear();
    if (undo_charged_ > (uint64_t{1} << 20)) {
      std::vector<UndoEntry>().swap(undo_);
      std::vector<Cell>().swap(undo_cells_);
      settle_undo();
    }
    in_event_ = false;
    release_deferred();
    core_->nodes.drain_returned();
  }
  void release_deferred() {
    for (Text* t : deferred_) core_->nodes.retire_text(t);  // rows that left outside events
    deferred_.clear();
  }

  std::shared_ptr<Core> core_;
  std::vector<std::unique_ptr<BTreeList>> lists_;
  std::vector<UndoEntry> undo_;
  std::vector<Cell> undo_cells_;
  std::vector<Text*> deferred_;
  uint64_t undo_charged_ = 0;  // bytes of the undo log charged to the memory meter
  bool in_event_ = false;
  std::shared_ptr<const Snapshot> newest_;  // the last snapshot published, until the next write
};

// A row left the live list outside an event: its texts wait for the next commit/rollback/publish.
void BTreeList::row_left(const Cell* row, bool) {
  for (uint32_t c : shape_.text_columns) store_.defer(reinterpret_cast<Text*>(row[c]));
}

bool BTreeList::put(const Cell* row) {
  store_.wrote();
  PURE_ASSERT(!shape_.sequence);  // put is for keyed lists
  store_.reserve_log(shape_.row_width);
  uint32_t w = shape_.row_width;
  Cell* owned = owned_.data();
  Cell* old = old_.data();
  std::memcpy(owned, row, w * 8);
  own_texts(owned);
  bool fresh = tree_.put(owned, old);
  text_bytes_ += row_text_bytes(owned);
  if (fresh) {
    ++shape_version_;
    if (store_.logging()) store_.log(UndoEntry::Inserted, shape_.list_index, 0, owned, shape_.key_width);
    return true;
  }
  text_bytes_ -= row_text_bytes(old);
  if (store_.logging()) store_.log(UndoEntry::Replaced, shape_.list_index, 0, old, w);
  else row_left(old, false);
  return false;
}

bool BTreeList::set_field(const Cell* key, uint32_t field, Cell value) {
  store_.wrote();
  if (field >= shape_.schema.fields.size()) throw std::out_of_range("store: set_field past the last field");
  uint32_t column = shape_.key_width + field;
  store_.reserve_log((shape_.key_width > 0 ? shape_.key_width : 1) + 1);
  bool text = is_text(column);
  Cell owned = text ? reinterpret_cast<Cell>(texts_.copy(reinterpret_cast<const Text*>(value))) : value;
  Cell old = 0;
  const Cell* row = tree_.set(key, column, owned, &old);
  if (!row) {
    if (text) text_store_release(reinterpret_cast<Text*>(owned));
    return false;
  }
  text_bytes_ += cell_text_bytes(column, owned) - cell_text_bytes(column, old);
  if (store_.logging()) {
    // The key is the row's own (its texts live as long as the row, which outlives this entry's undo).
    if (shape_.sequence) store_.log(UndoEntry::FieldSet, shape_.list_index, column, key, 1, &old, 1);
    else store_.log(UndoEntry::FieldSet, shape_.list_index, column, row, shape_.key_width, &old, 1);
  } else if (text) {
    store_.defer(reinterpret_cast<Text*>(old));
  }
  return true;
}

bool BTreeList::remove(const Cell* key) {
  store_.wrote();
  PURE_ASSERT(!shape_.sequence);  // remove is for keyed lists
  store_.reserve_log(shape_.row_width);
  uint32_t w = shape_.row_width;
  Cell* old = old_.data();
  if (!tree_.remove(key, old)) return false;
  ++shape_version_;
  text_bytes_ -= row_text_bytes(old);
  if (store_.logging()) store_.log(UndoEntry::Removed, shape_.list_index, 0, old, w);
  else row_left(old, false);
  return true;
}

int64_t BTreeList::append(const Cell* fields) {
  store_.wrote();
  PURE_ASSERT(shape_.sequence);  // append is for sequences
  store_.reserve_log(0);
  uint32_t w = shape_.row_width;
  Cell* owned = owned_.data();
  std::memcpy(owned, fields, w * 8);
  own_texts(owned);
  tree_.append(owned);
  text_bytes_ += row_text_bytes(owned);
  ++shape_version_;
  if (store_.logging()) store_.log(UndoEntry::Appended, shape_.list_index, 0, nullptr, 0);
  return count() - 1;
}

bool BTreeList::pop() {
  store_.wrote();
  PURE_ASSERT(shape_.sequence);  // pop is for sequences
  store_.reserve_log(shape_.row_width);
  uint32_t w = shape_.row_width;
  Cell* old = old_.data();
  if (!tree_.pop(old)) return false;
  ++shape_version_;
  text_bytes_ -= row_text_bytes(old);
  if (store_.logging()) store_.log(UndoEntry::Popped, shape_.list_index, 0, old, w);
  else row_left(old, false);
  return true;
}

void BTreeList::undo(const UndoEntry& entry, Cell* cells) {
  Cell* current = old_.data();
  switch (entry.kind) {
    case UndoEntry::Inserted:
      tree_.remove(cells, current);
      text_bytes_ -= row_text_bytes(current);
      release_row(current);
      ++shape_version_;
      break;
    case UndoEntry::Replaced:
      tree_.put(cells, current);
      text_bytes_ += row_text_bytes(cells) - row_text_bytes(current);
      release_row(current);
      break;
    case UndoEntry::Removed:
      tree_.put(cells, current);
      text_bytes_ += row_text_bytes(cells);
      ++shape_version_;
      break;
    case UndoEntry::FieldSet: {
      uint32_t key_cells = shape_.sequence ? 1 : shape_.key_width;
      Cell old = cells[key_cells], now = 0;
      tree_.set(cells, entry.column, old, &now);
      text_bytes_ += cell_text_bytes(entry.column, old) - cell_text_bytes(entry.column, now);
      release_cell(entry.column, now);
      break;
    }
    case UndoEntry::Appended:
      tree_.pop(current);
      text_bytes_ -= row_text_bytes(current);
      release_row(current);
      ++shape_version_;
      break;
    case UndoEntry::Popped:
      tree_.append(cells);
      text_bytes_ += row_text_bytes(cells);
      ++shape_version_;
      break;
  }
}

}  // namespace

std::unique_ptr<Store> make_btree_store(std::vector<ListSchema> lists, uint32_t node_bytes) {
  return std::make_unique<BTreeStore>(std::move(lists), node_bytes);
}

std::string btree_store_check(const Store& store) {
  auto* btree = dynamic_cast<const BTreeStore*>(&store);
  if (!btree) return "not a B+tree store";
  return btree->check();
}

bool btree_store_stats(const Store& store, StoreStats& out) {
  auto* btree = dynamic_cast<const BTreeStore*>(&store);
  if (!btree) return false;
  out = btree->stats();
  return true;
}

}  // namespace pure::rt
