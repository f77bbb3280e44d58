#!/usr/bin/env bash
# scripts/demo.sh — quick start, command 1: install what is needed, build (Release), and run an
# example: a bank ledger whose failing transfers roll back.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build --target pure-run
echo "--- build/tools/pure-run examples/bank_ledger.pure"
build/tools/pure-run examples/bank_ledger.pure
