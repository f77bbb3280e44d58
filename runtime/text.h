// runtime/text.h — immutable UTF-8 text values shared by the VM and the list store.
// Depends on nothing outside the C++ standard library.
//
// A Text is one allocation: header + bytes (not NUL-terminated). Two owners exist:
//  * VM texts (flags == 0) are reference counted by the VM on its owner thread.
//  * Store texts (flags & kTextStored) belong to the list store; the VM only borrows them for
//    the length of one event or query and never touches their count. The store changes their
//    count on the owner thread only, so the count needs no atomics.
//  * Immortal texts (kTextStored | kTextImmortal) are a Program's constants: never counted by
//    anyone, so one Program is shared read-only by every thread and every store.
// kTextAscii / kTextNotAscii cache whether every byte is ASCII (then code point i is byte i, and
// at, slice and len take O(1)). Stored and immortal texts get the answer when they are made (they
// are read by many threads); a VM text when first asked (text_is_ascii), on its owner thread.
// Neither bit set: not known yet. Appending in place (CONCAT) keeps the bits true.
//
// Pieces (kTextPiece) are VM texts made together by TextBatch (the pieces of one split, words or
// lines): they share blocks of at most kPieceBlockBytes instead of one allocation each, and `pad`
// holds a piece's offset from its block's start in 8-byte units. A block goes back to the system
// when its last piece is freed. A piece is an ordinary VM text to everyone else (counted, retained
// and released the same; never appended to in place, its capacity being its length). A store keeps
// its short texts the same way (kTextSlab: stored texts in slabs of one block size each,
// runtime/store_texts.h), but reuses a freed block.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/limits.h"

namespace pure::rt {

inline constexpr uint16_t kTextStored = 1;
inline constexpr uint16_t kTextImmortal = 2;
inline constexpr uint16_t kTextAscii = 4;     // known: every byte is below 0x80
inline constexpr uint16_t kTextNotAscii = 8;  // known: some byte is not
inline constexpr uint16_t kTextPiece = 16;    // one of the texts of a TextBatch block (see above)
inline constexpr uint16_t kTextSlab = 32;     // a stored text in a store's slab (store_texts.h)

struct Text {
  uint32_t rc;     // references; meaning depends on the owner (see above)
  uint16_t flags;  // kTextStored
  uint16_t pad;    // a piece's offset in its block / 8; 0 for every other text
  uint32_t len;    // bytes used
  uint32_t cap;    // bytes allocated after the header
  char bytes[];    // len bytes of valid UTF-8

  std::string_view view() const { return {bytes, len}; }
  bool stored() const { return flags & kTextStored; }
  bool immortal() const { return flags & kTextImmortal; }
};

// Largest text the runtime builds; longer results are a runtime error, not a crash.
inline constexpr uint32_t kMaxTextBytes = limits::kTextBytes;

Text* text_new(std::string_view s, uint32_t extra_capacity = 0);  // VM text, rc = 1
Text* text_alloc(uint32_t len, uint32_t cap);                      // VM text with len bytes uninitialised
void text_free(Text* t);     // gives a text back (its count reached zero): the release's slow path
// VM retain; no-op for store texts and null. Inline: the interpreter and the lists count
// references on every text they copy.
inline void text_retain(Text* t) {
  if (t && !t->stored()) ++t->rc;
}
// VM release; frees at zero; no-op for store texts and null.
inline void text_release(Text* t) {
  if (t && !t->stored() && --t->rc == 0) text_free(t);
}
// text_release of each of n texts (a `seq text` let go): a piece whose count reaches zero is
// counted down in its block without a call, and the thread's count of live texts is updated once.
void text_release_each(const uint64_t* texts, size_t n);

// Makes many small VM texts that are born together (the pieces of one split) in shared blocks
// (kTextPiece, see the top of the file): one allocation for up to kPieceBlockBytes of pieces, and
// freeing a piece is a count down in its block. `bytes` is what piece_bytes() adds up to over the
// pieces to come (the last block is made no larger than what is left of it). A piece longer than
// kMaxPieceBytes is an ordinary text. Each block is charged to the memory meter when it is made
// (make() may throw MemoryBudgetSpent or std::bad_alloc, having made nothing).
class TextBatch {
 public:
  static constexpr uint32_t kPieceBlockBytes = 64 * 1024;
  static constexpr uint32_t kMaxPieceBytes = 1024;
  static uint64_t piece_bytes(size_t len) {  // what one piece of len bytes takes in a block
    return len > kMaxPieceBytes ? 0 : sizeof(Text) + ((uint64_t{len} + 7) & ~uint64_t{7});
  }
  explicit TextBatch(uint64_t bytes) : left_(bytes) {}
  ~TextBatch();
  TextBatch(const TextBatch&) = delete;
  TextBatch& operator=(const TextBatch&) = delete;
  // A new VM text (rc 1) holding s, with `flags` (kTextAscii or 0) set. Inline while the piece
  // fits the block being filled (a bump and a copy); the pieces made are added to the thread's
  // text counts (text_live_count, text_bytes_allocated) when the batch ends.
  Text* make(std::string_view s, uint16_t flags) {
    uint64_t need = piece_bytes(s.size());
    if (need == 0 || static_cast<uint64_t>(end_ - next_) < need) [[unlikely]] return make_slow(s, flags);
    Text* t = reinterpret_cast<Text*>(next_);
    t->rc = 1;
    t->flags = static_cast<uint16_t>(kTextPiece | flags);
    t->pad = static_cast<uint16_t>((next_ - block_) >> 3);
    t->len = t->cap = static_cast<uint32_t>(s.size());
    copy_short(t->bytes, s.data(), s.size());
    next_ += need;
    left_ = left_ > need ? left_ - need : 0;
    ++*reinterpret_cast<uint32_t*>(block_);  // the block's live pieces (PieceBlock, text.cpp)
    ++made_;
    made_bytes_ += s.size();
    return t;
  }

