// runtime/store_reference.cpp — the reference store: std::map rows, an undo log, copying publish.
// It is the model the B+tree store is tested against; it must not depend on the B+tree code.
#include "runtime/store_reference.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

namespace pure::rt {
namespace {

using Row = std::vector<Cell>;

// Orders full keys column by column as store.h defines (Int signed, Bool 0<1, Text bytes).
struct KeyLess {
  const ListSchema* schema;
  bool operator()(const Row& a, const Row& b) const { return compare(a.data(), b.data(), schema->key_width()) < 0; }
  int compare(const Cell* a, const Cell* b, uint32_t n) const {
    for (uint32_t i = 0; i < n; ++i) {
      int c = 0;
      if (schema->key[i] == ColType::Text) {
        c = text_compare(reinterpret_cast<const Text*>(a[i]), reinterpret_cast<const Text*>(b[i]));
      } else {
        int64_t x = static_cast<int64_t>(a[i]), y = static_cast<int64_t>(b[i]);
        c = x < y ? -1 : (x > y ? 1 : 0);
      }
      if (c != 0) return c;
    }
    return 0;
  }
};

using RowMap = std::map<Row, Row, KeyLess>;

ColType column_type(const ListSchema& s, uint32_t column) {
  return column < s.key_width() ? s.key[column] : s.fields[column - s.key_width()];
}

// The rows of one list; owns nothing by itself (the owner decides how texts are held).
struct ListRows {
  explicit ListRows(const ListSchema* s) : rows(KeyLess{s}) {}
  RowMap rows;                    // keyed lists: key -> full row
  std::vector<Row> sequence;      // sequences: position -> fields
};

class RefCursor final : public Cursor {
 public:
  RefCursor(const ListSchema* s, const ListRows* r, RowMap::const_iterator it, uint32_t prefix_n, Row prefix,
            bool has_hi, int64_t hi, int64_t pos)
      : schema_(s), rows_(r), it_(it), prefix_n_(prefix_n), prefix_(std::move(prefix)), has_hi_(has_hi), hi_(hi),
        pos_(pos) {}
  bool valid() const override {
    if (schema_->is_sequence) return pos_ >= 0 && pos_ < static_cast<int64_t>(rows_->sequence.size()) && (!has_hi_ || pos_ < hi_);
    if (it_ == rows_->rows.end()) return false;
    if (prefix_n_ && KeyLess{schema_}.compare(it_->first.data(), prefix_.data(), prefix_n_) != 0) return false;
    if (has_hi_ && static_cast<int64_t>(it_->first[0]) >= hi_) return false;
    return true;
  }
  const Cell* row() const override {
    return schema_->is_sequence ? rows_->sequence[pos_].data() : it_->second.data();
  }
  int64_t position() const override { return schema_->is_sequence ? pos_ : -1; }
  void next() override {
    if (schema_->is_sequence) ++pos_;
    else ++it_;
  }

