// stdlib/text.cpp: Pure's text functions (positions in code points, errors as TextError).
// Depends only on stdlib/utf8.h and the C++ standard library; knows nothing of the VM's values.
#include "stdlib/text.h"

#include <algorithm>
#include <array>

namespace pure::text {
namespace {

constexpr auto npos = std::string_view::npos;

std::string number(int64_t value) { return std::to_string(value); }

[[noreturn]] void fail(const std::string& message) { throw TextError(message); }

[[noreturn]] void fail_index(const std::string& call, const char* what, int64_t value, int64_t length) {
  fail(call + ": " + what + " " + number(value) + " is out of range for a text of length " + number(length));
}

[[noreturn]] void fail_too_long(const char* function) {
  fail(std::string(function) + ": the result would be longer than " + std::to_string(max_text_bytes) + " bytes");
}

void require_size(const char* function, std::size_t bytes) {
  if (bytes > max_text_bytes) fail_too_long(function);
}

// Checks 0 <= start <= end <= length for slice(); `length` is only computed when a check fails,
// so the free functions never pay for counting the whole text.
template <class LengthFunction>
void require_slice_bounds(int64_t start, int64_t end, bool start_ok, bool end_ok, LengthFunction length) {
  std::string call = "slice(" + number(start) + ", " + number(end) + ")";
  if (start < 0 || !start_ok) fail_index(call, "start", start, length());
  if (end < start) fail(call + ": end " + number(end) + " is before start " + number(start));
  if (!end_ok) fail_index(call, "end", end, length());
}

std::string_view code_point_view(std::string_view text, std::size_t offset) {
  return text.substr(offset, sequence_length(static_cast<unsigned char>(text[offset])));
}

char32_t require_fill(const char* function, int64_t fill) {
  if (!is_scalar_value(fill))
    fail(std::string(function) + ": fill " + number(fill) + " is not a Unicode scalar value");
  return static_cast<char32_t>(fill);
}

char32_t fill_from_text(const char* function, std::string_view fill) {
  if (fill.empty() || static_cast<std::size_t>(sequence_length(static_cast<unsigned char>(fill[0]))) != fill.size())
    fail(std::string(function) + ": fill must be exactly one character, got " + number(count_code_points(fill)));
  std::size_t position = 0;
  return decode_next(fill, position);
}

std::string pad(const char* function, std::string_view text, int64_t width, char32_t fill, bool on_left) {
  if (width < 0) fail(std::string(function) + ": width " + number(width) + " is negative");
  int64_t missing = width - count_code_points(text);
  if (missing <= 0) return std::string(text);
  std::string fill_bytes;
  append_code_point(fill_bytes, fill);
  if (static_cast<uint64_t>(missing) > max_text_bytes / fill_bytes.size()) fail_too_long(function);
  require_size(function, text.size() + static_cast<std::size_t>(missing) * fill_bytes.size());
  std::string out;
  out.reserve(text.size() + static_cast<std::size_t>(missing) * fill_bytes.size());
  if (!on_left) out += text;
  for (int64_t i = 0; i < missing; ++i) out += fill_bytes;
  if (on_left) out += text;
  return out;
}

// Case tables: Unicode simple case mappings (UnicodeData.txt) restricted to code points whose
// mapping stays inside Basic Latin, Latin-1 Supplement, Greek and Coptic, and Cyrillic.
// A rule maps first..last by adding `delta`; with stride 2 only every other code point from
// `first` maps (upper/lower pairs that alternate). So U+00DF ß and U+00FF ÿ stay as they are
// (their uppercase forms are "SS" and U+0178, outside the tables).
struct CaseRule {
  char32_t first, last;
  int32_t delta;
  int32_t stride;
};

constexpr std::array<CaseRule, 34> upper_rules{{
    {0x0061, 0x007A, -32, 1},  {0x00B5, 0x00B5, 743, 1},  {0x00E0, 0x00F6, -32, 1}, {0x00F8, 0x00FE, -32, 1},
    {0x0371, 0x0373, -1, 2},   {0x0377, 0x0377, -1, 1},   {0x037B, 0x037D, 130, 1}, {0x03AC, 0x03AC, -38, 1},
    {0x03AD, 0x03AF, -37, 1},  {0x03B1, 0x03C1, -32, 1},  {0x03C2, 0x03C2, -31, 1}, {0x03C3, 0x03CB, -32, 1},
    {0x03CC, 0x03CC, -64, 1},  {0x03CD, 0x03CE, -63, 1},  {0x03D0, 0x03D0, -62, 1}, {0x03D1, 0x03D1, -57, 1},
    {0x03D5, 0x03D5, -47, 1},  {0x03D6, 0x03D6, -54, 1},  {0x03D7, 0x03D7, -8, 1},  {0x03D9, 0x03EF, -1, 2},
    {0x03F0, 0x03F0, -86, 1},  {0x03F1, 0x03F1, -80, 1},  {0x03F2, 0x03F2, 7, 1},   {0x03F3, 0x03F3, -116, 1},
    {0x03F5, 0x03F5, -96, 1},  {0x03F8, 0x03F8, -1, 1},   {0x03FB, 0x03FB, -1, 1},  {0x0430, 0x044F, -32, 1},
    {0x0450, 0x045F, -80, 1},  {0x0461, 0x0481, -1, 2},   {0x048B, 0x04BF, -1, 2},  {0x04C2, 0x04CE, -1, 2},
    {0x04CF, 0x04CF, -15, 1},  {0x04D1, 0x04FF, -1, 2},
}};

constexpr std::array<CaseRule, 26> lower_rules{{
    {0x0041, 0x005A, 32, 1},   {0x00C0, 0x00D6, 32, 1},  {0x00D8, 0x00DE, 32, 1},  {0x0370, 0x0372, 1, 2},
    {0x0376, 0x0376, 1, 1},    {0x037F, 0x037F, 116, 1}, {0x0386, 0x0386, 38, 1},  {0x0388, 0x038A, 37, 1},
    {0x038C, 0x038C, 64, 1},   {0x038E, 0x038F, 63, 1},  {0x0391, 0x03A1, 32, 1},  {0x03A3, 0x03AB, 32, 1},
    {0x03CF, 0x03CF, 8, 1},    {0x03D8, 0x03EE, 1, 2},   {0x03F4, 0x03F4, -60, 1}, {0x03F7, 0x03F7, 1, 1},
    {0x03F9, 0x03F9, -7, 1},   {0x03FA, 0x03FA, 1, 1},   {0x03FD, 0x03FF, -130, 1}, {0x0400, 0x040F, 80, 1},
    {0x0410, 0x042F, 32, 1},   {0x0460, 0x0480, 1, 2},   {0x048A, 0x04BE, 1, 2},   {0x04C0, 0x04C0, 15, 1},
    {0x04C1, 0x04CD, 1, 2},    {0x04D0, 0x04FE, 1, 2},
}};

template <std::size_t N>
char32_t apply_case(const std::array<CaseRule, N>& rules, char32_t code_point) {
  if (code_point > 0x04FF) return code_point;
  // Rules are sorted and disjoint: find the last rule starting at or before the code point.
  auto after = std::upper_bound(rules.begin(), rules.end(), code_point,
                                [](char32_t value, const CaseRule& rule) { return value < rule.first; });
  if (after == rules.begin()) return code_point;
  const CaseRule& rule = *(after - 1);
  if (code_point > rule.last || (code_point - rule.first) % rule.stride != 0) return code_point;
  return static_cast<char32_t>(static_cast<int32_t>(code_point) + rule.delta);
}

// Every mapping stays inside U+0000..U+04FF and keeps ASCII as ASCII, so it never changes a code
// point's encoded length (the tests check this): copy the text, then rewrite in place. Only ASCII
// bytes and two-byte sequences with lead bytes up to 0xD3 (code points below U+0500) can change.
template <class MapFunction>
std::string map_code_points(std::string_view text, MapFunction map) {
  std::string out(text);
  std::size_t position = 0;
  while (position < out.size()) {
    auto byte = static_cast<unsigned char>(out[position]);
    if (byte < 0x80) {
      out[position++] = static_cast<char>(map(byte));
    } else if (byte <= 0xD3) {
      std::size_t start = position;
      char32_t mapped = map(decode_next(out, position));
      out[start] = static_cast<char>(0xC0 | (mapped >> 6));
      out[start + 1] = static_cast<char>(0x80 | (mapped & 0x3F));
    } else {
      position += sequence_length(byte);
    }
  }
  return out;
}

std::size_t white_space_prefix_bytes(std::string_view text) {
  std::size_t position = 0;
  while (position < text.size()) {
    std::size_t next = position;
    if (!is_white_space(decode_next(text, next))) break;
    position = next;
  }
  return position;
}

std::size_t end_without_white_space(std::string_view text) {
  std::size_t position = text.size();
  while (position > 0) {
    std::size_t previous = position;
    if (!is_white_space(decode_previous(text, previous))) break;
    position = previous;
  }
  return position;
}

template <class Part>
std::string join_parts(const std::vector<Part>& parts, std::string_view separator) {
  std::size_t total = parts.empty() ? 0 : separator.size() * (parts.size() - 1);
  for (const auto& part : parts) total += part.size();
  require_size("join", total);
  std::string out;
  out.reserve(total);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

}  // namespace

// --- positions -----------------------------------------------------------------------------------

int64_t length(std::string_view text) { return count_code_points(text); }

std::string slice(std::string_view text, int64_t start, int64_t end) {
  std::size_t begin = start < 0 ? npos : byte_offset_of(text, start);
  std::size_t finish = npos;
  if (begin != npos && end >= start) {
    std::size_t rest = byte_offset_of(text.substr(begin), end - start);
    if (rest != npos) finish = begin + rest;
  }
  require_slice_bounds(start, end, begin != npos, finish != npos, [&] { return length(text); });
  return std::string(text.substr(begin, finish - begin));
}

std::string char_at(std::string_view text, int64_t index) {
  std::size_t offset = byte_offset_of(text, index);
  if (offset == npos || offset == text.size())
    fail_index("char_at(" + number(index) + ")", "index", index, length(text));
  return std::string(code_point_view(text, offset));
}

int64_t code_point_at(std::string_view text, int64_t index) {
  std::size_t offset = byte_offset_of(text, index);
  if (offset == npos || offset == text.size())
    fail_index("code_point_at(" + number(index) + ")", "index", index, length(text));
  return decode_next(text, offset);
}

std::string from_code_point(int64_t code_point) {
  if (!is_scalar_value(code_point)) {
    std::string why = (code_point >= 0xD800 && code_point <= 0xDFFF) ? " is a surrogate, not a Unicode scalar value"
                                                                      : " is outside 0..1114111 (U+10FFFF)";
    fail("from_code_point(" + number(code_point) + "): " + number(code_point) + why);
  }
  std::string out;
  append_code_point(out, static_cast<char32_t>(code_point));
  return out;
}

// --- searching -----------------------------------------------------------------------------------

int64_t find(std::string_view haystack, std::string_view needle, int64_t from) {
  std::size_t begin = byte_offset_of(haystack, from);
  if (begin == npos) fail_index("find", "start", from, length(haystack));
  // A byte match of valid UTF-8 in valid UTF-8 always starts on a code-point boundary, because
  // the needle starts with a lead byte and lead bytes never occur inside a sequence.
  std::size_t match = haystack.find(needle, begin);
  if (match == npos) return -1;
  return from + count_code_points(haystack.substr(begin, match - begin));
}

bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != npos; }
bool starts_with(std::string_view text, std::string_view prefix) { return text.starts_with(prefix); }
bool ends_with(std::string_view text, std::string_view suffix) { return text.ends_with(suffix); }

int compare(std::string_view left, std::string_view right) {
  int order = left.compare(right);  // unsigned byte order, which is code-point order for UTF-8
  return (order > 0) - (order < 0);
}

// --- splitting and joining -----------------------------------------------------------------------

std::vector<std::string> split(std::string_view text, std::string_view separator) {
  std::vector<std::string> fields;
  split_each(text, separator, [&](std::string_view field) { fields.emplace_back(field); });
  return fields;
}

std::vector<std::string> split_whitespace(std::string_view text) {
  std::vector<std::string> fields;
  split_whitespace_each(text, [&](std::string_view field) { fields.emplace_back(field); });
  return fields;
}

std::string join(const std::vector<std::string_view>& parts, std::string_view separator) {
  return join_parts(parts, separator);
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  return join_parts(parts, separator);
}

// --- building ------------------------------------------------------------------------------------

std::string replace(std::string_view text, std::string_view from, std::string_view to) {
  if (from.empty()) fail("replace: the text to replace must not be empty");
  std::size_t matches = 0;
  for (std::size_t at = text.find(from); at != npos; at = text.find(from, at + from.size())) ++matches;
  if (matches == 0) return std::string(text);
  if (to.size() > from.size() && matches > max_text_bytes / (to.size() - from.size())) fail_too_long("replace");
  require_size("replace", text.size() - matches * from.size() + matches * to.size());
  std::string out;
  out.reserve(text.size() - matches * from.size() + matches * to.size());
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(from, start)) != npos; start = at + from.size()) {
    out += text.substr(start, at - start);
    out += to;
  }
  out += text.substr(start);
  return out;
}

