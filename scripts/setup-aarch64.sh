#!/usr/bin/env bash
# Prepares an x86-64 Debian 12 machine to cross-build Pure for AArch64 and run it under qemu-user.
# Idempotent; touches neither dpkg's architecture list nor apt's own package lists for arm64.
#
# Usage: scripts/setup-aarch64.sh BUILD_DIR
#   1. installs the cross compiler, qemu-user and the native header-only dependencies (apt-get);
#   2. downloads the arm64 libasmjit-dev .deb through a private apt list directory and unpacks it
#      into BUILD_DIR/sysroot (the folder cmake/aarch64-linux-gnu.cmake takes as PURE_AARCH64_SYSROOT).
# Runs as root (CI containers) or through sudo when available.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build_dir=$(mkdir -p "$1" && cd "$1" && pwd)
sysroot="$build_dir/sysroot"

apt_lock=(-o DPkg::Lock::Timeout=900)
native_packages=(g++-aarch64-linux-gnu qemu-user libasmjit-dev libcli11-dev doctest-dev)

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  as_root=()
fi

now() { date +%s.%N; }
# Prints "setup: <what> (<seconds> s)" so CI logs keep the cost of every step.
report() {
  local what=$1 started=$2
  awk -v what="$what" -v a="$started" -v b="$(now)" 'BEGIN { printf "setup: %s (%.1f s)\n", what, b - a }'
}

missing_native_packages() {
  local package
  for package in "${native_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q '^install ok installed$'; then
      echo "$package"
    fi
  done
}

install_native_packages() {
  local started missing
  started=$(now)
  mapfile -t missing < <(missing_native_packages)
  if [[ ${#missing[@]} -eq 0 ]]; then
    report "native packages already installed: ${native_packages[*]}" "$started"
    return
  fi
  "${as_root[@]}" apt-get "${apt_lock[@]}" update -qq
  report "apt-get update" "$started"
  started=$(now)
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get "${apt_lock[@]}" install -y -qq --no-install-recommends "${missing[@]}"
  report "installed ${missing[*]}" "$started"
}

# The arm64 asmjit must match the native one, so both builds compile the same asmjit snapshot.
wanted_asmjit_version() {
  dpkg-query -W -f='${Version}' libasmjit-dev
}

# The version last unpacked into the sysroot is kept in a stamp file; a match means nothing to do.
sysroot_is_current() {
  local version=$1
  [[ -f "$sysroot/.asmjit-version" ]] &&
    [[ $(cat "$sysroot/.asmjit-version") == "$version" ]] &&
    [[ -f "$sysroot/usr/lib/aarch64-linux-gnu/libasmjit.a" ]]
}

fetch_arm64_asmjit() {
  local started version
  started=$(now)
  version=$(wanted_asmjit_version)
  if sysroot_is_current "$version"; then
    report "sysroot already holds arm64 libasmjit-dev $version" "$started"
    return
  fi
  work_dir=$(mktemp -d)
  trap 'rm -rf "$work_dir"' EXIT
  mkdir -p "$work_dir/lists/partial" "$work_dir/debs"
  # A private list directory and an arm64-only architecture list: apt's state for the host is untouched.
  local arm64_apt=(
    -oAPT::Architecture=arm64 -oAPT::Architectures=arm64
    "-oDir::State::Lists=$work_dir/lists"
    -oDir::Cache::pkgcache= -oDir::Cache::srcpkgcache=
    -oAPT::Sandbox::User=root
  )
  apt-get "${arm64_apt[@]}" update -qq
  report "arm64 package lists (private list directory)" "$started"
  started=$(now)
  (cd "$work_dir/debs" && apt-get "${arm64_apt[@]}" download -qq "libasmjit-dev=$version")
  report "downloaded arm64 libasmjit-dev $version" "$started"
  started=$(now)
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  local deb
  for deb in "$work_dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$sysroot"
  done
  echo "$version" > "$sysroot/.asmjit-version"
  report "unpacked into $sysroot" "$started"
}

total_started=$(now)
install_native_packages
fetch_arm64_asmjit
report "total" "$total_started"
