# mandelbrot kernel, CPython baseline: escape iterations over a W x H grid of [-2,1] x [-1.5,1.5] with
# at most M iterations (W H M = argv[1..3]); prints the sum of iteration counts. Standard library only.
import sys


def iterations(cr, ci, limit):
    zr = 0.0
    zi = 0.0
    count = 0
    while count < limit and zr * zr + zi * zi <= 4.0:
        next_real = zr * zr - zi * zi + cr
        zi = 2.0 * zr * zi + ci
        zr = next_real
        count += 1
    return count


def main():
    width, height, limit = (int(a) for a in sys.argv[1:4])
    total = 0
    for y in range(height):
        ci = float(y) * 3.0 / float(height) - 1.5
        for x in range(width):
            cr = float(x) * 3.0 / float(width) - 2.0
            total += iterations(cr, ci, limit)
    print(total)


main()
