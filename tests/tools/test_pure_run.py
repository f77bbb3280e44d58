#!/usr/bin/env python3
"""tests/tools/test_pure_run.py — pure-run from the outside: budgets on the command line, arguments
that are not UTF-8, and runs that end by running out of memory (exit 3, a located message, the output
printed before kept even when stdout is a file).

Usage: test_pure_run.py PURE_RUN [EMULATOR [ARGS...]]   (standard library only)
Every run is bounded: memory cases use a small --max-memory, so each takes well under a second.
"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
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


class MemoryBudgetOption(unittest.TestCase):
    def test_sizes(self):
        for value in ["67108864", "65536K", "64M", "64m", "1G", "8589934591G"]:
            with self.subTest(value=value):
                self.assertEqual(run(["--max-memory", value], TEN_STEPS)[:2], (0, b"done\n"))

    def test_refused_sizes(self):
        for value in ["0", "0M", "-1", "64MB", "1T", "M", "0x40M", "1.5G", "8589934592G", "99999999999999999999999"]:
            with self.subTest(value=value):
                code, out, err = run(["--max-memory", value], TEN_STEPS)
                self.assertEqual(code, 2)
                self.assertIn("--max-memory", err)
        self.assertIn("is too large (the largest is 9223372036854775807 bytes)", run(["--max-memory", "8589934592G"], TEN_STEPS)[2])

    def test_option_value_is_not_taken_for_the_file(self):
        code, out, _ = run(["--max-memory", "64M", "--max-steps", "100"], TEN_STEPS)
        self.assertEqual((code, out), (0, b"done\n"))


class Usage(unittest.TestCase):
    def test_help_names_the_arguments_main_gets(self):
        done = subprocess.run(PURE_RUN + ["--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0)
        self.assertIn("Usage: pure-run [OPTIONS] FILE [ARGS...]\n", done.stdout)
        self.assertIn("pure-run --fmt [--check] FILE...", done.stdout)
        self.assertIn("ARGS after it go to main(args: seq text)", done.stdout)

    def test_no_file_is_a_usage_error_naming_it(self):
        done = subprocess.run(PURE_RUN, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("FILE is required", done.stderr)


SPENT_64M = "memory budget spent (64 MiB of texts, lists and stored rows held at once); raise it with --max-memory"


class MemoryExhaustion(unittest.TestCase):
    """The three programs of issue 13 that ended in `terminate ... std::bad_alloc` (exit 134, output lost)."""

    def check_error(self, source, line_col, message):
        code, out, err = run(["--max-memory", "64M"], source, stdout_file=True)
        self.assertEqual(code, 3)
        self.assertEqual(out, b"before\n")  # printed before the error, kept in the file
        self.assertTrue(err.startswith("prog.pure:%s: runtime error: %s\n" % (line_col, message)), err)

    def test_event_pushing_onto_a_stored_sequence_forever_fails_and_is_rolled_back(self):
        source = """list log seq { n: int }
