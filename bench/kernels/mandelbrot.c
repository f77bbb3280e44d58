/* mandelbrot kernel, C baseline: escape iterations over a W x H grid of [-2,1] x [-1.5,1.5] with at most
   M iterations (W H M = argv[1..3]); prints the sum of iteration counts. Float order must match every port. */
#include <stdio.h>
#include <stdlib.h>

static long long iterations(double cr, double ci, long long limit) {
    double zr = 0.0, zi = 0.0;
    long long count = 0;
    while (count < limit && zr * zr + zi * zi <= 4.0) {
        double next_real = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = next_real;
        count += 1;
    }
    return count;
}

int main(int argc, char **argv) {
    long long width = argc > 1 ? atoll(argv[1]) : 200;
    long long height = argc > 2 ? atoll(argv[2]) : 200;
    long long limit = argc > 3 ? atoll(argv[3]) : 500;
    long long total = 0;
    for (long long y = 0; y < height; y++) {
        double ci = (double)y * 3.0 / (double)height - 1.5;
        for (long long x = 0; x < width; x++) {
            double cr = (double)x * 3.0 / (double)width - 2.0;
            total += iterations(cr, ci, limit);
        }
    }
    printf("%lld\n", total);
    return 0;
}
