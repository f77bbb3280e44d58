// tests/stdlib/test_text.cpp: tests of stdlib/text.h and stdlib/utf8.h, including a randomized
// comparison against a code-point reference. Depends only on stdlib/ and doctest.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "stdlib/text.h"

namespace text = pure::text;
using Strings = std::vector<std::string>;

namespace {

// The test's own encoder, so expectations do not come from the code under test.
std::string encode(std::u32string_view code_points) {
  std::string out;
  for (char32_t c : code_points) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

template <class Function>
std::string error_of(Function function) {
  try {
    function();
  } catch (const text::TextError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("utf8 validation accepts valid text and reports the first bad sequence") {
  for (std::string good : {"", "plain ascii", "é", "ß", "한국어", "😀", "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF", "\xEE\x80\x80"}) {
    CHECK(text::utf8_valid(good));
    CHECK_FALSE(text::utf8_first_invalid(good).has_value());
    CHECK(text::utf8_error_message(good).empty());
  }
  struct Bad {
    std::string bytes;
    std::size_t offset;
    std::string reason;
  };
  std::vector<Bad> bad{
      {"\x80", 0, "unexpected continuation byte"},
      {"a\xC0\xAF", 1, "overlong encoding"},
      {"ab\xE0\x80\xAF", 2, "overlong encoding"},
      {"\xF0\x8F\xBF\xBF", 0, "overlong encoding"},
      {"x\xED\xA0\x80", 1, "surrogate code point"},
      {"\xF4\x90\x80\x80", 0, "code point above U+10FFFF"},
      {"\xF5\x80\x80\x80", 0, "byte that never appears in UTF-8"},
      {"\xFF", 0, "byte that never appears in UTF-8"},
      {"ok\xE2\x82", 2, "truncated sequence"},
      {"\xE2\x28\xA1", 0, "truncated sequence"},
      {"é\xC3", 2, "truncated sequence"},
      {std::string(20, 'a') + "\xFF" + std::string(20, 'b'), 20, "byte that never appears in UTF-8"},
      {std::string(16, 'a') + "한" + std::string(9, 'a') + "\xC3", 28, "truncated sequence"},
  };
  for (const Bad& case_ : bad) {
    CAPTURE(case_.bytes);
    auto error = text::utf8_check(case_.bytes);
    REQUIRE(error.has_value());
    CHECK(error->offset == case_.offset);
    CHECK(error->reason == case_.reason);
    CHECK_FALSE(text::utf8_valid(case_.bytes));
    CHECK(text::utf8_first_invalid(case_.bytes) == case_.offset);
    CHECK(text::utf8_error_message(case_.bytes) ==
          "invalid UTF-8 at byte " + std::to_string(case_.offset) + ": " + case_.reason);
  }
}

TEST_CASE("every scalar value encodes, validates and decodes; surrogates are rejected") {
  for (char32_t c = 0; c <= text::max_code_point; ++c) {
    std::u32string one(1, c);
    std::string bytes = encode(one);
    bool scalar = text::is_scalar_value(c);
    REQUIRE(text::utf8_valid(bytes) == scalar);
    if (!scalar) continue;
    std::string mine;
    text::append_code_point(mine, c);
    REQUIRE(mine == bytes);
    std::size_t position = 0;
    REQUIRE(text::decode_next(bytes, position) == c);
    REQUIRE(position == bytes.size());
    REQUIRE(text::length(bytes) == 1);
  }
  CHECK_FALSE(text::is_scalar_value(-1));
  CHECK_FALSE(text::is_scalar_value(0x110000));
}

TEST_CASE("is_ascii") {
  CHECK(text::is_ascii(""));
  CHECK(text::is_ascii(std::string(100, 'z')));
  CHECK_FALSE(text::is_ascii(std::string(40, 'z') + "é"));
  CHECK_FALSE(text::is_ascii("😀" + std::string(40, 'z')));
}

TEST_CASE("length counts code points") {
  CHECK(text::length("") == 0);
  CHECK(text::length("abc") == 3);
  CHECK(text::length("é") == 1);
  CHECK(text::length("Straße") == 6);
  CHECK(text::length("한국어") == 3);
  CHECK(text::length("a😀b") == 3);
  std::string long_text;
  for (int i = 0; i < 50; ++i) long_text += "x한😀é";
  CHECK(text::length(long_text) == 200);
}

TEST_CASE("slice is half-open over code points and strict about bounds") {
  CHECK(text::slice("hello", 1, 3) == "el");
  CHECK(text::slice("hello", 0, 5) == "hello");
  CHECK(text::slice("hello", 5, 5) == "");
  CHECK(text::slice("", 0, 0) == "");
  CHECK(text::slice("한국어", 1, 2) == "국");
  CHECK(text::slice("a😀bé", 1, 4) == "😀bé");
  CHECK(text::slice("Straße", 4, 6) == "ße");
  CHECK(error_of([] { text::slice("héllo", 2, 9); }) == "slice(2, 9): end 9 is out of range for a text of length 5");
  CHECK(error_of([] { text::slice("héllo", -1, 2); }) == "slice(-1, 2): start -1 is out of range for a text of length 5");
  CHECK(error_of([] { text::slice("héllo", 6, 7); }) == "slice(6, 7): start 6 is out of range for a text of length 5");
  CHECK(error_of([] { text::slice("héllo", 3, 2); }) == "slice(3, 2): end 2 is before start 3");
  CHECK(error_of([] { text::slice("", 0, 1); }) == "slice(0, 1): end 1 is out of range for a text of length 0");
}

TEST_CASE("char_at, code_point_at and from_code_point") {
  CHECK(text::char_at("a😀b", 1) == "😀");
  CHECK(text::char_at("한국어", 2) == "어");
  CHECK(text::code_point_at("a😀b", 1) == 0x1F600);
  CHECK(text::code_point_at("é", 0) == 0xE9);
  CHECK(text::code_point_at("z", 0) == 'z');
  CHECK(error_of([] { text::char_at("abc", 3); }) == "char_at(3): index 3 is out of range for a text of length 3");
  CHECK(error_of([] { text::char_at("", 0); }) == "char_at(0): index 0 is out of range for a text of length 0");
  CHECK(error_of([] { text::code_point_at("ß", -1); }) ==
        "code_point_at(-1): index -1 is out of range for a text of length 1");
  CHECK(text::from_code_point(0x41) == "A");
  CHECK(text::from_code_point(0xDF) == "ß");
  CHECK(text::from_code_point(0xD55C) == "한");
  CHECK(text::from_code_point(0x1F600) == "😀");
  CHECK(text::from_code_point(0) == std::string(1, '\0'));
  CHECK(text::from_code_point(0x10FFFF) == "\xF4\x8F\xBF\xBF");
  CHECK(error_of([] { text::from_code_point(0xD800); }) ==
        "from_code_point(55296): 55296 is a surrogate, not a Unicode scalar value");
  CHECK(error_of([] { text::from_code_point(0x110000); }) ==
        "from_code_point(1114112): 1114112 is outside 0..1114111 (U+10FFFF)");
  CHECK(error_of([] { text::from_code_point(-5); }) != "(no error)");
}

TEST_CASE("find returns code-point indexes") {
  CHECK(text::find("hello", "l") == 2);
  CHECK(text::find("hello", "l", 3) == 3);
  CHECK(text::find("hello", "l", 4) == -1);
  CHECK(text::find("hello", "") == 0);
  CHECK(text::find("hello", "", 5) == 5);
  CHECK(text::find("", "") == 0);
  CHECK(text::find("", "a") == -1);
  CHECK(text::find("한국어 한국어", "국") == 1);
  CHECK(text::find("한국어 한국어", "국", 2) == 5);
  CHECK(text::find("é😀é😀", "😀", 2) == 3);
  CHECK(text::find("Straße", "ße") == 4);
  CHECK(error_of([] { text::find("abc", "a", 4); }) == "find: start 4 is out of range for a text of length 3");
  CHECK(error_of([] { text::find("abc", "a", -1); }) == "find: start -1 is out of range for a text of length 3");
}

TEST_CASE("contains, starts_with, ends_with, compare") {
  CHECK(text::contains("한국어", "국"));
  CHECK(text::contains("abc", ""));
  CHECK_FALSE(text::contains("", "a"));
  CHECK(text::starts_with("😀smile", "😀"));
  CHECK_FALSE(text::starts_with("é", "e"));
  CHECK(text::ends_with("Straße", "ße"));
  CHECK(text::ends_with("", ""));
  CHECK_FALSE(text::ends_with("a", "ba"));
  CHECK(text::compare("a", "b") == -1);
  CHECK(text::compare("b", "a") == 1);
  CHECK(text::compare("", "") == 0);
  CHECK(text::compare("", "a") == -1);
  CHECK(text::compare("abc", "ab") == 1);
  // Code-point order: U+00E9 < U+D55C < U+1F600, and every non-ASCII code point sorts after ASCII.
  CHECK(text::compare("é", "한") == -1);
  CHECK(text::compare("😀", "한") == 1);
  CHECK(text::compare("z", "é") == -1);
  CHECK(text::compare("\xEF\xBF\xBF", "😀") == -1);  // U+FFFF < U+1F600
}

TEST_CASE("split keeps empty fields; an empty separator splits into code points") {
  CHECK(text::split("a,b,c", ",") == Strings{"a", "b", "c"});
  CHECK(text::split(",a,,b,", ",") == Strings{"", "a", "", "b", ""});
  CHECK(text::split("", ",") == Strings{""});
  CHECK(text::split("abc", ",") == Strings{"abc"});
  CHECK(text::split("a::b", "::") == Strings{"a", "b"});
  CHECK(text::split("aaa", "aa") == Strings{"", "a"});
  CHECK(text::split("한국어", "국") == Strings{"한", "어"});
  CHECK(text::split("é😀ß", "") == Strings{"é", "😀", "ß"});
  CHECK(text::split("", "") == Strings{});
}

TEST_CASE("split_whitespace splits on runs of ASCII white space") {
  CHECK(text::split_whitespace("  a b\t\tc\n") == Strings{"a", "b", "c"});
  CHECK(text::split_whitespace("") == Strings{});
  CHECK(text::split_whitespace(" \t\r\n\v\f ") == Strings{});
  CHECK(text::split_whitespace("한국어 😀\té") == Strings{"한국어", "😀", "é"});
  CHECK(text::split_whitespace("a\u00A0b") == Strings{"a\u00A0b"});  // no-break space is not ASCII
}

TEST_CASE("quote writes a text literal that reads back to the text") {
  CHECK(text::quote("") == "\"\"");
  CHECK(text::quote("plain é 😀") == "\"plain é 😀\"");
  CHECK(text::quote("x\", y: \"z") == "\"x\\\", y: \\\"z\"");
  CHECK(text::quote("a\\b{c}") == "\"a\\\\b\\{c}\"");
  CHECK(text::quote(std::string("\n\t\r\0\x01\x1F\x7F", 7)) == "\"\\n\\t\\r\\0\\u{01}\\u{1F}\\u{7F}\"");
  CHECK(text::quote("\u0085\u009F\u00A0") == "\"\\u{85}\\u{9F}\u00A0\"");  // C1 controls; NBSP kept
}

TEST_CASE("split_each hands out the fields split returns") {
  for (auto [t, sep] : std::vector<std::pair<std::string, std::string>>{{",a,,b,", ","}, {"é😀ß", ""}, {"", ""}, {"", ","}}) {
    Strings got;
    text::split_each(t, sep, [&](std::string_view f) { got.emplace_back(f); });
    CHECK(got == text::split(t, sep));
  }
  Strings words;
  text::split_whitespace_each("  a b\t\tc\n", [&](std::string_view f) { words.emplace_back(f); });
  CHECK(words == Strings{"a", "b", "c"});
}

TEST_CASE("join") {
  CHECK(text::join(std::vector<std::string_view>{"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(text::join(std::vector<std::string_view>{}, ",") == "");
  CHECK(text::join(std::vector<std::string_view>{""}, ",") == "");
  CHECK(text::join(std::vector<std::string_view>{"", ""}, ",") == ",");
  CHECK(text::join(Strings{"한", "어"}, "국") == "한국어");
}

TEST_CASE("replace replaces every occurrence left to right") {
  CHECK(text::replace("a-b-c", "-", "+") == "a+b+c");
  CHECK(text::replace("aaaa", "aa", "b") == "bb");
  CHECK(text::replace("aaa", "aa", "b") == "ba");
  CHECK(text::replace("abc", "x", "y") == "abc");
  CHECK(text::replace("", "x", "y") == "");
  CHECK(text::replace("한국어", "국", "😀😀") == "한😀😀어");
  CHECK(text::replace("Straße", "ß", "ss") == "Strasse");
  CHECK(text::replace("abab", "ab", "") == "");
  CHECK(error_of([] { text::replace("abc", "", "x"); }) == "replace: the text to replace must not be empty");
  std::string many(1 << 20, 'a'), long_replacement(2048, 'b');
  CHECK(error_of([&] { text::replace(many, "a", long_replacement); }) ==
        "replace: the result would be longer than 1073741824 bytes");
}

TEST_CASE("upper and lower use the documented tables") {
  CHECK(text::upper("hello, World 123") == "HELLO, WORLD 123");
  CHECK(text::lower("HELLO, World 123") == "hello, world 123");
  CHECK(text::upper("") == "");
  CHECK(text::upper("straße") == "STRAßE");  // ß has no one-code-point uppercase
  CHECK(text::upper("àéîõüýþ") == "ÀÉÎÕÜÝÞ");
  CHECK(text::lower("ÀÉÎÕÜÝÞ") == "àéîõüýþ");
  CHECK(text::upper("÷×") == "÷×");
  CHECK(text::upper("ÿ") == "ÿ");  // U+0178 is outside the tables
  CHECK(text::upper("µ") == "Μ");  // U+00B5 -> U+039C GREEK CAPITAL MU
  CHECK(text::upper("καλημέρα") == "ΚΑΛΗΜΈΡΑ");
  CHECK(text::lower("ΟΔΥΣΣΕΥΣ") == "οδυσσευσ");  // simple mapping: no final-sigma rule
  CHECK(text::upper("ς") == "Σ");
  CHECK(text::upper("ϐ") == "Β");
  CHECK(text::lower("Ϊ") == "ϊ");
  CHECK(text::upper("ΐ") == "ΐ");
  CHECK(text::upper("привет, мир") == "ПРИВЕТ, МИР");
  CHECK(text::lower("ЁЖИК") == "ёжик");
  CHECK(text::lower("Ѣ") == "ѣ");
  CHECK(text::upper("ѣ") == "Ѣ");
  CHECK(text::lower("Ӏ") == "ӏ");
  CHECK(text::upper("ӏ") == "Ӏ");
  CHECK(text::upper("ә") == "Ә");
  CHECK(text::upper("한국어 😀") == "한국어 😀");
  CHECK(text::lower("İ") == "İ");  // U+0130 is outside the tables
  CHECK(text::upper_code_point('q') == 'Q');
  CHECK(text::lower_code_point(0x0410) == 0x0430);
  // Mappings never leave the covered blocks, so they never change a code point's byte length.
  for (char32_t c = 0; c < 0x500; ++c) {
    CHECK(text::encoded_length(text::upper_code_point(c)) == text::encoded_length(c));
    CHECK(text::encoded_length(text::lower_code_point(c)) == text::encoded_length(c));
  }
}

TEST_CASE("trim uses the Unicode White_Space set") {
  CHECK(text::trim("  hi  ") == "hi");
  CHECK(text::trim("") == "");
  CHECK(text::trim(" \t\n ") == "");
  CHECK(text::trim("\u3000\u00A0한국어\u2029\u0085") == "한국어");
  CHECK(text::trim_start("\u2003 x y ") == "x y ");
  CHECK(text::trim_end(" x y \u202F") == " x y");
  CHECK(text::trim("\u200Bx\u200B") == "\u200Bx\u200B");  // ZERO WIDTH SPACE is not White_Space
  CHECK(text::trim("😀") == "😀");
  int count = 0;
  for (char32_t c = 0; c <= text::max_code_point; ++c) count += text::is_white_space(c);
  CHECK(count == 25);
}

TEST_CASE("repeat") {
  CHECK(text::repeat("ab", 3) == "ababab");
  CHECK(text::repeat("한", 2) == "한한");
  CHECK(text::repeat("ab", 0) == "");
  CHECK(text::repeat("", 1000000000000) == "");
  CHECK(error_of([] { text::repeat("a", -1); }) == "repeat: count -1 is negative");
  CHECK(error_of([] { text::repeat("ab", int64_t{1} << 40); }) ==
        "repeat: the result would be longer than 1073741824 bytes");
}

TEST_CASE("pad_left and pad_right count code points") {
  CHECK(text::pad_left("7", 3, '0') == "007");
  CHECK(text::pad_right("ab", 4) == "ab  ");
  CHECK(text::pad_left("한국", 4, 0x2605) == "★★한국");
  CHECK(text::pad_right("é", 3, "😀") == "é😀😀");
  CHECK(text::pad_left("hello", 3) == "hello");
  CHECK(text::pad_left("", 0) == "");
  CHECK(text::pad_left("", 2, "ß") == "ßß");
  CHECK(error_of([] { text::pad_left("a", -1); }) == "pad_left: width -1 is negative");
  CHECK(error_of([] { text::pad_right("a", 3, 0xDC00); }) == "pad_right: fill 56320 is not a Unicode scalar value");
  CHECK(error_of([] { text::pad_right("a", 3, "ab"); }) == "pad_right: fill must be exactly one character, got 2");
  CHECK(error_of([] { text::pad_left("a", 3, ""); }) == "pad_left: fill must be exactly one character, got 0");
  CHECK(error_of([] { text::pad_left("a", int64_t{1} << 50); }) ==
        "pad_left: the result would be longer than 1073741824 bytes");
}

TEST_CASE("reverse by code point") {
  CHECK(text::reverse("") == "");
  CHECK(text::reverse("abc") == "cba");
  CHECK(text::reverse("한국어") == "어국한");
  CHECK(text::reverse("a😀éß") == "ßé😀a");
}

TEST_CASE("IndexedText agrees with the free functions") {
  std::string mixed;
  for (int i = 0; i < 100; ++i) mixed += (i % 7 == 0) ? "😀" : (i % 3 == 0 ? "é" : "a");
  for (std::string sample : {std::string(""), std::string("plain ascii text"), mixed, std::string("한국어")}) {
    text::IndexedText indexed(sample);
    int64_t n = text::length(sample);
    CHECK(indexed.length() == n);
    CHECK(indexed.ascii() == text::is_ascii(sample));
    for (int64_t i = 0; i <= n; ++i) {
      CHECK(indexed.byte_offset(i) == text::byte_offset_of(sample, i));
      CHECK(indexed.index_of_byte(indexed.byte_offset(i)) == i);
      CHECK(indexed.slice(i, n) == text::slice(sample, i, n));
      CHECK(indexed.slice(0, i) == text::slice(sample, 0, i));
      CHECK(indexed.find("😀", i) == text::find(sample, "😀", i));
      if (i < n) {
        CHECK(indexed.char_at(i) == text::char_at(sample, i));
        CHECK(indexed.code_point_at(i) == text::code_point_at(sample, i));
      }
    }
    CHECK(error_of([&] { indexed.slice(0, n + 1); }) == error_of([&] { text::slice(sample, 0, n + 1); }));
    CHECK(error_of([&] { indexed.char_at(n); }) == error_of([&] { text::char_at(sample, n); }));
    CHECK(error_of([&] { indexed.find("a", n + 1); }) == error_of([&] { text::find(sample, "a", n + 1); }));
  }
}

// --- randomized comparison against a code-point reference ---------------------------------------

namespace {

std::vector<std::u32string> reference_split(const std::u32string& text, const std::u32string& separator) {
  std::vector<std::u32string> fields(1);
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, separator.size(), separator) == 0) {
      fields.emplace_back();
      i += separator.size();
    } else {
      fields.back() += text[i++];
    }
  }
  return fields;
}

int64_t reference_find(const std::u32string& text, const std::u32string& needle, std::size_t from) {
  for (std::size_t i = from; i + needle.size() <= text.size(); ++i)
    if (text.compare(i, needle.size(), needle) == 0) return static_cast<int64_t>(i);
  return -1;
}

uint64_t test_seed() {
  if (const char* fixed = std::getenv("PURE_TEST_SEED")) return std::strtoull(fixed, nullptr, 10);
  return std::random_device{}();
}

}  // namespace

TEST_CASE("randomized: byte offsets, length and indexing on long texts match a reference") {
  const uint64_t seed = test_seed();
  INFO("seed = " << seed << " (replay with PURE_TEST_SEED=" << seed << ")");
  std::mt19937_64 random(seed);
  for (int round = 0; round < 6; ++round) {
    // Long runs of one kind of code point cross the scanners' 8- and 256-byte blocks in every way.
    std::u32string wide;
    const char32_t kinds[] = {U'a', U'\u00E9', U'\uD55C', U'\U0001F600'};
    while (wide.size() < 3000) wide.append(1 + random() % 300, kinds[random() % 4]);
    if (round == 0) wide.assign(3000, U'z');
    std::string bytes = encode(wide);
    CAPTURE(round);
    std::vector<std::size_t> offsets{0};
    for (char32_t c : wide) offsets.push_back(offsets.back() + encode(std::u32string(1, c)).size());
    const int64_t n = static_cast<int64_t>(wide.size());
    REQUIRE(text::length(bytes) == n);
    text::IndexedText indexed(bytes);
    REQUIRE(indexed.length() == n);
    for (int64_t i = 0; i <= n; ++i) {
      REQUIRE(text::byte_offset_of(bytes, i) == offsets[i]);
      REQUIRE(indexed.byte_offset(i) == offsets[i]);
      REQUIRE(indexed.index_of_byte(offsets[i]) == i);
      REQUIRE(text::length(std::string_view(bytes).substr(0, offsets[i])) == i);
    }
    REQUIRE(text::byte_offset_of(bytes, n + 1) == std::string_view::npos);
    for (int sample = 0; sample < 200; ++sample) {
      int64_t start = static_cast<int64_t>(random() % (n + 1));
      int64_t end = start + static_cast<int64_t>(random() % (n - start + 1));
      REQUIRE(text::slice(bytes, start, end) == encode(wide.substr(start, end - start)));
      REQUIRE(indexed.slice(start, end) == encode(wide.substr(start, end - start)));
      if (start < n) REQUIRE(indexed.code_point_at(start) == static_cast<int64_t>(wide[start]));
    }
  }
}

TEST_CASE("randomized: split/join round trips, find, slice and length match a reference") {
  const uint64_t seed = test_seed();
  INFO("seed = " << seed << " (replay with PURE_TEST_SEED=" << seed << ")");
  std::mt19937_64 random(seed);
  // A small alphabet so separators and needles actually occur; 1- to 4-byte code points.
  const std::u32string alphabet = U"ab,-é\u00DF\uD55C\u1F60\U0001F600\U0010FFFF ";
  auto random_text = [&](std::size_t max_length) {
    std::u32string out;
    std::size_t size = random() % (max_length + 1);
    for (std::size_t i = 0; i < size; ++i) out += alphabet[random() % alphabet.size()];
    return out;
  };
  for (int round = 0; round < 3000; ++round) {
    std::u32string wide = random_text(round % 10 == 0 ? 200 : 24);
    std::u32string separator = random_text(3);
    if (separator.empty()) separator.push_back(U',');  // push_back: g++ 12 warns falsely on assigning a literal
    std::string bytes = encode(wide), separator_bytes = encode(separator);
    CAPTURE(round);
    CAPTURE(bytes);
    CAPTURE(separator_bytes);

    REQUIRE(text::length(bytes) == static_cast<int64_t>(wide.size()));
    Strings fields = text::split(bytes, separator_bytes);
    Strings expected;
    for (const auto& field : reference_split(wide, separator)) expected.push_back(encode(field));
    REQUIRE(fields == expected);
    REQUIRE(text::join(fields, separator_bytes) == bytes);
    REQUIRE(text::join(text::split(bytes, ""), "") == bytes);

    std::u32string needle = random_text(2);
    std::size_t from = random() % (wide.size() + 1);
    REQUIRE(text::find(bytes, encode(needle), static_cast<int64_t>(from)) == reference_find(wide, needle, from));
    REQUIRE(text::contains(bytes, encode(needle)) == (reference_find(wide, needle, 0) >= 0));

    std::size_t start = random() % (wide.size() + 1);
    std::size_t end = start + random() % (wide.size() - start + 1);
    REQUIRE(text::slice(bytes, static_cast<int64_t>(start), static_cast<int64_t>(end)) ==
            encode(wide.substr(start, end - start)));
    REQUIRE(text::reverse(bytes) == encode(std::u32string(wide.rbegin(), wide.rend())));
    REQUIRE(text::utf8_valid(bytes));
  }
}