event grow() {
  var i = 0
  while true { log.push({ n: i }); i += 1 }
}
fn main() {
  print("before")
  let o = grow()
  print(o)
  print("count {log.count()}")
  if not o.ok { fail "the event failed" }
}
"""
        code, out, err = run(["--max-memory", "64M"], source, stdout_file=True)
        self.assertEqual(code, 3)
        self.assertEqual(out.decode(), 'before\noutcome { ok: false, reason: "runtime error at 4:19: %s" }\ncount 0\n' % SPENT_64M)
        self.assertTrue(err.startswith("prog.pure:11:17: runtime error: failed: the event failed\n"), err)

    def test_splitting_a_huge_text(self):
        self.check_error('fn main() {\n  print("before")\n  let p = "a".repeat(30000000).split("")\n  print(p.count())\n}\n',
                         "3:31", SPENT_64M)

    def test_repeat_past_the_list_limit_and_within_it(self):
        self.check_error('fn main() {\n  print("before")\n  let xs = repeat(0, 2147483647)\n  print(xs.count())\n}\n',
                         "3:12", "list too long: an event list holds at most 268435456 items")
        self.check_error('fn main() {\n  print("before")\n  let xs = repeat(0, 268435456)\n  print(xs.count())\n}\n',
                         "3:12", SPENT_64M)

    def test_output_is_kept_when_a_lot_was_printed(self):
        # more than the VM's 64 KiB output buffer and stdio's buffer, so some was written and some not yet
        source = 'fn main() {\n  for i in 0 .. 20000 { print("line {i}") }\n  var xs = repeat(0, 0)\n  while true { xs.push(1) }\n}\n'
        code, out, err = run(["--max-memory", "64M"], source, stdout_file=True)
        self.assertEqual(code, 3)
        self.assertEqual(out, "".join("line %d\n" % i for i in range(20000)).encode())
        self.assertTrue(err.startswith("prog.pure:4:18: runtime error: " + SPENT_64M), err)


def run_limited(flags, source, address_space, cwd):
    """Runs `pure-run FLAGS prog.pure` in cwd under RLIMIT_AS (ulimit -v) = address_space bytes."""
    import resource
    path = os.path.join(cwd, "prog.pure")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    done = subprocess.run(PURE_RUN + list(flags) + ["prog.pure"], cwd=cwd, capture_output=True, timeout=60,
                          preexec_fn=limit)
    return done.returncode, done.stdout.decode(), done.stderr.decode("utf-8", "replace")


ULIMIT_V = 400 << 20  # small enough that the default budget (its half, less what is mapped) is ~150 MiB


def sanitized(binary):
    """Whether BINARY was built with a sanitizer: AddressSanitizer reserves terabytes of address space
    for its shadow at start, so a process under RLIMIT_AS (`ulimit -v`) cannot start at all."""
    try:
        with open(binary, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"__asan_init" in data or b"__tsan_init" in data


@unittest.skipIf(len(PURE_RUN) > 1 or os.environ.get("PURE_EMULATOR"), "RLIMIT_AS would limit the emulator")
class DefaultBudgetFromTheMachine(unittest.TestCase):
    """Issue 31 item 8: without --max-memory the budget is derived from the machine (here RLIMIT_AS), so
    it is spent, with its clear error, before the allocator refuses (or the process aborts, exit 134)."""

    def setUp(self):
        # Checked here, not in a decorator: PURE_RUN is set after this module is imported.
        if len(PURE_RUN) > 1:
            self.skipTest("RLIMIT_AS would limit the emulator")
        if sanitized(PURE_RUN[-1]):
            self.skipTest("a sanitizer's shadow memory cannot start under RLIMIT_AS")

    def budget_of(self, err):
        start = err.index("memory budget spent (") + len("memory budget spent (")
        amount, unit = err[start:].split(" ")[:2]
        self.assertEqual(unit, "MiB")
        return int(amount) << 20

    def test_main_growing_a_list_spends_the_derived_budget(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = run_limited([], 'fn main() {\n  print("before")\n  var xs = repeat(0, 0)\n'
                                         '  while true { xs.push(1) }\n}\n', ULIMIT_V, tmp)
        self.assertEqual((code, out), (3, "before\n"), err)
        self.assertTrue(err.startswith("prog.pure:4:18: runtime error: memory budget spent ("), err)
        self.assertIn("raise it with --max-memory", err)
        self.assertLess(self.budget_of(err), ULIMIT_V // 2 + 1)

    def test_max_memory_overrides_the_derived_budget(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = run_limited(["--max-memory", "32M"], 'fn main() {\n  var xs = repeat(0, 0)\n'
                                         '  while true { xs.push(1) }\n}\n', ULIMIT_V, tmp)
        self.assertEqual(code, 3, err)
        self.assertIn("memory budget spent (32 MiB of texts", err)

    def test_the_system_refusing_memory_is_a_runtime_error_not_an_abort(self):
        # a budget larger than ulimit -v allows: the allocator refuses first (mimalloc's C operator new
        # aborted there: exit 134, tools/allocator.h)
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = run_limited(["--max-memory", "4G"], 'fn main() {\n  print("before")\n  var xs = repeat(0, 0)\n'
                                         '  while true { xs.push(1) }\n}\n', ULIMIT_V, tmp)
        self.assertEqual((code, out), (3, "before\n"), err)
        self.assertTrue(err.startswith("prog.pure:4:18: runtime error: out of memory: the system refused an allocation "
                                       "(the memory budget, --max-memory, is 4 GiB)\n"), err)

    def test_event_under_data_fails_is_not_committed_and_the_next_start_recovers(self):
        source = """list rows seq { line: text }
