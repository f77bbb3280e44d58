// stdlib/text.h: the text functions of Pure's standard library, as plain functions over valid UTF-8.
// Depends only on stdlib/utf8.h and the C++ standard library (the VM wraps these as builtins).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "stdlib/utf8.h"

namespace pure::text {

// Every index, length and width below counts Unicode code points, never bytes.
// Inputs must be valid UTF-8 (the language guarantees it; check outside input with utf8_check).
// Misuse (index out of range, negative count, empty pattern, ...) throws TextError; its what()
// is a complete sentence-fragment the VM can show as the runtime error, e.g.
// "slice(2, 9): end 9 is out of range for a text of length 5".
class TextError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Results larger than this many bytes throw TextError instead of exhausting memory.
inline constexpr std::size_t max_text_bytes = std::size_t{1} << 30;

// --- positions -----------------------------------------------------------------------------------
int64_t length(std::string_view text);
// Code points [start, end); requires 0 <= start <= end <= length(text).
std::string slice(std::string_view text, int64_t start, int64_t end);
// The code point at `index` as a one-code-point text / as a number; requires 0 <= index < length.
std::string char_at(std::string_view text, int64_t index);
int64_t code_point_at(std::string_view text, int64_t index);
// Requires a Unicode scalar value (0..0x10FFFF, not 0xD800..0xDFFF).
std::string from_code_point(int64_t code_point);

// --- searching -----------------------------------------------------------------------------------
// Index of the first match at or after `from` (0 <= from <= length), or -1. An empty needle matches at `from`.
int64_t find(std::string_view haystack, std::string_view needle, int64_t from = 0);
bool contains(std::string_view haystack, std::string_view needle);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
// -1, 0 or 1 by code-point order (the same as byte order for UTF-8).
int compare(std::string_view left, std::string_view right);

// --- splitting and joining -----------------------------------------------------------------------
// Keeps empty fields like Python's str.split(sep): split("", ",") == {""}, split(",a,", ",") == {"", "a", ""}.
// An empty separator splits into code points: split("", "") == {}.
std::vector<std::string> split(std::string_view text, std::string_view separator);
// Fields separated by runs of ASCII whitespace (space \t \n \v \f \r), no empty fields (Python's str.split()).
std::vector<std::string> split_whitespace(std::string_view text);
// The same fields, handed one at a time to `each` (views into `text`) instead of built into a
// vector: a caller that keeps them elsewhere holds them only once. Templates, so that the VM's
// split calls `each` inline (no std::function per field).
template <class Each>
void split_each(std::string_view text, std::string_view separator, Each&& each);
template <class Each>
void split_whitespace_each(std::string_view text, Each&& each);
// The pieces of a text one at a time, each a view into it: the fields of split (Split, by a
// separator), of split_whitespace (Words), or its lines (Lines: ended by "\n" or "\r\n"; a '\r'
// not followed by '\n' is kept, and a last "\n" starts no empty line). split_each,
// split_whitespace_each and the VM's lines() and its loops over pieces (`for w in t.split(s)`)
// all cut with it, so the pieces are defined once. Holds views: `text` and `separator` must
// outlive it.
class Pieces {
 public:
  enum Kind : uint8_t { Split, Words, Lines };
  Pieces() = default;
  Pieces(std::string_view text, Kind kind, std::string_view separator = {})
      : text_(text), separator_(separator), kind_(kind) {}
  bool next(std::string_view& piece);  // the next piece; false when they are done

 private:
  std::string_view text_, separator_;
  std::size_t position_ = 0;
  Kind kind_ = Split;
  bool done_ = false;
};
std::string join(const std::vector<std::string_view>& parts, std::string_view separator);
std::string join(const std::vector<std::string>& parts, std::string_view separator);

// --- building ------------------------------------------------------------------------------------
// Replaces every non-overlapping occurrence, left to right; `from` must not be empty.
std::string replace(std::string_view text, std::string_view from, std::string_view to);
std::string repeat(std::string_view text, int64_t count);  // count >= 0
// Adds `fill` on the left/right until the text is `width` code points long (width >= 0; longer texts
// are returned unchanged). `fill` is a scalar value, or a text of exactly one code point.
std::string pad_left(std::string_view text, int64_t width, int64_t fill = ' ');
std::string pad_right(std::string_view text, int64_t width, int64_t fill = ' ');
std::string pad_left(std::string_view text, int64_t width, std::string_view fill);
std::string pad_right(std::string_view text, int64_t width, std::string_view fill);
std::string reverse(std::string_view text);  // by code point (combining marks are not kept with their base)
// The text as a Pure text literal that reads back to it: in double quotes, with \\ \" and \{
// escaped, \n \t \r \0 for those controls, and \u{HEX} for the other C0 controls, DEL and the C1
// controls (U+0080..U+009F). Everything else is kept as it is. quote("a\"b") == "\"a\\\"b\"".
std::string quote(std::string_view text);

// --- case and white space (fixed tables, independent of locale; see docs/text.md) -----------------
// Unicode simple case mappings for Basic Latin, Latin-1 Supplement, Greek and Coptic (U+0370..U+03FF)
// and Cyrillic (U+0400..U+04FF), where both the code point and its mapping lie in those blocks.
std::string upper(std::string_view text);
std::string lower(std::string_view text);
char32_t upper_code_point(char32_t code_point);
char32_t lower_code_point(char32_t code_point);
// The Unicode White_Space property (25 code points).
bool is_white_space(char32_t code_point);
std::string trim(std::string_view text);
std::string trim_start(std::string_view text);
std::string trim_end(std::string_view text);

// --- repeated indexing -----------------------------------------------------------------------------
// A view of one text with a sparse index of code-point positions, built once in O(n), so loops that
// index or slice the same text cost O(1) per call for ASCII texts and O(checkpoint_stride) otherwise
// (the free functions above scan from the front every call). It keeps only a view: the text must
// outlive it. Texts of 4 GiB or more throw TextError (offsets are stored in 32 bits).
class IndexedText {
 public:
  static constexpr int64_t checkpoint_stride = 32;

