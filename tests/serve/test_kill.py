#!/usr/bin/env python3
"""tests/serve/test_kill.py — the SIGKILL crash test over HTTP (issue 8, item 7; issue 9, item 5).

A pure-serve process on one data directory takes events from several client threads (each on its
own keep-alive connection, sending its events one after another: client c's n-th event is
put(c, n, pad(c, n))). At a random moment the test kills the server with SIGKILL, restarts it on
the same directory, and checks, from the recovered state:

  * every event acknowledged with 200 is present;
  * every event present was sent, and is whole: for each client the rows of `done` are exactly its
    events 1..k (no gaps), each with its own pad, and its `totals` row counts k events summing to
    k(k+1)/2; at most the one event in flight when the server died is present unacknowledged;
  * the seq numbers of the 200 replies are distinct and no greater than the recovered sequence.

Then the clients go on from the recovered state (client c's next event is k + 1) and the next
cycle kills again. Segments are small and checkpoints frequent (--segment-mb, --checkpoint-mb),
so kills also land in segment rolls, checkpoint writes and segment deletions, and recoveries
start from checkpoints. Usage: test_kill.py PURE_SERVE [--cycles N] [--clients N] [--seed S]
[--sync always|none] [--max-run-ms MS]. Exit 0 when every cycle passed; prints one summary line.
"""
import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.join(HERE, "kill.pure")


def pad(c, n):
    # texts of many lengths (0 to 120 bytes, some non-ASCII), so records end at many offsets
    return ("%d-%d\u00e9" % (c, n)) * ((c * 7 + n * 13) % 16)


class Client(threading.Thread):
    """Sends events n = start, start+1, ... until the connection dies; records the replies."""

    def __init__(self, port, c, start):
        super().__init__(daemon=True)
        self.port, self.c, self.next = port, c, start
        self.acked = start - 1  # the highest n acknowledged with 200
        self.sent = start - 1   # the highest n sent (its reply may never have come)
        self.seqs = []
        self.errors = []

    def run(self):
        try:
            conn = Conn(self.port, timeout=30)
        except OSError:
            return
        while True:
            n = self.next
            body = json.dumps({"client": self.c, "n": n, "pad": pad(self.c, n)})
            try:
                self.sent = n
                status, _, raw = conn.request("POST", "/v1/kill/put", body)
            except (ConnectionError, OSError):
                return
            if status != 200:
                self.errors.append((n, status, raw))
                return
            self.acked = n
            self.seqs.append(json.loads(raw)["seq"])
            self.next = n + 1


def read_state(port, bases):
    """({client: sorted [(n, pad)] for n > bases[client]}, {client: (count, sum)}, count()).
    bases[c] = 0 reads every row of client c; a higher base reads only its newer rows (the
    earlier ones were checked by an earlier cycle, and count() still covers them)."""
    conn = Conn(port, timeout=30)
    done = {}
    for c, base in bases.items():
        rows = done.setdefault(c, [])
        after = str(c * 1000000 + base)
        while after is not None:
            status, page = conn.json("GET", "/v1/kill/lists/done?limit=1000&after=" + after)
            assert status == 200, page
            after = page["next"]
            for row in page["rows"]:
                if row["client"] != c:
                    after = None
                    break
                assert row["id"] == row["client"] * 1000000 + row["n"], row
                rows.append((row["n"], row["pad"]))
    # rows of clients the test does not know (there must be none)
    status, page = conn.json("GET", "/v1/kill/lists/totals?limit=1000")
    assert status == 200 and page["next"] is None, page
    totals = {row["client"]: (row["count"], row["sum"]) for row in page["rows"]}
    status, page = conn.json("GET", "/v1/kill/lists/done?limit=1")
    assert status == 200
    if page["rows"]:
        assert page["rows"][0]["client"] in bases, "rows of an unknown client: %s" % page["rows"][0]
    status, body = conn.json("POST", "/v1/kill/count", {})
    assert status == 200
    conn.close()
    return done, totals, body["result"]