  // n bytes from `from` to `to`, reading and writing only those: overlapping words for the short
  // texts pieces mostly are (no call).
  static void copy_short(char* to, const char* from, size_t n) {
    if (n >= 8) {
      size_t i = 0;
      for (; i + 8 < n; i += 8) std::memcpy(to + i, from + i, 8);
      std::memcpy(to + n - 8, from + n - 8, 8);
    } else if (n >= 4) {
      uint32_t x, y;
      std::memcpy(&x, from, 4);
      std::memcpy(&y, from + n - 4, 4);
      std::memcpy(to, &x, 4);
      std::memcpy(to + n - 4, &y, 4);
    } else if (n > 0) {
      to[0] = from[0];
      to[n >> 1] = from[n >> 1];
      to[n - 1] = from[n - 1];
    }
  }

 private:
  char* block_ = nullptr;  // the block being filled: a header (live pieces, bytes), then pieces
  char* next_ = nullptr;
  char* end_ = nullptr;
  uint64_t left_;          // piece bytes still to come, as announced
  int64_t made_ = 0;       // pieces made in blocks, not yet added to the thread's counts
  uint64_t made_bytes_ = 0;
  Text* make_slow(std::string_view s, uint16_t flags);  // a long piece, or a new block first
  void next_block(uint64_t need);
  void let_go();           // drops the batch's hold on the block being filled
};

// The store's side. text_store_copy returns a store-owned text equal to t (t itself, retained,
// when t is already stored and not in some store's slabs), from malloc; the B+tree store copies
// through its own slabs (store_texts.h). Release on the owner thread only: text_store_release
// gives a slab text back to its slab.
Text* text_store_copy(const Text* t);
void text_store_retain(Text* t);
void text_store_release(Text* t);

// Whether every byte of s is below 0x80.
bool bytes_are_ascii(std::string_view s);
// Looks at t's bytes once and keeps the answer in its flags (VM texts) or not (a stored text made
// without it, which no path does today: it is then looked at each time, never written).
bool text_classify(Text* t);
inline bool text_is_ascii(Text* t) {
  if (t->flags & kTextAscii) return true;
  if (t->flags & kTextNotAscii) return false;
  return text_classify(t);
}
// The ASCII bits of a text made from s, for texts read by several threads.
inline uint16_t ascii_flags(std::string_view s) { return bytes_are_ascii(s) ? kTextAscii : kTextNotAscii; }

// Byte-wise order (UTF-8 byte order equals code point order); shorter prefix first.
int text_compare(const Text* a, const Text* b);
bool text_equal(const Text* a, const Text* b);

// An immortal copy of s (a Program's constant); text_free_immortal frees it when the Program goes.
Text* text_new_immortal(std::string_view s);
void text_free_immortal(Text* t);

// Texts allocated minus texts freed on the calling thread (both kinds); tests use it to prove
// nothing leaks. Per thread, so counting costs no atomics and threads do not share a line.
int64_t text_live_count();
// Bytes of text this thread ever allocated (capacity, headers not counted); tests use it to prove that
// building a text by appending takes linear, not quadratic, work.
uint64_t text_bytes_allocated();

}  // namespace pure::rt
