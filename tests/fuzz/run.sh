#!/bin/sh
# tests/fuzz/run.sh SECONDS      — fuzz for SECONDS (default 60), a new random seed each time
# tests/fuzz/run.sh --runs N [--seed S]
#                                — fuzz N inputs from seed S (default 1) on a corpus made afresh from
#                                  the seeds: the same binary finds the same things every time, so
#                                  what CI runs is what a developer replays (scripts/test.sh --full)
# Builds the frontend fuzzer (clang, ASan+UBSan, libFuzzer) in build-fuzz and runs it on a corpus
# seeded from examples/, the malformed-test seeds and every saved crash. Exit status is non-zero
# when it finds a crash, a hang (10 s per input) or a sanitizer report; the input is left in
# build-fuzz/artifacts/.
set -eu
seconds=60
runs=
seed=1
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    [0-9]*) seconds=$1; shift ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${PURE_FUZZ_BUILD:-$root/build-fuzz}
jobs=${PURE_FUZZ_JOBS:-2}
target=${PURE_FUZZ_TARGET:-fuzz_frontend}   # or fuzz_run: also runs what compiles

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPURE_FUZZ=ON -DPURE_SANITIZE=ON >/dev/null
fi
ninja -C "$build" -j "$jobs" "$target"

corpus=$build/corpus-$target
# a bounded run starts from the seeds alone; a timed one keeps growing what earlier runs found
[ -n "$runs" ] && rm -rf "$corpus"
mkdir -p "$corpus" "$build/artifacts"
for f in "$root"/examples/*.pure "$root"/tests/malformed/seeds/*.pure "$root"/tests/fuzz/seeds/*.pure "$root"/tests/fuzz/crashes/*; do
  [ -f "$f" ] && cp "$f" "$corpus/" || true
done

# Saved crashes must stay fixed: replay them first (a quick regression check).
crashes=$(find "$root/tests/fuzz/crashes" -type f ! -name '*.md' | sort)
if [ -n "$crashes" ]; then
  # shellcheck disable=SC2086
  "$build/tests/fuzz/$target" -timeout=10 -rss_limit_mb=4096 $crashes
fi

dict=$root/tests/fuzz/pure.dict
if [ -n "$runs" ]; then
  # -reload=0: libFuzzer otherwise rereads the corpus folder every second, which makes the path
  # depend on the clock; without it the same binary, seed and count take the same path
  bound="-runs=$runs -seed=$seed -reload=0"
  # and without address randomization: a text's alignment steers the byte-scanning loops, so
  # fuzz_run's coverage (and so its path) would depend on where the heap landed
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    fixed="setarch $(uname -m) -R"
  else
    echo "run.sh: setarch -R is refused here; the run's path may vary with addresses" >&2
    fixed=
  fi
else
  bound="-max_total_time=$seconds"
  fixed=
fi
# shellcheck disable=SC2086
exec $fixed "$build/tests/fuzz/$target" "$corpus" -dict="$dict" $bound \
  -timeout=10 -rss_limit_mb=4096 -max_len=16384 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/"
