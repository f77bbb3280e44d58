#!/usr/bin/env python3
"""tests/lsp/test_protocol.py — pure-lsp over its pipes, as an editor drives it: the lifecycle,
diagnostics equal to `pure-run --check` on every example, hover, definition, references, rename,
document symbols, completion, positions in UTF-16, and inputs that must not stop it (malformed
framing and JSON-RPC, bad positions, every prefix of a module as it is typed, mutated bytes).

Usage: test_protocol.py PURE_LSP PURE_RUN EXAMPLES_DIR   (standard library only)"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client  # noqa: E402

PURE_LSP = PURE_RUN = EXAMPLES = None
URI = "file:///tmp/fixture.pure"

FIXTURE = """\
// a module for the language server's tests
const LIMIT = 10
type Point { x: int, y: int }
list stock by sku: text { qty: int = 0, price: num = 0.0 }

event restock(sku: text, amount: int) {
  let before = stock[sku].qty
  stock[sku].qty = before + amount
}

query value_of(sku: text) -> num {
  return num(stock[sku].qty) * stock[sku].price
}

fn norm(p: Point) -> int {
  var total = p.x * p.x + p.y * p.y
  if total > LIMIT { total = LIMIT }
  return total
}

fn main() {
  let p = Point { x: 3, y: 4 }
  let face = "\U0001F600"; let n = face.len()
  print("{norm(p)} {n} {face.upper()}")
  for i, w in "a b".words() { print("{i} {w}") }
  print(value_of("pen"))
}
"""


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


def pos(text, needle, nth=0, into=0):
    """(line, character) of the nth occurrence of needle in text, `into` characters into it."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += into
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    return line, utf16_len(text[start:at])


def rng(text, needle, nth=0):
    line, char = pos(text, needle, nth)
    return {"start": {"line": line, "character": char}, "end": {"line": line, "character": char + utf16_len(needle)}}


def check_output(path):
    """pure-run --check's errors of a file: [(line, column, message with its hint)]."""
    run = subprocess.run([PURE_RUN, "--check", path], capture_output=True, text=True, timeout=60)
    errors = []
    for line in run.stderr.splitlines():
        m = re.match(r"^.*?:(\d+):(\d+): error: (.*)$", line)
        if m:
            errors.append([int(m.group(1)), int(m.group(2)), m.group(3)])
        elif line.startswith("  hint: ") and errors:
            errors[-1][2] += "\nhint: " + line[len("  hint: "):]
        elif line.startswith("... and "):
            errors.append([1, 1, line])
    return [tuple(e) for e in errors]