 private:
  const ListSchema* schema_;
  const ListRows* rows_;
  RowMap::const_iterator it_;
  uint32_t prefix_n_;
  Row prefix_;
  bool has_hi_;
  int64_t hi_;
  int64_t pos_;
};

// A slice, the obvious way: every row of the list is tested, and the matching ones are kept in
// the slice's order. The model for the B+tree's one-descent slices.
class RefSliceCursor final : public Cursor {
 public:
  RefSliceCursor(const ListSchema* s, const ListRows* r, const Slice& slice) {
    auto within = [&](const Cell* key, int64_t position) {
      if (s->is_sequence) return !slice.bounded || (position >= slice.lo && position < slice.hi);
      if (slice.prefix_len && KeyLess{s}.compare(key, slice.prefix, slice.prefix_len) != 0) return false;
      if (!slice.bounded) return true;
      const Cell* k = key + slice.prefix_len;
      if (s->key[slice.prefix_len] == ColType::Text) {
        auto text = [](Cell c) { return reinterpret_cast<const Text*>(c); };
        return text_compare(text(*k), text(static_cast<Cell>(slice.lo))) >= 0 &&
               text_compare(text(*k), text(static_cast<Cell>(slice.hi))) < 0;
      }
      return static_cast<int64_t>(*k) >= slice.lo && static_cast<int64_t>(*k) < slice.hi;
    };
    if (s->is_sequence) {
      for (size_t p = 0; p < r->sequence.size(); ++p)
        if (within(nullptr, static_cast<int64_t>(p))) rows_.push_back({r->sequence[p].data(), static_cast<int64_t>(p)});
    } else {
      for (const auto& [key, row] : r->rows)
        if (within(key.data(), -1)) rows_.push_back({row.data(), -1});
    }
    if (slice.reverse) std::reverse(rows_.begin(), rows_.end());
    if (slice.from) {  // a resumed walk: drop the rows before that key or position
      auto passed = [&](const Entry& e) {
        int64_t p = static_cast<int64_t>(*slice.from);
        int c = s->is_sequence ? (e.position < p ? -1 : e.position > p) : KeyLess{s}.compare(e.row, slice.from, s->key_width());
        return slice.reverse ? c > 0 : c < 0;
      };
      size_t n = 0;
      while (n < rows_.size() && passed(rows_[n])) ++n;
      rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }
  bool valid() const override { return at_ < rows_.size(); }
  const Cell* row() const override { return rows_[at_].row; }
  int64_t position() const override { return at_ < rows_.size() ? rows_[at_].position : -1; }
  void next() override { ++at_; }

 private:
  struct Entry {
    const Cell* row;
    int64_t position;
  };
  std::vector<Entry> rows_;
  size_t at_ = 0;
};

class RefReader : public ListWriter {
 public:
  RefReader(const ListSchema* s, ListRows* r) : schema_(s), rows_(r) {}
  const ListSchema& schema() const override { return *schema_; }
  int64_t count() const override {
    return schema_->is_sequence ? rows_->sequence.size() : rows_->rows.size();
  }
  const Cell* find(const Cell* key) const override {
    if (schema_->is_sequence) {
      int64_t p = static_cast<int64_t>(key[0]);
      return p >= 0 && p < count() ? rows_->sequence[p].data() : nullptr;
    }
    auto it = rows_->rows.find(Row(key, key + schema_->key_width()));
    return it == rows_->rows.end() ? nullptr : it->second.data();
  }
  std::unique_ptr<Cursor> scan() const override {
    return std::make_unique<RefCursor>(schema_, rows_, rows_->rows.begin(), 0, Row{}, false, 0, 0);
  }
  std::unique_ptr<Cursor> prefix(const Cell* prefix, uint32_t n) const override {
    if (schema_->is_sequence) {
      int64_t p = static_cast<int64_t>(prefix[0]);
      return std::make_unique<RefCursor>(schema_, rows_, rows_->rows.end(), 0, Row{}, true, p + 1, p < 0 ? count() : p);
    }
    Row low(prefix, prefix + n);
    auto it = std::find_if(rows_->rows.begin(), rows_->rows.end(), [&](const auto& kv) {
      return KeyLess{schema_}.compare(kv.first.data(), low.data(), n) >= 0;
    });
    return std::make_unique<RefCursor>(schema_, rows_, it, n, low, false, 0, 0);
  }
  std::unique_ptr<Cursor> range(int64_t lo, int64_t hi) const override {
    if (schema_->is_sequence) {
      return std::make_unique<RefCursor>(schema_, rows_, rows_->rows.end(), 0, Row{}, true, hi, lo < 0 ? 0 : lo);
    }
    auto it = std::find_if(rows_->rows.begin(), rows_->rows.end(),
                           [&](const auto& kv) { return static_cast<int64_t>(kv.first[0]) >= lo; });
    return std::make_unique<RefCursor>(schema_, rows_, it, 0, Row{}, true, hi, 0);
  }
  std::unique_ptr<Cursor> slice(const Slice& s) const override { return std::make_unique<RefSliceCursor>(schema_, rows_, s); }
  const Cell* first() const override {
    if (schema_->is_sequence) return rows_->sequence.empty() ? nullptr : rows_->sequence.front().data();
    return rows_->rows.empty() ? nullptr : rows_->rows.begin()->second.data();
  }
  const Cell* last() const override {
    if (schema_->is_sequence) return rows_->sequence.empty() ? nullptr : rows_->sequence.back().data();
    return rows_->rows.empty() ? nullptr : rows_->rows.rbegin()->second.data();
  }
  // Writes are only reachable through the live store (RefList overrides them).
  bool put(const Cell*) override { return false; }
  bool set_field(const Cell*, uint32_t, Cell) override { return false; }
  bool remove(const Cell*) override { return false; }
  int64_t append(const Cell*) override { return -1; }
  bool pop() override { return false; }
  uint64_t shape_version() const override { return 0; }

