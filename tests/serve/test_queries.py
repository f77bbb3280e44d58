"""tests/serve/test_queries.py — queries run off the HTTP I/O threads (issue 31 item 10), with a
real pure-serve on 127.0.0.1: while a slow query runs on a query thread, /health, /metrics, events
and other queries are answered; a full query queue (--max-query-queue) is refused with 503 and
Retry-After. Run by ctest (serve.queries) with PURE_SERVE set to the binary. Nothing here times
anything: the slow query takes seconds, and each check waits for a state it can see (/metrics)."""
import os
import sys
import threading
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary, metric, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SLOW = os.path.join(HERE, "slow.pure")
warnings.simplefilter("ignore", ResourceWarning)
PASS_BYTES = 20_000_000  # what one pass of slow() adds: 16 MB with each "a" made "cc"


class SlowQuery:
    """POST /v1/slow/slow on a connection of its own, on a thread: the answer once it came."""

    def __init__(self, port, passes):
        self.answer = None
        self.done = threading.Event()
        self.conn = Conn(port, timeout=120.0)
        self.thread = threading.Thread(target=self._run, args=(passes,), daemon=True)
        self.thread.start()

    def _run(self, passes):
        try:
            self.answer = self.conn.json("POST", "/v1/slow/slow", {"passes": passes})
        finally:
            self.conn.close()
            self.done.set()

    def wait(self):
        self.done.wait(120.0)
        return self.answer


class QueryThreadsTest(unittest.TestCase):
    def start(self, *extra):
        # The slow query must outlast the requests made beside it, not a time limit: under ASan on a
        # loaded machine its 25 passes took longer than the default 10 s (--query-timeout-ms) and
        # were cancelled, failing the test for a reason it does not test.
        s = Server(find_binary(), [SLOW], "--max-steps", "100000000000", "--query-timeout-ms", "600000", *extra)
        self.addCleanup(s.cleanup)
        self.addCleanup(s.kill)
        return s

    def test_other_requests_are_answered_while_a_query_runs(self):
        s = self.start("--query-threads", "1")
        self.assertEqual(metric(s.port, "pure_query_threads"), 1)
        q = SlowQuery(s.port, 25)
        self.assertTrue(wait_until(lambda: metric(s.port, "pure_queries_running") == 1, 60.0))
        # the I/O thread is free: health, an event and another module read answer meanwhile (the
        # query behind it on the one query thread waits, so it is not asked here)
        c = Conn(s.port)
        status, body = c.json("GET", "/health")
        self.assertEqual(status, 200, body)
        status, body = c.json("POST", "/v1/slow/mark", {"id": 7})
        self.assertEqual(status, 200, body)
        status, body = c.json("GET", "/v1/slow/lists/marks")
        self.assertEqual(status, 200, body)
        c.close()
        self.assertFalse(q.done.is_set(), "the slow query ended before the other requests were answered")
        self.assertEqual(metric(s.port, "pure_queries_running"), 1)
        status, body = q.wait()
        self.assertEqual(status, 200, body)
        self.assertEqual(body["result"], 25 * PASS_BYTES)

    def test_a_full_query_queue_is_refused_with_503(self):
        s = self.start("--query-threads", "1", "--max-query-queue", "1")
        first = SlowQuery(s.port, 25)
        self.assertTrue(wait_until(lambda: metric(s.port, "pure_queries_running") == 1, 60.0))
        second = SlowQuery(s.port, 1)
        self.assertTrue(wait_until(lambda: metric(s.port, "pure_queries_queued") == 1, 60.0))
        c = Conn(s.port)
        status, headers, body = c.request("POST", "/v1/slow/quick", "{}")
        c.close()
        self.assertEqual(status, 503, body)
        self.assertEqual(headers.get("retry-after"), "1")
        self.assertIn(b"1 queries are already waiting for the 1 query threads (--max-query-queue, --query-threads)", body)
        self.assertFalse(first.done.is_set(), "the slow query ended before the queue was full")
        self.assertEqual(first.wait(), (200, {"result": 25 * PASS_BYTES}))
        self.assertEqual(second.wait(), (200, {"result": PASS_BYTES}))
        # room again: the quick query runs
        c = Conn(s.port)
        self.assertEqual(c.json("POST", "/v1/slow/quick", {}), (200, {"result": 0}))
        c.close()


if __name__ == "__main__":
    unittest.main()
