// stdlib/utf8.cpp: strict UTF-8 validation and the word-at-a-time scans used by the text functions.
// Depends only on the C++ standard library.
#include "stdlib/utf8.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace pure::text {
namespace {

constexpr uint64_t high_bits = 0x8080808080808080ULL;

uint64_t load_word(const char* bytes) {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof word);  // unaligned-safe; compiles to one load
  return word;
}

// One bit (bit 7 of its byte) per continuation byte 10xxxxxx: bit 7 set and bit 6 clear.
// Shifting left by one moves each byte's bit 6 under its bit 7; the carry into the next
// byte lands on bit 0, which the mask drops.
uint64_t continuation_bits(uint64_t word) { return word & ~(word << 1) & high_bits; }

int lead_bytes_in_word(uint64_t word) { return 8 - std::popcount(continuation_bits(word)); }

// Checks the sequence starting at `position`; returns its length, or 0 and sets `reason`.
int check_sequence(std::string_view bytes, std::size_t position, const char*& reason) {
  auto at = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  unsigned char lead = at(position);
  if (lead < 0x80) return 1;
  if (lead < 0xC0) { reason = "unexpected continuation byte"; return 0; }
  if (lead < 0xC2) { reason = "overlong encoding"; return 0; }
  if (lead > 0xF4) { reason = "byte that never appears in UTF-8"; return 0; }
  int length = sequence_length(lead);
  // The second byte's allowed range is narrower after some lead bytes (RFC 3629 table).
  unsigned char low = 0x80, high = 0xBF;
  const char* narrow_reason = nullptr;
  if (lead == 0xE0) { low = 0xA0; narrow_reason = "overlong encoding"; }
  if (lead == 0xED) { high = 0x9F; narrow_reason = "surrogate code point"; }
  if (lead == 0xF0) { low = 0x90; narrow_reason = "overlong encoding"; }
  if (lead == 0xF4) { high = 0x8F; narrow_reason = "code point above U+10FFFF"; }
  for (int k = 1; k < length; ++k) {
    if (position + k >= bytes.size()) { reason = "truncated sequence"; return 0; }
    unsigned char byte = at(position + k);
    if (!is_continuation_byte(byte)) { reason = "truncated sequence"; return 0; }
    if (k == 1 && (byte < low || byte > high)) { reason = narrow_reason; return 0; }
  }
  return length;
}

}  // namespace

std::optional<Utf8Error> utf8_check(std::string_view bytes) {
  std::size_t position = 0;
  const std::size_t size = bytes.size();
  while (position < size) {
    while (position + 8 <= size && (load_word(bytes.data() + position) & high_bits) == 0) position += 8;
    if (position >= size) break;
    const char* reason = nullptr;
    int length = check_sequence(bytes, position, reason);
    if (length == 0) return Utf8Error{position, reason};
    position += length;
  }
  return std::nullopt;
}

bool utf8_valid(std::string_view bytes) { return !utf8_check(bytes).has_value(); }

std::optional<std::size_t> utf8_first_invalid(std::string_view bytes) {
  auto error = utf8_check(bytes);
  if (!error) return std::nullopt;
  return error->offset;
}

std::string utf8_error_message(std::string_view bytes) {
  auto error = utf8_check(bytes);
  if (!error) return {};
  return "invalid UTF-8 at byte " + std::to_string(error->offset) + ": " + error->reason;
}

bool is_ascii(std::string_view text) {
  std::size_t position = 0;
  uint64_t seen = 0;
  for (; position + 8 <= text.size(); position += 8) seen |= load_word(text.data() + position);
  for (; position < text.size(); ++position) seen |= static_cast<unsigned char>(text[position]);
  return (seen & high_bits) == 0;
}

char32_t decode_next(std::string_view text, std::size_t& position) {
  auto byte = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[i])); };
  char32_t lead = byte(position);
  switch (sequence_length(static_cast<unsigned char>(lead))) {
    case 1:
      position += 1;
      return lead;
    case 2: {
      char32_t value = ((lead & 0x1F) << 6) | (byte(position + 1) & 0x3F);
      position += 2;
      return value;
    }
    case 3: {
      char32_t value = ((lead & 0x0F) << 12) | ((byte(position + 1) & 0x3F) << 6) | (byte(position + 2) & 0x3F);
      position += 3;
      return value;
    }
    default: {
      char32_t value = ((lead & 0x07) << 18) | ((byte(position + 1) & 0x3F) << 12) |
                       ((byte(position + 2) & 0x3F) << 6) | (byte(position + 3) & 0x3F);
      position += 4;
      return value;
    }
  }
}

