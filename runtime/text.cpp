// runtime/text.cpp — allocation and reference counting of Text values (see text.h).
#include "text.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/memory.h"
#include "runtime/store_texts.h"

namespace pure::rt {

static thread_local int64_t g_live_texts = 0;  // this thread's allocations minus its frees
static thread_local uint64_t g_bytes_allocated = 0;  // this thread's text bytes allocated, ever

// Every text is charged to the memory meter (memory.h) when it is made and credited when it is
// freed. VM texts may throw MemoryBudgetSpent; store texts are made inside store writes, which
// must not be interrupted, so they are only counted (the VM checks the meter after the write).
static Text* allocate(uint32_t len, uint32_t cap, bool may_throw) {
  if (cap < len) cap = len;
  uint64_t charge = charged_size(sizeof(Text) + uint64_t{cap});
  if (may_throw) memory_charge(charge);
  else memory_note(charge);
  auto* t = static_cast<Text*>(std::malloc(sizeof(Text) + cap));
  if (!t) {
    memory_credit(charge);
    throw std::bad_alloc();
  }
  t->rc = 1;
  t->flags = 0;
  t->pad = 0;
  t->len = len;
  t->cap = cap;
  ++g_live_texts;
  g_bytes_allocated += cap;
  return t;
}

Text* text_alloc(uint32_t len, uint32_t cap) { return allocate(len, cap, true); }

Text* text_new(std::string_view s, uint32_t extra_capacity) {
  Text* t = text_alloc(static_cast<uint32_t>(s.size()), static_cast<uint32_t>(s.size()) + extra_capacity);
  if (!s.empty()) std::memcpy(t->bytes, s.data(), s.size());
  return t;
}

// A block of pieces (TextBatch): this header, then the pieces, each at a multiple of 8 bytes.
struct PieceBlock {
  uint32_t live;   // pieces not yet freed, plus one while a batch fills the block (first: TextBatch::make)
  uint32_t bytes;  // the block's size (charged as one allocation)
};
static_assert(sizeof(PieceBlock) == 8 && offsetof(PieceBlock, live) == 0);

static void piece_block_drop(PieceBlock* b) {
  if (--b->live == 0) {
    memory_credit(charged_size(b->bytes));
    std::free(b);
  }
}

void text_free(Text* t) {
  --g_live_texts;
  if (t->flags & kTextPiece) {
    piece_block_drop(reinterpret_cast<PieceBlock*>(reinterpret_cast<char*>(t) - (uint64_t{t->pad} << 3)));
    return;
  }
  memory_credit(charged_size(sizeof(Text) + uint64_t{t->cap}));
  std::free(t);
}

void text_release_each(const uint64_t* texts, size_t n) {
  int64_t pieces_freed = 0;
  for (size_t i = 0; i < n; ++i) {
    Text* t = reinterpret_cast<Text*>(texts[i]);
    if (!t || t->stored() || --t->rc != 0) continue;
    if (t->flags & kTextPiece) {
      ++pieces_freed;
      piece_block_drop(reinterpret_cast<PieceBlock*>(reinterpret_cast<char*>(t) - (uint64_t{t->pad} << 3)));
    } else {
      text_free(t);
    }
  }
  g_live_texts -= pieces_freed;
}

// The next block: what is left of the announced bytes, at most a block's worth, at least `need`.
__attribute__((noinline)) void TextBatch::next_block(uint64_t need) {
  uint64_t size = sizeof(PieceBlock) + std::max<uint64_t>(need, std::min<uint64_t>(left_, kPieceBlockBytes - sizeof(PieceBlock)));
  memory_charge(charged_size(size));
  auto* b = static_cast<PieceBlock*>(std::malloc(size));
  if (!b) {
    memory_credit(charged_size(size));
    throw std::bad_alloc();
  }
  b->live = 1;  // the batch's hold
  b->bytes = static_cast<uint32_t>(size);
  let_go();
  block_ = reinterpret_cast<char*>(b);
  next_ = block_ + sizeof(PieceBlock);
  end_ = block_ + size;
}

Text* TextBatch::make_slow(std::string_view s, uint16_t flags) {
  uint64_t need = piece_bytes(s.size());
  if (need == 0) {  // a long piece: a text of its own
    Text* t = text_new(s);
    t->flags |= flags;
    return t;
  }
  next_block(need);
  return make(s, flags);
}

void TextBatch::let_go() {
  if (block_) piece_block_drop(reinterpret_cast<PieceBlock*>(block_));
  block_ = next_ = end_ = nullptr;
}

TextBatch::~TextBatch() {
  let_go();
  g_live_texts += made_;
  g_bytes_allocated += made_bytes_;
}

bool bytes_are_ascii(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size(), i = 0;
  uint64_t any = 0;
  for (; i + 8 <= n; i += 8) {  // eight bytes at a time
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    any |= w;
  }
  for (; i < n; ++i) any |= static_cast<unsigned char>(p[i]);
  return (any & 0x8080808080808080ull) == 0;
}

bool text_classify(Text* t) {
  bool ascii = bytes_are_ascii(t->view());
  if (!t->stored()) t->flags |= ascii ? kTextAscii : kTextNotAscii;
  return ascii;
}

Text* text_store_copy(const Text* t) {
  if (t->stored() && !(t->flags & kTextSlab)) {  // (a slab text stays in its own store)
    Text* same = const_cast<Text*>(t);
    if (!same->immortal()) ++same->rc;
    return same;
  }
  return text_store_fresh(t);
}

Text* text_store_fresh(const Text* t) {
  Text* copy = allocate(t->len, t->len, false);
  if (t->len) std::memcpy(copy->bytes, t->bytes, t->len);
  uint16_t known = t->flags & (kTextAscii | kTextNotAscii);
  copy->flags = kTextStored | (known ? known : ascii_flags(copy->view()));
  return copy;
}

void text_store_retain(Text* t) {
  if (t && !t->immortal()) ++t->rc;
}

void text_store_release(Text* t) {
  if (t && !t->immortal() && --t->rc == 0) {
    if (t->flags & kTextSlab) store::TextSlabs::free_text(t);
    else text_free(t);
  }
}

void text_count_made(uint32_t len) {
  ++g_live_texts;
  g_bytes_allocated += len;
}

void text_count_freed() { --g_live_texts; }

Text* text_new_immortal(std::string_view s) {
  Text* t = text_new(s);
  t->flags = kTextStored | kTextImmortal | ascii_flags(s);
  return t;
}

void text_free_immortal(Text* t) {
  if (t) text_free(t);
}

int text_compare(const Text* a, const Text* b) {
  if (a == b) return 0;
  uint32_t n = a->len < b->len ? a->len : b->len;
  int c = n ? std::memcmp(a->bytes, b->bytes, n) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return a->len < b->len ? -1 : (a->len > b->len ? 1 : 0);
}

bool text_equal(const Text* a, const Text* b) {
  return a == b || (a->len == b->len && std::memcmp(a->bytes, b->bytes, a->len) == 0);
}

int64_t text_live_count() { return g_live_texts; }

uint64_t text_bytes_allocated() { return g_bytes_allocated; }

}  // namespace pure::rt