def check(state, bases, acked, sent, seqs, recovered_sequence, cycle):
    """Raises AssertionError naming the cycle when the recovered state breaks a promise. Returns
    {client: k} (the events now in the state) and how many were present unacknowledged."""
    done, totals, count = state
    where = "cycle %d: " % cycle
    assert set(totals) <= set(acked), where + "totals of unknown clients %s" % (set(totals) - set(acked))
    ks = {}
    unacked = 0
    for c in acked:
        rows = sorted(done.get(c, []))
        k = bases[c] + len(rows)
        assert [n for n, _ in rows] == list(range(bases[c] + 1, k + 1)), where + "client %d has a gap: %s" % (
            c, [n for n, _ in rows][:5] + ["..."])
        for n, p in rows:
            assert p == pad(c, n), where + "client %d event %d has pad %r" % (c, n, p)
        assert k >= acked[c], where + "client %d: acknowledged event %d lost (state has 1..%d)" % (c, acked[c], k)
        assert k <= sent[c], where + "client %d: event %d present but only 1..%d were sent" % (c, k, sent[c])
        assert k <= acked[c] + 1, where + "client %d: more than the one event in flight present" % c
        expect = (k, k * (k + 1) // 2) if k else None
        assert totals.get(c) == expect, where + "client %d: totals %s, rows say %s (half an event?)" % (
            c, totals.get(c), expect)
        unacked += k - acked[c]
        ks[c] = k
    assert count == sum(ks.values()), where + "count() is %d, the clients' rows %d: rows lost or extra" % (
        count, sum(ks.values()))
    assert len(set(seqs)) == len(seqs), where + "a seq number was acknowledged twice"
    assert not seqs or max(seqs) <= recovered_sequence, where + "acknowledged seq %d, recovered through %d" % (
        max(seqs), recovered_sequence)
    return ks, unacked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--sync", choices=["always", "none"], default="always")
    ap.add_argument("--max-run-ms", type=int, default=150, help="longest a cycle runs before the kill")
    ap.add_argument("--segment-mb", default="0.008", help="pure-serve --segment-mb (8 KB: segments roll often)")
    ap.add_argument("--checkpoint-mb", default="0.02", help="pure-serve --checkpoint-mb (20 KB: frequent checkpoints)")
    ap.add_argument("--data", default=None, help="data directory (default: a temporary one, removed after)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    data = args.data or tempfile.mkdtemp(prefix="pure-kill-")
    started = time.monotonic()
    acked = {c: 0 for c in range(1, args.clients + 1)}
    sent = dict(acked)
    total_acked = total_unacked = 0
    from_checkpoint = 0
    seqs = []
    try:
        for cycle in range(args.cycles + 1):
            server = Server(args.binary, [MODULE], "--sync", args.sync, "--segment-mb", args.segment_mb,
                            "--checkpoint-mb", args.checkpoint_mb, data=data)
            try:
                recovered = server.log("recovered")
                assert recovered, "no recovered line: %s" % server.lines
                from_checkpoint += recovered[0]["checkpoint"] > 0
                # Every row is read again every 50 cycles and at the end; otherwise the rows
                # below what an earlier cycle checked are covered by count() and the totals.
                full = cycle % 50 == 0 or cycle == args.cycles
                bases = {c: 0 if full else max(0, acked[c] - 1) for c in acked}
                state = read_state(server.port, bases)
                ks, unacked = check(state, bases, acked, sent, seqs, recovered[0]["sequence"], cycle)
                total_unacked += unacked
                if cycle == args.cycles:
                    break
                clients = [Client(server.port, c, ks[c] + 1) for c in acked]
                for t in clients:
                    t.start()
                time.sleep(rng.uniform(0, args.max_run_ms / 1000.0))
            finally:
                server.proc.send_signal(signal.SIGKILL)
                server.proc.wait()
                server._reader.join(10)
            for t in clients:
                t.join(30)
                assert not t.is_alive(), "a client hung after the kill"
                assert not t.errors, "cycle %d: client %d got %s" % (cycle, t.c, t.errors)
                total_acked += t.acked - (ks[t.c])
                acked[t.c] = t.acked
                sent[t.c] = t.sent
                seqs.extend(t.seqs)
            # seqs of earlier cycles stay distinct from later ones: sequence numbers never repeat
    except AssertionError as e:
        print("test_kill FAILED (seed %d, data %s): %s" % (seed, data, e))
        return 1
    finally:
        if not args.data and not os.environ.get("PURE_KILL_KEEP"):
            shutil.rmtree(data, ignore_errors=True)
    print("test_kill: %d cycles, %d clients, sync=%s, seed %d: %d events acknowledged, all present; "
          "%d unacknowledged present whole; %d recoveries from a checkpoint; %.1f s" % (
              args.cycles, args.clients, args.sync, seed, total_acked, total_unacked, from_checkpoint,
              time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
