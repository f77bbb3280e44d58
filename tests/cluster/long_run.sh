#!/bin/sh
# tests/cluster/long_run.sh [CYCLES] [BUILD]: the long run of the replication test (docs/cluster.md,
# "The long run"): tests/cluster/test_cluster.py with CYCLES leader kills (SIGKILL, failover,
# restart on the data directory; 200 by default) followed by one of each other fault (a follower
# wiped after a trim, a nats-server killed, a leader paused past its lease, a SIGTERM handover),
# under load throughout, with the same checks at the end (no acknowledged event lost or applied
# twice, the three nodes identical). Prints the test's summary line (failover seconds: median, p99,
# max) and the wall time. BUILD: the build directory (build by default).
set -eu
cycles=${1:-200}
build=${2:-build}
here=$(cd "$(dirname "$0")" && pwd)
serve=$(cd "$build" && pwd)/tools/pure-serve
start=$(date +%s)
PURE_SERVE=$serve PURE_CLUSTER_CYCLES=$cycles PURE_CLUSTER_ROUNDS=1 python3 "$here/test_cluster.py"
echo "long run: $cycles leader kills in $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
