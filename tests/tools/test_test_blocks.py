#!/usr/bin/env python3
"""tests/tools/test_test_blocks.py — `pure-run --test` from the outside (docs/tooling.md): each test
block runs against empty stored lists, assert and assert_eq fail located with both sides printed, the
closing `N passed, N failed` line and the exit code; tests never run under plain pure-run and never
change the compiled module (the same bytecode with or without them); their errors are located.

Usage: test_test_blocks.py PURE_RUN [EMULATOR [ARGS...]]   (standard library only)
"""
import os
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = []  # the command prefix: [emulator..., pure-run]

MODULE = """list notes seq { line: text }
event add(line: text) -> int {
  if line == "" { fail "empty" }
  notes.push({ line: line })
  return notes.count()
}
query count() -> int { return notes.count() }
fn main() { print("main ran: {add("x").value}") }
"""

TESTS = """
test "first" {
  assert_eq(add("a").value, 1)
  assert_eq(count(), 1)
}
test "second starts empty" {
  assert_eq(count(), 0)
  assert(not add("").ok)
}
"""


def run(flags, source, args=()):
    """Runs `pure-run FLAGS prog.pure ARGS`; returns (exit code, stdout text, stderr text)."""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "prog.pure"), "w", encoding="utf-8") as f:
            f.write(source)
        done = subprocess.run(PURE_RUN + list(flags) + ["prog.pure"] + list(args), cwd=tmp, capture_output=True,
                              timeout=60)
        return done.returncode, done.stdout.decode(), done.stderr.decode()


class TestBlocks(unittest.TestCase):
    def test_passing_tests(self):
        code, out, err = run(["--test"], MODULE + TESTS)
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(out, "ok first\nok second starts empty\n2 passed, 0 failed\n")

    def test_plain_run_ignores_tests(self):
        code, out, err = run([], MODULE + TESTS + 'test "would fail" { assert(false) }\n')
        self.assertEqual((code, out, err), (0, "main ran: 1\n", ""))

    def test_tests_leave_the_compiled_module_unchanged(self):
        with_tests = run(["--dump-bytecode"], MODULE + TESTS)
        without = run(["--dump-bytecode"], MODULE)
        self.assertEqual(with_tests[0], 0)
        self.assertEqual(with_tests, without)

    def test_failures_are_located_with_both_sides(self):
        source = MODULE + 'test "wrong count" {\n  assert(add("a").ok)\n  assert_eq(count(), 2)\n}\n' + \
            'test "wrong list" {\n  assert_eq([1, 2], [1, 3])\n}\n' + \
            'test "wrong bool" {\n  let n = count()\n  assert(n == 1 or n == 2)\n}\n' + TESTS
        code, out, err = run(["--test"], source)
        self.assertEqual(code, 3)
        self.assertEqual(out, "FAIL wrong count\nFAIL wrong list\nFAIL wrong bool\nok first\nok second starts empty\n"
                              "2 passed, 3 failed\n")
        self.assertIn("prog.pure:11:3: runtime error: failed: assert_eq(count(), 2): left is 1, right is 2\n", err)
        self.assertIn("prog.pure:14:3: runtime error: failed: assert_eq([1, 2], [1, 3]): left is [1, 2], right is [1, 3]\n",
                      err)
        self.assertIn("prog.pure:18:3: runtime error: failed: assert(n == 1 or n == 2)\n", err)
        self.assertIn('  in test "wrong bool" at prog.pure:18:3\n', err)

    def test_assert_eq_evaluates_each_side_once(self):
        code, out, err = run(["--test"], MODULE + 'test "once" {\n  assert_eq(add("a").value, 1)\n  assert_eq(count(), 1)\n}\n')
        self.assertEqual((code, out, err), (0, "ok once\n1 passed, 0 failed\n", ""))

    def test_no_tests(self):
        self.assertEqual(run(["--test"], MODULE), (0, "0 passed, 0 failed\n", ""))

    def test_errors_in_tests_are_located(self):
        cases = [
            ('test "a" { assert(1, 2) }\n', "prog.pure:9:12: error: assert takes one argument, a bool, not 2"),
            ('test "a" { assert_eq(count(), 1.5) }\n',
             "prog.pure:9:12: error: assert_eq compares two values of one type, not int and num"),
            ('test "a" { }\ntest "a" { }\n', 'prog.pure:10:6: error: a test named "a" is already declared on line 9'),
            ('test "a" { let x = nope }\n', "prog.pure:9:20: error: unknown name 'nope'"),
            ('test "a\\n" { }\n', "prog.pure:9:6: error: a test's name is plain text"),
        ]
        for source, message in cases:
            for flags in (["--test"], ["--check"]):
                with self.subTest(source=source, flags=flags):
                    code, out, err = run(flags, MODULE + source)
                    self.assertEqual(code, 1)
                    self.assertTrue(err.startswith(message), err)

    def test_assert_outside_tests_is_an_ordinary_call(self):
        code, out, err = run(["--check"], "fn main() { assert(true) }\n")
        self.assertEqual(code, 1)
        self.assertIn("'assert'", err)

    def test_test_is_still_a_name(self):
        source = "fn main() {\n  let test = 2\n  print(test)\n}\n"
        self.assertEqual(run([], source), (0, "2\n", ""))
        source = "fn test(n: int) -> int { return n }\nfn main() { print(test(3)) }\n"
        self.assertEqual(run([], source), (0, "3\n", ""))

    def test_usage(self):
        for flags, args in ((["--test", "--check"], []), (["--test"], ["an-argument"])):
            with self.subTest(flags=flags, args=args):
                code, out, err = run(flags, MODULE + TESTS, args)
                self.assertEqual(code, 2)
                self.assertIn("--test runs the test blocks alone", err)


if __name__ == "__main__":
    PURE_RUN[:] = sys.argv[2:] + [os.path.abspath(sys.argv[1])]
    unittest.main(argv=sys.argv[:1])
