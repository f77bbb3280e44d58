#!/usr/bin/env python3
"""tests/tools/test_run_data.py — pure-run --data DIR from the outside: state carried from one run to
the next, a changed program refused (and the directory left as it was), events committed before a
runtime error kept, checkpoints at exit, one process per directory, and real crashes: a run killed
with SIGKILL at a random moment leaves a directory that recovers to a whole prefix of the events,
holding at least every event whose effect the killed run had printed (output is shown only once the
events before it are durable).

Usage: test_run_data.py PURE_RUN [--cycles N] [--seed S]   (standard library only)
pure-run runs directly (no emulator): CMake leaves this test out of cross builds.
"""
import json
import os
import random
import resource
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

PURE_RUN = ""
CYCLES = 6
SEED = 1

# Events numbered 0, 1, 2, ... in order: each checks it is the next one, so a replay out of order or
# with a gap fails instead of passing quietly. main(N) adds N more; main("check") prints the state.
COUNTER = r'''
list done seq { n: int }
list sums by k: int { total: int }

event add(n: int) {
  if done.count() != n { fail "out of order: {n} after {done.count()}" }
  done.push({ n: n })
  if sums.has(0) { sums[0].total += n } else { sums[0] = { total: n } }
}

query total() -> int {
  if sums.has(0) { return sums[0].total }
  return 0
}

fn check() {
  var i = 0
  var in_order = true
  for d in done {
    if d.n != i { in_order = false }
    i += 1
  }
  print("count {done.count()} in_order {in_order} total {total()}")
}

fn main(args: seq text) {
  if args[0] == "check" {
    check()
  } else {
    var n = done.count()
    let stop = n + parse_int(args[0])
    let pad = "................................................................................"
    while n < stop {
      let r = add(n)
      if not r.ok { fail r.reason }
      if n % 50 == 0 { print("acked {n} {pad}") }
      n += 1
    }
    print("finished at {n}")
    if args.count() > 1 { fail "stopped: {args[1]}" }
  }
}
'''

# m.clear() and m[prefix].clear() in events (tests the replay of removals by prefix and of all rows).
CLEARING = r'''
list rows by (group: text, n: int) { v: int }
list log seq { n: int }

event add(count: int) {
  for n in 0 .. count {
    rows["{char(97 + n % 3)}", n] = { v: n }
    log.push({ n: n })
  }
}
event drop(group: text) { rows[group].clear() }
event drop_then_fail(group: text) {
  rows[group].clear()
  log.clear()
  fail "after clearing"
}
event reset() {
  rows.clear()
  log.clear()
}

fn show() -> text {
  var o = ""
  for r in rows { o = o + " {r.group}{r.n}" }
  return o
}

fn main(args: seq text) {
  if args[0] == "add" { let r = add(parse_int(args[1])) }
  if args[0] == "drop" {
    let f = drop_then_fail("a")
    print("refused: {f.reason}")
    let r = drop(args[1])
  }
  if args[0] == "reset" { let r = reset() }
  if args[0] == "show" {
    print("{rows.count()} rows, log {log.count()}:{show()}")
    return
  }
  print("{rows.count()} rows, log {log.count()}")
}
'''

# Events that call events: the log records only the events main called; replaying them runs their
# inner calls again, plain ones and `try` ones whose failure undid the inner event alone.
COMPOSED = r'''
list stock by sku: int { n: int = 0 }
list notes seq { t: text }

event adjust(sku: int, d: int) {
  stock[sku].n += d
  notes.push({ t: "{sku}:{d}" })
  if stock[sku].n < 0 { fail "short {sku}" }
}

event fill(count: int) {
  for sku in 0 .. count { adjust(sku, sku % 4) }
}

event drain(count: int) -> int {
  var ok = 0
  for sku in 0 .. count {
    let r = try adjust(sku, -2)
    if r.ok { ok += 1 } else { notes.push({ t: r.reason }) }
  }
  return ok
}

event strict(count: int) {
  for sku in 0 .. count { adjust(sku, -1) }
}

fn show() -> text {
  var o = ""
  for s in stock { o = o + " {s.sku}={s.n}" }
  var h = 0
  for n in notes { h = (h * 31 + n.t.len()) % 1000003 }
  return "{o} | {notes.count()} notes, {h}"
}

fn main(args: seq text) {
  if args[0] == "go" {
    for round in 0 .. 3 {
      let f = fill(9)
      let d = drain(9)
      let s = strict(9)
      print("{f.ok} {d.value} {s.reason}")
    }
  }
  print(show())
}
'''

