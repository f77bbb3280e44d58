"""tests/serve/test_upgrade.py — hot upgrades from the outside (docs/upgrades.md, issue 33 item 4):
a real pure-serve on 127.0.0.1 serves a module with data, and PUT /v1/bank/source changes it
without a restart: the five changes that were once refused (a comment line, a code-only change, an
added field, an added list, a field renamed with `was`) each keep every row; ?plan=1 changes
nothing; a source that does not compile is a 400 naming its line, a refused plan a 409, and the
old version keeps serving (the other module never notices); an upgrade under a load of 12 clients
loses and duplicates no event, each reply's version matching its seq; a restart replays each
record with its own version; a migrate block runs hot (every row converted, replayed after a restart)
and at a restart with --upgrade, and one that fails or does not compile is a 409 with version 1
serving. Run by ctest (serve.upgrade) with PURE_SERVE set."""
import json
import os
import shutil
import sys
import tempfile
import threading
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHOP = os.path.join(HERE, "shop.pure")
warnings.simplefilter("ignore", ResourceWarning)

V1 = """list accounts by id: int { owner: text, amount: num }
event open(id: int, owner: text, v: num) { accounts[id] = { owner: owner, amount: v } }
query total() -> num {
  var t = 0.0
  for a in accounts { t += a.amount }
  return t
}
query rows() -> int { return accounts.count() }
"""
# 1. a comment line
V2 = "// the bank: accounts and their amounts\n" + V1
# 2. a code-only change: open refuses a negative amount
V3 = V2.replace("event open(id: int, owner: text, v: num) {",
                "event open(id: int, owner: text, v: num) {\n  if v < 0.0 { fail \"negative amount {v}\" }\n ")
# 3. an added field with a default
V4 = V3.replace("{ owner: text, amount: num }", "{ owner: text, amount: num, level: int = 3 }")
# 4. an added list and an event that writes it
V5 = V4 + "list audit seq { line: text }\nevent note(line: text) { audit.push({ line: line }) }\n"
# 5. a field renamed with `was`
V6 = (V5.replace("amount: num,", "balance: num was amount,")
        .replace("amount: v", "balance: v").replace("t += a.amount", "t += a.balance"))


def put(conn, source, query="", headers=None):
    status, _, body = conn.request("PUT", "/v1/bank/source" + query, source, headers)
    return status, json.loads(body)