std::string repeat(std::string_view text, int64_t count) {
  if (count < 0) fail("repeat: count " + number(count) + " is negative");
  if (text.empty() || count == 0) return {};
  if (static_cast<uint64_t>(count) > max_text_bytes / text.size()) fail_too_long("repeat");
  std::string out;
  out.reserve(text.size() * static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) out += text;
  return out;
}

std::string pad_left(std::string_view text, int64_t width, int64_t fill) {
  return pad("pad_left", text, width, require_fill("pad_left", fill), true);
}

std::string pad_right(std::string_view text, int64_t width, int64_t fill) {
  return pad("pad_right", text, width, require_fill("pad_right", fill), false);
}

std::string pad_left(std::string_view text, int64_t width, std::string_view fill) {
  return pad("pad_left", text, width, fill_from_text("pad_left", fill), true);
}

std::string pad_right(std::string_view text, int64_t width, std::string_view fill) {
  return pad("pad_right", text, width, fill_from_text("pad_right", fill), false);
}

std::string reverse(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t position = text.size();
  while (position > 0) {
    std::size_t end = position;
    decode_previous(text, position);
    out += text.substr(position, end - position);
  }
  return out;
}

std::string quote(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    unsigned code = c;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      code = static_cast<unsigned char>(text[i + 1]);  // C2 80..C2 9F is U+0080..U+009F, a C1 control
      ++i;
    } else if (c >= 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    switch (code) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '{': out += "\\{"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case 0: out += "\\0"; break;
      default:
        if (code < 0x20 || code >= 0x7F) {
          out += "\\u{";
          out += kHex[code >> 4];
          out += kHex[code & 15];
          out += '}';
        } else {
          out += static_cast<char>(code);
        }
    }
  }
  out += '"';
  return out;
}

