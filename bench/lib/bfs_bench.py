# bench/lib/bfs_bench.py: the BFS benchmark: one generated graph file fed to every system on stdin, five fixed
# start nodes, processor time per search (inside C/CPython/Lua; for Pure the difference of two whole runs).
import os
import time

import graph
from kernels import Result, prepare_all
from measure import RunFailed, run_timed

SIZES = {"full": (100000, 1000000), "quick": (10000, 100000)}


def make_graph(options, build_dir, log):
    nodes, edges = SIZES["quick" if options.quick else "full"]
    path = os.path.join(build_dir, "graph-%d-%d.txt" % (nodes, edges))
    began = time.perf_counter()
    with open(path, "w") as stream:
        graph.write_graph(stream, nodes, graph.generate_edges(nodes, edges))
    log("[bfs] generated %d nodes, %d edges in %.1f s -> %s" % (nodes, edges, time.perf_counter() - began, path))
    return path, nodes, edges


def run_measured(result, prefix, rounds, starts, graph_path, options):
    """C, CPython, Lua, LuaJIT: the program prints the check, then one time in ms per search."""
    stdout = run_timed(prefix + [str(rounds)] + starts, stdin_path=graph_path, timeout=options.timeout).stdout
    lines = stdout.strip().splitlines()
    if len(lines) != 2:
        raise RunFailed("expected a check line and a times line, got %r" % stdout[:200])
    result.record_check(lines[0].strip())
    return [float(field) for field in lines[1].split()]


def run_pure(result, prefix, rounds, starts, graph_path, edges, options, round_number):
    """Pure has no clock: take the processor time of the whole process loading only (ROUNDS = 0) and loading
    plus rounds x searches; the difference divided by the number of searches is one sample. The order
    alternates from run to run to cancel drift."""
    def timed(how_many):
        return run_timed(prefix + [str(how_many)] + starts, stdin_path=graph_path, timeout=options.timeout)

    if round_number % 2:
        load, full = timed(0), timed(rounds)
    else:
        full = timed(rounds)
        load = timed(0)
    if load.stdout.strip() != str(edges):
        raise RunFailed("loading run printed %r, expected the edge count %d" % (load.stdout.strip()[:100], edges))
    result.record_check(full.stdout.strip())
    result.extra.setdefault("load_samples", []).append(load.cpu_ms)
    return [(full.cpu_ms - load.cpu_ms) / (rounds * len(starts))]


def run_bfs(systems, options, build_dir, log):
    graph_path, nodes, edges = make_graph(options, build_dir, log)
    starts = [str(node) for node in graph.start_nodes(nodes)]
    bfs_dir = os.path.join(options.bench_dir, "bfs")
    results, prefixes = prepare_all(
        systems, lambda system: os.path.join(bfs_dir, "bfs" + system.extension), build_dir, log)
    for round_number in range(1, options.runs + 1):
        for result in results:
            if result.error:
                continue
            prefix = prefixes[result.system.name]
            try:
                if result.system.key in ("pure", "pure-jit"):
                    samples = run_pure(result, prefix, options.bfs_pure_rounds, starts, graph_path, edges,
                                       options, round_number)
                else:
                    samples = run_measured(result, prefix, options.bfs_rounds, starts, graph_path, options)
            except (RunFailed, ValueError) as error:
                result.error = str(error)
                log("  %s: FAILED: %s" % (result.system.name, result.error))
                continue
            result.samples.extend(samples)
            if "load_samples" in result.extra:
                log("[bfs] run %d/%d %-8s loading alone took %.1f ms cpu" % (
                    round_number, options.runs, result.system.name, result.extra["load_samples"][-1]))
            log("[bfs] run %d/%d %-8s median of this run %8.2f ms/search  check %s" % (
                round_number, options.runs, result.system.name, sorted(samples)[len(samples) // 2], result.check))
    return results
