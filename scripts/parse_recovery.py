#!/usr/bin/env python3
"""scripts/parse_recovery.py PURE_RUN [--examples DIR] [--per-file N] [--seed S] [--max-median M] [--show K]

How many errors one typo gives: every example that compiles cleanly (`pure-run --check`, exit 0) is
cut into tokens, and N single-token mutations of it (one token deleted, one token replaced by another
token, or one token inserted, from the tokens of Pure; chosen with a fixed seed) are checked with
`pure-run --check`. For each mutation that no longer compiles, the errors it reports are counted
(lines `FILE:LINE:COL: error:`). Prints the median, mean and 90th percentile of errors per mutation
and the share reported with exactly one error; --show K prints the K mutations with the most errors.
With --max-median M, the exit code is 1 when the median is above M (ctest `parse_recovery`).
Deterministic for one seed and one set of examples. Standard library only.
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

TOKEN = re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9_.eEx]*|\.\.|->|==|!=|<=|>=|<<|>>|'
                   r'[+\-*/%]=|\S')
VOCABULARY = ["fn", "event", "query", "type", "list", "seq", "by", "let", "var", "if", "else", "while", "for", "in",
              "return", "break", "continue", "fail", "and", "or", "not", "true", "false", "const", "(", ")", "{",
              "}", "[", "]", ",", ":", ".", "..", "->", "=", "==", "!=", "<", "+", "-", "*", "x", "1", "2.5", '"t"']
ERROR = re.compile(rb"^[^\n]*:[0-9]+:[0-9]+: error: ", re.M)


def tokens_of(text):
    """(start, end) of each token outside comments."""
    return [(m.start(), m.end()) for m in TOKEN.finditer(text) if not m.group().startswith("//")]


def mutate(rng, text, spans):
    start, end = spans[rng.randrange(len(spans))]
    kind = rng.randrange(3)
    if kind == 0:
        return text[:start] + text[end:], f"delete {text[start:end]!r}"
    word = rng.choice(VOCABULARY)
    if kind == 1:
        return text[:start] + word + text[end:], f"replace {text[start:end]!r} by {word!r}"
    return text[:start] + word + " " + text[start:], f"insert {word!r} before {text[start:end]!r}"


def check(pure_run, folder, text):
    path = os.path.join(folder, "mutant.pure")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    done = subprocess.run([pure_run, "--check", "mutant.pure"], cwd=folder, capture_output=True, timeout=60)
    return done.returncode, len(ERROR.findall(done.stderr)), done.stderr.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pure_run")
    ap.add_argument("--examples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    ap.add_argument("--per-file", type=int, default=20)
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument("--max-median", type=float)
    ap.add_argument("--show", type=int, default=0)
    a = ap.parse_args()
    pure_run = os.path.abspath(a.pure_run)
    rng = random.Random(a.seed)
    counts, worst = [], []
    files = 0
    with tempfile.TemporaryDirectory(prefix="pure-recovery-") as folder:
        for name in sorted(os.listdir(a.examples)):
            if not name.endswith(".pure"):
                continue
            with open(os.path.join(a.examples, name), encoding="utf-8") as f:
                text = f.read()
            if check(pure_run, folder, text)[0] != 0:
                continue  # the examples of compile errors: not a clean start
            files += 1
            spans = tokens_of(text)
            for _ in range(a.per_file):
                mutant, what = mutate(rng, text, spans)
                code, errors, stderr = check(pure_run, folder, mutant)
                if code == 0:
                    continue  # still a valid module (e.g. '+' replaced by '-')
                counts.append(errors)
                worst.append((errors, name, what, stderr))
    if not counts:
        sys.exit("no mutation failed to compile")
    counts.sort()
    median = statistics.median(counts)
    p90 = counts[min(len(counts) - 1, int(len(counts) * 0.9))]
    one = sum(1 for c in counts if c == 1) / len(counts)
    print(f"{files} examples, {len(counts)} single-token mutations that do not compile: errors per mutation "
          f"median {median:g}, mean {statistics.mean(counts):.2f}, 90th percentile {p90}, max {counts[-1]}; "
          f"exactly one error: {one:.0%}")
    worst.sort(key=lambda w: -w[0])
    for errors, name, what, stderr in worst[:a.show]:
        print(f"--- {name}: {what}: {errors} errors\n{stderr}")
    if a.max_median is not None and median > a.max_median:
        print(f"median {median:g} is above {a.max_median:g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
