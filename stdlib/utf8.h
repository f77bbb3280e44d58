// stdlib/utf8.h: UTF-8 validation, decoding, encoding and code-point counting over std::string_view.
// Depends only on the C++ standard library; nothing else in Pure (the VM and runtime build on it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pure::text {

inline constexpr char32_t max_code_point = 0x10FFFF;

// Why a UTF-8 check failed: `offset` is the byte index where the bad sequence starts.
struct Utf8Error {
  std::size_t offset = 0;
  std::string reason;  // e.g. "truncated sequence", "surrogate code point"
};

// Strict validation (RFC 3629): rejects overlong forms, surrogates, values above U+10FFFF,
// stray continuation bytes and sequences cut short by the end of the input.
std::optional<Utf8Error> utf8_check(std::string_view bytes);
bool utf8_valid(std::string_view bytes);
// Byte offset of the first invalid sequence, or nullopt when the input is valid UTF-8.
std::optional<std::size_t> utf8_first_invalid(std::string_view bytes);
// "invalid UTF-8 at byte 12: truncated sequence" (for the VM's input errors); "" when valid.
std::string utf8_error_message(std::string_view bytes);

// True when every byte is below 0x80 (then byte indexes are code-point indexes).
bool is_ascii(std::string_view text);

// A Unicode scalar value: 0..0x10FFFF without the surrogates 0xD800..0xDFFF.
constexpr bool is_scalar_value(int64_t value) {
  return value >= 0 && value <= int64_t{max_code_point} && !(value >= 0xD800 && value <= 0xDFFF);
}

constexpr bool is_continuation_byte(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the sequence that starts with `lead` (1..4); only meaningful for valid UTF-8.
constexpr int sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Decodes the code point starting at byte `position` of valid UTF-8 and moves `position` past it.
char32_t decode_next(std::string_view text, std::size_t& position);
// Decodes the code point that ends just before byte `position` and moves `position` to its start.
char32_t decode_previous(std::string_view text, std::size_t& position);

// Appends the UTF-8 form of a scalar value (the caller has checked is_scalar_value).
void append_code_point(std::string& out, char32_t code_point);
int encoded_length(char32_t code_point);

// Number of code points in valid UTF-8: counts bytes that are not continuation bytes, eight at a time.
int64_t count_code_points(std::string_view text);

// Byte offset where code point number `index` starts (index == count gives text.size()), scanning
// from the front eight bytes at a time; npos when index < 0 or index > count_code_points(text).
std::size_t byte_offset_of(std::string_view text, int64_t index);

}  // namespace pure::text
