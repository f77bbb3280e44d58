// runtime/key_index.h — the hash index beside the tree of a keyed event list: from the hash of a
// row's key cells to the row, so that finding a row costs one hash and (almost always) one key
// comparison instead of a walk of log2(n) comparisons down the tree. The tree still gives every
// order; the index only answers "where is the row with exactly this key".
// Inline, because the VM's hot path (vm/exec.h) finds rows through it.
// Depends on runtime/store.h (Cell) and runtime/text.h.
//
// The hash is fixed (no per-process seed): nothing printed depends on it, and instruction counts
// stay reproducible. Being fixed, it can be attacked with chosen colliding keys; a probe longer
// than kMaxProbe makes add() or find() report it, and the list then drops its index for good and
// searches its tree alone (never worse than before the index existed).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/limits.h"
#include "runtime/store.h"

namespace pure::rt {

inline uint64_t load_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint64_t load_u32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Byte equality without a call for the short texts keys usually are: 8 bytes at a time, the last
// word read overlapping the one before.
inline bool bytes_equal(const char* a, const char* b, uint32_t n) {
  if (n >= 8) {
    for (uint32_t i = 0; i + 8 < n; i += 8)
      if (load_u64(a + i) != load_u64(b + i)) return false;
    return load_u64(a + n - 8) == load_u64(b + n - 8);
  }
  if (n >= 4) return load_u32(a) == load_u32(b) && load_u32(a + n - 4) == load_u32(b + n - 4);
  for (uint32_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

inline bool texts_equal(const Text* a, const Text* b) {
  return a == b || (a->len == b->len && bytes_equal(a->bytes, b->bytes, a->len));
}

// Eight bytes at a time; the last 1-8 bytes are read as overlapping words (or, below 4 bytes, as
// three single bytes), so every byte of the text is read and none outside it. One multiplier
// throughout (a 64-bit constant costs four instructions to make on AArch64, and the finders make
// it at every call): multiply by an odd constant, fold the high half down.
inline constexpr uint64_t kHashMul = 0x9e3779b97f4a7c15ull;
inline uint64_t hash_bytes(uint64_t h, const char* p, uint32_t n) {
  h = (h ^ n) * kHashMul;
  for (; n > 8; p += 8, n -= 8) {
    h = (h ^ load_u64(p)) * kHashMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  if (n >= 4) tail = load_u32(p) | load_u32(p + n - 4) << 32;
  else if (n > 0)
    tail = uint64_t{static_cast<uint8_t>(p[0])} << 16 | uint64_t{static_cast<uint8_t>(p[n >> 1])} << 8 |
           static_cast<uint8_t>(p[n - 1]);
  return (h ^ tail) * kHashMul;
}

// Folds the high bits into the low ones, which pick the table entry.
inline uint64_t hash_finish(uint64_t h) {
  h ^= h >> 32;
  h *= kHashMul;
  return h ^ h >> 29;
}

// What the index keeps of a key beside its row (KeyIndex::Entry), so that most probes compare
// the entry alone and touch neither the row nor its key text. For a text of up to 16 bytes it is
// the text itself: its length and its bytes as two words read the way hash_bytes reads a tail
// (overlapping words; below 4 bytes the first, middle and last byte), so that two such texts of
// one length are equal exactly when their words are (`exact`). For one int it is the int
// (exact). Longer texts keep their length and first 16 bytes, composite keys nothing: equal words
// then only say "maybe", and the owner compares the row's key.
struct KeyWords {
  uint64_t w0 = 0, w1 = 0;
  uint32_t len = 0;
  bool exact = false;
  bool operator==(const KeyWords& o) const { return w0 == o.w0 && w1 == o.w1 && len == o.len; }
};

inline KeyWords text_key_words(const char* p, uint32_t n) {
  KeyWords w;
  w.len = n;
  w.exact = n <= 16;
  if (n >= 8) {
    w.w0 = load_u64(p);
    w.w1 = n > 16 ? load_u64(p + 8) : load_u64(p + n - 8);
  } else if (n >= 4) {
    w.w0 = load_u32(p) | load_u32(p + n - 4) << 32;
  } else if (n > 0) {
    w.w0 = uint64_t{static_cast<uint8_t>(p[0])} << 16 | uint64_t{static_cast<uint8_t>(p[n >> 1])} << 8 |
           static_cast<uint8_t>(p[n - 1]);
  }
  return w;
}

inline KeyWords int_key_words(uint64_t k) {
  KeyWords w;
  w.w0 = k;
  w.exact = true;
  return w;
}

// The hash of a one-text key: a short one (exact words) from its words alone, a longer one by
// hash_bytes.
inline uint64_t text_key_hash(const char* p, uint32_t n, const KeyWords& w) {
  if (!w.exact) return hash_finish(hash_bytes(0, p, n));
  uint64_t h = (w.w0 ^ n) * kHashMul;
  h ^= h >> 29;
  return hash_finish((h ^ w.w1) * kHashMul);
}
inline uint64_t text_key_hash(const char* p, uint32_t n) { return text_key_hash(p, n, text_key_words(p, n)); }

// Open addressing with linear probing over a power-of-two table kept at most half full; an
// entry with row == nullptr is empty. Removal moves later entries of the run back (no
// tombstones). Rows are addressed by pointer: the owner guarantees they do not move. An entry
// (32 bytes, two to a cache line) holds the hash's low 32 bits (a table has at most 2^29 entries:
// limits::kListRows) and the key's words (KeyWords), which answer for short keys without the row.
class KeyIndex {
 public:
  static constexpr size_t kMaxProbe = 64;

  // The row whose hash is `hash`, whose words are `words` and (unless words.exact) for which
  // same(row) holds, or nullptr. too_long is set when the search went past kMaxProbe entries
  // (the answer is then unknown).
  template <class Same>
  Cell* find(uint64_t hash, const KeyWords& words, Same same, bool& too_long) const {
    too_long = false;
    if (entries_.empty()) return nullptr;
    size_t mask = entries_.size() - 1;
    size_t probe = 0;
    uint32_t h32 = static_cast<uint32_t>(hash);
    for (size_t i = hash & mask; entries_[i].row; i = (i + 1) & mask) {
      const Entry& e = entries_[i];
      if (e.hash == h32 && e.len == words.len && e.w0 == words.w0 && e.w1 == words.w1 && (words.exact || same(e.row)))
        return e.row;
      if (++probe > kMaxProbe) {
        too_long = true;
        return nullptr;
      }
    }
    return nullptr;
  }

  // Adds a row not yet present. False when its probe went past kMaxProbe (nothing added).
  bool add(uint64_t hash, const KeyWords& words, Cell* row) {
    if ((used_ + 1) * 2 > entries_.size()) {
      std::vector<Entry> old(std::max<size_t>(16, entries_.size() * 2), Entry{});
      old.swap(entries_);
      used_ = 0;
      for (const Entry& e : old)
        if (e.row && !place(e)) return false;
    }
    return place(Entry{static_cast<uint32_t>(hash), words.len, row, words.w0, words.w1});
  }

  void remove(uint64_t hash, const Cell* row) {
    size_t mask = entries_.size() - 1;
    size_t i = hash & mask;
    while (entries_[i].row != row) i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask; entries_[j].row; j = (j + 1) & mask) {
      size_t home = entries_[j].hash & mask;
      bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);  // home in (i, j]
      if (!stays) {
        entries_[i] = entries_[j];
        i = j;
      }
    }
    entries_[i].row = nullptr;
    --used_;
  }

  void clear() {
    std::vector<Entry>().swap(entries_);
    used_ = 0;
  }

  size_t size() const { return used_; }

  // Memory (for the owner's memory meter): the table's bytes now, the bytes the next add() adds
  // when it grows the table (0 when it does not), and the table's bytes after n adds from empty.
  uint64_t bytes() const { return uint64_t{entries_.capacity()} * sizeof(Entry); }
  uint64_t growth_bytes() const {
    if ((used_ + 1) * 2 <= entries_.size()) return 0;
    return (std::max<uint64_t>(16, uint64_t{entries_.size()} * 2) - entries_.capacity()) * sizeof(Entry);
  }
  static uint64_t bytes_for(size_t n) {
    if (n == 0) return 0;
    uint64_t size = 16;
    while (uint64_t{n} * 2 > size) size *= 2;
    return size * sizeof(Entry);
  }

 private:
  struct alignas(32) Entry {
    uint32_t hash = 0;  // the low 32 bits
    uint32_t len = 0;   // KeyWords
    Cell* row = nullptr;
    uint64_t w0 = 0, w1 = 0;
  };
  static_assert(sizeof(Entry) == 32);
  static_assert(limits::kListRows <= int64_t{1} << 30, "table positions fit the 32 bits of hash kept");
  std::vector<Entry> entries_;
  size_t used_ = 0;

  bool place(const Entry& e) {
    size_t mask = entries_.size() - 1;
    size_t i = e.hash & mask;
    for (size_t probe = 0; entries_[i].row; i = (i + 1) & mask)
      if (++probe > kMaxProbe) return false;
    entries_[i] = e;
    ++used_;
    return true;
  }
};

}  // namespace pure::rt
