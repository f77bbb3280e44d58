// tests/runtime/test_store_texts.cpp — a store's short texts in slabs (runtime/store_texts.h):
// what is shared and what is copied, block reuse, slabs going back to the system, the memory
// meter and the thread's text counts, and a randomized run of copies and releases against a
// model that checks every live text's bytes after every step.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/memory.h"
#include "runtime/store_texts.h"
#include "runtime/text.h"

using namespace pure::rt;
using store::TextSlabs;

namespace {

// The bytes of a slab block holding a text of len bytes.
uint32_t block_of(size_t len) { return static_cast<uint32_t>(sizeof(Text) + ((len + 7) & ~size_t{7})); }

}  // namespace

TEST_CASE("a short text is copied into a slab, shared within its store, and freed by its last release") {
  int64_t live_before = text_live_count();
  {
    TextSlabs slabs;
    Text* vm = text_new("district info, 24 bytes!");
    Text* a = slabs.copy(vm);
    text_release(vm);
    REQUIRE(a->stored());
    CHECK((a->flags & kTextSlab) != 0);
    CHECK((a->flags & kTextAscii) != 0);
    CHECK(a->view() == "district info, 24 bytes!");
    CHECK(a->rc == 1);
    CHECK(slabs.live_texts() == 1);
    CHECK(slabs.slab_bytes() == TextSlabs::kFirstSlabBytes);
    CHECK(text_live_count() == live_before + 1);

    Text* b = slabs.copy(a);  // a stored text of this store: the same text, one more reference
    CHECK(b == a);
    CHECK(a->rc == 2);
    text_store_release(b);
    CHECK(slabs.live_texts() == 1);
    text_store_release(a);
    CHECK(slabs.live_texts() == 0);
    CHECK(text_live_count() == live_before);
    CHECK(slabs.slab_bytes() == TextSlabs::kFirstSlabBytes);  // a size keeps the slab it allocates from
  }
  CHECK(text_live_count() == live_before);
}

TEST_CASE("long texts come from malloc, immortal ones are shared, another store's slab text is copied") {
  TextSlabs slabs, other;
  std::string long_bytes(TextSlabs::kMaxBlock - sizeof(Text) + 1, 'x');
  Text* vm = text_new(long_bytes);
  Text* l = slabs.copy(vm);
  text_release(vm);
  CHECK(l->stored());
  CHECK((l->flags & kTextSlab) == 0);
  CHECK(slabs.live_texts() == 0);
  CHECK(slabs.copy(l) == l);  // a malloc'd stored text is shared as text_store_copy shares it
  CHECK(l->rc == 2);
  text_store_release(l);
  text_store_release(l);

  std::string longest_short(TextSlabs::kMaxBlock - sizeof(Text), 'y');
  vm = text_new(longest_short);
  Text* s = slabs.copy(vm);
  text_release(vm);
  CHECK((s->flags & kTextSlab) != 0);

  Text* imm = text_new_immortal("constant");
  CHECK(slabs.copy(imm) == imm);
  text_free_immortal(imm);

  Text* o = other.copy(s);  // not shared across stores: each store's slabs are its owner's alone
  CHECK(o != s);
  CHECK(o->view() == s->view());
  CHECK(s->rc == 1);
  CHECK(other.live_texts() == 1);
  Text* plain = text_store_copy(s);  // nor handed to malloc'd stored texts' sharing
  CHECK(plain != s);
  CHECK((plain->flags & kTextSlab) == 0);
  text_store_release(plain);
  text_store_release(o);
  text_store_release(s);
  CHECK(slabs.live_texts() == 0);
  CHECK(other.live_texts() == 0);
}

TEST_CASE("a freed block is reused; blocks are 8-byte steps, not the allocator's 16") {
  TextSlabs slabs;
  Text* vm = text_new(std::string(24, 'a'));
  Text* a = slabs.copy(vm);
  Text* b = slabs.copy(vm);
  CHECK(reinterpret_cast<char*>(b) - reinterpret_cast<char*>(a) == 40);  // header 16 + 24 bytes
  text_store_release(a);
  Text* c = slabs.copy(vm);
  CHECK(c == a);
  text_release(vm);
  text_store_release(b);
  text_store_release(c);
}

TEST_CASE("slabs double up to their limit, are charged to the meter, and an empty one goes back") {
  MemoryMeter meter(uint64_t{1} << 40);
  MeterScope scope(meter);
  std::vector<Text*> texts;
  {
    TextSlabs slabs;
    Text* vm = text_new(std::string(24, 'b'));
    int64_t vm_used = meter.used();
    for (int i = 0; i < 20000; ++i) texts.push_back(slabs.copy(vm));
    uint64_t bytes = slabs.slab_bytes();
    CHECK(bytes >= 20000 * 40);
    CHECK(bytes < 20000 * 40 + 2 * TextSlabs::kMaxSlabBytes);
    CHECK(static_cast<uint64_t>(meter.used() - vm_used) >= bytes);
    CHECK(static_cast<uint64_t>(meter.used() - vm_used) <= bytes + 64 * 32);  // charged_size's rounding, per slab
    for (Text* t : texts) text_store_release(t);
    texts.clear();
    CHECK(slabs.live_texts() == 0);
    CHECK(slabs.slab_bytes() <= TextSlabs::kMaxSlabBytes);  // all but one slab went back
    CHECK(slabs.slab_bytes() > 0);
    text_release(vm);
  }
  CHECK(meter.used() == 0);
}

TEST_CASE("randomized copies, shares and releases keep every live text's bytes") {
  std::mt19937_64 rng(20261204);
  int64_t live_before = text_live_count();
  for (int round = 0; round < 4; ++round) {
    TextSlabs slabs;
    struct Held {
      Text* t;
      std::string bytes;
    };
    std::vector<Held> held;
    for (int step = 0; step < 30000; ++step) {
      uint64_t r = rng() % 100;
      if (r < 55 || held.empty()) {
        size_t len = rng() % 3 == 0 ? rng() % 400 : rng() % 60;
        std::string s(len, 'a');
        for (char& ch : s) ch = static_cast<char>('a' + rng() % 26);
        if (rng() % 8 == 0 && !s.empty()) s[0] = static_cast<char>(0xC3), s.push_back(static_cast<char>(0xA9));  // é: not ASCII
        Text* vm = text_new(s);
        Text* t = slabs.copy(vm);
        text_release(vm);
        CHECK(((t->flags & kTextSlab) != 0) == (block_of(s.size()) <= TextSlabs::kMaxBlock));
        CHECK(((t->flags & kTextAscii) != 0) == bytes_are_ascii(s));
        held.push_back({t, s});
      } else if (r < 70) {
        Held h = held[rng() % held.size()];
        Text* t = slabs.copy(h.t);
        CHECK(t == h.t);
        held.push_back(h);
      } else {
        size_t i = rng() % held.size();
        text_store_release(held[i].t);
        held[i] = held.back();
        held.pop_back();
      }
      if (step % 997 == 0)
        for (const Held& h : held) REQUIRE(h.t->view() == h.bytes);
    }
    for (const Held& h : held) REQUIRE(h.t->view() == h.bytes);
    for (const Held& h : held) text_store_release(h.t);
    CHECK(slabs.live_texts() == 0);
  }
  CHECK(text_live_count() == live_before);
}
