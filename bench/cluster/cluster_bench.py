#!/usr/bin/env python3
"""bench/cluster/cluster_bench.py: replication on NATS JetStream (docs/cluster.md) on 127.0.0.1:
a real three-node NATS cluster and three pure-serve nodes, as tests/cluster/test_cluster.py starts
them (its Nats and Node classes), serving tests/cluster/cluster.pure (one put event per request).

Lines (JSON, shared/design/bench-format.md; progress on stderr):
  * cluster.events: events per second at T terminals (each one connection, one put at a time)
    against the cluster's leader, and (system "pure-serve") against one pure-serve without
    --cluster, same flags otherwise; runs alternate, the median is reported, with ratio_to the
    single node;
  * cluster.lag: the followers' lag (events the stream holds that they have not applied, /health),
    sampled every 20 ms during the cluster runs: p50 and p99;
  * cluster.failover: from SIGKILL of the leader (under load) to the next event another node
    acknowledges, median and max over R kills (the lease: --lease-ms);
  * cluster.catch_up: a node started with an empty data directory once the module holds E events,
    from its start to having applied them all (per_second: events caught up per second), with the
    checkpoint transfer (system "pure-cluster", the leader publishes a checkpoint a second) and
    without it (system "pure-cluster-replay": no checkpoints, the node replays the whole stream).

Usage: cluster_bench.py PURE_SERVE [--terminals 64] [--seconds 5] [--runs 2] [--kills 3] [--events 20000]"""
import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "cluster"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "serve"))
import test_cluster as tc  # noqa: E402
from serve_client import Conn, Server, wait_until  # noqa: E402


def log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def emit(line):
    line.setdefault("machine", platform.machine())
    print(json.dumps(line), flush=True)


