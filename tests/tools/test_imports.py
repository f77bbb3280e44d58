#!/usr/bin/env python3
"""tests/tools/test_imports.py — `use "lib.pure"` from the outside (docs/tooling.md, "Imports"):
what an imported file brings, the errors (a missing file, a cycle, state in an imported file, an
error inside an imported file, a name declared in both, the depth limit), each located in the file
it is about; and a data directory (pure-run --data) whose version covers the imported files, so
that a changed imported file is an upgrade like any other change.

Usage: test_imports.py PURE_RUN   (standard library only; pure-run runs directly)
"""
import os
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = ""

LIB = '''const RATE = 3

type Pair {
  a: int
  b: int
}

fn scaled(n: int) -> int {
  return n * RATE
}
'''

MAIN = '''use "lib/util.pure"

fn main() {
  let p: Pair = { a: 1, b: scaled(2) }
  print("{p.a} {p.b} {RATE}")
}
'''


def run(cwd, *args):
    done = subprocess.run([PURE_RUN] + list(args), cwd=cwd, capture_output=True, timeout=60)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


class Imports(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        os.mkdir(os.path.join(self.dir, "lib"))

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(text)

    def test_types_constants_and_functions_are_brought(self):
        self.write("lib/util.pure", LIB)
        self.write("main.pure", MAIN)
        self.assertEqual(run(self.dir, "main.pure"), (0, "1 6 3\n", ""))
        # the path is relative to the importing file, not to the working directory
        self.assertEqual(run(os.path.join(self.dir, "lib"), "../main.pure"), (0, "1 6 3\n", ""))

    def test_a_runtime_error_inside_an_imported_function_names_its_file_and_line(self):
        # Was located by the module's path and the line within the one combined text (main.pure:11:12).
        self.write("lib/ratio.pure", "// ratios\nfn ratio(a: int, b: int) -> int {\n  return a / b\n}\n")
        self.write("main.pure", 'use "lib/ratio.pure"\nfn main() {\n  print(ratio(4, 2))\n  print(ratio(1, 0))\n}\n')
        want = ("lib/ratio.pure:3:12: runtime error: division by zero\n"
                "  in ratio at lib/ratio.pure:3:12\n"
                "  called from main at main.pure:4:9\n")
        self.assertEqual(run(self.dir, "main.pure"), (3, "2\n", want))
        # the same under --data (the durable run) and in a test block
        self.assertEqual(run(self.dir, "--data", "d", "main.pure"), (3, "2\n", want))
        self.write("t.pure", 'use "lib/ratio.pure"\ntest "zero" {\n  assert_eq(ratio(1, 0), 0)\n}\n')
        code, out, err = run(self.dir, "--test", "t.pure")
        self.assertEqual((code, out), (3, "FAIL zero\n0 passed, 1 failed\n"))
        self.assertTrue(err.startswith("lib/ratio.pure:3:12: runtime error: division by zero\n"), err)

    def test_a_file_used_twice_is_imported_once(self):
        self.write("lib/util.pure", LIB)
        self.write("lib/more.pure", 'use "util.pure"\n\nfn twice(n: int) -> int { return scaled(n) * 2 }\n')
        self.write("main.pure", 'use "lib/more.pure"\nuse "lib/util.pure"\n\nfn main() { print("{twice(1)} {scaled(1)}") }\n')
        self.assertEqual(run(self.dir, "main.pure"), (0, "6 3\n", ""))

    def test_a_missing_file_is_located_at_the_use(self):
        self.write("main.pure", 'fn main() {}\nuse "lib/nothere.pure"\n')
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual((code, out), (1, ""))
        self.assertEqual(err.splitlines()[0],
                         "main.pure:2:1: error: cannot read the imported file 'lib/nothere.pure': No such file or directory")

    def test_a_file_using_the_module_itself_is_a_cycle(self):
        self.write("lib/a.pure", 'use "../main.pure"\nfn fa() -> int { return 1 }\n')
        self.write("main.pure", 'use "lib/a.pure"\nfn main() { print("{fa()}") }\n')
        code, out, err = run(self.dir, "./main.pure")
        self.assertEqual((code, out), (1, ""))
        self.assertEqual(err.splitlines()[0], "lib/a.pure:1:1: error: import cycle: main.pure uses lib/a.pure uses main.pure")

    def test_a_cycle_is_refused_with_the_chain(self):
        self.write("lib/a.pure", 'use "b.pure"\nfn fa() -> int { return 1 }\n')
        self.write("lib/b.pure", 'fn fb() -> int { return 2 }\nuse "a.pure"\n')
        self.write("main.pure", 'use "lib/a.pure"\nfn main() { print("{fa()}") }\n')
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual((code, out), (1, ""))
        self.assertEqual(err.splitlines()[0], "lib/b.pure:2:1: error: import cycle: lib/a.pure uses lib/b.pure uses lib/a.pure")

    def test_state_in_an_imported_file_is_refused_in_that_file(self):
        self.write("lib/util.pure", LIB + '\nlist stock by sku: text { qty: int }\n\nevent restock(sku: text) {\n  stock[sku] = { qty: 1 }\n}\n'
                   'query count() -> int { return 0 }\nfn main() {}\n')
        self.write("main.pure", MAIN)
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual((code, out), (1, ""))
        located = [line.split(": error: ") for line in err.splitlines() if ": error: " in line]
        self.assertEqual(located, [["lib/util.pure:12:1", "stored list 'stock' in an imported file"],
                                   ["lib/util.pure:14:1", "event 'restock' in an imported file"],
                                   ["lib/util.pure:17:1", "query 'count' in an imported file"],
                                   ["lib/util.pure:18:1", "'main' in an imported file"]])

    def test_errors_inside_an_imported_file_name_its_file_and_line(self):
        # a syntax error (found while imports are resolved) and a type error (found when checking)
        self.write("lib/util.pure", LIB.replace("return n * RATE", "return n *"))
        self.write("main.pure", MAIN)
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual((code, out), (1, ""))
        self.assertTrue(err.startswith("lib/util.pure:10:1: error: "), err)
        self.write("lib/util.pure", LIB.replace("return n * RATE", 'return "n"'))
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual((code, out), (1, ""))
        self.assertTrue(err.startswith("lib/util.pure:9:10: error: "), err)
        self.assertIn('    return "n"\n', err)  # the imported file's own line is shown

    def test_a_name_in_both_files_names_both_places(self):
        self.write("lib/util.pure", LIB)
        self.write("main.pure", MAIN + "\nfn scaled(n: int) -> int { return n }\n\nconst RATE = 4\n\ntype Pair {\n  a: int\n  b: int\n}\n")
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual((code, out), (1, ""))
        located = [line for line in err.splitlines() if ": error: " in line]
        self.assertEqual(located, [
            "lib/util.pure:1:1: error: constant 'RATE' is declared twice (also at main.pure:10)",
            "lib/util.pure:3:1: error: type 'Pair' is declared twice (also at main.pure:12)",
            "lib/util.pure:8:1: error: 'scaled' is declared twice (also at main.pure:8)"])

    def test_imports_nested_too_deep_are_refused(self):
        for i in range(20):
            self.write("lib/d%d.pure" % i, 'use "d%d.pure"\n' % (i + 1))
        self.write("lib/d20.pure", "")
        self.write("main.pure", 'use "lib/d0.pure"\nfn main() {}\n')
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual((code, out), (1, ""))
        self.assertEqual(err.splitlines()[0], "lib/d14.pure:1:1: error: imports nest more than 16 files deep")

    def test_a_path_with_braces_or_escapes_is_refused(self):
        self.write("main.pure", 'use "lib/{x}.pure"\nfn main() {}\n')
        code, out, err = run(self.dir, "main.pure")
        self.assertEqual(code, 1)
        self.assertIn("main.pure:1:5: error: an imported file's path is plain text", err)

    def test_check_and_test_blocks_see_the_imports(self):
        self.write("lib/util.pure", LIB)
        self.write("main.pure", MAIN + '\ntest "scaled" {\n  assert_eq(scaled(2), 6)\n}\n')
        self.assertEqual(run(self.dir, "--check", "main.pure"), (0, "", ""))
        self.assertEqual(run(self.dir, "--test", "main.pure"), (0, "ok scaled\n1 passed, 0 failed\n", ""))

    def test_a_data_directory_keeps_the_imported_text_and_a_change_there_is_an_upgrade(self):
        self.write("lib/util.pure", LIB)
        self.write("main.pure", 'use "lib/util.pure"\n\nlist seen seq { n: int }\n\nevent add(n: int) {\n'
                   '  seen.push({ n: scaled(n) })\n}\n\nfn main() {\n  let r = add(1)\n'
                   '  var total = 0\n  for s in seen { total += s.n }\n  print("{seen.count()} {total}")\n}\n')
        self.assertEqual(run(self.dir, "--data", "data", "main.pure"), (0, "1 3\n", ""))
        with open(os.path.join(self.dir, "data", "version-0000000001.src")) as f:
            kept = f.read()
        self.assertIn('// ---- imported: "lib/util.pure" ----\n' + LIB, kept)
        # the same files again: the same version
        self.assertEqual(run(self.dir, "--data", "data", "main.pure"), (0, "2 6\n", ""))
        # only the imported file changed: the module's code changed, and that is an upgrade
        self.write("lib/util.pure", LIB.replace("const RATE = 3", "const RATE = 10"))
        code, out, err = run(self.dir, "--data", "data", "main.pure")
        self.assertEqual((code, out), (4, ""), err)
        self.assertIn("differs from version 1 of this directory", err)
        code, out, err = run(self.dir, "--data", "data", "--upgrade", "main.pure")
        self.assertEqual((code, out), (0, "3 16\n"), err)  # the old events keep the code they ran with
        self.assertIn("upgraded to version 2", err)
        # the imported file gone: version 2's text is kept in the directory, but this run needs the file
        os.remove(os.path.join(self.dir, "lib", "util.pure"))
        code, out, err = run(self.dir, "--data", "data", "main.pure")
        self.assertEqual(code, 1, err)
        self.assertIn("cannot read the imported file 'lib/util.pure'", err)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    PURE_RUN = os.path.abspath(sys.argv.pop(1))
    unittest.main()
