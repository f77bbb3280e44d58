"""tests/serve/test_history.py — the audit trail from the outside (docs/history.md): a real
pure-serve on 127.0.0.1 takes events, then GET /v1/shop/events lists them with their sequence,
commit time, event name, arguments as a client sends them and version; after/before/limit pages
with the next_after cursor, event= and since= filters, a failed event as an audit-only record
(failed, reason), history kept across checkpoints (the
default --retain) and a restart, and every bad parameter a 400 naming it. Run by ctest
(serve.history) with PURE_SERVE set."""
import os
import shutil
import sys
import tempfile
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHOP = os.path.join(HERE, "shop.pure")
warnings.simplefilter("ignore", ResourceWarning)


class History(unittest.TestCase):
    def test_audit_trail(self):
        binary = find_binary()
        before_start = int(time.time() * 1000)
        # Checkpoints every half kilobyte of log and small segments: history must survive them.
        data = tempfile.mkdtemp(prefix="pure-history-")
        server = Server(binary, [SHOP], "--checkpoint-mb", "0.0005", "--segment-mb", "0.001", data=data)
        try:
            c = Conn(server.port)
            self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": "apple", "qty": 10, "price": 0.5, "active": True})[0], 200)
            self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": "pear", "qty": 3, "price": 1.25, "active": False})[0], 200)
            self.assertEqual(c.json("POST", "/v1/shop/order", {"id": 1, "sku": "apple", "qty": 4})[0], 200)
            self.assertEqual(c.json("POST", "/v1/shop/draw", {"l": {"x1": 1, "y1": 2, "x2": 3, "y2": 4.5, "label": "é"}})[0], 200)
            for i in range(40):
                self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": f"n{i}"})[0], 200)
            # a failed event changed nothing, but it is in the trail (--audit-failed, the default):
            # an audit-only record with its arguments and reason
            self.assertEqual(c.json("POST", "/v1/shop/order", {"id": 2, "sku": "kiwi", "qty": 1})[0], 409)

            status, page = c.json("GET", "/v1/shop/events?limit=4")
            self.assertEqual(status, 200, page)
            self.assertEqual(page["module"], "shop")
            self.assertEqual(page["oldest"], 1)
            self.assertEqual(page["through"], 45)
            self.assertEqual(page["next_after"], 4)
            events = page["events"]
            self.assertEqual([e["sequence"] for e in events], [1, 2, 3, 4])
            self.assertEqual(events[0]["event"], "add")
            self.assertEqual(events[0]["args"], {"sku": "apple", "qty": 10, "price": 0.5, "active": True})
            self.assertEqual(events[2]["args"], {"id": 1, "sku": "apple", "qty": 4})
            self.assertEqual(events[3]["args"], {"l": {"x1": 1, "y1": 2, "x2": 3, "y2": 4.5, "label": "é"}})
            for e in events:
                self.assertEqual(e["version"], 1)
                self.assertGreaterEqual(e["time"], before_start)
                self.assertLessEqual(e["time"], int(time.time() * 1000))
                self.assertTrue(e["at"].endswith("Z"))
            times = [e["time"] for e in events]
            self.assertEqual(times, sorted(times))

            # the next page from the cursor; the last page has no cursor
            status, page = c.json("GET", "/v1/shop/events?after=4&limit=1000")
            self.assertEqual(status, 200)
            self.assertEqual([e["sequence"] for e in page["events"]], list(range(5, 46)))
            self.assertIsNone(page["next_after"])
            failed = page["events"][-1]
            self.assertEqual((failed["event"], failed["args"], failed["failed"], failed["reason"]),
                             ("order", {"id": 2, "sku": "kiwi", "qty": 1}, True, "no sku kiwi"))
            self.assertTrue(all("failed" not in e for e in page["events"][:-1]))
            # event= matches failed records too
            status, page = c.json("GET", "/v1/shop/events?event=order")
            self.assertEqual([(e["sequence"], e.get("failed", False)) for e in page["events"]], [(3, False), (45, True)])
            status, page = c.json("GET", "/v1/shop/events?after=10&before=13")
            self.assertEqual([e["sequence"] for e in page["events"]], [11, 12])
            # event= and since=
            status, page = c.json("GET", "/v1/shop/events?event=add")
            self.assertEqual([e["args"]["sku"] for e in page["events"]], ["apple", "pear"])
            status, page = c.json("GET", "/v1/shop/events?since=" + str(int(time.time() * 1000) + 60000))
            self.assertEqual(page["events"], [])
            status, page = c.json("GET", "/v1/shop/events?since=2000-01-01T00:00:00Z&limit=2")
            self.assertEqual([e["sequence"] for e in page["events"]], [1, 2])
            # percent-encoded as a browser's form or an HTTP client's query builder writes it
            status, page = c.json("GET", "/v1/shop/events?since=2000-01-01T00%3A00%3A00Z&limit=2&event=%61dd")
            self.assertEqual((status, [e["sequence"] for e in page["events"]]), (200, [1, 2]), page)

            # bad parameters: 400 naming them
            for query, message in [
                ("limit=0", "limit: expected a whole number from 1 to 1000, got '0'"),
                ("limit=1001", "limit: expected a whole number from 1 to 1000, got '1001'"),
                ("after=-1", "after: expected a sequence number (0 or more), got '-1'"),
                ("before=x", "before: expected a sequence number (0 or more), got 'x'"),
                ("after=5&before=6", "before (6) must be above after + 1 (6): no sequence lies between them"),
                ("event=qty", "event: module shop has no event 'qty'"),
                ("event=nope", "event: module shop has no event 'nope'"),
                ("since=yesterday", "since: expected milliseconds since 1970 or a UTC time like 2026-12-07T02:30:00Z, got 'yesterday'"),
                ("since=2026-13-01T00:00:00Z", "since: expected milliseconds since 1970 or a UTC time like 2026-12-07T02:30:00Z, got '2026-13-01T00:00:00Z'"),
                ("sequence=3", "unknown query parameter 'sequence': the audit trail takes after, before, limit, event and since"),
                ("since=2026%3", "since: bad percent-encoding"),
            ]:
                status, body = c.json("GET", "/v1/shop/events?" + query)
                self.assertEqual((status, body), (400, {"error": message}), query)
            status, body = c.json("POST", "/v1/shop/events", {})
            self.assertEqual(status, 405)

            # checkpoints happened (the log is far past 2 KB) and kept the history (--retain 7d)
            shop = os.path.join(data, "shop")
            self.assertTrue(wait_until(lambda: any(n.startswith("checkpoint-") for n in os.listdir(shop))), os.listdir(shop))
            self.assertIn("log-00000000000000000001.seg", os.listdir(shop))
            status, page = c.json("GET", "/v1/shop/events?limit=1000")
            self.assertEqual([e["sequence"] for e in page["events"]], list(range(1, 46)))
            c.close()
        finally:
            server.stop()
        # after a restart the same history is read from disk
        again = Server(binary, [SHOP], data=data)
        try:
            c = Conn(again.port)
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "after restart"})[0], 200)
            status, page = c.json("GET", "/v1/shop/events?after=40")
            self.assertEqual([e["sequence"] for e in page["events"]], [41, 42, 43, 44, 45, 46])
            self.assertTrue(page["events"][-2]["failed"])
            self.assertEqual(page["events"][-1]["args"], {"name": "after restart"})
            self.assertEqual(page["oldest"], 1)
            c.close()
        finally:
            again.stop()
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
