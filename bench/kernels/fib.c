/* fib kernel, C baseline: naive recursive fib(N), computed R times (N = argv[1], R = argv[2]);
   prints the sum of the R results as the check. Built by bench/run with cc -O2 -ffp-contract=off. */
#include <stdio.h>
#include <stdlib.h>

static long long fib(long long n) {
    if (n < 2) return n;
    return fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv) {
    long long n = argc > 1 ? atoll(argv[1]) : 32;
    long long rounds = argc > 2 ? atoll(argv[2]) : 1;
    /* volatile: fib is a pure function, so without it the compiler may compute it once for all rounds. */
    volatile long long argument = n;
    long long total = 0;
    for (long long round = 0; round < rounds; round++) total += fib(argument);
    printf("%lld\n", total);
    return 0;
}
