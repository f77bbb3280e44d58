// runtime/store_texts.cpp — the slabs of a store's short texts (see store_texts.h).
#include "runtime/store_texts.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "base/assert.h"
#include "runtime/memory.h"

namespace pure::rt::store {

// A slab: this header, then blocks of `block` bytes, each free (linked through its first word),
// in use (a Text), or not yet used (from `bump` to `end`).
struct TextSlabs::Slab {
  TextSlabs* owner;
  Slab* prev;      // in its size's open list (while `listed`)
  Slab* next;
  Slab* all_prev;  // in the list of every slab
  Slab* all_next;
  char* free;      // freed blocks
  char* bump;      // the first never-used block
  char* end;
  uint32_t live;   // blocks in use
  uint32_t bytes;  // the slab's size, header included
  uint16_t index;  // size_index(block)
  uint16_t block;
  bool listed;     // has a free block (free or bump), so it is in open_[index]
  bool full() const { return !free && bump + block > end; }
};

namespace {
constexpr uint32_t kHeader = 80;  // a slab's header, rounded up to a multiple of 8
}  // namespace

// The slab a slab text is in: `pad` is its offset from the slab's start in 8-byte units.
TextSlabs::Slab* TextSlabs::slab_of(const Text* t) {
  return reinterpret_cast<Slab*>(const_cast<char*>(reinterpret_cast<const char*>(t)) - (uint64_t{t->pad} << 3));
}

static_assert(TextSlabs::kMaxSlabBytes / 8 <= 65536, "a block's offset in 8-byte units fits Text::pad");
static_assert(TextSlabs::kMaxBlock % 8 == 0 && TextSlabs::kMaxBlock <= TextSlabs::kFirstSlabBytes - kHeader);

TextSlabs::~TextSlabs() {
  PURE_ASSERT(live_ == 0);  // a store's texts outlived its slabs
  while (all_) {
    Slab* s = all_;
    all_ = s->all_next;
    memory_credit(charged_size(s->bytes));
    std::free(s);
  }
}

Text* TextSlabs::copy(const Text* t) {
  if (t->stored()) {
    if (t->immortal()) return const_cast<Text*>(t);
    bool here = !(t->flags & kTextSlab) || slab_of(t)->owner == this;
    if (here) {
      ++const_cast<Text*>(t)->rc;
      return const_cast<Text*>(t);
    }
  }
  uint64_t block = sizeof(Text) + ((uint64_t{t->len} + 7) & ~uint64_t{7});
  if (block > kMaxBlock) return text_store_fresh(t);
  Text* n = take(static_cast<uint32_t>(block));
  n->rc = 1;
  uint16_t known = t->flags & (kTextAscii | kTextNotAscii);
  n->len = n->cap = t->len;
  if (t->len) std::memcpy(n->bytes, t->bytes, t->len);
  n->flags = kTextStored | kTextSlab | (known ? known : ascii_flags(n->view()));
  ++live_;
  text_count_made(t->len);
  return n;
}

Text* TextSlabs::take(uint32_t block) {
  uint32_t i = size_index(block);
  Slab* s = open_[i];
  if (!s) s = new_slab(i, block);
  char* p;
  if (s->free) {
    p = s->free;
    std::memcpy(&s->free, p, sizeof(char*));
  } else {
    p = s->bump;
    s->bump += block;
  }
  ++s->live;
  if (s->full()) unlist(s);
  Text* t = reinterpret_cast<Text*>(p);
  t->pad = static_cast<uint16_t>((p - reinterpret_cast<char*>(s)) >> 3);
  return t;
}

TextSlabs::Slab* TextSlabs::new_slab(uint32_t index, uint32_t block) {
  static_assert(sizeof(Slab) <= kHeader, "a slab's blocks start after its header");
  uint32_t bytes = kFirstSlabBytes << grown_[index];
  if (bytes < kMaxSlabBytes) ++grown_[index];
  auto* s = static_cast<Slab*>(std::malloc(bytes));
  if (!s) throw std::bad_alloc();
  memory_note(charged_size(bytes));
  slab_bytes_ += bytes;
  s->owner = this;
  s->free = nullptr;
  s->bump = reinterpret_cast<char*>(s) + kHeader;
  s->end = reinterpret_cast<char*>(s) + bytes;
  s->live = 0;
  s->bytes = bytes;
  s->index = static_cast<uint16_t>(index);
  s->block = static_cast<uint16_t>(block);
  s->all_prev = nullptr;
  s->all_next = all_;
  if (all_) all_->all_prev = s;
  all_ = s;
  list(s);
  return s;
}

void TextSlabs::list(Slab* s) {
  s->prev = nullptr;
  s->next = open_[s->index];
  if (s->next) s->next->prev = s;
  open_[s->index] = s;
  s->listed = true;
}

void TextSlabs::unlist(Slab* s) {
  if (s->prev) s->prev->next = s->next;
  else open_[s->index] = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = nullptr;
  s->listed = false;
}

void TextSlabs::release_slab(Slab* s) {
  if (s->listed) unlist(s);
  if (s->all_prev) s->all_prev->all_next = s->all_next;
  else all_ = s->all_next;
  if (s->all_next) s->all_next->all_prev = s->all_prev;
  slab_bytes_ -= s->bytes;
  memory_credit(charged_size(s->bytes));
  std::free(s);
}

void TextSlabs::free_text(Text* t) {
  PURE_ASSERT((t->flags & kTextSlab) && t->rc == 0);
  Slab* s = slab_of(t);
  TextSlabs* owner = s->owner;
  PURE_ASSERT(s->live > 0 && owner->live_ > 0);
  char* p = reinterpret_cast<char*>(t);
  std::memcpy(p, &s->free, sizeof(char*));
  s->free = p;
  --s->live;
  --owner->live_;
  text_count_freed();
  if (!s->listed) owner->list(s);  // it was full: it has room again
  // An empty slab goes back, unless it is the only one its size can allocate from.
  if (s->live == 0 && (s->prev || s->next)) owner->release_slab(s);
}

}  // namespace pure::rt::store
