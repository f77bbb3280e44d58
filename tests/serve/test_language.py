"""tests/serve/test_language.py — the language's second pass (issue 37) over HTTP, with a real
pure-serve on 127.0.0.1: enums are sent and answered by their members' names (arguments, results,
items, sequences, stored list pages), and a name that is no member is a 400 naming the members;
a query's `fail "text"` answers with its own text, as an event's does.
Run by ctest (serve.language) with PURE_SERVE set to the binary."""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ORDERS = os.path.join(HERE, "orders.pure")
warnings.simplefilter("ignore", ResourceWarning)


class Enums(unittest.TestCase):
    def setUp(self):
        self.server = Server(find_binary(), [ORDERS])
        self.addCleanup(self.server.cleanup)
        self.addCleanup(self.server.kill)
        self.c = Conn(self.server.port)
        self.addCleanup(self.c.close)

    def test_sent_and_answered_by_name(self):
        c = self.c
        for i in (1, 2, 3):
            self.assertEqual(c.json("POST", "/v1/orders/place", {"id": i, "qty": i * 2})[0], 200)
        status, body = c.json("POST", "/v1/orders/move", {"id": 2, "to": "shipped"})
        self.assertEqual((status, body["ok"], body["result"]), (200, True, "open"), body)
        self.assertEqual(c.json("POST", "/v1/orders/move", {"id": 2, "to": "shipped"}),
                         (409, {"ok": False, "reason": "order 2 is already shipped", "version": 1}))
        self.assertEqual(c.json("POST", "/v1/orders/order", {"id": 2}), (200, {"result": {"id": 2, "status": "shipped"}}))
        self.assertEqual(c.json("POST", "/v1/orders/with_status", {"s": "open"}),
                         (200, {"result": [{"id": 1, "status": "open"}, {"id": 3, "status": "open"}]}))
        # a stored list's page: enum fields and keys by name too
        status, body = c.json("GET", "/v1/orders/lists/orders")
        self.assertEqual(status, 200, body)
        self.assertEqual([r["status"] for r in body["rows"]], ["open", "shipped", "open"])
        status, body = c.json("GET", "/v1/orders/lists/counts")
        self.assertEqual(body["rows"], [{"status": "open", "n": 2}, {"status": "shipped", "n": 1}])
        # the interface names the members a client may send and will read
        status, body = c.json("GET", "/v1/orders")
        members = ["open", "shipped", "cancelled"]
        move = next(e for e in body["events"] if e["name"] == "move")
        self.assertEqual(move["params"][1], {"name": "to", "type": "Status", "members": members})
        self.assertEqual(move["result"], {"name": "result", "type": "Status", "members": members})
        order = next(q for q in body["queries"] if q["name"] == "order")
        self.assertEqual(order["result"]["fields"][1], {"name": "status", "type": "Status", "members": members})
        counts = next(l for l in body["lists"] if l["name"] == "counts")
        self.assertEqual(counts["key"], [{"name": "status", "type": "int", "members": members}])

    def test_a_name_that_is_no_member_is_refused(self):
        c = self.c
        self.assertEqual(c.json("POST", "/v1/orders/place", {"id": 1, "qty": 1})[0], 200)
        status, body = c.json("POST", "/v1/orders/move", {"id": 1, "to": "lost"})
        self.assertEqual(status, 400, body)
        self.assertEqual(body["error"], "parameter 'to': Status has no member \"lost\"; its members are "
                                        "\"open\", \"shipped\", \"cancelled\"")
        status, body = c.json("POST", "/v1/orders/move", {"id": 1, "to": 1})
        self.assertEqual(status, 400, body)
        self.assertTrue(body["error"].startswith("parameter 'to': expected Status (one of \"open\", \"shipped\", "
                                                 "\"cancelled\"), got "), body)
        # nothing was changed by the refused calls
        self.assertEqual(c.json("POST", "/v1/orders/order", {"id": 1}), (200, {"result": {"id": 1, "status": "open"}}))


class QueryFail(unittest.TestCase):
    def test_a_query_fail_answers_with_its_own_text(self):
        s = Server(find_binary(), [ORDERS])
        self.addCleanup(s.cleanup)
        self.addCleanup(s.kill)
        c = Conn(s.port)
        self.addCleanup(c.close)
        self.assertEqual(c.json("POST", "/v1/orders/place", {"id": 4, "qty": 9})[0], 200)
        self.assertEqual(c.json("POST", "/v1/orders/qty", {"id": 4}), (200, {"result": 9}))
        # the query's own words, as an event's fail reads (it was "runtime error at L:C: failed: ...")
        self.assertEqual(c.json("POST", "/v1/orders/qty", {"id": 5}), (409, {"reason": "no order 5"}))
        self.assertEqual(c.json("POST", "/v1/orders/move", {"id": 4, "to": "open"}),
                         (409, {"ok": False, "reason": "order 4 is already open", "version": 1}))
        # a runtime error still says where it happened
        status, body = c.json("POST", "/v1/orders/broken", {"id": 4})
        self.assertEqual(status, 409)
        self.assertRegex(body["reason"], r"^runtime error at \d+:\d+: division by zero")


if __name__ == "__main__":
    unittest.main()
