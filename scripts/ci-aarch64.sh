#!/usr/bin/env bash
# CI part for AArch64: cross-build Pure, run its tests under qemu, and check that the examples print the same
# bytes on x86-64 and AArch64. Assumes the native build already exists (build/, with build/tools/pure-run).
#
# Usage: scripts/ci-aarch64.sh            (from anywhere; works in the repository root)
# Environment (all optional):
#   PURE_NATIVE_BUILD   native build folder                 (default build)
#   PURE_AARCH64_BUILD  AArch64 build folder                (default build-aarch64)
#   PURE_JOBS           parallel compile jobs               (default 2)
#   PURE_ENGINES        engines to record on both machines  (default "interp jit": the x86-64 JIT is LLVM's, the
#                       AArch64 one asmjit's; jit runs compile every loop on first entry, whatever its native share)
#   PURE_RUN_TIMEOUT    seconds per example run under qemu  (default 300)
#   PURE_CTEST_ARGS     extra ctest arguments for the qemu run, e.g. "-E store_model" to fit a CI budget
# Exit status: 0 when every phase passed; 1 otherwise. A timing table is printed either way.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
native_build=${PURE_NATIVE_BUILD:-build}
cross_build=${PURE_AARCH64_BUILD:-build-aarch64}
jobs=${PURE_JOBS:-2}
engines=${PURE_ENGINES:-interp jit}
run_timeout=${PURE_RUN_TIMEOUT:-300}
read -r -a ctest_extra <<<"${PURE_CTEST_ARGS:-}"
emulator="qemu-aarch64 -L /usr/aarch64-linux-gnu"
recordings="$cross_build/recordings"

# A crashing guest would make qemu drop qemu_*.core files into the examples folder.
ulimit -c 0

phase_lines=()
failed_phases=()

now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