def pure(data, source_path, *args, flags=(), timeout=120, env=None):
    command = [PURE_RUN] + list(flags) + ["--data", data, source_path] + list(args)
    done = subprocess.run(command, capture_output=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def check_state(test, data, source_path):
    code, out, err = pure(data, source_path, "check")
    test.assertEqual(code, 0, err)
    match = re.fullmatch(r"count (\d+) in_order (true|false) total (\d+)\n", out)
    test.assertIsNotNone(match, out)
    count, total = int(match.group(1)), int(match.group(3))
    test.assertEqual(match.group(2), "true", out)
    test.assertEqual(total, count * (count - 1) // 2, out)
    return count, err


class RunData(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.source = os.path.join(self.dir, "counter.pure")
        with open(self.source, "w") as f:
            f.write(COUNTER)
        self.data = os.path.join(self.dir, "data")

    def tearDown(self):
        self.tmp.cleanup()

    def files(self):
        return self.files_of(self.data)

    def files_of(self, data):
        contents = {}
        for name in os.listdir(data):
            with open(os.path.join(data, name), "rb") as f:
                contents[name] = f.read()
        return contents

    def test_state_carries_over_and_a_new_directory_starts_empty(self):
        self.assertEqual(check_state(self, self.data, self.source)[0], 0)
        code, out, err = pure(self.data, self.source, "120")
        self.assertEqual((code, err), (0, ""))
        self.assertTrue(out.endswith("finished at 120\n"), out)
        code, out, err = pure(self.data, self.source, "30", flags=["--sync", "none"])
        self.assertEqual((code, err), (0, ""))
        self.assertTrue(out.endswith("finished at 150\n"), out)
        self.assertEqual(check_state(self, self.data, self.source)[0], 150)
        other = os.path.join(self.dir, "other")
        self.assertEqual(check_state(self, other, self.source)[0], 0)

    def test_clearing_stored_lists_is_replayed(self):
        # m.clear() and m[prefix].clear() are writes of their events: recovery replays them (with and
        # without a checkpoint between), and a cleared event that failed leaves nothing behind
        source = os.path.join(self.dir, "clear.pure")
        with open(source, "w") as f:
            f.write(CLEARING)
        code, out, err = pure(self.data, source, "add", "12")
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(out, "12 rows, log 12\n")
        code, out, err = pure(self.data, source, "drop", "b")
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(out, "refused: after clearing\n8 rows, log 12\n")
        code, out, err = pure(self.data, source, "show", "x", flags=["--checkpoint-every", "1"])
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(out, "8 rows, log 12: a0 a3 a6 a9 c2 c5 c8 c11\n")
        code, out, err = pure(self.data, source, "reset", "x")
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(out, "0 rows, log 0\n")
        code, out, err = pure(self.data, source, "show", "x")
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(out, "0 rows, log 0:\n")

    def test_events_that_call_events_are_replayed(self):
        # The state main saw at the end of its run is the state recovery rebuilds from the log,
        # which holds the outer events only (an inner call is not a record of its own).
        source = os.path.join(self.dir, "composed.pure")
        with open(source, "w") as f:
            f.write(COMPOSED)
        code, out, err = pure(self.data, source, "go")
        self.assertEqual((code, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual(lines[0], "true 4 short 0")
        code, replayed, err = pure(self.data, source, "show")
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(replayed, lines[-1] + "\n")
        code, events, err = pure(self.data, source, flags=["--events"])
        self.assertEqual((code, err), (0, ""))
        records = [json.loads(line) for line in events.splitlines()]
        # strict failed each time: an audit-only record (--audit-failed on, the default) that replay skipped
        self.assertEqual([(r["event"], r.get("failed", False)) for r in records],
                         [("fill", False), ("drain", False), ("strict", True)] * 3)
        self.assertTrue(all(r["reason"] for r in records if r.get("failed")))
        code, out, err = pure(self.data, source, flags=["--verify"])
        self.assertEqual(code, 0, err)
        # --audit-failed off: committed events only
        off = os.path.join(self.dir, "off")
        code, out, err = pure(off, source, "go", flags=["--audit-failed", "off"])
        self.assertEqual((code, err, out.splitlines()), (0, "", lines))
        code, events, err = pure(off, source, flags=["--events"])
        self.assertEqual([json.loads(line)["event"] for line in events.splitlines()], ["fill", "drain"] * 3)

    def test_sync_and_checkpoint_options_need_data(self):
        for flags in (["--sync", "none"], ["--checkpoint-every", "5"]):
            done = subprocess.run([PURE_RUN] + flags + [self.source, "1"], capture_output=True, timeout=60)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(b"requires --data", done.stderr)
        done = subprocess.run([PURE_RUN, "--data", self.data, "--sync", "sometimes", self.source, "1"],
                              capture_output=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertFalse(os.path.exists(self.data))

    def test_another_module_is_refused_and_the_directory_kept(self):
        self.assertEqual(pure(self.data, self.source, "10")[0], 0)
        before = self.files()
        changed = os.path.join(self.dir, "changed.pure")
        with open(changed, "w") as f:
            f.write(COUNTER.replace('"finished at {n}"', '"done at {n}"'))
        code, out, err = pure(self.data, changed, "10")
        self.assertEqual(code, 4, err)
        self.assertEqual(out, "")
        self.assertIn("belongs to module 'counter' (version 1), not to 'changed'", err)
        self.assertEqual(before, self.files())
        self.assertEqual(check_state(self, self.data, self.source)[0], 10)

    def test_a_changed_source_is_planned_and_applied_only_when_asked(self):
        # The same module name, one line of code changed: the plan is printed and nothing
        # changes until --upgrade; then the new code runs and the old events keep theirs.
        self.assertEqual(pure(self.data, self.source, "10")[0], 0)
        before = self.files()
        with open(self.source) as f:
            original = f.read()
        with open(self.source, "w") as f:
            f.write(original.replace('"finished at {n}"', '"done at {n}"'))
        code, out, err = pure(self.data, self.source, "10")
        self.assertEqual(code, 4, err)
        self.assertEqual(out, "")
        self.assertIn("differs from version 1 of this directory", err)
        self.assertIn("the stored lists are unchanged: the code alone changes", err)
        self.assertIn("run again with --upgrade", err)
        self.assertEqual(before, self.files())
        code, out, err = pure(self.data, self.source, "10", flags=["--plan"])
        self.assertEqual((code, out), (0, ""), err)
        self.assertEqual(before, self.files())
        code, out, err = pure(self.data, self.source, "5", flags=["--upgrade"])
        self.assertEqual(code, 0, err)
        self.assertIn("upgraded to version 2 at sequence 11 in ", err)
        self.assertTrue(out.endswith("done at 15\n"), out)
        self.assertIn("version-0000000002.src", os.listdir(self.data))
        code, out, err = pure(self.data, self.source, "1")
        self.assertEqual(code, 0, err)
        self.assertTrue(out.endswith("done at 16\n"), out)
        # The first source is version 1: it cannot continue a directory at version 2.
        with open(self.source, "w") as f:
            f.write(original)
        code, out, err = pure(self.data, self.source, "1")
        self.assertEqual(code, 4, err)
        self.assertIn("this source is version 1 of the directory, which has been upgraded to version 2", err)

    def test_an_enum_may_gain_members_at_the_end_only(self):
        # A stored enum is its member's position: a member added at the end is a code-only
        # upgrade (the rows read as before, the new member usable); reordering is refused and
        # changes nothing.
        data = os.path.join(self.dir, "enum-data")
        path = os.path.join(self.dir, "orders.pure")
        v1 = """enum Status { open, shipped }
list orders by id: int { status: Status = Status.open }
event place(id: int) { orders[id] = {} }
event set(id: int, s: Status) { orders[id].status = s }
fn main(args: seq text) {
  if args[0] == "new" { place(1); place(2); set(2, Status.shipped) }
  for o in orders { print("{o.id} {o.status}") }
}
"""
        v2 = v1.replace("{ open, shipped }", "{ open, shipped, cancelled }").replace(
            'if args[0] == "new"', 'if args[0] == "cancel" { set(1, Status.cancelled) }\n  if args[0] == "new"')
        v3 = v2.replace("{ open, shipped, cancelled }", "{ shipped, open, cancelled }")

        def run(source, *args, flags=()):
            with open(path, "w") as f:
                f.write(source)
            return pure(data, path, *args, flags=list(flags))

        self.assertEqual(run(v1, "new")[:2], (0, "1 open\n2 shipped\n"))
        code, out, err = run(v2, "cancel", flags=["--upgrade"])
        self.assertEqual((code, out), (0, "1 cancelled\n2 shipped\n"), err)
        self.assertIn("the stored lists are unchanged: the code alone changes", err)
        before = self.files_of(data)
        code, out, err = run(v3, "show", flags=["--upgrade"])
        self.assertEqual((code, out), (4, ""), err)
        self.assertIn("orders.status changes type from enum { open, shipped, cancelled } to enum { shipped, open, "
                      "cancelled } (an enum's stored value is its member's position: members can only be added at "
                      "the end)", err)
        self.assertEqual(before, self.files_of(data))
        self.assertEqual(run(v2, "show")[:2], (0, "1 cancelled\n2 shipped\n"))  # replayed by each version's code

    def test_three_versions_keep_every_row_and_replay_as_they_ran(self):
        # Version 1 -> 2: a field renamed, a defaulted field and a list added, a list renamed;
        # 2 -> 3: a field and a list dropped (with consent). Each version's events write what
        # that version says; a later run replays all of them, each with its own code. On the
        # interpreter, and with every loop compiled at once where a JIT is built.
        engines = {"interpreter": {"PURE_JIT": "0"},
                   "jit": {"PURE_JIT": "1", "PURE_JIT_THRESHOLD": "0", "PURE_JIT_MIN_SHARE": "0"}}
        for name, env in engines.items():
            with self.subTest(engine=name):
                self.three_versions(os.path.join(self.dir, name), env)

    def three_versions(self, where, env):
        os.makedirs(where)
        data = os.path.join(where, "data")
        path = os.path.join(where, "ledger.pure")
        v1 = """list accounts by id: int { owner: text, amount: num }
list journal seq { line: text }
event open(id: int, owner: text, v: num) { accounts[id] = { owner: owner, amount: v }
  journal.push({ line: "v1 open {id}" }) }
fn main() { let r = open(accounts.count() + 1, "a{accounts.count()}", 10.0)
  for a in accounts { print("{a.id} {a.owner} {a.amount}") } }
"""
        v2 = """list accounts by id: int { owner: text, balance: num was amount, level: int = 3 }
list ledger was journal seq { line: text }
list audit seq { n: int }
event open(id: int, owner: text, v: num) { accounts[id] = { owner: owner, balance: v * 2.0, level: 9 }
  ledger.push({ line: "v2 open {id}" })
  audit.push({ n: id }) }
fn main() { let r = open(accounts.count() + 1, "b{accounts.count()}", 10.0)
  for a in accounts { print("{a.id} {a.owner} {a.balance} {a.level}") }
  for l in ledger { print(l.line) } }
"""
        v3 = """list accounts by id: int { balance: num, level: int = 3 }
list ledger seq { line: text }
event open(id: int, v: num) { accounts[id] = { balance: v * 3.0, level: 27 }
  ledger.push({ line: "v3 open {id}" }) }
fn main() { let r = open(accounts.count() + 1, 10.0)
  for a in accounts { print("{a.id} {a.balance} {a.level}") }
  for l in ledger { print(l.line) } }
"""
        def run(source, *flags):
            with open(path, "w") as f:
                f.write(source)
            return pure(data, path, flags=list(flags), env=env)

        self.assertEqual(run(v1)[:2], (0, "1 a0 10.0\n"))
        self.assertEqual(run(v1)[:2], (0, "1 a0 10.0\n2 a1 10.0\n"))
        code, out, err = run(v2, "--plan")
        self.assertEqual((code, out), (0, ""), err)
        self.assertIn("accounts: 2 rows: field renamed: amount -> balance; field added: level: int = 3", err)
        self.assertIn("ledger: 2 rows: renamed from journal", err)
        self.assertIn("audit: list added (empty)", err)
        code, out, err = run(v2, "--upgrade")
        self.assertEqual(code, 0, err)
        self.assertEqual(out, "1 a0 10.0 3\n2 a1 10.0 3\n3 b2 20.0 9\nv1 open 1\nv1 open 2\nv2 open 3\n")
        code, out, err = run(v3, "--upgrade")
        self.assertEqual(code, 4, err)
        self.assertIn("accounts: 3 rows: field dropped: owner (its values in 3 rows are lost)", err)
        self.assertIn("audit: list dropped (1 row lost)", err)
        self.assertIn("loses data, and --allow-drop was not given", err)
        code, out, err = run(v3, "--upgrade", "--allow-drop")
        self.assertEqual(code, 0, err)
        expected = "1 10.0 3\n2 10.0 3\n3 20.0 9\n4 30.0 27\nv1 open 1\nv1 open 2\nv2 open 3\nv3 open 4\n"
        self.assertEqual(out, expected)
        # A fresh start replays the log through versions 1, 2 and 3 (no checkpoint yet): the state
        # it reaches is the one the live run had, and the next event follows it.
        self.assertFalse([n for n in os.listdir(data) if n.endswith(".ckpt")])
        code, out, err = run(v3)
        self.assertEqual(code, 0, err)
        self.assertEqual(out, expected.replace("4 30.0 27\n", "4 30.0 27\n5 30.0 27\n") + "v3 open 5\n")
        self.assertEqual(sorted(n for n in os.listdir(data) if n.startswith("version-")),
                         ["version-0000000001.src", "version-0000000002.src", "version-0000000003.src"])

    def test_events_committed_before_a_runtime_error_are_kept(self):
        self.assertEqual(pure(self.data, self.source, "7")[0], 0)
        code, out, err = pure(self.data, self.source, "5", "boom")
        self.assertEqual(code, 3, err)
        self.assertIn("runtime error: failed: stopped: boom", err)
        self.assertTrue(out.endswith("finished at 12\n"), out)
        code, out, err = pure(self.data, self.source, "x")  # parse_int fails before any event
        self.assertEqual(code, 3, err)
        self.assertEqual(check_state(self, self.data, self.source)[0], 12)

    def test_checkpoint_at_exit_and_recovery_from_it(self):
        flags = ["--checkpoint-every", "100"]
        self.assertEqual(pure(self.data, self.source, "60", flags=flags)[0], 0)
        self.assertFalse([n for n in os.listdir(self.data) if n.endswith(".ckpt")])
        self.assertEqual(pure(self.data, self.source, "60", flags=flags)[0], 0)
        self.assertEqual([n for n in os.listdir(self.data) if n.endswith(".ckpt")],
                         ["checkpoint-00000000000000000120.ckpt"])
        self.assertEqual(pure(self.data, self.source, "5", flags=flags)[0], 0)
        self.assertEqual(check_state(self, self.data, self.source)[0], 125)

    def test_retain_takes_a_value_before_file(self):
        # --retain RETAIN comes before FILE like the other options with a value: FILE is not
        # taken for main's arguments. A bad one is a usage error naming the rule.
        for retain in ("1h", "2GiB", "7d,2GiB", "all", "none"):
            code, out, err = pure(self.data, self.source, "3", flags=["--retain", retain, "--checkpoint-every", "1"])
            self.assertEqual(code, 0, err)
        self.assertEqual(check_state(self, self.data, self.source)[0], 15)
        code, out, err = pure(self.data, self.source, "3", flags=["--retain", "7x"])
        self.assertEqual(code, 2, err)
        self.assertIn("--retain takes all, none, an age such as 7d, a size such as 2GiB", err)

    def test_a_failed_write_poisons_the_log_and_withholds_what_followed(self):
        # A file size limit makes the log's write fail (EFBIG; SIGXFSZ ignored): the run stops,
        # exit 4 names the failure, output after the last durable event is not shown, and the
        # next run recovers a whole prefix that holds everything that was shown.
        self.assertEqual(pure(self.data, self.source, "10")[0], 0)

        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

        done = subprocess.run([PURE_RUN, "--data", self.data, self.source, "100000"], capture_output=True,
                              preexec_fn=limit, timeout=120)
        err = done.stderr.decode()
        self.assertEqual(done.returncode, 4, err)
        self.assertIn("event log poisoned: ", err)
        self.assertIn("File too large", err)
        self.assertIn("are not known to be durable", err)
        printed = [int(m) for m in re.findall(r"^acked (\d+) ", done.stdout.decode(), re.M)]
        self.assertNotIn("finished", done.stdout.decode())
        count, _ = check_state(self, self.data, self.source)
        self.assertLess(count, 100010)
        self.assertGreater(count, max(printed + [9]))

    def test_one_process_per_directory(self):
        first = subprocess.Popen([PURE_RUN, "--data", self.data, self.source, "100000000"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            first.stdout.readline()  # it is running, so it holds the lock
            code, out, err = pure(self.data, self.source, "check")
            self.assertEqual(code, 4)
            self.assertIn(f"{self.data}: in use by pure-run (pid {first.pid}): one process at a time per data directory",
                          err)
        finally:
            first.kill()
            first.communicate()

    def test_sigkill_mid_run_leaves_a_recoverable_directory(self):
        rng = random.Random(SEED)
        expected_at_least = 0
        for cycle in range(CYCLES):
            flags = ["--sync", "none"] if cycle % 3 == 2 else []
            proc = subprocess.Popen([PURE_RUN] + flags + ["--data", self.data, self.source, "100000000"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            first = proc.stdout.readline().decode()
            if not first.startswith("acked"):
                proc.kill()
                self.fail("cycle %d: %r %s" % (cycle, first, proc.communicate()[1].decode()))
            time.sleep(rng.uniform(0.0, 0.3))
            proc.send_signal(signal.SIGKILL)
            rest, err = proc.communicate()
            self.assertEqual(proc.returncode, -signal.SIGKILL, err.decode())
            printed = [int(m) for m in re.findall(r"^acked (\d+) ", first + rest.decode(), re.M)]
            count, recovery_err = check_state(self, self.data, self.source)
            # Everything the killed run printed came after durable events, and the state is a
            # whole prefix (check_state): events 0 .. count-1, each once.
            self.assertGreater(count, max(printed), "cycle %d: printed %d, recovered %d" % (cycle, max(printed), count))
            self.assertGreaterEqual(count, expected_at_least)
            # what recovery may say: a torn record cut, and its summary when it took a second or
            # more (a slow machine, or a sanitizer build, replaying a long log); nothing else
            for line in recovery_err.splitlines():
                self.assertTrue("torn record cut" in line or
                                re.search(r": recovered through sequence \d+: .* replayed in [1-9]\d*\.\d+ s$", line),
                                recovery_err)
            expected_at_least = count


def main():
    global PURE_RUN, CYCLES, SEED
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    PURE_RUN = os.path.abspath(args.pop(0))
    while args and args[0] in ("--cycles", "--seed"):
        value = int(args[1])
        if args[0] == "--cycles":
            CYCLES = value
        else:
            SEED = value
        args = args[2:]
    program = unittest.main(argv=[sys.argv[0]] + args, exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
