# spectralnorm kernel, CPython baseline: the spectral norm of the N x N corner of the infinite
# matrix A(i, j) = 1 / ((i+j)(i+j+1)/2 + i + 1), by 10 rounds of the power method on A^T A (as the
# benchmarks game computes it); prints it with 9 decimals (N = argv[1]). Standard library only.
import math
import sys


def a(i, j):
    ij = i + j
    return 1.0 / (ij * (ij + 1) // 2 + i + 1)


def mul_av(v, out, n):
    for i in range(n):
        total = 0.0
        for j in range(n):
            total += a(i, j) * v[j]
        out[i] = total


def mul_atv(v, out, n):
    for i in range(n):
        total = 0.0
        for j in range(n):
            total += a(j, i) * v[j]
        out[i] = total


def mul_atav(v, out, tmp, n):
    mul_av(v, tmp, n)
    mul_atv(tmp, out, n)


def main():
    n = int(sys.argv[1])
    u = [1.0] * n
    v = [0.0] * n
    tmp = [0.0] * n
    for _ in range(10):
        mul_atav(u, v, tmp, n)
        mul_atav(v, u, tmp, n)
    vbv = 0.0
    vv = 0.0
    for i in range(n):
        vbv += u[i] * v[i]
        vv += v[i] * v[i]
    print("%.9f" % math.sqrt(vbv / vv))


main()
