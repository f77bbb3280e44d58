#!/usr/bin/env python3
"""bench/history/history_bench.py: what history costs (docs/history.md).

history.audit_failed.on / .off: durable events per second through `pure-run --data` (main calls
an event N times; every Kth one fails), with --audit-failed on (each failed event logged as an
audit-only record) and off, alternating, each run on a fresh directory. `ratio` on the .on line
is on's events per second over off's, `cpu_ratio` its processor time per event over off's
(steadier on a loaded machine): the cost of the failed-event records. The committed
records are the same bytes either way; history.audit_failed.none runs the same count with no
failing event (the log's own cost, for scale).

history.as_of.near / .far: the latency of one as-of query (POST /v1/hist/total?as_of=SEQ) on a
pure-serve serving a directory with a log of L events and a checkpoint every C (built by pure-run
runs, the log kept from sequence 1 by the default --retain): near = within one checkpoint
interval of the present (replaying up to C records after the newest checkpoint), far = at the far
end of retention (the oldest retained interval: replaying up to C records from the empty state).
Each query asks for a sequence not asked before (no cached snapshot); the median over the runs.

JSON lines on stdout (shared/design/bench-format.md), progress on stderr.
Usage: history_bench.py PURE_RUN [--pure-serve PURE_SERVE] [--events N] [--fail-every K] [--runs R] [--quick]"""
import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "serve"))
from serve_client import Conn, Server  # noqa: E402

MODULE = """// the history benchmark's module: deposits on 1000 accounts; an amount of 0 fails
list accounts by id: int { balance: int = 0 }
event deposit(id: int, amount: int) {
  if amount <= 0 { fail "amount must be positive" }
  accounts[id].balance += amount
}
query total() -> int {
  var t = 0
  for a in accounts { t += a.balance }
  return t
}
fn main(args: seq text) {
  let n = parse_int(args[0])
  let every = parse_int(args[1])
  var i = 0
  var failed = 0
  while i < n {
    var amount = 1
    if every > 0 and i % every == 0 { amount = 0 }
    let r = deposit(i % 1000, amount)
    if not r.ok { failed += 1 }
    i += 1
  }
  print("{failed}")
}
"""


def log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def load():
    return round(os.getloadavg()[0], 1)


def emit(fields):
    fields.setdefault("system", "pure")
    fields["machine"] = platform.machine()
    fields["load_average"] = load()
    print(json.dumps(fields), flush=True)


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pure_run(binary, data, path, *args, flags=(), cpu=None):
    started, cpu_started = time.monotonic(), children_cpu()
    done = subprocess.run([binary, "--data", data, *flags, path, *args], capture_output=True, text=True, timeout=900)
    elapsed = time.monotonic() - started
    if cpu is not None:
        cpu.append(children_cpu() - cpu_started)
    if done.returncode != 0:
        raise SystemExit("pure-run failed (%d): %s" % (done.returncode, done.stderr))
    return done.stdout.strip(), elapsed


def audit_cost(options, work, path):
    n, every = options.events, options.fail_every
    expect_failed = str(len(range(0, n, every)))
    rates = {"on": [], "off": [], "none": []}
    cpus = {"on": [], "off": [], "none": []}  # processor time of the whole process (user + system), seconds
    for r in range(options.runs):
        for mode in ("on", "off", "none"):  # alternating, in the same minutes
            data = os.path.join(work, "audit-" + mode)
            shutil.rmtree(data, ignore_errors=True)
            out, elapsed = pure_run(options.pure_run, data, path, str(n), "0" if mode == "none" else str(every),
                                    flags=("--audit-failed", "off" if mode == "off" else "on"), cpu=cpus[mode])
            if out != ("0" if mode == "none" else expect_failed):
                raise SystemExit("wrong count of failed events: %s" % out)
            rates[mode].append(n / elapsed)
            log("history.audit_failed.%s: run %d: %.0f events/s, %.0f ns of processor time per event (load %.1f)" % (
                mode, r + 1, rates[mode][-1], cpus[mode][-1] * 1e9 / n, load()))
    off = statistics.median(rates["off"])
    off_cpu = statistics.median(cpus["off"])
    for mode in ("on", "off", "none"):
        rate = statistics.median(rates[mode])
        line = {"bench": "history.audit_failed." + mode, "per_second": round(rate), "runs": options.runs,
                "median_ms": round(1000.0 / rate, 6), "events": n,
                "failing": 0 if mode == "none" else int(expect_failed),
                "cpu_ns_per_event": round(statistics.median(cpus[mode]) * 1e9 / n, 1)}
        if mode == "on":  # events per second, and processor time per event, of on over off
            line["ratio_to"] = "history.audit_failed.off"
            line["ratio"] = round(rate / off, 3)
            line["cpu_ratio"] = round(statistics.median(cpus[mode]) / off_cpu, 3)
        emit(line)


