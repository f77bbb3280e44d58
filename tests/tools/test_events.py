#!/usr/bin/env python3
"""tests/tools/test_events.py — `pure-run --data DIR --events FILE` from the outside
(docs/history.md): a real pure-serve on 127.0.0.1 takes events (some failing: not logged with
--audit-failed off, an audit-only record with it on; texts needing
escapes, a record of an earlier version after an upgrade), stops, and then each line pure-run
prints is byte for byte the record GET /v1/shop/events gave, with and without the filters
(--after, --before, --event, --since, --limit); the directory's bytes are unchanged by reading it;
a bad filter is exit 2 naming it with the HTTP route's message; not a data directory, another
module's directory and a damaged record (its file and offset) are exit 4.

Usage: test_events.py PURE_RUN PURE_SERVE   (standard library only; pure-serve's client from
tests/serve/serve_client.py)"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SERVE_TESTS = os.path.join(os.path.dirname(HERE), "serve")
sys.path.insert(0, SERVE_TESTS)
from serve_client import Conn, Server  # noqa: E402

SHOP = os.path.join(SERVE_TESTS, "shop.pure")
PURE_RUN = ""
PURE_SERVE = ""
warnings.simplefilter("ignore", ResourceWarning)

# Version 2 of shop: one more event, a code-only upgrade.
SHOP_V2_EXTRA = '''
event note(sku: text, words: text) { journal.push({ line: "{sku}: {words}" }) }
'''


def tree_digest(root):
    """Every file's name, size and content hash under root (what reading must not change)."""
    out = {}
    for top, _, files in os.walk(root):
        for name in files:
            path = os.path.join(top, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def run(*args):
    p = subprocess.run([PURE_RUN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def get_raw(conn, path):
    status, _, body = conn.request("GET", path)
    assert status == 200, (status, body)
    return body.decode("utf-8")


def records_of(body):
    """The bytes of the events array of an audit-trail page, and the parsed page."""
    page = json.loads(body)
    start = body.index('"events":[') + len('"events":[')
    end = body.rindex('],"next_after":')
    return body[start:end], page


class Events(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pure-events-")
        cls.data = os.path.join(cls.tmp, "data")
        cls.dir = os.path.join(cls.data, "shop")
        cls.v2 = os.path.join(cls.tmp, "v2", "shop.pure")
        os.makedirs(os.path.dirname(cls.v2))
        with open(SHOP, encoding="utf-8") as f:
            source = f.read()
        with open(cls.v2, "w", encoding="utf-8") as f:
            f.write(source + SHOP_V2_EXTRA)
        # Version 1: small segments and checkpoints, so the history spans several segment files.
        # --audit-failed off: its failed event leaves no record.
        server = Server(PURE_SERVE, [SHOP], "--checkpoint-mb", "0.0005", "--segment-mb", "0.001", "--audit-failed", "off",
                        data=cls.data)
        try:
            c = Conn(server.port)
            assert c.json("POST", "/v1/shop/add", {"sku": "apple", "qty": 10, "price": 0.5, "active": True})[0] == 200
            assert c.json("POST", "/v1/shop/add", {"sku": "q\"u\\o\nte é", "qty": 3, "price": 1e-7, "active": False})[0] == 200
            assert c.json("POST", "/v1/shop/order", {"id": 1, "sku": "apple", "qty": 4})[0] == 200
            assert c.json("POST", "/v1/shop/order", {"id": 2, "sku": "kiwi", "qty": 1})[0] == 409  # not logged
            assert c.json("POST", "/v1/shop/draw", {"l": {"x1": 1, "y1": 2, "x2": 3, "y2": 4.5, "label": "é"}})[0] == 200
            for i in range(30):
                assert c.json("POST", "/v1/shop/hit", {"name": f"n{i}"})[0] == 200
            c.close()
        finally:
            server.stop()
        # Version 2 (an upgrade record), then events of it: the earlier records turn untyped.
        server = Server(PURE_SERVE, [cls.v2], "--upgrade", "--checkpoint-mb", "0.0005", "--segment-mb", "0.001",
                        data=cls.data)
        try:
            c = Conn(server.port)
            assert c.json("POST", "/v1/shop/note", {"sku": "apple", "words": "fresh\ttoday"})[0] == 200
            assert c.json("POST", "/v1/shop/add", {"sku": "fig", "qty": 7, "price": 2.25, "active": True})[0] == 200
            assert c.json("POST", "/v1/shop/hit", {"name": "last"})[0] == 200
            # --audit-failed on (the default): an audit-only record, sequence 39
            assert c.json("POST", "/v1/shop/order", {"id": 9, "sku": "kiwi", "qty": 1})[0] == 409
            cls.pages = {}
            for query in ["limit=1000", "limit=5", "after=3&before=10", "event=hit", "event=add&limit=1", "event=order",
                          "since=2000-01-01T00:00:00Z&limit=2", "after=30"]:
                cls.pages[query] = get_raw(c, "/v1/shop/events?" + query)
            c.close()
        finally:
            server.stop()
        cls.digest = tree_digest(cls.data)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check_same(self, query, *flags, file=None):
        raw, page = records_of(self.pages[query])
        code, out, err = run("--data", self.dir, "--events", *flags, file or self.v2)
        self.assertEqual((code, err), (0, ""), query)
        self.assertTrue(out.endswith("\n") or out == "", out)
        lines = out.splitlines()
        self.assertEqual(len(lines), len(page["events"]), query)
        # each line is the HTTP record's bytes
        self.assertEqual(",".join(lines), raw, query)
        return [json.loads(line) for line in lines]

    def test_every_record_as_the_server_gives_it(self):
        records = self.check_same("limit=1000")
        self.assertEqual([r["sequence"] for r in records], list(range(1, 40)))
        self.assertEqual(records[0]["event"], None)  # version 1's records, read at version 2: untyped
        self.assertEqual(records[0]["args"], ["apple", 10, 0.5, True])
        self.assertEqual(records[1]["args"][0], "q\"u\\o\nte é")
        self.assertEqual(records[34], {"sequence": 35, "time": records[34]["time"], "at": records[34]["at"],
                                       "upgrade": 2, "version": 2})
        self.assertEqual(records[35]["event"], "note")
        self.assertEqual(records[35]["args"], {"sku": "apple", "words": "fresh\ttoday"})
        self.assertEqual((records[36]["event"], records[36]["version"]), ("add", 2))
        self.assertEqual(records[38], {"sequence": 39, "time": records[38]["time"], "at": records[38]["at"],
                                       "event": "order", "args": {"id": 9, "sku": "kiwi", "qty": 1}, "failed": True,
                                       "reason": "no sku kiwi", "version": 2})
        self.assertTrue(all("failed" not in r for r in records[:38]))
        # the history spans several segment files (so the read went past the first)
        self.assertGreaterEqual(sum(1 for n in os.listdir(self.dir) if n.startswith("log-")), 2)
        self.assertEqual(tree_digest(self.data), self.digest)

    def test_filters_as_the_http_parameters(self):
        self.check_same("limit=5", "--limit", "5")
        self.assertEqual([r["sequence"] for r in self.check_same("after=3&before=10", "--after", "3", "--before", "10")],
                         list(range(4, 10)))
        self.assertEqual([r["sequence"] for r in self.check_same("event=hit", "--event", "hit")], [38])
        self.check_same("event=add&limit=1", "--event", "add", "--limit", "1")
        self.assertEqual([(r["sequence"], r.get("failed")) for r in self.check_same("event=order", "--event", "order")],
                         [(39, True)])
        self.check_same("since=2000-01-01T00:00:00Z&limit=2", "--since", "2000-01-01T00:00:00Z", "--limit", "2")
        self.check_same("after=30", "--after", "30")
        # FILE an older version: the directory's running version (2) still names the records
        self.check_same("limit=1000", file=SHOP)
        code, out, err = run("--data", self.dir, "--events", "--since", "99999999999999", self.v2)
        self.assertEqual((code, out, err), (0, "", ""))
        self.assertEqual(tree_digest(self.data), self.digest)

    def test_bad_filters_exit_2_naming_them(self):
        for flags, message in [
            (["--limit", "0"], "--limit: expected a whole number 1 or more, got '0'"),
            (["--after", "-1"], "--after: expected a sequence number (0 or more), got '-1'"),
            (["--before", "x"], "--before: expected a sequence number (0 or more), got 'x'"),
            (["--after", "5", "--before", "6"], "--before (6) must be above after + 1 (6): no sequence lies between them"),
            (["--event", "qty"], "--event: module shop has no event 'qty'"),
            (["--since", "yesterday"],
             "--since: expected milliseconds since 1970 or a UTC time like 2026-12-07T02:30:00Z, got 'yesterday'"),
        ]:
            code, out, err = run("--data", self.dir, "--events", *flags, self.v2)
            self.assertEqual((code, out, err), (2, "", "pure-run: " + message + "\n"), flags)
        code, out, err = run("--data", self.dir, "--events", "--upgrade", self.v2)
        self.assertEqual(code, 2)
        self.assertIn("--events only reads the directory", err)
        code, out, err = run("--data", self.dir, "--limit", "3", self.v2)  # a filter needs --events
        self.assertEqual(code, 2)
        self.assertIn("--events", err)
        self.assertEqual(tree_digest(self.data), self.digest)

    def test_not_a_data_directory(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        code, out, err = run("--data", empty, "--events", self.v2)
        self.assertEqual((code, out), (4, ""))
        self.assertEqual(err, f"pure-run: --data {empty}: not a data directory: it has no version files and no log segments\n")
        self.assertEqual(os.listdir(empty), [])
        missing = os.path.join(self.tmp, "missing")
        code, out, err = run("--data", missing, "--events", self.v2)
        self.assertEqual((code, out, err), (4, "", f"pure-run: --data {missing}: no such directory\n"))
        self.assertFalse(os.path.exists(missing))
        other = os.path.join(self.tmp, "other.pure")
        shutil.copy(SHOP, other)
        code, out, err = run("--data", self.dir, "--events", other)
        self.assertEqual((code, out), (4, ""))
        self.assertIn(f"pure-run: --data {self.dir}: this data directory belongs to module 'shop', not to 'other'", err)

    def test_a_version_file_whose_upgrade_never_logged_is_not_a_version(self):
        # A crash during an upgrade can leave version-N.src without its record (the next recovery
        # deletes it): the records stay named by the version that ran them.
        copy = os.path.join(self.tmp, "pending")
        shutil.copytree(self.dir, copy)
        with open(os.path.join(copy, "version-0000000002.src"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("\nversion 2\n", text)
        self.assertIn("\nbegins 35\n", text)
        with open(os.path.join(copy, "version-0000000003.src"), "w", encoding="utf-8") as f:
            f.write(text.replace("\nversion 2\n", "\nversion 3\n").replace("\nbegins 35\n", "\nbegins 39\n"))
        code, expected, err = run("--data", self.dir, "--events", self.v2)
        self.assertEqual((code, err), (0, ""))
        code, out, err = run("--data", copy, "--events", self.v2)
        self.assertEqual((code, out, err), (0, expected, ""))

    def test_damaged_record_names_file_and_offset(self):
        copy = os.path.join(self.tmp, "damaged")
        shutil.copytree(self.dir, copy)
        first = os.path.join(copy, "log-00000000000000000001.seg")
        with open(first, "r+b") as f:
            f.seek(os.path.getsize(first) // 2)
            b = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([b[0] ^ 0xFF]))
        code, out, err = run("--data", copy, "--events", self.v2)
        self.assertEqual(code, 4, err)
        self.assertRegex(err, "^pure-run: --data " + copy + ": reading its history: " + first.replace(".", r"\.") + r": offset \d+: ")
        # nothing half printed: whole pages before the damaged one, each line whole JSON
        for line in out.splitlines():
            json.loads(line)


if __name__ == "__main__":
    PURE_RUN, PURE_SERVE = sys.argv[1], sys.argv[2]
    del sys.argv[1:3]
    unittest.main(warnings="ignore")
