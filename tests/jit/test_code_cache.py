#!/usr/bin/env python3
"""tests/jit/test_code_cache.py: the LLVM engine's persistent code cache (PURE_JIT_CACHE=DIR,
jit-llvm/code_cache.h), through real pure-run processes.

Usage: test_code_cache.py PURE_RUN   (standard library only)

A second run of a program loads every loop it compiled from the cache and compiles none (the
stats line counts hits), with the same output, and the same step counts (a run cut short by its
step budget stops at the same place); a damaged or truncated entry is compiled again and written
afresh; a changed program misses; the directory's size bound removes the least recently used
entries; a directory that cannot be written is reported once and the run goes on.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = ""

# three loops: two nested (one compile for the nest) and one alone
PROGRAM = """fn main() {
  var total = 0
  var i = 0
  while i < 300 {
    var j = 0
    while j < 40 {
      total = (total + i * j) % 1000003
      j += 1
    }
    i += 1
  }
  var k = 0
  while k < 20000 {
    total = (total * 31 + k) % 1000003
    k += 1
  }
  print("total {total}")
}
"""

STATS = re.compile(r"code cache: (\d+) hits, (\d+) misses")
COMPILED = re.compile(r"(\d+) loops compiled")


def run(program, cache, jit="sync", extra=()):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "prog.pure")
        with open(path, "w") as stream:
            stream.write(program)
        env = dict(os.environ, PURE_JIT=jit, PURE_JIT_THRESHOLD="0", PURE_JIT_STATS="1")
        env.pop("PURE_JIT_CACHE", None)
        if cache is not None:
            env["PURE_JIT_CACHE"] = cache
        done = subprocess.run([PURE_RUN, *extra, path], capture_output=True, text=True, env=env, timeout=120)
        done.stderr = done.stderr.replace(folder, "FOLDER")  # a runtime error names the file
        return done


def cache_use(done):
    """(hits, misses) from the stats line; (0, 0) when it has no cache part."""
    found = STATS.search(done.stderr)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def entries(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".pjo"))


class CodeCache(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self.folder.name, "made", "by", "the", "run")  # made with its parents
        self.interpreted = run(PROGRAM, None, jit="0")
        self.assertEqual(self.interpreted.returncode, 0, self.interpreted.stderr)

    def tearDown(self):
        self.folder.cleanup()

    def first_run(self, program=PROGRAM):
        done = run(program, self.cache)
        self.assertEqual(done.returncode, 0, done.stderr)
        hits, misses = cache_use(done)
        self.assertEqual(hits, 0, done.stderr)
        self.assertGreaterEqual(misses, 2, done.stderr)
        self.assertEqual(len(entries(self.cache)), misses)
        return done, misses

    def test_second_run_compiles_nothing(self):
        first, misses = self.first_run()
        self.assertEqual(first.stdout, self.interpreted.stdout)
        second = run(PROGRAM, self.cache)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertEqual(second.stdout, self.interpreted.stdout)
        self.assertEqual(cache_use(second), (misses, 0), second.stderr)
        self.assertEqual(COMPILED.search(second.stderr).group(1), COMPILED.search(first.stderr).group(1))
        self.assertNotIn("not kept", second.stderr)
        # no cache: no cache part in the stats line
        self.assertEqual(cache_use(run(PROGRAM, None)), (0, 0))

    def test_same_steps_from_cached_code(self):
        # a budget spent inside the second loop: the run stops at the same step with the same
        # message whether the code was compiled, loaded from the cache, or interpreted
        budget = ["--max-steps", "30000"]
        interpreted = run(PROGRAM, None, jit="0", extra=budget)
        self.assertNotEqual(interpreted.returncode, 0)
        compiled = run(PROGRAM, self.cache, extra=budget)
        cached = run(PROGRAM, self.cache, extra=budget)
        self.assertGreater(cache_use(cached)[0], 0, cached.stderr)
        self.assertEqual(cache_use(cached)[1], 0, cached.stderr)
        for done in (compiled, cached):
            self.assertEqual(done.returncode, interpreted.returncode)
            self.assertEqual(done.stdout, interpreted.stdout)
            self.assertEqual([line for line in done.stderr.splitlines() if not line.startswith("pure-jit:")],
                             interpreted.stderr.splitlines())

    def test_damaged_entries_are_compiled_again(self):
        _, misses = self.first_run()
        names = entries(self.cache)
        truncated = os.path.join(self.cache, names[0])
        flipped = os.path.join(self.cache, names[1])
        with open(truncated, "r+b") as stream:
            stream.truncate(os.path.getsize(truncated) // 2)
        with open(flipped, "r+b") as stream:
            stream.seek(os.path.getsize(flipped) - 40)
            byte = stream.read(1)
            stream.seek(-1, os.SEEK_CUR)
            stream.write(bytes([byte[0] ^ 0x5A]))
        again = run(PROGRAM, self.cache)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(again.stdout, self.interpreted.stdout)
        self.assertEqual(cache_use(again), (misses - 2, 2), again.stderr)
        # written afresh: the next run has them all
        self.assertEqual(cache_use(run(PROGRAM, self.cache)), (misses, 0))
        # an entry of garbage under a key's name, and an empty one: ignored alike
        for name, data in ((names[0], b"not an object at all" * 10), (names[1], b"")):
            with open(os.path.join(self.cache, name), "wb") as stream:
                stream.write(data)
        again = run(PROGRAM, self.cache)
        self.assertEqual(again.stdout, self.interpreted.stdout)
        self.assertEqual(cache_use(again), (misses - 2, 2), again.stderr)

    def test_changed_program_misses(self):
        _, misses = self.first_run()
        changed = PROGRAM.replace("total * 31", "total * 37")  # only the third loop changes
        done = run(changed, self.cache)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, run(changed, None, jit="0").stdout)
        self.assertNotEqual(done.stdout, self.interpreted.stdout)
        self.assertEqual(cache_use(done), (misses - 1, 1), done.stderr)
        self.assertEqual(len(entries(self.cache)), misses + 1)

    def test_size_bound_evicts_the_least_recently_used(self):
        os.makedirs(self.cache)
        # an old entry as large as the bound (sparse: no disk), and something that is not ours
        old = os.path.join(self.cache, "0" * 32 + ".pjo")
        with open(old, "wb") as stream:
            stream.truncate(64 << 20)
        os.utime(old, (1_000_000_000, 1_000_000_000))
        other = os.path.join(self.cache, "README")
        with open(other, "w") as stream:
            stream.write("kept\n")
        _, misses = self.first_run()
        self.assertFalse(os.path.exists(old))
        self.assertTrue(os.path.exists(other))
        self.assertEqual(cache_use(run(PROGRAM, self.cache)), (misses, 0))

    def test_concurrent_runs_share_the_directory(self):
        env = dict(os.environ, PURE_JIT="sync", PURE_JIT_THRESHOLD="0", PURE_JIT_STATS="1", PURE_JIT_CACHE=self.cache)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "prog.pure")
            with open(path, "w") as stream:
                stream.write(PROGRAM)
            runs = [subprocess.Popen([PURE_RUN, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                    for _ in range(4)]
            for p in runs:
                out, err = p.communicate(timeout=120)
                self.assertEqual(p.returncode, 0, err)
                self.assertEqual(out, self.interpreted.stdout)
        self.assertFalse([n for n in os.listdir(self.cache) if n.endswith(".tmp")])
        done = run(PROGRAM, self.cache)
        self.assertEqual(cache_use(done)[1], 0, done.stderr)

    def test_unwritable_directory_is_reported_once(self):
        blocker = os.path.join(self.folder.name, "a file")
        with open(blocker, "w") as stream:
            stream.write("in the way\n")
        done = run(PROGRAM, os.path.join(blocker, "cache"))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.interpreted.stdout)
        self.assertEqual(done.stderr.count("compiled loops are not kept"), 1, done.stderr)
        self.assertIn("cannot make the directory", done.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    PURE_RUN = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]], verbosity=1)
