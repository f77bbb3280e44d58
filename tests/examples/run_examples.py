#!/usr/bin/env python3
"""tests/examples/run_examples.py — runs every examples/NAME.pure through pure-run and compares bytes.

Usage: run_examples.py [--examples DIR] [--only NAME[,NAME...]] [--all-diffs] PURE_RUN [EMULATOR [ARGS...]]

Per example (see notes/examples-convention.md): NAME.out is the expected stdout; NAME.err the expected
stderr (absent = empty); NAME.code the expected exit code (absent = 0); NAME.args the arguments, one
per line, passed after the file name; NAME.in the standard input (absent = empty); NAME.flags pure-run
options, one per line, placed BEFORE the file name (e.g. --max-steps then 1000); NAME.runs a number N:
the example runs N times against one fresh data directory (pure-run --data DIR), NAME.out and NAME.err
hold the output of all runs one after another, NAME.code the exit code of the last (earlier ones: 0).
Each program runs from inside the examples folder with NAME.pure as its path, so messages say NAME.pure.
Everything after PURE_RUN is an emulator prefix (a cross build passes CMAKE_CROSSCOMPILING_EMULATOR).
Exit code: 0 when every example matches, 1 otherwise. Standard library only.
"""
import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

TIMEOUT_SECONDS = 60
MAX_DIFF_LINES = 60


def read_bytes(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path, "rb") as f:
        return f.read()


def read_lines(path):
    data = read_bytes(path)
    if data is None:
        return []
    return data.decode("utf-8").split("\n")[:-1] if data.endswith(b"\n") else data.decode("utf-8").split("\n")


def expected_of(folder, name):
    code_text = read_bytes(os.path.join(folder, name + ".code"), b"0").decode().strip()
    return {
        "stdout": read_bytes(os.path.join(folder, name + ".out"), b""),
        "stderr": read_bytes(os.path.join(folder, name + ".err"), b""),
        "exit code": int(code_text),
    }


def run_one(folder, name, pure_run, emulator):
    flags = read_lines(os.path.join(folder, name + ".flags"))
    args = read_lines(os.path.join(folder, name + ".args"))
    stdin = read_bytes(os.path.join(folder, name + ".in"), b"")
    runs = int(read_bytes(os.path.join(folder, name + ".runs"), b"1").decode().strip())
    data_dir = tempfile.mkdtemp(prefix="pure-example-") if runs > 1 else None
    if data_dir:
        flags = ["--data", os.path.join(data_dir, "data")] + flags
    command = emulator + [pure_run] + flags + [name + ".pure"] + args
    got = {"stdout": b"", "stderr": b"", "exit code": 0}
    try:
        for run in range(runs):
            try:
                done = subprocess.run(command, cwd=folder, input=stdin, capture_output=True, timeout=TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                return None, command
            got["stdout"] += done.stdout
            got["stderr"] += done.stderr
            got["exit code"] = done.returncode
            if done.returncode != 0 and run + 1 < runs:
                got["stderr"] += ("[run %d of %d exited with %d]\n" % (run + 1, runs, done.returncode)).encode()
                break
    finally:
        if data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)
    return got, command


def show_diff(stream, want, got):
    if stream == "exit code":
        killed = f" (killed by signal {-got})" if got < 0 else ""
        print(f"    exit code: expected {want}, got {got}{killed}")
        return
    want_lines = want.decode("utf-8", "backslashreplace").splitlines(keepends=True)
    got_lines = got.decode("utf-8", "backslashreplace").splitlines(keepends=True)
    diff = list(difflib.unified_diff(want_lines, got_lines, f"expected {stream}", f"actual {stream}", n=2))
    if not diff:  # differs only in bytes that decode alike, or in a missing final newline
        print(f"    {stream}: expected {want!r}\n    {stream}:      got {got!r}")
        return
    for line in diff[:MAX_DIFF_LINES]:
        print("    " + line.rstrip("\n") + ("" if line.endswith("\n") else "  (no newline at end)"))
    if len(diff) > MAX_DIFF_LINES:
        print(f"    ... {len(diff) - MAX_DIFF_LINES} more diff lines")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--examples", default=os.path.join(here, "..", "..", "examples"), help="the examples folder")
    parser.add_argument("--only", default="", help="comma-separated example names to run")
    parser.add_argument("--all-diffs", action="store_true", help="show every differing stream, not just the first")
    parser.add_argument("pure_run", help="path of the pure-run executable")
    parser.add_argument("emulator", nargs=argparse.REMAINDER, help="emulator command prefix (cross builds)")
    options = parser.parse_args()

    folder = os.path.abspath(options.examples)
    pure_run = os.path.abspath(options.pure_run)
    names = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".pure"))
    if options.only:
        wanted = options.only.split(",")
        missing = [n for n in wanted if n not in names]
        if missing:
            print("no such example: " + ", ".join(missing))
            return 2
        names = wanted
    if not names:
        print(f"no examples in {folder}")
        return 1

    failed = []
    for name in names:
        want = expected_of(folder, name)
        got, command = run_one(folder, name, pure_run, options.emulator)
        if got is None:
            failed.append(name)
            print(f"FAIL {name}: timed out after {TIMEOUT_SECONDS} s: {' '.join(command)}")
            continue
        streams = [s for s in ("exit code", "stdout", "stderr") if want[s] != got[s]]
        if not streams:
            continue
        failed.append(name)
        print(f"FAIL {name}: {', '.join(streams)} differ(s) (run from {folder}: {' '.join(command)})")
        # the exit code alone says little: show it and the first differing output stream
        shown = streams if options.all_diffs else streams[:2] if streams[0] == "exit code" else streams[:1]
        for stream in shown:
            show_diff(stream, want[stream], got[stream])
    print(f"{len(names) - len(failed)} of {len(names)} examples match" +
          (": failing " + " ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
