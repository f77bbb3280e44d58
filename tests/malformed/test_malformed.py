#!/usr/bin/env python3
# tests/malformed/test_malformed.py — mutates every example and seed program (byte flips, deletions,
# duplications, random tokens and bytes incl. NUL and invalid UTF-8, truncations, deep nesting, a
# huge line) and runs `pure-run --check` on each copy. Each run must exit 0 or 1 within the time
# limit, never by a signal or with 2/3, and an exit 1 must print `FILE:LINE:COL: error:` first,
# with every location inside the file. Random mutants that compile are also run (small step budget,
# empty stdin): exit 0 or 3 (1 if it has no main), and an exit 3 must print `FILE:LINE:COL: runtime error:` first.
# Depends on nothing but Python 3 and the pure-run binary given on the command line.
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time

TOKENS = [
    b"fn", b"event", b"query", b"type", b"list", b"seq", b"by", b"let", b"var", b"if", b"else",
    b"while", b"for", b"in", b"return", b"break", b"continue", b"fail", b"and", b"or", b"not",
    b"true", b"false", b"int", b"num", b"text", b"bool", b"main", b"(", b")", b"{", b"}", b"[",
    b"]", b",", b":", b";", b".", b"..", b"->", b"=", b"==", b"+=", b"+", b"-", b"*", b"/", b"%",
    b"<", b"\"", b"\"{", b"}\"", b"\\", b"\\u{", b"\n", b"0x", b"1e", b"9223372036854775808",
    b"1_", b"0.5", b"print(", b"repeat(", b".push(", b".count()", b"[0]", b"x", b"\x00",
    b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\t", b"\r",
    b"&", b"|", b"^", b"~", b"<<", b">>", b"&&", b"||",
    b"if x { 1 } else { 2 }", b" else if ", b"= if ",
    b"const", b"const N = 10\n", b"const A = B\nconst B = A\n", b" = N * 2",
    b".reverse()", b".range(1, 5)", b".first()", b".last()", b"[1].last()", b"].range(0, 9).reverse()",
    b".sum(v)", b".min(v)", b".max(v)", b" = m[1].first() else ",
    b".Row", b": stock.Row", b"type R = stock.Row\n", b"stock[1, 2] = s\n",
]

LOCATED = re.compile(rb"^[^\n]*:[0-9]+:[0-9]+: error: ")


def mutate(rng, data):
    """One random mutation of data (bytes)."""
    kind = rng.randrange(7)
    n = len(data)
    pos = rng.randrange(n + 1)
    if kind == 0 and n:  # flip bits of a few bytes
        out = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(n)
            out[i] ^= 1 << rng.randrange(8)
        return bytes(out)
    if kind == 1:  # delete a span
        return data[:pos] + data[pos + rng.randint(1, 40):]
    if kind == 2:  # duplicate a span
        span = data[pos:pos + rng.randint(1, 200)]
        at = rng.randrange(n + 1)
        return data[:at] + span * rng.randint(1, 3) + data[at:]
    if kind == 3:  # insert a token
        return data[:pos] + rng.choice(TOKENS) + data[pos:]
    if kind == 4:  # insert random bytes
        return data[:pos] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[pos:]
    if kind == 5:  # swap two lines
        lines = data.split(b"\n")
        if len(lines) > 1:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    return data[:pos]  # truncate at a random point


