"""tests/serve/test_backup.py — hot backups and restores from the outside (docs/history.md, "Backups
and restore"): a real pure-serve on 127.0.0.1 under a load of deposits from 4 clients takes
backups with POST /v1/asof/backup; each backup verifies (pure-run --verify), holds exactly the
acknowledged events up to the sequence it names (a model of the deposits), and a second server
started on it answers the queries the first answers as of that sequence. kill -9 during a backup
loses no acknowledged event and leaves nothing named as a complete backup; a NAME.partial left by
a crash is replaced by the next backup of NAME. `pure-run --data DIR --restore-to SEQ` at a few
sequences equals the as_of read of the original (pure-run --as-of), keeps the directory as it was,
and refuses a sequence beyond the log or past retention. Every 4xx of the route, and --backup-dir
inside --data. The shell examples of docs/history.md's "Backups and restore" run as written (paths,
the port and the sequence swapped for the test's), each answer shaped as the page shows it. Run by
ctest (serve.backup) with PURE_SERVE and PURE_RUN set."""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ASOF = os.path.join(HERE, "asof.pure")
SHOP = os.path.join(HERE, "shop.pure")
HISTORY_MD = os.path.join(HERE, "..", "..", "docs", "history.md")
NAMES = ["ann", "bob", "cy", "dee"]
SMALL = ["--checkpoint-mb", "0.0005", "--segment-mb", "0.001"]  # many checkpoints and segments
warnings.simplefilter("ignore", ResourceWarning)


def pure_run(*args):
    binary = os.environ.get("PURE_RUN")
    if not binary:
        raise RuntimeError("set PURE_RUN to the pure-run binary")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)


class Load:
    """Clients posting deposits until stopped; acked[seq] = (name, amount) of every acknowledged one.
    The backups under load and the kill during one run 16 clients, as issue 34 asks."""

    def __init__(self, port, clients=4, each=None):
        self.acked = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.errors = []
        self.threads = [threading.Thread(target=self.client, args=(port, i, each), daemon=True) for i in range(clients)]
        for t in self.threads:
            t.start()

    def client(self, port, i, each):
        try:
            c = Conn(port)
            n = 0
            while not self.stopping.is_set() and (each is None or n < each):
                name, amount = NAMES[(i + n) % len(NAMES)], 1 + (n % 7)
                status, reply = c.json("POST", "/v1/asof/deposit", {"name": name, "amount": amount})
                if status != 200:
                    self.errors.append((status, reply))
                    return
                with self.lock:
                    self.acked[reply["seq"]] = (name, amount)
                n += 1
        except (ConnectionError, OSError):
            pass  # the server was killed

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(30)

    def balances(self, through):
        out = {}
        for seq, (name, amount) in self.acked.items():
            if seq <= through:
                out[name] = out.get(name, 0) + amount
        return out


