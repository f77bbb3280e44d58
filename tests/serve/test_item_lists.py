"""tests/serve/test_item_lists.py — items that hold lists (issue 37, item 1) over HTTP, with a real
pure-serve on 127.0.0.1: a query's and an event's item result with a seq field is nested JSON, an
event takes such an item as nested JSON checked field by field (a 400 names the bad element), the
interface lists the list field's own fields, and a restart that replays the log (the server
killed, no checkpoint) answers the same.
Run by ctest (serve.item_lists) with PURE_SERVE set to the binary."""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import serve_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BASKETS = os.path.join(HERE, "baskets.pure")
warnings.simplefilter("ignore", ResourceWarning)

FIG_PEAR = [{"sku": "fig", "qty": 3}, {"sku": "pear", "qty": 2}]


class ItemsHoldingLists(unittest.TestCase):
    def start(self, data=None):
        return serve_for(self, [BASKETS], data)

    def test_nested_json_both_ways(self):
        server, c = self.start()
        self.addCleanup(server.cleanup)
        status, body = c.json("POST", "/v1/baskets/put",
                              {"b": {"id": 1, "lines": [{"sku": "pear", "qty": 2}, {"sku": "fig", "qty": 3}]}})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["result"], {"total": 5, "rows": [{"sku": "pear", "qty": 2}, {"sku": "fig", "qty": 3}]})
        self.assertEqual(c.json("POST", "/v1/baskets/basket", {"id": 1}),
                         (200, {"result": {"id": 1, "lines": FIG_PEAR}}))
        self.assertEqual(c.json("POST", "/v1/baskets/page", {"id": 1}), (200, {"result": {"total": 5, "rows": FIG_PEAR}}))
        self.assertEqual(c.json("POST", "/v1/baskets/page", {"id": 9}), (200, {"result": {"total": 0, "rows": []}}))
        # the compact form: the item as an array of its fields, its lines as rows
        status, body = c.json("POST", "/v1/baskets/put", {"b": [3, [["a", 1], ["b", 2]]]})
        self.assertEqual((status, body["result"]), (200, {"total": 3, "rows": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}]}))
        # the event's own fail, after checking the nested argument: nothing changed
        self.assertEqual(c.json("POST", "/v1/baskets/put", {"b": {"id": 2, "lines": [{"sku": "a", "qty": 0}]}}),
                         (409, {"ok": False, "reason": "a: quantity must be positive", "version": 1}))
        refused = [
            ({"id": 2, "lines": [{"sku": "a", "qty": "x"}]}, "parameter 'b.lines[0].qty': expected int (a JSON integer), got a string"),
            ({"id": 2, "lines": [{"sku": "a", "qty": 1, "extra": 2}]}, "parameter 'b.lines[0]': Line has no field 'extra'"),
            ({"id": 2}, "parameter 'b': missing field 'lines' (seq Line)"),
        ]
        for arg, error in refused:
            status, body = c.json("POST", "/v1/baskets/put", {"b": arg})
            self.assertEqual((status, body.get("error")), (400, error), body)
        self.assertEqual(c.json("POST", "/v1/baskets/basket", {"id": 2}), (200, {"result": {"id": 2, "lines": []}}))
        # the interface names the list field's own fields
        status, body = c.json("GET", "/v1/baskets")
        basket = next(q for q in body["queries"] if q["name"] == "basket")
        self.assertEqual(basket["result"]["fields"][1],
                         {"name": "lines", "type": "seq Line",
                          "fields": [{"name": "sku", "type": "text"}, {"name": "qty", "type": "int"}]})

    def test_a_replayed_log_gives_the_same_answers(self):
        server, c = self.start()
        self.addCleanup(server.cleanup)
        for i in (1, 2):
            lines = [{"sku": f"s{k}", "qty": i * 10 + k} for k in range(i + 1)]
            self.assertEqual(c.json("POST", "/v1/baskets/put", {"b": {"id": i, "lines": lines}})[0], 200)
        before = [c.json("POST", "/v1/baskets/basket", {"id": i}) for i in (1, 2)]
        server.kill()  # no checkpoint at shutdown: the restart replays the logged events and their items
        again, c2 = self.start(data=server.data)
        after = [c2.json("POST", "/v1/baskets/basket", {"id": i}) for i in (1, 2)]
        self.assertEqual(after, before)
        self.assertEqual(after[1], (200, {"result": {"id": 2, "lines": [{"sku": "s0", "qty": 20}, {"sku": "s1", "qty": 21},
                                                                          {"sku": "s2", "qty": 22}]}}))


if __name__ == "__main__":
    unittest.main()
