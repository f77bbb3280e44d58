"""tests/serve/test_imports.py — a module with `use "lib.pure"` served by a real pure-serve on
127.0.0.1 (docs/tooling.md, "Imports"): the imported functions run in its events and queries, its
source (GET /v1/NAME/source) is the text the data directory keeps, imported files included, a
module whose import is missing is refused at start-up with the error located at its `use`, and a
failure at a line of an imported file names that file and line (reply and start-up). Run by
ctest (serve.imports) with PURE_SERVE set to the binary."""
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary  # noqa: E402

warnings.simplefilter("ignore", ResourceWarning)

LIB = "const RATE = 3\n\nfn scaled(n: int) -> int {\n  return n * RATE\n}\n"
MODULE = ('use "lib/rates.pure"\n\nlist totals by k: int { n: int }\n\n'
          "event add(n: int) {\n  if totals.has(0) { totals[0].n += scaled(n) } else { totals[0] = { n: scaled(n) } }\n}\n\n"
          "query total() -> int {\n  if totals.has(0) { return totals[0].n }\n  return 0\n}\n")


class ImportsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        os.mkdir(os.path.join(self.tmp.name, "lib"))
        self.path = os.path.join(self.tmp.name, "counts.pure")
        with open(self.path, "w") as f:
            f.write(MODULE)

    def test_a_module_with_imports_is_served(self):
        with open(os.path.join(self.tmp.name, "lib", "rates.pure"), "w") as f:
            f.write(LIB)
        s = Server(find_binary(), [self.path])
        self.addCleanup(s.cleanup)
        self.addCleanup(s.kill)
        c = Conn(s.port)
        self.assertEqual(c.json("POST", "/v1/counts/add", {"n": 2})[0], 200)
        self.assertEqual(c.json("POST", "/v1/counts/add", {"n": 5})[0], 200)
        self.assertEqual(c.json("POST", "/v1/counts/total", {}), (200, {"result": 21}))
        status, body = c.json("GET", "/v1/counts/source")
        self.assertEqual(status, 200, body)
        imported = os.path.join(self.tmp.name, "lib", "rates.pure")
        self.assertEqual(body["source"], MODULE + '\n// ---- imported: "' + imported + '" ----\n' + LIB)
        c.close()

    def test_a_missing_import_is_refused_at_start_up_located_at_the_use(self):
        with tempfile.TemporaryDirectory() as data:
            done = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", data, self.path],
                                  capture_output=True, timeout=60)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn((self.path + ":1:1: error: cannot read the imported file '" +
                       os.path.join(self.tmp.name, "lib", "rates.pure") + "': No such file or directory").encode(), done.stderr)


RATIO = "fn ratio(a: int, b: int) -> int {\n  return a / b\n}\n"
SHARES = ('use "lib/ratio.pure"\n\nlist shares by k: int { n: int }\n\n'
          "event split(n: int) {\n  shares[n] = { n: ratio(100, n) }\n}\n\n"
          "query share(n: int) -> int {\n  return ratio(10, n)\n}\n\n"
          "query own(n: int) -> int {\n  return 10 / n\n}\n")


class FailuresInImportedFilesTest(unittest.TestCase):
    """A failure at a line of an imported file is reported in that file and line, as pure-run
    reports it (lib/ratio.pure:2:12), in the HTTP reply of an event and of a query, and at start-up."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        os.mkdir(os.path.join(self.tmp.name, "lib"))
        self.lib = os.path.join(self.tmp.name, "lib", "ratio.pure")
        self.path = os.path.join(self.tmp.name, "shares.pure")
        with open(self.path, "w") as f:
            f.write(SHARES)

    def test_event_and_query_failures_name_the_imported_file(self):
        with open(self.lib, "w") as f:
            f.write(RATIO)
        s = Server(find_binary(), [self.path])
        self.addCleanup(s.cleanup)
        self.addCleanup(s.kill)
        c = Conn(s.port)
        self.assertEqual(c.json("POST", "/v1/shares/split", {"n": 4})[0], 200)
        self.assertEqual(c.json("POST", "/v1/shares/split", {"n": 0}),
                         (409, {"ok": False, "reason": "runtime error at " + self.lib + ":2:12: division by zero", "version": 1}))
        self.assertEqual(c.json("POST", "/v1/shares/share", {"n": 0}),
                         (409, {"reason": "runtime error at " + self.lib + ":2:12: division by zero"}))
        # the module's own lines: its own file and line
        self.assertEqual(c.json("POST", "/v1/shares/own", {"n": 0}),
                         (409, {"reason": "runtime error at " + self.path + ":14:13: division by zero"}))
        self.assertEqual(c.json("POST", "/v1/shares/share", {"n": 5}), (200, {"result": 2}))
        c.close()

    def test_after_a_hot_upgrade_failures_are_placed_by_the_version_that_ran_them(self):
        # version 2 has two more lines at the top: its own lines move, the imported file's do not
        with open(self.lib, "w") as f:
            f.write(RATIO)
        data = os.path.join(self.tmp.name, "data")
        s = Server(find_binary(), [self.path], data=data)
        self.addCleanup(s.cleanup)
        self.addCleanup(s.kill)
        c = Conn(s.port)
        self.assertEqual(c.json("POST", "/v1/shares/own", {"n": 0}),
                         (409, {"reason": "runtime error at " + self.path + ":14:13: division by zero"}))
        status, _, body = c.request("PUT", "/v1/shares/source", "// two lines\n// more\n" + SHARES)
        self.assertEqual(status, 200, body)
        self.assertEqual(c.json("POST", "/v1/shares/own", {"n": 0}),
                         (409, {"reason": "runtime error at " + self.path + ":16:13: division by zero"}))
        self.assertEqual(c.json("POST", "/v1/shares/split", {"n": 0}),
                         (409, {"ok": False, "reason": "runtime error at " + self.lib + ":2:12: division by zero", "version": 2}))
        self.assertEqual(c.json("POST", "/v1/shares/share", {"n": 0}),
                         (409, {"reason": "runtime error at " + self.lib + ":2:12: division by zero"}))
        c.close()

    def test_a_type_error_in_an_imported_file_is_refused_at_start_up_in_that_file(self):
        with open(self.lib, "w") as f:
            f.write(RATIO.replace("a / b", '"a"'))
        with tempfile.TemporaryDirectory() as data:
            done = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", data, self.path],
                                  capture_output=True, timeout=60)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn((self.lib + ":2:10: error: ").encode(), done.stderr)


if __name__ == "__main__":
    unittest.main()
