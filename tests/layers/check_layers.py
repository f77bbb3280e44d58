#!/usr/bin/env python3
"""tests/layers/check_layers.py — the layer check: every `#include "DIR/FILE"` of the source tree
against the layer rules written in docs/architecture.md (its ```layers block), so that layers are
kept by a test rather than by a comment (issue 32).

Usage: check_layers.py ROOT            check the tree at ROOT; exit 1 and one line per violation
       check_layers.py --self-test     plant violations in a temporary tree and check they are found

The rules block has one line per layer folder:

    FOLDER: may include LAYER LAYER ... ; public: HEADER HEADER ...

A file in FOLDER may include its own folder's headers, and of another layer only one that FOLDER
may include, and only that layer's public headers. `tests/X/...` may include every header of the
layer X it tests (private ones too) and the public headers of any layer; `bench/` and `tools/`
only public headers; no layer includes anything of `tools/`, which sits on top. A test or
benchmark folder that tests another layer's insides says so:

    tests/a64 sees: jit-aarch64

Standard library only."""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_.-]+)/([A-Za-z0-9_./-]+)"', re.M)
SOURCE_EXTENSIONS = (".h", ".cpp", ".c", ".def", ".inc")
SKIP_DIRS = {".git", "build", "node_modules"}


def parse_rules(architecture_md):
    """({folder: (allowed folders, public headers)}, {test folder: layers whose insides it sees})
    from the ```layers block."""
    text = open(architecture_md, encoding="utf-8").read()
    match = re.search(r"```layers\n(.*?)```", text, re.S)
    if not match:
        raise SystemExit(f"{architecture_md}: no ```layers block")
    rules, sees = {}, {}
    for number, line in enumerate(match.group(1).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"((?:tests|bench)/[a-z0-9_-]+) sees:(.*)", line)
        if m:
            sees[m.group(1)] = set(m.group(2).split())
            continue
        m = re.fullmatch(r"([a-z0-9-]+):\s*may include(.*?);\s*public:(.*)", line)
        if not m:
            raise SystemExit(f"{architecture_md}: layers block line {number} does not read "
                             f"'FOLDER: may include ... ; public: ...': {line}")
        allowed = set(m.group(2).split()) - {"-"}
        public = set(m.group(3).split()) - {"-"}
        rules[m.group(1)] = (allowed, public)
    for folder, (allowed, _) in rules.items():
        for other in allowed:
            if other not in rules:
                raise SystemExit(f"{architecture_md}: layer {folder} may include {other}, which has no line")
    for folder, layers in sees.items():
        for layer in layers:
            if layer not in rules:
                raise SystemExit(f"{architecture_md}: {folder} sees {layer}, which has no line")
    return rules, sees


def sources(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(SOURCE_EXTENSIONS):
                path = os.path.join(top, name)
                yield os.path.relpath(path, root).replace(os.sep, "/"), path


def violations(root, rules, sees):
    found = []
    for rel, path in sources(root):
        parts = rel.split("/")
        folder = parts[0]
        tested = set()  # layers whose private headers this file may include
        if folder in rules:
            pass
        elif folder in ("tests", "bench", "tools"):
            if len(parts) > 2:
                tested = set(sees.get(f"{folder}/{parts[1]}", ()))
                if folder == "tests" and parts[1] in rules:
                    tested.add(parts[1])
        else:
            continue  # generated files, editors/, docs/: no rules
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in INCLUDE.finditer(text):
            target, header = m.group(1), m.group(2)
            line = text.count("\n", 0, m.start()) + 1
            where = f"{rel}:{line}"
            if target == "tools" and folder in rules:
                # tools/ sits on top of every layer: no layer includes it (the commands' shared
                # code, tools/compile_module.h and the like, is theirs alone)
                found.append(f"{where}: layer {folder} may not include tools/ (tools/ sits on top of every layer)")
                continue
            if target not in rules:
                continue  # not a layer of ours (a system or library header with a slash)
            if folder in rules:
                if target == folder:
                    continue
                allowed, _ = rules[folder]
                if target not in allowed:
                    found.append(f"{where}: layer {folder} may not include {target}/ "
                                 f"(it may include: {' '.join(sorted(allowed)) or 'nothing'})")
                    continue
            elif target in tested:
                continue  # a layer's own tests see its private headers
            public = rules[target][1]
            if header not in public:
                found.append(f"{where}: {target}/{header} is private to {target}/ "
                             f"(its public headers: {' '.join(sorted(public))})")
    return found


def self_test():
    """Plants one violation of each kind in a small tree and checks each is reported, and that the
    clean tree passes: the check itself is tested, so it cannot silently pass everything."""
    rules_md = ("```layers\n"
                "low: may include - ; public: low.h\n"
                "high: may include low ; public: high.h\n"
                "tests/wide sees: low\n"
                "```\n")
    files = {
        "docs/architecture.md": rules_md,
        "low/low.h": "#pragma once\n",
        "low/private.h": "#pragma once\n",
        "low/low.cpp": '#include "low/low.h"\n#include "low/private.h"\n',
        "high/high.h": '#pragma once\n#include "low/low.h"\n',
        "tests/low/low_test.cpp": '#include "low/private.h"\n#include "high/high.h"\n',
        "tests/wide/wide_test.cpp": '#include "low/private.h"\n',
        "tools/tool.h": '#pragma once\n#include "high/high.h"\n',
        "tools/tool.cpp": '#include "tools/tool.h"\n',
    }
    planted = {
        "low/bad_upward.cpp": '#include "high/high.h"\n',
        "high/bad_private.cpp": '#include "low/private.h"\n',
        "tools/bad_tool.cpp": '#include "low/private.h"\n',
        "tests/high/bad_test.cpp": '#include "low/private.h"\n',
        "high/bad_tool.cpp": '#include "tools/tool.h"\n',
    }
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, text):
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        for name, text in files.items():
            write(name, text)
        rules, sees = parse_rules(os.path.join(tmp, "docs/architecture.md"))
        clean = violations(tmp, rules, sees)
        assert clean == [], f"a clean tree reported {clean}"
        for name, text in planted.items():
            write(name, text)
        found = violations(tmp, rules, sees)
        for name in planted:
            assert any(v.startswith(name + ":") for v in found), f"planted {name} not reported: {found}"
        assert len(found) == len(planted), f"expected {len(planted)} violations, got {found}"
    print(f"self-test: {len(planted)} planted violations found, clean tree clean")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    rules, sees = parse_rules(os.path.join(root, "docs", "architecture.md"))
    found = violations(root, rules, sees)
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} include(s) cross a layer edge that docs/architecture.md does not allow")
        return 1
    print(f"layers: {len(rules)} layers, every include within the rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
