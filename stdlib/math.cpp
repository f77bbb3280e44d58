// Portable transcendental functions built from + - * / sqrt and bit manipulation (double-double inside).
// Must not call libm transcendentals (exp, log, sin, ...): their results differ between CPUs and architectures.
#include "stdlib/math.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace pure::math {
namespace {

// ---------------------------------------------------------------------------------------------
// Double-double arithmetic. A DD is hi + lo with |lo| <= ulp(hi)/2, about 106 bits of precision.
// These error-free transformations are only exact when the compiler does not fuse a*b+c, which is
// why the whole project is built with -ffp-contract=off.
// ---------------------------------------------------------------------------------------------
struct DD {
    double hi;
    double lo;
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

DD two_sum(double a, double b) {
    double sum = a + b;
    double b_part = sum - a;
    double error = (a - (sum - b_part)) + (b - b_part);
    return {sum, error};
}

// Requires |a| >= |b| (or a == 0).
DD fast_two_sum(double a, double b) {
    double sum = a + b;
    return {sum, b - (sum - a)};
}

// Veltkamp split into two 26-bit halves. Callers keep |a| < 2^995 so the scaling cannot overflow.
DD split(double a) {
    double scaled = 134217729.0 * a;  // 2^27 + 1
    double high = scaled - (scaled - a);
    return {high, a - high};
}

// Dekker's exact product: a*b == result.hi + result.lo.
DD two_prod(double a, double b) {
    double product = a * b;
    DD a_parts = split(a);
    DD b_parts = split(b);
    double error = ((a_parts.hi * b_parts.hi - product) + a_parts.hi * b_parts.lo + a_parts.lo * b_parts.hi) +
                   a_parts.lo * b_parts.lo;
    return {product, error};
}

DD dd_add(DD a, DD b) {
    DD high = two_sum(a.hi, b.hi);
    DD low = two_sum(a.lo, b.lo);
    high.lo += low.hi;
    high = fast_two_sum(high.hi, high.lo);
    high.lo += low.lo;
    return fast_two_sum(high.hi, high.lo);
}

DD dd_add(DD a, double b) {
    DD sum = two_sum(a.hi, b);
    sum.lo += a.lo;
    return fast_two_sum(sum.hi, sum.lo);
}

DD dd_neg(DD a) { return {-a.hi, -a.lo}; }
DD dd_sub(DD a, DD b) { return dd_add(a, dd_neg(b)); }

DD dd_mul(DD a, DD b) {
    DD product = two_prod(a.hi, b.hi);
    product.lo += a.hi * b.lo + a.lo * b.hi;
    return fast_two_sum(product.hi, product.lo);
}

DD dd_mul(DD a, double b) {
    DD product = two_prod(a.hi, b);
    product.lo += a.lo * b;
    return fast_two_sum(product.hi, product.lo);
}

// Two quotient digits; the remainder a - q1*b is exact up to the a.lo and b.lo terms (error ~2^-104).
DD dd_div(DD a, DD b) {
    double q1 = a.hi / b.hi;
    DD product = two_prod(q1, b.hi);
    double remainder = (((a.hi - product.hi) - product.lo) + a.lo) - q1 * b.lo;  // a.hi - product.hi is exact
    return fast_two_sum(q1, remainder / b.hi);
}

DD dd_sqrt(DD a) {
    double root = std::sqrt(a.hi);
    DD residual = dd_sub(a, two_prod(root, root));
    return fast_two_sum(root, residual.hi / (2.0 * root));
}

double dd_round(DD a) { return a.hi + a.lo; }

// Nearest integer, ties to even, for |v| < 2^51: adding 1.5*2^52 leaves no fraction bits. Faster than
// std::nearbyint, which saves and restores the floating-point environment in glibc.
double round_to_integer(double v) {
    constexpr double kShifter = 0x1.8p52;
    return (v + kShifter) - kShifter;
}

// ---------------------------------------------------------------------------------------------
// Bits and powers of two.
// ---------------------------------------------------------------------------------------------
double pow2(int exponent) {  // exact for -1022 <= exponent <= 1023
    return std::bit_cast<double>(static_cast<uint64_t>(exponent + 1023) << 52);
}

// x * 2^exponent with a single rounding when the result is normal, infinite or when x is in [0.5, 2).
// Splitting the factor keeps every intermediate product normal until the last multiplication.
double scale(double x, int exponent) {
    while (exponent > 1023 || exponent < -1022) {
        int step = exponent / 2;
        if (step > 1023) step = 1023;
        if (step < -1022) step = -1022;
        x *= pow2(step);
        exponent -= step;
    }
    return x * pow2(exponent);
}

// (v.hi + v.lo) * 2^exponent rounded once, for v in [0.5, 4), also when the result is subnormal.
// A subnormal result means v < 2^52 * spacing, where spacing = 2^(-1074-exponent) is the subnormal
// grid at v's scale; adding 2^52 * spacing rounds v.hi onto that grid (ties to even, like the
// hardware), and the exact rest of that addition plus v.lo decides the cases near halfway.
double scale_dd(DD v, int exponent) {
    if (exponent >= -1021) return scale(dd_round(v), exponent);
    double spacing = scale(1.0, -1074 - exponent);
    double shifter = 0x1p52 * spacing;
    if (v.hi >= shifter) return scale(dd_round(v), exponent);  // normal result
    DD rounded = two_sum(shifter, v.hi);  // rounded.hi is on the grid, rounded.lo the exact rest
    double rest = rounded.lo + v.lo;
    double grid = rounded.hi;
    if (rest > 0.5 * spacing) grid += spacing;
    if (rest < -0.5 * spacing) grid -= spacing;
    return scale(grid - shifter, exponent);  // exact: a multiple of 2^-1074
}

// Exponent of a finite nonzero x, with x == m * 2^exponent and m in [1, 2); subnormals included.
int exponent_of(double x) {
    uint64_t bits = std::bit_cast<uint64_t>(x);
    int biased = static_cast<int>((bits >> 52) & 0x7ff);
    if (biased != 0) return biased - 1023;
    return exponent_of(x * 0x1p54) - 54;
}

// ---------------------------------------------------------------------------------------------
// Constants, generated with 1600-bit arithmetic (the script is in docs/math.md).
// ---------------------------------------------------------------------------------------------
// ln 2 in three parts; the first two have 32 significant bits so k * part is exact for |k| < 2^21.
constexpr double kLn2Part1 = 0x1.62e42fee00000p-1;
constexpr double kLn2Part2 = 0x1.a39ef35600000p-33;
constexpr double kLn2Part3 = 0x1.93c7673007e5fp-65;
constexpr DD kInvLn2 = {0x1.71547652b82fep+0, 0x1.777d0ffda0d24p-56};
constexpr DD kInvLn10 = {0x1.bcb7b1526e50ep-2, 0x1.95355baaafad3p-57};
constexpr DD kLog10Of2 = {0x1.34413509f79ffp-2, -0x1.9dc1da994fd21p-59};
constexpr DD kPi = {0x1.921fb54442d18p+1, 0x1.1a62633145c07p-53};
constexpr DD kHalfPi = {0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54};
constexpr DD kQuarterPi = {0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55};
// pi/2 in three parts of 33 bits (the last full): n * part is exact for |n| < 2^20.
constexpr double kHalfPiPart1 = 0x1.921fb54400000p+0;
constexpr double kHalfPiPart2 = 0x1.0b4611a600000p-34;
constexpr double kHalfPiPart3 = 0x1.3198a2e037073p-69;
constexpr DD kTwoThirds = {0x1.5555555555555p-1, 0x1.5555555555555p-55};
constexpr DD kTwoFifths = {0x1.999999999999ap-2, -0x1.999999999999ap-56};
constexpr DD kOneThird = {0x1.5555555555555p-2, 0x1.5555555555555p-56};
constexpr DD kOneSixth = {0x1.5555555555555p-3, 0x1.5555555555555p-57};
constexpr DD kOneTwentyFourth = {0x1.5555555555555p-5, 0x1.5555555555555p-59};
constexpr DD kOneHundredTwentieth = {0x1.1111111111111p-7, 0x1.1111111111111p-63};
// atan(k/8) for k = 0..8.
constexpr DD kAtanOfEighths[9] = {
    {0.0, 0.0},
    {0x1.fd5ba9aac2f6ep-4, -0x1.cd37686760c17p-59},
    {0x1.f5b75f92c80ddp-3, 0x1.8ab6e3cf7afbdp-57},
    {0x1.6f61941e4def1p-2, -0x1.c63aae6f6e918p-56},
    {0x1.dac670561bb4fp-2, 0x1.a2b7f222f65e2p-56},
    {0x1.1e00babdefeb4p-1, -0x1.928df287a668fp-58},
    {0x1.4978fa3269ee1p-1, 0x1.2419a87f2a458p-56},
    {0x1.700a7c5784634p-1, -0x1.8c34d25aadef6p-56},
    {0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55},
};
// The first 1280 bits of 2/pi after the binary point, most significant first (for Payne-Hanek).
constexpr uint64_t kTwoOverPiBits[20] = {
    0xa2f9836e4e441529ULL, 0xfc2757d1f534ddc0ULL, 0xdb6295993c439041ULL, 0xfe5163abdebbc561ULL,
    0xb7246e3a424dd2e0ULL, 0x06492eea09d1921cULL, 0xfe1deb1cb129a73eULL, 0xe88235f52ebb4484ULL,
    0xe99c7026b45f7e41ULL, 0x3991d639835339f4ULL, 0x9c845f8bbdf9283bULL, 0x1ff897ffde05980fULL,
    0xef2f118b5a0a6d1fULL, 0x6d367ecf27cb09b7ULL, 0x4f463f669e5fea2dULL, 0x7527bac7ebe5f17bULL,
    0x3d0739f78a5292eaULL, 0x6bfb5fb11f8d5d08ULL, 0x56033046fc7b6babULL, 0xf0cfbc209af4361dULL,
};

// Horner evaluation of sum coefficients[i] * z^i in plain double (used only for small tail terms).
template <int N>
double horner(const double (&coefficients)[N], double z) {
    double result = coefficients[N - 1];
    for (int i = N - 2; i >= 0; --i) result = coefficients[i] + z * result;
    return result;
}

// ---------------------------------------------------------------------------------------------
// exp: x = k*ln2 + r with |r| <= ln2/2 (Cody-Waite, three-part ln2), then a Taylor series for e^r.
// ---------------------------------------------------------------------------------------------

// e^r - 1 for |r| <= 0.36 (r given as a DD):
//   r + r^2 * (1/2 + r * (1/6 + r * (1/24 + r * tail(r)))).
// The tail (from r^5/120, below 4e-5) is summed in double; the outer steps in DD so that the result
// carries about 2^-62 relative error before the final rounding.
DD expm1_kernel(DD r) {
    static constexpr double kTail[] = {1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
                                       1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,
                                       1.0 / 87178291200.0, 1.0 / 1307674368000.0};
    double tail = horner(kTail, r.hi);
    DD series = dd_add(kOneTwentyFourth, r.hi * tail);
    series = dd_add(kOneSixth, dd_mul(series, r));
    series = dd_add(dd_mul(series, r), 0.5);
    DD square = dd_mul(r, r);
    return dd_add(r, dd_mul(square, series));
}

struct ScaledDD {
    DD mantissa;  // in [0.7, 1.42]
    int exponent; // value == mantissa * 2^exponent
};

// e^a for a DD argument with |a.hi| <= 746.
ScaledDD exp_parts(DD a) {
    double k = round_to_integer(a.hi * kInvLn2.hi);
    DD r = two_sum(a.hi - k * kLn2Part1, -k * kLn2Part2);
    r = dd_add(r, -k * kLn2Part3);
    r = dd_add(r, a.lo);
    return {dd_add(expm1_kernel(r), 1.0), static_cast<int>(k)};
}

double exp_of_dd(DD a) {
    if (a.hi > 710.0) return kInf;
    if (a.hi < -746.0) return 0.0;
    ScaledDD parts = exp_parts(a);
    return scale_dd(parts.mantissa, parts.exponent);
}

// e^x as a DD, for |x| <= 50 (so the scaling by 2^k is exact).
DD exp_dd(double x) {
    ScaledDD parts = exp_parts({x, 0.0});
    double factor = pow2(parts.exponent);
    return {parts.mantissa.hi * factor, parts.mantissa.lo * factor};
}

// ---------------------------------------------------------------------------------------------
// log: x = 2^e * m with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) with s = (m-1)/(m+1), |s| < 0.172.
// ---------------------------------------------------------------------------------------------
struct LogParts {
    int exponent;  // log x == exponent * ln2 + log_mantissa
    DD log_mantissa;
};

// Requires x finite and > 0.
LogParts log_parts(double x) {
    int exponent = exponent_of(x);
    double mantissa = scale(x, -exponent);  // exact, in [1, 2)
    if (mantissa > 0x1.6a09e667f3bcdp+0) {  // sqrt(2)
        mantissa *= 0.5;
        exponent += 1;
    }
    double f = mantissa - 1.0;  // exact (Sterbenz)
    DD denominator = two_sum(2.0, f);
    double s_hi = f / denominator.hi;
    DD residual = dd_sub({f, 0.0}, dd_mul(denominator, s_hi));
    DD s = fast_two_sum(s_hi, residual.hi / denominator.hi);
    DD z = dd_mul(s, s);
    // 2 atanh(s) = 2s + s*z*(2/3 + z*(2/5 + z*(2/7 + z*(2/9 + ...)))). The innermost part (from 2/7)
    // is below 2e-6 after multiplying by s*z^2, so it is summed in double; the outer terms in DD.
    static constexpr double kInner[] = {2.0 / 7,  2.0 / 9,  2.0 / 11, 2.0 / 13, 2.0 / 15, 2.0 / 17,
                                        2.0 / 19, 2.0 / 21, 2.0 / 23, 2.0 / 25, 2.0 / 27, 2.0 / 29};
    double inner = horner(kInner, z.hi);
    DD series = dd_add(kTwoFifths, dd_mul(z, inner));
    series = dd_add(kTwoThirds, dd_mul(z, series));
    DD correction = dd_mul(dd_mul(s, z), series);
    DD twice_s = {2.0 * s.hi, 2.0 * s.lo};
    return {exponent, dd_add(twice_s, correction)};
}

// exponent * ln2 as a DD (error below 2^-106 relative for |exponent| < 2^21).
DD exponent_times_ln2(int exponent) {
    double e = exponent;
    DD result = two_sum(e * kLn2Part1, e * kLn2Part2);
    return dd_add(result, e * kLn2Part3);
}

DD log_dd(double x) {
    LogParts parts = log_parts(x);
    return dd_add(exponent_times_ln2(parts.exponent), parts.log_mantissa);
}

// NaN for x < 0, -inf for 0, +inf for +inf; otherwise 0 means "compute".
bool log_special_case(double x, double& result) {
    if (std::isnan(x)) { result = x; return true; }
    if (x < 0) { result = kNaN; return true; }
    if (x == 0) { result = -kInf; return true; }
    if (std::isinf(x)) { result = x; return true; }
    return false;
}

// ---------------------------------------------------------------------------------------------
// Trigonometric argument reduction: x = n*(pi/2) + r, |r| <= pi/4 (about), returns n mod 4 and r as DD.
// ---------------------------------------------------------------------------------------------
struct Reduced {
    int quadrant;
    DD r;
};

// Bits [start, start+63] of 2/pi (bit 1 is the first after the binary point; bits before it are 0).
uint64_t two_over_pi_window(int start) {
    if (start < 1) {
        if (start <= -63) return 0;
        return two_over_pi_window(1) >> (1 - start);
    }
    int index = (start - 1) / 64;
    int offset = (start - 1) % 64;
    uint64_t high = kTwoOverPiBits[index] << offset;
    if (offset != 0 && index + 1 < 20) high |= kTwoOverPiBits[index + 1] >> (64 - offset);
    return high;
}

// `count` (<= 53) bits of a 192-bit number (three 64-bit limbs, least significant first) from bit `low`;
// bits below 0 read as zero.
uint64_t read_bits(const uint64_t (&limbs)[3], int low, int count) {
    uint64_t result = 0;
    for (int i = 0; i < count; ++i) {
        int position = low + i;
        if (position < 0 || position >= 192) continue;
        result |= ((limbs[position >> 6] >> (position & 63)) & 1) << i;
    }
    return result;
}

// Payne-Hanek reduction for positive finite ax: multiplies the 53-bit mantissa by a 192-bit window of
// 2/pi chosen so that the bits that only add multiples of 4 quarter turns are skipped. The product is
// 2/pi * ax as a fixed-point number with 190 fraction bits; its top 2 integer bits are the quadrant.
// The truncated window costs at most 2^-137 quarter turns, and the closest any double comes to a
// multiple of pi/2 is about 2^-61, so at least 76 correct bits remain after cancellation.
Reduced reduce_payne_hanek(double ax) {
    uint64_t bits = std::bit_cast<uint64_t>(ax);
    uint64_t mantissa = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
    int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1075;  // ax == mantissa * 2^exponent
    int start = exponent - 1;
    using u128 = unsigned __int128;
    u128 low_product = static_cast<u128>(mantissa) * two_over_pi_window(start + 128);
    u128 mid_product = static_cast<u128>(mantissa) * two_over_pi_window(start + 64);
    u128 high_product = static_cast<u128>(mantissa) * two_over_pi_window(start);
    uint64_t limbs[3];
    limbs[0] = static_cast<uint64_t>(low_product);
    u128 sum = (low_product >> 64) + static_cast<uint64_t>(mid_product);
    limbs[1] = static_cast<uint64_t>(sum);
    sum = (sum >> 64) + (mid_product >> 64) + static_cast<uint64_t>(high_product);
    limbs[2] = static_cast<uint64_t>(sum);
    int quadrant = static_cast<int>(limbs[2] >> 62);
    limbs[2] &= (1ULL << 62) - 1;  // keep the 190-bit fraction
    double sign = 1.0;
    if (limbs[2] >> 61) {  // fraction >= 1/2: use fraction - 1 and the next quadrant
        uint64_t borrow = 0;
        for (uint64_t& limb : limbs) {  // limbs = 2^190 - limbs (two's complement in 192 bits)
            uint64_t negated = 0 - limb - borrow;
            borrow = (limb != 0 || borrow != 0) ? 1 : 0;
            limb = negated;
        }
        limbs[2] &= (1ULL << 62) - 1;
        quadrant += 1;
        sign = -1.0;
    }
    int top = -1;
    for (int limb = 2; limb >= 0 && top < 0; --limb) {
        if (limbs[limb] != 0) top = limb * 64 + 63 - std::countl_zero(limbs[limb]);
    }
    if (top < 0) return {quadrant & 3, {0.0, 0.0}};
    DD fraction = {0.0, 0.0};
    for (int chunk = 0; chunk < 3; ++chunk) {
        int low = top - 52 - 53 * chunk;
        double part = static_cast<double>(read_bits(limbs, low, 53)) * pow2(low - 190);
        fraction = dd_add(fraction, part);
    }
    DD r = dd_mul(fraction, kHalfPi);
    return {quadrant & 3, {sign * r.hi, sign * r.lo}};
}

// For finite x with |x| > pi/4.
Reduced reduce_half_pi(double x) {
    double ax = std::fabs(x);
    Reduced reduced;
    bool done = false;
    if (ax < 0x1p20) {
        // Cody-Waite: n*part1 and n*part2 are exact; pi/2 is carried to about 2^-122.
        double n = round_to_integer(ax * 0x1.45f306dc9c883p-1);  // 2/pi
        DD r = two_sum(ax - n * kHalfPiPart1, -n * kHalfPiPart2);
        r = dd_sub(r, two_prod(n, kHalfPiPart3));
        // Near a multiple of pi/2 the n*2^-122 error of the constant would show: use the exact method.
        if (std::fabs(r.hi) > 0x1p-33) {
            reduced = {static_cast<int>(static_cast<int64_t>(n) & 3), r};
            done = true;
        }
    }
    if (!done) reduced = reduce_payne_hanek(ax);
    if (x < 0) {
        reduced.quadrant = (4 - reduced.quadrant) & 3;
        reduced.r = dd_neg(reduced.r);
    }
    return reduced;
}

// sin r for |r| <= about pi/4: r + r*z*(-1/6 + z*(1/120 + z*tail(z))) with z = r^2. The tail (from
// r^7/5040, below 3e-5) is summed in double, the two outer steps in DD.
DD sin_kernel(DD r) {
    static constexpr double kTail[] = {-1.0 / 5040,
                                       1.0 / 362880,
                                       -1.0 / 39916800,
                                       1.0 / 6227020800.0,
                                       -1.0 / 1307674368000.0,
                                       1.0 / 355687428096000.0,
                                       -1.0 / 121645100408832000.0};
    DD z = dd_mul(r, r);
    DD series = dd_add(kOneHundredTwentieth, z.hi * horner(kTail, z.hi));
    series = dd_sub(dd_mul(z, series), kOneSixth);
    return dd_add(r, dd_mul(dd_mul(r, z), series));
}

// cos r for |r| <= about pi/4: 1 + z*(-1/2 + z*(1/24 + z*tail(z))) with z = r^2. The tail (from
// r^6/720, below 4e-4) is summed in double, the outer steps in DD.
DD cos_kernel(DD r) {
    static constexpr double kTail[] = {-1.0 / 720,
                                       1.0 / 40320,
                                       -1.0 / 3628800,
                                       1.0 / 479001600.0,
                                       -1.0 / 87178291200.0,
                                       1.0 / 20922789888000.0,
                                       -1.0 / 6402373705728000.0,
                                       1.0 / 2432902008176640000.0};
    DD z = dd_mul(r, r);
    DD series = dd_add(kOneTwentyFourth, z.hi * horner(kTail, z.hi));
    series = dd_add(dd_mul(z, series), -0.5);
    return dd_add(dd_mul(z, series), 1.0);
}

// ---------------------------------------------------------------------------------------------
// atan: atan(y/x) = atan(k/8) + atan(t) with the nearest eighth k/8, |t| <= 1/16, Taylor series in t.
// ---------------------------------------------------------------------------------------------

// atan(num/den) for 0 <= num <= den, den > 0. With c = k/8 the nearest eighth to num/den,
// atan(num/den) = atan(c) + atan(t), t = (num - c*den) / (den + c*num), |t| <= 1/16 (one DD division).
DD atan_of_ratio(DD num, DD den) {
    static constexpr double kTail[] = {1.0 / 5,   -1.0 / 7,  1.0 / 9,   -1.0 / 11, 1.0 / 13,
                                       -1.0 / 15, 1.0 / 17, -1.0 / 19, 1.0 / 21};
    int k = static_cast<int>(round_to_integer(num.hi / den.hi * 8.0));  // 0..8
    double c = k * 0.125;
    DD t = dd_div(dd_sub(num, dd_mul(den, c)), dd_add(den, dd_mul(num, c)));
    // atan t = t + t*z*(-1/3 + z*tail(z)), z = t^2 <= 1/256: the tail (from t^5/5, below 3e-6 of t)
    // in double, the -1/3 step in DD.
    DD z = dd_mul(t, t);
    DD series = dd_sub(dd_mul(z, horner(kTail, z.hi)), kOneThird);
    DD atan_t = dd_add(t, dd_mul(dd_mul(t, z), series));
    return dd_add(kAtanOfEighths[k], atan_t);
}

// atan(y/x) in [0, pi/2] for y, x >= 0 (not both zero) of moderate size.
DD atan_ratio(DD y, DD x) {
    if (y.hi <= x.hi) return atan_of_ratio(y, x);
    return dd_sub(kHalfPi, atan_of_ratio(x, y));
}

}  // namespace

// =============================================================================================
// Public functions.
// =============================================================================================

double exp(double x) {
    if (std::isnan(x)) return x;
    return exp_of_dd({x, 0.0});
}

double log(double x) {
    double special;
    if (log_special_case(x, special)) return special;
    return dd_round(log_dd(x));
}

double log2(double x) {
    double special;
    if (log_special_case(x, special)) return special;
    LogParts parts = log_parts(x);
    return dd_round(dd_add(dd_mul(parts.log_mantissa, kInvLn2), static_cast<double>(parts.exponent)));
}

double log10(double x) {
    double special;
    if (log_special_case(x, special)) return special;
    LogParts parts = log_parts(x);
    DD from_exponent = dd_mul(kLog10Of2, static_cast<double>(parts.exponent));
    return dd_round(dd_add(from_exponent, dd_mul(parts.log_mantissa, kInvLn10)));
}

namespace {

bool is_integer(double y) { return std::trunc(y) == y; }
bool is_odd_integer(double y) { return is_integer(y) && std::fabs(y) < 0x1p53 && std::fmod(y, 2.0) != 0.0; }

// pow for special operands (IEEE 754 / C99 Annex F); returns false when the general path applies.
bool pow_special_case(double x, double y, double& result) {
    if (y == 0 || x == 1.0) { result = 1.0; return true; }
    if (std::isnan(x) || std::isnan(y)) { result = x + y; return true; }
    if (std::isinf(y)) {
        double ax = std::fabs(x);
        if (ax == 1.0) result = 1.0;
        else result = ((ax < 1.0) == (y < 0)) ? kInf : 0.0;
        return true;
    }
    if (x == 0) {
        bool odd = is_odd_integer(y);
        if (y < 0) result = odd ? std::copysign(kInf, x) : kInf;
        else result = odd ? x : 0.0;
        return true;
    }
    if (std::isinf(x)) {
        bool odd = is_odd_integer(y);
        double magnitude = y > 0 ? kInf : 0.0;
        result = (x < 0 && odd) ? -magnitude : magnitude;
        return true;
    }
    if (x < 0 && !is_integer(y)) { result = kNaN; return true; }
    return false;
}

}  // namespace

double pow(double x, double y) {
    double special;
    if (pow_special_case(x, y, special)) return special;
    double sign = (x < 0 && is_odd_integer(y)) ? -1.0 : 1.0;
    double ax = std::fabs(x);
    if (std::fabs(y) >= 0x1p64) {
        // |log ax| >= 2^-54 for ax != 1, so |y log ax| > 1000: the result overflows or underflows.
        bool grows = (ax > 1.0) == (y > 0);
        return sign * (grows ? kInf : 0.0);
    }
    DD exponent = dd_mul(log_dd(ax), y);
    return sign * exp_of_dd(exponent);
}

double sin(double x) {
    if (!std::isfinite(x)) return kNaN;
    double ax = std::fabs(x);
    if (ax < 0x1p-26) return x;  // sin x = x - x^3/6, and x^2/6 < 2^-54
    if (ax <= kQuarterPi.hi) return dd_round(sin_kernel({x, 0.0}));
    Reduced reduced = reduce_half_pi(x);
    switch (reduced.quadrant) {
        case 0: return dd_round(sin_kernel(reduced.r));
        case 1: return dd_round(cos_kernel(reduced.r));
        case 2: return -dd_round(sin_kernel(reduced.r));
        default: return -dd_round(cos_kernel(reduced.r));
    }
}

double cos(double x) {
    if (!std::isfinite(x)) return kNaN;
    double ax = std::fabs(x);
    if (ax < 0x1p-27) return 1.0;  // cos x = 1 - x^2/2, and x^2/2 < 2^-55
    if (ax <= kQuarterPi.hi) return dd_round(cos_kernel({x, 0.0}));
    Reduced reduced = reduce_half_pi(x);
    switch (reduced.quadrant) {
        case 0: return dd_round(cos_kernel(reduced.r));
        case 1: return -dd_round(sin_kernel(reduced.r));
        case 2: return -dd_round(cos_kernel(reduced.r));
        default: return dd_round(sin_kernel(reduced.r));
    }
}

double tan(double x) {
    if (!std::isfinite(x)) return kNaN;
    double ax = std::fabs(x);
    if (ax < 0x1p-27) return x;  // tan x = x + x^3/3, and x^2/3 < 2^-55
    Reduced reduced = ax <= kQuarterPi.hi ? Reduced{0, {x, 0.0}} : reduce_half_pi(x);
    DD sine = sin_kernel(reduced.r);
    DD cosine = cos_kernel(reduced.r);
    if (reduced.quadrant & 1) return dd_round(dd_neg(dd_div(cosine, sine)));
    return dd_round(dd_div(sine, cosine));
}

double atan(double x) {
    if (std::isnan(x)) return x;
    double ax = std::fabs(x);
    if (ax < 0x1p-27) return x;  // atan x = x - x^3/3
    if (ax > 0x1p60) return std::copysign(kHalfPi.hi, x);
    return std::copysign(dd_round(atan_ratio({ax, 0.0}, {1.0, 0.0})), x);
}

double atan2(double y, double x) {
    if (std::isnan(x) || std::isnan(y)) return x + y;
    if (y == 0) {
        bool left = x < 0 || (x == 0 && std::signbit(x));
        return left ? std::copysign(kPi.hi, y) : y;
    }
    if (x == 0) return std::copysign(kHalfPi.hi, y);
    if (std::isinf(x)) {
        if (std::isinf(y)) {
            double angle = x > 0 ? kQuarterPi.hi : dd_round(dd_add(kHalfPi, kQuarterPi));
            return std::copysign(angle, y);
        }
        return x > 0 ? std::copysign(0.0, y) : std::copysign(kPi.hi, y);
    }
    if (std::isinf(y)) return std::copysign(kHalfPi.hi, y);
    double ax = std::fabs(x);
    double ay = std::fabs(y);
    int x_exponent = exponent_of(ax);
    int y_exponent = exponent_of(ay);
    if (y_exponent - x_exponent > 60) return std::copysign(kHalfPi.hi, y);
    if (x_exponent - y_exponent > 60) {
        if (x > 0) return y / x;  // atan q = q for q < 2^-60
        return std::copysign(kPi.hi, y);
    }
    int common = x_exponent > y_exponent ? x_exponent : y_exponent;
    DD angle = atan_ratio({scale(ay, -common), 0.0}, {scale(ax, -common), 0.0});  // exact scaling
    if (x < 0) angle = dd_sub(kPi, angle);
    return std::copysign(dd_round(angle), y);
}

namespace {

// sqrt(1 - x^2) as a DD for |x| <= 1.
DD sqrt_one_minus_square(double x) {
    DD one_minus = dd_sub({1.0, 0.0}, two_prod(x, x));
    if (one_minus.hi <= 0) return {0.0, 0.0};
    return dd_sqrt(one_minus);
}

}  // namespace

double asin(double x) {
    if (std::isnan(x)) return x;
    double ax = std::fabs(x);
    if (ax > 1.0) return kNaN;
    if (ax < 0x1p-26) return x;  // asin x = x + x^3/6
    if (ax == 1.0) return std::copysign(kHalfPi.hi, x);
    return std::copysign(dd_round(atan_ratio({ax, 0.0}, sqrt_one_minus_square(ax))), x);
}

double acos(double x) {
    if (std::isnan(x)) return x;
    double ax = std::fabs(x);
    if (ax > 1.0) return kNaN;
    if (x == 1.0) return 0.0;
    if (x == -1.0) return kPi.hi;
    DD angle = atan_ratio(sqrt_one_minus_square(ax), {ax, 0.0});
    if (x < 0) angle = dd_sub(kPi, angle);
    return dd_round(angle);
}

namespace {

// e^|x| and e^-|x| combined as (e^|x| + sign * e^-|x|) / 2, for 2^-27 <= |x| <= 710.5.
double hyperbolic(double ax, double sign) {
    if (ax > 40.0) {  // e^-2|x| < 2^-115: only e^|x| / 2 matters; scale late so it may reach DBL_MAX
        ScaledDD parts = exp_parts({ax, 0.0});
        return scale_dd(parts.mantissa, parts.exponent - 1);
    }
    DD grows = exp_dd(ax);
    DD shrinks = dd_div({1.0, 0.0}, grows);
    DD sum = dd_add(grows, {sign * shrinks.hi, sign * shrinks.lo});
    return dd_round(sum) * 0.5;
}

}  // namespace

double sinh(double x) {
    if (!std::isfinite(x)) return x;
    double ax = std::fabs(x);
    if (ax < 0x1p-26) return x;  // sinh x = x + x^3/6
    if (ax > 710.5) return std::copysign(kInf, x);
    return std::copysign(hyperbolic(ax, -1.0), x);
}

double cosh(double x) {
    if (std::isnan(x)) return x;
    double ax = std::fabs(x);
    if (ax < 0x1p-27) return 1.0;  // cosh x = 1 + x^2/2
    if (ax > 710.5) return kInf;
    return hyperbolic(ax, 1.0);
}

double tanh(double x) {
    if (std::isnan(x)) return x;
    double ax = std::fabs(x);
    if (ax < 0x1p-27) return x;  // tanh x = x - x^3/3
    if (ax > 22.0) return std::copysign(1.0, x);  // 1 - tanh x < 2e^-44 < 2^-63
    DD grown_minus_one = dd_add(exp_dd(2.0 * ax), -1.0);  // e^2|x| - 1, accurate even for small x
    DD result = dd_div(grown_minus_one, dd_add(grown_minus_one, 2.0));
    return std::copysign(dd_round(result), x);
}

double cbrt(double x) {
    if (!std::isfinite(x) || x == 0) return x;
    double ax = std::fabs(x);
    int exponent = exponent_of(ax);
    int third = exponent >= 0 ? exponent / 3 : -((-exponent + 2) / 3);
    int remainder = exponent - 3 * third;          // 0, 1 or 2
    double m = scale(ax, -exponent + remainder);  // in [1, 8), exact
    double y = 1.0 + (m - 1.0) * (1.0 / 7.0);      // within 10% of cbrt(m)
    for (int i = 0; i < 6; ++i) y = (2.0 * y + m / (y * y)) * (1.0 / 3.0);
    // One Newton step with the residual y^3 - m computed in DD makes the error ~2^-100 before rounding.
    DD cube_minus_m = dd_add(dd_mul(two_prod(y, y), y), -m);
    DD root = fast_two_sum(y, -cube_minus_m.hi / (3.0 * y * y));
    return std::copysign(scale(dd_round(root), third), x);
}

double hypot(double x, double y) {
    if (std::isinf(x) || std::isinf(y)) return kInf;
    if (std::isnan(x) || std::isnan(y)) return x + y;
    double big = std::fabs(x);
    double small = std::fabs(y);
    if (small > big) std::swap(big, small);
    if (small == 0) return big;
    int big_exponent = exponent_of(big);
    if (big_exponent - exponent_of(small) > 60) return big;  // (small/big)^2/2 < 2^-121
    double big_scaled = scale(big, -big_exponent);  // exact: both stay normal
    double small_scaled = scale(small, -big_exponent);
    DD sum = dd_add(two_prod(big_scaled, big_scaled), two_prod(small_scaled, small_scaled));
    return scale_dd(dd_sqrt(sum), big_exponent);
}

double floor(double x) { return std::floor(x); }
double ceil(double x) { return std::ceil(x); }
double trunc(double x) { return std::trunc(x); }
double sqrt(double x) { return std::sqrt(x); }
double abs(double x) { return std::fabs(x); }
double fmod(double x, double y) { return std::fmod(x, y); }

double round(double x) {
    double truncated = std::trunc(x);
    if (std::fabs(x - truncated) >= 0.5) truncated += std::copysign(1.0, x);  // x - truncated is exact
    return truncated;
}

}  // namespace pure::math
