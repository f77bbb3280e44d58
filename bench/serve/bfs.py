#!/usr/bin/env python3
"""bench/serve/bfs.py — BFS over HTTP: bench/bfs's module served by pure-serve, its `search` query
called over one keep-alive connection, beside the same search in process (pure-run) and in C.

  bench/serve/bfs.py [--runs 3] [--searches 5] [--quick] [--binary build/tools/pure-serve]
                     [--pure-run build/tools/pure-run] [--engines interp,jit]

Each run, alternating: `bench/run --only bfs --systems pure,pure-jit,c --runs 1` (Pure in process,
interpreted and JIT-compiled, and C on the same generated graph: processor time per search), then
the HTTP measurement on each server: `pure-serve` (PURE_JIT=0, the interpreter) and
`pure-serve-jit` (PURE_JIT=1: the searches' loops tier up on the I/O thread as in pure-run, the
compile included in the first run's time). The graph is loaded once into a data directory with
`pure-run --data` (bench/bfs/bfs.pure with ROUNDS = 0 applies every edge as an event), copied
once per server, and each pure-serve recovers its copy. Per search over HTTP: the server's
processor time (utime + stime from /proc, over all searches of the run) and the client's wall
latency. Prints JSON lines (shared/design/bench-format.md); progress on stderr.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from serve_client import Conn, Server  # noqa: E402
import graph  # noqa: E402

SIZES = {"full": (100000, 1000000), "quick": (10000, 100000)}  # as bench/lib/bfs_bench.py
MODULE = os.path.join(ROOT, "bench", "bfs", "bfs.pure")


def log(message):
    print(message, file=sys.stderr, flush=True)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


ENGINES = {"interp": ("pure-serve", "pure", "0"), "jit": ("pure-serve-jit", "pure-jit", "1")}  # server, in process, PURE_JIT


def in_process(options, systems):
    """Pure (the engines asked for) and C per search from bench/run, as {system: (median_ms, check)}."""
    command = [sys.executable, os.path.join(ROOT, "bench", "run"), "--only", "bfs", "--systems", ",".join(systems + ["c"]),
               "--runs", "1", "--pure-run", options.pure_run] + (["--quick"] if options.quick else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        row = json.loads(line)
        if row.get("bench") == "bfs" and "median_ms" in row and row.get("system") in systems + ["c"]:
            found[row["system"]] = (row["median_ms"], row.get("check"))
    if set(found) != set(systems + ["c"]):
        raise SystemExit("bench/run did not report %s for bfs:\n%s" % (", ".join(systems + ["c"]), out))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--searches", type=int, default=5, help="rounds of the five start nodes per run")
    parser.add_argument("--quick", action="store_true", help="the small graph (10,000 nodes, 100,000 edges)")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "tools", "pure-serve"))
    parser.add_argument("--pure-run", default=os.path.join(ROOT, "build", "tools", "pure-run"))
    parser.add_argument("--engines", default="interp,jit", help="comma-separated: interp (PURE_JIT=0), jit (PURE_JIT=1)")
    options = parser.parse_args()
    if options.runs < 1 or options.searches < 1:
        parser.error("--runs and --searches must be at least 1")
    engines = [e for e in options.engines.split(",") if e]
    if not engines or any(e not in ENGINES for e in engines):
        parser.error("--engines takes interp and/or jit")
    for path in (options.binary, options.pure_run):
        if not os.access(path, os.X_OK):
            parser.error("%s is not built" % path)

    nodes, edges = SIZES["quick" if options.quick else "full"]
    work = tempfile.mkdtemp(prefix="pure-bfs-http-")
    try:
        graph_path = os.path.join(work, "graph.txt")
        with open(graph_path, "w") as stream:
            graph.write_graph(stream, nodes, graph.generate_edges(nodes, edges))
        data = os.path.join(work, "data")
        os.makedirs(data)
        began = time.perf_counter()
        with open(graph_path) as stdin:
            loaded = subprocess.run([options.pure_run, "--data", os.path.join(data, "bfs"), "--sync", "none",
                                     MODULE, "0"], stdin=stdin, capture_output=True, text=True)
        if loaded.returncode != 0 or loaded.stdout.strip() != str(edges):
            raise SystemExit("loading the graph failed: %s %s" % (loaded.stdout[-200:], loaded.stderr[-500:]))
        log("[bfs-http] loaded %d edges into %s with pure-run --data in %.1f s" % (edges, data, time.perf_counter() - began))

        starts = graph.start_nodes(nodes)
        servers = {}
        http_cpu = {e: [] for e in engines}
        http_wall = {e: [] for e in engines}
        inproc = {e: [] for e in engines}
        c_ms = []
        check = None
        try:
            for engine in engines:
                copy = os.path.join(work, "data-" + engine)
                shutil.copytree(data, copy)
                server = Server(options.binary, [MODULE], "--sync", "none", "--max-steps", "100000000000", data=copy,
                                wait=120, env={"PURE_JIT": ENGINES[engine][2]})
                servers[engine] = server
                start_line = server.log("start")
                log("[bfs-http] %s: pure-serve with jit=%s" % (ENGINES[engine][0], start_line[0].get("jit") if start_line else "?"))
                status, body = Conn(server.port, timeout=120).json("POST", "/v1/bfs/edge_count", {})
                if status != 200 or body.get("result") != edges:
                    raise SystemExit("the served module holds %r edges, expected %d" % (body, edges))
            for run in range(1, options.runs + 1):
                found = in_process(options, [ENGINES[e][1] for e in engines])
                c_ms.append(found["c"][0])
                parts = []
                for engine in engines:
                    inproc[engine].append(found[ENGINES[engine][1]][0])
                    server = servers[engine]
                    results = []
                    conn = Conn(server.port, timeout=120)  # a new one: the server closes idle keep-alives
                    cpu0 = server.cpu_seconds()
                    walls = []
                    for _ in range(options.searches):
                        for start in starts:
                            t0 = time.perf_counter()
                            status, body = conn.json("POST", "/v1/bfs/search", {"start": start, "nodes": nodes})
                            walls.append((time.perf_counter() - t0) * 1000.0)
                            if status != 200:
                                raise SystemExit("search failed: %d %r" % (status, body))
                            results.append(body["result"])
                    cpu = (server.cpu_seconds() - cpu0) * 1000.0 / len(walls)
                    http_cpu[engine].append(cpu)
                    http_wall[engine].append(median(walls))
                    check = " ".join(results[:len(starts)])
                    expected = found[ENGINES[engine][1]][1]
                    if check != expected:
                        raise SystemExit("over HTTP (%s) the searches answered %r, in process %r" % (engine, check, expected))
                    parts.append("%s %.2f ms cpu (%.2f wall), in process %.2f" % (
                        ENGINES[engine][0], cpu, median(walls), found[ENGINES[engine][1]][0]))
                log("[bfs-http] run %d/%d per search: %s; C %.2f" % (run, options.runs, "; ".join(parts), found["c"][0]))
        finally:
            for server in servers.values():
                server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    c = median(c_ms)
    rows = []
    for engine in engines:
        served, local, _ = ENGINES[engine]
        cpu = median(http_cpu[engine])
        rows.append({"bench": "bfs-http", "system": served, "median_ms": round(cpu, 3), "runs": options.runs,
                     "wall_median_ms": round(median(http_wall[engine]), 3), "ratio_to_c": round(cpu / c, 3),
                     "ratio_to_in_process": round(cpu / median(inproc[engine]), 3), "check": check, "clock": "cpu",
                     "nodes": nodes, "edges": edges, "engine": "PURE_JIT=" + ENGINES[engine][2]})
    for engine in engines:
        served, local, setting = ENGINES[engine]
        rows.append({"bench": "bfs-http", "system": local, "median_ms": round(median(inproc[engine]), 3),
                     "runs": options.runs, "ratio_to_c": round(median(inproc[engine]) / c, 3), "clock": "cpu",
                     "engine": "PURE_JIT=%s, in process (pure-run)" % setting})
    rows.append({"bench": "bfs-http", "system": "c", "median_ms": round(c, 3), "runs": options.runs, "ratio_to_c": 1.0,
                 "clock": "cpu"})
    for row in rows:
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