 protected:
  const ListSchema* schema_;
  ListRows* rows_;
};

// A frozen private text for snapshots: never counted, never shared, freed by any thread.
Text* frozen_text(const Text* t) {
  auto* copy = static_cast<Text*>(std::malloc(sizeof(Text) + t->len));
  copy->rc = 1;
  copy->flags = kTextStored | (t->flags & (kTextAscii | kTextNotAscii) ? t->flags & (kTextAscii | kTextNotAscii)
                                                                        : ascii_flags(t->view()));
  copy->pad = 0;
  copy->len = t->len;
  copy->cap = t->len;
  if (t->len) std::memcpy(copy->bytes, t->bytes, t->len);
  return copy;
}

class RefSnapshot final : public Snapshot {
 public:
  RefSnapshot(const std::vector<ListSchema>& schemas, const std::vector<std::unique_ptr<ListRows>>& live, uint64_t gen)
      : schemas_(schemas), generation_(gen) {
    for (size_t i = 0; i < live.size(); ++i) {
      rows_.push_back(std::make_unique<ListRows>(&schemas_[i]));
      if (schemas_[i].is_sequence) {
        for (const Row& r : live[i]->sequence) rows_.back()->sequence.push_back(freeze(schemas_[i], r));
      } else {
        for (const auto& [k, r] : live[i]->rows) {
          Row row = freeze(schemas_[i], r);
          rows_.back()->rows.emplace(Row(row.begin(), row.begin() + schemas_[i].key_width()), row);
        }
      }
    }
    for (size_t i = 0; i < rows_.size(); ++i) readers_.push_back(std::make_unique<RefReader>(&schemas_[i], rows_[i].get()));
  }
  ~RefSnapshot() override {
    for (Text* t : texts_) std::free(t);
  }
  size_t list_count() const override { return readers_.size(); }
  const ListReader& list(size_t i) const override { return *readers_[i]; }
  uint64_t generation() const override { return generation_; }

 private:
  Row freeze(const ListSchema& s, const Row& r) {
    Row out = r;
    for (uint32_t c = 0; c < s.row_width(); ++c) {
      if (column_type(s, c) == ColType::Text) {
        Text* t = frozen_text(reinterpret_cast<const Text*>(r[c]));
        texts_.push_back(t);
        out[c] = reinterpret_cast<Cell>(t);
      }
    }
    return out;
  }
  std::vector<ListSchema> schemas_;
  std::vector<std::unique_ptr<ListRows>> rows_;
  std::vector<std::unique_ptr<RefReader>> readers_;
  std::vector<Text*> texts_;
  uint64_t generation_;
};

class RefStore;

// What an undo entry restores: a keyed row (absent or present), or a sequence change.
struct Undo {
  enum Kind : uint8_t { KeyedRow, SequenceAppend, SequencePop, SequenceRow } kind;
  size_t list;
  Row key;        // keyed: the key; sequences: {position}
  bool had_old;   // keyed: the row existed before
  Row old;        // the row before (owns its field texts until commit/rollback)
  bool owns_key = false;  // keyed remove: the entry holds the key texts the map held
};

class RefList final : public RefReader {
 public:
  RefList(RefStore* store, size_t index, const ListSchema* s, ListRows* r)
      : RefReader(s, r), store_(store), index_(index) {}
  bool put(const Cell* row) override;
  bool set_field(const Cell* key, uint32_t field, Cell value) override;
  bool remove(const Cell* key) override;
  int64_t append(const Cell* fields) override;
  bool pop() override;
  uint64_t shape_version() const override { return shape_version_; }

