#!/usr/bin/env bash
# scripts/deps.sh — installs the Debian 12 packages Pure needs to build and test. Idempotent:
# when everything is already installed it only checks and returns.
#   --bench   also the benchmark baselines (Lua 5.4, LuaJIT, SQLite, valgrind)
set -euo pipefail
# Boost 1.81 (Beast, Asio, JSON) for pure-serve: only the 1.81 packages, which conflict with libboost-dev (1.74).
# libmimalloc-dev: the allocator pure-run and pure-serve link (CMakeLists.txt, PURE_ALLOCATOR).
packages=(cmake ninja-build g++ python3 libcli11-dev doctest-dev libasmjit-dev clang libclang-rt-14-dev
          libboost1.81-dev libboost-json1.81-dev libmimalloc-dev)
# OpenSSL for pure-serve's HTTPS (--tls-cert); the openssl and curl tools for its test (a self-signed
# certificate, curl --cacert)
packages+=(libssl-dev openssl curl)
# the console's browser test (tests/console): Debian's chromium, driven headless through its chromedriver; a font for
# the screenshots (about 40 s to install; the test is skipped without them)
packages+=(chromium chromium-driver fonts-dejavu-core)
# the editor grammar's test (tests/editors): node, and npm to install its two pinned packages into a cache
# folder (tests/editors/npm_setup.sh); a node package that brings its own npm needs no Debian npm beside it
packages+=(nodejs)
if ! command -v npm >/dev/null; then packages+=(npm); fi
# pure-lsp's editor test (tests/lsp/test_neovim.py): Debian's Neovim, headless, with its built-in LSP client
packages+=(neovim)
# pure-serve --cluster (cluster/, docs/cluster.md): the NATS C client, and the NATS server its test
# (tests/cluster) starts three of
packages+=(libnats-dev nats-server)
# the x86-64 JIT: LLVM 19 linked statically (libzstd-dev for its link interface) with lld
if [[ $(uname -m) == x86_64 ]]; then packages+=(llvm-19-dev libzstd-dev lld); fi
if [[ "${1:-}" == "--bench" ]]; then packages+=(lua5.4 luajit libsqlite3-dev valgrind); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) != 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}"
