#!/usr/bin/env python3
"""bench/serve/run.py — pure-serve's throughput and latency: events/s and queries/s with p50/p99
at several connection counts, and the server's CPU microseconds per request. Closed loop: each
keep-alive connection has one request outstanding. The client is Python (selectors, one process
per group of connections) on the same machine, so the figures include its competition for CPU.

  bench/serve/run.py [--binary build/tools/pure-serve] [--seconds 3] [--connections 1,16,64]
                     [--sync always|none] [--data DIR]

Each run starts a server on a fresh data directory (a temporary one, or under --data: put it on
the disk to measure; /tmp may be tmpfs, whose fdatasync costs nothing).
"""
import argparse
import json
import multiprocessing
import os
import selectors
import shutil
import socket
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "serve"))
from serve_client import Server, build  # noqa: E402

MODULE = os.path.join(HERE, "..", "..", "tests", "serve", "shop.pure")


def client(port, conns, seconds, kind, out):
    sel = selectors.DefaultSelector()
    if kind == "event":
        reqs = [build("POST", "/v1/shop/hit", '{"name":"k%d"}' % (i % 16)) for i in range(16)]
    else:
        reqs = [build("POST", "/v1/shop/count", '{"name":"k%d"}' % (i % 16)) for i in range(16)]
    state = {}
    for i in range(conns):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        state[s] = [b"", 0.0, i]
        sel.register(s, selectors.EVENT_READ)
    lat = []
    bad = 0
    end = time.monotonic() + seconds
    for s, st in state.items():
        st[1] = time.perf_counter()
        s.sendall(reqs[st[2] % 16])
    while time.monotonic() < end:
        for key, _ in sel.select(0.5):
            s = key.fileobj
            st = state[s]
            data = s.recv(65536)
            if not data:
                raise SystemExit("server closed a connection")
            st[0] += data
            while True:
                buf = st[0]
                h = buf.find(b"\r\n\r\n")
                if h < 0:
                    break
                cl = buf.find(b"Content-Length: ", 0, h)
                n = int(buf[cl + 16:buf.find(b"\r\n", cl)])
                if len(buf) < h + 4 + n:
                    break
                if not buf.startswith(b"HTTP/1.1 200"):
                    bad += 1
                st[0] = buf[h + 4 + n:]
                now = time.perf_counter()
                lat.append(now - st[1])
                st[2] += 1
                st[1] = now
                s.sendall(reqs[st[2] % 16])
    for s in state:
        s.close()
    out.put((lat, bad))


def run(binary, conns, seconds, kind, sync="always", data_root=None):
    data = tempfile.mkdtemp(prefix="pure-bench-serve-", dir=data_root) if data_root else None
    server = Server(binary, [MODULE], "--max-steps", "1000000", "--sync", sync, data=data)
    try:
        procs = min(2, conns)
        per = [conns // procs + (1 if i < conns % procs else 0) for i in range(procs)]
        q = multiprocessing.Queue()
        cpu0 = server.cpu_seconds()
        t0 = time.monotonic()
        ps = [multiprocessing.Process(target=client, args=(server.port, n, seconds, kind, q)) for n in per]
        for p in ps:
            p.start()
        results = [q.get() for _ in ps]
        for p in ps:
            p.join()
        wall = time.monotonic() - t0
        cpu = server.cpu_seconds() - cpu0
        lat = sorted(x for r in results for x in r[0])
        bad = sum(r[1] for r in results)
        n = len(lat)
        return {"kind": kind, "connections": conns, "sync": sync, "requests": n, "non_200": bad,
                "per_second": round(n / seconds), "p50_ms": round(lat[n // 2] * 1e3, 3),
                "p99_ms": round(lat[min(n - 1, n * 99 // 100)] * 1e3, 3),
                "server_cpu_us_per_request": round(cpu / n * 1e6, 1), "wall_s": round(wall, 2)}
    finally:
        server.stop()
        if data:
            shutil.rmtree(data, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(HERE, "..", "..", "build", "tools", "pure-serve"))
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--connections", default="1,16,64")
    ap.add_argument("--sync", choices=["always", "none"], default="always")
    ap.add_argument("--data", default=None, help="make each run's data directory under this one")
    args = ap.parse_args()
    rows = []
    for kind in ("event", "query"):
        for c in [int(x) for x in args.connections.split(",")]:
            r = run(args.binary, c, args.seconds, kind, args.sync, args.data)
            print(json.dumps(r), flush=True)
            rows.append(r)
    print()
    print("| kind | connections | req/s | p50 ms | p99 ms | server CPU µs/req |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['kind']} | {r['connections']} | {r['per_second']:,} | {r['p50_ms']} | {r['p99_ms']} | "
              f"{r['server_cpu_us_per_request']} |")


if __name__ == "__main__":
    main()
