# fannkuch kernel, CPython: fannkuch-redux over the permutations of 0..N-1 (N = argv[1]) in the
# order of the counting rotation; prints the checksum and the largest number of prefix reversals.
import sys


def main():
    n = int(sys.argv[1])
    perm1 = list(range(n))
    perm = [0] * n
    count = [0] * n
    max_flips = checksum = permutation = 0
    r = n
    while True:
        while r != 1:
            count[r - 1] = r
            r -= 1
        perm[:] = perm1
        flips = 0
        k = perm[0]
        while k != 0:
            lo, hi = 0, k
            while lo < hi:
                perm[lo], perm[hi] = perm[hi], perm[lo]
                lo += 1
                hi -= 1
            flips += 1
            k = perm[0]
        max_flips = max(max_flips, flips)
        checksum += flips if permutation % 2 == 0 else -flips
        while True:
            if r == n:
                print("%d %d" % (checksum, max_flips))
                return
            first = perm1[0]
            for j in range(r):
                perm1[j] = perm1[j + 1]
            perm1[r] = first
            count[r] -= 1
            if count[r] > 0:
                break
            r += 1
        permutation += 1


main()
