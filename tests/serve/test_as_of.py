"""tests/serve/test_as_of.py — reads as of a past point from the outside (docs/history.md): a real
pure-serve on 127.0.0.1 takes random events (some failing) under checkpoints every half kilobyte
of log, while the test keeps a model of the state after every sequence; then queries and list
pages with as_of=SEQ at random sequences (spread across the checkpoints) must answer what the
model held then, naming the sequence, on the interpreter and the JIT; as_of_time maps a commit
time to the last sequence committed at or before it; a point past the retention window is a 410
with the oldest readable sequence, one beyond the present a 400. `pure-run --data DIR --as-of SEQ`
runs main against the same past state, read only; `pure-run --data DIR --verify` checks a copy and finds a
changed byte in a record or a checkpoint, and a checkpoint whose state was changed with its checksums
made right (the replay compared with it). Failed events are audit-only records: as of one, the
state before it. Run by ctest (serve.as_of) with PURE_SERVE and
PURE_RUN set."""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ASOF = os.path.join(HERE, "asof.pure")
NAMES = ["ann", "bob", "cy", "dee", "eve", "fay"]
warnings.simplefilter("ignore", ResourceWarning)


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli), as host/crc32c.h computes it."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def change_a_balance(path):
    """Adds 1 to the first account's balance in a checkpoint and makes its block's checksum right
    again (durability.md, "Checkpoint"): every checksum good, the state wrong."""
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        offset = 0
        while True:
            length = int.from_bytes(data[offset:offset + 4], "little")
            payload = offset + 8
            kind, list_index = data[payload], int.from_bytes(data[payload + 1:payload + 5], "little")
            if kind == 2 and list_index == 0:  # rows of accounts: name (u32 length, bytes), balance (u64)
                name = int.from_bytes(data[payload + 9:payload + 13], "little")
                at = payload + 13 + name
                balance = int.from_bytes(data[at:at + 8], "little")
                data[at:at + 8] = (balance + 1).to_bytes(8, "little")
                crc = crc32c(bytes(data[payload:payload + length]), crc32c(bytes(data[offset:offset + 4])))
                data[offset + 4:offset + 8] = crc.to_bytes(4, "little")
                f.seek(0)
                f.write(data)
                return balance
            offset = payload + length


def has_jit(binary):
    help_text = subprocess.run([binary, "--help"], capture_output=True, timeout=20).stdout
    return b"PURE_JIT=1 (the default)" in help_text


def checkpoints(directory):
    return sorted(int(n[len("checkpoint-"):-len(".ckpt")]) for n in os.listdir(directory)
                  if n.startswith("checkpoint-") and n.endswith(".ckpt"))


