#!/usr/bin/env python3
"""tests/cluster/test_cluster.py — replication on NATS JetStream (issue 35, docs/cluster.md), on a
real cluster on 127.0.0.1: three nats-server processes (JetStream, cluster routes, temporary store
directories) and three pure-serve nodes (--cluster, --node) serving tests/cluster/cluster.pure.

Sixteen clients (PURE_CLUSTER_CLIENTS) send events (client c's n-th: put(c, n), with Idempotency-Key c-n, retried on any node
until answered 200: a 307 is followed to the leader it names, a 503 or a dead connection tried on
the next node). Readers ask `count` with min_seq=(the highest seq they have seen acknowledged or
read) on any node. Meanwhile the test injects, in each of PURE_CLUSTER_ROUNDS rounds (1 by
default), these faults one after another:
  * SIGKILL of the leader, PURE_CLUSTER_CYCLES times (2 by default): another node takes events,
    and the killed one is restarted on its data directory;
  * SIGKILL of a follower, whose data directory is then deleted once the leader has trimmed the
    stream (each node checkpoints every second; the leader publishes its checkpoints and trims the
    stream below the older of the two it keeps): restarted empty once events went on without it,
    it installs the newest published checkpoint (/health installed above 0) and reads the stream
    after it (read_from above 1), and must end with the same state as the others;
  * SIGKILL of the nats-server the leader is connected to (the stream and the lease keep a quorum
    of two), restarted on its store once events went on without it;
  * SIGSTOP of the leader for longer than its lease while another node takes over, then SIGCONT
    (PURE_CLUSTER_PAUSE=0: not): the stale leader must stop leading and follow again in the same
    process (no restart; its rejoins count grows);
  * a node restarted on its data directory reads the stream from the first message its log lacks
    (/health read_from above 1);
  * SIGTERM of the leader: it exits 0 having given its lease up (a cluster_lease "released" log
    line), and the seconds until another node acknowledges an event are printed (not asserted).
PURE_CLUSTER_LEASE_MS sets the nodes' --lease-ms (1000 by default). No node may exit by itself
(pure-serve exits 5 only when the stream does not match its log).

It checks:
  * every event acknowledged with 200 is in the end state, once: for each client the rows of `done`
    are exactly 1..k with k at least its last acknowledged n, and its `totals` row counts k events
    summing to k(k+1)/2 (an event applied twice fails on the node applying it);
  * every node's state is the same at the end (both lists read whole from each node) and holds
    all of it (a follower that applied nothing fails here);
  * a read with min_seq=s answers a count of at least s (every event adds one row, so a node that
    has applied event s counts at least s): reads never go backwards, whatever node answers;
  * each killed leader was followed by another node taking events;
  * the paused leader, woken, no longer leads and follows in-process, and what it acknowledged is
    in everyone's state like the rest;
  * every node shuts down cleanly on SIGTERM (exit 0) at the end.
Exit 0 when all held (one summary line), 1 with the reason (nats-server not installed among
them: scripts/deps.sh installs it)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "serve"))
from serve_client import Conn, Server, wait_until  # noqa: E402

MODULE = os.path.join(HERE, "cluster.pure")
LEASE_MS = int(os.environ.get("PURE_CLUSTER_LEASE_MS", "1000"))


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Nats:
    """Three nats-server processes with JetStream, routed to each other."""

    def __init__(self, binary, root):
        self.binary, self.root = binary, root
        self.client_ports = free_ports(3)
        self.monitor_ports = free_ports(3)  # HTTP monitoring: /connz names each server's clients
        route_ports = free_ports(3)
        self.procs = [None, None, None]
        routes = ", ".join(f"nats-route://127.0.0.1:{p}" for p in route_ports)
        for i in range(3):
            store = os.path.join(root, f"nats{i}")
            os.makedirs(store)
            with open(os.path.join(root, f"nats{i}.conf"), "w") as f:
                f.write(f"server_name: n{i}\nlisten: 127.0.0.1:{self.client_ports[i]}\n"
                        f"http: 127.0.0.1:{self.monitor_ports[i]}\n"
                        f"jetstream {{ store_dir: \"{store}\" }}\n"
                        f"cluster {{ name: pure, listen: 127.0.0.1:{route_ports[i]}, routes: [{routes}] }}\n")
            self.start(i)

    def start(self, i):  # again after kill(i): the same ports and store directory
        log = open(os.path.join(self.root, f"nats{i}.log"), "a")
        self.procs[i] = subprocess.Popen([self.binary, "-c", os.path.join(self.root, f"nats{i}.conf")], stdout=log,
                                         stderr=subprocess.STDOUT)

    def serving(self, client_name):
        """The index of the server the client of that name is connected to (None: not found)."""
        for i in range(3):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_ports[i]}/connz?limit=1024",
                                            timeout=2) as r:
                    connz = json.loads(r.read())
            except (OSError, ValueError):
                continue
            if any(c.get("name") == client_name for c in connz.get("connections", [])):
                return i
        return None

    def stream_messages(self, name):
        """The messages a JetStream stream holds, from the first server whose monitoring answers."""
        for port in self.monitor_ports:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/jsz?accounts=true&streams=true", timeout=2) as r:
                    jsz = json.loads(r.read())
            except (OSError, ValueError):
                continue
            for account in jsz.get("account_details", []):
                for stream in account.get("stream_detail", []):
                    if stream.get("name") == name:
                        return stream.get("state", {}).get("messages", 0)
        return None

    def listening(self, i):
        try:
            socket.create_connection(("127.0.0.1", self.client_ports[i]), timeout=1).close()
            return True
        except OSError:
            return False

    def kill(self, i):
        self.procs[i].kill()
        self.procs[i].wait()

    def urls(self):
        return ",".join(f"nats://127.0.0.1:{p}" for p in self.client_ports)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


class Node:
    """One pure-serve of the cluster; restartable on its data directory and port."""

    def __init__(self, binary, name, data, nats_urls, extra=("--checkpoint-seconds", "1")):
        self.binary, self.name, self.data, self.nats_urls = binary, name, data, nats_urls
        self.extra = list(extra)  # the test's: a checkpoint each second (published, then the stream trimmed)
        self.port = 0
        self.server = None
        self.rejoined = []  # cluster_rejoined lines of its earlier processes
        self.server = None
        self.start()

    def start(self):
        if self.server:
            self.rejoined += self.server.log("cluster_rejoined")
        self.server = Server(self.binary, [MODULE], "--cluster", self.nats_urls, "--node", self.name, "--lease-ms",
                             str(LEASE_MS), "--sync", "none", *self.extra,
                             data=self.data, port=self.port, wait=60)
        self.port = self.server.port

    def alive(self):
        return self.server.proc.poll() is None

    def health(self):
        try:
            c = Conn(self.port, timeout=2)
            try:
                status, body = c.json("GET", "/health")
            finally:
                c.close()
            return body.get("cluster", {}).get("cluster")
        except (OSError, ValueError, ConnectionError):
            return None

    def kill(self):
        self.server.kill()


KILLS, PAUSES = [0], [0]
INSTALLS = []  # the checkpoint sequence each wiped follower installed
REDIRECTS = [0]  # events a follower answered 307 (to the leader): counted, the test wants some


def post_event(nodes, c, n, start):
    """put(c, n) until answered 200 (following 307s); returns the seq."""
    body = json.dumps({"client": c, "n": n})
    headers = {"Idempotency-Key": f"{c}-{n}"}
    i = start
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        node = nodes[i % len(nodes)]
        try:
            conn = Conn(node.port, timeout=3)  # a paused node: try the next one soon
            try:
                status, h, data = conn.request("POST", "/v1/cluster/put", body, headers)
                if status == 307:
                    REDIRECTS[0] += 1
                    port = int(h["location"].split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
                    conn.close()
                    conn = Conn(port, timeout=3)
                    status, h, data = conn.request("POST", "/v1/cluster/put", body, headers)
            finally:
                conn.close()
            if status == 200:
                return json.loads(data)["seq"], i
            if status not in (307, 503):
                raise AssertionError(f"put({c}, {n}) answered {status}: {data!r}")
        except (OSError, ConnectionError):
            pass
        i += 1
        time.sleep(0.02)
    raise AssertionError(f"put({c}, {n}) not acknowledged within 60 s")


class Shared:
    def __init__(self):
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.max_seq = 0
        self.acked = {}  # client -> last acknowledged n
        self.errors = []
        self.reads = 0
        self.reads_refused = 0


def client(nodes, shared, c):
    n, at = 1, c
    try:
        while not shared.stop.is_set():
            seq, at = post_event(nodes, c, n, at)
            with shared.lock:
                shared.acked[c] = n
                shared.max_seq = max(shared.max_seq, seq)
            n += 1
    except AssertionError as e:
        shared.errors.append(str(e))


def reader(nodes, shared, r):
    seen, i = 0, r
    while not shared.stop.is_set():
        with shared.lock:
            min_seq = max(seen, shared.max_seq)
        node = nodes[i % len(nodes)]
        i += 1
        try:
            conn = Conn(node.port, timeout=10)
            try:
                status, body = conn.json("POST", f"/v1/cluster/count?min_seq={min_seq}", {})
            finally:
                conn.close()
        except (OSError, ConnectionError, ValueError):
            continue
        if status == 503:
            shared.reads_refused += 1
            continue
        if status != 200:
            shared.errors.append(f"count?min_seq={min_seq} on {node.name}: {status} {body}")
            return
        count = body["result"]
        if count < min_seq:
            shared.errors.append(f"count?min_seq={min_seq} on {node.name} answered {count}: a read went backwards")
            return
        seen = count
        shared.reads += 1
        time.sleep(0.005)


def read_list(node, name):
    rows, after = [], None
    while True:
        path = f"/v1/cluster/lists/{name}?limit=1000&min_seq=1" + (f"&after={after}" if after is not None else "")
        c = Conn(node.port, timeout=10)
        try:
            status, body = c.json("GET", path)
        finally:
            c.close()
        assert status == 200, (node.name, path, status, body)
        rows += body["rows"]
        if not body.get("next"):
            return rows
        after = body["next"]


def summary(seconds):
    """The figures themselves for a short run; median, p99 and max for a long one."""
    if len(seconds) <= 20:
        return ", ".join("%.2f" % f for f in seconds)
    s = sorted(seconds)
    return "%d: median %.2f, p99 %.2f, max %.2f" % (len(s), s[len(s) // 2], s[min(len(s) - 1, len(s) * 99 // 100)], s[-1])


def rejoin_phases(e):
    """A rejoin's milliseconds, and where they went when the log line says: stopping the replica,
    closing the old owner, giving the lease up, opening the directory, the checkpoint catch-up."""
    phases = [e.get(k) for k in ("stop_ms", "close_ms", "release_ms", "open_ms", "catch_up_ms")]
    if any(p is None for p in phases):
        return str(e["millis"])
    return "%d (%s)" % (e["millis"], "/".join(str(p) for p in phases))


def leader(nodes):
    for node in nodes:
        if node.alive():
            h = node.health()
            if h and h.get("role") == "leader":
                return node
    return None


def main():
    binary = os.environ.get("PURE_SERVE")
    nats_server = shutil.which("nats-server")
    if not nats_server:
        print("cluster: FAILED: nats-server is not installed (scripts/deps.sh installs it)")
        return 1
    cycles = int(os.environ.get("PURE_CLUSTER_CYCLES", "2"))
    rounds = int(os.environ.get("PURE_CLUSTER_ROUNDS", "1"))
    clients = int(os.environ.get("PURE_CLUSTER_CLIENTS", "16"))  # issue 35: 16+ clients
    root = tempfile.mkdtemp(prefix="pure-cluster-")
    nats = Nats(nats_server, root)
    nodes = []
    shared = Shared()
    threads = []
    failovers, handovers = [], []
    try:
        if not wait_until(lambda: all(nats.listening(i) for i in range(3)), 30):
            raise AssertionError("the nats-servers do not listen within 30 s")
        for i in range(3):
            nodes.append(Node(binary, f"p{i}", os.path.join(root, f"data{i}"), nats.urls()))
        if not wait_until(lambda: leader(nodes) is not None, 30):
            raise AssertionError("no node took the lease within 30 s")
        for c in range(1, clients + 1):
            threads.append(threading.Thread(target=client, args=(nodes, shared, c), daemon=True))
        for r in range(2):
            threads.append(threading.Thread(target=reader, args=(nodes, shared, r), daemon=True))
        for t in threads:
            t.start()
        # The leader's first trims: it publishes a checkpoint a second and, from the second one, purges
        # the checkpoint stream below the older it keeps: the stream must never be empty meanwhile
        # (a purge up to sequence 1 emptied it on nats-server 2.9, and a wiped node found nothing to
        # install)
        published = lambda: (leader(nodes) and (leader(nodes).health() or {}).get("published", 0)) or 0
        if not wait_until(lambda: published() >= 2, 30):
            raise AssertionError("the leader has not published two checkpoints within 30 s")
        until = time.monotonic() + 1.5
        while time.monotonic() < until:
            held = nats.stream_messages("PURE_CKPT_cluster")
            if held == 0:
                raise AssertionError(f"the checkpoint stream is empty after {published()} published checkpoints")
            time.sleep(0.05)

        def supervise():  # no node stops by itself: a deposed leader follows again in-process
            for node in nodes:
                if not node.alive() and not getattr(node, "killed", False):
                    code = node.server.proc.returncode
                    raise AssertionError(f"{node.name} exited by itself with {code}: " +
                                         "\n".join(node.server.lines[-20:]))

        def progressed(before, other_than=None):  # an event acknowledged after `before` (by another node)
            return shared.max_seq > before and (other_than is None or (leader(nodes) or other_than) is not other_than)

        def current_leader(what):
            supervise()
            if not wait_until(lambda: leader(nodes) is not None, 20):
                raise AssertionError(f"{what}: no leader")
            return leader(nodes)

        def acked_after(what, extra=50, timeout=30):  # the cluster keeps acknowledging events
            with shared.lock:
                before = shared.max_seq
            if not wait_until(lambda: shared.max_seq > before + extra, timeout):
                raise AssertionError(f"{what}: fewer than {extra} events acknowledged within {timeout} s")

        for round_ in range(rounds):
            for cycle in range(cycles):
                time.sleep(1.0)
                if shared.errors:
                    break
                old = current_leader(f"cycle {cycle}")
                with shared.lock:
                    before = shared.max_seq
                killed_at = time.monotonic()
                old.killed = True
                old.kill()
                # another node takes the lease and acknowledges new events
                if not wait_until(lambda: progressed(before, old), 30):
                    raise AssertionError(f"cycle {cycle}: no event acknowledged by another node within 30 s of "
                                         f"killing {old.name}")
                failovers.append(time.monotonic() - killed_at)
                old.start()
                old.killed = False
                # restarted on its log, it reads the stream from the first message its log lacks
                if not wait_until(lambda: (old.health() or {}).get("read_from", 0) > 1, 20):
                    raise AssertionError(f"{old.name}, restarted on its data, does not read the stream from after "
                                         f"its log: {old.health()}")
                KILLS[0] += 1
            if shared.errors:
                break
            # A follower killed (SIGKILL) and its data directory wiped: the others go on; restarted
            # empty, it catches up and must end with the same state as the others.
            # The leader publishes a checkpoint each second (--checkpoint-seconds 1) and trims the
            # stream below the older of the two it keeps: by now the stream's start is gone.
            if not wait_until(lambda: ((current_leader("before the wipe").health() or {}).get("trimmed_below", 0) > 1), 20):
                raise AssertionError(f"the leader has not trimmed the stream: {leader(nodes).health()}")
            lead = current_leader("before killing a follower")
            follower = next(n for n in nodes if n is not lead)
            follower.killed = True
            follower.kill()
            shutil.rmtree(follower.data)
            acked_after(f"with follower {follower.name} killed")
            follower.start()
            follower.killed = False
            # restarted empty, it installs the newest published checkpoint and reads the stream after it
            def installed():
                h = follower.health() or {}
                return h.get("installed", 0) > 0 and h.get("read_from", 0) > 1

            if not wait_until(installed, 20):
                raise AssertionError(f"{follower.name}, restarted empty after a trim, did not install a checkpoint and "
                                     f"read the stream after it: {follower.health()}")
            INSTALLS.append(follower.health()["installed"])
            # One of the three NATS servers killed (SIGKILL): the stream and the lease keep a quorum
            # (two of three) and the clients reconnect to the others; restarted on its store, it
            # catches up. A leader whose publish failed meanwhile rejoins as a follower.
            # The leader's own server, when the monitoring finds it: its next publish may be lost with
            # the connection (a timeout: the leader rejoins as a follower) or go through after the
            # client reconnects to another server.
            lead = current_leader("before killing a nats-server")
            victim = nats.serving(f"pure-serve {lead.name} cluster")
            victim = round_ % 3 if victim is None else victim
            nats.kill(victim)
            acked_after(f"with nats-server n{victim} killed")
            nats.start(victim)
            acked_after(f"after nats-server n{victim} restarted")
            # A stale leader: paused (SIGSTOP) past its lease while another node takes over, then
            # woken (SIGCONT). Its next renewal finds the lease's revision moved, or its next publish
            # names a last sequence the stream has moved past: it stops acknowledging, and without
            # leaving the process (no restart) rebuilds its state from its own log and follows.
            if os.environ.get("PURE_CLUSTER_PAUSE", "1") != "0":
                time.sleep(0.5)
                stale = current_leader("before the pause")
                with shared.lock:
                    before = shared.max_seq
                rejoins_before = stale.health().get("rejoins", 0)
                pid = stale.server.proc.pid
                paused_at = time.monotonic()
                stale.server.proc.send_signal(signal.SIGSTOP)
                try:
                    if not wait_until(lambda: progressed(before, stale), 30):
                        raise AssertionError(f"no event acknowledged by another node within 30 s of pausing {stale.name}")
                    failovers.append(time.monotonic() - paused_at)
                    time.sleep(LEASE_MS / 1000.0)  # past its lease by more than a lease
                finally:
                    stale.server.proc.send_signal(signal.SIGCONT)

                def stale_follows():
                    supervise()
                    h = stale.health()
                    return bool(h) and h.get("role") == "follower" and h.get("rejoins", 0) > rejoins_before

                if not wait_until(stale_follows, 30):
                    raise AssertionError(f"{stale.name}, paused past its lease and woken, does not follow in-process: "
                                         f"{stale.health()}")
                if stale.server.proc.pid != pid or not stale.alive():
                    raise AssertionError(f"{stale.name} was restarted")
                PAUSES[0] += 1
                acked_after(f"after {stale.name} rejoined")
            # A planned restart: SIGTERM on the leader. It acknowledges its last batch, gives its
            # lease up, and exits 0; a follower takes the lease at its next look, not a lease later.
            # The handover time (SIGTERM to the next event another node acknowledges) is printed.
            lead = current_leader("before SIGTERM")
            with shared.lock:
                before = shared.max_seq
            lead.killed = True
            term_at = time.monotonic()
            lead.server.proc.send_signal(signal.SIGTERM)
            if not wait_until(lambda: progressed(before, lead), 30):
                raise AssertionError(f"no event acknowledged by another node within 30 s of SIGTERM to {lead.name}")
            handovers.append(time.monotonic() - term_at)
            try:  # not stop(): a second SIGTERM after the handlers are gone would kill it (-15)
                code = lead.server.proc.wait(20)
            except subprocess.TimeoutExpired:
                code = "nothing (still running 20 s after SIGTERM)"
            lead.server.stop()  # reads its last lines
            if code != 0:
                raise AssertionError(f"{lead.name} exited {code} on SIGTERM: " + "\n".join(lead.server.lines[-10:]))
            if not any(e.get("lease") == "released" for e in lead.server.log("cluster_lease")):
                raise AssertionError(f"{lead.name}, leading, did not give its lease up on SIGTERM: " +
                                     "\n".join(lead.server.lines[-10:]))
            lead.start()
            lead.killed = False
        time.sleep(1.0)
        shared.stop.set()
        for t in threads:
            t.join(70)
        supervise()
        if shared.errors:
            raise AssertionError("; ".join(shared.errors[:5]))

        # every node applies everything
        target = shared.max_seq

        def applied_all():
            supervise()
            for node in nodes:
                h = node.health()
                if not h or h.get("applied", 0) < target:
                    return False
            return True

        if not wait_until(applied_all, 30):
            raise AssertionError(f"not every node applied through {target}: " +
                                 ", ".join(f"{n.name}: {n.health()}" for n in nodes))
        states = []
        for node in nodes:
            states.append((read_list(node, "done"), read_list(node, "totals")))
        for node, state in zip(nodes[1:], states[1:]):
            if state != states[0]:
                raise AssertionError(f"{node.name}'s state differs from {nodes[0].name}'s "
                                     f"({len(state[0])} against {len(states[0][0])} rows of done)")
        done, totals = states[0]
        by_client = {}
        for row in done:
            by_client.setdefault(row["client"], []).append(row["n"])
        if len(shared.acked) < clients:  # every client drove events through the faults
            raise AssertionError(f"only {len(shared.acked)} of {clients} clients had an event acknowledged")
        for c, last in shared.acked.items():
            ns = sorted(by_client.get(c, []))
            k = len(ns)
            if ns != list(range(1, k + 1)) or k < last:
                raise AssertionError(f"client {c}: rows {ns[:5]}...{ns[-5:]} ({k}), last acknowledged {last}")
        for row in totals:
            k = len(by_client.get(row["client"], []))
            if row["count"] != k or row["sum"] != k * (k + 1) // 2:
                raise AssertionError(f"totals of client {row['client']}: {row} for {k} events")
        if len(done) < target:
            raise AssertionError(f"{len(done)} rows for {target} acknowledged seqs")
        # min_seq's errors, and the metrics: one leader among the nodes
        follower = next(n for n in nodes if n.health().get("role") == "follower")
        c = Conn(follower.port, timeout=20)
        try:
            status, body = c.json("POST", "/v1/cluster/count?min_seq=x", {})
            if status != 400 or "min_seq" not in body["error"]:
                raise AssertionError(f"min_seq=x answered {status} {body}")
            status, body = c.json("POST", f"/v1/cluster/count?min_seq={target + 1000}", {})
            if status != 503 or f"has applied events through {target}" not in body["error"]:
                raise AssertionError(f"min_seq past the stream answered {status} {body}")
            status, _, metrics = c.request("GET", "/metrics")
        finally:
            c.close()
        if b'pure_cluster_leader{module="cluster",role="follower"} 0' not in metrics or \
                b'pure_cluster_applied_sequence{module="cluster"} %d' % target not in metrics:
            raise AssertionError("a follower's /metrics lacks its role or applied sequence")
        # a clean shutdown of leader and followers alike (under ASan: no leak of the NATS client either)
        for node in nodes:
            code = node.server.stop()
            if code != 0:
                raise AssertionError(f"{node.name} exited {code} on SIGTERM: " + "\n".join(node.server.lines[-10:]))
        if REDIRECTS[0] == 0:
            raise AssertionError("no event sent to a follower was answered 307 to the leader")
        rejoined = [e for n in nodes for e in n.rejoined + n.server.log("cluster_rejoined")]
        # Only a node behind the trimmed stream asks the checkpoint stream when it rejoins: a leader
        # that stopped leading reads the stream after its own log (asking NATS while the client
        # moves to another server took seconds)
        for e in rejoined:
            behind = e.get("reason", "").startswith("behind the stream")
            if e.get("checkpoint_asked") != behind:
                raise AssertionError(f"a rejoin ({e.get('reason')}) says checkpoint_asked "
                                     f"{e.get('checkpoint_asked')}: only one behind the stream asks")
        print(f"cluster: ok: {rounds} round(s): {KILLS[0]} leader kills, {rounds} follower kills, {rounds} nats-server "
              f"kills, {PAUSES[0]} leaders paused past the lease, {len(handovers)} SIGTERM handovers; "
              f"{len(done)} events from {clients} clients on 3 nodes identical, wiped followers installed checkpoints "
              f"{', '.join(str(i) for i in INSTALLS)}, {shared.reads} min_seq reads ({shared.reads_refused} "
              f"refused), {REDIRECTS[0]} redirects, {len(rejoined)} in-process rejoins "
              f"({', '.join(rejoin_phases(e) for e in rejoined)} ms each), 0 self-exits; "
              f"failover seconds {summary(failovers)}; "
              f"SIGTERM handover seconds {', '.join('%.2f' % f for f in handovers)}")
        return 0
    except AssertionError as e:
        print(f"cluster: FAILED: {e}")
        for node in nodes:
            print(f"--- {node.name} (last lines)")
            print("\n".join(node.server.lines[-15:]))
        return 1
    finally:
        shared.stop.set()
        for node in nodes:
            node.kill()
        nats.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