char32_t decode_previous(std::string_view text, std::size_t& position) {
  std::size_t start = position - 1;
  while (start > 0 && is_continuation_byte(static_cast<unsigned char>(text[start]))) --start;
  std::size_t cursor = start;
  char32_t value = decode_next(text, cursor);
  position = start;
  return value;
}

int encoded_length(char32_t code_point) {
  if (code_point < 0x80) return 1;
  if (code_point < 0x800) return 2;
  if (code_point < 0x10000) return 3;
  return 4;
}

void append_code_point(std::string& out, char32_t code_point) {
  auto put = [&](char32_t value) { out.push_back(static_cast<char>(value)); };
  switch (encoded_length(code_point)) {
    case 1:
      put(code_point);
      break;
    case 2:
      put(0xC0 | (code_point >> 6));
      put(0x80 | (code_point & 0x3F));
      break;
    case 3:
      put(0xE0 | (code_point >> 12));
      put(0x80 | ((code_point >> 6) & 0x3F));
      put(0x80 | (code_point & 0x3F));
      break;
    default:
      put(0xF0 | (code_point >> 18));
      put(0x80 | ((code_point >> 12) & 0x3F));
      put(0x80 | ((code_point >> 6) & 0x3F));
      put(0x80 | (code_point & 0x3F));
      break;
  }
}

int64_t count_code_points(std::string_view text) {
  std::size_t position = 0;
  int64_t continuation = 0;
  // Per-byte counters (0 or 1 added per word) summed in blocks of at most 255 words so no byte
  // lane overflows; then the eight lanes are added up. Cheaper than a popcount per word.
  while (position + 8 <= text.size()) {
    std::size_t words = std::min<std::size_t>((text.size() - position) / 8, 255);
    uint64_t lanes = 0;
    for (std::size_t i = 0; i < words; ++i, position += 8)
      lanes += continuation_bits(load_word(text.data() + position)) >> 7;
    uint64_t pairs = (lanes & 0x00FF00FF00FF00FFULL) + ((lanes >> 8) & 0x00FF00FF00FF00FFULL);
    continuation += static_cast<int64_t>((pairs * 0x0001000100010001ULL) >> 48);
  }
  for (; position < text.size(); ++position)
    continuation += is_continuation_byte(static_cast<unsigned char>(text[position]));
  return static_cast<int64_t>(text.size()) - continuation;
}

std::size_t byte_offset_of(std::string_view text, int64_t index) {
  if (index < 0) return std::string_view::npos;
  std::size_t position = 0;
  int64_t remaining = index;
  // Skip blocks of 32 words, then single words, while they hold no more code-point starts than we
  // still have to pass. A word may end inside a code point; its continuation bytes are skipped below.
  constexpr std::size_t block_bytes = 256;
  while (position + block_bytes <= text.size()) {
    uint64_t lanes = 0;
    for (std::size_t i = 0; i < block_bytes; i += 8) lanes += continuation_bits(load_word(text.data() + position + i)) >> 7;
    uint64_t pairs = (lanes & 0x00FF00FF00FF00FFULL) + ((lanes >> 8) & 0x00FF00FF00FF00FFULL);
    int64_t leads = static_cast<int64_t>(block_bytes) - static_cast<int64_t>((pairs * 0x0001000100010001ULL) >> 48);
    if (leads > remaining) break;
    remaining -= leads;
    position += block_bytes;
  }
  while (position + 8 <= text.size()) {
    int leads = lead_bytes_in_word(load_word(text.data() + position));
    if (leads > remaining) break;
    remaining -= leads;
    position += 8;
  }
  for (; position < text.size(); ++position) {
    if (is_continuation_byte(static_cast<unsigned char>(text[position]))) continue;
    if (remaining == 0) return position;
    --remaining;
  }
  return remaining == 0 ? text.size() : std::string_view::npos;
}

}  // namespace pure::text
