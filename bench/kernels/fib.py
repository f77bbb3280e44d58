# fib kernel, CPython baseline: naive recursive fib(N), computed R times (N = argv[1], R = argv[2]);
# prints the sum of the R results as the check. Standard library only.
import sys


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    total = 0
    for _ in range(rounds):
        total += fib(n)
    print(total)


main()
