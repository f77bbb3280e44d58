#!/usr/bin/env python3
"""tests/store_loops/store_loops_model.py — model-based test of loops in main over stored lists.

Usage: store_loops_model.py PURE_RUN [--count N] [--seed S] [--keep DIR] [--write-seeds DIR K]

Generates Pure programs whose main loops over a stored list (int, text and composite keys, and
stored sequences; the whole list, a key prefix, .range(), `for i, r in`) and, on every pass,
calls 0-3 queries and 0-3 events (committing, failing after writes, or walking part of the list
themselves), with 1 to ~3000 rows so the B+tree reaches three levels. A Python model of the
semantics (docs/language.md, "Loops over stored lists") computes the expected output; pure-run
must print exactly that, exit 0, and not crash.

Semantics modelled: a loop in main walks the list as it was when the loop started; events change
the state at once (queries see it); a failed event changes nothing; a loop inside an event walks
the live list and sees the event's own field writes.

Program i of a run uses seed S + i, so a failure prints the seed that replays it alone
(--seed S --count 1). --keep DIR writes every failing program there. --write-seeds DIR K writes
K generated programs (small ones) to DIR and exits, for the fuzzer's corpus.
Exit code: 0 when every program matched, 1 otherwise. Standard library only.
"""
import argparse
import os
import random
import subprocess
import sys
import time

WINDOW = 16  # rows a query's or event's range walk covers


# ---- expressions: Pure text and a Python function of the pass environment ----------------------
class E:
    def __init__(self, text, fn):
        self.text, self.fn = text, fn


def int_expr(rng, kind_key, modulo):
    """A non-negative int computed from the row (key field kind_key) and the pass counter c."""
    s = rng.randint(1, 5)
    k = rng.randint(0, 9)
    choice = rng.randrange(5)
    if choice == 0:
        return E(f"r.{kind_key}", lambda env: env["r"][kind_key])
    if choice == 1:
        return E(f"r.{kind_key} + {s}", lambda env: env["r"][kind_key] + s)
    if choice == 2:
        return E(f"(r.{kind_key} * 7 + c) % {modulo}", lambda env: (env["r"][kind_key] * 7 + env["c"]) % modulo)
    if choice == 3:
        return E(f"(c * {s} + {k}) % {modulo}", lambda env: (env["c"] * s + k) % modulo)
    return E(f"{k}", lambda env: k)


def small_expr(rng):
    k = rng.randint(0, 8)
    if rng.random() < 0.5:
        return E(f"(c + {k}) % 9", lambda env: (env["c"] + k) % 9)
    return E(f"{k}", lambda env: k)


# ---- list kinds ---------------------------------------------------------------------------------
class Kind:
    """One stored list: its declaration, loader, events, queries and the model of each."""

    name = "L"

    def __init__(self, rng, rows):
        self.rng = rng
        self.rows = rows


