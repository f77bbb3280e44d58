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
// and released the same; never appended to in place, its capacity being its length).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/limits.h"

namespace pure::rt {

inline constexpr uint16_t kTextStored = 1;
inline constexpr uint16_t kTextImmortal = 2;
inline constexpr uint16_t kTextAscii = 4;     // known: every byte is below 0x80
inline constexpr uint16_t kTextNotAscii = 8;  // known: some byte is not
inline constexpr uint16_t kTextPiece = 16;    // one of the texts of a TextBatch block (see above)

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
  // A new VM text (rc 1) holding s, with `flags` (kTextAscii or 0) set.
  Text* make(std::string_view s, uint16_t flags);

 private:
  char* block_ = nullptr;  // the block being filled: a header (live pieces, bytes), then pieces
  char* next_ = nullptr;
  char* end_ = nullptr;
  uint64_t left_;          // piece bytes still to come, as announced
  void next_block(uint64_t need);
  void let_go();           // drops the batch's hold on the block being filled
};

// The store's side. text_store_copy returns a store-owned text equal to t (t itself, retained,
// when t is already stored). Release on the owner thread only.
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
