// Number <-> text: shortest round-trip formatting, fixed-point formatting, strict parsing.
// Uses only std::to_chars / std::from_chars (exact and locale-free); must not use printf/strtod/iostreams.
#include "stdlib/numtext.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace pure::numtext {
namespace {

std::string special_text(double value) {
    if (std::isnan(value)) return "nan";  // one spelling for every NaN: sign and payload vary by CPU
    return value < 0 ? "-inf" : "inf";
}

// Shortest digits of |value| (no leading zeros except for 0 itself) and the decimal exponent of the
// first digit: |value| == 0.d1d2d3... * 10^(exponent + 1).
struct Decimal {
    std::string digits;
    int exponent = 0;
};

Decimal shortest_decimal(double magnitude) {
    char buffer[64];
    auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, magnitude, std::chars_format::scientific);
    (void)error;  // 64 bytes always suffice for the shortest scientific form of a double
    Decimal decimal;
    const char* cursor = buffer;
    for (; cursor != end && *cursor != 'e'; ++cursor) {
        if (*cursor != '.') decimal.digits.push_back(*cursor);
    }
    std::from_chars(cursor + 1 + (cursor[1] == '+'), end, decimal.exponent);
    return decimal;
}

}  // namespace

std::string format_num(double value) {
    if (!std::isfinite(value)) return special_text(value);
    std::string text = std::signbit(value) ? "-" : "";
    Decimal decimal = shortest_decimal(std::fabs(value));
    const std::string& digits = decimal.digits;
    int count = static_cast<int>(digits.size());
    int point = decimal.exponent + 1;  // digits before the decimal point
    // Appends only: GCC 12 warns falsely (-Wrestrict) about some `"." + std::string` expressions.
    if (decimal.exponent < -6 || decimal.exponent >= 21) {
        text += digits[0];
        if (count > 1) text.append(".").append(digits, 1);
        return text.append("e").append(std::to_string(decimal.exponent));
    }
    if (point >= count) return text.append(digits).append(point - count, '0').append(".0");
    if (point > 0) return text.append(digits, 0, point).append(".").append(digits, point);
    return text.append("0.").append(-point, '0').append(digits);
}

std::string format_int(int64_t value) {
    char buffer[24];
    auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

std::string format_int_padded(int64_t value, int width) {
  if (width < 0 || width > kMaxWidth) throw std::out_of_range("format_int_padded: width must be 0..100");
  std::string digits = format_int(value);
  bool negative = value < 0;
  if (digits.size() >= static_cast<size_t>(width)) return digits;
  std::string out;
  out.reserve(static_cast<size_t>(width));
  if (negative) out += '-';
  out.append(static_cast<size_t>(width) - digits.size(), '0');
  out.append(digits, negative ? 1 : 0, std::string::npos);
  return out;
}

std::string format_fixed(double value, int decimals) {
    if (decimals < 0 || decimals > kMaxDecimals) throw std::out_of_range("format_fixed: decimals must be 0..100");
    if (!std::isfinite(value)) return special_text(value);
    char buffer[512];  // sign + 309 integer digits + point + 100 decimals
    auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
    return std::string(buffer, result.ptr);
}

bool parse_int(std::string_view text, int64_t& result, bool* out_of_range) {
    if (out_of_range) *out_of_range = false;
    size_t position = 0;
    bool negative = false;
    if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
        negative = text[0] == '-';
        position = 1;
    }
    if (position == text.size()) return false;
    uint64_t limit = negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
    uint64_t magnitude = 0;
    bool too_large = false;
    for (; position < text.size(); ++position) {
        char c = text[position];
        if (c < '0' || c > '9') return false;
        uint64_t digit = static_cast<uint64_t>(c - '0');
        if (too_large || magnitude > (limit - digit) / 10) {
            too_large = true;  // the digits go on being checked: "99999999999999999999x" is not an integer
            continue;
        }
        magnitude = magnitude * 10 + digit;
    }
    if (too_large) {
        if (out_of_range) *out_of_range = true;
        return false;
    }
    result = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return true;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Checks [sign] (digits [. digits*] | . digits) [(e|E) [sign] digits] and, for out-of-range
// results, estimates the decimal magnitude: the power of ten of the first nonzero digit.
struct NumberShape {
    bool valid = false;
    long magnitude = 0;
};

NumberShape check_shape(std::string_view text) {
    NumberShape shape;
    size_t i = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    long digits_before_point = 0;
    long first_nonzero = -1;  // index among all mantissa digits
    long mantissa_digits = 0;
    for (; i < text.size() && is_digit(text[i]); ++i, ++digits_before_point, ++mantissa_digits) {
        if (text[i] != '0' && first_nonzero < 0) first_nonzero = mantissa_digits;
    }
    if (i < text.size() && text[i] == '.') {
        ++i;
        for (; i < text.size() && is_digit(text[i]); ++i, ++mantissa_digits) {
            if (text[i] != '0' && first_nonzero < 0) first_nonzero = mantissa_digits;
        }
    }
    if (mantissa_digits == 0) return shape;
    long exponent = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        bool negative = false;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
        if (i == text.size()) return shape;
        for (; i < text.size() && is_digit(text[i]); ++i) {
            if (exponent < 1000000) exponent = exponent * 10 + (text[i] - '0');
        }
        if (negative) exponent = -exponent;
    }
    if (i != text.size()) return shape;
    shape.valid = true;
    shape.magnitude = first_nonzero < 0 ? -1000000 : digits_before_point - 1 - first_nonzero + exponent;
    return shape;
}

}  // namespace

bool parse_num(std::string_view text, double& result, bool* out_of_range) {
    if (out_of_range) *out_of_range = false;
    if (text == "inf" || text == "-inf" || text == "nan") {
        double infinity = HUGE_VAL;
        result = text == "nan" ? std::nan("") : (text[0] == '-' ? -infinity : infinity);
        return true;
    }
    NumberShape shape = check_shape(text);
    if (!shape.valid) return false;
    const char* first = text.data() + (text[0] == '+' ? 1 : 0);
    const char* last = text.data() + text.size();
    double value = 0;
    auto [end, error] = std::from_chars(first, last, value, std::chars_format::general);
    if (end != last) return false;
    if (error == std::errc::result_out_of_range) {
        if (shape.magnitude > 0) {                          // too large for a double
            if (out_of_range) *out_of_range = true;
            return false;
        }
        value = text[0] == '-' ? -0.0 : 0.0;               // too small: rounds to zero
    } else if (error != std::errc()) {
        return false;
    }
    result = value;
    return true;
}

}  // namespace pure::numtext
