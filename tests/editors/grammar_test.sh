#!/usr/bin/env bash
# tests/editors/grammar_test.sh — ctest editors.grammar: installs the pinned npm packages (cached,
# npm_setup.sh), then tokenises every example with the editor grammar and compares with the real
# lexer (check_grammar.mjs).
# Usage: grammar_test.sh PURE_DUMP_TOKENS REPO_ROOT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
modules=$(bash "$here/npm_setup.sh")
exec node "$here/check_grammar.mjs" "$1" "$2" "$modules"