  explicit IndexedText(std::string_view text);
  std::string_view text() const { return text_; }
  int64_t length() const { return length_; }
  bool ascii() const { return ascii_; }
  // Byte offset of code point `index` (0 <= index <= length; length gives text().size()).
  std::size_t byte_offset(int64_t index) const;
  // Code-point index of the code point that starts at byte `offset` (0 <= offset <= text().size()).
  int64_t index_of_byte(std::size_t offset) const;

  std::string slice(int64_t start, int64_t end) const;
  std::string char_at(int64_t index) const;
  int64_t code_point_at(int64_t index) const;
  int64_t find(std::string_view needle, int64_t from = 0) const;

 private:
  std::string_view text_;
  int64_t length_ = 0;
  bool ascii_ = true;
  std::vector<uint32_t> checkpoints_;  // checkpoints_[k] = byte offset of code point k * stride
};


// ---- the templates above ------------------------------------------------------------------------
// The first byte equal to c in [p, end), or end: eight bytes at a time (a zero byte of w ^ c*0x01..
// marks a match; the lowest such byte is exact on a little-endian machine, which x86-64 and
// AArch64 Linux both are), so the short fields of a split take no call.
// byte_pattern(c) is c in each of eight bytes: a caller that looks for the same byte many times
// (a split walked piece by piece) makes it once.
constexpr uint64_t byte_pattern(char c) { return 0x0101010101010101ull * static_cast<unsigned char>(c); }
inline const char* find_byte(const char* p, const char* end, char c, uint64_t pattern) {
  static_assert(std::endian::native == std::endian::little);
  for (; end - p >= 8; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    uint64_t x = w ^ pattern;
    uint64_t hit = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
    if (hit) return p + (__builtin_ctzll(hit) >> 3);
  }
  for (; p < end; ++p)
    if (*p == c) return p;
  return end;
}
inline const char* find_byte(const char* p, const char* end, char c) { return find_byte(p, end, c, byte_pattern(c)); }
namespace detail {
inline bool ascii_white_space(char byte) {
  return byte == ' ' || byte == '\t' || byte == '\n' || byte == '\v' || byte == '\f' || byte == '\r';
}
}  // namespace detail

inline bool Pieces::next(std::string_view& piece) {
  if (done_) return false;
  std::size_t size = text_.size();
  switch (kind_) {
    case Split:
      if (separator_.empty()) {  // code points
        if (position_ >= size) return done_ = true, false;
        std::size_t n = static_cast<std::size_t>(sequence_length(static_cast<unsigned char>(text_[position_])));
        piece = text_.substr(position_, n);
        position_ += n;
        return true;
      }
      if (separator_.size() == 1) {
        const char* p = text_.data() + position_;
        const char* end = text_.data() + size;
        const char* hit = find_byte(p, end, separator_[0]);
        piece = std::string_view(p, static_cast<std::size_t>(hit - p));
        if (hit == end) done_ = true;
        else position_ = static_cast<std::size_t>(hit - text_.data()) + 1;
        return true;
      } else {
        std::size_t match = text_.find(separator_, position_);
        if (match == std::string_view::npos) {
          piece = text_.substr(position_);
          done_ = true;
        } else {
          piece = text_.substr(position_, match - position_);
          position_ = match + separator_.size();
        }
        return true;
      }
    case Words: {
      while (position_ < size && detail::ascii_white_space(text_[position_])) ++position_;
      if (position_ == size) return done_ = true, false;
      std::size_t start = position_;
      while (position_ < size && !detail::ascii_white_space(text_[position_])) ++position_;
      piece = text_.substr(start, position_ - start);
      return true;
    }
    case Lines: {
      if (position_ >= size) return done_ = true, false;
      std::size_t nl = text_.find('\n', position_);
      std::size_t end = nl == std::string_view::npos ? size : nl;
      piece = text_.substr(position_, end - position_);
      if (nl != std::string_view::npos && !piece.empty() && piece.back() == '\r') piece.remove_suffix(1);
      position_ = end + 1;
      return true;
    }
  }
  return done_ = true, false;
}

template <class Each>
void split_each(std::string_view text, std::string_view separator, Each&& each) {
  Pieces pieces(text, Pieces::Split, separator);
  for (std::string_view piece; pieces.next(piece);) each(piece);
}

template <class Each>
void split_whitespace_each(std::string_view text, Each&& each) {
  Pieces pieces(text, Pieces::Words);
  for (std::string_view piece; pieces.next(piece);) each(piece);
}

}  // namespace pure::text