class IntKeyed(Kind):
    # list L by id: int { v: int, s: text }; keys 0, step, 2*step, ...
    def __init__(self, rng, rows):
        super().__init__(rng, rows)
        self.step = rng.randint(1, 3)
        self.modulo = rows * self.step + 10
        self.has_text = True

    def decl(self):
        return "list L by id: int { v: int, s: text }\n"

    def initial(self):
        return {(i * self.step,): [i, f"s{i}"] for i in range(self.rows)}

    def loader(self):
        return f'event load(n: int) {{ for i in 0 .. n {{ L[i * {self.step}] = {{ v: i, s: "s{{i}}" }} }} }}\n'

    def key_fields(self):
        return ["id"]

    def key_args(self, rng):
        return [int_expr(rng, "id", self.modulo)]

    def params(self):
        return "id: int"

    def key_use(self):
        return "id"

    def row_key(self, row):
        return row["id"]

    def loop_forms(self, rng):
        lo = rng.randint(0, self.modulo)
        hi = lo + rng.randint(0, self.modulo)
        return [("L", None), (f"L.range({lo}, {hi})", ("range", lo, hi))]

    def in_form(self, key, form):
        if form is None:
            return True
        return form[1] <= key[0] < form[2]

    def inner_form(self):
        w = 4 * self.step
        return (f"L.range(o.id, o.id + {w})", lambda k, outer: outer["id"] <= k[0] < outer["id"] + w,
                lambda outer: [(i,) for i in range(outer["id"], outer["id"] + w)])

    def range_query(self):
        return (f"query q_sum(lo: int) -> int {{\n  var t = 0\n  for x in L.range(lo, lo + {WINDOW}) {{ t += x.v }}\n  return t\n}}\n",
                lambda st, lo: sum(v[0] for k, v in st.items() if lo <= k[0] < lo + WINDOW))

    def bulk_event(self):
        text = (f"event e_bulk(lo: int, d: int) {{\n  var t = 0\n  for x in L.range(lo, lo + {WINDOW}) {{\n"
                f"    t += x.v\n    if L.has(x.id + {self.step}) {{ L[x.id + {self.step}].v += d }}\n  }}\n"
                f'  print("bulk {{t}}")\n}}\n')

        def model(st, out, lo, d):
            t = 0
            for k in sorted(k for k in st if lo <= k[0] < lo + WINDOW):
                t += st[k][0]
                nk = (k[0] + self.step,)
                if nk in st:
                    st[nk][0] += d
            out.append(f"bulk {t}")
        return text, model


class TextKeyed(Kind):
    # list L by k: text { v: int }; keys "k0".."k{rows-1}" (text order, not numeric)
    def __init__(self, rng, rows):
        super().__init__(rng, rows)
        self.modulo = rows + 10
        self.has_text = False

    def decl(self):
        return "list L by k: text { v: int }\n"

    def initial(self):
        return {(f"k{i}",): [i, None] for i in range(self.rows)}

    def loader(self):
        return 'event load(n: int) { for i in 0 .. n { L["k{i}"] = { v: i } } }\n'

    def key_fields(self):
        return ["k"]

    def key_args(self, rng):
        e = int_expr(rng, "v", self.modulo)
        return [E('"k{' + e.text + '}"', lambda env: f"k{e.fn(env)}")]

    def params(self):
        return "k: text"

    def key_use(self):
        return "k"

    def loop_forms(self, rng):
        return [("L", None)]  # a one-column key has no shorter prefix

    def in_form(self, key, form):
        return form is None or key[0] == form[1]

    def inner_form(self):
        return ("L", lambda k, outer: True, None) if self.rows <= 40 else None

    def range_query(self):
        return None

    def bulk_event(self):
        if self.rows > 200:
            return None
        text = ("event e_bulk(lo: int, d: int) {\n  var t = 0\n  for x in L {\n    t += x.v\n"
                '    L[x.k].v += d\n  }\n  print("bulk {t}")\n}\n')

        def model(st, out, lo, d):
            t = 0
            for k in sorted(st):
                t += st[k][0]
                st[k][0] += d
            out.append(f"bulk {t}")
        return text, model