def variants(rng, name, data, per_file):
    """(label, bytes) pairs for one source file."""
    step = max(1, len(data) // 12)
    for cut in range(step, len(data), step):  # truncation at every Nth byte
        yield f"{name}:truncate@{cut}", data[:cut]
    for k in range(per_file):
        out = data
        for _ in range(rng.randint(1, 3)):
            out = mutate(rng, out)
        yield f"{name}:mutation#{k}", out


def fixed_inputs():
    """Pathological inputs that do not depend on any example."""
    main = b"fn main() {\n  let x = "
    yield "deep-parens", main + b"(" * 10000 + b"1" + b")" * 10000 + b"\n}\n"
    yield "deep-parens-open", main + b"(" * 10000 + b"\n}\n"
    yield "deep-braces", b"fn main() " + b"{" * 10000 + b"}" * 10000 + b"\n"
    yield "deep-braces-open", b"fn main() " + b"{" * 10000
    yield "deep-if", b"fn main() {\n" + b"if true {" * 5000 + b"}" * 5000 + b"\n}\n"
    yield "deep-brackets", main + b"[" * 10000 + b"\n}\n"
    yield "deep-unary", main + b"-" * 10000 + b"1\n}\n"
    yield "deep-not", main + b"not " * 10000 + b"true\n}\n"
    yield "deep-interp", main + b"\"{" * 3000 + b"\n}\n"
    yield "deep-seq-type", b"fn main() {\n  let x: " + b"seq " * 10000 + b"int = []\n}\n"
    yield "long-chain", main + b"1" + b" + 1" * 200000 + b"\n}\n"
    yield "long-and-chain", main + b"true" + b" and true" * 200000 + b"\n}\n"
    yield "long-field-chain", main + b"x" + b".y" * 200000 + b"\n}\n"
    yield "long-index-chain", main + b"x" + b"[0]" * 200000 + b"\n}\n"
    yield "long-call-chain", main + b"x" + b".f()" * 100000 + b"\n}\n"
    yield "long-else-if", b"fn main() {\n  if true { }" + b" else if true { }" * 100000 + b"\n}\n"
    yield "long-concat", main + b"\"a\"" + b" + \"a\"" * 100000 + b"\n}\n"
    yield "many-functions", b"".join(b"fn f%d(a: int) -> int { return a + %d }\n" % (i, i) for i in range(20000)) + b"fn main() { }\n"
    yield "many-locals", b"fn main() {\n" + b"".join(b"  let v%d = %d\n" % (i, i) for i in range(70000)) + b"}\n"
    yield "long-line", main + b"\"" + b"a" * (10 * 1024 * 1024) + b"\"\n}\n"
    yield "long-line-garbage", b"x" * (10 * 1024 * 1024)
    yield "many-lines", b"\n" * 1000000 + b"fn main() { print(1) }\n"
    yield "many-errors", b"fn main() {\n" + b"  let = \n" * 5000 + b"}\n"
    yield "nul-only", b"\x00" * 1000
    yield "invalid-utf8", bytes(range(128, 256)) * 8
    yield "empty", b""
    yield "bom", b"\xef\xbb\xbffn main() {}\n"
    yield "crlf", b"fn main() {\r\n  print(1)\r\n}\r\n"
    yield "lone-cr", b"fn main() {\r  print(1)\r}\r"


def run_one(pure_run, workdir, label, data, timeout, run_steps=0):
    """Returns an error message, or None when pure-run behaved."""
    path = os.path.join(workdir, "input.pure")
    with open(path, "wb") as f:
        f.write(data)
    try:
        proc = subprocess.run([pure_run, "--check", path], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"hang: no exit within {timeout} s"
    code = proc.returncode
    if code < 0:
        return f"killed by signal {-code}; stderr starts: {proc.stderr[:300]!r}"
    if code not in (0, 1):
        return f"exit code {code} (only 0 or 1 are allowed); stderr starts: {proc.stderr[:300]!r}"
    if code == 1 and not (proc.stderr.startswith(path.encode() + b":") and LOCATED.match(proc.stderr)):
        return f"exit 1 without a located diagnostic first; stderr starts: {proc.stderr[:300]!r}"
    if code == 1:
        return check_locations(path.encode(), data, proc.stderr)
    if run_steps:
        return run_compiled(pure_run, path, timeout, run_steps)
    return None


def run_compiled(pure_run, path, timeout, steps):
    """A mutant that compiles also runs (small step budget, empty stdin): exit 0 or 3, or 1 for a
    module without main (reported only when asked to run)."""
    try:
        proc = subprocess.run([pure_run, "--max-steps", str(steps), path], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"run: hang: no exit within {timeout} s (--max-steps {steps})"
    if proc.returncode < 0:
        return f"run: killed by signal {-proc.returncode}; stderr starts: {proc.stderr[:300]!r}"
    if proc.returncode == 1 and LOCATED.match(proc.stderr):
        return None
    if proc.returncode not in (0, 3):
        return f"run: exit code {proc.returncode} after a clean --check; stderr starts: {proc.stderr[:300]!r}"
    if proc.returncode == 3 and not re.match(re.escape(path.encode()) + rb":[0-9]+:[0-9]+: runtime error: ", proc.stderr):
        return f"run: exit 3 without a located runtime error; stderr starts: {proc.stderr[:300]!r}"
    return None


def check_locations(path, data, stderr):
    """Every `PATH:LINE:COL: error:` line must point into the file (LINE 1..lines, COL 1..len+1).
    A final newline ends the last line; it does not start one more (an error "at line 8" of a
    7-line file is outside it)."""
    lines = data.split(b"\n")
    if len(lines) > 1 and lines[-1] == b"":
        lines.pop()
    pattern = re.compile(re.escape(path) + rb":([0-9]+):([0-9]+): error: ")
    for m in pattern.finditer(stderr):
        line, col = int(m.group(1)), int(m.group(2))
        if not 1 <= line <= len(lines) or not 1 <= col <= len(lines[line - 1]) + 1:
            return f"diagnostic outside the file: {m.group(0)!r} (file has {len(lines)} lines)"
    return None


def save_failure(keep_dir, index, data):
    os.makedirs(keep_dir, exist_ok=True)
    out = os.path.join(keep_dir, f"failure-{index}.pure")
    with open(out, "wb") as f:
        f.write(data)
    return out


def collect_sources(dirs):
    files = []
    for d in dirs:
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if os.path.isfile(path) and not name.endswith(".md"):
                if d.endswith("crashes") or name.endswith(".pure"):
                    files.append(path)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("pure_run")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--per-file", type=int, default=25, help="random mutants per source file")
    ap.add_argument("--budget", type=float, default=50.0, help="seconds for the random mutants")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--run-steps", type=int, default=100000,
                    help="also run mutants that compile, with this step budget (0: do not run)")
    ap.add_argument("--keep", default=None, help="directory for failing inputs (default: a temp dir)")
    args = ap.parse_args()

    root = os.path.abspath(args.root)
    sources = collect_sources([os.path.join(root, "examples"), os.path.join(root, "tests", "malformed", "seeds")])
    regressions = collect_sources([os.path.join(root, "tests", "fuzz", "crashes")])
    rng = random.Random(args.seed)
    failures = []
    count = 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        keep = args.keep or os.path.join(tempfile.gettempdir(), f"pure-malformed-{args.seed}")

        def check(label, data, run=False):
            nonlocal count
            count += 1
            problem = run_one(args.pure_run, work, label, data, args.timeout, args.run_steps if run else 0)
            if problem:
                saved = save_failure(keep, len(failures), data)
                failures.append(f"{label}: {problem}\n    input kept as {saved}")

        for path in sources + regressions:  # the unmutated files: any exit 0/1 is fine
            with open(path, "rb") as f:
                check(os.path.relpath(path, root), f.read())
        for label, data in fixed_inputs():
            check(label, data)
        # Random mutants, file by file in a fixed order; the budget bounds the run, and each
        # mutant depends only on the seed and its file, so a failure replays with the same seed.
        for path in sources:
            if time.monotonic() - start > args.budget:
                print(f"malformed: time budget reached after {count} inputs; later files were skipped")
                break
            with open(path, "rb") as f:
                data = f.read()
            file_rng = random.Random(f"{args.seed}:{os.path.basename(path)}")
            for label, mutant in variants(file_rng, os.path.relpath(path, root), data, args.per_file):
                check(label, mutant, run=True)
    print(f"malformed: {count} inputs from {len(sources)} programs and {len(regressions)} saved crashes, "
          f"seed {args.seed}, {time.monotonic() - start:.1f} s")
    if failures:
        print(f"malformed: {len(failures)} FAILURES (seed {args.seed}; failing inputs kept in {keep}):")
        for f in failures[:40]:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