class Upgrade(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pure-upgrade-")
        self.data = os.path.join(self.dir, "data")
        self.path = os.path.join(self.dir, "bank.pure")
        with open(self.path, "w") as f:
            f.write(V1)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def rows(self, conn):
        status, page = conn.json("GET", "/v1/bank/lists/accounts?limit=1000")
        self.assertEqual(status, 200, page)
        return page["rows"]

    def version_files(self):
        return sorted(n for n in os.listdir(os.path.join(self.data, "bank")) if n.startswith("version-"))

    def test_five_changes_keep_every_row_and_survive_a_restart(self):
        # Checkpoints every 200 bytes of log: the restart starts from one written after upgrades
        # (a checkpoint is read with the schema of the version in force at its sequence).
        server = Server(find_binary(), [self.path, SHOP], "--checkpoint-mb", "0.0002", data=self.data)
        try:
            c = Conn(server.port)
            for i in range(1, 6):
                status, reply = c.json("POST", "/v1/bank/open", {"id": i, "owner": f"o{i}", "v": float(i)})
                self.assertEqual((status, reply["version"]), (200, 1), reply)
            expected = {i: {"id": i, "owner": f"o{i}", "amount": float(i)} for i in range(1, 6)}
            steps = [(V2, False, "(the stored lists are unchanged: the code alone changes)"),
                     (V3, False, "(the stored lists are unchanged: the code alone changes)"),
                     (V4, True, "field added: level: int = 3"),
                     (V5, True, "audit: list added"),
                     (V6, True, "field renamed: amount -> balance")]
            for n, (source, changed, says) in enumerate(steps, start=2):
                status, reply = put(c, source)
                self.assertEqual(status, 200, reply)
                self.assertEqual((reply["version"], reply["upgraded"]), (n, True), reply)
                self.assertEqual(reply["plan"]["schema_changed"], changed, reply)
                self.assertIn(says, reply["plan"]["text"])
                if n == 4:
                    for row in expected.values():
                        row["level"] = 3
                if n == 6:
                    for row in expected.values():
                        row["balance"] = row.pop("amount")
                # every row kept, with the new version's fields
                self.assertEqual(sorted(self.rows(c), key=lambda r: r["id"]), list(expected.values()))
                # events run on the new version at once, and say so
                i = len(expected) + 1
                status, ev = c.json("POST", "/v1/bank/open", {"id": i, "owner": f"o{i}", "v": float(i)})
                self.assertEqual((status, ev["version"]), (200, n), ev)
                row = {"id": i, "owner": f"o{i}", "balance" if n >= 6 else "amount": float(i)}
                if n >= 4:
                    row["level"] = 3
                expected[i] = row
            # the code-only change (version 3) is in force: a negative amount fails, answered by version 6
            status, ev = c.json("POST", "/v1/bank/open", {"id": 99, "owner": "x", "v": -1.0})
            self.assertEqual((status, ev["version"]), (409, 6), ev)
            self.assertEqual(c.json("POST", "/v1/bank/note", {"line": "hello"})[0], 200)
            status, info = c.json("GET", "/v1/bank")
            self.assertEqual(info["version"], 6)
            self.assertEqual([v["version"] for v in info["versions"]], [1, 2, 3, 4, 5, 6])
            self.assertEqual(c.json("GET", "/v1/bank/source")[1]["source"], V6)
            total = c.json("POST", "/v1/bank/total", {})[1]["result"]
            self.assertEqual(total, sum(r["balance"] for r in expected.values()))
            self.assertEqual(len(server.log("upgraded")), 5, server.lines)
            before = sorted(self.rows(c), key=lambda r: r["id"])
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertEqual(len(self.version_files()), 6)
        # A restart with the source of the last version: each record replays with its own version
        # (version 1's events with no level, version 6's with balance), nothing to upgrade.
        with open(self.path, "w") as f:
            f.write(V6)
        server = Server(find_binary(), [self.path], data=self.data)
        try:
            c = Conn(server.port)
            self.assertEqual(server.log("upgraded"), [])
            self.assertEqual(sorted(self.rows(c), key=lambda r: r["id"]), before)
            self.assertEqual(c.json("GET", "/v1/bank")[1]["version"], 6)
            status, page = c.json("GET", "/v1/bank/lists/audit")
            self.assertEqual([r["line"] for r in page["rows"]], ["hello"])
            status, ev = c.json("POST", "/v1/bank/open", {"id": 50, "owner": "z", "v": 1.0})
            self.assertEqual((status, ev["version"]), (200, 6), ev)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)

    def test_plans_refusals_and_bad_sources_leave_the_old_version_serving(self):
        tokens = os.path.join(self.dir, "tokens")
        with open(tokens, "w") as f:
            f.write("write w-token-0123456789\nadmin a-token-0123456789\n")
        server = Server(find_binary(), [self.path, SHOP], "--token-file", tokens, data=self.data)
        write = {"Authorization": "Bearer w-token-0123456789"}
        admin = {"Authorization": "Bearer a-token-0123456789"}
        try:
            c = Conn(server.port)
            for i in range(1, 4):
                self.assertEqual(c.json("POST", "/v1/bank/open", {"id": i, "owner": "o", "v": 1.0}, write)[0], 200)
            rows = self.rows(c)
            # the token: none, then one of scope write, are refused; admin may
            self.assertEqual(put(c, V4)[0], 401)
            status, reply = put(c, V4, headers=write)
            self.assertEqual(status, 403, reply)
            self.assertIn("needs a token of scope admin", reply["error"])
            # ?plan=1 answers the plan and changes nothing
            dropped = V1.replace(", amount: num", "").replace(", amount: v", "").replace("t += a.amount", "t += 1.0")
            status, reply = put(c, dropped, "?plan=1", admin)
            self.assertEqual(status, 200, reply)
            self.assertEqual((reply["applied"], reply["allowed"], reply["plan"]["drops"]), (False, False, True), reply)
            self.assertIn("accounts: 3 rows: field dropped: amount", reply["plan"]["text"])
            self.assertIn("allow_drop=1 was not given", reply["reason"])
            status, reply = put(c, V4, "?plan=1", admin)
            self.assertEqual((status, reply["allowed"], reply["version"]), (200, True, 1), reply)
            self.assertEqual(self.version_files(), ["version-0000000001.src"])
            self.assertEqual(c.json("GET", "/v1/bank", headers=admin)[1]["version"], 1)
            self.assertEqual(self.rows(c), rows)
            # a drop without consent, a type change: 409 with the plan; version 1 serves on
            status, reply = put(c, dropped, "", admin)
            self.assertEqual(status, 409, reply)
            self.assertIn("loses data, and allow_drop=1 was not given", reply["error"])
            retyped = V1.replace("amount: num", "amount: int").replace("amount: v", "amount: 1").replace(
                "t += a.amount", "t += 1.0")
            status, reply = put(c, retyped, "", admin)
            self.assertEqual(status, 409, reply)
            self.assertIn("changes type from num to int", reply["error"])
            self.assertIsNotNone(reply["plan"]["refused"])
            # a migrate block that fails, one that does not compile: 409, version 1 serves on
            failing = retyped + "migrate {\n  for a in old.accounts { accounts[a.id] = { owner: a.owner, amount: 1 } }\n  fail \"not now\"\n}\n"
            status, reply = put(c, failing, "", admin)
            self.assertEqual(status, 409, reply)
            self.assertIn("the upgrade to version 2 was not applied: its migrate block failed: " + self.path +
                          ": not now\n(version 1 keeps serving)", reply["error"])
            wrong = retyped + "migrate {\n  for a in old.accounts { accounts[a.id] = { owner: a.owner, amount: a.amount } }\n}\n"
            status, reply = put(c, wrong, "", admin)
            self.assertEqual(status, 409, reply)
            self.assertIn("its migrate block does not compile against version 1's lists (version 1 keeps serving):\n" +
                          self.path + ":10:", reply["error"])
            self.assertIn("field 'amount' must be int, not num", reply["error"])
            # a source that does not compile: 400, its error located in the module's file
            broken = V1.replace("accounts[id] = { owner: owner, amount: v }", "accounts[id] = { owner: owner, amount: nope }")
            status, reply = put(c, broken, "", admin)
            self.assertEqual(status, 400, reply)
            self.assertIn("does not compile (version 1 keeps serving)", reply["error"])
            self.assertIn(self.path + ":2:", reply["error"])
            self.assertIn("nope", reply["error"])
            # an unknown parameter, a bad flag
            self.assertEqual(put(c, V4, "?force=1", admin)[0], 400)
            self.assertEqual(put(c, V4, "?plan=maybe", admin)[0], 400)
            # still version 1, every row, no version file added; the other module never noticed
            status, ev = c.json("POST", "/v1/bank/open", {"id": 9, "owner": "o", "v": 1.0}, write)
            self.assertEqual((status, ev["version"]), (200, 1), ev)
            self.assertEqual(len(self.rows(c)), 4)
            self.assertEqual(self.version_files(), ["version-0000000001.src"])
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "a"}, write)[0], 200)
            # the same source again: nothing to do
            status, reply = put(c, V1, "", admin)
            self.assertEqual((status, reply["upgraded"], reply["version"]), (200, False, 1), reply)
            # with consent, the drop is applied
            status, reply = put(c, dropped, "?allow_drop=1", admin)
            self.assertEqual((status, reply["version"]), (200, 2), reply)
            self.assertEqual(self.rows(c)[0], {"id": 1, "owner": "o"})
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)

    def test_migrate_block_at_a_restart_converts_every_row(self):
        # pure-serve --upgrade at a start runs a migrate block as pure-run --data --upgrade does:
        # amount num -> int (in cents), every row kept; a restart replays it to the same rows.
        server = Server(find_binary(), [self.path], data=self.data)
        try:
            c = Conn(server.port)
            for i in range(1, 6):
                self.assertEqual(c.json("POST", "/v1/bank/open", {"id": i, "owner": f"o{i}", "v": i * 1.5})[0], 200)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        with open(self.path, "w") as f:
            f.write("list accounts by id: int { owner: text, amount: int }\n"
                    "query rows() -> int { return accounts.count() }\n"
                    "migrate {\n"
                    "  for a in old.accounts { accounts[a.id] = { owner: a.owner, amount: int(a.amount * 100.0) } }\n"
                    "  let had = old.accounts.count()\n  print(\"converted {had} accounts\")\n"
                    "}\n")
        expected = [{"id": i, "owner": f"o{i}", "amount": int(i * 150)} for i in range(1, 6)]
        for flags in (["--upgrade"], []):
            server = Server(find_binary(), [self.path], *flags, data=self.data)
            try:
                c = Conn(server.port)
                self.assertEqual(self.rows(c), expected)
                self.assertEqual(c.json("GET", "/v1/bank")[1]["version"], 2)
                c.close()
            finally:
                self.assertEqual(server.stop(), 0)
            # What the block printed is in the server log, once: at the upgrade, not at its replay.
            printed = [(e["module"], e["version"], e["applied"], e["printed"]) for e in server.log("migrate_printed")]
            self.assertEqual(printed, [("bank", 2, True, "converted 5 accounts\n")] if flags else [], server.lines)

    def test_hot_migrate_block_converts_every_row_and_replays(self):
        # PUT /v1/bank/source with a migrate block: amount num -> int (in cents), every row kept,
        # events go on in version 2; a restart replays the block at the version record.
        server = Server(find_binary(), [self.path], data=self.data)
        migrated = ("list accounts by id: int { owner: text, amount: int }\n"
                    "event open(id: int, owner: text, v: num) { accounts[id] = { owner: owner, amount: int(v * 100.0) } }\n"
                    "migrate {\n"
                    "  for a in old.accounts { accounts[a.id] = { owner: a.owner, amount: int(a.amount * 100.0) } }\n"
                    "  print(\"hot: {accounts.count()} accounts\")\n"
                    "}\n")
        expected = [{"id": i, "owner": f"o{i}", "amount": int(i * 150)} for i in range(1, 7)]
        try:
            c = Conn(server.port)
            for i in range(1, 6):
                self.assertEqual(c.json("POST", "/v1/bank/open", {"id": i, "owner": f"o{i}", "v": i * 1.5})[0], 200)
            status, reply = put(c, migrated)
            self.assertEqual((status, reply["version"], reply["upgraded"]), (200, 2, True), reply)
            self.assertIn("accounts: 5 rows: rebuilt by the migrate block", reply["plan"]["text"])
            status, ev = c.json("POST", "/v1/bank/open", {"id": 6, "owner": "o6", "v": 9.0})
            self.assertEqual((status, ev["version"]), (200, 2), ev)
            self.assertEqual(self.rows(c), expected)
            # as of a sequence before the upgrade: that state, presented through the migrate block
            # in version 2's lists (as after the restart below)
            status, _, body = c.request("GET", "/v1/bank/lists/accounts?as_of=3")
            self.assertEqual(status, 200, body)
            page = json.loads(body)
            self.assertEqual((page["as_of"], page["rows"]), (3, expected[:3]), page)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        printed = [(e["module"], e["version"], e["applied"], e["printed"]) for e in server.log("migrate_printed")]
        self.assertEqual(printed, [("bank", 2, True, "hot: 5 accounts\n")], server.lines)
        with open(self.path, "w") as f:
            f.write(migrated)
        server = Server(find_binary(), [self.path], data=self.data)
        try:
            c = Conn(server.port)
            self.assertEqual(self.rows(c), expected)
            status, _, body = c.request("GET", "/v1/bank/lists/accounts?as_of=3")
            self.assertEqual((status, json.loads(body)["rows"]), (200, expected[:3]), body)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertEqual(server.log("migrate_printed"), [], server.lines)  # the replay prints nothing

    def test_upgrade_under_load_loses_and_duplicates_nothing(self):
        server = Server(find_binary(), [self.path], data=self.data)
        clients, per_client = 12, 60
        acknowledged = []  # (id, seq, version)
        failures = []
        lock = threading.Lock()
        # Each client sends 10 events on version 1, then 40 while the upgrades are applied, then
        # (once both are answered) 10 more, which version 3 must run.
        before, after = threading.Barrier(clients + 1), threading.Barrier(clients + 1)

        def client(k):
            conn = Conn(server.port)
            try:
                for j in range(per_client):
                    if j == 10:
                        before.wait()
                    if j == 50:
                        after.wait()
                    i = k * 1000 + j
                    status, reply = conn.json("POST", "/v1/bank/open", {"id": i, "owner": "c", "v": 1.0})
                    with lock:
                        if status == 200:
                            acknowledged.append((i, reply["seq"], reply["version"]))
                        else:
                            failures.append((status, reply))
            finally:
                conn.close()

        try:
            threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
            for t in threads:
                t.start()
            before.wait()
            c = Conn(server.port)
            # a code-only upgrade, then an added field, while the clients send
            status, reply = put(c, V3)
            self.assertEqual((status, reply["version"]), (200, 2), reply)
            status, reply = put(c, V4)
            self.assertEqual((status, reply["version"]), (200, 3), reply)
            after.wait()
            for t in threads:
                t.join()
            self.assertEqual(failures, [])
            ids = [a[0] for a in acknowledged]
            self.assertEqual(len(ids), clients * per_client)
            self.assertEqual(len(set(ids)), len(ids))
            self.assertEqual(len({a[1] for a in acknowledged}), len(ids))  # no seq twice
            self.assertEqual(c.json("POST", "/v1/bank/rows", {})[1]["result"], len(ids))
            rows = self.rows(c)
            self.assertEqual(sorted(r["id"] for r in rows), sorted(ids))
            self.assertTrue(all(r["level"] == 3 for r in rows))
            # each reply's version is the one in force at its seq
            begins = {v["version"]: v["begins"] for v in c.json("GET", "/v1/bank")[1]["versions"]}
            self.assertEqual(sorted(begins), [1, 2, 3])
            self.assertEqual({v for i, _, v in acknowledged if i % 1000 < 10}, {1})
            self.assertEqual({v for i, _, v in acknowledged if i % 1000 >= 50}, {3})
            for i, seq, version in acknowledged:
                after = begins.get(version + 1)
                self.assertTrue(begins[version] < seq and (after is None or seq < after), (i, seq, version, begins))
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
