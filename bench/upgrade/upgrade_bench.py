#!/usr/bin/env python3
"""bench/upgrade/upgrade_bench.py: the pause of an upgrade (docs/upgrades.md) on a data directory
holding one stored list of N rows (a checkpoint of it, so a start loads rather than replays):
a code-only upgrade (a comment added) and one that adds a defaulted field. The pause is what
pure-run reports as "upgraded ... in S s": writing the version file, the upgrade record made
durable, the store changed; loading the checkpoint before it and running main after it are not
part of it (start_ms shows the whole process). Each run starts from a fresh copy of the
directory. JSON lines on stdout (shared/design/bench-format.md), progress on stderr.

With --pure-serve, the same two upgrades hot, through PUT /v1/upgrade/source on a pure-serve
serving the directory (upgrade.hot.code_only, upgrade.hot.add_field): the pause is the reply's
pause_ms, from the owner planning it between two batches to the new version serving (the version
file, the durable version record, the store changed); no event runs meanwhile.

Usage: upgrade_bench.py PURE_RUN [--rows N] [--runs R] [--pure-serve PURE_SERVE]"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "serve"))
from serve_client import Conn, Server  # noqa: E402

V1 = """// the upgrade benchmark's module: one keyed list of N rows
list rows by id: int { v: int }
event fill(n: int) {
  var i = 0
  while i < n { rows[i] = { v: i * 3 }
    i += 1 }
}
fn main(args: seq text) {
  if rows.count() == 0 and args.count() > 0 { let r = fill(parse_int(args[0])) }
  print("{rows.count()}")
}
"""
CODE_ONLY = V1 + "// a comment: a code-only upgrade\n"
ADD_FIELD = V1.replace("{ v: int }", "{ v: int, w: int = 7 }")


def log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def run(pure_run, data, path, source, *args):
    with open(path, "w") as f:
        f.write(source)
    started = time.monotonic()
    done = subprocess.run([pure_run, "--data", data, *args, path], capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit("pure-run failed (%d): %s" % (done.returncode, done.stderr))
    return done, elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pure_run")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pure-serve", help="also measure the hot upgrades (PUT /v1/upgrade/source) with this binary")
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="pure-bench-upgrade-")
    try:
        base = os.path.join(work, "base")
        path = os.path.join(work, "upgrade.pure")
        # The directory: one event filling the list, then a checkpoint at exit.
        with open(path, "w") as f:
            f.write(V1)
        done = subprocess.run([options.pure_run, "--data", base, "--checkpoint-every", "1", path, str(options.rows)],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or done.stdout.strip() != str(options.rows):
            raise SystemExit("filling failed: %s %s" % (done.stdout, done.stderr))
        state = sum(os.path.getsize(os.path.join(base, n)) for n in os.listdir(base) if n.endswith(".ckpt"))
        for name, source in (("upgrade.code_only", CODE_ONLY), ("upgrade.add_field", ADD_FIELD)):
            pauses, starts = [], []
            for r in range(options.runs):
                data = os.path.join(work, "run")
                shutil.rmtree(data, ignore_errors=True)
                shutil.copytree(base, data)
                done, elapsed = run(options.pure_run, data, path, source, "--upgrade")
                m = re.search(r"upgraded to version 2 at sequence \d+ in ([0-9.]+) s", done.stderr)
                if not m or done.stdout.strip() != str(options.rows):
                    raise SystemExit("no upgrade line or wrong count: %s %s" % (done.stdout, done.stderr))
                pauses.append(float(m.group(1)) * 1000)
                starts.append(elapsed * 1000)
                log("%s: run %d: pause %.1f ms, whole process %.0f ms" % (name, r + 1, pauses[-1], starts[-1]))
            print(json.dumps({"bench": name, "system": "pure", "median_ms": round(statistics.median(pauses), 3),
                              "min_ms": round(min(pauses), 3), "max_ms": round(max(pauses), 3), "runs": options.runs,
                              "rows": options.rows, "state_mib": round(state / (1 << 20), 1),
                              "start_ms": round(statistics.median(starts), 1), "machine": platform.machine()}),
                  flush=True)
        if options.pure_serve:
            hot(options, work, base, path, state)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def hot(options, work, base, path, state):
    """The two upgrades through PUT /v1/upgrade/source, each on a fresh copy served by pure-serve."""
    for name, source in (("upgrade.hot.code_only", CODE_ONLY), ("upgrade.hot.add_field", ADD_FIELD)):
        pauses = []
        for r in range(options.runs):
            data = os.path.join(work, "serve")
            shutil.rmtree(data, ignore_errors=True)
            os.makedirs(data)
            shutil.copytree(base, os.path.join(data, "upgrade"))
            with open(path, "w") as f:
                f.write(V1)
            server = Server(options.pure_serve, [path], data=data, wait=600)
            try:
                c = Conn(server.port, timeout=600)
                status, reply = c.json("PUT", "/v1/upgrade/source", source)
                if status != 200 or reply.get("version") != 2:
                    raise SystemExit("the hot upgrade failed: %s %s" % (status, reply))
                status, page = c.json("GET", "/v1/upgrade")
                rows = [l["count"] for l in page["lists"] if l["name"] == "rows"]
                if rows != [options.rows]:
                    raise SystemExit("rows after the hot upgrade: %s, not %d" % (rows, options.rows))
                c.close()
            finally:
                if server.stop() != 0:
                    raise SystemExit("pure-serve did not stop cleanly: %s" % "\n".join(server.lines))
            pauses.append(float(reply["pause_ms"]))
            log("%s: run %d: pause %.1f ms" % (name, r + 1, pauses[-1]))
        print(json.dumps({"bench": name, "system": "pure", "median_ms": round(statistics.median(pauses), 3),
                          "min_ms": round(min(pauses), 3), "max_ms": round(max(pauses), 3), "runs": options.runs,
                          "rows": options.rows, "state_mib": round(state / (1 << 20), 1),
                          "machine": platform.machine()}),
              flush=True)


if __name__ == "__main__":
    main()
