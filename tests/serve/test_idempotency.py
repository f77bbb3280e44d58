"""tests/serve/test_idempotency.py — idempotency keys from the outside (docs/history.md#idempotency-keys):
a real pure-serve on 127.0.0.1. An event sent with Idempotency-Key and sent again gets the original
answer (same seq, same result) with "replayed":true and is applied once; the same key with other
arguments or another event is a 422 naming the key and the seq; a bad key is a 400 naming the
header; a failed event's key is not kept (the retry runs). Then the server is killed with SIGKILL
right after an acknowledged keyed event, restarted on the same directory, and the retry is
answered from the log: applied once. Run by ctest (serve.idempotency) with PURE_SERVE set."""
import os
import shutil
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHOP = os.path.join(HERE, "shop.pure")
warnings.simplefilter("ignore", ResourceWarning)


def count(c, name):
    status, body = c.json("POST", "/v1/shop/count", {"name": name})
    assert status == 200, body
    return body["result"]


class Idempotency(unittest.TestCase):
    def test_keys(self):
        binary = find_binary()
        data = tempfile.mkdtemp(prefix="pure-idem-")
        server = Server(binary, [SHOP], data=data)
        try:
            c = Conn(server.port)
            key = {"Idempotency-Key": "hit-a-1"}
            status, first = c.json("POST", "/v1/shop/hit", {"name": "a"}, key)
            self.assertEqual(status, 200, first)
            self.assertEqual(first, {"ok": True, "version": 1, "seq": 1})
            status, again = c.json("POST", "/v1/shop/hit", {"name": "a"}, key)
            self.assertEqual((status, again), (200, {"ok": True, "version": 1, "seq": 1, "replayed": True}))
            self.assertEqual(count(c, "a"), 1)
            # an event with a result: the retry gets the original result
            mkey = {"Idempotency-Key": "missing-1"}
            status, m1 = c.json("POST", "/v1/shop/missing", {"skus": ["x", "y"]}, mkey)
            self.assertEqual(status, 200, m1)
            self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": "x", "qty": 1, "price": 1.0, "active": True})[0], 200)
            status, m2 = c.json("POST", "/v1/shop/missing", {"skus": ["x", "y"]}, mkey)
            self.assertEqual(status, 200, m2)
            self.assertEqual(m2, dict(m1, replayed=True))
            # other arguments, another event: 422 naming the key and the seq
            status, body = c.json("POST", "/v1/shop/hit", {"name": "b"}, key)
            self.assertEqual(status, 422, body)
            self.assertEqual(body["seq"], 1)
            self.assertIn("Idempotency-Key 'hit-a-1' was already used, with other arguments, by the event committed as seq 1",
                          body["reason"])
            status, body = c.json("POST", "/v1/shop/put_cell", {"row": 1, "col": "c", "v": 2}, key)
            self.assertEqual(status, 422, body)
            self.assertIn("with another event", body["reason"])
            self.assertEqual(count(c, "b"), 0)
            # bad keys: 400 naming the header
            for bad, message in [
                ("", "Idempotency-Key: the key is empty"),
                ("k" * 256, "Idempotency-Key: the key is 256 bytes long; a key is at most 255 bytes"),
                ("a b", "Idempotency-Key: the key has byte 32 at offset 1"),
            ]:
                status, body = c.json("POST", "/v1/shop/hit", {"name": "a"}, {"Idempotency-Key": bad})
                self.assertEqual(status, 400, body)
                self.assertIn(message, body["error"])
            status, _, raw = c.request("POST", "/v1/shop/hit", b'{"name":"a"}',
                                       {"Idempotency-Key": "one", "idempotency-key": "two"})
            self.assertEqual(status, 400, raw)
            self.assertIn(b"Idempotency-Key: the header came twice", raw)
            self.assertEqual(count(c, "a"), 1)
            # a failed event's key is not kept: the retry runs again (and fails again here)
            fkey = {"Idempotency-Key": "order-9"}
            for _ in range(2):
                status, body = c.json("POST", "/v1/shop/order", {"id": 9, "sku": "nope", "qty": 1}, fkey)
                self.assertEqual(status, 409, body)
                self.assertNotIn("replayed", body)
            # ... and once the cause is gone, the same key commits
            self.assertEqual(c.json("POST", "/v1/shop/add", {"sku": "nope", "qty": 5, "price": 1.0, "active": True})[0], 200)
            status, body = c.json("POST", "/v1/shop/order", {"id": 9, "sku": "nope", "qty": 1}, fkey)
            self.assertEqual(status, 200, body)
            self.assertNotIn("replayed", body)

            # kill -9 right after an acknowledged keyed event; the retry after the restart is
            # answered from the log, not applied again
            status, acked = c.json("POST", "/v1/shop/hit", {"name": "k"}, {"Idempotency-Key": "kill-1"})
            self.assertEqual(status, 200, acked)
            c.close()
            server.kill()
            server = Server(binary, [SHOP], data=data)
            c = Conn(server.port)
            status, retry = c.json("POST", "/v1/shop/hit", {"name": "k"}, {"Idempotency-Key": "kill-1"})
            self.assertEqual((status, retry), (200, dict(acked, replayed=True)))
            self.assertEqual(count(c, "k"), 1)
            status, retry = c.json("POST", "/v1/shop/hit", {"name": "a"}, key)  # the first key, too
            self.assertEqual((status, retry), (200, {"ok": True, "version": 1, "seq": 1, "replayed": True}))
            self.assertEqual(count(c, "a"), 1)
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "k"}, {"Idempotency-Key": "kill-1x"})[0], 200)  # a new key: a new event
            self.assertEqual(count(c, "k"), 2)
        finally:
            server.stop()
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
