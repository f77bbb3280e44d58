// tests/runtime/test_text_ascii.cpp — the all-ASCII bits of a text (runtime/text.h): found once,
// given to stored and immortal texts when they are made, never stale.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>

#include "runtime/text.h"

using namespace pure::rt;

TEST_CASE("bytes_are_ascii looks at every byte, in words and in the tail") {
  CHECK(bytes_are_ascii(""));
  CHECK(bytes_are_ascii("abcdefghijklmnopqrstuvwxyz0123456789"));
  std::string s(37, 'a');
  for (size_t i = 0; i < s.size(); ++i) {
    std::string t = s;
    t[i] = static_cast<char>(0xC3);
    CHECK_FALSE(bytes_are_ascii(t));
  }
  CHECK(bytes_are_ascii(std::string(1, '\x7f') + std::string(1, '\0')));
}

TEST_CASE("a VM text is classified when first asked, and keeps the answer") {
  Text* a = text_new("hello");
  CHECK((a->flags & (kTextAscii | kTextNotAscii)) == 0);
  CHECK(text_is_ascii(a));
  CHECK((a->flags & kTextAscii) != 0);
  Text* b = text_new("h\xC3\xA9llo");
  CHECK_FALSE(text_is_ascii(b));
  CHECK((b->flags & kTextNotAscii) != 0);
  CHECK_FALSE(a->stored());
  text_release(a);
  text_release(b);
}

TEST_CASE("stored and immortal texts are classified when made, and copies keep the bits") {
  Text* imm = text_new_immortal("abc");
  CHECK((imm->flags & kTextAscii) != 0);
  Text* imm2 = text_new_immortal("\xC3\xA9");
  CHECK((imm2->flags & kTextNotAscii) != 0);
  Text* vm_text = text_new("xyz\xE2\x82\xAC");
  Text* stored = text_store_copy(vm_text);
  CHECK(stored->stored());
  CHECK((stored->flags & kTextNotAscii) != 0);
  CHECK((stored->flags & kTextAscii) == 0);
  Text* plain = text_new("plain");
  CHECK(text_is_ascii(plain));
  Text* stored2 = text_store_copy(plain);
  CHECK((stored2->flags & kTextAscii) != 0);
  text_store_release(stored);
  text_store_release(stored2);
  text_release(vm_text);
  text_release(plain);
  text_free_immortal(imm);
  text_free_immortal(imm2);
}
