#!/bin/sh
# tests/fuzz/run.sh SECONDS — builds the frontend fuzzer (clang, ASan+UBSan, libFuzzer) in
# build-fuzz and runs it for SECONDS (default 60) on a corpus seeded from examples/, the
# malformed-test seeds and every saved crash. Exit status is non-zero when it finds a crash,
# a hang (10 s per input) or a sanitizer report; the input is left in build-fuzz/artifacts/.
set -eu
seconds=${1:-60}
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
exec "$build/tests/fuzz/$target" "$corpus" -dict="$dict" -max_total_time="$seconds" \
  -timeout=10 -rss_limit_mb=4096 -max_len=16384 -print_final_stats=1 \
  -artifact_prefix="$build/artifacts/"
