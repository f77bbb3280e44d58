/* sieve kernel, C baseline: sieve of Eratosthenes over an array of N flags, R times (N R = argv[1..2]);
   prints the number of primes below N times R as the check. */
#include <stdio.h>
#include <stdlib.h>

static long long count_primes(long long limit) {
    char *composite = calloc((size_t)limit + 1, 1);
    long long count = 0;
    for (long long i = 2; i < limit; i++) {
        if (composite[i]) continue;
        count += 1;
        for (long long j = i * i; j < limit; j += i) composite[j] = 1;
    }
    free(composite);
    return count;
}

int main(int argc, char **argv) {
    long long limit = argc > 1 ? atoll(argv[1]) : 5000000;
    long long rounds = argc > 2 ? atoll(argv[2]) : 1;
    long long total = 0;
    for (long long round = 0; round < rounds; round++) total += count_primes(limit);
    printf("%lld\n", total);
    return 0;
}
