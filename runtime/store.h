// runtime/store.h — stored lists: the state of a module, changed by events, read by queries
// through snapshots. This header is the whole interface the VM and the tools see; how lists are
// kept (B+trees, node reuse, fingers) stays behind it.
// Depends on runtime/text.h only.
//
// Vocabulary
//  * A row is key cells followed by field cells, each cell 8 bytes (Cell).
//    Int: int64 bits. Num: IEEE double bits. Bool: 0 or 1. Text: a Text* owned by the store.
//  * A keyed list orders rows by their key cells, compared column by column: Int as signed,
//    Bool as 0 < 1, Text by text_compare. Num is never a key column.
//  * A sequence has one implicit Int key: the position 0..count-1. It grows by append and
//    shrinks by pop (the last row); rows are addressed by position.
//  * The owner (one thread) writes. Writes between begin() and commit()/rollback() form one
//    event: rollback() restores exactly the rows as they were at begin(); rollback_to(mark)
//    those as they were when savepoint() gave mark.
//  * publish() returns a Snapshot in O(1). A snapshot reads the lists as they were when it was
//    published, for as long as it is held, from any thread, while the owner keeps writing.
//
// Text ownership: put/append/set_field take a borrowed Text* and keep text_store_copy(t).
// A Text* read out of the live lists stays valid until the owner's next commit() or rollback()
// (texts replaced inside an event are released then, never earlier). A Text* read out of a
// snapshot stays valid while the snapshot is held.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "text.h"

