// Portable math for Pure: every function gives the same bits on every device and compiler.
// Depends only on the C++ standard library's exactly rounded IEEE operations, never on libm's transcendentals.
#pragma once

namespace pure::math {

// Transcendental functions, computed with double-double arithmetic by our own code (see docs/math.md
// for accuracy bounds and special cases). Results are identical on x86-64 and AArch64 when built
// with -ffp-contract=off.
double exp(double x);
double log(double x);
double log2(double x);
double log10(double x);
double pow(double x, double y);
double sin(double x);
double cos(double x);
double tan(double x);
double atan(double x);
double atan2(double y, double x);
double asin(double x);
double acos(double x);
double sinh(double x);
double cosh(double x);
double tanh(double x);
double cbrt(double x);
double hypot(double x, double y);

// Exact operations (IEEE 754 requires these to be correctly rounded, so they are the same everywhere).
double floor(double x);
double ceil(double x);
double round(double x);  // halfway cases away from zero: round(2.5) == 3, round(-2.5) == -3
double trunc(double x);
double sqrt(double x);
double abs(double x);
double fmod(double x, double y);

}  // namespace pure::math
