"""tests/serve/test_data_dir.py — pure-serve's data directories from the outside, with real
processes on 127.0.0.1: one process at a time per module directory (two servers on one --data,
pure-run --data on a served directory and the reverse, each refused naming the holder's pid),
module names that could leave --data refused, the manifest (a deleted newest segment or every
segment refused by pure-serve and pure-run, naming the file, and --accept-data-loss starting from
what is left, logged), and one module whose directory does not recover while its neighbours serve
(503 with the reason on its routes, /health, /metrics and its interface; exit 3 only when no module
recovered or with --require-all-modules). Run by ctest (serve.data_dir) with PURE_SERVE and
PURE_RUN set to the binaries."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHOP = os.path.join(HERE, "shop.pure")
LEDGER = os.path.join(HERE, "..", "..", "examples", "bank_ledger.pure")
warnings.simplefilter("ignore", ResourceWarning)

# A module whose main prints until its stdout pipe is full, then waits there: a pure-run --data
# that holds its directory for as long as the test wants.
HOLDER = """list hits by name: text { n: int = 0 }
event hit(name: text) { hits[name].n += 1 }
query total() -> int { return hits.sum(n) }
fn main() {
  let r = hit("pure-run")
  var i = 0
  while i < 100000000 {
    print("line {i}: the holder keeps its data directory locked while it prints")
    i += 1
  }
}
"""


def ask(port, method, path, obj=None):
    """One request on a connection of its own, closed after the answer: (status, JSON body)."""
    c = Conn(port)
    try:
        return c.json(method, path, obj)
    finally:
        c.close()


def pure_run():
    binary = os.environ.get("PURE_RUN")
    if not binary or not os.path.exists(binary):
        raise RuntimeError("set PURE_RUN to the pure-run binary")
    return binary


class DataDirTest(unittest.TestCase):
    def temp(self, prefix):
        d = tempfile.mkdtemp(prefix=prefix)
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def module(self, text, name):
        path = os.path.join(self.temp("pure-serve-mod-"), name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def fill(self, data, count, *extra):
        """count hit events on shop in data (segments of about 1 KB: a few dozen), then a clean stop."""
        server = Server(find_binary(), [SHOP], "--segment-mb", "0.001", *extra, data=data)
        try:
            c = Conn(server.port)
            for i in range(count):
                self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "n%d" % (i % 7)})[0], 200)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)

    def segments(self, data, module="shop"):
        return sorted(n for n in os.listdir(os.path.join(data, module)) if n.endswith(".seg"))

    def serve(self, data, *modules, extra=()):
        """pure-serve run to its end (it is expected to stop by itself): (exit code, stderr text)."""
        p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", data, *extra, *modules],
                           capture_output=True, timeout=60)
        return p.returncode, p.stderr.decode()


class OneProcessPerDirectory(DataDirTest):
    def test_a_second_server_on_one_data_directory_is_refused(self):
        data = self.temp("pure-serve-lock-")
        first = Server(find_binary(), [SHOP], data=data)
        try:
            c = Conn(first.port)
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "a"}), (200, {"ok": True, "version": 1, "seq": 1}))
            code, err = self.serve(data, SHOP)
            self.assertEqual(code, 4, err)
            self.assertIn(f"pure-serve: shop: {data}/shop: in use by pure-serve (pid {first.proc.pid}): "
                          "one process at a time per data directory", err)
            # the first one goes on, alone
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "a"}), (200, {"ok": True, "version": 1, "seq": 2}))
            c.close()
        finally:
            self.assertEqual(first.stop(), 0)
        self.assertEqual(os.listdir(os.path.join(data, "shop")).count("lock"), 0)  # released with the lock
        again = Server(find_binary(), [SHOP], data=data)
        try:
            self.assertEqual(ask(again.port, "POST", "/v1/shop/count", {"name": "a"}), (200, {"result": 2}))
        finally:
            self.assertEqual(again.stop(), 0)

    def test_pure_run_on_a_served_directory_is_refused(self):
        data = self.temp("pure-serve-lock-")
        holder = self.module(HOLDER, "holder.pure")
        server = Server(find_binary(), [holder], data=data)
        try:
            self.assertEqual(ask(server.port, "POST", "/v1/holder/hit", {"name": "serve"})[0], 200)
            p = subprocess.run([pure_run(), "--data", os.path.join(data, "holder"), holder], capture_output=True,
                               timeout=60)
            self.assertEqual(p.returncode, 4, p.stderr)
            self.assertEqual(p.stdout, b"")
            self.assertIn(f"pure-run: --data {data}/holder: {data}/holder: in use by pure-serve "
                          f"(pid {server.proc.pid}): one process at a time per data directory", p.stderr.decode())
        finally:
            self.assertEqual(server.stop(), 0)

    def test_a_server_on_a_directory_pure_run_holds_is_refused(self):
        data = self.temp("pure-serve-lock-")
        holder = self.module(HOLDER, "holder.pure")
        run = subprocess.Popen([pure_run(), "--data", os.path.join(data, "holder"), holder], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        try:
            self.assertTrue(run.stdout.readline().startswith(b"line 0:"))  # it runs: it holds the lock
            code, err = self.serve(data, holder)
            self.assertEqual(code, 4, err)
            self.assertIn(f"pure-serve: holder: {data}/holder: in use by pure-run (pid {run.pid}): "
                          "one process at a time per data directory", err)
        finally:
            run.kill()
            run.communicate()
        # once pure-run is gone (killed: its flock went with it), the server takes the directory
        server = Server(find_binary(), [holder], data=data)
        try:
            self.assertEqual(ask(server.port, "POST", "/v1/holder/total", {}), (200, {"result": 1}))
        finally:
            self.assertEqual(server.stop(), 0)


class ModuleNames(DataDirTest):
    def test_names_that_are_not_plain_identifiers_are_refused(self):
        # "..pure" and "...pure" became the modules "." and ".."; the second wrote its log outside --data
        parent = self.temp("pure-serve-names-")
        data = os.path.join(parent, "data")
        for name in ["..pure", "...pure", "a.b.pure", "a-b.pure", "a b.pure", "9lives.pure", "x" * 65 + ".pure"]:
            with self.subTest(name=name):
                path = self.module(open(SHOP).read(), name)
                code, err = self.serve(data, path)
                self.assertEqual(code, 2, err)
                self.assertIn(f"pure-serve: '{path}': module name '{name[:-5]}' is not a plain identifier: a "
                              "module's name (its file name without .pure) must be ASCII letters, digits and '_', "
                              "not starting with a digit, at most 64 bytes", err)
                self.assertEqual(sorted(os.listdir(parent)), ["data"] if os.path.exists(data) else [])
                if os.path.exists(data):
                    self.assertEqual(os.listdir(data), [])
        # a plain identifier is served, in its own directory inside --data
        path = self.module(open(SHOP).read(), "shop_2.pure")
        server = Server(find_binary(), [path], data=data)
        try:
            self.assertEqual(ask(server.port, "POST", "/v1/shop_2/hit", {"name": "a"})[0], 200)
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertEqual(os.listdir(data), ["shop_2"])


class Manifest(DataDirTest):
    def test_a_deleted_newest_segment_is_refused_then_accepted_on_purpose(self):
        data = self.temp("pure-serve-manifest-")
        self.fill(data, 120)
        segments = self.segments(data)
        self.assertGreater(len(segments), 3)
        newest = segments[-1]
        os.unlink(os.path.join(data, "shop", newest))
        # Before the manifest, this started a healthy-looking server on older state.
        code, err = self.serve(data, SHOP)
        self.assertEqual(code, 3, err)  # the only module: nothing to serve
        self.assertIn(f"pure-serve: shop: {data}/shop: {newest} is missing (the manifest records it; events through "
                      "sequence ", err)
        self.assertIn("(restore the missing files, or start with --accept-data-loss shop to serve what is left)", err)
        self.assertIn('"event":"recovery_failed"', err)
        # pure-run refuses the same directory the same way
        p = subprocess.run([pure_run(), "--data", os.path.join(data, "shop"), SHOP], capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn(f"{newest} is missing (the manifest records it", p.stderr.decode())
        self.assertIn("run with --accept-data-loss to continue from what is left", p.stderr.decode())
        # on purpose: served from what is left, the loss logged
        first_lost = int(newest[4:-4])
        server = Server(find_binary(), [SHOP], "--accept-data-loss", "shop", data=data)
        try:
            c = Conn(server.port)
            self.assertEqual(c.json("POST", "/v1/shop/total_hits", {}), (200, {"result": first_lost - 1}))
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "after"}), (200, {"ok": True, "version": 1, "seq": first_lost}))
            self.assertEqual(c.json("GET", "/health")[0], 200)
            c.close()
            self.assertTrue(wait_until(lambda: server.log("data_loss_accepted")))
            loss = server.log("data_loss_accepted")[0]
            self.assertEqual(loss["module"], "shop")
            self.assertIn(f"{newest} is missing", loss["loss"])
        finally:
            self.assertEqual(server.stop(), 0)
        # the manifest now describes what is there: the next start needs no flag
        server = Server(find_binary(), [SHOP], data=data)
        try:
            self.assertEqual(ask(server.port, "POST", "/v1/shop/total_hits", {}), (200, {"result": first_lost}))
        finally:
            self.assertEqual(server.stop(), 0)

    def test_accept_data_loss_names_a_served_module(self):
        code, err = self.serve(self.temp("pure-serve-manifest-"), SHOP, extra=["--accept-data-loss", "shops"])
        self.assertEqual(code, 2, err)
        self.assertIn("pure-serve: --accept-data-loss shops: no module of that name is served", err)

    def test_every_segment_deleted_is_refused(self):
        data = self.temp("pure-serve-manifest-")
        self.fill(data, 60)
        for name in self.segments(data):
            os.unlink(os.path.join(data, "shop", name))
        code, err = self.serve(data, SHOP)
        self.assertEqual(code, 3, err)
        self.assertIn(" is missing (the manifest records it; events through sequence ", err)

    def test_pure_run_accepts_data_loss_on_purpose(self):
        data = self.temp("pure-run-manifest-")
        self.fill(data, 120)
        newest = self.segments(data)[-1]
        os.unlink(os.path.join(data, "shop", newest))
        p = subprocess.run([pure_run(), "--accept-data-loss", "--data", os.path.join(data, "shop"), SHOP],
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"warning: data loss accepted (--accept-data-loss): {data}/shop: {newest} is missing",
                      p.stderr.decode())

    def test_a_directory_from_before_manifests_is_served(self):
        data = self.temp("pure-serve-manifest-")
        self.fill(data, 30)
        os.unlink(os.path.join(data, "shop", "manifest"))
        server = Server(find_binary(), [SHOP], data=data)
        try:
            self.assertEqual(ask(server.port, "POST", "/v1/shop/total_hits", {}), (200, {"result": 30}))
            self.assertTrue(wait_until(lambda: server.log("manifest_missing")))
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertIn("manifest", os.listdir(os.path.join(data, "shop")))


class OneBadModule(DataDirTest):
    def damaged(self):
        """A data directory whose shop does not recover (its newest segment deleted) beside a fresh ledger."""
        data = self.temp("pure-serve-bad-")
        self.fill(data, 60)
        os.unlink(os.path.join(data, "shop", self.segments(data)[-1]))
        return data

    def test_the_others_are_served_and_the_bad_one_answers_503_with_the_reason(self):
        data = self.damaged()
        server = Server(find_binary(), [SHOP, LEDGER], data=data)
        try:
            c = Conn(server.port)
            self.assertTrue(wait_until(lambda: c.json("GET", "/v1/bank_ledger")[1]["state"] == "serving"))
            self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": 1, "owner": "ann", "deposit": 10.0}),
                             (200, {"ok": True, "version": 1, "seq": 1}))
            self.assertEqual(c.json("POST", "/v1/bank_ledger/total", {}), (200, {"result": 10.0}))
            for method, path, body in [("POST", "/v1/shop/hit", {"name": "x"}), ("POST", "/v1/shop/total_hits", {}),
                                       ("GET", "/v1/shop/lists/hits", None)]:
                status, answer = c.json(method, path, body)
                self.assertEqual(status, 503, answer)
                self.assertIn("module shop did not recover: " + data + "/shop: log-", answer["error"])
                self.assertIn("is missing (the manifest records it", answer["error"])
            status, health = c.json("GET", "/health")
            self.assertEqual(status, 503)
            self.assertFalse(health["ok"])
            self.assertEqual(health["modules"]["bank_ledger"], "serving")
            self.assertTrue(health["modules"]["shop"].startswith("recovery failed: " + data + "/shop: log-"))
            status, shop = c.json("GET", "/v1/shop")  # the console's data: the interface says why
            self.assertEqual(status, 200)
            self.assertEqual(shop["state"], "failed")
            self.assertIn("is missing (the manifest records it", shop["reason"])
            self.assertEqual(c.json("GET", "/v1/bank_ledger")[1]["state"], "serving")
            self.assertNotIn("reason", c.json("GET", "/v1/bank_ledger")[1])
            metrics = c.request("GET", "/metrics")[2].decode()
            self.assertIn('pure_module_healthy{module="shop"} 0', metrics)
            self.assertIn('pure_module_healthy{module="bank_ledger"} 1', metrics)
            self.assertIn('pure_module_unhealthy{module="shop",state="failed",reason="' + data + "/shop: log-", metrics)
            self.assertNotIn('pure_module_unhealthy{module="bank_ledger"', metrics)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)  # a clean stop: exit 0, the bad module was logged

    def test_require_all_modules_stops_at_the_bad_one(self):
        data = self.damaged()
        code, err = self.serve(data, LEDGER, SHOP, extra=["--require-all-modules"])
        self.assertEqual(code, 3, err)
        self.assertIn('"event":"recovery_failed"', err)
        self.assertIn('"event":"shutdown","exit":3', err)


if __name__ == "__main__":
    unittest.main()