namespace pure::rt {

using Cell = uint64_t;

enum class ColType : uint8_t { Int, Num, Bool, Text };

struct ListSchema {
  std::string name;
  bool is_sequence = false;
  std::vector<ColType> key;     // key columns; empty for a sequence (its key is the position)
  std::vector<ColType> fields;  // field columns
  // cells in one row: for a sequence the position is not stored in the row
  uint32_t key_width() const { return is_sequence ? 0 : static_cast<uint32_t>(key.size()); }
  uint32_t row_width() const { return key_width() + static_cast<uint32_t>(fields.size()); }
};

// Walks rows in key order. Rows it returns are valid until the cursor moves or the list is
// written. A cursor over the live list must not be used after a write to that list, except
// set_field on any row, which a cursor survives (it then reads either value).
class Cursor {
 public:
  virtual ~Cursor() = default;
  virtual bool valid() const = 0;
  virtual const Cell* row() const = 0;     // key cells then field cells
  virtual int64_t position() const = 0;    // sequences: the row's position; keyed lists: -1
  virtual void next() = 0;
  // The current row, moving past it; nullptr when done. One call per row for hot loops; the
  // row stays valid as row() says, although the cursor has moved.
  virtual const Cell* take() {
    if (!valid()) return nullptr;
    const Cell* r = row();
    next();
    return r;
  }
  // Up to max rows that follow one another in memory (row_width cells apart), starting with the
  // current one; the cursor moves past them. Returns how many (0 when done). The rows stay
  // valid while the list is not written (for a snapshot: while it is held).
  virtual size_t take_run(const Cell** first, size_t max) {
    const Cell* r = max ? take() : nullptr;
    if (!r) return 0;
    *first = r;
    return 1;
  }
};

// Part of a list (a slice): the rows whose first prefix_len key cells equal prefix and, when
// bounded, whose next key cell k has lo <= k < hi in key order. That key column is an Int (lo and
// hi are values) or a Text (lo and hi are the bits of two Text* cells, compared by text_compare,
// which the caller keeps alive as long as the cursor). A sequence takes no prefix (its one key is
// the position) and is bounded by position. reverse walks from the last such row to the first:
// the cursor's next() then moves backwards. from resumes a walk: when set (a key of the slice: its
// prefix, within its bounds), the cursor starts at that full key (a sequence: that position) or,
// when it is gone, at the slice's next row past it in the walk's direction, as if it had walked there (the VM goes on with an event's walk after a
// `try`'d inner event that changed the list failed and was undone).
struct Slice {
  const Cell* prefix = nullptr;
  uint32_t prefix_len = 0;
  bool bounded = false;
  int64_t lo = 0;
  int64_t hi = 0;
  bool reverse = false;
  const Cell* from = nullptr;  // key_width cells (a sequence: one, the position), or none
};

// Read access to one list, live or in a snapshot.
class ListReader {
 public:
  virtual ~ListReader() = default;
  virtual const ListSchema& schema() const = 0;
  virtual int64_t count() const = 0;
  // Keyed: the row with this full key. Sequence: key[0] is the position. nullptr if absent.
  virtual const Cell* find(const Cell* key) const = 0;
  // All rows in key order.
  virtual std::unique_ptr<Cursor> scan() const = 0;
  // Rows whose first n key cells equal prefix (1 <= n <= key columns), in key order.
  virtual std::unique_ptr<Cursor> prefix(const Cell* prefix, uint32_t n) const = 0;
  // prefix(), reusing spare (a cursor an earlier call returned) when it can: loops that slice
  // the same list again and again then allocate nothing.
  virtual std::unique_ptr<Cursor> prefix_again(std::unique_ptr<Cursor> spare, const Cell* prefix, uint32_t n) const {
    return this->prefix(prefix, n);
  }
  // The rows whose first key cell equals key (an Int first key column), as one array of rows
  // row_width cells apart: true with *n rows at *first (*n is 0 when no row has that key),
  // valid while the reader is (for a snapshot: while it is held). false when this reader keeps no
  // flat form of the list (docs/store.md, "Flat form"): then prefix() gives the same rows.
  // A snapshot builds its flat form once it has been asked often enough (counting the calls).
  virtual bool prefix_rows(Cell key, const Cell** first, size_t* n) const { return false; }
  // The flat form's dense index, once it is ready and dense (native code looks a prefix up in it
  // itself): key k's rows are starts[k - base] .. starts[k - base + 1] - 1 (rows of `width`
  // cells from `rows`) for k - base < span (unsigned), none otherwise; valid as prefix_rows' rows.
  struct DenseRows {
    const Cell* rows;
    const uint32_t* starts;
    int64_t base;
    uint64_t span;
    uint64_t width;
  };
  virtual bool dense_rows(DenseRows* out) const { return false; }
  // Rows whose first key cell k satisfies lo <= k < hi (Int first key only), in key order. A
  // Text first key is bounded with slice() (Slice: bounded, no prefix).
  virtual std::unique_ptr<Cursor> range(int64_t lo, int64_t hi) const = 0;
  // The rows of a slice, forwards or backwards: one descent to its first (or last) row, then
  // the leaf chain. first()/last() of a slice is the first row this cursor gives.
  virtual std::unique_ptr<Cursor> slice(const Slice& s) const = 0;
  virtual const Cell* first() const = 0;  // nullptr when empty
  virtual const Cell* last() const = 0;
};

// Write access to one live list. Only the owner thread calls these.
class ListWriter : public ListReader {
 public:
  // Keyed: insert or replace the row (row_width cells). Returns true if the key was new.
  virtual bool put(const Cell* row) = 0;
  // Sets one field (0-based among the fields) of the row with this key. false if absent.
  virtual bool set_field(const Cell* key, uint32_t field, Cell value) = 0;
  // Keyed: removes the row with this key. false if absent.
  virtual bool remove(const Cell* key) = 0;
  // Sequence: appends the fields as a new last row; returns its position.
  virtual int64_t append(const Cell* fields) = 0;
  // Sequence: removes the last row. false if empty.
  virtual bool pop() = 0;
  // Incremented by every insert, remove, append and pop (not by set_field or replace);
  // the VM uses it to refuse structural changes to a list it is iterating.
  virtual uint64_t shape_version() const = 0;
};

struct MemoryUse {
  uint64_t state_bytes = 0;      // what the rows need: count * row cells * 8 + text bytes
  uint64_t structure_bytes = 0;  // nodes, slack, free-node pools: everything else allocated
  uint64_t flat_bytes = 0;       // flat forms held by this store's snapshots (not in the two above)
};

class Snapshot;

// The stored lists of one module.
class Store {
 public:
  virtual ~Store() = default;
  virtual size_t list_count() const = 0;
  virtual ListWriter& list(size_t i) = 0;

  virtual void begin() = 0;     // start an event
  virtual void commit() = 0;    // keep its changes
  virtual void rollback() = 0;  // undo its changes
  virtual bool in_event() const = 0;
  // Inside an event: a mark of how far its undo log has come, and the undoing of every change
  // made since that mark (the event goes on; what it changed before the mark stays). An event
  // that calls another with `try` marks before the inner one runs and, when it fails, undoes only
  // the inner one's changes. Texts the undone changes put in are released as rollback() does.
  virtual size_t savepoint() const = 0;
  virtual void rollback_to(size_t savepoint) = 0;

  // O(1): the current committed state, readable from any thread while held. Call outside events.
  // Until the next write or begin(), the store itself holds the newest snapshot, and publish()
  // returns that one again: nothing has changed since.
  virtual std::shared_ptr<const Snapshot> publish() = 0;
  virtual MemoryUse memory() const = 0;
};

class Snapshot {
 public:
  virtual ~Snapshot() = default;
  virtual size_t list_count() const = 0;
  virtual const ListReader& list(size_t i) const = 0;
  virtual uint64_t generation() const = 0;
};

// The store used by pure-run and pure-serve.
std::unique_ptr<Store> make_store(std::vector<ListSchema> lists);

}  // namespace pure::rt
