#!/usr/bin/env python3
"""tests/lsp/test_neovim.py — pure-lsp in a real editor: Debian's Neovim, headless, with its
built-in LSP client (neovim_client.lua), opening examples: the diagnostics of
examples/cerr_unknown_name.pure arrive with pure-run --check's message and hint, hovering over a
local of examples/bank_ledger.pure shows its type, and go-to-definition on a call moves the cursor
to the function's name. Skipped (exit 77) when nvim is not installed (scripts/deps.sh installs it).

Usage: test_neovim.py PURE_LSP EXAMPLES_DIR   (standard library only)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    lsp, examples = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    nvim = shutil.which("nvim")
    if not nvim:
        print("lsp.neovim: skipped: nvim is not installed (scripts/deps.sh installs Debian's neovim)")
        return 77
    good = os.path.join(examples, "bank_ledger.pure")
    with open(good, encoding="utf-8") as f:
        lines = f.read().split("\n")
    # hover over `a` in `if a.balance < amount` (a row of the stored list accounts)
    hover_line = next(i for i, l in enumerate(lines) if "if a.balance < amount" in l)
    hover_col = lines[hover_line].index("a.balance")
    # go to the definition of balances() from its call in main
    jump_line = next(i for i, l in enumerate(lines) if "{balances()}" in l)
    jump_col = lines[jump_line].index("balances()") + 2
    def_line = next(i for i, l in enumerate(lines) if l.startswith("fn balances("))
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "result.json")
        env = dict(os.environ, PURE_LSP=lsp, PURE_NVIM_BAD=os.path.join(examples, "cerr_unknown_name.pure"),
                   PURE_NVIM_GOOD=good, PURE_NVIM_HOVER=f"{hover_line + 1}:{hover_col}",
                   PURE_NVIM_JUMP=f"{jump_line + 1}:{jump_col}", PURE_NVIM_OUT=result,
                   XDG_CONFIG_HOME=tmp, XDG_DATA_HOME=tmp, XDG_STATE_HOME=tmp, XDG_CACHE_HOME=tmp)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "neovim_client.lua")
        run = subprocess.run([nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile " + script],
                             env=env, cwd=tmp, capture_output=True, text=True, timeout=120)
        if not os.path.exists(result):
            print("nvim wrote no result; exit", run.returncode, run.stdout, run.stderr)
            return 1
        with open(result, encoding="utf-8") as f:
            got = json.load(f)
    print(json.dumps(got, indent=1, ensure_ascii=False))
    failures = []
    if "error" in got:
        failures.append("the Lua script failed: " + got["error"])
    diags = got.get("diagnostics", [])
    want = ("unknown function 'averge'\nhint: did you mean 'average'?", 9, 10)
    if not any((d["message"], d["lnum"], d["col"]) == want for d in diags):
        failures.append(f"no diagnostic {want!r} in {diags!r}")
    if not any(d["message"].startswith("unknown name 'measurments'") for d in diags):
        failures.append("the second error did not arrive")
    hover = "\n".join(got.get("hover") or [])
    if "let a: {id: int, owner: text, balance: num}" not in hover:
        failures.append(f"hover text: {hover!r}")
    if got.get("jump") != [def_line + 1, 3] or not got.get("jump_file", "").endswith("bank_ledger.pure"):
        failures.append(f"definition jump went to {got.get('jump')} in {got.get('jump_file')}, not [{def_line + 1}, 3]")
    if not got.get("stopped"):
        failures.append("the client did not stop the server")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