 private:
  Row own_row(const Cell* cells) const {
    Row r(cells, cells + schema_->row_width());
    for (uint32_t c = 0; c < r.size(); ++c)
      if (column_type(*schema_, c) == ColType::Text) r[c] = reinterpret_cast<Cell>(text_store_copy(reinterpret_cast<const Text*>(r[c])));
    return r;
  }
  RefStore* store_;
  size_t index_;
  uint64_t shape_version_ = 0;
};

class RefStore final : public Store {
 public:
  explicit RefStore(std::vector<ListSchema> lists) : schemas_(std::move(lists)) {
    for (size_t i = 0; i < schemas_.size(); ++i) {
      rows_.push_back(std::make_unique<ListRows>(&schemas_[i]));
      lists_.push_back(std::make_unique<RefList>(this, i, &schemas_[i], rows_.back().get()));
    }
  }
  ~RefStore() override {
    release_deferred();
    for (Undo& u : undo_) finish(u);
    for (size_t i = 0; i < rows_.size(); ++i) {
      for (auto& kv : rows_[i]->rows) {
        release_fields(i, kv.second);
        release_key(i, kv.first);
      }
      for (auto& r : rows_[i]->sequence) release_fields(i, r);
    }
  }
  size_t list_count() const override { return lists_.size(); }
  ListWriter& list(size_t i) override { return *lists_[i]; }
  void begin() override { in_event_ = true; }
  void commit() override {
    for (Undo& u : undo_) finish(u);
    undo_.clear();
    in_event_ = false;
    release_deferred();
  }
  void rollback() override {
    for (size_t i = undo_.size(); i-- > 0;) undo_one(undo_[i]);
    undo_.clear();
    in_event_ = false;
    release_deferred();
  }
  bool in_event() const override { return in_event_; }
  size_t savepoint() const override { return undo_.size(); }
  void rollback_to(size_t mark) override {
    for (size_t i = undo_.size(); i-- > mark;) undo_one(undo_[i]);
    undo_.erase(undo_.begin() + static_cast<std::ptrdiff_t>(mark), undo_.end());
  }
  std::shared_ptr<const Snapshot> publish() override {
    release_deferred();
    return std::make_shared<RefSnapshot>(schemas_, rows_, generation_++);
  }
  MemoryUse memory() const override {
    MemoryUse m;
    for (size_t i = 0; i < rows_.size(); ++i) {
      int64_t n = lists_[i]->count();
      m.state_bytes += n * schemas_[i].row_width() * 8;
    }
    return m;
  }

  // Called by RefList: the old row leaves the live list; keep its texts alive as store.h promises.
  void record(Undo u) {
    if (in_event_) undo_.push_back(std::move(u));
    else deferred_.push_back(std::move(u));
  }
  // Field cells of a row own their texts; key cells of a keyed row alias the map key's texts.
  void release_fields(size_t list, const Row& r) {
    const ListSchema& s = schemas_[list];
    for (uint32_t c = s.key_width(); c < r.size(); ++c)
      if (column_type(s, c) == ColType::Text) text_store_release(reinterpret_cast<Text*>(r[c]));
  }
  void release_key(size_t list, const Row& key) {
    const ListSchema& s = schemas_[list];
    for (uint32_t c = 0; c < s.key_width(); ++c)
      if (s.key[c] == ColType::Text) text_store_release(reinterpret_cast<Text*>(key[c]));
  }

 private:
  // Commit of one entry: what it kept alive for rollback is no longer needed.
  void finish(Undo& u) {
    if (u.had_old) release_fields(u.list, u.old);
    if (u.owns_key) release_key(u.list, u.key);
  }
  void release_deferred() {
    for (Undo& u : deferred_) finish(u);
    deferred_.clear();
  }
  void undo_one(Undo& u) {
    ListRows& r = *rows_[u.list];
    switch (u.kind) {
      case Undo::KeyedRow: {
        if (u.owns_key) {  // a remove: the row comes back with the key texts the entry held
          r.rows.emplace(u.key, std::move(u.old));
          break;
        }
        auto it = r.rows.find(u.key);
        release_fields(u.list, it->second);
        if (u.had_old) {
          it->second = std::move(u.old);
        } else {
          Row key = it->first;
          r.rows.erase(it);
          release_key(u.list, key);
        }
        break;
      }
      case Undo::SequenceAppend:
        release_fields(u.list, r.sequence.back());
        r.sequence.pop_back();
        break;
      case Undo::SequencePop: r.sequence.push_back(std::move(u.old)); break;
      case Undo::SequenceRow:
        release_fields(u.list, r.sequence[u.key[0]]);
        r.sequence[u.key[0]] = std::move(u.old);
        break;
    }
    u.old.clear();
  }

