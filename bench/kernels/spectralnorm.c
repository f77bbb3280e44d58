/* spectralnorm kernel, C baseline: the spectral norm of the N x N corner of the infinite matrix
   A(i, j) = 1 / ((i+j)(i+j+1)/2 + i + 1), by 10 rounds of the power method on A^T A (as the
   benchmarks game computes it); prints it with 9 decimals (N = argv[1]). Float order must match
   every port. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double a(long long i, long long j) {
    long long ij = i + j;
    return 1.0 / (double)(ij * (ij + 1) / 2 + i + 1);
}

static void mul_av(const double *v, double *out, long long n) {
    for (long long i = 0; i < n; i++) {
        double sum = 0.0;
        for (long long j = 0; j < n; j++) sum += a(i, j) * v[j];
        out[i] = sum;
    }
}

static void mul_atv(const double *v, double *out, long long n) {
    for (long long i = 0; i < n; i++) {
        double sum = 0.0;
        for (long long j = 0; j < n; j++) sum += a(j, i) * v[j];
        out[i] = sum;
    }
}

static void mul_atav(const double *v, double *out, double *tmp, long long n) {
    mul_av(v, tmp, n);
    mul_atv(tmp, out, n);
}

int main(int argc, char **argv) {
    long long n = argc > 1 ? atoll(argv[1]) : 100;
    double *u = malloc(sizeof(double) * (size_t)n), *v = malloc(sizeof(double) * (size_t)n);
    double *tmp = malloc(sizeof(double) * (size_t)n);
    for (long long i = 0; i < n; i++) {
        u[i] = 1.0;
        v[i] = 0.0;
        tmp[i] = 0.0;
    }
    for (int round = 0; round < 10; round++) {
        mul_atav(u, v, tmp, n);
        mul_atav(v, u, tmp, n);
    }
    double vbv = 0.0, vv = 0.0;
    for (long long i = 0; i < n; i++) {
        vbv += u[i] * v[i];
        vv += v[i] * v[i];
    }
    printf("%.9f\n", sqrt(vbv / vv));
    free(u);
    free(v);
    free(tmp);
    return 0;
}
