// runtime/store_texts.h — private: where one store's short texts live (TextSlabs).
// Depends on runtime/text.h only.
//
// A stored text is one allocation of a 16-byte header and its bytes. Taken from malloc, a text of
// 24 bytes (a TPC-C district info, the commonest text of a loaded store) costs 48: the allocator
// rounds 40 up to its 16-byte classes. TextSlabs keeps the store's texts of up to kMaxBlock bytes
// (header included) in slabs of blocks of one size each, sized in steps of 8 bytes, so that text
// costs 40. A slab keeps a list of its freed blocks; a slab whose blocks are all free goes back
// to the system unless it is the one its size allocates from.
//
// A slab text is an ordinary stored text to every reader (kTextStored, counted by the store)
// with kTextSlab set and `pad` holding its offset from its slab's start in 8-byte units, so its
// last release (text_store_release) finds the slab without asking anyone.
//
// Threads. Made and released on the owner thread only, like every count of a stored text (the
// store's rule). The slabs belong to the store's Core, which outlives every text in it: a text
// is never handed to another store (copy() copies a slab text of another TextSlabs).
// Limits: a slab is at most kMaxSlabBytes (so an offset fits `pad`); a block at most kMaxBlock.
#pragma once
#include <cstdint>

#include "runtime/text.h"

namespace pure::rt {
// text.cpp's side of the slabs: a stored copy of t from malloc (what a text too long for a slab
// gets), and the calling thread's text counts (text_live_count, text_bytes_allocated).
Text* text_store_fresh(const Text* t);
void text_count_made(uint32_t len);
void text_count_freed();
}  // namespace pure::rt

namespace pure::rt::store {

class TextSlabs {
 public:
  static constexpr uint32_t kMaxBlock = 256;            // header and bytes, a multiple of 8
  static constexpr uint32_t kFirstSlabBytes = 4096;     // a size's first slab; each next one doubles
  static constexpr uint32_t kMaxSlabBytes = 64 * 1024;  // (up to this)

  TextSlabs() = default;
  ~TextSlabs();  // frees every slab; every text in them must have been released
  TextSlabs(const TextSlabs&) = delete;
  TextSlabs& operator=(const TextSlabs&) = delete;

  // text_store_copy for this store: t itself (retained) when it is stored and may be shared here
  // (immortal, a malloc'd stored text, or a text of these slabs), else a new stored text equal
  // to t: in a slab when it fits one, else from malloc. Never throws for want of a budget (a
  // store write must not be interrupted): slabs are noted on the memory meter, not charged.
  Text* copy(const Text* t);
  // A slab text whose count reached zero (text_store_release calls it).
  static void free_text(Text* t);

  uint64_t slab_bytes() const { return slab_bytes_; }  // what the slabs take from the system
  uint64_t live_texts() const { return live_; }

 private:
  struct Slab;
  static constexpr uint32_t kSizes = kMaxBlock / 8 - 1;  // blocks of 16, 24, ..., kMaxBlock bytes
  static uint32_t size_index(uint32_t block) { return block / 8 - 2; }
  Text* take(uint32_t block);
  Slab* new_slab(uint32_t index, uint32_t block);
  static Slab* slab_of(const Text* t);
  void list(Slab* s);    // into open_[its size], at the head
  void unlist(Slab* s);
  void release_slab(Slab* s);

  Slab* open_[kSizes] = {};     // per size: the slabs with a free block (head: allocated from)
  uint8_t grown_[kSizes] = {};  // per size: how many times its slab size has doubled
  Slab* all_ = nullptr;         // every slab, for the destructor
  uint64_t slab_bytes_ = 0;
  uint64_t live_ = 0;
};

}  // namespace pure::rt::store
