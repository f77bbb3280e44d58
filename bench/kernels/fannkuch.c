/* fannkuch kernel, C baseline: fannkuch-redux over the permutations of 0..N-1 (N = argv[1]) in the
   order of the counting rotation; prints the checksum and the largest number of prefix reversals. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long long n = argc > 1 ? atoll(argv[1]) : 10;
    long long *perm1 = calloc((size_t)n, sizeof *perm1), *perm = calloc((size_t)n, sizeof *perm),
              *count = calloc((size_t)n, sizeof *count);
    for (long long i = 0; i < n; i++) perm1[i] = i;
    long long max_flips = 0, checksum = 0, permutation = 0, r = n;
    for (;;) {
        for (; r != 1; r--) count[r - 1] = r;
        for (long long i = 0; i < n; i++) perm[i] = perm1[i];
        long long flips = 0;
        for (long long k = perm[0]; k != 0; k = perm[0]) {
            for (long long lo = 0, hi = k; lo < hi; lo++, hi--) {
                long long t = perm[lo];
                perm[lo] = perm[hi];
                perm[hi] = t;
            }
            flips++;
        }
        if (flips > max_flips) max_flips = flips;
        checksum += permutation % 2 == 0 ? flips : -flips;
        for (;;) {
            if (r == n) {
                printf("%lld %lld\n", checksum, max_flips);
                free(perm1), free(perm), free(count);
                return 0;
            }
            long long first = perm1[0];
            for (long long j = 0; j < r; j++) perm1[j] = perm1[j + 1];
            perm1[r] = first;
            if (--count[r] > 0) break;
            r++;
        }
        permutation++;
    }
}
