"""tests/serve/test_serve.py — pure-serve's HTTP API as a real process on 127.0.0.1: every route
and status code, the fast argument path, bad input of every kind (after each the server answers the
next good request), slow and vanishing clients, the token, a full queue, and the curl sessions of
docs/serve.md and README.md. Run by ctest with PURE_SERVE set to the binary. Load, durability,
shutdown and start-up are test_lifecycle.py; the SIGKILL crash test is test_kill.py."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, build, find_binary, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHOP = os.path.join(HERE, "shop.pure")
TIMEOUT_MS = 1000
warnings.simplefilter("ignore", ResourceWarning)  # sockets the tests drop on purpose


class ServeTest(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        cls.binary = find_binary()
        cls.server = Server(cls.binary, [SHOP], "--request-timeout-ms", str(TIMEOUT_MS), "--max-steps", "2000000")

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            code = cls.server.stop()
            assert code == 0, f"pure-serve exited {code}"

    def conn(self):
        c = Conn(self.server.port)
        self.addCleanup(c.close)
        return c

    def call(self, name, obj=None, method="POST"):
        return self.conn().json(method, f"/v1/shop/{name}", obj if obj is not None else {})

    def assert_alive(self):
        """The server answers a good request on a fresh connection."""
        status, body = self.conn().json("POST", "/v1/shop/echo", {"t": "still here"})
        self.assertEqual((status, body), (200, {"result": "still here"}))

    def assert_error(self, status, body, code, *words):
        self.assertEqual(status, code, body)
        self.assertIsInstance(body, dict)
        self.assertIn("error", body)
        for w in words:
            self.assertIn(w, body["error"])


class Routes(ServeTest):
    def test_events_commit_fail_and_roll_back(self):
        c = self.conn()
        s1, b1 = c.json("POST", "/v1/shop/add", {"sku": "apple", "qty": 10, "price": 0.5, "active": True})
        self.assertEqual(s1, 200)
        self.assertEqual(b1["ok"], True)
        s2, b2 = c.json("POST", "/v1/shop/add", {"sku": "pear", "qty": 3, "price": 1.25, "active": False})
        self.assertEqual((s2, b2["ok"]), (200, True))
        self.assertGreater(b2["seq"], b1["seq"])
        self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": "x", "qty": -1, "price": 1, "active": True}),
                         (409, {"ok": False, "reason": "qty must not be negative: -1", "version": 1}))
        self.assertEqual(c.json("POST", "/v1/shop/order", {"id": 1, "sku": "apple", "qty": 99}),
                         (409, {"ok": False, "reason": "only 10 of apple left", "version": 1}))
        # a runtime error in an event: 409, everything it did is undone
        status, body = c.json("POST", "/v1/shop/boom", {"id": 12345})
        self.assertEqual(status, 409)
        self.assertFalse(body["ok"])
        self.assertTrue(body["reason"].startswith("runtime error at"), body)
        status, body = c.json("POST", "/v1/shop/qty", {"sku": "boom"})
        self.assertEqual(status, 409)
        self.assertIn("boom", body["reason"])
        self.assertEqual(c.json("POST", "/v1/shop/qty", {"sku": "apple"}), (200, {"result": 10}))

    def test_seq_arguments_and_event_results(self):
        c = self.conn()
        c.json("POST", "/v1/shop/add", {"sku": "s1", "qty": 5, "price": 1.5, "active": True})
        c.json("POST", "/v1/shop/add", {"sku": "s2", "qty": 1, "price": 0.25, "active": True})
        picks = [{"sku": "s1", "qty": 2}, {"sku": "s2", "qty": 1}]
        status, body = c.json("POST", "/v1/shop/order_lines", {"id": 501, "picks": picks, "notes": ["gift"]})
        self.assertEqual(status, 200, body)
        self.assertEqual(set(body), {"ok", "seq", "version", "result"})
        self.assertEqual(body["ok"], True)
        self.assertEqual(body["result"], {"id": 501, "total": 3.25, "first": "s1", "noted": True})
        # a failed event: 409 without a result, and nothing of it stays
        self.assertEqual(c.json("POST", "/v1/shop/order_lines", {"id": 502, "picks": picks, "notes": []}),
                         (409, {"ok": False, "reason": "only 0 of s2 left", "version": 1}))
        self.assertEqual(c.json("POST", "/v1/shop/qty", {"sku": "s1"}), (200, {"result": 3}))
        self.assertEqual(c.json("POST", "/v1/shop/order_lines", {"id": 503, "picks": [], "notes": []}),
                         (409, {"ok": False, "reason": "an order needs a line", "version": 1}))
        # an item may also come as an array of its fields in declaration order (a compact row)
        status, body = c.json("POST", "/v1/shop/order_lines", {"id": 504, "picks": [["s1", 1]], "notes": []})
        self.assertEqual((status, body["result"]), (200, {"id": 504, "total": 1.5, "first": "s1", "noted": False}))
        status, body = c.json("POST", "/v1/shop/missing", {"skus": ["s1", "nope", "é"]})
        self.assertEqual((status, body["result"]), (200, ["nope", "é"]))
        status, body = c.json("POST", "/v1/shop/reversed", {"picks": picks})
        self.assertEqual((status, body["result"]), (200, picks[::-1]))
        status, body = c.json("POST", "/v1/shop/reversed", {"picks": []})
        self.assertEqual((status, body["result"]), (200, []))
        self.assertEqual(c.json("POST", "/v1/shop/flag", {"on": [True]})[1]["result"], True)
        self.assertEqual(c.json("POST", "/v1/shop/flag", {"on": []})[1]["result"], False)
        self.assertEqual(c.json("POST", "/v1/shop/sum_all", {"xs": [1, 2.5, -0.5]}), (200, {"result": 3.0}))
        # an event without a result answers as before
        status, body = c.json("POST", "/v1/shop/hit", {"name": "seqtest"})
        self.assertEqual((status, set(body)), (200, {"ok", "seq", "version"}))
        # type mismatches inside arrays: 400, naming the element and the field
        bad = [
            ("order_lines", {"id": 1, "picks": 5, "notes": []}, "parameter 'picks': expected seq Pick (an array of objects or of rows), got the integer 5"),
            ("order_lines", {"id": 1, "picks": {"sku": "s1"}, "notes": []}, "parameter 'picks': expected seq Pick", "got an object"),
            ("order_lines", {"id": 1, "picks": [1], "notes": []},
             "parameter 'picks[0]': expected Pick (an object with every field, or an array of the fields in order), got the integer 1"),
            ("order_lines", {"id": 1, "picks": [["s1", 1, 2]], "notes": []}, "parameter 'picks[0]': Pick has 2 fields, got an array of 3"),
            ("order_lines", {"id": 1, "picks": [[1, "s1"]], "notes": []}, "parameter 'picks[0].sku': expected text (a JSON string), got the integer 1"),
            ("order_lines", {"id": 1, "picks": [{"sku": "s1", "qty": 1}, {"sku": "s1", "qty": "2"}], "notes": []},
             "parameter 'picks[1].qty': expected int (a JSON integer), got a string"),
            ("order_lines", {"id": 1, "picks": [{"sku": "s1"}], "notes": []}, "parameter 'picks[0]': missing field 'qty' (int)"),
            ("order_lines", {"id": 1, "picks": [{"sku": "s1", "qty": 1, "x": 0}], "notes": []}, "parameter 'picks[0]': Pick has no field 'x'"),
            ("order_lines", {"id": 1, "picks": [], "notes": [None]}, "parameter 'notes[0]': expected text (a JSON string), got null"),
            ("order_lines", {"id": 1, "picks": []}, "missing parameter 'notes'"),
            ("missing", {"skus": "s1"}, "parameter 'skus': expected seq text (a JSON array), got a string"),
            ("missing", {"skus": [["s1"]]}, "parameter 'skus[0]': expected text (a JSON string), got an array"),
            ("sum_all", {"xs": [1, "2"]}, "parameter 'xs[1]': expected num (a JSON number), got a string"),
            ("flag", {"on": [1]}, "parameter 'on[0]': expected bool (true or false), got the integer 1"),
        ]
        for name, obj, *words in bad:
            self.assert_error(*c.json("POST", f"/v1/shop/{name}", obj), 400, *words)
        self.assertEqual(c.json("POST", "/v1/shop/qty", {"sku": "s1"}), (200, {"result": 2}))
        self.assert_alive()

    def test_query_results_in_json(self):
        c = self.conn()
        c.json("POST", "/v1/shop/add", {"sku": "q1", "qty": 1, "price": 0.1, "active": True})
        c.json("POST", "/v1/shop/add", {"sku": "q2", "qty": 2, "price": 123456789012345680000.0, "active": False})
        self.assertEqual(c.json("POST", "/v1/shop/price", {"sku": "q1"}), (200, {"result": 0.1}))
        # nums in Pure's shortest round-trip style, not Boost.JSON's 1.2345E2
        status, _, raw = c.request("POST", "/v1/shop/price", json.dumps({"sku": "q2"}))
        self.assertEqual(raw, b'{"result":123456789012345680000.0}')
        status, _, raw = c.request("POST", "/v1/shop/ratio", json.dumps({"a": 1, "b": 3}))
        self.assertEqual(raw, b'{"result":0.3333333333333333}')
        status, _, raw = c.request("POST", "/v1/shop/ratio", json.dumps({"a": 1e300, "b": 1e-300}))
        self.assertEqual(raw, b'{"result":"inf"}')
        self.assertEqual(c.json("POST", "/v1/shop/ratio", {"a": 0, "b": 0}), (200, {"result": "nan"}))
        self.assertEqual(c.json("POST", "/v1/shop/ratio", {"a": "-inf", "b": 1}), (200, {"result": "-inf"}))
        self.assertEqual(c.json("POST", "/v1/shop/active", {"sku": "q2"}), (200, {"result": False}))
        # ints are exact beyond 2^53
        status, _, raw = c.request("POST", "/v1/shop/big", json.dumps({"n": 2**62 - 1}))
        self.assertEqual(raw, b'{"result":9223372036854775806}')
        self.assertEqual(c.json("POST", "/v1/shop/mid", {"l": {"x1": 0, "y1": 0, "x2": 1, "y2": 3.0,
                                                              "label": "a"}}),
                         (200, {"result": {"x": 0.5, "y": 1.5}}))
        status, body = c.json("POST", "/v1/shop/lines", {})
        self.assertEqual(status, 200)
        self.assertIn("add q1", body["result"])
        status, body = c.json("POST", "/v1/shop/cheap", {"max": 1.0})
        self.assertEqual(status, 200)
        skus = [r["sku"] for r in body["result"]]
        self.assertEqual(skus, sorted(skus))
        self.assertIn({"sku": "q1", "price": 0.1}, body["result"])
        self.assertEqual(c.json("POST", "/v1/shop/echo", {"t": "snow \u2603 \"q\" \\ \n"}),
                         (200, {"result": "snow \u2603 \"q\" \\ \n"}))
        self.assertEqual(c.json("POST", "/v1/shop/draw", {"l": {"x1": 1, "y1": 2, "x2": 3, "y2": 4,
                                                               "label": "L"}})[0], 200)
        # an empty body is {} for a query without parameters
        status, _, raw = c.request("POST", "/v1/shop/total_hits")
        self.assertEqual(status, 200)

    def test_query_errors(self):
        status, body = self.call("qty", {"sku": "nothing-here"})
        self.assertEqual(status, 409)
        self.assertTrue(body["reason"].startswith("runtime error at 38:"), body)
        self.assertIn("nothing-here", body["reason"])
        status, body = self.call("loop_forever")
        self.assertEqual(status, 409)
        self.assertIn("step budget", body["reason"])

    def test_runaway_event_stopped_while_queries_go_on(self):
        c = self.conn()
        status, body = c.json("POST", "/v1/shop/spin", {})
        self.assertEqual(status, 409)
        self.assertIn("step budget spent", body["reason"])
        self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "after-spin"})[0], 200)

    def test_the_modules_served(self):
        c = self.conn()
        for path in ["/v1", "/v1/"]:
            status, body = c.json("GET", path)
            self.assertEqual(status, 200, body)
            self.assertEqual(body, {"modules": [{"name": "shop", "state": "serving", "version": 1,
                                                 "interface": "/v1/shop"}]})
        self.assert_error(*c.json("POST", "/v1", {}), 405, "GET")

    def test_interface(self):
        status, body = self.conn().json("GET", "/v1/shop")
        self.assertEqual(status, 200)
        self.assertEqual(body["module"], "shop")
        events = {e["name"]: e for e in body["events"]}
        queries = {q["name"]: q for q in body["queries"]}
        self.assertEqual([p["name"] for p in events["add"]["params"]], ["sku", "qty", "price", "active"])
        self.assertEqual([p["type"] for p in events["add"]["params"]], ["text", "int", "num", "bool"])
        self.assertEqual(events["draw"]["params"][0]["type"], "Line")
        self.assertEqual([f["name"] for f in events["draw"]["params"][0]["fields"]], ["x1", "y1", "x2", "y2", "label"])
        self.assertEqual(queries["price"]["result"]["type"], "num")
        self.assertNotIn("result", events["add"])  # an event declares a result or has none
        self.assertEqual(events["order_lines"]["result"]["type"], "Placed")
        self.assertEqual([f["name"] for f in events["order_lines"]["result"]["fields"]], ["id", "total", "first", "noted"])
        self.assertEqual(events["order_lines"]["params"][1]["type"], "seq Pick")
        self.assertEqual([f["name"] for f in events["order_lines"]["params"][1]["fields"]], ["sku", "qty"])
        self.assertEqual(events["missing"]["params"][0]["type"], "seq text")
        self.assertEqual(events["missing"]["result"]["type"], "seq text")
        self.assertEqual(queries["cheap"]["result"]["key_count"], 1)
        self.assertNotIn("main", events)
        self.assertNotIn("main", queries)
        lists = {l["name"]: l for l in body["lists"]}
        self.assertEqual(lists["stock"]["kind"], "keyed")
        self.assertEqual(lists["stock"]["key"], [{"name": "sku", "type": "text"}])
        self.assertEqual([f["name"] for f in lists["stock"]["fields"]], ["qty", "price", "active"])
        self.assertEqual(len(lists["cells"]["key"]), 2)
        self.assertEqual(lists["journal"]["kind"], "seq")

    def test_list_pages(self):
        c = self.conn()
        for i in range(25):
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": f"page{i:02d}"})[0], 200)
        for i in range(5):
            self.assertEqual(c.json("POST", "/v1/shop/put_cell", {"row": i % 2, "col": f"c{i}", "v": i / 2})[0], 200)
        # walk the text-keyed list in pages of 7
        seen, after = [], None
        while True:
            q = "limit=7" + (f"&after={after}" if after is not None else "")
            status, body = c.json("GET", "/v1/shop/lists/hits?" + q)
            self.assertEqual(status, 200, body)
            self.assertLessEqual(len(body["rows"]), 7)
            seen += [r["name"] for r in body["rows"] if r["name"].startswith("page")]
            after = body["next"]
            if after is None:
                break
        self.assertEqual(seen, [f"page{i:02d}" for i in range(25)])
        status, body = c.json("GET", "/v1/shop/lists/cells?limit=2")
        self.assertEqual(status, 200)
        self.assertEqual(len(body["rows"]), 2)
        self.assertEqual(set(body["rows"][0]), {"row", "col", "v"})
        status, body2 = c.json("GET", "/v1/shop/lists/cells?limit=10&after=" + body["next"].replace('"', "%22"))
        self.assertEqual(status, 200, body2)
        keys = [(r["row"], r["col"]) for r in body["rows"] + body2["rows"]]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(len(keys), body["count"])
        status, body = c.json("GET", "/v1/shop/lists/journal?limit=1")
        self.assertEqual(status, 200)
        status, body3 = c.json("GET", "/v1/shop/lists/journal?limit=1&after=" + body["next"])
        self.assertEqual(status, 200)
        self.assertNotEqual(body["rows"], body3["rows"])
        # int keys: after is the last id seen
        for i in (5, 1, 9):
            c.json("POST", "/v1/shop/add", {"sku": f"o{i}", "qty": 5, "price": 1, "active": True})
            self.assertEqual(c.json("POST", "/v1/shop/order", {"id": 1000 + i, "sku": f"o{i}", "qty": 1})[0], 200)
        status, body = c.json("GET", "/v1/shop/lists/orders?after=1001")
        self.assertEqual([r["id"] for r in body["rows"] if r["id"] >= 1000], [1005, 1009])
        # bad pages
        self.assert_error(*c.json("GET", "/v1/shop/lists/hits?limit=0"), 400, "limit")
        self.assert_error(*c.json("GET", "/v1/shop/lists/hits?limit=abc"), 400, "limit")
        self.assert_error(*c.json("GET", "/v1/shop/lists/hits?color=red"), 400, "color")
        self.assert_error(*c.json("GET", "/v1/shop/lists/orders?after=x"), 400, "after", "int")
        self.assert_error(*c.json("GET", "/v1/shop/lists/cells?after=3"), 400, "after", "JSON array")
        self.assert_error(*c.json("GET", "/v1/shop/lists/nope"), 404, "nope")

    def test_health_and_metrics(self):
        c = self.conn()
        self.assertEqual(c.json("GET", "/health"), (200, {"ok": True, "modules": {"shop": "serving"}}))
        c.json("POST", "/v1/shop/hit", {"name": "m"})
        status, headers, body = c.request("GET", "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/plain"))
        text = body.decode()
        self.assertIn('pure_requests_total{route="event",status="200"}', text)
        self.assertIn('pure_event_seconds_bucket{le="+Inf"}', text)
        self.assertIn("pure_query_seconds_count", text)
        self.assertIn('pure_events_total{module="shop",outcome="committed"}', text)
        self.assertIn('pure_state_bytes{module="shop"}', text)
        self.assertIn("pure_resident_bytes", text)
        for line in text.splitlines():  # Prometheus text: comments or "name{labels} value"
            if not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                float(value)

    def test_not_found(self):
        c = self.conn()
        self.assert_error(*c.json("POST", "/v1/nomodule/hit", {}), 404, "nomodule", "shop")
        self.assert_error(*c.json("POST", "/v1/shop/nothing", {}), 404, "nothing")
        self.assert_error(*c.json("POST", "/v1/shop/main", {}), 404, "main")
        self.assert_error(*c.json("GET", "/nope"), 404, "/nope")
        self.assert_error(*c.json("GET", "/v1/shop/a/b/c"), 404)

    def test_method_not_allowed(self):
        c = self.conn()
        status, headers, body = c.request("GET", "/v1/shop/hit")
        self.assertEqual(status, 405)
        self.assertEqual(headers["allow"], "POST")
        self.assertIn("POST", json.loads(body)["error"])
        self.assert_error(*c.json("POST", "/v1/shop", {}), 405, "GET")
        self.assert_error(*c.json("DELETE", "/v1/shop/lists/hits"), 405)
        self.assert_error(*c.json("PUT", "/health", {}), 405)
        self.assert_error(*c.json("POST", "/metrics", {}), 405)

    def test_bad_arguments(self):
        c = self.conn()
        cases = [
            ({"sku": "a", "qty": 1.5, "price": 1, "active": True}, "parameter 'qty': expected int"),
            ({"sku": "a", "qty": "1", "price": 1, "active": True}, "parameter 'qty': expected int"),
            ({"sku": "a", "qty": 2**63, "price": 1, "active": True},
             "parameter 'qty': expected int in -9223372036854775808..9223372036854775807, got 9223372036854775808"),
            ({"sku": "a", "qty": 1, "price": "x", "active": True}, "parameter 'price': expected num"),
            ({"sku": "a", "qty": 1, "price": 1, "active": 1}, "parameter 'active': expected bool"),
            ({"sku": 7, "qty": 1, "price": 1, "active": True}, "parameter 'sku': expected text"),
            ({"sku": None, "qty": 1, "price": 1, "active": True}, "got null"),
            ({"qty": 1, "price": 1, "active": True}, "missing parameter 'sku'"),
            ({"sku": "a", "qty": 1, "price": 1, "active": True, "extra": 1}, "unknown parameter 'extra'"),
        ]
        for obj, words in cases:
            self.assert_error(*c.json("POST", "/v1/shop/add", obj), 400, words)
        line = {"x1": 1, "y1": 2, "x2": 3, "y2": 4, "label": "L"}
        self.assert_error(*c.json("POST", "/v1/shop/draw", {"l": {**line, "label": 5}}), 400, "l.label", "text")
        self.assert_error(*c.json("POST", "/v1/shop/draw", {"l": {"x1": 1, "y1": 2, "label": "L"}}), 400,
                          "missing field 'x2'")
        self.assert_error(*c.json("POST", "/v1/shop/draw", {"l": {**line, "z": 1}}), 400, "no field 'z'")
        self.assert_error(*c.json("POST", "/v1/shop/draw", {"l": {**line, "x1": {"x": 1}}}), 400, "l.x1", "num")
        self.assert_error(*c.json("POST", "/v1/shop/draw", {"l": [1, 2]}), 400, "Line has 5 fields, got an array of 2")
        self.assert_error(*c.json("POST", "/v1/shop/draw", {"l": "x"}), 400, "expected Line")
        self.assertEqual(c.json("POST", "/v1/shop/draw", {"l": [1, 2, 3, 4, "by position"]})[0], 200)
        self.assert_error(*c.json("POST", "/v1/shop/add", [1, 2]), 400, "JSON object", "add(sku: text")
        self.assert_error(*c.json("POST", "/v1/shop/add", '{"sku": "a",'), 400, "bad JSON at byte")
        self.assert_error(*c.json("POST", "/v1/shop/add", '{"sku": tru}'), 400, "bad JSON")
        self.assert_error(*c.json("POST", "/v1/shop/add", '{} {}'), 400, "bad JSON")
        self.assert_error(*c.json("POST", "/v1/shop/echo", "[" * 10000 + "]" * 10000), 400, "bad JSON")
        self.assert_error(*c.json("POST", "/v1/shop/echo", '{"t": ' + "[" * 10000 + "]" * 10000 + "}"), 400, "bad JSON")
        self.assert_error(*c.json("POST", "/v1/shop/echo", b'{"t": "\xff\xfe bad"}'), 400, "bad JSON")
        self.assert_error(*c.json("POST", "/v1/shop/echo", b'{"t": "\xed\xa0\x80"}'), 400, "bad JSON")
        self.assert_alive()


class FastArguments(ServeTest):
    """pure-serve reads common bodies (ints, ASCII texts, arrays, items as rows) straight into
    values and leaves everything else to the JSON document path: the edges between the two must
    answer exactly as the document path does (checked builds also compare the two on every
    body the fast path takes)."""

    def test_edges_of_the_fast_path(self):
        c = self.conn()
        cases = [  # (query or event, body, status, result or error words)
            ("big", '{"n": 21}', 200, 42),
            ("big", '{ "n" :\t-21 }\r\n', 200, -42),
            ("big", '{"n": 123456789012345678}', 200, 246913578024691356),  # 18 digits: fast
            ("big", '{"n": 1234567890123456789}', 200, 2469135780246913578),  # 19 digits: document
            ("big", '{"n": -0}', 200, 0),
            ("big", '{"n": 0}', 200, 0),
            ("big", '{"n": 01}', 400, "bad JSON"),
            ("big", '{"n": -}', 400, "bad JSON"),
            ("big", '{"n": 1.0}', 400, "expected int (a JSON integer), got the number 1.0"),
            ("big", '{"n": 1e2}', 400, "expected int"),
            ("big", '{"n": 9223372036854775808}', 400, "expected int in -9223372036854775808..9223372036854775807"),
            ("big", '{"n": 5, "n": 6}', 200, 12),  # duplicate keys: the last one wins
            ("big", '{"n": 5}x', 400, "bad JSON"),
            ("big", '{"n": 5', 400, "bad JSON"),
            ("big", '{"n": 5,}', 400, "bad JSON"),
            ("big", '{"n": 5, "m": 1}', 400, "unknown parameter 'm'"),
            ("big", '{}', 400, "missing parameter 'n'"),
            ("big", '{"n": true}', 400, "expected int"),
            ("big", '{"\\u006e": 4}', 200, 8),  # an escaped key
            ("echo", '{"t": "plain text"}', 200, "plain text"),
            ("echo", '{"t": ""}', 200, ""),
            ("echo", '{"t": "a\\u0041\\n"}', 200, "aA\n"),
            ("echo", '{"t": "caf\u00e9"}', 200, "caf\u00e9"),
            ("echo", '{"t": "tab\there"}', 400, "bad JSON"),  # a raw control character
            ("echo", '{"t": 5}', 400, "expected text"),
            ("echo", '{"t": "x"} {}', 400, "bad JSON"),
            ("ratio", '{"a": 3, "b": 2}', 200, 1.5),  # ints for nums
            ("ratio", '{"a": 3.0, "b": 2}', 200, 1.5),
            ("ratio", '{"a": "inf", "b": 2}', 200, "inf"),
            ("flag", '{"on": [true, false]}', 200, True),
            ("flag", '{"on": [false]}', 200, False),
            ("flag", '{"on": []}', 200, False),
            ("flag", '{"on": [tru]}', 400, "bad JSON"),
            ("flag", '{"on": [1]}', 400, "parameter 'on[0]': expected bool"),
            ("sum_all", '{"xs": [1, 2, -3]}', 200, 0.0),
            ("sum_all", '{"xs": [1, 2.5]}', 200, 3.5),
            ("sum_all", '{"xs": [1, 2,]}', 400, "bad JSON"),
            ("reversed", '{"picks": [["a", 1], ["b", 2]]}', 200, [{"sku": "b", "qty": 2}, {"sku": "a", "qty": 1}]),
            ("reversed", '{"picks": [["a", 1], {"sku": "b", "qty": 2}]}', 200,
             [{"sku": "b", "qty": 2}, {"sku": "a", "qty": 1}]),
            ("reversed", '{"picks": [["a"]]}', 400, "Pick has 2 fields, got an array of 1"),
            ("reversed", '{"picks": [["a", 1, 2]]}', 400, "Pick has 2 fields, got an array of 3"),
            ("reversed", '{"picks": [["a", "1"]]}', 400, "parameter 'picks[0].qty': expected int"),
            ("reversed", '{"picks": [[ "a" , 1 ] , [ "b",2 ] ]}', 200, [{"sku": "b", "qty": 2}, {"sku": "a", "qty": 1}]),
            ("mid", '{"l": [0, 0, 4, 2, "x"]}', 200, {"x": 2.0, "y": 1.0}),
            ("mid", '{"l": [0, 0, 4, 2]}', 400, "Line has 5 fields, got an array of 4"),
        ]
        for name, body, status, want in cases:
            with self.subTest(name=name, body=body):
                got_status, got = c.json("POST", "/v1/shop/" + name, body)
                self.assertEqual(got_status, status, got)
                if status == 200:
                    self.assertEqual(got.get("result"), want)
                else:
                    self.assertIn(want, got["error"])
        self.assert_alive()

    def test_random_rows_round_trip(self):
        # random picks in random layouts (rows or objects, random white space): reversed answers them back
        import random
        rng = random.Random(1234)
        c = self.conn()
        for _ in range(200):
            picks = [{"sku": "".join(rng.choice("abcXYZ019 _-~") for _ in range(rng.randrange(0, 6))),
                      "qty": rng.choice([0, 1, -1, 7, 10 ** rng.randrange(1, 18), -(10 ** rng.randrange(1, 18))])}
                     for _ in range(rng.randrange(0, 8))]
            ws = lambda: rng.choice(["", " ", "\n", "\t ", "\r\n"])
            rows = []
            for p in picks:
                if rng.random() < 0.7:
                    rows.append("[" + ws() + json.dumps(p["sku"]) + ws() + "," + ws() + str(p["qty"]) + ws() + "]")
                else:
                    rows.append(json.dumps(p))
            body = "{" + ws() + '"picks"' + ws() + ":" + ws() + "[" + ws() + ("," + ws()).join(rows) + ws() + "]" + ws() + "}"
            status, got = c.json("POST", "/v1/shop/reversed", body)
            self.assertEqual((status, got.get("result")), (200, picks[::-1]), body)


class BadInput(ServeTest):
    """Raw bytes on a socket; after each case the server answers the next good request."""

    def raw(self, data, read=True):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        try:
            s.sendall(data)
            if not read:
                return b""
            out = b""
            while True:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                out += chunk
            return out
        finally:
            s.close()

    def expect_status(self, data, code):
        out = self.raw(data)
        self.assertTrue(out.startswith(f"HTTP/1.1 {code} ".encode()), out[:200])
        self.assertIn(b"Connection: close", out)
        self.assertIn(b'{"error":', out)
        self.assert_alive()

    def test_malformed_request_lines_and_headers(self):
        for data in [b"HELLO\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"\x00\x01\x02\x03garbage\r\n\r\n",
                     b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColonHere\r\n\r\n",
                     b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Name: x\r\n\r\n",
                     b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n12345",
                     b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n",
                     b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
                     b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"]:
            with self.subTest(data=data[:40]):
                self.expect_status(data, 400)

    def test_header_over_limit(self):
        self.expect_status(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n", 431)

    def test_body_over_limit(self):
        body = b'{"t": "' + b"a" * (1 << 20) + b'"}'
        self.expect_status(build("POST", "/v1/shop/echo", body), 413)
        # a declared 10 GB body is refused before it is read
        self.expect_status(b"POST /v1/shop/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000000\r\n\r\n{}", 413)
        # a chunked body over the limit too
        chunk = b"a" * 65536
        data = b"POST /v1/shop/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        data += (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * 20 + b"0\r\n\r\n"
        self.expect_status(data, 413)
        # just under the limit is fine
        body = b'{"t": "' + b"a" * ((1 << 20) - 20) + b'"}'
        status, _, raw = Conn(self.server.port).request("POST", "/v1/shop/echo", body)
        self.assertEqual(status, 200)

    def test_slow_client_gets_408_and_does_not_block_others(self):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        self.addCleanup(s.close)
        start = time.monotonic()
        s.sendall(b"POST /v1/shop/hit HTTP/1.1\r\n")
        # while it trickles, others are served at once: the good request is answered while the slow
        # one is still pending (no 408 yet on its socket), not after the slow one's timeout
        self.assert_alive()
        s.setblocking(False)
        with self.assertRaises(BlockingIOError):
            s.recv(1)
        s.settimeout(10)
        out = b""
        try:
            for ch in b"Content-Length: 20\r\n\r\n{}":
                s.sendall(bytes([ch]))
                time.sleep(0.1)
                if time.monotonic() - start > 3:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                out += chunk
        except ConnectionResetError:
            pass
        self.assertTrue(out.startswith(b"HTTP/1.1 408 "), out)
        self.assertIn(b"did not arrive whole", out)
        self.assertLess(time.monotonic() - start, TIMEOUT_MS / 1000 + 2)
        self.assert_alive()

    def test_idle_keep_alive_is_closed_quietly(self):
        c = self.conn()
        self.assertEqual(c.json("GET", "/health")[0], 200)
        time.sleep(TIMEOUT_MS / 1000 + 0.5)
        self.assertEqual(c.sock.recv(100), b"")  # closed, no 408 for a connection that sent nothing
        self.assert_alive()

    def test_client_disconnects_mid_body(self):
        for _ in range(5):
            self.raw(b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"name\":", read=False)
        before = self.call("count", {"name": ""})
        self.assert_alive()
        # nothing was run for the half-sent events
        self.assertEqual(self.call("total_hits")[0], 200)
        self.assertEqual(before[0], 200)

    def test_client_disconnects_before_its_event_reply(self):
        name = "vanish"
        for _ in range(20):
            self.raw(build("POST", "/v1/shop/hit", json.dumps({"name": name})), read=False)
        # every event that arrived whole runs, whether or not its client stayed to hear
        self.assertTrue(wait_until(lambda: self.call("count", {"name": name})[1]["result"] == 20), "events lost")
        self.assert_alive()

    def test_pipelined_requests(self):
        c = self.conn()
        c.send_raw(build("POST", "/v1/shop/hit", '{"name":"pipe"}') + build("POST", "/v1/shop/count", '{"name":"pipe"}') +
                   build("GET", "/health"))
        s1, _, b1 = c.read_response()
        s2, _, b2 = c.read_response()
        s3, _, _ = c.read_response()
        self.assertEqual((s1, s2, s3), (200, 200, 200))
        self.assertEqual(json.loads(b2), {"result": 1})

    def test_plain_and_beast_parsed_requests_agree(self):
        # pure-serve parses plain requests by hand and leaves the rest to Beast: both must answer alike
        c = self.conn()
        body = b'{"name":"paths"}'
        plain = b"POST /v1/shop/hit HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        chunked = (b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
                   % (len(body), body))
        c.send_raw(plain + chunked)
        self.assertEqual(c.read_response()[0], 200)
        self.assertEqual(c.read_response()[0], 200)
        # a request that arrives a byte at a time
        for i in range(len(plain)):
            c.send_raw(plain[i:i + 1])
            time.sleep(0.001)
        self.assertEqual(c.read_response()[0], 200)
        status, _, raw = c.request("POST", "/v1/shop/count", '{"name":"paths"}')
        self.assertEqual((status, json.loads(raw)), (200, {"result": 3}))
        # HTTP/1.0 and Connection: close end the connection after the reply
        for head in [b"GET /health HTTP/1.0\r\n\r\n", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"]:
            with self.subTest(head=head):
                out = self.raw(head)
                self.assertTrue(out.startswith(b"HTTP/1.1 200 "), out[:100])
                self.assertIn(b"Connection: close", out)
        # many pipelined requests at once (answered inline, a few through the queue)
        c.send_raw(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 500)
        for _ in range(500):
            self.assertEqual(c.read_response()[0], 200)
        # HTTP/1.0 with keep-alive stays open
        k = self.conn()
        for _ in range(2):
            k.send_raw(b"GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            self.assertEqual(k.read_response()[0], 200)

    def test_expect_100_continue(self):
        c = self.conn()
        body = json.dumps({"t": "x" * 5000}).encode()
        c.send_raw(b"POST /v1/shop/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        c.sock.settimeout(5)
        head = c.sock.recv(100)
        self.assertTrue(head.startswith(b"HTTP/1.1 100 Continue"), head)
        c.send_raw(body)
        status, _, raw = c.read_response()
        self.assertEqual(status, 200)


class Token(unittest.TestCase):
    def test_events_need_the_token_queries_do_not(self):
        with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as f:
            f.write("s3cret-token\n")
        self.addCleanup(os.unlink, f.name)
        server = Server(find_binary(), [SHOP], "--token-file", f.name)
        try:
            c = Conn(server.port)
            status, body = c.json("POST", "/v1/shop/hit", {"name": "t"})
            self.assertEqual(status, 401)
            self.assertIn("Authorization: Bearer", body["error"])
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "t"}, {"Authorization": "Bearer wrong"})[0], 401)
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "t"}, {"Authorization": "Bearer s3cret-tokenX"})[0], 401)
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "t"}, {"Authorization": "Bearer s3cret-token"})[0], 200)
            self.assertEqual(c.json("POST", "/v1/shop/count", {"name": "t"}), (200, {"result": 1}))
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)


class Overload(unittest.TestCase):
    def test_queue_full_is_503_and_queries_go_on_during_a_long_event(self):
        server = Server(find_binary(), [SHOP], "--max-queue", "1", "--max-steps", "300000000")
        try:
            replies = []

            def spin():
                replies.append(Conn(server.port, timeout=60).json("POST", "/v1/shop/spin", {}))

            threads = [threading.Thread(target=spin) for _ in range(4)]
            for t in threads:
                t.start()
                time.sleep(0.05)
            # the owner is busy: queries still answer at once
            t0 = time.monotonic()
            self.assertEqual(Conn(server.port).json("POST", "/v1/shop/total_hits", {}), (200, {"result": 0}))
            self.assertLess(time.monotonic() - t0, 0.5)
            for t in threads:
                t.join(60)
            codes = sorted(r[0] for r in replies)
            self.assertIn(503, codes, replies)
            self.assertIn(409, codes, replies)
            for status, body in replies:
                if status == 503:
                    self.assertIn("queued", body["error"])
                else:
                    self.assertIn("step budget", body["reason"])
            self.assertEqual(Conn(server.port).json("POST", "/v1/shop/hit", {"name": "a"})[0], 200)
        finally:
            self.assertEqual(server.stop(), 0)


class DocExamples(unittest.TestCase):
    """Every curl command in docs/serve.md's session, run against a fresh server on the ledger
    example, prints what the doc says it prints (a '...' in the doc matches any rest)."""

    def test_curl_session(self):
        self.run_session("docs/serve.md", "## A session with curl", "## The API")

    def test_readme_section(self):
        self.run_session("README.md", "## Serve a module", "## Documentation")

    def run_session(self, path, begin, end):
        import re
        import shutil
        if not shutil.which("curl"):
            self.skipTest("no curl")
        doc = open(os.path.join(HERE, "..", "..", path)).read()
        session = doc[doc.index(begin):doc.index(end)]
        steps = []  # (command, [expected lines])
        for block in re.findall(r"```sh\n(.*?)```", session, re.S):
            for line in block.splitlines():
                if line.startswith("curl "):
                    steps.append((line, []))
                elif line.startswith("# ") and steps:
                    steps[-1][1].append(line[2:])
        self.assertGreater(len(steps), 4)
        root = os.path.join(HERE, "..", "..")
        server = Server(find_binary(), [os.path.join(root, "examples", "bank_ledger.pure")])
        try:
            for command, expected in steps:
                command = command.replace("localhost:8080", f"127.0.0.1:{server.port}")
                out = subprocess.run(command, shell=True, capture_output=True, timeout=20, cwd=root).stdout.decode()
                got = out.splitlines()
                self.assertEqual(len(got), len(expected), (command, out))
                for g, e in zip(got, expected):
                    if "..." in e:
                        self.assertTrue(g.startswith(e.split("...")[0]), (command, g, e))
                    else:
                        self.assertEqual(g, e, command)
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
