# sieve kernel, CPython baseline: sieve of Eratosthenes over a list of N flags, R times (N R = argv[1..2]);
# prints the number of primes below N times R. Plain counted loops, no slice assignment.
import sys


def count_primes(limit):
    composite = [False] * (limit + 1)
    count = 0
    for i in range(2, limit):
        if composite[i]:
            continue
        count += 1
        for j in range(i * i, limit, i):
            composite[j] = True
    return count


def main():
    limit = int(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    total = 0
    for _ in range(rounds):
        total += count_primes(limit)
    print(total)


main()