print_timings() {
  echo
  echo "== ci-aarch64 timings (s, wall) =="
  local line
  for line in "${phase_lines[@]}"; do
    echo "  $line"
  done
  if [[ ${#failed_phases[@]} -gt 0 ]]; then
    echo "ci-aarch64: FAILED: ${failed_phases[*]}"
  else
    echo "ci-aarch64: all phases passed"
  fi
}

# Runs one phase, timing it; returns its status so the caller decides whether later phases still make sense.
phase() {
  local name=$1 started status
  shift
  echo
  echo "== $name: $(printf '%q ' "$@")=="
  started=$(now)
  "$@"
  status=$?
  local verdict=ok
  if [[ $status -ne 0 ]]; then
    verdict="FAILED (exit $status)"
    failed_phases+=("$name")
  fi
  phase_lines+=("$(printf '%-28s %7s  %s' "$name" "$(seconds_since "$started")" "$verdict")")
  return $status
}

# Proves on every run that compare.py can fail: one byte of one run's stdout is changed in a scratch copy
# of a recording (with its hash updated, so it reads as real output), and compare must report exactly that.
check_compare_detects_a_changed_byte() {
  local original=$1 scratch=$2 report
  python3 - "$original" "$scratch" <<'PYTHON' || return 1
import base64, hashlib, json, sys
runs = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
run = next((run for run in runs if run["stdout"]), None)
if run is None:
    sys.exit("no run with output to change")
data = base64.b64decode(run["stdout"]) if run["stdout_base64"] else run["stdout"].encode("utf-8")
data = bytes([data[0] ^ 0x01]) + data[1:]
run["stdout"], run["stdout_base64"] = base64.b64encode(data).decode("ascii"), True
run["stdout_sha256"] = hashlib.sha256(data).hexdigest()
with open(sys.argv[2], "w", encoding="utf-8") as out:
    out.writelines(json.dumps(one) + "\n" for one in runs)
print(f"changed the first stdout byte of {run['file']} in {sys.argv[2]}")
PYTHON
  report=$(python3 scripts/compare.py "$original" "$scratch")
  local status=$?
  echo "$report"
  [[ $status -eq 1 ]] && grep -q "stdout differs at line 1" <<<"$report"
}

# The library folders must build on macOS and AArch64 too: no Linux-only or x86-only headers and calls.
# (POSIX is allowed there but listed, so it stays behind the runtime's one interface to the outside world.)
portable_folders=(frontend ir vm runtime stdlib)
linux_only='#include *<(linux/|asm/|gnu/|sys/(epoll|eventfd|inotify|signalfd|timerfd|sendfile|prctl|syscall|sysinfo|auxv|personality)\.h|malloc\.h|mcheck\.h|endian\.h|byteswap\.h|(imm|x86|emm|xmm|pmm|smm|nmm|avx|bmi)intrin\.h)|\b(memfd_create|syscall|fallocate|sync_file_range|fdatasync|mremap|pipe2|accept4|gettid|sched_setaffinity|pthread_setaffinity_np|pthread_getaffinity_np)\(|\b(MAP_POPULATE|O_DIRECT|O_TMPFILE|__builtin_ia32_[a-z0-9_]*)\b'
posix_headers='#include *<(unistd|fcntl|pthread|dlfcn|signal|poll|dirent|termios)\.h>|#include *<sys/'
check_portability() {
  local existing=() folder found=0
  for folder in "${portable_folders[@]}"; do
    [[ -d $folder ]] && existing+=("$folder")
  done
  [[ ${#existing[@]} -eq 0 ]] && return 0
  if grep -rnE "$linux_only" --include='*.h' --include='*.cpp' --include='*.hpp' --include='*.def' "${existing[@]}"; then
    echo "ci-aarch64: Linux-only or x86-only code in ${existing[*]} (see docs/portability.md)"
    found=1
  fi
  local posix
  posix=$(grep -rnE "$posix_headers" --include='*.h' --include='*.cpp' --include='*.hpp' "${existing[@]}")
  [[ -n $posix ]] && printf 'POSIX headers in library folders (allowed, keep them behind one interface):\n%s\n' "$posix"
  return $found
}

stop() {
  print_timings
  exit 1
}

native_pure_run="$native_build/tools/pure-run"
if [[ ! -x "$native_pure_run" ]]; then
  echo "ci-aarch64: $native_pure_run missing; build the native tree first (cmake -S . -B $native_build && cmake --build $native_build)" >&2
  exit 1
fi

phase "portability" check_portability
phase "setup" scripts/setup-aarch64.sh "$cross_build" || stop
phase "configure aarch64" cmake -S . -B "$cross_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
  -DPURE_AARCH64_SYSROOT="$root/$cross_build/sysroot" || stop
phase "build aarch64" cmake --build "$cross_build" -j "$jobs" || stop
# Test failures do not stop the run: the example comparison still says whether output diverged.
phase "ctest aarch64 (qemu)" ctest --test-dir "$cross_build" --output-on-failure -j "$jobs" "${ctest_extra[@]}"

mkdir -p "$recordings"
rm -f "$recordings"/*.jsonl
recorded=()
# A JIT recording compiles every loop the first time it is entered, so the examples' loops run as native code.
jit_env=(env PURE_JIT_THRESHOLD=0 PURE_JIT_MIN_SHARE=0)
for engine in $engines; do
  x86_file="$recordings/x86_64-$engine.jsonl"
  arm_file="$recordings/aarch64-$engine.jsonl"
  run_env=()
  [[ $engine == jit* ]] && run_env=("${jit_env[@]}")
  phase "record x86_64 $engine" "${run_env[@]}" python3 scripts/record.py --pure-run "$native_pure_run" \
    --engine "$engine" --out "$x86_file" && recorded+=("$x86_file")
  phase "record aarch64 $engine (qemu)" "${run_env[@]}" python3 scripts/record.py --pure-run "$cross_build/tools/pure-run" \
    --emulator "$emulator" --engine "$engine" --timeout "$run_timeout" --out "$arm_file" && recorded+=("$arm_file")
done
if [[ ${#recorded[@]} -ge 2 ]]; then
  phase "compare" python3 scripts/compare.py "${recorded[@]}"
  phase "compare catches a change" check_compare_detects_a_changed_byte "${recorded[-1]}" "$recordings/changed.scratch"
else
  failed_phases+=("compare (fewer than two recordings)")
fi

print_timings
[[ ${#failed_phases[@]} -eq 0 ]]