// --- case and white space ------------------------------------------------------------------------

char32_t upper_code_point(char32_t code_point) {
  if (code_point < 0x80) return (code_point >= 'a' && code_point <= 'z') ? code_point - 32 : code_point;
  return apply_case(upper_rules, code_point);
}

char32_t lower_code_point(char32_t code_point) {
  if (code_point < 0x80) return (code_point >= 'A' && code_point <= 'Z') ? code_point + 32 : code_point;
  return apply_case(lower_rules, code_point);
}

std::string upper(std::string_view text) {
  return map_code_points(text, [](char32_t code_point) { return upper_code_point(code_point); });
}

std::string lower(std::string_view text) {
  return map_code_points(text, [](char32_t code_point) { return lower_code_point(code_point); });
}

bool is_white_space(char32_t code_point) {
  if (code_point <= 0x20) return code_point == 0x20 || (code_point >= 0x09 && code_point <= 0x0D);
  if (code_point < 0x85) return false;
  switch (code_point) {
    case 0x0085: case 0x00A0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return code_point >= 0x2000 && code_point <= 0x200A;
  }
}

std::string trim(std::string_view text) {
  std::size_t start = white_space_prefix_bytes(text);
  text.remove_prefix(start);
  return std::string(text.substr(0, end_without_white_space(text)));
}

