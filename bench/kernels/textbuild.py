# textbuild kernel, CPython baseline: the decimal text of (i * 7919) % 1000003 for i in [0, N), joined by
# commas (pieces appended to a list, then joined); prints "LENGTH SEVENS" (bytes, count of the digit 7).
import sys


def main():
    count = int(sys.argv[1])
    pieces = []
    for i in range(count):
        pieces.append(str((i * 7919) % 1000003))
    text = ",".join(pieces)
    print(len(text), text.count("7"))


main()
