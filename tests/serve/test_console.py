"""tests/serve/test_console.py — the console's routes without a browser: GET / and /console/FILE
serve the built-in files byte for byte with their Content-Type, ETag and caching headers, a
matching If-None-Match gets 304, unknown console paths get 404; and what the console reads
from the API: GET /v1/MODULE/source, row counts and events_need_token in the interface, and the
prefix filter of list pages. Run by ctest with PURE_SERVE set to the binary."""
import json
import os
import shutil
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHOP = os.path.join(HERE, "shop.pure")
CONSOLE = os.path.join(ROOT, "serve", "console")
warnings.simplefilter("ignore", ResourceWarning)

FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/console/console.js": ("console.js", "text/javascript; charset=utf-8"),
    "/console/values.js": ("values.js", "text/javascript; charset=utf-8"),
    "/console/figures.js": ("figures.js", "text/javascript; charset=utf-8"),
    "/console/history.js": ("history.js", "text/javascript; charset=utf-8"),
    "/console/console.css": ("console.css", "text/css; charset=utf-8"),
}


class ConsoleRoutes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(find_binary(), [SHOP])

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0

    def conn(self):
        c = Conn(self.server.port)
        self.addCleanup(c.close)
        return c

    def test_files_with_their_types(self):
        c = self.conn()
        tags = set()
        for path, (name, content_type) in FILES.items():
            status, headers, body = c.request("GET", path)
            self.assertEqual(status, 200, path)
            self.assertEqual(headers["content-type"], content_type, path)
            with open(os.path.join(CONSOLE, name), "rb") as f:
                self.assertEqual(body, f.read(), f"{path} is not {name} as built")
            self.assertRegex(headers["etag"], r'^"[0-9a-f]{16}"$')
            self.assertEqual(headers["cache-control"], "no-cache")
            self.assertEqual(headers["x-content-type-options"], "nosniff")
            tags.add(headers["etag"])
        self.assertEqual(len(tags), len(FILES), "each file has its own ETag")
        # the page may load only from this server
        _, headers, body = c.request("GET", "/")
        self.assertIn("default-src 'none'", headers["content-security-policy"])
        self.assertIn("script-src 'self'", headers["content-security-policy"])
        self.assertIn(b'<script type="module" src="console/console.js">', body)
        # the modules console.js imports are its neighbours, by relative URL
        _, _, script = c.request("GET", "/console/console.js")
        self.assertIn(b"from './values.js'", script)
        self.assertIn(b"from './figures.js'", script)
        self.assertIn(b"from './history.js'", script)
        self.assertNotIn(b"http://", body.replace(b"http://www.w3.org", b""))
        self.assertNotIn(b"https://", body)

    def test_revalidation_gets_304(self):
        c = self.conn()
        _, headers, _ = c.request("GET", "/console/console.js")
        etag = headers["etag"]
        for header in (etag, "W/" + etag, f'"0000000000000000", {etag}', "*"):
            status, h, body = c.request("GET", "/console/console.js", headers={"If-None-Match": header})
            self.assertEqual((status, body), (304, b""), header)
            self.assertEqual(h["etag"], etag)
            self.assertNotIn("content-length", h)
        # the connection goes on after a 304
        status, _, body = c.request("GET", "/console/console.js", headers={"If-None-Match": '"0000000000000000"'})
        self.assertEqual(status, 200)
        self.assertGreater(len(body), 1000)
        # another file's tag does not match
        status, _, _ = c.request("GET", "/", headers={"If-None-Match": etag})
        self.assertEqual(status, 200)

    def test_unknown_console_paths(self):
        c = self.conn()
        for path in ("/console/x", "/console/", "/console/console.js/", "/console/../console/console.js", "/console/index.html",
                     "/console/console.js.map"):
            status, headers, body = c.request("GET", path)
            self.assertEqual(status, 404, path)
            self.assertEqual(headers["content-type"], "application/json")
            self.assertIn("no console file", json.loads(body)["error"])
        status, body = c.json("GET", "/index.html")
        self.assertEqual(status, 404)
        self.assertIn("the console at /", body["error"])
        status, headers, body = c.request("POST", "/", "{}")
        self.assertEqual((status, headers["allow"]), (405, "GET, HEAD"))
        status, _, body = c.request("GET", "/metrics")
        self.assertIn(b'pure_requests_total{route="console",status="200"}', body)
        self.assertIn(b'pure_requests_total{route="console",status="304"}', body)

    def test_source(self):
        c = self.conn()
        status, body = c.json("GET", "/v1/shop/source")
        with open(SHOP, encoding="utf-8") as f:
            self.assertEqual((status, body), (200, {"module": "shop", "source": f.read()}))
        status, headers, _ = c.request("POST", "/v1/shop/source", "{}")
        self.assertEqual((status, headers["allow"]), (405, "GET, HEAD, PUT"))
        status, body = c.json("GET", "/v1/nope/source")
        self.assertEqual(status, 404)

    def test_counts_in_the_interface(self):
        c = self.conn()
        counts = lambda: {l["name"]: l["count"] for l in c.json("GET", "/v1/shop")[1]["lists"]}  # noqa: E731
        before = counts()
        self.assertEqual(set(before), {"stock", "orders", "cells", "journal", "hits"})
        for name in ("c-one", "c-two", "c-one"):
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": name})[0], 200)
        self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": "c-sku", "qty": -1, "price": 1, "active": True})[0], 409)
        after = counts()
        self.assertEqual(after["hits"], before["hits"] + 2)
        self.assertEqual(after["stock"], before["stock"], "a failed event adds no row")
        self.assertEqual(c.json("GET", "/v1/shop")[1]["events_need_token"], False)

    def test_prefix_filter(self):
        c = self.conn()
        for sku in ("ap-apple", "ap-apricot", "ap-avocado", "b-banana", "ap", "aq"):
            self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": sku, "qty": 1, "price": 1.0, "active": True})[0], 200)
        for order in (5, 50, 51, 500, 6, 15, -5):
            self.assertEqual(c.json("POST", "/v1/shop/put_cell", {"row": order, "col": "x", "v": 1.0})[0], 200)

        def skus(query):
            status, body = c.json("GET", "/v1/shop/lists/stock?" + query)
            self.assertEqual(status, 200, body)
            return [r["sku"] for r in body["rows"]], body["next"]

        self.assertEqual(skus("prefix=ap-"), (["ap-apple", "ap-apricot", "ap-avocado"], None))
        self.assertEqual(skus("prefix=ap"), (["ap", "ap-apple", "ap-apricot", "ap-avocado"], None))
        # pages within the filter
        self.assertEqual(skus("prefix=ap-&limit=2"), (["ap-apple", "ap-apricot"], "ap-apricot"))
        self.assertEqual(skus("prefix=ap-&limit=2&after=ap-apricot"), (["ap-avocado"], None))
        self.assertEqual(skus("prefix=zz"), ([], None))
        self.assertEqual(skus("prefix=%62-"), (["b-banana"], None))  # percent-decoded
        all_rows = skus("limit=1000")[0]
        self.assertEqual(skus("prefix=&limit=1000")[0], all_rows)
        # an int key matches by its digits as written; composite keys by their first column
        status, body = c.json("GET", "/v1/shop/lists/cells?prefix=5&limit=1000")
        self.assertEqual([r["row"] for r in body["rows"]], [5, 50, 51, 500])
        status, body = c.json("GET", "/v1/shop/lists/cells?prefix=5&limit=2")
        self.assertEqual(([r["row"] for r in body["rows"]], body["next"]), ([5, 50], '[50,"x"]'))
        status, body = c.json("GET", "/v1/shop/lists/cells?prefix=5&limit=2&after=" + body["next"].replace('"', "%22"))
        self.assertEqual(([r["row"] for r in body["rows"]], body["next"]), ([51, 500], None))
        status, body = c.json("GET", "/v1/shop/lists/cells?prefix=-&limit=1000")
        self.assertEqual([r["row"] for r in body["rows"]], [-5])
        # a sequence has no key
        status, body = c.json("GET", "/v1/shop/lists/journal?prefix=a")
        self.assertEqual(status, 400)
        self.assertIn("no key to filter by", body["error"])
        status, body = c.json("GET", "/v1/shop/lists/stock?colour=red")
        self.assertIn("a list page takes limit, after, prefix, as_of and as_of_time", body["error"])


class ConsoleToken(unittest.TestCase):
    def test_interface_says_events_need_the_token(self):
        folder = tempfile.mkdtemp(prefix="pure-console-")
        self.addCleanup(shutil.rmtree, folder, True)
        with open(os.path.join(folder, "token"), "w") as f:
            f.write("t0ken\n")
        server = Server(find_binary(), [SHOP], "--token-file", os.path.join(folder, "token"))
        self.addCleanup(server.stop)
        c = Conn(server.port)
        self.addCleanup(c.close)
        self.assertEqual(c.json("GET", "/v1/shop")[1]["events_need_token"], True)
        # the console and the source need no token, like every read
        self.assertEqual(c.request("GET", "/")[0], 200)
        self.assertEqual(c.json("GET", "/v1/shop/source")[0], 200)


if __name__ == "__main__":
    find_binary()
    unittest.main()