std::string trim_start(std::string_view text) { return std::string(text.substr(white_space_prefix_bytes(text))); }
std::string trim_end(std::string_view text) { return std::string(text.substr(0, end_without_white_space(text))); }

// --- IndexedText ---------------------------------------------------------------------------------

IndexedText::IndexedText(std::string_view text) : text_(text), ascii_(is_ascii(text)) {
  if (ascii_) {
    length_ = static_cast<int64_t>(text.size());
    return;
  }
  if (text.size() > UINT32_MAX) fail("text of " + std::to_string(text.size()) + " bytes is too long to index");
  int64_t index = 0;
  for (std::size_t position = 0; position < text.size(); ++position) {
    if (is_continuation_byte(static_cast<unsigned char>(text[position]))) continue;
    if (index % checkpoint_stride == 0) checkpoints_.push_back(static_cast<uint32_t>(position));
    ++index;
  }
  length_ = index;
}

std::size_t IndexedText::byte_offset(int64_t index) const {
  if (index < 0 || index > length_) return npos;
  if (ascii_) return static_cast<std::size_t>(index);
  if (index == length_) return text_.size();
  std::size_t k = static_cast<std::size_t>(index / checkpoint_stride);
  std::size_t checkpoint = checkpoints_[k];
  // Bound the scan by the next checkpoint so it never looks further than one stride.
  std::size_t next = k + 1 < checkpoints_.size() ? checkpoints_[k + 1] : text_.size();
  return checkpoint + byte_offset_of(text_.substr(checkpoint, next - checkpoint), index % checkpoint_stride);
}