class Base(unittest.TestCase):
    def setUp(self):
        self.client = Client(PURE_LSP)

    def tearDown(self):
        if self.client.proc.poll() is None:
            self.client.proc.kill()
            self.client.proc.wait()
        for stream in (self.client.proc.stdin, self.client.proc.stdout, self.client.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


class Lifecycle(Base):
    def test_initialize_shutdown_exit(self):
        caps = self.client.initialize()["capabilities"]
        self.assertEqual(caps["textDocumentSync"]["change"], 1)
        for provider in ("hoverProvider", "definitionProvider", "referencesProvider", "documentSymbolProvider",
                         "renameProvider", "documentFormattingProvider"):
            self.assertTrue(caps[provider], provider)
        self.assertIn(".", caps["completionProvider"]["triggerCharacters"])
        self.assertEqual(self.client.close(), 0)

    def test_exit_without_shutdown_is_code_1(self):
        self.client.initialize()
        self.client.notify("exit")
        self.assertEqual(self.client.finish(), 1)

    def test_requests_before_initialize_and_after_shutdown(self):
        reply = self.client.request_raw("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}})
        self.assertEqual(reply["error"]["code"], -32002)
        self.client.initialize()
        self.assertEqual(self.client.request_raw("initialize", {})["error"]["code"], -32600)
        self.client.request("shutdown")
        self.assertEqual(self.client.request_raw("textDocument/documentSymbol", {"textDocument": {"uri": URI}})["error"]["code"], -32600)
        self.client.notify("exit")
        self.assertEqual(self.client.finish(), 0)

    def test_input_closed_ends_the_server(self):
        self.client.initialize()
        self.assertEqual(self.client.finish(), 1)


class Diagnostics(Base):
    def test_every_example_as_pure_run_check(self):
        """Every example's diagnostics are pure-run --check's errors: same places, messages, hints."""
        self.client.initialize()
        names = sorted(n for n in os.listdir(EXAMPLES) if n.endswith(".pure"))
        self.assertGreater(len(names), 20)
        with_errors = 0
        for name in names:
            path = os.path.join(EXAMPLES, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            expected = check_output(path)
            got = self.client.open("file://" + path, text)
            self.client.notify("textDocument/didClose", {"textDocument": {"uri": "file://" + path}})
            self.assertEqual(self.client.diagnostics("file://" + path), [])
            lines = text.split("\n")
            places = []
            for d in got:
                self.assertEqual(d["severity"], 1)
                line, char = d["range"]["start"]["line"], d["range"]["start"]["character"]
                # pure-run's columns count bytes from 1, LSP's UTF-16 units from 0
                column = len(lines[line][:char].encode("utf-8")) + 1 if line < len(lines) else 1
                places.append((line + 1, column, d["message"]))
            self.assertEqual(places, expected, name)
            with_errors += bool(expected)
        self.assertGreaterEqual(with_errors, 8)

    def test_several_errors_and_a_fix(self):
        self.client.initialize()
        text = "fn main() {\n  let a = 1\n  a = 2\n  print(b)\n  if a = 1 { print(a) }\n}\n"
        diags = self.client.open(URI, text)
        self.assertGreaterEqual(len(diags), 2)
        self.assertTrue(any("'a'" in d["message"] and "let" in d["message"] for d in diags), diags)
        self.assertTrue(any("unknown name 'b'" in d["message"] for d in diags), diags)
        unknown = next(d for d in diags if "unknown name 'b'" in d["message"])
        line, char = pos(text, "print(b)", 0, 6)
        self.assertEqual(unknown["range"]["start"], {"line": line, "character": char})
        self.assertEqual(unknown["range"]["end"], {"line": line, "character": char + 1})
        self.assertEqual(self.client.change(URI, "fn main() {\n  print(1)\n}\n", 2), [])
        self.assertEqual(self.client.close(), 0)


class Features(Base):
    def setUp(self):
        super().setUp()
        self.client.initialize()
        self.assertEqual(self.client.open(URI, FIXTURE), [])

    def hover(self, needle, nth=0, into=0):
        result = self.client.at("textDocument/hover", URI, *pos(FIXTURE, needle, nth, into))
        return result["contents"]["value"] if result else None

    def definition(self, needle, nth=0, into=0):
        return self.client.at("textDocument/definition", URI, *pos(FIXTURE, needle, nth, into))

    def test_hover(self):
        self.assertIn("let before: int", self.hover("before", 1))
        self.assertIn("var total: int", self.hover("total", 2, 2))
        self.assertIn("param p: Point", self.hover("p.x"))
        self.assertIn("fn norm(p: Point) -> int", self.hover("norm(p)"))
        self.assertIn("event restock(sku: text, amount: int)", self.hover("restock"))
        self.assertIn("query value_of(sku: text) -> num", self.hover("value_of(\"pen\")"))
        stock = self.hover("stock[sku].qty", 0)
        self.assertIn("list stock: list by sku: text { qty: int, price: num }", stock)
        self.assertIn("row: {sku: text, qty: int, price: num}", stock)
        self.assertIn("field price: num", self.hover("price", 1))
        self.assertIn("field x: int", self.hover("p.x", 0, 2))
        self.assertIn("type Point { x: int, y: int }", self.hover("Point", 1))
        self.assertIn("const LIMIT: int = 10", self.hover("LIMIT", 1))
        self.assertIn("text.len() -> int", self.hover("len()"))
        self.assertIn("text.words() -> seq text", self.hover("words()"))
        self.assertIn("print(value)", self.hover("print(\"{norm"))
        self.assertIn("num(x: int | num) -> num", self.hover("num(stock"))
        self.assertIn("let w: text", self.hover("{w}", 0, 1))
        self.assertIn("let i: int", self.hover("for i", 0, 4))
        self.assertIsNone(self.hover("fn main"))  # a keyword
        self.assertIsNone(self.hover("// a module"))

    def test_utf16_positions(self):
        """`n` comes after an emoji (two UTF-16 units, four bytes): positions count UTF-16 units."""
        line, char = pos(FIXTURE, "n = face", 0)
        self.assertEqual(char, len("  let face = \"") + 2 + len("\"; let "))
        result = self.client.at("textDocument/hover", URI, line, char)
        self.assertIn("let n: int", result["contents"]["value"])
        target = self.client.at("textDocument/definition", URI, *pos(FIXTURE, "{n}", 0, 1))
        self.assertEqual(target["range"], {"start": {"line": line, "character": char}, "end": {"line": line, "character": char + 1}})

    def test_definition(self):
        self.assertEqual(self.definition("before +")["range"], rng(FIXTURE, "before"))
        self.assertEqual(self.definition("norm(p)")["range"], rng(FIXTURE, "norm", 0))
        self.assertEqual(self.definition("stock[sku].qty =")["range"], rng(FIXTURE, "stock", 0))
        self.assertEqual(self.definition("price", 1)["range"], rng(FIXTURE, "price"))
        self.assertEqual(self.definition("LIMIT }")["range"], rng(FIXTURE, "LIMIT"))
        self.assertEqual(self.definition("Point {")["range"], rng(FIXTURE, "Point"))
        self.assertEqual(self.definition("sku].price")["range"], rng(FIXTURE, "sku", 4))  # the query's parameter
        self.assertEqual(self.definition("value_of(\"")["uri"], URI)
        self.assertIsNone(self.definition("print"))  # the standard library has no source

    def test_references_and_rename(self):
        refs = self.client.at("textDocument/references", URI, *pos(FIXTURE, "total", 1), context={"includeDeclaration": True})
        self.assertEqual([r["range"] for r in refs], [rng(FIXTURE, "total", n) for n in range(4)])
        refs = self.client.at("textDocument/references", URI, *pos(FIXTURE, "total", 1), context={"includeDeclaration": False})
        self.assertEqual(len(refs), 3)
        qty = self.client.at("textDocument/references", URI, *pos(FIXTURE, "qty", 2), context={"includeDeclaration": True})
        self.assertEqual([r["range"] for r in qty], [rng(FIXTURE, "qty", n) for n in range(4)])
        # a field: its declaration, its uses after '.', and its name in an item literal
        xs = self.client.at("textDocument/references", URI, *pos(FIXTURE, "x: 3"), context={"includeDeclaration": True})
        self.assertEqual([(r["range"]["start"]["line"], r["range"]["start"]["character"]) for r in xs],
                         [pos(FIXTURE, "x: int"), pos(FIXTURE, "p.x * p.x", 0, 2), pos(FIXTURE, "p.x * p.x", 0, 8),
                          pos(FIXTURE, "x: 3")])
        self.assertIn("field x: int", self.hover("x: 3"))
        self.assertEqual(self.definition("y: 4")["range"], rng(FIXTURE, "y", 1))
        edit = self.client.at("textDocument/rename", URI, *pos(FIXTURE, "total", 3), newName="sum2")
        self.assertEqual(sorted((e["range"]["start"]["line"], e["range"]["start"]["character"]) for e in edit["changes"][URI]),
                         sorted(pos(FIXTURE, "total", n) for n in range(4)))
        self.assertTrue(all(e["newText"] == "sum2" for e in edit["changes"][URI]))
        for bad in ("while", "2x", "a-b", "p", ""):
            reply = self.client.request_raw("textDocument/rename", {"textDocument": {"uri": URI},
                                            "position": dict(zip(("line", "character"), pos(FIXTURE, "total", 3))), "newName": bad})
            self.assertIn("error", reply, bad)
        reply = self.client.request_raw("textDocument/rename", {"textDocument": {"uri": URI},
                                        "position": dict(zip(("line", "character"), pos(FIXTURE, "norm(p)"))), "newName": "x"})
        self.assertIn("only a local variable, a parameter or a field", reply["error"]["message"])

    def test_formatting_is_pure_run_fmt(self):
        """textDocument/formatting gives pure-run --fmt's layout as one edit over the whole document
        (its end in UTF-16 units), nothing for a formatted one, and an error for a syntax error."""
        messy = ("fn f(x:int)->int{\n"
                 "if x == 3 { return 1 }   // \U0001F600 in a comment\n"
                 "      return x*2\n"
                 "}\n"
                 "fn main(){\n"
                 " print(f(2))   // \u00e9\n"
                 "}")
        uri = "file:///tmp/fmt_fixture.pure"
        self.client.open(uri, messy)
        edits = self.client.request("textDocument/formatting",
                                    {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.pure")
            with open(path, "w", encoding="utf-8") as f:
                f.write(messy)
            run = subprocess.run([PURE_RUN, "--fmt", path], capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(path, encoding="utf-8") as f:
                expected = f.read()
        self.assertNotEqual(expected, messy)
        last = messy.split("\n")[-1]
        self.assertEqual(edits, [{"range": {"start": {"line": 0, "character": 0},
                                            "end": {"line": 6, "character": len(last.encode("utf-16-le")) // 2}},
                                  "newText": expected}])
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                      "contentChanges": [{"text": expected}]})
        self.assertEqual(self.client.request("textDocument/formatting", {"textDocument": {"uri": uri}, "options": {}}), [])
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                                      "contentChanges": [{"text": "fn main() {\n  print(1\n}\n"}]})
        reply = self.client.request_raw("textDocument/formatting", {"textDocument": {"uri": uri}, "options": {}})
        self.assertIn("error", reply)
        self.assertIn("/tmp/fmt_fixture.pure:", reply["error"]["message"])

    def test_document_symbols(self):
        symbols = self.client.request("textDocument/documentSymbol", {"textDocument": {"uri": URI}})
        names = [(s["name"], s["kind"]) for s in symbols]
        self.assertEqual(names, [("LIMIT", 14), ("Point", 23), ("stock", 18), ("restock", 24), ("value_of", 12),
                                 ("norm", 12), ("main", 12)])
        stock = symbols[2]
        self.assertEqual([c["name"] for c in stock["children"]], ["sku", "qty", "price"])
        self.assertEqual(stock["selectionRange"], rng(FIXTURE, "stock"))
        self.assertEqual(symbols[5]["detail"], "fn norm(p: Point) -> int")

    def test_completion(self):
        # a new line in main: keywords, stored lists, functions, the standard library, locals
        text = FIXTURE.replace("  print(value_of(\"pen\"))\n", "  print(value_of(\"pen\"))\n  no\n")
        self.client.change(URI, text, 2)
        items = self.client.at("textDocument/completion", URI, *pos(text, "  no\n", 0, 4))["items"]
        labels = {i["label"]: i for i in items}
        for expected in ("while", "stock", "norm", "restock", "LIMIT", "Point", "p", "face", "fixed", "sqrt"):
            self.assertIn(expected, labels)
        self.assertEqual(labels["norm"]["detail"], "fn norm(p: Point) -> int")
        self.assertEqual(labels["fixed"]["detail"], "fixed(num, int) -> text")
        self.assertNotIn("before", labels)  # a local of another function
        # fields after `.`, though `p.` alone does not parse
        text2 = FIXTURE.replace("  print(value_of(\"pen\"))\n", "  print(value_of(\"pen\"))\n  let q = p.\n")
        diags = self.client.change(URI, text2, 3)
        self.assertTrue(diags)
        items = self.client.at("textDocument/completion", URI, *pos(text2, "p.\n", 0, 2))["items"]
        self.assertEqual(sorted(i["label"] for i in items), ["x", "y"])
        # methods of a text, and a stored list's methods
        text3 = FIXTURE.replace("  print(value_of(\"pen\"))\n", "  print(value_of(\"pen\"))\n  face.\n  stock.\n")
        self.client.change(URI, text3, 4)
        labels = {i["label"] for i in self.client.at("textDocument/completion", URI, *pos(text3, "face.\n", 0, 5))["items"]}
        self.assertTrue({"len", "upper", "split"} <= labels, labels)
        labels = {i["label"] for i in self.client.at("textDocument/completion", URI, *pos(text3, "stock.\n", 0, 6))["items"]}
        self.assertTrue({"has", "count", "remove"} <= labels, labels)


FIELDS = """\
list accounts by id: int { owner: text, balance: num = 0.0 }
list savings by id: int { owner: text, rate: num }
list twin by id: int { owner: text, rate: num }
type Money { amount: num, currency: text }

event deposit(id: int, amount: num) {
  accounts[id] = { owner: "x", balance: amount }
  accounts[id].balance += amount
}

query richest() -> num {
  let copy = list by id: int { owner: text, balance: num = 0.0 }
  for a in accounts { copy[a.id] = a }
  return accounts.max(balance) + copy.sum(balance)
}

fn main() {
  var xs = seq Money
  xs.push(Money { amount: 1.0, currency: "eur" })
  xs.sort_by(amount desc, currency)
  let m = xs.first()
  print("{m.amount} {deposit(1, 2.0).ok}")
}
"""


def apply_edits(text, edits):
    """text with the LSP edits (all on lines of ASCII) applied, the last first."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        a, b = e["range"]["start"], e["range"]["end"]
        assert a["line"] == b["line"]
        line = lines[a["line"]]
        lines[a["line"]] = line[:a["character"]] + e["newText"] + line[b["character"]:]
    return "\n".join(lines)


class FieldRename(Base):
    """textDocument/rename and prepareRename of a field: every occurrence of that field (its
    declaration, `.f`, `{f: ...}`, `.max(f)`, `.sort_by(f desc)`, a list type of the same shape),
    nothing else; refused when two stored lists share the row type, for a field declared nowhere in
    the module, and for a new name that clashes."""

    def setUp(self):
        super().setUp()
        self.client.initialize()
        self.uri = "file:///tmp/fields.pure"
        self.assertEqual(self.client.open(self.uri, FIELDS), [])

    def rename(self, needle, nth, new_name, into=0):
        return self.client.request_raw("textDocument/rename", {"textDocument": {"uri": self.uri},
                                       "position": dict(zip(("line", "character"), pos(FIELDS, needle, nth, into))),
                                       "newName": new_name})

    def check_renamed(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "renamed.pure")
            with open(path, "w") as f:
                f.write(text)
            run = subprocess.run([PURE_RUN, path], capture_output=True, text=True, timeout=60)
            self.assertEqual((run.returncode, run.stdout, run.stderr), (0, "1.0 true\n", ""))

    def test_stored_list_field(self):
        # from its declaration, from a use after '.', from `.max(balance)`: the same six places
        want = [pos(FIELDS, "balance", n) for n in range(6)]
        for nth in (0, 2, 4):
            edit = self.rename("balance", nth, "funds")
            edits = edit["result"]["changes"][self.uri]
            self.assertEqual(sorted((e["range"]["start"]["line"], e["range"]["start"]["character"]) for e in edits), want)
            self.assertTrue(all(e["newText"] == "funds" and
                                e["range"]["end"]["character"] - e["range"]["start"]["character"] == 7 for e in edits))
            renamed = apply_edits(FIELDS, edits)
            self.assertNotIn("balance", renamed)
            self.check_renamed(renamed)
        hover = self.client.at("textDocument/hover", self.uri, *pos(FIELDS, "balance", 2))["contents"]["value"]
        self.assertEqual(hover, "```pure\nfield balance: num\n```\n(of stored list 'accounts')")
        hover = self.client.at("textDocument/hover", self.uri, *pos(FIELDS, "rate", 1))["contents"]["value"]
        self.assertEqual(hover, "```pure\nfield rate: num\n```\n(of stored lists 'savings' and 'twin')")
        prepared = self.client.at("textDocument/prepareRename", self.uri, *pos(FIELDS, "balance", 3))
        self.assertEqual(prepared, rng(FIELDS, "balance", 3))

    def test_item_type_field(self):
        edit = self.rename("m.amount", 0, "value", 2)
        edits = edit["result"]["changes"][self.uri]
        # the type's field, the literal's, the sort key and the use; not deposit's parameter `amount`
        self.assertEqual(sorted((e["range"]["start"]["line"], e["range"]["start"]["character"]) for e in edits),
                         [pos(FIELDS, "amount: num, currency"), pos(FIELDS, "amount: 1.0"), pos(FIELDS, "amount desc"),
                          pos(FIELDS, "m.amount", 0, 2)])
        self.check_renamed(apply_edits(FIELDS, edits))

    def test_refusals(self):
        # savings and twin have exactly the same row type: a use cannot be told apart
        for needle, nth in (("rate", 0), ("rate", 1), ("owner", 1)):
            reply = self.client.request_raw("textDocument/prepareRename", {"textDocument": {"uri": self.uri},
                                            "position": dict(zip(("line", "character"), pos(FIELDS, needle, nth)))})
            self.assertIn("the stored lists 'savings' and 'twin' have exactly the same row type", reply["error"]["message"])
            self.assertIn("cannot be renamed alone", self.rename(needle, nth, "r2")["error"]["message"])
        self.assertEqual(self.rename("balance", 0, "owner")["error"]["message"],
                         "'owner' is already a field of stored list 'accounts'")
        self.assertEqual(self.rename("currency", 1, "amount")["error"]["message"], "'amount' is already a field of 'Money'")
        self.assertEqual(self.rename("balance", 0, "list")["error"]["message"], "'list' is a keyword")
        self.assertIn("is not a name", self.rename("balance", 0, "2b")["error"]["message"])
        self.assertIn("field 'ok' is not declared in this module", self.rename(".ok", 0, "fine", 1)["error"]["message"])
        self.assertIn("only a local variable, a parameter or a field", self.rename("deposit", 0, "d")["error"]["message"])

    def test_a_field_named_in_a_test_block_is_not_renamed(self):
        # test blocks are not checked by the server: their uses are unknown, so no rename
        text = FIELDS + 'test "a deposit" {\n  assert(deposit(1, 2.0).ok)\n  assert_eq(accounts[1].balance, 4.0)\n}\n'
        self.client.change(self.uri, text, 2)
        reply = self.client.request_raw("textDocument/rename", {"textDocument": {"uri": self.uri},
                                        "position": dict(zip(("line", "character"), pos(text, "balance"))), "newName": "funds"})
        self.assertEqual(reply["error"]["message"],
                         "field 'balance' may be used in test \"a deposit\" (line %d), which the language server does not "
                         "check: rename it by hand, or with the tests moved out" % (pos(text, "accounts[1]")[0] + 1))
        # a field the test does not name is renamed
        reply = self.client.request_raw("textDocument/rename", {"textDocument": {"uri": self.uri},
                                        "position": dict(zip(("line", "character"), pos(text, "currency"))), "newName": "cur"})
        self.assertEqual(len(reply["result"]["changes"][self.uri]), 3)


class Imports(Base):
    """A document with `use "lib.pure"` (docs/tooling.md, "Imports"): the imported names are known,
    a definition there answers the imported file's URI and place, an imported file's errors are
    shown at the first use and on the imported file's URI, and taken back from it when fixed."""

    def test_imports(self):
        import tempfile
        self.client.initialize()
        with tempfile.TemporaryDirectory() as tmp:
            os.mkdir(os.path.join(tmp, "lib"))
            lib = os.path.join(tmp, "lib", "util.pure")
            with open(lib, "w") as f:
                f.write("// helpers\nfn scaled(n: int) -> int {\n  return n * 3\n}\n")
            uri = "file://" + os.path.join(tmp, "main.pure")
            text = 'use "lib/util.pure"\n\nfn main() {\n  let v = scaled(2)\n  print("{v}")\n}\n'
            self.assertEqual(self.client.open(uri, text), [])
            hover = self.client.at("textDocument/hover", uri, *pos(text, "scaled"))
            self.assertIn("fn scaled(n: int) -> int", hover["contents"]["value"])
            # definition: the imported file's URI, the name's range there
            lib_uri = "file://" + lib
            self.assertEqual(self.client.at("textDocument/definition", uri, *pos(text, "scaled")),
                             {"uri": lib_uri, "range": {"start": {"line": 1, "character": 3}, "end": {"line": 1, "character": 9}}})
            symbols = self.client.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
            self.assertEqual([s["name"] for s in symbols], ["main"])
            # a type error inside the imported file: shown at the use, naming the file and line
            with open(lib, "w") as f:
                f.write('// helpers\nfn scaled(n: int) -> int {\n  return "n"\n}\n')
            diags = self.client.change(uri, text, 2)
            self.assertEqual(len(diags), 1, diags)
            self.assertEqual(diags[0]["range"]["start"], {"line": 0, "character": 0})
            self.assertTrue(diags[0]["message"].startswith("in an imported file: " + lib + ":3:"), diags)
            # and on the imported file itself, at its place there
            lib_diags = self.client.diagnostics(lib_uri)
            self.assertEqual(len(lib_diags), 1, lib_diags)
            self.assertEqual(lib_diags[0]["range"], {"start": {"line": 2, "character": 9}, "end": {"line": 2, "character": 12}})
            self.assertEqual(diags[0]["message"], "in an imported file: " + lib + ":3:10: " + lib_diags[0]["message"])
            # a syntax error in the imported file (found while resolving): on that file too
            with open(lib, "w") as f:
                f.write('// helpers\nfn scaled(n: int) -> int {\n  return n * * 3\n}\n')
            diags = self.client.change(uri, text, 3)
            self.assertTrue(diags[0]["message"].startswith("in an imported file: " + lib + ":3:"), diags)
            lib_diags = self.client.diagnostics(lib_uri)
            self.assertEqual([d["range"]["start"] for d in lib_diags], [{"line": 2, "character": 13}], lib_diags)
            # fixed: the imported file's errors are taken back
            with open(lib, "w") as f:
                f.write("// helpers\nfn scaled(n: int) -> int {\n  return n * 3\n}\n")
            self.assertEqual(self.client.change(uri, text, 4), [])
            self.assertEqual(self.client.diagnostics(lib_uri), [])
            # a missing file: at the use too
            os.remove(lib)
            diags = self.client.change(uri, text, 5)
            self.assertEqual(diags[0]["range"]["start"], {"line": 0, "character": 0})
            self.assertIn("cannot read the imported file '" + lib + "'", diags[0]["message"])
        self.assertEqual(self.client.close(), 0)


class Robustness(Base):
    def alive(self):
        """The server still answers."""
        self.assertIsInstance(self.client.request("textDocument/documentSymbol", {"textDocument": {"uri": URI}}), list)

    def test_malformed_messages(self):
        self.client.initialize()
        self.client.open(URI, FIXTURE)
        c = self.client
        c.write_raw(b"Content-Length: 9\r\n\r\n{not json")
        self.assertEqual(c.receive()["error"]["code"], -32700)
        for body, code in ((b"[1,2]", -32600), (b'"text"', -32600), (b'{"jsonrpc":"2.0","id":5}', -32600),
                           (b'{"jsonrpc":"2.0","id":{"a":1},"method":"shutdown"}', -32600),
                           (b'{"jsonrpc":"2.0","id":6,"method":7}', -32600),
                           (b'{"jsonrpc":"2.0","id":7,"method":"nothing/here"}', -32601),
                           (b'{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":[1]}', -32602),
                           (b'{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{}}', -32602),
                           (b'{"jsonrpc":"2.0","id":10,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///none"},'
                            b'"position":{"line":0,"character":0}}}', -32803)):
            c.write_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.assertEqual(c.receive()["error"]["code"], code, body)
        # headers without a length, a length that is not a number, a header line that is not one
        c.write_raw(b"Content-Type: x\r\n\r\n")
        c.write_raw(b"Content-Length: 12x\r\n\r\n")
        c.write_raw(b"nonsense\r\n\r\n")
        c.write_raw(b"\r\n\r\n")
        # bad parameters in notifications: logged, not fatal
        c.notify("textDocument/didOpen", {"textDocument": {"uri": 5}})
        c.notify("textDocument/didChange", {"textDocument": {"uri": "file:///never-opened"}, "contentChanges": [{"text": ""}]})
        c.notify("textDocument/didChange", {"textDocument": {"uri": URI}, "contentChanges": 3})
        c.notify("textDocument/didOpen", [1, 2])
        self.alive()
        # a lone surrogate cannot become UTF-8: the message is refused as JSON, the document kept
        c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                            "contentChanges": [{"text": "fn main() { print(\"\udc00\") }\n"}]})
        self.assertEqual(c.receive()["error"]["code"], -32700)
        self.assertIn("let before: int", c.at("textDocument/hover", URI, *pos(FIXTURE, "before"))["contents"]["value"])
        # texts the frontend refuses or that end anywhere: NUL bytes, an unclosed string, nesting
        # past the parser's limit, emoji alone
        for version, text in enumerate(("fn main() {\0 let\0", "fn main() { print(\"abc",
                                        "fn main() { let x = " + "(" * 5000 + "\n", "\U0001F600" * 3), start=2):
            self.assertTrue(c.change(URI, text, version), text[:40])
            c.at("textDocument/hover", URI, 0, 14)
            c.at("textDocument/completion", URI, 0, 3)
        c.change(URI, FIXTURE, 10)
        self.alive()
        # positions outside the document, negative, huge, not integers
        for line, char in ((0, 10**6), (10**6, 0), (2**40, 2**40), (len(FIXTURE.split("\n")), 0)):
            for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion", "textDocument/references"):
                c.at(method, URI, line, char)
        for line, char in ((-1, 0), (0, -5), (1.5, 0), ("1", 0), (None, 0)):
            reply = c.request_raw("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": line, "character": char}})
            self.assertEqual(reply["error"]["code"], -32602)
        # a position in the middle of a UTF-8 sequence (the second unit of the emoji)
        line, char = pos(FIXTURE, "\U0001F600")
        for k in range(4):
            c.at("textDocument/hover", URI, line, char + k)
        self.alive()
        self.assertTrue(any("skipped" in line for line in c.stderr), c.stderr)
        self.assertEqual(c.close(), 0)

    def test_oversized_message_is_refused(self):
        self.client.initialize()
        self.client.write_raw(b"Content-Length: 99999999999\r\n\r\nabc")
        self.assertEqual(self.client.finish(), 1)
        self.assertTrue(any("over the limit" in line for line in self.client.stderr), self.client.stderr)

    def test_every_prefix_while_typing(self):
        """The fixture typed a piece at a time: each prefix is analysed and queried at its end."""
        self.client.initialize()
        self.client.open(URI, "")
        step = 7
        version = 1
        for end in range(0, len(FIXTURE) + step, step):
            text = FIXTURE[:end]
            version += 1
            self.client.change(URI, text, version)
            last = text.split("\n")
            line, char = len(last) - 1, utf16_len(last[-1])
            for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion"):
                self.client.at(method, URI, line, char)
            if version % 10 == 0:
                self.client.request("textDocument/documentSymbol", {"textDocument": {"uri": URI}})
        self.assertEqual(self.client.close(), 0)

    def test_mutated_examples(self):
        """Examples with bytes deleted, duplicated or replaced (seeded): never a crash."""
        self.client.initialize()
        self.client.open(URI, "")
        rnd = random.Random(38)
        names = sorted(n for n in os.listdir(EXAMPLES) if n.endswith(".pure"))
        version = 1
        for i in range(150):
            with open(os.path.join(EXAMPLES, rnd.choice(names)), encoding="utf-8") as f:
                text = f.read()
            for _ in range(rnd.randint(1, 4)):
                at = rnd.randrange(len(text) + 1)
                kind = rnd.randrange(3)
                if kind == 0:
                    text = text[:at] + text[at + rnd.randint(1, 8):]
                elif kind == 1:
                    text = text[:at] + text[at:at + 10] + text[at:]
                else:
                    text = text[:at] + rnd.choice("{}()[].,=:\"\\\n xé\U0001F600") + text[at:]
            version += 1
            self.client.change(URI, text, version)
            lines = text.split("\n")
            line = rnd.randrange(len(lines))
            char = rnd.randrange(utf16_len(lines[line]) + 1)
            for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion", "textDocument/references"):
                self.client.at(method, URI, line, char)
        self.assertEqual(self.client.close(), 0)


if __name__ == "__main__":
    PURE_LSP, PURE_RUN, EXAMPLES = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=[sys.argv[0], "-v"])