def load(port_of, terminals, seconds, first_client, acked=None):
    """terminals threads, each posting put(c, n) on one kept-alive connection for `seconds`;
    returns events acknowledged. port_of() names the node to send to (re-read after an error)."""
    count = [0] * terminals
    stop = time.monotonic() + seconds

    def terminal(t):
        c, n, conn = first_client + t, 1, None
        while time.monotonic() < stop:
            try:
                if conn is None:
                    conn = Conn(port_of(), timeout=5)
                status, h, data = conn.request("POST", "/v1/cluster/put", json.dumps({"client": c, "n": n}),
                                               {"Idempotency-Key": f"{c}-{n}"})
            except (OSError, ConnectionError, ValueError):
                if conn:
                    conn.close()
                conn = None
                time.sleep(0.01)
                continue
            if status == 200:
                n += 1
                count[t] += 1
                if acked is not None:
                    acked(json.loads(data)["seq"], conn.sock.getpeername()[1])
            else:
                conn.close()
                conn = None
                time.sleep(0.01)
        if conn:
            conn.close()

    threads = [threading.Thread(target=terminal, args=(t,), daemon=True) for t in range(terminals)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(count)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else 0


class Cluster:
    def __init__(self, binary, nats_server, root, extra):
        self.root = root
        self.nats = tc.Nats(nats_server, root)
        if not wait_until(lambda: all(self.nats.listening(i) for i in range(3)), 30):
            raise RuntimeError("the nats-servers do not listen")
        self.nodes = [tc.Node(binary, f"p{i}", os.path.join(root, f"data{i}"), self.nats.urls(), extra) for i in range(3)]
        if not wait_until(lambda: tc.leader(self.nodes) is not None, 30):
            raise RuntimeError("no leader")

    def leader_port(self):
        lead = tc.leader(self.nodes)
        return lead.port if lead else self.nodes[0].port

    def stop(self):
        for n in self.nodes:
            n.kill()
        self.nats.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pure_serve")
    ap.add_argument("--terminals", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--events", type=int, default=20000)
    a = ap.parse_args()
    nats_server = shutil.which("nats-server")
    if not nats_server:
        log("cluster_bench: nats-server is not installed (scripts/deps.sh)")
        return 1
    root = tempfile.mkdtemp(prefix="pure-cluster-bench-")
    common = ("--checkpoint-seconds", "1")
    try:
        cluster = Cluster(a.pure_serve, nats_server, os.path.join(root, "c"), common)
        single = Server(a.pure_serve, [tc.MODULE], "--sync", "none", *common, data=os.path.join(root, "single"))
        rates = {"pure-serve": [], "pure-cluster": []}
        lags = []
        client = 1
        for run in range(a.runs):
            for system in ("pure-serve", "pure-cluster"):
                sampling = threading.Event()

                def sample():
                    while not sampling.is_set():
                        for n in cluster.nodes:
                            h = n.health() or {}
                            if h.get("role") == "follower":
                                lags.append(h.get("lag", 0))
                        time.sleep(0.02)

                sampler = None
                if system == "pure-cluster":
                    sampler = threading.Thread(target=sample, daemon=True)
                    sampler.start()
                port_of = (lambda: single.port) if system == "pure-serve" else cluster.leader_port
                started = time.monotonic()
                done = load(port_of, a.terminals, a.seconds, client)
                elapsed = time.monotonic() - started
                sampling.set()
                if sampler:
                    sampler.join()
                client += a.terminals
                rates[system].append(done / elapsed)
                log(f"run {run} {system}: {done} events in {elapsed:.2f} s ({done / elapsed:.0f}/s), "
                    f"load {os.getloadavg()[0]:.1f}")
        base = statistics.median(rates["pure-serve"])
        for system, r in rates.items():
            emit({"bench": "cluster.events", "system": system, "per_second": round(statistics.median(r)),
                  "runs": len(r), "terminals": a.terminals, "ratio_to": "pure-serve",
                  "ratio": round(statistics.median(r) / base, 3), "load": round(os.getloadavg()[0], 1)})
        emit({"bench": "cluster.lag", "system": "pure-cluster", "p50_events": percentile(lags, 50),
              "p99_events": percentile(lags, 99), "max_events": max(lags) if lags else 0, "samples": len(lags),
              "runs": a.runs, "median_ms": 0})
        single.stop()

        # failover: kill the leader under load, time to the next event another node acknowledges
        failovers = []
        for k in range(a.kills):
            last = {"seq": 0, "at": 0.0, "by": None}
            lock = threading.Lock()
            old = tc.leader(cluster.nodes)
            killed = [None]

            def acked(seq, port):  # the first event another node acknowledges after the kill
                with lock:
                    now = time.monotonic()
                    if killed[0] is not None and last["by"] is None and port != old.port and seq > last["seq"]:
                        last["by"] = now - killed[0]
                    last["seq"] = max(last["seq"], seq)

            t = threading.Thread(target=load, args=(cluster.leader_port, 16, 4 + tc.LEASE_MS / 1000 * 3, client, acked),
                                 daemon=True)
            client += 16
            t.start()
            time.sleep(1.0)
            with lock:
                killed[0] = time.monotonic()
            old.kill()
            t.join()
            if last["by"] is not None:
                failovers.append(last["by"] * 1000)
                log(f"kill {k}: next event acknowledged {last['by']:.2f} s after the kill")
            old.start()
            wait_until(lambda: (old.health() or {}).get("role") == "follower", 30)
        emit({"bench": "cluster.failover", "system": "pure-cluster", "median_ms": round(statistics.median(failovers)),
              "max_ms": round(max(failovers)), "runs": len(failovers), "lease_ms": tc.LEASE_MS,
              "load": round(os.getloadavg()[0], 1)})
        cluster.stop()

        # catch-up of a node started empty, with the checkpoint transfer and without (no checkpoints)
        for system, extra in (("pure-cluster", common), ("pure-cluster-replay", ("--checkpoint-seconds", "0",
                                                                                  "--checkpoint-mb", "0"))):
            c = Cluster(a.pure_serve, nats_server, os.path.join(root, system), extra)
            filled = 0
            while filled < a.events:
                filled += load(c.leader_port, a.terminals, 2, client)
                client += a.terminals
            target = max((n.health() or {}).get("stream_events", 0) for n in c.nodes)
            time.sleep(2.5)  # two checkpoints published since (the transfer's case)
            # from the process start (it listens, recovers, fetches and installs, reads) to all applied
            began = time.monotonic()
            fresh = tc.Node(a.pure_serve, "fresh", os.path.join(root, system + "-fresh"), c.nats.urls(), extra)
            ok = wait_until(lambda: (fresh.health() or {}).get("applied", 0) >= target, 120)
            seconds = time.monotonic() - began
            h = fresh.health() or {}
            log(f"{system}: an empty node caught up {target} events in {seconds:.2f} s "
                f"(installed {h.get('installed')}, read_from {h.get('read_from')}), ok {ok}")
            emit({"bench": "cluster.catch_up", "system": system, "median_ms": round(seconds * 1000), "runs": 1,
                  "events": target, "per_second": round(target / seconds) if seconds > 0 else 0,
                  "installed": h.get("installed", 0), "load": round(os.getloadavg()[0], 1)})
            fresh.kill()
            c.stop()
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
