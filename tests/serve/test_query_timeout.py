"""tests/serve/test_query_timeout.py — a query's time limit (--query-timeout-ms) and a query whose
client left (issue 31 item 10, part 3), with a real pure-serve on 127.0.0.1: a query past the
limit is cancelled and answered 503 naming the limit and the option, counted in /metrics, and the
server goes on serving; a query whose client closed its connection is cancelled and its query
thread is free again. Run by ctest (serve.query_timeout) with PURE_SERVE set to the binary.
Nothing here times anything: the slow queries would take many minutes without the cancel, and
each check waits for a state it can see (/metrics) with a generous bound."""
import os
import socket
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary, metric, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SLOW = os.path.join(HERE, "slow.pure")
warnings.simplefilter("ignore", ResourceWarning)
FOREVER = 10_000  # passes of slow(): about 1000 s uncancelled


TIMEOUTS = 'pure_queries_cancelled_total{reason="timeout"}'
CLIENT_GONE = 'pure_queries_cancelled_total{reason="client_gone"}'


class QueryTimeoutTest(unittest.TestCase):
    def start(self, *extra):
        s = Server(find_binary(), [SLOW], "--max-steps", "100000000000000", *extra)
        self.addCleanup(s.cleanup)
        self.addCleanup(s.kill)
        return s

    def test_a_query_past_the_limit_is_answered_503_and_the_server_goes_on(self):
        s = self.start("--query-threads", "1", "--query-timeout-ms", "300")
        self.assertEqual(metric(s.port, TIMEOUTS), 0)
        c = Conn(s.port, timeout=120.0)
        status, body = c.json("POST", "/v1/slow/slow", {"passes": FOREVER})
        self.assertEqual(status, 503, body)
        self.assertEqual(body["error"], "query slow cancelled: it ran longer than the time limit of 300 ms "
                                        "(--query-timeout-ms); ask for less, or raise --query-timeout-ms")
        self.assertEqual(metric(s.port, TIMEOUTS), 1)
        self.assertEqual(metric(s.port, CLIENT_GONE), 0)
        # the query thread answered before it counted itself done: wait for that
        self.assertTrue(wait_until(lambda: metric(s.port, "pure_queries_running") == 0, 60.0))
        # the one query thread is free: a short query and an event are answered on the same connection
        self.assertEqual(c.json("POST", "/v1/slow/slow", {"passes": 1}), (200, {"result": 20_000_000}))
        self.assertEqual(c.json("POST", "/v1/slow/mark", {"id": 1})[0], 200)
        self.assertEqual(c.json("POST", "/v1/slow/quick", {}), (200, {"result": 1}))
        c.close()

    def test_no_limit_with_0(self):
        # --query-timeout-ms 0: only the step budget bounds a query (here a small one, so it ends)
        s = Server(find_binary(), [SLOW], "--max-steps", "2000000", "--query-timeout-ms", "0")
        self.addCleanup(s.cleanup)
        self.addCleanup(s.kill)
        c = Conn(s.port, timeout=120.0)
        status, body = c.json("POST", "/v1/slow/slow", {"passes": FOREVER})
        c.close()
        self.assertEqual(status, 409, body)
        self.assertIn("step budget spent (2000000 steps;", body["reason"])
        self.assertEqual(metric(s.port, TIMEOUTS), 0)

    def test_a_query_whose_client_left_is_cancelled(self):
        s = self.start("--query-threads", "1", "--query-timeout-ms", "0")
        sock = socket.create_connection(("127.0.0.1", s.port))
        body = b'{"passes": %d}' % FOREVER
        sock.sendall(b"POST /v1/slow/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.assertTrue(wait_until(lambda: metric(s.port, "pure_queries_running") == 1, 60.0))
        sock.close()  # the client leaves before the answer
        # the query thread is free again long before the query could have ended
        self.assertTrue(wait_until(lambda: metric(s.port, "pure_queries_running") == 0, 60.0))
        self.assertEqual(metric(s.port, CLIENT_GONE), 1)
        self.assertEqual(metric(s.port, TIMEOUTS), 0)
        c = Conn(s.port)
        self.assertEqual(c.json("POST", "/v1/slow/quick", {}), (200, {"result": 0}))
        c.close()


if __name__ == "__main__":
    unittest.main()