class CompKeyed(Kind):
    # list L by (a: int, b: int) { v: int, s: text } or (a: int, b: text) { v: int }
    def __init__(self, rng, rows):
        super().__init__(rng, rows)
        self.text_b = rng.random() < 0.4
        self.groups = max(1, rows // 5)
        self.modulo = self.groups + 3
        self.has_text = not self.text_b

    def b_val(self, b):
        return f"t{b}" if self.text_b else b

    def decl(self):
        if self.text_b:
            return "list L by (a: int, b: text) { v: int }\n"
        return "list L by (a: int, b: int) { v: int, s: text }\n"

    def initial(self):
        st = {}
        for i in range(self.rows):
            st[(i // 5, self.b_val(i % 5))] = [i, None if self.text_b else f"s{i}"]
        return st

    def loader(self):
        if self.text_b:
            return 'event load(n: int) { for i in 0 .. n { L[i / 5, "t{i % 5}"] = { v: i } } }\n'
        return 'event load(n: int) { for i in 0 .. n { L[i / 5, i % 5] = { v: i, s: "s{i}" } } }\n'

    def key_fields(self):
        return ["a", "b"]

    def key_args(self, rng):
        a = int_expr(rng, "a", self.modulo)
        s = rng.randint(0, 7)
        if self.text_b:
            b = E('"t{(c + ' + str(s) + ') % 8}"', lambda env: f"t{(env['c'] + s) % 8}")
        else:
            b = E(f"(c + {s}) % 8", lambda env: (env["c"] + s) % 8)
        return [a, b]

    def params(self):
        return "a: int, b: text" if self.text_b else "a: int, b: int"

    def key_use(self):
        return "a, b"

    def loop_forms(self, rng):
        g = rng.randint(0, self.modulo)
        lo = rng.randint(0, self.modulo)
        hi = lo + rng.randint(0, self.modulo)
        return [("L", None), (f"L[{g}]", ("prefix", g)), (f"L.range({lo}, {hi})", ("range", lo, hi))]

    def in_form(self, key, form):
        if form is None:
            return True
        if form[0] == "prefix":
            return key[0] == form[1]
        return form[1] <= key[0] < form[2]

    def inner_form(self):
        # every b an event can write: int b in 0..7, text b "t0".."t9" (e_bulk's "t{v % 8}" too)
        bs = [f"t{b}" for b in range(10)] if self.text_b else list(range(8))
        return "L[o.a]", lambda k, outer: k[0] == outer["a"], lambda outer: [(outer["a"], b) for b in bs]

    def range_query(self):
        return ("query q_sum(lo: int) -> int {\n  var t = 0\n  for x in L[lo] { t += x.v }\n  return t\n}\n",
                lambda st, lo: sum(v[0] for k, v in st.items() if k[0] == lo))

    def bulk_event(self):
        nxt = '"t{x.v % 8}"' if self.text_b else "(x.b + 1) % 8"
        text = (f"event e_bulk(lo: int, d: int) {{\n  var t = 0\n  for x in L[lo] {{\n    t += x.v\n"
                f"    if L.has(x.a, {nxt}) {{ L[x.a, {nxt}].v += d }}\n  }}\n  print(\"bulk {{t}}\")\n}}\n")

        def model(st, out, lo, d):
            t = 0
            for k in sorted(k for k in st if k[0] == lo):
                v = st[k][0]
                t += v
                nk = (k[0], f"t{v % 8}") if self.text_b else (k[0], (k[1] + 1) % 8)
                if nk in st:
                    st[nk][0] += d
            out.append(f"bulk {t}")
        return text, model


# ---- one program -------------------------------------------------------------------------------
class Program:
    """Pure source lines and the expected output, built side by side."""

    def __init__(self):
        self.src = []
        self.main = []
        self.out = []
        self.c = 0  # main's pass counter (the Pure program's `c`)


def text_cols(text_field, v):
    return [v[1]] if text_field else []


def make_calls(rng, queries, events, key_args, index_args):
    calls = []
    for _ in range(rng.randint(0, 3)):
        name, keyed, model = rng.choice(queries)
        args = key_args(rng) if keyed else ([index_args(rng)] if keyed is False else [])
        calls.append(("q", name, keyed, model, args, None))
    for _ in range(rng.randint(0, 3)):
        name, keyed, model = rng.choice(events)
        args = key_args(rng) if keyed else [index_args(rng)]
        calls.append(("e", name, keyed, model, args, small_expr(rng)))
    rng.shuffle(calls)
    return calls


class Loop:
    """One loop of main: its Pure text, and the model running it."""

    def __init__(self, rng, kind, fields, text_field, calls, form_text, keep, var, with_index, stop, inner=None, candidates=None):
        self.kind, self.fields, self.text_field, self.calls = kind, fields, text_field, calls
        self.candidates = candidates
        self.form_text, self.keep, self.var, self.with_index, self.stop, self.inner = form_text, keep, var, with_index, stop, inner

    def lines(self, indent, tag):
        pad = "  " * indent
        v = self.var
        index = f"i{tag}"
        out = [f"{pad}for {index + ', ' if self.with_index else ''}{v} in {self.form_text} {{", f"{pad}  c += 1"]
        shown = ["{c}"] + (["{%s}" % index] if self.with_index else []) + ["{%s.%s}" % (v, f) for f in self.fields] + ["{%s.v}" % v]
        shown += ["{%s.s}" % v] if self.text_field else []
        for j, (what, name, keyed, model, args, d) in enumerate(self.calls):
            arg_text = ", ".join([a.text.replace("r.", v + ".") for a in args] + ([d.text] if d else []))
            out.append(f"{pad}  let {'v' if what == 'q' else 'o'}{tag}{j} = {name}({arg_text})")
            shown.append(("{v%s%d}" if what == "q" else "{o%s%d.ok}") % (tag, j))
        out.append(f'{pad}  print("' + " ".join(shown) + '")')
        if self.inner:
            out += self.inner.lines(indent + 1, tag + "n")
        if self.stop:
            out.append(f"{pad}  if c >= {self.stop} {{ break }}")
        out.append(pad + "}")
        return out

    def run(self, p, st, walked_rows, outer=None):
        keep = (lambda k: self.keep(k, outer))
        if self.candidates and outer is not None:
            keep.candidates = self.candidates(outer)  # the keys worth looking at, so a nested loop is not O(n log n)
        for index, (key, v) in enumerate(walked_rows(keep)):  # the state as of the start
            p.c += 1
            r = dict(zip(self.fields, key))
            r["v"] = v[0]
            env = {"r": r, "c": p.c}
            line = [str(p.c)] + ([str(index)] if self.with_index else []) + [str(x) for x in key] + [str(v[0])]
            line += text_cols(self.text_field, v)
            for what, name, keyed, model, args, d in self.calls:
                vals = [a.fn(env) for a in args]
                arg = tuple(vals) if keyed else (vals[0] if vals else None)
                if what == "q":
                    line.append(model(st, arg))
                else:
                    line.append("true" if model(st, p.out, arg, d.fn(env)) else "false")
            p.out.append(" ".join(line))
            if self.inner:
                self.inner.run(p, st, walked_rows, r)
            if self.stop and p.c >= self.stop:
                break


def add_loops(rng, p, kind, st, fields, queries, events, walked_rows, key_args, index_args, text_field):
    """Main's loops, one after the other, some with a loop nested inside: each walks the state as of
    its own start (walked_rows(keep)) and calls queries and events on every pass."""
    for _ in range(rng.choice([1, 1, 2])):
        form_text, form = rng.choice(kind.loop_forms(rng))
        seq = isinstance(kind, Sequence)
        stop = rng.randint(1, max(1, kind.rows)) if rng.random() < 0.15 else None
        inner = None
        nested = kind.inner_form() if rng.random() < 0.25 else None
        if nested:
            inner_text, inner_keep, candidates = nested
            # An inner loop over the whole list (text keys, sequences) walks what the events before it
            # added: it always stops, or the list could grow without end.
            inner_stop = rng.randint(1, 3 * max(1, kind.rows)) if rng.random() < 0.2 or not candidates else None
            inner = Loop(rng, kind, fields, text_field, make_calls(rng, queries, events, key_args, index_args), inner_text,
                         inner_keep, "r", seq and rng.random() < 0.5, inner_stop, candidates=candidates)
        loop = Loop(rng, kind, fields, text_field, make_calls(rng, queries, events, key_args, index_args), form_text,
                    lambda k, outer, form=form: kind.in_form(k, form), "o" if inner else "r", seq and rng.random() < 0.5, stop, inner)
        p.main += loop.lines(1, str(len(p.main)))
        loop.run(p, st, walked_rows)


def keyed_program(rng, kind):
    p = Program()
    st = kind.initial()
    fields = kind.key_fields()
    params, use, text_field = kind.params(), kind.key_use(), kind.has_text
    p.src += [kind.decl(), kind.loader()]
    events, queries = [], []
    set_s = f'    L[{use}].s = "x{{d}}"\n' if text_field else ""
    p.src.append(f"event e_set({params}, d: int) {{\n  if L.has({use}) {{\n    L[{use}].v += d\n{set_s}  }}\n}}\n")

    def m_set(st, out, key, d):
        if key in st:
            st[key][0] += d
            if text_field:
                st[key][1] = f"x{d}"
        return True
    events.append(("e_set", True, m_set))
    ins_val = f'{{ v: d, s: "i{{d}}" }}' if text_field else "{ v: d }"
    p.src.append(f"event e_ins({params}, d: int) {{ L[{use}] = {ins_val} }}\n")

    def m_ins(st, out, key, d):
        st[key] = [d, f"i{d}" if text_field else None]
        return True
    events.append(("e_ins", True, m_ins))
    p.src.append(f"event e_del({params}, d: int) {{ L.remove({use}) }}\n")
    events.append(("e_del", True, lambda st, out, key, d: (st.pop(key, None), True)[1]))
    # writes, then fails when d is even: every write is undone
    p.src.append(f"event e_fail({params}, d: int) {{\n  L[{use}] = {ins_val}\n  let gone = L.remove({use})\n"
                 f"  L[{use}] = {ins_val}\n  if d % 2 == 0 {{ fail \"even\" }}\n}}\n")

    def m_fail(st, out, key, d):
        if d % 2 == 0:
            return False
        st[key] = [d, f"i{d}" if text_field else None]
        return True
    events.append(("e_fail", True, m_fail))
    bulk = kind.bulk_event()
    if bulk:
        p.src.append(bulk[0])
        events.append(("e_bulk", False, lambda st, out, lo, d, f=bulk[1]: (f(st, out, lo, d), True)[1]))
    p.src.append("query q_count() -> int { return L.count() }\n")
    queries.append(("q_count", None, lambda st, arg: str(len(st))))
    p.src.append(f"query q_get({params}) -> int {{\n  let x = L[{use}] else return -1\n  return x.v\n}}\n")
    queries.append(("q_get", True, lambda st, key: str(st[key][0]) if key in st else "-1"))
    if text_field:
        p.src.append(f'query q_text({params}) -> text {{\n  let x = L[{use}] else return "-"\n  return x.s\n}}\n')
        queries.append(("q_text", True, lambda st, key: st[key][1] if key in st else "-"))
    rq = kind.range_query()
    if rq:
        p.src.append(rq[0])
        queries.append(("q_sum", False, lambda st, lo, f=rq[1]: str(f(st, lo))))

    p.main += ["fn main() {", f"  let loaded = load({kind.rows})", "  var c = 0"]
    add_loops(rng, p, kind, st, fields, queries, events,
              lambda keep: ([(k, list(st[k])) for k in sorted(keep.candidates) if k in st] if hasattr(keep, "candidates")
                            else [(k, list(v)) for k, v in sorted(st.items()) if keep(k)]),
              kind.key_args, lambda rng: int_expr(rng, fields[0] if not isinstance(kind, TextKeyed) else "v", kind.modulo),
              text_field)
    p.main.append('  print("count {q_count()}")')
    p.main.append('  for r in L { print("' + " ".join("{r." + f + "}" for f in fields) + " {r.v}" + (" {r.s}" if text_field else "") + '") }')
    p.main.append("}")
    p.out.append(f"count {len(st)}")
    for k, v in sorted(st.items()):
        p.out.append(" ".join([str(x) for x in k] + [str(v[0])] + text_cols(text_field, v)))
    return "".join(p.src) + "\n".join(p.main) + "\n", "".join(line + "\n" for line in p.out)


class Sequence(Kind):
    def __init__(self, rng, rows):
        super().__init__(rng, rows)
        self.modulo = rows + 10

    def loop_forms(self, rng):
        return [("L", None)]

    def in_form(self, key, form):
        return True

    def inner_form(self):
        return ("L", lambda k, outer: True, None) if self.rows <= 40 else None


def seq_program(rng, kind):
    p = Program()
    st = [[i, f"s{i}"] for i in range(kind.rows)]
    p.src.append("list L seq { v: int, s: text }\n")
    p.src.append('event load(n: int) { for i in 0 .. n { L.push({ v: i, s: "s{i}" }) } }\n')
    events, queries = [], []
    p.src.append('event e_set(i: int, d: int) {\n  if i < L.count() {\n    L[i].v += d\n    L[i].s = "x{d}"\n  }\n}\n')

    def m_set(st, out, i, d):
        if i < len(st):
            st[i][0] += d
            st[i][1] = f"x{d}"
        return True
    events.append(("e_set", False, m_set))
    p.src.append('event e_push(i: int, d: int) { L.push({ v: d, s: "p{i}" }) }\n')
    events.append(("e_push", False, lambda st, out, i, d: (st.append([d, f"p{i}"]), True)[1]))
    p.src.append("event e_pop(i: int, d: int) {\n  if L.count() > 0 { let x = L.pop() }\n}\n")
    events.append(("e_pop", False, lambda st, out, i, d: (st.pop() if st else None, True)[1]))
    p.src.append('event e_fail(i: int, d: int) {\n  L.push({ v: d, s: "f" })\n  if i < L.count() { L[i].v = 99 }\n'
                 '  let x = L.pop()\n  let y = L.pop()\n  if d % 2 == 0 { fail "even" }\n}\n')

    def m_fail(st, out, i, d):
        if len(st) + 1 < 2 or False:
            pass
        trial = [list(v) for v in st] + [[d, "f"]]
        if i < len(trial):
            trial[i][0] = 99
        trial.pop()
        if not trial:
            return False  # the second pop of an empty sequence: a runtime error fails the event
        trial.pop()
        if d % 2 == 0:
            return False
        st[:] = trial
        return True
    events.append(("e_fail", False, m_fail))
    if kind.rows <= 200:
        p.src.append('event e_bulk(i: int, d: int) {\n  var t = 0\n  for j, x in L {\n    t += x.v\n'
                     '    if j + 1 < L.count() { L[j + 1].v += d }\n  }\n  print("bulk {t}")\n}\n')

        def m_bulk(st, out, i, d):
            t = 0
            for j in range(len(st)):
                t += st[j][0]
                if j + 1 < len(st):
                    st[j + 1][0] += d
            out.append(f"bulk {t}")
            return True
        events.append(("e_bulk", False, m_bulk))
        p.src.append("query q_sum(i: int) -> int {\n  var t = 0\n  for x in L { t += x.v }\n  return t\n}\n")
        queries.append(("q_sum", False, lambda st, i: str(sum(v[0] for v in st))))
    p.src.append("query q_count() -> int { return L.count() }\n")
    queries.append(("q_count", None, lambda st, arg: str(len(st))))
    p.src.append("query q_get(i: int) -> int {\n  if i < L.count() { return L[i].v }\n  return -1\n}\n")
    queries.append(("q_get", False, lambda st, i: str(st[i][0]) if i < len(st) else "-1"))
    p.src.append('query q_text(i: int) -> text {\n  if i < L.count() { return L[i].s }\n  return "-"\n}\n')
    queries.append(("q_text", False, lambda st, i: st[i][1] if i < len(st) else "-"))

    p.main += ["fn main() {", f"  let loaded = load({kind.rows})", "  var c = 0"]
    index = lambda rng: int_expr(rng, "v", kind.modulo)
    add_loops(rng, p, kind, st, [], queries, events,
              lambda keep: [((), list(v)) for v in st], None, index, True)
    p.main.append('  print("count {q_count()}")')
    p.main.append('  for r in L { print("{r.v} {r.s}") }')
    p.main.append("}")
    p.out.append(f"count {len(st)}")
    for v in st:
        p.out.append(f"{v[0]} {v[1]}")
    return "".join(p.src) + "\n".join(p.main) + "\n", "".join(line + "\n" for line in p.out)


def generate(seed):
    rng = random.Random(seed)
    roll = rng.random()
    rows = rng.randint(1, 40) if roll < 0.45 else rng.randint(30, 400) if roll < 0.8 else rng.randint(1000, 3000)
    kind = rng.choice(["int", "int", "text", "comp", "comp", "seq", "seq"])
    if kind == "seq":
        return kind, rows, seq_program(rng, Sequence(rng, rows))
    cls = {"int": IntKeyed, "text": TextKeyed, "comp": CompKeyed}[kind]
    return kind, rows, keyed_program(rng, cls(rng, rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pure_run")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="folder for failing programs")
    ap.add_argument("--write-seeds", nargs=2, metavar=("DIR", "K"))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--max-failures", type=int, default=20, help="stop after this many failures")
    a = ap.parse_args()
    if a.write_seeds:
        folder, k = a.write_seeds[0], int(a.write_seeds[1])
        os.makedirs(folder, exist_ok=True)
        written, seed = 0, a.seed
        while written < k:
            kind, rows, (source, _) = generate(seed)
            if rows <= 120 and len(source) < 3000:
                with open(os.path.join(folder, f"store_loops_{seed}.pure"), "w") as f:
                    f.write(source)
                written += 1
            seed += 1
        return 0
    import tempfile
    failures, kinds, ran, how = 0, {}, 0, {}
    start = time.time()
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "t.pure")
        for i in range(a.count):
            seed = a.seed + i
            kind, rows, (source, expected) = generate(seed)
            kinds[kind] = kinds.get(kind, 0) + 1
            ran += 1
            with open(path, "w") as f:
                f.write(source)
            try:
                run = subprocess.run([a.pure_run, path], capture_output=True, timeout=a.timeout)
                got, err, code = run.stdout.decode("utf-8", "replace"), run.stderr.decode("utf-8", "replace"), run.returncode
            except subprocess.TimeoutExpired:
                got, err, code = "", "timeout", -1
            if code != 0 or got != expected:
                failures += 1
                why = f"exit {code}" if code > 0 else f"signal {-code}" if code < -1 else "timeout" if code == -1 else "output differs"
                how[why] = how.get(why, 0) + 1
                print(f"FAIL seed {seed} ({kind}, {rows} rows): {why}; replay: --seed {seed} --count 1")
                if err:
                    print("  stderr: " + err.strip().splitlines()[0][:300])
                if code == 0:
                    g, e = got.splitlines(), expected.splitlines()
                    for n, (x, y) in enumerate(zip(g + [None] * len(e), e + [None] * len(g))):
                        if x != y:
                            print(f"  line {n + 1}: got {x!r}, expected {y!r}")
                            break
                if a.keep:
                    os.makedirs(a.keep, exist_ok=True)
                    with open(os.path.join(a.keep, f"seed_{seed}.pure"), "w") as f:
                        f.write(source)
                    with open(os.path.join(a.keep, f"seed_{seed}.expected"), "w") as f:
                        f.write(expected)
                if failures >= a.max_failures:
                    print(f"stopping after {failures} failures")
                    break
    took = time.time() - start
    print(f"{ran - failures} of {ran} programs matched the model ({failures} failed"
          + "".join(f", {n} {w}" for w, n in sorted(how.items())) + f"; seeds {a.seed}..{a.seed + ran - 1}; "
          + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + f"; {took:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
