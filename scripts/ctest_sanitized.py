#!/usr/bin/env python3
"""Runs ctest in a sanitizer build tree with ASAN_OPTIONS=intercept_tls_get_addr=0, and reruns,
once, only the tests whose failure was LeakSanitizer's own stop-the-world tracer crashing at exit
("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error").

The cause of that crash: the sanitizer runtime of GCC 12 (Debian 12's) intercepts __tls_get_addr
and takes a dynamic TLS block whose address is 16 bytes past a 4 KiB boundary for one with glibc
2.19's header, reading the two words before it as a range; glibc has had no such header since
2.25, so when malloc happens to place a block there, LeakSanitizer scans a bogus range at exit and
dies. Our processes get dynamic TLS blocks when they load the LLVM engine (libLLVM's
thread_locals), so it struck jit.fuzz and jit.engine_loading after every check had passed, and
on a given machine and environment it can strike every time (40 of 40 runs of one program here).
Turning the interceptor off keeps static TLS, stacks, registers and globals as roots; only the
engine's dynamic TLS blocks are no longer scanned (nothing of ours is held only there).

Any other failure fails at once and is never rerun; a test that fails again on the rerun fails;
the rerun is printed, with the names of the tests it covered, so it never hides in a green run.

usage: scripts/ctest_sanitized.py BUILD_DIR [ctest arguments...]
"""
import os
import re
import subprocess
import sys

SIGNATURE = ("Tracer caught signal", "LeakSanitizer has encountered a fatal error")


def failed_outputs(build):
    """The output of each failed test of the last ctest run, by name. Which tests failed comes
    from ctest's own list (LastTestsFailed.log, "N:name" lines), never from reading the output:
    a test that passes by PASS_REGULAR_EXPRESSION or WILL_FAIL prints no "Test Passed." line."""
    temp = os.path.join(build, "Testing", "Temporary")
    with open(os.path.join(temp, "LastTestsFailed.log"), encoding="utf-8", errors="replace") as f:
        names = [line.split(":", 1)[1].strip() for line in f if ":" in line]
    with open(os.path.join(temp, "LastTest.log"), encoding="utf-8", errors="replace") as f:
        text = f.read()
    outputs = {}
    for block in re.split(r"^\d+/\d+ Testing: ", text, flags=re.M)[1:]:
        outputs[block.split("\n", 1)[0].strip()] = block
    return {name: outputs.get(name, "") for name in names}


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    build, args = sys.argv[1], sys.argv[2:]
    options = os.environ.get("ASAN_OPTIONS", "")
    if "intercept_tls_get_addr" not in options:  # a setting of the caller's own wins
        os.environ["ASAN_OPTIONS"] = ":".join(o for o in (options, "intercept_tls_get_addr=0") if o)
    first = subprocess.run(["ctest", "--test-dir", build, *args])
    if first.returncode == 0:
        return 0
    try:
        failed = failed_outputs(build)
    except OSError as e:
        print(f"ctest_sanitized: cannot read the last run's log: {e}", file=sys.stderr)
        return first.returncode
    if not failed:
        return first.returncode
    others = [n for n, out in failed.items() if not all(s in out for s in SIGNATURE)]
    if others:
        print(f"ctest_sanitized: failed: {', '.join(sorted(others))}", file=sys.stderr)
        return first.returncode
    names = sorted(failed)
    print(f"ctest_sanitized: LeakSanitizer's tracer crashed at exit in {', '.join(names)} "
          "(a sanitizer-runtime fault, not a leak and not a failed check): rerunning "
          f"{'it' if len(names) == 1 else 'them'} once", flush=True)
    pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    keep = []
    skip = False
    for a in args:  # the rerun keeps the options, not the first run's selection
        if skip:
            skip = False
            continue
        if a in ("-R", "-E", "-L", "-LE", "-j"):
            skip = True
            continue
        keep.append(a)
    again = subprocess.run(["ctest", "--test-dir", build, *keep, "-R", pattern])
    return again.returncode


if __name__ == "__main__":
    sys.exit(main())
