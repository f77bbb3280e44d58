// Tests for stdlib/numtext: the printing style, exact fixed-point rounding, strict parsing, round trips.
// Must not depend on anything in Pure but stdlib/numtext.h.
#include <doctest/doctest.h>

#include "stdlib/numtext.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

using pure::numtext::format_fixed;
using pure::numtext::format_int_padded;
using pure::numtext::format_int;
using pure::numtext::format_num;
using pure::numtext::parse_int;
using pure::numtext::parse_num;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kSeed = 0x7e57ab1eULL;

uint64_t next_random(uint64_t& state) {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("format_num: one style for every double") {
    struct Case {
        double value;
        const char* text;
    };
    const Case cases[] = {
        {1.0, "1.0"},
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {0.1 + 0.2, "0.30000000000000004"},
        {0.1, "0.1"},
        {-1.25, "-1.25"},
        {100.0, "100.0"},
        {100000.0, "100000.0"},
        {9007199254740992.0, "9007199254740992.0"},
        {1e16, "10000000000000000.0"},
        {123456789012345680000.0, "123456789012345680000.0"},
        {1e20, "100000000000000000000.0"},
        {1e21, "1e21"},
        {1.5e300, "1.5e300"},
        {DBL_MAX, "1.7976931348623157e308"},
        {0.000001, "0.000001"},
        {0.0000015, "0.0000015"},
        {1e-7, "1e-7"},
        {-1.5e-7, "-1.5e-7"},
        {5e-324, "5e-324"},
        {2.2250738585072014e-308, "2.2250738585072014e-308"},
        {std::numeric_limits<double>::quiet_NaN(), "nan"},
        {-std::numeric_limits<double>::quiet_NaN(), "nan"},
        {kInf, "inf"},
        {-kInf, "-inf"},
    };
    for (const Case& c : cases) {
        INFO("expected ", c.text);
        CHECK(format_num(c.value) == c.text);
    }
}

TEST_CASE("format_int") {
    CHECK(format_int(0) == "0");
    CHECK(format_int(-1) == "-1");
    CHECK(format_int(1234567890123) == "1234567890123");
    CHECK(format_int(std::numeric_limits<int64_t>::max()) == "9223372036854775807");
    CHECK(format_int(std::numeric_limits<int64_t>::min()) == "-9223372036854775808");
}

TEST_CASE("format_fixed: exact rounding of the binary value") {
    CHECK(format_fixed(3.14159, 2) == "3.14");
    CHECK(format_fixed(0.125, 2) == "0.12");  // exact tie: to even
    CHECK(format_fixed(0.375, 2) == "0.38");  // exact tie: to even
    CHECK(format_fixed(2.5, 0) == "2");
    CHECK(format_fixed(3.5, 0) == "4");
    CHECK(format_fixed(1.005, 2) == "1.00");  // 1.005 is stored as 1.00499999999999989...
    CHECK(format_fixed(0.1, 20) == "0.10000000000000000555");
    CHECK(format_fixed(-0.0, 1) == "-0.0");
    CHECK(format_fixed(-0.001, 2) == "-0.00");
    CHECK(format_fixed(1e21, 2) == "1000000000000000000000.00");
    CHECK(format_fixed(5e-324, 3) == "0.000");
    CHECK(format_fixed(-kInf, 2) == "-inf");
    CHECK(format_fixed(std::nan(""), 2) == "nan");
    CHECK(format_fixed(DBL_MAX, 100).size() == 309 + 1 + 100);
    CHECK_THROWS_AS(format_fixed(1.0, -1), std::out_of_range);
    CHECK_THROWS_AS(format_fixed(1.0, 101), std::out_of_range);
}

TEST_CASE("parse_int") {
    struct Case {
        const char* text;
        bool ok;
        int64_t value;
    };
    const Case cases[] = {
        {"0", true, 0},
        {"-0", true, 0},
        {"+5", true, 5},
        {"00042", true, 42},
        {"9223372036854775807", true, std::numeric_limits<int64_t>::max()},
        {"-9223372036854775808", true, std::numeric_limits<int64_t>::min()},
        {"9223372036854775808", false, 0},
        {"-9223372036854775809", false, 0},
        {"99999999999999999999", false, 0},
        {"", false, 0},
        {"-", false, 0},
        {"+", false, 0},
        {"1_000", false, 0},
        {" 1", false, 0},
        {"1 ", false, 0},
        {"12a", false, 0},
        {"1.0", false, 0},
        {"--1", false, 0},
        {"0x10", false, 0},
    };
    for (const Case& c : cases) {
        int64_t value = -12345;
        INFO("text: '", c.text, "'");
        CHECK(parse_int(c.text, value) == c.ok);
        CHECK(value == (c.ok ? c.value : -12345));  // untouched on failure
    }
}

TEST_CASE("parse_int and parse_num tell out-of-range numbers from malformed text") {
    // issue 13: parse_int("9223372036854775808") said "is not an integer"
    const char* too_large_ints[] = {"9223372036854775808", "-9223372036854775809", "+99999999999999999999"};
    for (const char* text : too_large_ints) {
        int64_t value = 7;
        bool out_of_range = false;
        INFO("text: '", text, "'");
        CHECK_FALSE(parse_int(text, value, &out_of_range));
        CHECK(out_of_range);
        CHECK(value == 7);
    }
    const char* bad_ints[] = {"99999999999999999999x", "x99999999999999999999", "", "-", "1.0"};
    for (const char* text : bad_ints) {
        int64_t value = 7;
        bool out_of_range = true;
        INFO("text: '", text, "'");
        CHECK_FALSE(parse_int(text, value, &out_of_range));
        CHECK_FALSE(out_of_range);
    }
    int64_t ok = 0;
    bool out_of_range = true;
    CHECK(parse_int("-9223372036854775808", ok, &out_of_range));
    CHECK_FALSE(out_of_range);
    for (const char* text : {"1e400", "-1e400", "1.7976931348623159e308"}) {
        double value = 0;
        bool far = false;
        INFO("text: '", text, "'");
        CHECK_FALSE(parse_num(text, value, &far));
        CHECK(far);
    }
    for (const char* text : {"1e400x", "e400", "Inf"}) {
        double value = 0;
        bool far = true;
        INFO("text: '", text, "'");
        CHECK_FALSE(parse_num(text, value, &far));
        CHECK_FALSE(far);
    }
}

TEST_CASE("parse_num: accepted forms") {
    struct Case {
        const char* text;
        double value;
    };
    const Case cases[] = {
        {"1", 1.0},
        {"1.5", 1.5},
        {"-2.5e-3", -0.0025},
        {".5", 0.5},
        {"5.", 5.0},
        {"+3", 3.0},
        {"1e21", 1e21},
        {"1E+21", 1e21},
        {"0.30000000000000004", 0.30000000000000004},
        {"4.9e-324", 5e-324},
        {"2.4703282292062328e-324", 5e-324},
        {"1.7976931348623157e308", DBL_MAX},
        {"1e-400", 0.0},
        {"-1e-400", -0.0},
        {"-0.0", -0.0},
        {"0e999999999999", 0.0},
        {"inf", kInf},
        {"-inf", -kInf},
    };
    for (const Case& c : cases) {
        double value = 0;
        INFO("text: '", c.text, "'");
        REQUIRE(parse_num(c.text, value));
        CHECK(std::bit_cast<uint64_t>(value) == std::bit_cast<uint64_t>(c.value));
    }
    double value = 0;
    REQUIRE(parse_num("nan", value));
    CHECK(std::isnan(value));
}

TEST_CASE("parse_num: rejected forms") {
    const char* rejected[] = {"",     "-",      "+",    ".",       "e5",    "1e",    "1e+",      "1.5x",
                              " 1",   "1 ",     "0x10", "1_000",   "Inf",   "INF",   "infinity", "+inf",
                              "NaN",  "-nan",   "nan(1)", "1e400", "-1e400", "1.7976931348623159e308", "1..2",
                              "1e5.5", "--1"};
    for (const char* text : rejected) {
        double value = 42.0;
        INFO("text: '", text, "'");
        CHECK_FALSE(parse_num(text, value));
        CHECK(value == 42.0);  // untouched on failure
    }
}

TEST_CASE("round trips: parse_num(format_num(x)) is x, bit for bit") {
    uint64_t state = kSeed;
    for (int i = 0; i < 200000; ++i) {
        uint64_t bits = next_random(state);
        if (i % 4 == 1) bits >>= 12;  // subnormals and tiny values
        if (i % 4 == 2) bits = (bits & 0x800fffffffffffffULL) | (static_cast<uint64_t>(1023 + (i % 140) - 70) << 52);
        double x = std::bit_cast<double>(bits);
        if (std::isnan(x)) continue;
        std::string text = format_num(x);
        double back = 0;
        INFO("seed ", kSeed, " i ", i, " text ", text);
        REQUIRE(parse_num(text, back));
        REQUIRE(std::bit_cast<uint64_t>(back) == bits);
    }
    for (int i = 0; i < 20000; ++i) {
        int64_t n = static_cast<int64_t>(next_random(state)) >> (i % 64);
        int64_t back = 0;
        REQUIRE(parse_int(format_int(n), back));
        REQUIRE(back == n);
    }
}

TEST_CASE("format_num text always reads as a number") {
    uint64_t state = kSeed + 1;
    for (int i = 0; i < 20000; ++i) {
        double x = std::bit_cast<double>(next_random(state));
        if (!std::isfinite(x)) continue;
        std::string text = format_num(x);
        bool has_point_or_exponent = text.find('.') != std::string::npos || text.find('e') != std::string::npos;
        INFO(text);
        CHECK(has_point_or_exponent);
        CHECK(text.find('+') == std::string::npos);
    }
}

TEST_CASE("format_int_padded: zeros after the sign, never cut, width bounded") {
  CHECK(format_int_padded(42, 4) == "0042");
  CHECK(format_int_padded(-42, 5) == "-0042");
  CHECK(format_int_padded(-42, 3) == "-42");
  CHECK(format_int_padded(-42, 2) == "-42");
  CHECK(format_int_padded(0, 3) == "000");
  CHECK(format_int_padded(0, 0) == "0");
  CHECK(format_int_padded(123456, 3) == "123456");
  CHECK(format_int_padded(INT64_MIN, 20) == "-9223372036854775808");
  CHECK(format_int_padded(INT64_MIN, 21) == "-09223372036854775808");
  CHECK(format_int_padded(INT64_MAX, 20) == "09223372036854775807");
  CHECK(format_int_padded(5, 100) == std::string(99, '0') + "5");
  CHECK_THROWS_AS(format_int_padded(5, 101), std::out_of_range);
  CHECK_THROWS_AS(format_int_padded(5, -1), std::out_of_range);
}
