"""tests/serve/test_nested_items.py — items that hold items (issue 37, item 1, second pass) over
HTTP, with a real pure-serve on 127.0.0.1: an event takes an item whose fields are items as nested
JSON (or the compact form, nested arrays), checked field by field (a 400 names the bad inner
field); its result and a query's are nested JSON objects; the interface lists an inner item's own
fields; a keyed list inside an item is answered as its rows; a restart that replays the log (the server killed, no checkpoint) answers the same.
Run by ctest (serve.nested_items) with PURE_SERVE set to the binary."""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import serve_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = os.path.join(HERE, "shapes.pure")
warnings.simplefilter("ignore", ResourceWarning)

DOOR = {"name": "door", "box": {"corner": {"x": 1, "y": 2}, "size": {"x": 3, "y": 7}}, "tags": ["a", "b"]}


class ItemsHoldingItems(unittest.TestCase):
    def start(self, data=None):
        return serve_for(self, [SHAPES], data)

    def test_nested_json_both_ways(self):
        server, c = self.start()
        self.addCleanup(server.cleanup)
        status, body = c.json("POST", "/v1/shapes/put", {"s": DOOR})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["result"], DOOR["box"])
        self.assertEqual(c.json("POST", "/v1/shapes/shape", {"name": "door"}),
                         (200, {"result": {"name": "door", "box": DOOR["box"], "tags": ["t", "t"]}}))
        # the compact form: each item as an array of its fields, inner items too
        status, body = c.json("POST", "/v1/shapes/put", {"s": ["gate", [[5, 6], [8, 9]], []]})
        self.assertEqual((status, body.get("result")), (200, {"corner": {"x": 5, "y": 6}, "size": {"x": 8, "y": 9}}), body)
        # a keyed list inside an item: its rows in key order
        self.assertEqual(c.json("POST", "/v1/shapes/census", {}),
                         (200, {"result": {"shapes": 2, "by_width": [{"w": 3, "n": 1}, {"w": 8, "n": 1}]}}))
        # the event's own fail reads the nested argument
        self.assertEqual(c.json("POST", "/v1/shapes/put",
                                {"s": {"name": "flat", "box": {"corner": {"x": 0, "y": 0}, "size": {"x": 0, "y": 1}}, "tags": []}}),
                         (409, {"ok": False, "reason": "flat has no width", "version": 1}))
        bad_x = {"name": "e", "box": {"corner": {"x": "1", "y": 2}, "size": {"x": 3, "y": 7}}, "tags": []}
        no_size = {"name": "e", "box": {"corner": {"x": 1, "y": 2}}, "tags": []}
        extra = {"name": "e", "box": {"corner": {"x": 1, "y": 2, "z": 3}, "size": {"x": 3, "y": 7}}, "tags": []}
        refused = [
            (bad_x, "parameter 's.box.corner.x': expected int (a JSON integer), got a string"),
            (no_size, "parameter 's.box': missing field 'size' (Point)"),
            (extra, "parameter 's.box.corner': Point has no field 'z'"),
        ]
        for arg, error in refused:
            status, body = c.json("POST", "/v1/shapes/put", {"s": arg})
            self.assertEqual((status, body.get("error")), (400, error), body)
        # the interface names an inner item's own fields, at every depth
        status, body = c.json("GET", "/v1/shapes")
        shape = next(q for q in body["queries"] if q["name"] == "shape")
        point = [{"name": "x", "type": "int"}, {"name": "y", "type": "int"}]
        self.assertEqual(shape["result"]["fields"][1],
                         {"name": "box", "type": "Box",
                          "fields": [{"name": "corner", "type": "Point", "fields": point},
                                     {"name": "size", "type": "Point", "fields": point}]})

    def test_a_replayed_log_gives_the_same_answers(self):
        server, c = self.start()
        self.addCleanup(server.cleanup)
        for i in (1, 2):
            s = {"name": f"s{i}", "box": {"corner": {"x": i, "y": -i}, "size": {"x": 10 * i, "y": 20 * i}}, "tags": ["x"] * i}
            self.assertEqual(c.json("POST", "/v1/shapes/put", {"s": s})[0], 200)
        before = [c.json("POST", "/v1/shapes/shape", {"name": f"s{i}"}) for i in (1, 2)]
        server.kill()  # no checkpoint at shutdown: the restart replays the logged events and their items
        again, c2 = self.start(data=server.data)
        after = [c2.json("POST", "/v1/shapes/shape", {"name": f"s{i}"}) for i in (1, 2)]
        self.assertEqual(after, before)
        self.assertEqual(after[1], (200, {"result": {"name": "s2", "box": {"corner": {"x": 2, "y": -2}, "size": {"x": 20, "y": 40}},
                                                     "tags": ["t", "t"]}}))


if __name__ == "__main__":
    unittest.main()