int64_t IndexedText::index_of_byte(std::size_t offset) const {
  if (ascii_) return static_cast<int64_t>(offset);
  auto after = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), offset,
                                [](std::size_t value, uint32_t checkpoint) { return value < checkpoint; });
  if (after == checkpoints_.begin()) return 0;  // only for offset 0 of an empty text
  std::size_t k = static_cast<std::size_t>(after - checkpoints_.begin()) - 1;
  return static_cast<int64_t>(k) * checkpoint_stride + count_code_points(text_.substr(checkpoints_[k], offset - checkpoints_[k]));
}

std::string IndexedText::slice(int64_t start, int64_t end) const {
  bool start_ok = start >= 0 && start <= length_;
  bool end_ok = end >= start && end <= length_;
  require_slice_bounds(start, end, start_ok, end_ok, [&] { return length_; });
  std::size_t begin = byte_offset(start);
  return std::string(text_.substr(begin, byte_offset(end) - begin));
}

std::string IndexedText::char_at(int64_t index) const {
  if (index < 0 || index >= length_) fail_index("char_at(" + number(index) + ")", "index", index, length_);
  return std::string(code_point_view(text_, byte_offset(index)));
}

int64_t IndexedText::code_point_at(int64_t index) const {
  if (index < 0 || index >= length_) fail_index("code_point_at(" + number(index) + ")", "index", index, length_);
  std::size_t offset = byte_offset(index);
  return decode_next(text_, offset);
}

int64_t IndexedText::find(std::string_view needle, int64_t from) const {
  if (from < 0 || from > length_) fail_index("find", "start", from, length_);
  std::size_t match = text_.find(needle, byte_offset(from));
  return match == npos ? -1 : index_of_byte(match);
}

}  // namespace pure::text
