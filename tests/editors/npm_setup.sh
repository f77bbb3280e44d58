#!/usr/bin/env bash
# tests/editors/npm_setup.sh — installs the npm packages the editor grammar's test and picture need
# (vscode-textmate, vscode-oniguruma: the versions pinned in package.json and package-lock.json
# beside this script, checked against the lock's hashes by `npm ci`) into a cache directory, once,
# and prints the path of their node_modules.
#
# The cache is $PURE_NPM_CACHE, else $XDG_CACHE_HOME/pure/editors-npm, else ~/.cache/pure/editors-npm,
# one folder per lock (a changed pin installs anew). The install is bounded (PURE_NPM_TIMEOUT
# seconds, 300 by default) and done in a temporary folder renamed into place when complete, so an
# interrupted one leaves nothing half-installed. Exits 1, saying why, when node or npm is missing
# or the install fails: the test must not pass (or skip) without the packages.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "npm_setup: '$tool' is not installed; scripts/deps.sh installs Debian's nodejs and npm" >&2
    exit 1
  fi
done
root=${PURE_NPM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/pure/editors-npm}
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
dir=$root/$key
if [[ -f $dir/installed ]]; then
  echo "$dir/node_modules"
  exit 0
fi
mkdir -p "$root"
tmp=$(mktemp -d "$root/.install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$tmp/"
limit=${PURE_NPM_TIMEOUT:-300}
echo "npm_setup: installing vscode-textmate and vscode-oniguruma into $dir (at most $limit s)" >&2
if ! (cd "$tmp" && timeout "$limit" npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2); then
  echo "npm_setup: 'npm ci' failed or took more than $limit s; the editor grammar's test needs" \
       "vscode-textmate and vscode-oniguruma from the npm registry" >&2
  exit 1
fi
touch "$tmp/installed"
# another install may have finished first: keep the one in place
mv -T "$tmp" "$dir" 2>/dev/null || true
echo "$dir/node_modules"
