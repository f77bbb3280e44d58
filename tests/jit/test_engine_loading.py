#!/usr/bin/env python3
"""tests/jit/test_engine_loading.py: how pure-run finds and loads the LLVM engine (jit-llvm/jit.cpp).

Usage: test_engine_loading.py PURE_RUN ENGINE WRONG_ABI_ENGINE NOT_AN_ENGINE   (standard library only)

The engine is loaded at the first compile. Found (PURE_JIT_ENGINE, or the default lookup), hot loops
compile; missing, from another build, or not an engine, the run says so once on stderr and goes on
interpreted with the same stdout and exit code.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = ENGINE = WRONG_ABI = NOT_ENGINE = ""

PROGRAM = """fn main() {
  var total = 0
  for i in 0 .. 5000 { total += i * i % 7 }
  print("total {total}")
}
"""


def run(engine=None, jit="1", debug=False):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "prog.pure")
        with open(path, "w") as stream:
            stream.write(PROGRAM)
        env = dict(os.environ, PURE_JIT=jit, PURE_JIT_THRESHOLD="0", PURE_JIT_STATS="1")
        env.pop("PURE_JIT_ENGINE", None)
        env.pop("PURE_JIT_DEBUG", None)
        if debug:
            env["PURE_JIT_DEBUG"] = "1"
        if engine is not None:
            env["PURE_JIT_ENGINE"] = engine
        # sync: the compile happens inside the run, so the stats line always counts it
        if jit == "1":
            env["PURE_JIT"] = "sync"
        return subprocess.run([PURE_RUN, path], capture_output=True, text=True, env=env, timeout=60)


class EngineLoading(unittest.TestCase):
    def setUp(self):
        self.interpreted = run(jit="0")
        self.assertEqual(self.interpreted.returncode, 0, self.interpreted.stderr)
        self.assertEqual(self.interpreted.stdout, "total 9997\n")  # sum(i * i % 7 for i in range(5000))

    def check_refused(self, engine, words):
        done = run(engine)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.interpreted.stdout)
        self.assertIn(words, done.stderr)
        self.assertIn("hot loops stay interpreted", done.stderr)
        self.assertEqual(done.stderr.count("pure-jit: "), 2, done.stderr)  # the reason once, the stats line
        self.assertIn("0 loops compiled", done.stderr)

    def test_the_default_lookup_finds_the_engine(self):
        done = run()
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.interpreted.stdout)
        self.assertIn("1 loops compiled", done.stderr)
        self.assertNotIn("stay interpreted", done.stderr)

    def test_the_optimiser_runs_a_short_pipeline(self):
        # jit-llvm/llvm_backend.cpp kLoopPasses: a short function pipeline, not O2's module
        # pipeline (its inliner's walk, interprocedural passes, vectorisers), which runs 120
        # passes on this one-loop function (opt-19 -passes='default<O2>' -debug-pass-manager on
        # its IR, 17 for this pipeline); PURE_JIT_DEBUG counts the adaptors and managers around
        # the passes too: 24 here
        done = run(debug=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, self.interpreted.stdout)
        passes = [int(n) for n in re.findall(r"optimiser [0-9.]+ ms \((\d+) passes\)", done.stderr)]
        self.assertEqual(len(passes), 1, done.stderr)
        self.assertGreaterEqual(passes[0], 8, done.stderr)
        self.assertLessEqual(passes[0], 32, done.stderr)

    def test_named_engine(self):
        done = run(ENGINE)
        self.assertIn("1 loops compiled", done.stderr)
        self.assertEqual(done.stdout, self.interpreted.stdout)

    def test_missing_engine(self):
        self.check_refused("/nonexistent/libpure_llvm_engine.so", "is not there (looked for /nonexistent/")

    def test_engine_of_another_build(self):
        self.check_refused(WRONG_ABI, "is from another build of Pure")

    def test_not_an_engine(self):
        self.check_refused(NOT_ENGINE, "is not Pure's LLVM engine")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    PURE_RUN, ENGINE, WRONG_ABI, NOT_ENGINE = (os.path.abspath(a) for a in sys.argv[1:])
    unittest.main(argv=[sys.argv[0]], verbosity=1)
