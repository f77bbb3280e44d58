# textkeys kernel, CPython baseline: count N words drawn from D distinct ones in a dict keyed by the word
# (words from the joined text's split), then sort the keys and walk them in order; prints
# "DISTINCT FIRST LAST CHECKSUM".
import sys


def main():
    count, distinct = int(sys.argv[1]), int(sys.argv[2])
    s = 20261201
    vocab = []
    for i in range(distinct):
        s = s * 48271 % 2147483647
        letters = []
        for _ in range(2 + s % 6):
            s = s * 48271 % 2147483647
            letters.append(chr(97 + s % 26))
        letters += [chr(97 + i // 676 % 26), chr(97 + i // 26 % 26), chr(97 + i % 26)]
        vocab.append("".join(letters))
    pieces = []
    for _ in range(count):
        s = s * 48271 % 2147483647
        pieces.append(vocab[s % distinct])
    counts = {}
    for w in " ".join(pieces).split(" "):
        counts[w] = counts.get(w, 0) + 1
    keys = sorted(counts)
    total = 0
    for rank, k in enumerate(keys, 1):
        total = (total + rank * counts[k]) % 1000000007
    print(len(keys), keys[0], keys[-1], total)


main()