class AsOf(unittest.TestCase):
    def setUp(self):
        self.binary = find_binary()
        self.dir = tempfile.mkdtemp(prefix="pure-asof-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def drive(self, c, rng, count):
        """Random deposits and withdrawals (about a third of the withdrawals fail: logged as audit-only records);
        returns states[s] = {name: balance} after sequence s, and the journal's length."""
        states = [({}, 0)]
        balances, journal = {}, 0
        for _ in range(count):
            name = rng.choice(NAMES)
            amount = rng.randint(1, 40)
            deposit = rng.random() < 0.6
            status, reply = c.json("POST", "/v1/asof/" + ("deposit" if deposit else "withdraw"),
                                   {"name": name, "amount": amount})
            ok = deposit or balances.get(name, -1) >= amount
            if not ok:
                self.assertEqual(status, 409, reply)
                # an audit-only record (--audit-failed, the default): it takes a sequence and the
                # state as of it is the state before it
                states.append((balances, journal))
                continue
            self.assertEqual(status, 200, reply)
            balances = dict(balances)
            balances[name] = balances.get(name, 0) + (amount if deposit else -amount)
            journal += 1
            states.append((balances, journal))
            self.assertEqual(reply["seq"], len(states) - 1)
        return states

    def check_point(self, c, states, s):
        balances, journal = states[s]
        for name in NAMES:
            status, reply = c.json("POST", f"/v1/asof/balance?as_of={s}", {"name": name})
            self.assertEqual(status, 200, reply)
            self.assertEqual(reply, {"result": balances.get(name, 0), "as_of": s}, (s, name))
        status, reply = c.json("POST", f"/v1/asof/total?as_of={s}", {})
        self.assertEqual(reply, {"result": sum(balances.values()), "as_of": s})
        status, page = c.json("GET", f"/v1/asof/lists/accounts?as_of={s}&limit=1000")
        self.assertEqual(status, 200, page)
        self.assertEqual(page["as_of"], s)
        self.assertEqual({r["name"]: r["balance"] for r in page["rows"]}, balances)
        # a page through the cursor, at the same point
        if len(balances) > 2:
            status, first = c.json("GET", f"/v1/asof/lists/accounts?as_of={s}&limit=2")
            self.assertEqual(status, 200, first)
            status, rest = c.json("GET", f"/v1/asof/lists/accounts?limit=1000&after={first['next']}&as_of={s}")
            self.assertEqual(status, 200, rest)
            self.assertEqual({r["name"]: r["balance"] for r in first["rows"] + rest["rows"]}, balances)
        status, page = c.json("GET", f"/v1/asof/lists/journal?as_of={s}&limit=1")
        self.assertEqual(page["count"], journal)

    def session(self, env, seed):
        data = os.path.join(self.dir, "data-" + env["PURE_JIT"])
        server = Server(self.binary, [ASOF], "--checkpoint-mb", "0.0005", "--segment-mb", "0.001", data=data, env=env)
        rng = random.Random(seed)
        try:
            c = Conn(server.port)
            states = self.drive(c, rng, 300)
            present = len(states) - 1
            kept = checkpoints(os.path.join(data, "asof"))
            self.assertGreaterEqual(len(kept), 2, kept)  # the points below fall on both sides of them
            points = sorted(set(rng.sample(range(0, present + 1), 25) + [0, 1, present] + kept +
                                [k + 1 for k in kept if k < present]))
            for s in points:
                self.check_point(c, states, s)
            # the present: as the live state
            status, live = c.json("POST", "/v1/asof/total", {})
            self.assertEqual(live["result"], sum(states[present][0].values()))
            # beyond the present: a 400 naming it, not a wait
            status, reply = c.json("POST", f"/v1/asof/total?as_of={present + 1}", {})
            self.assertEqual(status, 400, reply)
            self.assertEqual(reply["error"], f"as_of: sequence {present + 1} is beyond the present: the newest "
                                             f"durable sequence is {present}")
            # bad parameters: 400 naming them
            for query, message in [("as_of=x", "as_of: expected a sequence number (a whole number 0 or more), "
                                                "got 'x' (a time goes in as_of_time)"),
                                   ("as_of=-1", "as_of: expected a sequence number (a whole number 0 or more), "
                                                "got '-1' (a time goes in as_of_time)"),
                                   ("as_of=1&as_of=2", "as_of: give one of as_of and as_of_time, once"),
                                   ("as_of_time=yesterday", "as_of_time: expected milliseconds since 1970 or a "
                                                            "UTC time like 2026-12-07T02:30:00Z, got 'yesterday'")]:
                status, reply = c.json("POST", "/v1/asof/total?" + query, {})
                self.assertEqual((status, reply["error"]), (400, message), query)
                status, reply = c.json("GET", "/v1/asof/lists/accounts?" + query)
                self.assertEqual((status, reply["error"]), (400, message), query)
            # as_of_time: the last sequence committed at or before the time
            status, page = c.json("GET", "/v1/asof/events?limit=1000")
            times = {e["sequence"]: e["time"] for e in page["events"]}
            for s in rng.sample(sorted(times), 5):
                t = times[s]
                expect = max(q for q in times if times[q] <= t)
                status, reply = c.json("POST", f"/v1/asof/total?as_of_time={t}", {})
                self.assertEqual(status, 200, reply)
                self.assertEqual(reply, {"result": sum(states[expect][0].values()), "as_of": expect})
            status, reply = c.json("POST", "/v1/asof/total?as_of_time=2000-01-01T00%3A00%3A00Z", {})
            self.assertEqual(reply, {"result": 0, "as_of": 0})  # before the first record: the empty state
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        return data, states

    def test_as_of_against_a_model(self):
        engines = [{"PURE_JIT": "0"}] + ([{"PURE_JIT": "sync"}] if has_jit(self.binary) else [])
        for env in engines:
            data, states = self.session(env, seed=34)
        # pure-run --as-of: main against the same past state, read only (the directory is unchanged)
        pure_run = os.environ.get("PURE_RUN")
        if not pure_run:
            return
        directory = os.path.join(data, "asof")
        before = {n: os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory)}
        for s in [0, 1, len(states) // 2, len(states) - 1]:
            p = subprocess.run([pure_run, "--data", directory, "--as-of", str(s), ASOF], capture_output=True,
                               timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            balances, journal = states[s]
            lines = [f"{n} {balances[n]}" for n in sorted(balances)] + [f"journal {journal}"]
            self.assertEqual(p.stdout.decode().splitlines(), lines, s)
        p = subprocess.run([pure_run, "--data", directory, "--as-of", str(len(states)), ASOF], capture_output=True,
                           timeout=60)
        self.assertEqual(p.returncode, 4)
        self.assertIn(f"before sequence {len(states)}", p.stderr.decode())
        after = {n: os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory)}
        self.assertEqual(before, after)

        # pure-run --verify: a copy checks out whole; a byte changed in a record or a checkpoint of
        # another copy is found, named by its file (and offset), exit code 4
        p = subprocess.run([pure_run, "--data", directory, "--verify", ASOF], capture_output=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.decode()
        self.assertIn(f"records (sequences 1 to {len(states) - 1}): every checksum good, no gap", out)
        self.assertIn("checkpoints (sequences ", out)
        self.assertIn(f"stretches from sequence 0 up to sequence {len(states) - 1}: every event applied; "
                      f"{len(checkpoints(directory))} checkpoints equal to the replayed state", out)
        self.assertTrue(out.endswith(f"{directory}: verified\n"), out)
        segments = sorted(n for n in os.listdir(directory) if n.startswith("log-"))
        kept = checkpoints(directory)
        for victim, offset, named in [(segments[len(segments) // 2], 50, "offset 40: record checksum mismatch"),
                                      ("checkpoint-%020d.ckpt" % kept[0], None, "checkpoint-")]:
            copy = os.path.join(self.dir, "copy-" + victim)
            shutil.copytree(directory, copy)
            path = os.path.join(copy, victim)
            with open(path, "r+b") as f:
                at = offset if offset is not None else os.path.getsize(path) // 2
                f.seek(at)
                byte = f.read(1)
                f.seek(at)
                f.write(bytes([byte[0] ^ 0x01]))
            p = subprocess.run([pure_run, "--data", copy, "--verify", ASOF], capture_output=True, timeout=120)
            self.assertEqual(p.returncode, 4, (victim, p.stdout, p.stderr))
            err = p.stderr.decode()
            self.assertIn(f"pure-run: --data {copy}: --verify: damaged: {path}", err)
            self.assertIn(named, err)
            self.assertNotIn("verified", p.stdout.decode())
        # A checkpoint changed consistently (its block's checksum made right again): every checksum is
        # good, but its state is not the log's. The replay from the oldest point catches it, naming
        # its sequence and the first difference; the untouched copy above verified.
        for victim in [kept[0], kept[-1]]:
            copy = os.path.join(self.dir, "consistent-%d" % victim)
            shutil.copytree(directory, copy)
            path = os.path.join(copy, "checkpoint-%020d.ckpt" % victim)
            balance = change_a_balance(path)
            p = subprocess.run([pure_run, "--data", copy, "--verify", ASOF], capture_output=True, timeout=120)
            self.assertEqual(p.returncode, 4, (victim, p.stdout, p.stderr))
            err = p.stderr.decode()
            self.assertIn(f"pure-run: --data {copy}: --verify: damaged: {path}: the checkpoint's state is not the "
                          f"log's replayed to sequence {victim}: list 'accounts': row 1, column 2: {balance + 1} here, "
                          f"{balance} there (here: the checkpoint, there: the replay)", err)
            self.assertIn("every one read whole, every checksum good", p.stdout.decode())

    def test_past_retention_is_410(self):
        data = os.path.join(self.dir, "data")
        server = Server(self.binary, [ASOF], "--checkpoint-mb", "0.0005", "--segment-mb", "0.001",
                        "--retain", "none", data=data)
        try:
            c = Conn(server.port)
            states = self.drive(c, random.Random(7), 200)
            present = len(states) - 1
            # The checkpoint thread may still be writing one (each deletes the history before it):
            # the oldest readable point is read from the 410 and then read as of, until they agree.
            for _ in range(50):
                status, reply = c.json("POST", "/v1/asof/total?as_of=1", {})
                self.assertEqual(status, 410, reply)
                oldest = reply["oldest"]
                self.assertGreater(oldest, 1)
                self.assertEqual(reply["error"], f"as_of: sequence 1 is past the retention window: the oldest "
                                                 f"sequence this directory can be read as of is {oldest}")
                status, at_oldest = c.json("POST", f"/v1/asof/total?as_of={oldest}", {})
                if status == 200:
                    break
            # the oldest readable point itself still reads
            self.assertEqual(at_oldest, {"result": sum(states[oldest][0].values()), "as_of": oldest})
            status, reply = c.json("GET", f"/v1/asof/lists/accounts?as_of={oldest - 1}")
            self.assertEqual(status, 410, reply)
            self.assertGreaterEqual(reply["oldest"], oldest)
            status, reply = c.json("POST", f"/v1/asof/total?as_of={present}", {})
            self.assertEqual(reply, {"result": sum(states[present][0].values()), "as_of": present})
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)

    def test_a_failed_query_names_its_sequence(self):
        """A query that fails (409) as of a point names the sequence it read, as an answer does:
        the account did not exist then, and does now."""
        server = Server(self.binary, [ASOF], data=os.path.join(self.dir, "data"))
        try:
            c = Conn(server.port)
            for name, amount in (("ann", 5), ("bob", 7)):
                self.assertEqual(c.json("POST", "/v1/asof/deposit", {"name": name, "amount": amount})[0], 200)
            self.assertEqual(c.json("POST", "/v1/asof/owned?as_of=1", {"name": "bob"}),
                             (409, {"reason": "no account bob", "as_of": 1}))
            self.assertEqual(c.json("POST", "/v1/asof/owned?as_of=2", {"name": "bob"}), (200, {"result": 7, "as_of": 2}))
            self.assertEqual(c.json("POST", "/v1/asof/owned", {"name": "cy"}), (409, {"reason": "no account cy"}))
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
