// runtime/event_list.cpp — sequences as flat arrays; keyed lists as dense arrays or ordered trees.
#include "runtime/event_list.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <tuple>

#include "runtime/memory.h"

namespace pure::rt {

bool ListShape::has_text() const {
  for (ColType c : cols)
    if (c == ColType::Text) return true;
  return false;
}

int ListShape::compare_keys(const Cell* a, const Cell* b, uint32_t n) const {
  for (uint32_t i = 0; i < n; ++i)
    if (int c = compare_cell(i, a[i], b[i])) return c;
  return 0;
}

int ListShape::compare_cell(uint32_t col, Cell a, Cell b) const {
  switch (cols[col]) {
    case ColType::Text: return text_compare(reinterpret_cast<const Text*>(a), reinterpret_cast<const Text*>(b));
    case ColType::Num: {
      double x = std::bit_cast<double>(a), y = std::bit_cast<double>(b);
      return x == y ? 0 : (x < y ? -1 : 1);
    }
    default: {
      int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
      return x == y ? 0 : (x < y ? -1 : 1);
    }
  }
}

namespace {

// A keyed slice's bound (store.h: Slice) on the key cell after its prefix: an Int's values, or a
// Text's Text* cells.
bool bound_within(const ListShape& shape, const Cell* row, const Slice& s) {
  uint32_t n = s.prefix_len;
  return shape.compare_cell(n, row[n], static_cast<Cell>(s.lo)) >= 0 && shape.compare_cell(n, row[n], static_cast<Cell>(s.hi)) < 0;
}

}  // namespace

EventList::EventList(const ListShape* shape)
    : shape_(shape), width_(shape->width()), dense_(!shape->sequence && shape->key_count == 1 && shape->cols[0] == ColType::Int),
      tree_(KeyLess{shape}), cap_rows_(width_ ? 0 : INT64_MAX),
      plain_(shape->sequence && width_ == 1 && !shape->has_text() && !shape->narrow()), narrow_(shape->narrow()),
      text1_(width_ == 1 && shape->cols[0] == ColType::Text), indexed_(!shape->sequence && !dense_),
      text_key_(shape->key_count == 1 && shape->cols[0] == ColType::Text) {
  for (uint32_t i = 0; i < width_ && i < 64; ++i)
    if (shape->cols[i] == ColType::Text) text_cols_ |= uint64_t{1} << i;
}

EventList::NativeLayout EventList::native_layout() {
  static const ListShape shape = [] {
    ListShape s;
    s.sequence = true;
    s.cols = {ColType::Int};
    s.finish();
    return s;
  }();
  const EventList l(&shape);
  auto at = [&](const void* field) {
    return static_cast<uint32_t>(static_cast<const char*>(field) - reinterpret_cast<const char*>(&l));
  };
  NativeLayout n;
  n.plain = at(&l.plain_);
  n.narrow = at(&l.narrow_);
  n.bytes = at(&l.bytes_);
  n.count = at(&l.count_);
  n.cap_rows = at(&l.cap_rows_);
  n.version = at(&l.shape_version_);
  n.begin = at(&l.cells_);
  n.text1 = at(&l.text1_);
  n.text_cols = at(&l.text_cols_);
  n.text_rc = static_cast<uint32_t>(offsetof(Text, rc));
  n.text_flags = static_cast<uint32_t>(offsetof(Text, flags));
  n.end = n.begin + sizeof(Cell*);
  std::vector<Cell> v;
  v.reserve(4);
  v.push_back(7);
  Cell* words[3];
  std::memcpy(words, &v, sizeof(words));
  std::vector<uint8_t> b;
  b.reserve(4);
  b.push_back(1);
  uint8_t* byte_words[3];
  std::memcpy(byte_words, &b, sizeof(byte_words));
  n.ok = sizeof(v) == sizeof(words) && words[0] == v.data() && words[1] == v.data() + 1 && words[2] == v.data() + 4 &&
         sizeof(b) == sizeof(byte_words) && byte_words[0] == b.data() && sizeof(l.count_) == 8 &&
         sizeof(l.cap_rows_) == 8 && sizeof(l.shape_version_) == 8 && sizeof(l.plain_) == 1 && sizeof(l.narrow_) == 1 && sizeof(l.text1_) == 1 &&
         sizeof(l.text_cols_) == 8 && sizeof(Text::rc) == 4 && sizeof(Text::flags) == 2 && kTextStored == 1;
  return n;
}

EventList::~EventList() {
  clear();
  memory_credit(charged_);
}

// ---- memory accounting (runtime/memory.h) --------------------------------------------------------
uint64_t EventList::tree_entry_bytes() const {
  // a red-black tree node (three links and a colour) holding the key and row vectors, and the
  // arrays those two point to
  return charged_size(32 + sizeof(Tree::value_type)) + charged_size(uint64_t{shape_->key_count} * sizeof(Cell)) +
         charged_size(uint64_t{width_} * sizeof(Cell));
}

uint64_t EventList::footprint() const {
  uint64_t n = uint64_t{cells_.capacity()} * sizeof(Cell) + present_.capacity() + bytes_.capacity();
  if (!dense_ && !shape_->sequence) n += static_cast<uint64_t>(count_) * tree_entry_bytes() + index_.bytes();
  return n;
}

void EventList::charge(uint64_t bytes) {
  memory_charge(bytes);
  charged_ += bytes;
}

void EventList::settle() {
  if (narrow_) cap_rows_ = static_cast<int64_t>(bytes_.capacity());
  else cap_rows_ = width_ ? static_cast<int64_t>(cells_.capacity() / width_) : INT64_MAX;
  uint64_t now = footprint();
  if (now > charged_) memory_note(now - charged_);
  else memory_credit(charged_ - now);
  charged_ = now;
}

void EventList::grow_rows(size_t rows) {
  if (width_ == 0) return;
  size_t have = narrow_ ? bytes_.capacity() : cells_.capacity() / width_;
  if (rows <= have) return;
  // double, but never past the most rows a list may hold (unless asked for more)
  size_t target = std::max<size_t>({rows, have * 2, 4});
  target = std::min<size_t>(target, std::max<size_t>(rows, static_cast<size_t>(kMaxListRows)));
  uint64_t extra = narrow_ ? uint64_t{target} - bytes_.capacity() : (uint64_t{target} * width_ - cells_.capacity()) * sizeof(Cell);
  charge(extra);
  try {
    if (narrow_) bytes_.reserve(target);
    else cells_.reserve(target * width_);
  } catch (...) {
    settle();
    throw;
  }
  settle();
}

void EventList::reserve(int64_t rows) {
  if (rows > 0) grow_rows(static_cast<size_t>(rows));
}

void list_retain(EventList* l) {
  if (l) ++l->rc;
}

void list_release(EventList* l) {
  if (l && --l->rc == 0) delete l;
}

void EventList::retain_row(const Cell* row) const {
  for (uint32_t i = 0; i < width_; ++i)
    if (shape_->cols[i] == ColType::Text) text_retain(reinterpret_cast<Text*>(row[i]));
}

void EventList::release_row(const Cell* row) const {
  for (uint32_t i = 0; i < width_; ++i)
    if (shape_->cols[i] == ColType::Text) text_release(reinterpret_cast<Text*>(row[i]));
}

void EventList::retain_fields(const Cell* row) const {
  for (uint32_t i = shape_->key_count; i < width_; ++i)
    if (shape_->cols[i] == ColType::Text) text_retain(reinterpret_cast<Text*>(row[i]));
}

void EventList::release_fields(const Cell* row) const {
  for (uint32_t i = shape_->key_count; i < width_; ++i)
    if (shape_->cols[i] == ColType::Text) text_release(reinterpret_cast<Text*>(row[i]));
}

void EventList::clear() {
  bool text = shape_->has_text();
  if (shape_->sequence) {
    if (text1_) text_release_each(cells_.data(), cells_.size());
    else if (text)
      for (int64_t i = 0; i < count_; ++i) release_row(at(i));
    cells_.clear();
    bytes_.clear();
  } else if (dense_) {
    if (text)
      for (size_t k = 0; k < present_.size(); ++k)
        if (present_[k]) release_row(&cells_[k * width_]);
    cells_.clear();
    present_.clear();
  } else {
    if (text)
      for (auto& [key, row] : tree_) release_row(row.data());
    tree_.clear();
    index_.clear();
    indexed_ = true;
    last_ = nullptr;
  }
  if (count_) ++shape_version_;
  count_ = 0;
  settle();
}

void EventList::read_row(int64_t pos, Cell* out) const {
  if (narrow_) out[0] = bytes_[static_cast<size_t>(pos)];
  else std::memcpy(out, at(pos), width_ * sizeof(Cell));
}

void EventList::push_general(const Cell* row) {
  if (!push_fits()) grow_rows(static_cast<size_t>(count_) + 1);
  if (narrow_) {
    PURE_ASSERT(row[0] <= 1);
    bytes_.push_back(row[0] != 0);
    ++count_;
    ++shape_version_;
    return;
  }
  retain_row(row);
  if (width_ == 1) cells_.push_back(row[0]);  // the common queue of ints: no memmove call
  else cells_.insert(cells_.end(), row, row + width_);
  ++count_;
  ++shape_version_;
}

void EventList::push_copies(const Cell* row, int64_t n) {
  if (n <= 0) return;
  grow_rows(static_cast<size_t>(count_ + n));
  if (shape_->has_text())
    for (int64_t i = 0; i < n; ++i) retain_row(row);
  if (narrow_) {
    PURE_ASSERT(row[0] <= 1);
    bytes_.resize(bytes_.size() + static_cast<size_t>(n), row[0] != 0);  // a fill: memset
  } else if (width_ == 1) {
    cells_.insert(cells_.end(), static_cast<size_t>(n), row[0]);
  } else {
    for (int64_t i = 0; i < n; ++i) cells_.insert(cells_.end(), row, row + width_);
  }
  count_ += n;
  shape_version_ += static_cast<uint64_t>(n);
}

void EventList::pop(Cell* out) {
  --count_;
  if (narrow_) {
    out[0] = bytes_.back();
    bytes_.pop_back();
    ++shape_version_;
    return;
  }
  std::memcpy(out, at(count_), width_ * sizeof(Cell));  // the references move to out
  cells_.resize(static_cast<size_t>(count_) * width_);
  ++shape_version_;
}

void EventList::set_cell(Cell* where, uint32_t col, Cell value) {
  if (shape_->cols[col] == ColType::Text) {
    text_retain(reinterpret_cast<Text*>(value));
    text_release(reinterpret_cast<Text*>(where[col]));
  }
  where[col] = value;
}

// Dense keyed lists keep rows at index = key. They stay dense while the array would be at most
// about twice the rows plus a small constant; past that the list moves to a tree for good.
bool EventList::dense_fits(int64_t key) const {
  if (key < 0) return false;
  uint64_t need = static_cast<uint64_t>(key) + 1;
  return need <= present_.size() || need <= 2 * static_cast<uint64_t>(count_) + 1024;
}

void EventList::go_sparse() {
  // Built aside and swapped in, so that running out of memory half-way leaves the dense list whole
  // (the rows' text references stay with whichever holds the rows). The hash index is charged
  // with the tree; it is built once the tree is in place.
  charge(static_cast<uint64_t>(count_) * tree_entry_bytes() + KeyIndex::bytes_for(static_cast<size_t>(count_)));
  Tree tree(KeyLess{shape_});
  try {
    for (size_t k = 0; k < present_.size(); ++k) {
      if (!present_[k]) continue;
      const Cell* row = &cells_[k * width_];
      tree.emplace(std::vector<Cell>(row, row + shape_->key_count), std::vector<Cell>(row, row + width_));
    }
  } catch (...) {
    settle();
    throw;
  }
  tree_.swap(tree);
  std::vector<Cell>().swap(cells_);
  std::vector<uint8_t>().swap(present_);
  dense_ = false;
  indexed_ = true;
  for (auto& [key, row] : tree_) index_add(row.data());
  settle();
}

// ---- Finding rows of a tree -----------------------------------------------------------------
// Through the hash index (runtime/key_index.h) while the list has one, else down the tree.

void EventList::index_drop() const {
  // the index's bytes go back to the meter now (this may run inside a const find)
  memory_credit(index_.bytes());
  charged_ -= index_.bytes();
  indexed_ = false;
  index_.clear();
}

// Adds a row to the index (its growth already charged). A list that cannot index a row (a probe
// too long, or no memory for a larger table) drops its index and searches its tree alone.
void EventList::index_add(Cell* row) {
  if (!indexed_) return;
  bool added;
  try {
    KeyWords w = key_words(row);
    added = index_.add(hash_key(row, w), w, row);
  } catch (const std::bad_alloc&) {
    added = false;
  }
  if (!added) {
    index_drop();
    settle();
  }
}

Cell* EventList::find_indexed(const Cell* key) const {
  if (!indexed_) return nullptr;
  bool too_long;
  KeyWords w = key_words(key);
  Cell* row = index_.find(hash_key(key, w), w, [&](const Cell* r) { return same_key(r, key); }, too_long);
  if (row) {
    last_ = row;
    last_words_ = w;
  }
  return row;
}

Cell* EventList::tree_find(const Cell* key) const {
  if (last_ && same_key(last_, key)) return const_cast<Cell*>(last_);
  Cell* row = nullptr;
  KeyWords w;
  if (indexed_) {
    bool too_long;
    w = key_words(key);
    row = index_.find(hash_key(key, w), w, [&](const Cell* r) { return same_key(r, key); }, too_long);
    if (too_long) index_drop();
  }
  if (!indexed_) {
    w = KeyWords{};  // not exact: find_fast compares the row's key
    auto it = tree_.find(Probe{key, shape_->key_count});
    if (it != tree_.end()) row = const_cast<Cell*>(it->second.data());
  }
  if (row) {
    last_ = row;
    last_words_ = w;
  }
  return row;
}

// The row with this key, inserted (key cells set and retained, fields zero) when missing.
Cell* EventList::tree_locate(const Cell* key, bool& inserted) {
  inserted = false;
  if (Cell* row = tree_find(key)) return row;
  uint32_t kc = shape_->key_count;
  // charged before anything changes: the tree entry, and the index's next table if it grows
  charge(tree_entry_bytes() + (indexed_ ? index_.growth_bytes() : 0));
  // A key text that is a piece (made by a TextBatch: a word of a split) becomes a text of its own
  // here: a row outlives the split's other pieces (counting words keeps a few thousand keys of
  // millions of words), and would otherwise keep each piece's whole block alive. Its bytes then
  // also sit with the other keys' instead of somewhere in the split's blocks.
  std::vector<Cell> k(key, key + kc);
  uint64_t copied = 0;  // bit i: key cell i is a copy this row owns (i < 64)
  auto drop_copies = [&] {
    for (uint32_t i = 0; i < kc && i < 64; ++i)
      if (copied >> i & 1) text_release(reinterpret_cast<Text*>(k[i]));
  };
  Tree::iterator it;
  try {
    for (uint32_t i = 0; i < kc && i < 64; ++i)
      if (shape_->cols[i] == ColType::Text && (reinterpret_cast<const Text*>(k[i])->flags & kTextPiece)) {
        const Text* piece = reinterpret_cast<const Text*>(k[i]);
        Text* own = text_new(piece->view());
        own->flags |= piece->flags & (kTextAscii | kTextNotAscii);
        k[i] = reinterpret_cast<Cell>(own);
        copied |= uint64_t{1} << i;
      }
    it = tree_.try_emplace(k, std::vector<Cell>(width_, 0)).first;
  } catch (...) {
    drop_copies();
    settle();
    throw;
  }
  Cell* row = it->second.data();
  std::memcpy(row, k.data(), kc * sizeof(Cell));
  for (uint32_t i = 0; i < kc; ++i)
    if (shape_->cols[i] == ColType::Text && !(i < 64 && (copied >> i & 1))) text_retain(reinterpret_cast<Text*>(row[i]));
  ++count_;
  ++shape_version_;
  index_add(row);
  last_ = row;
  last_words_ = indexed_ ? key_words(row) : KeyWords{};
  inserted = true;
  return row;
}

const Cell* EventList::find(const Cell* key) const {
  if (dense_) {
    int64_t k = static_cast<int64_t>(key[0]);
    if (k < 0 || static_cast<uint64_t>(k) >= present_.size() || !present_[k]) return nullptr;
    return &cells_[static_cast<size_t>(k) * width_];
  }
  return tree_find(key);
}

Cell* EventList::find_mut(const Cell* key) { return const_cast<Cell*>(find(key)); }

Cell* EventList::put(const Cell* key, const Cell* fields) {
  uint32_t kc = shape_->key_count;
  if (dense_ && !dense_fits(static_cast<int64_t>(key[0]))) go_sparse();
  if (!dense_) {
    // An existing row keeps its key cells (the tree's key shares their texts): only fields change.
    bool inserted;
    Cell* row = tree_locate(key, inserted);  // charges a new entry (may throw, nothing changed)
    if (!inserted) release_fields(row);
    std::memcpy(row + kc, fields, (width_ - kc) * sizeof(Cell));
    retain_fields(row);
    return row;
  }
  size_t k = static_cast<size_t>(key[0]);
  if (k >= present_.size()) {
    size_t size = std::max<size_t>(k + 1, present_.size() * 2);
    uint64_t need = uint64_t{std::max(size, present_.capacity())} + uint64_t{std::max(size * width_, cells_.capacity())} * sizeof(Cell);
    uint64_t have = uint64_t{present_.capacity()} + uint64_t{cells_.capacity()} * sizeof(Cell);
    charge(need - have);
    try {
      present_.reserve(size);
      cells_.reserve(size * width_);
    } catch (...) {
      settle();
      throw;
    }
    present_.resize(size, 0);
    cells_.resize(size * width_, 0);
    settle();
  }
  Cell* row = &cells_[k * width_];
  if (present_[k]) {
    release_row(row);
  } else {
    present_[k] = 1;
    ++count_;
    ++shape_version_;
  }
  std::memcpy(row, key, kc * sizeof(Cell));
  std::memcpy(row + kc, fields, (width_ - kc) * sizeof(Cell));
  retain_row(row);
  return row;
}

Cell* EventList::ensure(const Cell* key) {
  if (dense_) {
    if (Cell* row = find_mut(key)) return row;
    return put(key, shape_->defaults.data());
  }
  bool inserted;
  Cell* row = tree_locate(key, inserted);
  if (inserted) {
    std::memcpy(row + shape_->key_count, shape_->defaults.data(), (width_ - shape_->key_count) * sizeof(Cell));
    retain_fields(row);
  }
  return row;
}

bool EventList::remove(const Cell* key) {
  if (dense_) {
    int64_t k = static_cast<int64_t>(key[0]);
    if (k < 0 || static_cast<uint64_t>(k) >= present_.size() || !present_[k]) return false;
    release_row(&cells_[static_cast<size_t>(k) * width_]);
    present_[k] = 0;
  } else {
    const Cell* row = tree_find(key);
    if (!row) return false;
    auto it = tree_.find(Probe{row, shape_->key_count});
    if (indexed_) index_.remove(hash_key(row), row);
    last_ = nullptr;
    release_row(row);
    tree_.erase(it);
  }
  --count_;
  ++shape_version_;
  if (!dense_) {
    memory_credit(tree_entry_bytes());
    charged_ -= tree_entry_bytes();
  }
  return true;
}

const Cell* EventList::walk_next(Walk& w, const Cell* prefix, uint32_t prefix_len, bool range, int64_t lo,
                                 int64_t hi) const {
  if (dense_) {
    int64_t i = w.started ? w.dense_index + 1 : 0;
    w.started = true;
    if (prefix_len > 0) {  // one int key: the prefix is the whole key
      int64_t k = static_cast<int64_t>(prefix[0]);
      if (i > k || k < 0 || static_cast<uint64_t>(k) >= present_.size() || !present_[k]) return nullptr;
      w.dense_index = k;
      return &cells_[static_cast<size_t>(k) * width_];
    }
    if (range && i < lo) i = lo < 0 ? 0 : lo;
    int64_t end = static_cast<int64_t>(present_.size());
    if (range && hi < end) end = hi;
    for (; i < end; ++i)
      if (present_[i]) {
        w.dense_index = i;
        return &cells_[static_cast<size_t>(i) * width_];
      }
    w.dense_index = end;
    return nullptr;
  }
  if (!w.started) {
    w.started = true;
    if (prefix_len > 0) {
      w.it = tree_.lower_bound(Probe{prefix, prefix_len});  // first row whose key starts >= the prefix
    } else if (range) {
      w.it = tree_.lower_bound(Probe{reinterpret_cast<const Cell*>(&lo), 1});  // first key >= lo
    } else {
      w.it = tree_.begin();
    }
  } else if (w.it != tree_.end()) {
    ++w.it;
  }
  if (w.it == tree_.end()) return nullptr;
  const Cell* row = w.it->second.data();
  if (prefix_len > 0 && shape_->compare_keys(row, prefix, prefix_len) != 0) return nullptr;
  if (range && shape_->compare_keys(row, reinterpret_cast<const Cell*>(&hi), 1) >= 0) return nullptr;  // an Int or a Text key
  return row;
}

const Cell* EventList::slice_next(Walk& w, const Slice& s) const {
  if (shape_->sequence || dense_) {
    // By position, or by key in a dense array (one int key: the slice has no prefix).
    int64_t end = shape_->sequence ? count_ : static_cast<int64_t>(present_.size());
    int64_t from = s.bounded ? std::max<int64_t>(s.lo, 0) : 0, to = s.bounded ? std::min<int64_t>(s.hi, end) : end;
    int64_t i = w.started ? w.dense_index + (s.reverse ? -1 : 1) : (s.reverse ? to - 1 : from);
    w.started = true;
    int64_t step = s.reverse ? -1 : 1;
    for (; i >= from && i < to; i += step)
      if (shape_->sequence || present_[i]) {
        w.dense_index = i;
        if (narrow_) {
          w.cell = bytes_[static_cast<size_t>(i)];
          return &w.cell;
        }
        return &cells_[static_cast<size_t>(i) * width_];
      }
    w.dense_index = i;
    return nullptr;
  }
  if (w.done) return nullptr;
  uint32_t n = s.prefix_len;
  if (!w.started) {
    w.started = true;
    Cell probe[16];
    std::vector<Cell> big;
    Cell* p = probe;
    if (n + 1 > 16) {
      big.resize(n + 1);
      p = big.data();
    }
    for (uint32_t i = 0; i < n; ++i) p[i] = s.prefix[i];
    p[n] = static_cast<Cell>(s.reverse ? s.hi : s.lo);
    uint32_t m = n + (s.bounded ? 1 : 0);
    if (!s.reverse) {
      w.it = m ? tree_.lower_bound(Probe{p, m}) : tree_.begin();
    } else {
      // one past the slice's last row, then the row before it
      w.it = s.bounded ? tree_.lower_bound(Probe{p, m}) : (n ? tree_.upper_bound(Probe{p, n}) : tree_.end());
      if (w.it == tree_.begin()) {
        w.done = true;
        return nullptr;
      }
      --w.it;
    }
  } else if (s.reverse) {
    if (w.it == tree_.begin()) {
      w.done = true;
      return nullptr;
    }
    --w.it;
  } else if (w.it != tree_.end()) {
    ++w.it;
  }
  if (w.it == tree_.end()) return nullptr;
  const Cell* row = w.it->second.data();
  bool in = (n == 0 || shape_->compare_keys(row, s.prefix, n) == 0) && (!s.bounded || bound_within(*shape_, row, s));
  if (!in) {
    w.done = true;
    return nullptr;
  }
  return row;
}

void EventList::sort_by(const std::vector<SortKey>& keys) {
  if (keys.empty()) return;
  if (narrow_) {  // false before true (or true before false): a bool row is its value alone
    size_t falses = static_cast<size_t>(std::count(bytes_.begin(), bytes_.end(), uint8_t{0}));
    size_t first = keys[0].descending ? bytes_.size() - falses : falses;
    uint8_t before = keys[0].descending ? 1 : 0;
    std::fill(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(first), before);
    std::fill(bytes_.begin() + static_cast<std::ptrdiff_t>(first), bytes_.end(), static_cast<uint8_t>(1 - before));
    return;
  }
  if (width_ == 1 && shape_->cols[0] != ColType::Text && shape_->cols[0] != ColType::Num) {
    // one int-like cell a row: rows that compare equal are the same bits, so sorting the cells
    // themselves gives what the stable sort of positions below gives, without the indirection
    if (keys[0].descending)
      std::sort(cells_.begin(), cells_.begin() + count_,
                [](Cell x, Cell y) { return static_cast<int64_t>(x) > static_cast<int64_t>(y); });
    else
      std::sort(cells_.begin(), cells_.begin() + count_,
                [](Cell x, Cell y) { return static_cast<int64_t>(x) < static_cast<int64_t>(y); });
    return;
  }
  // <0, 0, >0 as x sorts before, with, after y in ascending order of column t
  auto compare = [](ColType t, Cell x, Cell y) -> int {
    switch (t) {
      case ColType::Text: return text_compare(reinterpret_cast<const Text*>(x), reinterpret_cast<const Text*>(y));
      case ColType::Num: {
        double dx = std::bit_cast<double>(x), dy = std::bit_cast<double>(y);
        bool nx = dx != dx, ny = dy != dy;
        if (nx || ny) return nx == ny ? 0 : nx ? 1 : -1;
        return dx < dy ? -1 : dy < dx ? 1 : 0;
      }
      default: {
        int64_t ix = static_cast<int64_t>(x), iy = static_cast<int64_t>(y);
        return ix < iy ? -1 : iy < ix ? 1 : 0;
      }
    }
  };
  std::vector<int64_t> order(static_cast<size_t>(count_));
  for (int64_t i = 0; i < count_; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const Cell* x = at(a);
    const Cell* y = at(b);
    for (const SortKey& k : keys) {
      ColType t = shape_->cols[k.col];
      int c = compare(t, x[k.col], y[k.col]);
      if (c == 0) continue;
      // nan sorts after every number in both directions, so the order is total and deterministic
      if (t == ColType::Num) {
        double dx = std::bit_cast<double>(x[k.col]), dy = std::bit_cast<double>(y[k.col]);
        if (dx != dx || dy != dy) return c < 0;
      }
      return k.descending ? c > 0 : c < 0;
    }
    return false;
  });
  std::vector<Cell> sorted(cells_.size());
  for (int64_t i = 0; i < count_; ++i) std::memcpy(&sorted[i * width_], at(order[i]), width_ * sizeof(Cell));
  cells_.swap(sorted);
  settle();
}

void EventList::reverse() {
  if (narrow_) {
    std::reverse(bytes_.begin(), bytes_.end());
    return;
  }
  for (int64_t i = 0, j = count_ - 1; i < j; ++i, --j)
    std::swap_ranges(at_mut(i), at_mut(i) + width_, at_mut(j));
}

}  // namespace pure::rt
