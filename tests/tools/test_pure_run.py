#!/usr/bin/env python3
"""tests/tools/test_pure_run.py — pure-run from the outside: budgets on the command line, arguments
that are not UTF-8, and runs that end by running out of memory (exit 3, a located message, the output
printed before kept even when stdout is a file).

Usage: test_pure_run.py PURE_RUN [EMULATOR [ARGS...]]   (standard library only)
Every run is bounded: memory cases use a small --max-memory, so each takes well under a second.
"""
import os
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = []  # the command prefix: [emulator..., pure-run]


def run(flags, source, args=(), stdout_file=None, stdin=b""):
    """Runs `pure-run FLAGS prog.pure ARGS` on source; returns (exit code, stdout bytes, stderr text)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "prog.pure")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        command = PURE_RUN + list(flags) + ["prog.pure"] + [a if isinstance(a, bytes) else a.encode() for a in args]
        if stdout_file:
            out_path = os.path.join(tmp, "out.txt")
            with open(out_path, "wb") as out:
                done = subprocess.run(command, cwd=tmp, stdout=out, stderr=subprocess.PIPE, input=stdin, timeout=60)
            with open(out_path, "rb") as f:
                stdout = f.read()
        else:
            done = subprocess.run(command, cwd=tmp, capture_output=True, input=stdin, timeout=60)
            stdout = done.stdout
        return done.returncode, stdout, done.stderr.decode("utf-8", "replace")


# main spends one step per loop check: `for i in 0 .. 9` needs exactly 10 steps.
TEN_STEPS = 'fn main() {\n  for i in 0 .. 9 { }\n  print("done")\n}\n'


class StepBudgetOption(unittest.TestCase):
    def test_decimal_with_leading_zeros_is_not_octal(self):
        self.assertEqual(run(["--max-steps", "010"], TEN_STEPS)[:2], (0, b"done\n"))  # ten, not eight
        code, _, err = run(["--max-steps", "09"], TEN_STEPS)  # nine: one step short
        self.assertEqual(code, 3)
        self.assertIn("step budget spent (9 steps;", err)
        self.assertEqual(run(["--max-steps=10"], TEN_STEPS)[:2], (0, b"done\n"))

    def test_refused_values(self):
        for value in ["0", "-1", "0x10", "1e3", "", "ten", "10 ", "99999999999999999999999999", "9223372036854775808"]:
            with self.subTest(value=value):
                code, out, err = run(["--max-steps", value], TEN_STEPS)
                self.assertEqual(code, 2)
                self.assertEqual(out, b"")
                self.assertIn("--max-steps", err)
        self.assertIn("is too large (the largest is 9223372036854775807)", run(["--max-steps", "99999999999999999999999999"], TEN_STEPS)[2])
        self.assertIn("needs a whole decimal number of at least 1, not '0x10'", run(["--max-steps", "0x10"], TEN_STEPS)[2])
        self.assertEqual(run(["--max-steps", "9223372036854775807"], TEN_STEPS)[:2], (0, b"done\n"))


ECHO_ARGS = 'fn main(args: seq text) {\n  for a in args { print("{a.len()} {a.byte_len()} {a}") }\n}\n'


class Arguments(unittest.TestCase):
    def test_valid_utf8_arguments_reach_main(self):
        self.assertEqual(run([], ECHO_ARGS, ["abc", "é😀", ""])[:2], (0, "3 3 abc\n2 6 é😀\n0 0 \n".encode()))

    def test_invalid_utf8_is_a_usage_error(self):
        cases = [
            ([b"\x80\x80"], "argument 1 for main is not valid UTF-8: invalid UTF-8 at byte 0"),
            ([b"ok", b"\xed\xa0\x80"], "argument 2 for main is not valid UTF-8: invalid UTF-8 at byte 0: surrogate"),
            ([b"ab\xc3"], "argument 1 for main is not valid UTF-8: invalid UTF-8 at byte 2"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                code, out, err = run([], ECHO_ARGS, args)
                self.assertEqual(code, 2)
                self.assertEqual(out, b"")
                self.assertIn(message, err)

    def test_stdin_is_checked_too(self):
        code, out, err = run([], 'fn main() {\n  print("before")\n  print(input())\n}\n', stdin=b"\xff")
        self.assertEqual(code, 3)
        self.assertEqual(out, b"before\n")
        self.assertIn("input is not valid UTF-8: invalid UTF-8 at byte 0", err)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    PURE_RUN = sys.argv[2:] + [os.path.abspath(sys.argv[1])]
    unittest.main(argv=[sys.argv[0]], verbosity=1)
