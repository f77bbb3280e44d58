#!/usr/bin/env python3
"""tests/tools/test_migrate.py — migrations written in Pure (docs/upgrades.md, "Migrations") through
pure-run --data DIR --upgrade: a field's type changed (int to num), a text field split, a list's key
changed, every row checked after the upgrade and after a restart (replay of the log through the
version record, which runs the block again, and from a checkpoint taken after it), on the
interpreter and the JIT; a block that fails, one that spends its budget and one that does not
compile leave the directory byte for byte as it was, still at version 1; the block is ignored by a
plain run and by a new directory.

Usage: test_migrate.py PURE_RUN   (standard library only)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PURE_RUN = ""
ROWS = 40

V1 = r'''
list accounts by id: int { owner: text, amount: int }
list tags by id: int { tag: text }

event open(id: int, owner: text, amount: int) {
  accounts[id] = { owner: owner, amount: amount }
  tags[id] = { tag: "t{id}" }
}

fn main(args: seq text) {
  let n = parse_int(args[0])
  for i in 1 .. n + 1 { let r = open(i, "first{i} last{i}", i * 3) }
  print("{accounts.count()} accounts")
}
'''

# amount: int -> num (halved), owner split into first and last, tags keyed by their text instead.
V2 = r'''
list accounts by id: int { first: text, last: text, amount: num }
list tags by tag: text { id: int }

migrate {
  for a in old.accounts {
    let parts = a.owner.split(" ")
    accounts[a.id] = { first: parts[0], last: parts[1], amount: num(a.amount) / 2.0 }
  }
  for t in old.tags { tags[t.tag] = { id: t.id } }
  BODY
}

fn main() {
  for a in accounts { print("{a.id} {a.first} {a.last} {a.amount}") }
  for t in tags { print("{t.tag} {t.id}") }
}
'''


def expected_v2(n):
    lines = [f"{i} first{i} last{i} {i * 3 / 2.0!r}" for i in range(1, n + 1)]
    lines += [f"t{i} {i}" for i in sorted(range(1, n + 1), key=lambda i: f"t{i}")]
    return "\n".join(lines) + "\n"


def pure(data, source, *args, flags=(), env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([PURE_RUN, "--data", data, *flags, source, *args], capture_output=True, text=True, env=e,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def snapshot(directory):
    out = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            out[name] = f.read()
    return out


class Migrate(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pure-migrate-")
        self.data = os.path.join(self.tmp, "bank.d")
        os.mkdir(os.path.join(self.tmp, "v1"))
        os.mkdir(os.path.join(self.tmp, "v2"))
        self.v1 = os.path.join(self.tmp, "v1", "bank.pure")
        self.v2 = os.path.join(self.tmp, "v2", "bank.pure")
        with open(self.v1, "w") as f:
            f.write(V1)
        self.setUp_data()

    def setUp_data(self):
        code, out, err = pure(self.data, self.v1, str(ROWS))
        self.assertEqual((code, out), (0, f"{ROWS} accounts\n"), err)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write_v2(self, body=""):
        with open(self.v2, "w") as f:
            f.write(V2.replace("BODY", body))

    def assert_unchanged(self, before):
        self.assertEqual(snapshot(self.data), before)
        code, out, err = pure(self.data, self.v1, "0")  # version 1 still runs, every row there
        self.assertEqual((code, out), (0, f"{ROWS} accounts\n"), err)

    def test_upgrade_rows_and_replay(self):
        self.write_v2()
        code, out, err = pure(self.data, self.v2, flags=["--plan"])
        self.assertEqual(code, 0, err)
        self.assertIn("accounts: 40 rows: rebuilt by the migrate block (accounts.amount changes type from int to num)",
                      err)
        self.assertIn("tags: 40 rows: rebuilt by the migrate block (tags's key tag changes type from int to text)", err)
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual((code, out), (0, expected_v2(ROWS)), err)
        self.assertIn("upgraded to version 2 at sequence 41", err)
        # A restart replays the 40 events with version 1's code and runs the block again at the
        # version record: the same rows, on either engine.
        for jit in ("0", "1"):
            code, out, err = pure(self.data, self.v2, env={"PURE_JIT": jit})
            self.assertEqual((code, out), (0, expected_v2(ROWS)), f"PURE_JIT={jit}: {err}")
        # Replay gives the block no budget but its own: a smaller --migration-steps now changes nothing.
        code, out, err = pure(self.data, self.v2, flags=["--migration-steps", "1"])
        self.assertEqual((code, out), (0, expected_v2(ROWS)), err)
        # A checkpoint after the upgrade holds the new rows: the next start reads them from it.
        code, out, err = pure(self.data, self.v2, flags=["--checkpoint-every", "1"])
        self.assertEqual((code, out), (0, expected_v2(ROWS)), err)
        self.assertTrue(any(n.startswith("checkpoint-") for n in os.listdir(self.data)), os.listdir(self.data))
        code, out, err = pure(self.data, self.v2)
        self.assertEqual((code, out), (0, expected_v2(ROWS)), err)

    def test_as_of_and_verify_across_the_upgrade(self):
        """--as-of a sequence before the upgrade presents that state through the migrate block, in
        version 2's lists, as the upgrade would have made it; --verify replays through it too (once
        the block was left out there, and an int amount's bits were read as a num)"""
        self.write_v2()
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual(code, 0, err)
        for seq, rows in [(ROWS // 2, ROWS // 2), (ROWS, ROWS), (ROWS + 1, ROWS)]:
            for jit in ("0", "1"):
                code, out, err = pure(self.data, self.v2, flags=["--as-of", str(seq)], env={"PURE_JIT": jit})
                self.assertEqual((code, out), (0, expected_v2(rows)), f"as of {seq}, PURE_JIT={jit}: {err}")
        code, out, err = pure(self.data, self.v2, flags=["--verify"])
        self.assertEqual(code, 0, err)
        self.assertIn(f"sequence 0 up to sequence {ROWS + 1}: every event applied", out)

    def test_what_the_block_prints_goes_to_stdout_once(self):
        # At the upgrade, before main's output; a replay of the block (a restart) prints nothing.
        self.write_v2('let had = old.accounts.count()\n  print("migrated {accounts.count()} of {had}")')
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual((code, out), (0, f"migrated {ROWS} of {ROWS}\n" + expected_v2(ROWS)), err)
        code, out, err = pure(self.data, self.v2)
        self.assertEqual((code, out), (0, expected_v2(ROWS)), err)
        # A block that fails shows what it printed before the failure, and nothing is changed.
        shutil.rmtree(self.data)
        self.setUp_data()
        self.write_v2('let had = old.accounts.count()\n  print("checking {had}")\n  fail "not now"')
        before = snapshot(self.data)
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual((code, out), (4, f"checking {ROWS}\n"), err)
        self.assertIn("its migrate block failed: ", err)
        self.assert_unchanged(before)

    def test_what_the_block_reads_is_migrated_not_dropped(self):
        # owner and the list tags are gone from version 2, but the block reads them: the plan says
        # "migrated" and needs no --allow-drop; amount is dropped unread: that still needs consent.
        reads = ("list accounts by id: int { first: text, amount: int }\n"
                 "list labels seq { label: text }\n"
                 "migrate {\n"
                 "  for a in old.accounts { accounts[a.id] = { first: a.owner.split(\" \")[0], amount: a.amount } }\n"
                 "  for t in old.tags { labels.push({ label: t.tag }) }\n"
                 "}\n"
                 "fn main() { print(\"{accounts.count()} {accounts[3].first} {accounts[3].amount} {labels.count()}\") }\n")
        with open(self.v2, "w") as f:
            f.write(reads)
        code, out, err = pure(self.data, self.v2, flags=["--plan"])
        self.assertEqual(code, 0, err)
        self.assertIn("accounts: 40 rows: field added: first: text = \"\"; "
                      "field migrated: owner (read by the migrate block, then not kept)", err)
        self.assertIn("tags: list migrated: read by the migrate block as old.tags (40 rows), then not kept", err)
        self.assertNotIn("--allow-drop", err)
        unread = reads.replace("first: text, amount: int", "first: text").replace(", amount: a.amount", "")
        unread = unread.replace(" {accounts[3].amount}", "")
        with open(self.v2, "w") as f:
            f.write(unread)
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual(code, 4, err)
        self.assertIn("field dropped: amount (its values in 40 rows are lost)", err)
        self.assertIn("the upgrade to version 2 loses data, and --allow-drop was not given", err)
        with open(self.v2, "w") as f:
            f.write(reads)
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual((code, out), (0, "40 first3 9 40\n"), err)

    def test_an_old_enum_column_reads_as_its_member(self):
        # Version 1 stores an enum; version 2 reorders its members (a migrate block is needed) and
        # the block reads each old value as old.Tier's member, not as its position.
        data = os.path.join(self.tmp, "club.d")
        v1 = os.path.join(self.tmp, "v1", "club.pure")
        v2 = os.path.join(self.tmp, "v2", "club.pure")
        with open(v1, "w") as f:
            f.write("enum Tier { basic, gold }\nlist members by id: int { tier: Tier }\n"
                    "event enrol(id: int, tier: Tier) { members[id] = { tier: tier } }\n"
                    "fn main() {\n  let a = enrol(1, Tier.basic)\n  let b = enrol(2, Tier.gold)\n}\n")
        code, out, err = pure(data, v1)
        self.assertEqual(code, 0, err)
        with open(v2, "w") as f:
            f.write("enum Tier { gold, silver, basic }\nlist members by id: int { tier: Tier, was_gold: bool }\n"
                    "migrate {\n  for o in old.members {\n"
                    "    members[o.id] = { tier: if o.tier == old.Tier.gold { Tier.gold } else { Tier.basic }, "
                    "was_gold: o.tier == old.Tier.gold }\n  }\n}\n"
                    "fn main() { for m in members { print(\"{m.id} {m.tier} {m.was_gold}\") } }\n")
        code, out, err = pure(data, v2, flags=["--upgrade"])
        self.assertEqual((code, out), (0, "1 basic false\n2 gold true\n"), err)
        for jit in ("0", "1"):  # the replay runs the block again
            code, out, err = pure(data, v2, env={"PURE_JIT": jit})
            self.assertEqual((code, out), (0, "1 basic false\n2 gold true\n"), f"PURE_JIT={jit}: {err}")

    def test_failing_block_rolls_back(self):
        self.write_v2('if accounts.count() > 0 { fail "the totals do not match" }')
        before = snapshot(self.data)
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual((code, out), (4, ""), err)
        self.assertIn(f"{self.data}: the upgrade to version 2 was not applied: its migrate block failed: {self.v2}: "
                      "the totals do not match\n  nothing was changed: the directory is still at version 1", err)
        self.assert_unchanged(before)

    def test_budget_spent_rolls_back(self):
        self.write_v2("var i = 0\n  while true { i += 1 }")
        before = snapshot(self.data)
        code, out, err = pure(self.data, self.v2, flags=["--upgrade", "--migration-steps", "5000"])
        self.assertEqual(code, 4, err)
        self.assertIn("its migrate block failed: ", err)
        self.assertIn("step budget spent (5000 steps; ", err)
        self.assertIn("raise it with --migration-steps", err)
        self.assert_unchanged(before)

    def test_block_that_does_not_compile_is_refused(self):
        self.write_v2("let x: int = old.accounts[1].owner")
        before = snapshot(self.data)
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual(code, 4, err)
        self.assertIn("the source cannot be upgraded to from version 1: its migrate block does not compile against "
                      f"version 1's lists\n{self.v2}:11:31: error: 'x' is declared as int but the value is text", err)
        self.assert_unchanged(before)

    def test_without_a_block_the_type_change_is_refused(self):
        with open(self.v2, "w") as f:
            f.write("list accounts by id: int { owner: text, amount: num }\nlist tags by id: int { tag: text }\n"
                    "fn main() { }\n")
        code, out, err = pure(self.data, self.v2, flags=["--upgrade"])
        self.assertEqual(code, 4, err)
        self.assertIn("accounts.amount changes type from int to num: that needs a migrate block (docs/upgrades.md, "
                      "\"Migrations\") or a new field instead", err)

    def test_ignored_by_plain_runs_and_new_directories(self):
        self.write_v2("let n = old.no_such_list.count()")  # never checked: no old version
        p = subprocess.run([PURE_RUN, self.v2], capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        fresh = os.path.join(self.tmp, "fresh.d")
        code, out, err = pure(fresh, self.v2)
        self.assertEqual((code, out), (0, ""), err)


if __name__ == "__main__":
    PURE_RUN = sys.argv.pop(1)
    unittest.main()
