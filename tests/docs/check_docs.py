#!/usr/bin/env python3
"""tests/docs/check_docs.py PURE_RUN FILE.md [FILE.md...]

Runs every ```pure block of the documentation through pure-run and compares it with the block
that follows: ```output (stdout, exit 0) or ```error (stderr, exit 1 or 3). A block with no
result block must compile cleanly (and run cleanly when it has a main). A block that is only
statements is wrapped in `fn main() { ... }`. An HTML comment just before a block,
`<!-- flags: ...; args: ...; stdin: ... -->`, sets pure-run options, arguments and input.
So the examples in docs/ cannot drift from what the compiler does."""
import os
import re
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"(<!--(.*?)-->\s*\n)?```(\w[\w-]*)\n(.*?)```", re.S)
DECLARATION = re.compile(r"^(fn|event|query|type|list)\b", re.M)


def blocks_of(text):
    for m in BLOCK.finditer(text):
        yield m.group(3), m.group(4), text[:m.start(3)].count("\n") + 1, m.group(2) or ""


def check_file(pure_run, md_path, work):
    blocks = list(blocks_of(open(md_path, encoding="utf-8").read()))
    count = failures = 0
    for i, (lang, body, line, meta) in enumerate(blocks):
        if lang != "pure":
            continue
        count += 1
        opts = dict(kv.split(":", 1) for kv in (p.strip() for p in meta.split(";")) if ":" in kv)
        source = body if DECLARATION.search(body) else "fn main() {\n" + "".join("  " + l + "\n" for l in body.splitlines()) + "}\n"
        has_main = re.search(r"^fn main\(", source, re.M)
        with open(os.path.join(work, "example.pure"), "w", encoding="utf-8") as f:
            f.write(source)
        flags = opts.get("flags", "").split()
        command = [pure_run] + flags + ([] if has_main or "--test" in flags else ["--check"]) + ["example.pure"] + opts.get("args", "").split()
        stdin = opts.get("stdin", "").strip().replace("\\n", "\n").encode()
        run = subprocess.run(command, cwd=work, input=stdin, capture_output=True, timeout=60)
        out, err, code = run.stdout.decode(), run.stderr.decode(), run.returncode
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        if following and following[0] == "output":
            ok, want = code == 0 and out == following[1] and err == "", following[1]
        elif following and following[0] == "error":
            ok, want = code in (1, 3) and err == following[1], following[1]
        else:
            ok, want = code == 0 and err == "", "(a clean run)"
        if not ok:
            failures += 1
            print(f"FAIL {md_path}:{line}: exit {code}\n{source}--- stdout:\n{out}--- stderr:\n{err}--- wanted:\n{want}")
    print(f"{md_path}: {count} pure blocks, {failures} failing")
    return failures


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pure_run = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as work:
        failures = sum(check_file(pure_run, path, work) for path in sys.argv[2:])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
