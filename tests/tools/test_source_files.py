#!/usr/bin/env python3
"""tests/tools/test_source_files.py — what pure-run does with a FILE it cannot compile from: a
directory, a missing file (exit 2, `pure-run: cannot read`), and a readable empty file (exit 1, no
main). Usage: test_source_files.py PURE_RUN [EMULATOR [ARGS...]]   (standard library only)"""
import os
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = []  # the command prefix: [emulator..., pure-run]


def run(*args, cwd):
    done = subprocess.run(PURE_RUN + list(args), cwd=cwd, capture_output=True, timeout=60)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


class SourceFile(unittest.TestCase):
    def test_a_directory_is_a_usage_error(self):
        # issue 13: a directory read as an empty module: exit 1, "has no 'fn main()'"
        with tempfile.TemporaryDirectory() as tmp:
            os.mkdir(os.path.join(tmp, "prog.pure"))
            for flags in ([], ["--check"]):
                self.assertEqual(run(*flags, "prog.pure", cwd=tmp),
                                 (2, "", "pure-run: cannot read 'prog.pure': it is a directory\n"))

    def test_a_missing_file_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(run("missing.pure", cwd=tmp), (2, "", "pure-run: cannot read 'missing.pure'\n"))

    def test_an_empty_file_compiles_and_has_no_main(self):
        with tempfile.TemporaryDirectory() as tmp:
            open(os.path.join(tmp, "empty.pure"), "w").close()
            self.assertEqual(run("--check", "empty.pure", cwd=tmp), (0, "", ""))
            self.assertEqual(run("empty.pure", cwd=tmp),
                             (1, "", "empty.pure:1:1: error: the module has no 'fn main()' to run\n"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    PURE_RUN[:] = sys.argv[2:] + [os.path.abspath(sys.argv[1])]
    unittest.main(argv=[sys.argv[0]])