event put(n: int) { for i in 0 .. n { rows.push({ line: "kept {i}" }) } }
event grow() {
  var i = 0
  while true { rows.push({ line: "row {i} padded to be a little longer" }); i += 1 }
}
fn main() {
  if rows.count() == 0 {
    print(put(1000).ok)
    let o = grow()
    print(o.ok)
    print(o.reason)
  }
  print("count {rows.count()}")
}
"""
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = run_limited(["--data", "d"], source, ULIMIT_V, tmp)
            self.assertEqual(code, 0, err)
            lines = out.splitlines()
            self.assertEqual(lines[:2], ["true", "false"], out)
            self.assertTrue(lines[2].startswith("runtime error at 5:20: memory budget spent ("), out)
            self.assertEqual(lines[3], "count 1000")
            code, out, err = run_limited(["--data", "d"], source, ULIMIT_V, tmp)  # recovers: the failed event left nothing
            self.assertEqual((code, out), (0, "count 1000\n"), err)


# Prints, then waits for standard input (input() reads to its end), then prints again: what was
# printed before the wait must be readable while the program waits.
WAIT_FOR_INPUT = ('fn main() {\n  print(repeat("x", 70000).join(""))\n  print("first")\n  write("partial")\n'
                  '  let rest = input()\n  print(" second {rest.len()}")\n}\n')
BEFORE_WAIT = b"x" * 70000 + b"\nfirst\n"


def read_until(fd, want, seconds=20):
    """Reads fd until `want` bytes (the ones that count) have arrived; returns what was read."""
    got = b""
    deadline = time.monotonic() + seconds
    while len(got.replace(b"\r\n", b"\n")) < want and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            got += chunk
    return got


class OutputStreams(unittest.TestCase):
    """print's buffer is written out when it passes 64 KiB, and at each new line on a terminal."""

    def start(self, tmp, stdout):
        path = os.path.join(tmp, "prog.pure")
        with open(path, "w", encoding="utf-8") as f:
            f.write(WAIT_FOR_INPUT)
        return subprocess.Popen(PURE_RUN + ["prog.pure"], cwd=tmp, stdin=subprocess.PIPE, stdout=stdout,
                                stderr=subprocess.PIPE)

    def test_a_pipe_gets_the_output_once_it_passes_64_kib(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = self.start(tmp, subprocess.PIPE)
            try:
                early = read_until(proc.stdout.fileno(), 65536)
                self.assertGreaterEqual(len(early), 65536, "nothing reached the pipe while the program waited")
                proc.stdin.write(b"abc")
                proc.stdin.close()
                rest = proc.stdout.read()
                self.assertEqual(proc.wait(timeout=20), 0)
            finally:
                proc.kill()
                proc.wait()
                proc.stdout.close()
                proc.stderr.close()
            # byte for byte what the program printed, the partial line included
            self.assertEqual(early + rest, BEFORE_WAIT + b"partial second 3\n")

    def test_a_terminal_gets_each_line_as_it_is_printed(self):
        master, slave = pty.openpty()
        with tempfile.TemporaryDirectory() as tmp:
            proc = self.start(tmp, slave)
            os.close(slave)
            try:
                early = read_until(master, len(BEFORE_WAIT))
                self.assertEqual(early.replace(b"\r\n", b"\n"), BEFORE_WAIT,
                                 "the lines printed before input() did not reach the terminal")
                proc.stdin.close()
                self.assertEqual(proc.wait(timeout=20), 0)
                rest = read_until(master, len(b"partial second 0\n"))
                self.assertEqual(rest.replace(b"\r\n", b"\n"), b"partial second 0\n")
            finally:
                proc.kill()
                proc.wait()
                os.close(master)
                proc.stdin.close()
                proc.stderr.close()


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