def as_of_latency(options, work, path):
    data = os.path.join(work, "serve")
    directory = os.path.join(data, "hist")
    os.makedirs(data)
    interval, intervals = options.interval, options.intervals
    # intervals runs of `interval` events, each ending with a checkpoint; then half an interval more
    for _ in range(intervals):
        pure_run(options.pure_run, directory, path, str(interval), "0", flags=("--checkpoint-every", str(interval)))
    pure_run(options.pure_run, directory, path, str(interval // 2), "0", flags=("--checkpoint-every", str(10 ** 12)))
    present = intervals * interval + interval // 2
    kept = sorted(int(n[len("checkpoint-"):-len(".ckpt")]) for n in os.listdir(directory) if n.endswith(".ckpt"))
    log("history.as_of: %d events, checkpoints kept at %s" % (present, kept))
    server = Server(options.pure_serve, [path], data=data, wait=600)
    try:
        c = Conn(server.port, timeout=600)
        for name, first in (("near", present - 1), ("far", kept[0] - 1)):
            times = []
            for r in range(options.runs):
                sequence = first - r * 7  # a sequence not asked before: no cached snapshot
                started = time.monotonic()
                status, reply = c.json("POST", "/v1/hist/total?as_of=%d" % sequence, {})
                times.append((time.monotonic() - started) * 1000)
                if status != 200 or reply.get("as_of") != sequence or reply.get("result") != sequence:
                    raise SystemExit("as_of=%d: %s %s" % (sequence, status, reply))
                log("history.as_of.%s: as_of=%d: %.1f ms (load %.1f)" % (name, sequence, times[-1], load()))
            start = max([0] + [k for k in kept if k <= first])
            emit({"bench": "history.as_of." + name, "median_ms": round(statistics.median(times), 3),
                  "min_ms": round(min(times), 3), "max_ms": round(max(times), 3), "runs": options.runs,
                  "events": present, "checkpoint_every": interval, "replayed_at_most": first - start})
        c.close()
    finally:
        if server.stop() != 0:
            raise SystemExit("pure-serve did not stop cleanly: %s" % "\n".join(server.lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pure_run")
    parser.add_argument("--pure-serve", help="also measure as-of latency with this binary")
    # a million: a run takes about half a second, so process start-up weighs little in the figure
    parser.add_argument("--events", type=int, default=1_000_000, help="events per throughput run (default 1000000)")
    parser.add_argument("--fail-every", type=int, default=10, help="every Kth event fails (default 10: 10%%)")
    parser.add_argument("--interval", type=int, default=50_000, help="events between checkpoints (default 50000)")
    parser.add_argument("--intervals", type=int, default=6, help="checkpoint intervals in the as-of log (default 6)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    options = parser.parse_args()
    if options.quick:
        options.events, options.interval, options.intervals = 20_000, 2_000, 3
    work = tempfile.mkdtemp(prefix="pure-bench-history-")
    try:
        path = os.path.join(work, "hist.pure")
        with open(path, "w") as f:
            f.write(MODULE)
        audit_cost(options, work, path)
        if options.pure_serve:
            as_of_latency(options, work, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
