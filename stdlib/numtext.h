// Number <-> text for Pure: shortest round-trip printing and strict parsing, identical on every device.
// Depends only on <charconv> (exact, locale-free conversions); never on printf/strtod or the C locale.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pure::numtext {

// Shortest text that reads back to the same double, in one fixed style (docs/math.md):
//   1.0  0.30000000000000004  -0.0  123456789012345680000.0  1e21  1.5e-7  0.000001  nan  inf  -inf
// Plain decimal for 1e-6 <= |x| < 1e21 (with ".0" when there is no fraction), otherwise d[.ddd]e[-]N.
std::string format_num(double value);

std::string format_int(int64_t value);
// The same digits written to `out` (room for 20 bytes); returns their count. No std::string: the
// VM's INT_TEXT and the JITs' make a text of them directly.
inline size_t format_int_to(char* out, int64_t value) {
  return static_cast<size_t>(std::to_chars(out, out + 20, value).ptr - out);
}

// An int in at least `width` characters, zeros after the sign ("0042", "-0042" for width 5),
// like C's "%0*lld" without the locale; a longer number is never cut. width must be in
// [0, kMaxWidth], otherwise std::out_of_range is thrown.
constexpr int kMaxWidth = 100;
std::string format_int_padded(int64_t value, int width);

// Exactly `decimals` digits after the point, correctly rounded from the exact binary value (exact
// ties such as 0.125 to two decimals go to the even digit: "0.12"). nan / inf / -inf as in format_num. decimals must be in
// [0, kMaxDecimals], otherwise std::out_of_range is thrown.
constexpr int kMaxDecimals = 100;
std::string format_fixed(double value, int decimals);

// Optional '+' or '-', then one or more ASCII digits, nothing else. False on overflow or bad text;
// *out_of_range (when given) tells the two apart: true for well-formed digits beyond 64 bits.
bool parse_int(std::string_view text, int64_t& result, bool* out_of_range = nullptr);

// Optional sign, digits with an optional '.' and exponent ("1", "-2.5", ".5", "5.", "1e-7", "1E+21"),
// rounded to nearest; or exactly "inf", "-inf", "nan". False for anything else, including trailing
// characters, hexadecimal, and magnitudes too large for a double (values too small become +-0.0);
// *out_of_range (when given) is true only for the last: a well-formed number beyond the double range.
bool parse_num(std::string_view text, double& result, bool* out_of_range = nullptr);

}  // namespace pure::numtext