class Backups(unittest.TestCase):
    def setUp(self):
        self.binary = find_binary()
        self.dir = tempfile.mkdtemp(prefix="pure-backup-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.data = os.path.join(self.dir, "data")
        self.backups = os.path.join(self.dir, "backups")

    def state(self, c, as_of=None):
        """The balances and the journal's length, as the server answers them (as of a point)."""
        suffix = "" if as_of is None else f"?as_of={as_of}"
        joiner = "?" if as_of is None else "&"
        status, page = c.json("GET", f"/v1/asof/lists/accounts{suffix}{joiner}limit=1000")
        self.assertEqual(status, 200, page)
        status, journal = c.json("GET", f"/v1/asof/lists/journal{suffix}{joiner}limit=1")
        status, total = c.json("POST", f"/v1/asof/total{suffix}", {})
        self.assertEqual(status, 200, total)
        return {r["name"]: r["balance"] for r in page["rows"]}, journal["count"], total["result"]

    def test_backups_under_load(self):
        server = Server(self.binary, [ASOF], *SMALL, "--backup-dir", self.backups, data=self.data)
        taken = []
        try:
            load = Load(server.port, clients=16)  # issue 34: backups under a 16-client load
            c = Conn(server.port)
            for i in range(3):
                # wait for some more events (a count, not a time) before each backup
                start = len(load.acked)
                while len(load.acked) < start + 40 and not load.errors and all(t.is_alive() for t in load.threads):
                    time.sleep(0.002)
                status, reply = c.json("POST", f"/v1/asof/backup?name=b{i}", b"")
                self.assertEqual(status, 200, reply)
                self.assertEqual(reply["path"], os.path.join(os.path.realpath(self.backups), f"b{i}", "asof"))
                self.assertEqual(reply["files"], reply["linked"] + reply["copied"] + 1)  # + the manifest
                self.assertGreaterEqual(reply["linked"], 1, reply)  # same file system: checkpoints and sealed segments
                taken.append(reply)
            load.stop()
            self.assertEqual(load.errors, [])
            present = max(load.acked)
            self.assertEqual(sorted(load.acked), list(range(1, present + 1)))  # every sequence acknowledged
            for b in taken:
                s = b["sequence"]
                self.assertGreater(s, 0)
                p = pure_run("--data", b["path"], "--verify", ASOF)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn(f"sequences 1 to {s}", p.stdout)
                # the original's state as of the backup's sequence: the model's
                expect = self.state(c, s)
                self.assertEqual(expect[0], load.balances(s), s)
                # a server on the backup answers the same, at its present
                copy = Server(self.binary, [ASOF], data=b["data"])
                try:
                    cc = Conn(copy.port)
                    self.assertEqual(self.state(cc), expect)
                    status, page = cc.json("GET", "/v1/asof/events?limit=1")
                    self.assertEqual(page["through"], s)
                    cc.close()
                finally:
                    self.assertEqual(copy.stop(), 0)
            # the live directory goes on: nothing of it was moved or cut
            self.assertEqual(self.state(c)[0], load.balances(present))
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertEqual(sorted(os.listdir(self.backups)), ["b0", "b1", "b2"])

        # --restore-to at a few sequences equals the as_of read of the original
        for s in [taken[0]["sequence"], taken[0]["sequence"] + 7, present - 3]:
            want = pure_run("--data", os.path.join(self.data, "asof"), "--as-of", str(s), ASOF)
            self.assertEqual(want.returncode, 0, want.stderr)
            copy = os.path.join(self.dir, f"restore-{s}", "asof")
            shutil.copytree(os.path.join(self.data, "asof"), copy)
            p = pure_run("--data", copy, "--restore-to", str(s), ASOF)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"restored to sequence {s}", p.stdout)
            self.assertTrue(os.path.isdir(f"{copy}.before-restore-{present}"))  # kept as it was
            p = pure_run("--data", copy, "--verify", ASOF)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"sequences 1 to {s}", p.stdout)
            got = pure_run("--data", copy, ASOF)  # recovers the cut directory, runs main on it
            self.assertEqual((got.returncode, got.stdout), (0, want.stdout), s)
            # the directory as it was still holds everything
            p = pure_run("--data", f"{copy}.before-restore-{present}", "--verify", ASOF)
            self.assertIn(f"sequences 1 to {present}", p.stdout)
        # refusals: beyond the log, a bad number, nothing to cut
        copy = os.path.join(self.dir, f"restore-{present - 3}", "asof")
        p = pure_run("--data", copy, "--restore-to", str(present), ASOF)
        self.assertEqual(p.returncode, 4)
        self.assertIn(f"--restore-to {present}: sequence {present} is beyond the log: its last sequence is "
                      f"{present - 3}", p.stderr)
        p = pure_run("--data", copy, "--restore-to", "-1", ASOF)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--restore-to: expected a sequence number", p.stderr)
        p = pure_run("--data", copy, "--restore-to", str(present - 3), ASOF)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, f"{copy}: already at sequence {present - 3}: nothing to cut"))

    def test_scheduled_backups(self):
        """--backup-every 1s --backup-keep 2: a backup auto-asof-SEQ once events came since the last one
        (none while idle), the newest two kept, a backup a request named never pruned; each verifies
        and holds the model's balances at its sequence; bad options refused."""
        server = Server(self.binary, [ASOF], *SMALL, "--backup-dir", self.backups, "--backup-every", "1s",
                        "--backup-keep", "2", data=self.data)

        def scheduled():
            return sorted((int(n.rsplit("-", 1)[1]), n) for n in os.listdir(self.backups)
                          if re.fullmatch(r"auto-asof-[0-9]+", n))

        def counted():
            m = Conn(server.port)  # a connection of its own: the test's may sit idle past the server's timeout
            status, _, body = m.request("GET", "/metrics")
            m.close()
            self.assertEqual(status, 200)
            return {o: int(n) for o, n in re.findall(r'pure_scheduled_backups_total\{outcome="(\w+)"\} (\d+)', body.decode())}

        def wait_for(seq):
            # Settled: the newest is at seq, pruning is over (the server writes, then prunes, then
            # counts), and the counters say so; reading sooner raced the pruning of the tick before.
            deadline = time.time() + 30
            while time.time() < deadline:
                have = scheduled()
                busy = [n for n in os.listdir(self.backups) if n.endswith((".partial", ".pruning"))]
                if have and have[-1][0] == seq and len(have) <= 2 and not busy:
                    n = counted()
                    if n.get("written", -1) == n.get("pruned", 0) + len(have):
                        return have
                time.sleep(0.05)
            self.fail(f"no scheduled backup at sequence {seq}: {os.listdir(self.backups)}\n" + "\n".join(server.lines))

        try:
            c = Conn(server.port)
            load = Load(server.port, clients=2, each=15)
            for t in load.threads:
                t.join(30)
            self.assertEqual(load.errors, [])
            first = max(load.acked)
            before = wait_for(first)
            status, reply = c.json("POST", "/v1/asof/backup?name=keepme", b"")
            self.assertEqual(status, 200, reply)
            time.sleep(2.5)  # idle: no event came, so no new scheduled backup
            self.assertEqual(scheduled(), before)
            last = first
            for round in range(3):  # three more bursts, each followed by its backup
                more = Load(server.port, clients=2, each=10)
                for t in more.threads:
                    t.join(30)
                self.assertEqual(more.errors, [])
                load.acked.update(more.acked)
                last = max(load.acked)
                wait_for(last)
            have = scheduled()
            self.assertEqual(len(have), 2, have)  # pruned to --backup-keep
            self.assertEqual(have[-1][0], last)
            self.assertTrue(os.path.isdir(os.path.join(self.backups, "keepme", "asof")))
            self.assertFalse([n for n in os.listdir(self.backups) if n.endswith((".partial", ".pruning"))])
            status, _, body = c.request("GET", "/metrics")
            self.assertEqual(status, 200)
            text = body.decode()
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        # A tick may fall inside a burst (a backup of part of it): counted from the log, not assumed.
        written = [l["name"] for l in server.log("backup") if l["by"] == "scheduled"]
        self.assertGreaterEqual(len(written), 4)
        pruned = [l["name"] for l in server.log("backup_pruned")]
        self.assertEqual(sorted(pruned + [n for _, n in have]), sorted(written))
        self.assertIn(f"auto-asof-{first}", pruned)
        for outcome, want in [("written", len(written)), ("pruned", len(pruned)), ("failed", 0)]:
            self.assertIn(f'pure_scheduled_backups_total{{outcome="{outcome}"}} {want}\n', text)
        for seq, name in have:
            p = pure_run("--data", os.path.join(self.backups, name, "asof"), "--verify", ASOF)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"sequences 1 to {seq}", p.stdout)
            copy = Server(self.binary, [ASOF], data=os.path.join(self.backups, name))
            try:
                cc = Conn(copy.port)
                self.assertEqual(self.state(cc)[0], load.balances(seq), seq)
                cc.close()
            finally:
                self.assertEqual(copy.stop(), 0)
        # refusals at the start: a bad interval, no --backup-dir, a keep of 0
        for extra, message in [(["--backup-dir", self.backups, "--backup-every", "5x"], "'5x' is not an interval"),
                               (["--backup-every", "1h"], "--backup-every 1h: needs --backup-dir DIR"),
                               (["--backup-dir", self.backups, "--backup-every", "1h", "--backup-keep", "0"],
                                "--backup-keep")]:
            p = subprocess.run([self.binary, "--listen", "127.0.0.1:0", "--data", self.data, *extra, ASOF],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, (extra, p.stderr))
            self.assertIn(message, p.stderr)

    def test_kill_during_backup(self):
        server = Server(self.binary, [ASOF], *SMALL, "--backup-dir", self.backups, data=self.data)
        load = Load(server.port, clients=16)
        while len(load.acked) < 200 and not load.errors and all(t.is_alive() for t in load.threads):
            time.sleep(0.002)
        # a backup left half written by an earlier crash is never taken for one
        os.makedirs(os.path.join(self.backups, "k.partial", "asof"))
        with open(os.path.join(self.backups, "k.partial", "asof", "manifest"), "w") as f:
            f.write("half")
        c = Conn(server.port)
        c.send_raw(b"POST /v1/asof/backup?name=k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Content-Length: 0\r\n\r\n")
        server.proc.send_signal(signal.SIGKILL)  # during the backup or around it: each outcome is checked
        server.proc.wait()
        load.stop()
        self.assertEqual(load.errors, [])
        acked = dict(load.acked)
        names = os.listdir(self.backups)
        self.assertTrue(set(names) <= {"k", "k.partial"}, names)
        if "k" in names:  # finished before the kill: whole
            p = pure_run("--data", os.path.join(self.backups, "k", "asof"), "--verify", ASOF)
            self.assertEqual(p.returncode, 0, p.stderr)
        # restart: nothing acknowledged lost; a backup of that name replaces a partial one
        again = Server(self.binary, [ASOF], *SMALL, "--backup-dir", self.backups, data=self.data)
        try:
            c = Conn(again.port)
            balances, _, _ = self.state(c)
            status, page = c.json("GET", "/v1/asof/events?limit=1")
            through = page["through"]
            self.assertGreaterEqual(through, max(acked))
            expect = {}
            for seq, (name, amount) in acked.items():
                expect[name] = expect.get(name, 0) + amount
            for name, amount in expect.items():
                self.assertGreaterEqual(balances.get(name, 0), amount)
            self.assertEqual(self.state(c, max(acked))[0], expect)  # exactly the acknowledged prefix at its end
            if "k" in names:
                shutil.rmtree(os.path.join(self.backups, "k"))
            status, reply = c.json("POST", "/v1/asof/backup?name=k", b"")
            self.assertEqual(status, 200, reply)
            self.assertEqual(reply["sequence"], through)
            self.assertEqual(sorted(os.listdir(self.backups)), ["k"])
            p = pure_run("--data", reply["path"], "--verify", ASOF)
            self.assertEqual(p.returncode, 0, p.stderr)
            c.close()
        finally:
            self.assertEqual(again.stop(), 0)

    def test_refusals(self):
        tokens = os.path.join(self.dir, "tokens")
        with open(tokens, "w") as f:
            f.write("write w-token-0123456789\nadmin a-token-0123456789\n")
        admin = {"Authorization": "Bearer a-token-0123456789"}
        server = Server(self.binary, [ASOF], "--backup-dir", self.backups, "--token-file", tokens,
                        "--retain", "none", *SMALL, data=self.data)
        try:
            c = Conn(server.port)
            first_segment = os.path.join(self.data, "asof", "log-00000000000000000001.seg")
            while os.path.exists(first_segment):  # until a checkpoint has deleted the log it covers
                status, reply = c.json("POST", "/v1/asof/deposit", {"name": "ann", "amount": 1},
                                       {"Authorization": "Bearer w-token-0123456789"})
                self.assertEqual(status, 200, reply)
            status, reply = c.json("POST", "/v1/asof/backup?name=x", b"")
            self.assertEqual(status, 401, reply)
            status, reply = c.json("POST", "/v1/asof/backup?name=x", b"", {"Authorization": "Bearer w-token-0123456789"})
            self.assertEqual(status, 403, reply)
            self.assertIn("needs a token of scope admin", reply["error"])
            for query, message in [
                    ("name=../x", "POST /v1/asof/backup: name: '../x' is not a backup name: a backup's name is 1 to 128 "
                                  "ASCII letters, digits, '_', '-' and '.', starting with a letter or digit and not "
                                  "ending in '.partial'"),
                    ("name=", "POST /v1/asof/backup: name: '' is not a backup name: a backup's name is 1 to 128 ASCII "
                              "letters, digits, '_', '-' and '.', starting with a letter or digit and not ending in "
                              "'.partial'"),
                    ("name=a.partial", None), ("name=.hidden", None), ("name=a%2Fb", None), ("name=" + "a" * 129, None),
                    ("name=a&name=b", "POST /v1/asof/backup: name: give it once"),
                    ("to=/tmp", "POST /v1/asof/backup: unknown query parameter 'to': it takes name=NAME (the "
                                "backup's name; default MODULE-SEQUENCE)")]:
                status, reply = c.json("POST", "/v1/asof/backup?" + query, b"", admin)
                self.assertEqual(status, 400, (query, reply))
                if message:
                    self.assertEqual(reply["error"], message)
                else:
                    self.assertIn("is not a backup name", reply["error"])
            status, reply = c.json("GET", "/v1/asof/backup", None, admin)
            self.assertEqual(status, 405, reply)
            status, first = c.json("POST", "/v1/asof/backup", b"", admin)
            self.assertEqual(status, 200, first)
            self.assertEqual(first["backup"], f"asof-{first['sequence']}")
            status, reply = c.json("POST", "/v1/asof/backup?name=" + first["backup"], b"", admin)
            self.assertEqual(status, 409, reply)
            self.assertIn(f"exists: a backup's name is used once", reply["error"])
            self.assertEqual(os.listdir(self.backups), [first["backup"]])
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        # --retain none: the backup starts at the newest checkpoint; a restore before it is refused
        oldest = first["oldest"]
        self.assertGreater(oldest, 0)
        p = pure_run("--data", first["path"], "--restore-to", str(oldest - 1), ASOF)
        self.assertEqual(p.returncode, 4)
        self.assertIn(f"sequence {oldest - 1} is past the retention window: the oldest sequence this directory holds "
                      f"the state of is {oldest}", p.stderr)
        # without --backup-dir: 409
        server = Server(self.binary, [ASOF], data=self.data)
        try:
            c = Conn(server.port)
            status, reply = c.json("POST", "/v1/asof/backup?name=x", b"")
            self.assertEqual(status, 409, reply)
            self.assertEqual(reply["error"], "POST /v1/asof/backup: backups are not configured: start pure-serve with "
                                             "--backup-dir DIR (the directory backups are written into)")
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        # --backup-dir inside --data: refused at the start
        p = subprocess.run([self.binary, "--listen", "127.0.0.1:0", "--data", self.data, "--backup-dir",
                            os.path.join(self.data, "b"), ASOF], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("must be neither --data", p.stderr)


    def test_history_md_examples(self):
        """docs/history.md, "Backups and restore": each shell block's commands run in order with the
        test's paths, port and sequence; curl's answer has the keys the page shows, pure-run's first
        line starts as the page's does."""
        text = open(HISTORY_MD, encoding="utf-8").read()
        section = text[text.index("## Backups and restore"):text.index("## Scheduled backups")]
        blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
        self.assertEqual(len(blocks), 3, blocks)
        tokens = os.path.join(self.dir, "tokens")
        with open(tokens, "w") as f:
            f.write("admin ADMIN-TOKEN\nwrite WRITE-TOKEN\n")
        state = os.path.join(self.dir, "state")
        swaps = [("/srv/pure", self.data), ("/srv/backups", self.backups), ("./state", state),
                 ("shop.pure", SHOP), ("app.pure", SHOP), ("--restore-to 120", "--restore-to 2")]
        servers = []
        try:
            for block in blocks:
                lines = block.splitlines()
                for i, line in enumerate(lines):
                    if not line or line.startswith("#"):
                        continue
                    shown = []  # the answer the page shows: the comment lines after the command
                    for after in lines[i + 1:]:
                        if not after.startswith("#"):
                            break
                        shown.append(after[1:].strip())
                    for old, new in swaps:
                        line = line.replace(old, new)
                    if servers:
                        line = line.replace("127.0.0.1:8080", f"127.0.0.1:{servers[-1].port}")
                    args = shlex.split(line)
                    if args[0] == "pure-serve":
                        data = args[args.index("--data") + 1]
                        rest = [a for j, a in enumerate(args[1:], 1)
                                if a != "--data" and args[j - 1] != "--data" and not a.endswith(".pure")]
                        server = Server(self.binary, [SHOP], *rest, "--token-file", tokens, data=data)
                        servers.append(server)
                        if len(servers) == 1:  # events to back up, then a copy to restore
                            c = Conn(server.port)
                            for sku, qty in [("apple", 10), ("pear", 3), ("fig", 4)]:
                                status, reply = c.json("POST", "/v1/shop/add",
                                                       {"sku": sku, "qty": qty, "price": 0.5, "active": True},
                                                       {"Authorization": "Bearer WRITE-TOKEN"})
                                self.assertEqual(status, 200, reply)
                            c.close()
                        continue
                    if args[0] == "pure-run":
                        if "--restore-to" in args:  # a stopped directory: the data directory's copy
                            servers[0].stop()
                            shutil.copytree(os.path.join(self.data, "shop"), state)
                        p = pure_run(*args[1:])
                        self.assertEqual(p.returncode, 0, (line, p.stderr))
                        if shown:
                            head = shown[0].split("(")[0].replace("./state", state).replace("120", "2")
                            self.assertTrue(p.stdout.startswith(head), (p.stdout, head))
                        continue
                    self.assertEqual(args[0], "curl", line)
                    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    answer = json.loads(p.stdout)
                    self.assertEqual(sorted(answer), sorted(json.loads(" ".join(shown))), p.stdout)
                    self.assertEqual((answer["backup"], answer["sequence"]), ("nightly-1", 3))
        finally:
            for server in servers:
                server.stop()
        self.assertEqual(len(servers), 2)


if __name__ == "__main__":
    unittest.main()
