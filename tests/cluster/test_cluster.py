#!/usr/bin/env python3
"""tests/cluster/test_cluster.py — replication on NATS JetStream (issue 35, docs/cluster.md), on a
real cluster on 127.0.0.1: three nats-server processes (JetStream, cluster routes, temporary store
directories) and three pure-serve nodes (--cluster, --node) serving tests/cluster/cluster.pure.

Clients send events (client c's n-th: put(c, n), with Idempotency-Key c-n, retried on any node
until answered 200: a 307 is followed to the leader it names, a 503 or a dead connection tried on
the next node). Readers ask `count` with min_seq=(the highest seq they have seen acknowledged or
read) on any node. Meanwhile the test kills the leader with SIGKILL, waits for another node to take
events, and restarts the killed one on its data directory, for PURE_CLUSTER_CYCLES cycles (3 by
default), then pauses the leader with SIGSTOP for longer than its lease while another node takes
over, and wakes it (PURE_CLUSTER_PAUSE=0: not). A node that exits by itself (exit 5: deposed, as
the paused one must once woken) is restarted too, and counted, as a supervisor would.

It checks:
  * every event acknowledged with 200 is in the end state, once: for each client the rows of `done`
    are exactly 1..k with k at least its last acknowledged n, and its `totals` row counts k events
    summing to k(k+1)/2 (an event applied twice fails on the node applying it);
  * every node's state is the same at the end (both lists read whole from each node) and holds
    all of it (a follower that applied nothing fails here);
  * a read with min_seq=s answers a count of at least s (every event adds one row, so a node that
    has applied event s counts at least s): reads never go backwards, whatever node answers;
  * each killed leader was followed by another node taking events;
  * the paused leader, woken, no longer leads (deposed: exit 5, restarted as a follower), and what
    it acknowledged is in everyone's state like the rest;
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "serve"))
from serve_client import Conn, Server, wait_until  # noqa: E402

MODULE = os.path.join(HERE, "cluster.pure")
LEASE_MS = 1000


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
        self.client_ports = free_ports(3)
        route_ports = free_ports(3)
        self.procs = []
        routes = ", ".join(f"nats-route://127.0.0.1:{p}" for p in route_ports)
        for i in range(3):
            store = os.path.join(root, f"nats{i}")
            os.makedirs(store)
            conf = os.path.join(root, f"nats{i}.conf")
            with open(conf, "w") as f:
                f.write(f"server_name: n{i}\nlisten: 127.0.0.1:{self.client_ports[i]}\n"
                        f"jetstream {{ store_dir: \"{store}\" }}\n"
                        f"cluster {{ name: pure, listen: 127.0.0.1:{route_ports[i]}, routes: [{routes}] }}\n")
            log = open(os.path.join(root, f"nats{i}.log"), "w")
            self.procs.append(subprocess.Popen([binary, "-c", conf], stdout=log, stderr=subprocess.STDOUT))

    def urls(self):
        return ",".join(f"nats://127.0.0.1:{p}" for p in self.client_ports)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


class Node:
    """One pure-serve of the cluster; restartable on its data directory and port."""

    def __init__(self, binary, name, data, nats_urls):
        self.binary, self.name, self.data, self.nats_urls = binary, name, data, nats_urls
        self.port = 0
        self.server = None
        self.restarts = 0
        self.start()

    def start(self):
        self.server = Server(self.binary, [MODULE], "--cluster", self.nats_urls, "--node", self.name, "--lease-ms",
                             str(LEASE_MS), "--sync", "none", data=self.data, port=self.port, wait=60)
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
    cycles = int(os.environ.get("PURE_CLUSTER_CYCLES", "3"))
    clients = int(os.environ.get("PURE_CLUSTER_CLIENTS", "8"))
    root = tempfile.mkdtemp(prefix="pure-cluster-")
    nats = Nats(nats_server, root)
    nodes = []
    shared = Shared()
    threads = []
    failovers = []
    try:
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

        def supervise():  # a node that stopped by itself (deposed: exit 5) is started again
            for node in nodes:
                if not node.alive() and not getattr(node, "killed", False):
                    code = node.server.proc.returncode
                    if code != 5:
                        raise AssertionError(f"{node.name} exited with {code}: " + "\n".join(node.server.lines[-20:]))
                    node.restarts += 1
                    node.start()

        for cycle in range(cycles):
            time.sleep(1.0)
            supervise()
            if shared.errors:
                break
            old = leader(nodes)
            if old is None:
                if not wait_until(lambda: leader(nodes) is not None, 20):
                    raise AssertionError(f"cycle {cycle}: no leader")
                old = leader(nodes)
            with shared.lock:
                before = shared.max_seq
            killed_at = time.monotonic()
            old.killed = True
            old.kill()
            # another node takes the lease and acknowledges new events
            if not wait_until(lambda: shared.max_seq > before and (leader(nodes) or old) is not old, 30):
                raise AssertionError(f"cycle {cycle}: no event acknowledged by another node within 30 s of killing "
                                     f"{old.name}")
            failovers.append(time.monotonic() - killed_at)
            old.start()
            old.killed = False
        # A stale leader: paused (SIGSTOP) past its lease while another node takes over, then woken
        # (SIGCONT). Its next publish names a last sequence the stream has moved past, or its next
        # renewal finds the lease's revision moved: it stops acknowledging and exits 5, and the
        # supervisor (supervise) starts it again as a follower. What it acknowledged before the
        # pause is checked with the rest below; it must acknowledge nothing after it.
        stale = None
        if os.environ.get("PURE_CLUSTER_PAUSE", "1") != "0" and not shared.errors:
            time.sleep(1.0)
            supervise()
            if not wait_until(lambda: leader(nodes) is not None, 20):
                raise AssertionError("before the pause: no leader")
            stale = leader(nodes)
            with shared.lock:
                before = shared.max_seq
            paused_at = time.monotonic()
            stale.server.proc.send_signal(signal.SIGSTOP)
            try:
                if not wait_until(lambda: shared.max_seq > before and (leader(nodes) or stale) is not stale, 30):
                    raise AssertionError(f"no event acknowledged by another node within 30 s of pausing {stale.name}")
                failovers.append(time.monotonic() - paused_at)
                time.sleep(LEASE_MS / 1000.0)  # past its lease by more than a lease
            finally:
                stale.server.proc.send_signal(signal.SIGCONT)
            restarts_before = stale.restarts

            def stale_gone():
                supervise()
                if stale.restarts > restarts_before:
                    return True
                h = stale.health() if stale.alive() else None
                return bool(h) and h.get("role") != "leader"

            if not wait_until(stale_gone, 30):
                raise AssertionError(f"{stale.name}, paused past its lease and woken, still leads: {stale.health()}")
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
            supervise()  # one deposed late (its shutdown waits for its readers) is started again here
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
        restarts = sum(n.restarts for n in nodes)
        print(f"cluster: ok: {len(failovers) - (stale is not None)} leader kills"
              f"{', 1 leader paused past its lease (' + stale.name + ')' if stale else ''}, {len(done)} events on 3 nodes identical, "
              f"{shared.reads} min_seq reads ({shared.reads_refused} refused), {REDIRECTS[0]} redirects, "
              f"{restarts} self-restarts, "
              f"failover seconds {', '.join('%.2f' % f for f in failovers)}")
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
