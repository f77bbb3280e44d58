#!/usr/bin/env python3
"""tests/tools/test_fmt.py — `pure-run --fmt` (docs/tooling.md, "The formatter").

Usage: test_fmt.py PURE_RUN EXAMPLES_DIR [--check-repo]   (standard library only)

Without --check-repo: every example is formatted in a temporary folder, and
- a file with a syntax error is refused (exit 1) and left byte for byte as it was;
- formatting is idempotent: `--fmt --check` on the result lists nothing and exits 0;
- formatting is canonical: the same file with its indentation removed, trailing spaces and extra
  blank lines added, formats to the same bytes;
- every comment is kept, and the formatted program prints the same bytes (stdout and exit code,
  with the example's .flags, .args and .in) as the original;
plus --check's listing and exit codes, and a file that cannot be read.
With --check-repo: `pure-run --fmt --check` over every example that parses and the files they
import (examples/lib) must exit 0 (ctest fmt.examples: the repository's examples stay formatted).
With --check-bench-docs ROOT: the same over ROOT/bench/**/*.pure and every ```pure block of
ROOT/docs/*.md that parses (a block of statements alone is checked inside `fn main() { ... }`, as
tests/docs/check_docs.py runs it); ctest fmt.bench_docs.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = ""
EXAMPLES = ""
COMMENT = re.compile(r"//[^\n]*")


def read(path, mode="r"):
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        return f.read()


def run(args, cwd, stdin=b""):
    done = subprocess.run([PURE_RUN] + args, cwd=cwd, input=stdin, capture_output=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def lines_of(path):
    if not os.path.exists(path):
        return []
    text = read(path)
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def examples():
    return sorted(n[:-5] for n in os.listdir(EXAMPLES) if n.endswith(".pure"))


def scrambled(text):
    """The same tokens and line breaks, laid out badly: no indentation, trailing spaces, extra blank lines."""
    out = []
    for line in text.split("\n"):
        out.append(line.lstrip(" ") + ("   " if line.strip() else ""))
        if line.strip() == "":
            out.append("")
    return "\n\n\n" + "\n".join(out) + "\n\n"


class Formatter(unittest.TestCase):
    def test_every_example(self):
        checked = 0
        for name in examples():
            with self.subTest(example=name), tempfile.TemporaryDirectory() as tmp:
                source = read(os.path.join(EXAMPLES, name + ".pure"))
                path = os.path.join(tmp, name + ".pure")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(source)
                # the files examples use (`use "lib/..."`), so that the formatted copy runs
                shutil.copytree(os.path.join(EXAMPLES, "lib"), os.path.join(tmp, "lib"))
                code, out, err = run(["--fmt", name + ".pure"], tmp)
                if code == 1:  # a syntax error: refused, the file untouched
                    self.assertIn(b": error: ", err)
                    self.assertEqual(read(path), source)
                    continue
                self.assertEqual((code, out, err), (0, b"", b""))
                formatted = read(path)
                self.assertEqual(run(["--fmt", "--check", name + ".pure"], tmp), (0, b"", b""), "not idempotent")
                self.assertEqual(COMMENT.findall(formatted), [c.rstrip() for c in COMMENT.findall(source)])
                with open(path, "w", encoding="utf-8") as f:
                    f.write(scrambled(source))
                self.assertEqual(run(["--fmt", name + ".pure"], tmp)[0], 0)
                self.assertEqual(read(path), formatted, "not canonical")
                if os.path.exists(os.path.join(EXAMPLES, name + ".runs")):
                    continue  # runs against a data directory: its own test runs it
                flags = lines_of(os.path.join(EXAMPLES, name + ".flags"))
                args = lines_of(os.path.join(EXAMPLES, name + ".args"))
                stdin = read(os.path.join(EXAMPLES, name + ".in"), "rb") if os.path.exists(
                    os.path.join(EXAMPLES, name + ".in")) else b""
                original = run(flags + [os.path.join(EXAMPLES, name + ".pure")] + args, EXAMPLES, stdin)
                after = run(flags + [path] + args, EXAMPLES, stdin)
                self.assertEqual(original[:2], after[:2], "the formatted program prints other bytes")
                checked += 1
        self.assertGreater(checked, 40)

    def test_layout(self):
        source = ("fn  f( x:int,y : int )->int{\n"
                  "// why\n"
                  "if x==y{return -x}   // same\n"
                  "\n\n\n"
                  "let xs=[ 1,2 ,3 ]\n"
                  "return xs[ 0 ]+x *\n"
                  "y\n"
                  "}\n")
        want = ("fn f(x: int, y: int) -> int {\n"
                "  // why\n"
                "  if x == y { return -x }  // same\n"
                "\n"
                "  let xs = [1, 2, 3]\n"
                "  return xs[0] + x *\n"
                "    y\n"
                "}\n")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "a.pure"), "w") as f:
                f.write(source)
            self.assertEqual(run(["--fmt", "a.pure"], tmp), (0, b"", b""))
            self.assertEqual(read(os.path.join(tmp, "a.pure")), want)

    def test_a_file_without_a_final_line_break_gains_one(self):
        # Was refused as "the formatter would change this module's tokens (a bug in the formatter)".
        with tempfile.TemporaryDirectory() as tmp:
            for source, want in (("fn main(){\n print(2)\n}", "fn main() {\n  print(2)\n}\n"),
                                 ("fn main() {\n  print(2)  // \u00e9\n}", "fn main() {\n  print(2)  // \u00e9\n}\n")):
                with open(os.path.join(tmp, "a.pure"), "w", encoding="utf-8") as f:
                    f.write(source)
                self.assertEqual(run(["--fmt", "a.pure"], tmp), (0, b"", b""))
                self.assertEqual(read(os.path.join(tmp, "a.pure")), want)
                self.assertEqual(run(["--fmt", "--check", "a.pure"], tmp), (0, b"", b""))

    def test_check_lists_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = {"good.pure": "fn main() {\n  print(1)\n}\n", "bad.pure": "fn main() {\nprint(1)\n}\n",
                     "broken.pure": "fn main() {\n  print(1\n}\n"}
            for n, t in files.items():
                with open(os.path.join(tmp, n), "w") as f:
                    f.write(t)
            self.assertEqual(run(["--fmt", "--check", "good.pure"], tmp), (0, b"", b""))
            code, out, err = run(["--fmt", "--check", "good.pure", "bad.pure"], tmp)
            self.assertEqual((code, out, err), (1, b"bad.pure\n", b""))
            code, out, err = run(["--fmt", "broken.pure", "bad.pure"], tmp)
            self.assertEqual(code, 1)
            self.assertTrue(err.startswith(b"broken.pure:3:1: error: "), err)
            for n, t in files.items():  # broken.pure untouched; bad.pure formatted
                want = files["good.pure"] if n == "bad.pure" else t
                self.assertEqual(read(os.path.join(tmp, n)), want)
            self.assertEqual(run(["--fmt", "missing.pure"], tmp)[0], 2)
            self.assertEqual(run(["--fmt", "--test", "good.pure"], tmp)[0], 2)
            self.assertEqual(sorted(os.listdir(tmp)), sorted(files))  # no temporary file left


def check_repo():
    # every example but those with a syntax error (the formatter refuses them, printing it)
    names = [n for n in examples() if b": error: " not in run(["--fmt", "--check", n + ".pure"], EXAMPLES)[2]]
    # and the files they import (examples/lib)
    libs = sorted("lib/" + n for n in os.listdir(os.path.join(EXAMPLES, "lib")) if n.endswith(".pure"))
    code, out, err = run(["--fmt", "--check"] + [n + ".pure" for n in names] + libs, EXAMPLES)
    if code != 0:
        sys.stdout.write("not formatted (run pure-run --fmt on them):\n" + out.decode() + err.decode())
        return 1
    print(f"{len(names)} examples and {len(libs)} imported files formatted")
    return 0


DOC_BLOCK = re.compile(r"^```pure\n(.*?)^```", re.S | re.M)
DECLARATION = re.compile(r"^(fn|event|query|type|list|const|test|use)\b", re.M)


def check_bench_docs(root):
    unformatted, checked, refused = [], 0, 0
    bench = sorted(os.path.join(d, n) for d, _, files in os.walk(os.path.join(root, "bench")) for n in files
                   if n.endswith(".pure"))
    for path in bench:
        code, out, err = run(["--fmt", "--check", path], root)
        checked += 1
        if code != 0:
            unformatted.append(f"{os.path.relpath(path, root)}: {(out + err).decode().strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(n for n in os.listdir(os.path.join(root, "docs")) if n.endswith(".md")):
            text = read(os.path.join(root, "docs", name))
            for m in DOC_BLOCK.finditer(text):
                body = m.group(1)
                if not DECLARATION.search(body):  # statements alone: checked as main's body
                    body = "fn main() {\n" + "".join("  " + l + "\n" if l else "\n" for l in body.splitlines()) + "}\n"
                with open(os.path.join(tmp, "block.pure"), "w", encoding="utf-8") as f:
                    f.write(body)
                code, out, err = run(["--fmt", "--check", "block.pure"], tmp)
                if b": error: " in err:  # a block whose point is a syntax error
                    refused += 1
                    continue
                checked += 1
                if code != 0:
                    unformatted.append(f"docs/{name}:{text[:m.start()].count(chr(10)) + 2}: a pure block")
    if unformatted:
        print("not formatted (pure-run --fmt gives them another layout):\n  " + "\n  ".join(unformatted))
        return 1
    print(f"{checked} bench modules and docs blocks formatted ({refused} blocks with a syntax error left out)")
    return 0 if checked > len(bench) else 1


if __name__ == "__main__":
    PURE_RUN = os.path.abspath(sys.argv[1])
    EXAMPLES = os.path.abspath(sys.argv[2])
    if "--check-repo" in sys.argv[3:]:
        sys.exit(check_repo())
    if "--check-bench-docs" in sys.argv[3:]:
        sys.exit(check_bench_docs(os.path.abspath(sys.argv[sys.argv.index("--check-bench-docs") + 1])))
    unittest.main(argv=sys.argv[:1])