  std::vector<ListSchema> schemas_;
  std::vector<std::unique_ptr<ListRows>> rows_;
  std::vector<std::unique_ptr<RefList>> lists_;
  std::vector<Undo> undo_;
  std::vector<Undo> deferred_;
  bool in_event_ = false;
  uint64_t generation_ = 1;
};

bool RefList::put(const Cell* row) {
  uint32_t kw = schema_->key_width();
  auto it = rows_->rows.find(Row(row, row + kw));
  bool fresh = it == rows_->rows.end();
  Undo u{Undo::KeyedRow, index_, {}, !fresh, {}};
  Row owned = own_row(row);
  if (fresh) {
    // The map key owns the key texts; the row's key cells alias them.
    Row owned_key(owned.begin(), owned.begin() + kw);
    u.key = owned_key;
    rows_->rows.emplace(std::move(owned_key), std::move(owned));
    ++shape_version_;
  } else {
    for (uint32_t c = 0; c < kw; ++c) {  // keep the existing key texts; drop the new copies
      if (schema_->key[c] == ColType::Text) text_store_release(reinterpret_cast<Text*>(owned[c]));
      owned[c] = it->first[c];
    }
    u.key = it->first;
    u.old = std::move(it->second);
    it->second = std::move(owned);
  }
  store_->record(std::move(u));
  return fresh;
}

bool RefList::set_field(const Cell* key, uint32_t field, Cell value) {
  uint32_t column = schema_->key_width() + field;
  Row* target = nullptr;
  Undo u{Undo::KeyedRow, index_, {}, true, {}};
  if (schema_->is_sequence) {
    int64_t p = static_cast<int64_t>(key[0]);
    if (p < 0 || p >= count()) return false;
    target = &rows_->sequence[p];
    u.kind = Undo::SequenceRow;
    u.key = {key[0]};
  } else {
    auto it = rows_->rows.find(Row(key, key + schema_->key_width()));
    if (it == rows_->rows.end()) return false;
    target = &it->second;
    u.key = it->first;
  }
  // The undo entry takes the whole old row; the live row gets fresh references to its texts.
  u.old = *target;
  Row fresh = *target;
  for (uint32_t c = schema_->key_width(); c < fresh.size(); ++c)
    if (column_type(*schema_, c) == ColType::Text && c != column) text_store_retain(reinterpret_cast<Text*>(fresh[c]));
  fresh[column] = column_type(*schema_, column) == ColType::Text
                      ? reinterpret_cast<Cell>(text_store_copy(reinterpret_cast<const Text*>(value)))
                      : value;
  *target = std::move(fresh);
  store_->record(std::move(u));
  return true;
}

bool RefList::remove(const Cell* key) {
  if (schema_->is_sequence) return false;
  auto it = rows_->rows.find(Row(key, key + schema_->key_width()));
  if (it == rows_->rows.end()) return false;
  Undo u{Undo::KeyedRow, index_, it->first, true, std::move(it->second), true};
  rows_->rows.erase(it);
  ++shape_version_;
  store_->record(std::move(u));
  return true;
}

int64_t RefList::append(const Cell* fields) {
  if (!schema_->is_sequence) return -1;
  rows_->sequence.push_back(own_row(fields));
  ++shape_version_;
  if (store_->in_event()) store_->record(Undo{Undo::SequenceAppend, index_, {}, false, {}});
  return count() - 1;
}

bool RefList::pop() {
  if (!schema_->is_sequence || rows_->sequence.empty()) return false;
  Undo u{Undo::SequencePop, index_, {}, true, std::move(rows_->sequence.back())};
  rows_->sequence.pop_back();
  ++shape_version_;
  store_->record(std::move(u));
  return true;
}

}  // namespace

std::unique_ptr<Store> make_reference_store(std::vector<ListSchema> lists) {
  return std::make_unique<RefStore>(std::move(lists));
}

}  // namespace pure::rt
