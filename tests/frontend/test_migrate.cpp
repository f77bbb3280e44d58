// tests/frontend/test_migrate.cpp — a migrate block (docs/upgrades.md, "Migrations") checked
// against the old version's lists: old.NAME typed by the old schema, located errors for an old list
// or field that does not exist, a type that does not match and a write to an old list; without the
// old lists the block is parsed only. Depends on the frontend's headers only.
#include <doctest/doctest.h>

#include "tests/frontend/frontend_support.h"

namespace pure::test {
namespace {

// Version 1's lists: accounts by id: int { owner: text, amount: int }, and a sequence of notes.
std::vector<OldList> version_one() {
  OldList accounts;
  accounts.name = "accounts";
  accounts.key_count = 1;
  accounts.cols = {{"id", "int"}, {"owner", "text"}, {"amount", "int"}};
  OldList notes;
  notes.name = "notes";
  notes.sequence = true;
  notes.cols = {{"line", "text"}};
  return {accounts, notes};
}

struct Migrated : Unit {
  CheckedModule checked;
  std::vector<OldList> old = version_one();
  Migrated(const std::string& text, bool with_old) : Unit(text) {
    checked = compile_frontend(*source, *diags, -1, with_old ? &old : nullptr);
  }
};

const char* kNew = R"(list accounts by id: int { first: text, last: text, amount: num }
list notes seq { line: text }
)";

std::string migrating(const std::string& body) { return std::string(kNew) + "migrate {\n" + body + "\n}\n"; }

}  // namespace

TEST_CASE("migrate: a block that converts a field's type and splits a text checks against the old lists") {
  Migrated m(migrating(R"(  for a in old.accounts {
    let parts = a.owner.split(" ")
    accounts[a.id] = { first: parts[0], last: if parts.count() > 1 { parts[1] } else { "" }, amount: num(a.amount) }
  }
  for n in old.notes { notes.push({ line: n.line }) })"),
             true);
  CHECK(m.errors() == "");
  REQUIRE(m.checked.module.funcs.size() == 1);
  CHECK(m.checked.module.funcs[0].name == "migrate");
  CHECK(m.checked.module.funcs[0].kind == FuncKind::Event);
  REQUIRE(m.checked.module.lists.size() == 4);  // the module's two, then old.accounts and old.notes
  CHECK(m.checked.module.lists[2].name == "old.accounts");
  CHECK(m.checked.module.has_migrate);
}

TEST_CASE("migrate: what the block reads of the old lists is recorded (an upgrade does not count it lost)") {
  // id and owner are read through a row of old.accounts, amount never is; old.notes
  // is named (its count) but no field of its rows is read; a new row's `first` is not an old read.
  Migrated m(migrating(R"(  for a in old.accounts {
    accounts[a.id] = { first: a.owner, last: "", amount: 0.0 }
  }
  for b in accounts { let f = b.first }
  let n = old.notes.count())"),
             true);
  CHECK(m.errors() == "");
  CHECK(m.checked.module.migrate_reads == std::vector<std::string>{"accounts", "accounts.id", "accounts.owner", "notes"});
  Migrated none(migrating("  let n = accounts.count()"), true);
  CHECK(none.errors() == "");
  CHECK(none.checked.module.migrate_reads.empty());
}

TEST_CASE("migrate: old.NAME inside a text's interpolation is the old list too") {
  // The interpolation is parsed by a parser of its own: it must know it is inside the block.
  Migrated m(migrating(R"(  for a in old.accounts {
    print("moving {a.id}: {old.accounts[a.id].owner} has {old.accounts.count()} rows")
    accounts[a.id] = { first: "{old.accounts[a.id].owner}", last: "", amount: num(a.amount) }
  })"),
             true);
  CHECK(m.errors() == "");
  CHECK(m.checked.module.migrate_reads == std::vector<std::string>{"accounts", "accounts.amount", "accounts.id", "accounts.owner"});
  Migrated outside(std::string(kNew) + "fn main() { print(\"{old.accounts.count()}\") }\n", true);
  INFO(outside.errors());
  CHECK(outside.errors().find("t.pure:3:21: error: unknown name 'old'") == 0);
}

// Version 1 had `enum Tier { basic, gold }` and `list members by id: int { tier: Tier }`.
struct TierMigrated : Unit {
  CheckedModule checked;
  std::vector<OldList> old;
  explicit TierMigrated(const std::string& text) : Unit(text) {
    OldList members;
    members.name = "members";
    members.key_count = 1;
    members.cols = {{"id", "int"}, {"tier", "Tier"}};
    members.members = {{}, {"basic", "gold"}};
    old = {members};
    checked = compile_frontend(*source, *diags, -1, &old);
  }
};

TEST_CASE("migrate: an old enum column reads as its member: the module's enum when it only grew") {
  TierMigrated m(R"(enum Tier { basic, gold, platinum }
list members by id: int { tier: Tier, rank: int }
migrate {
  for o in old.members { members[o.id] = { tier: o.tier, rank: if o.tier == Tier.gold { 2 } else { 1 } } }
}
)");
  CHECK(m.errors() == "");
  TierMigrated wrong(R"(enum Tier { basic, gold }
list members by id: int { tier: Tier }
migrate {
  for o in old.members { let n: int = o.tier }
}
)");
  CHECK(wrong.errors().find("'n' is declared as int but the value is Tier") != std::string::npos);
}

TEST_CASE("migrate: an old enum whose members moved reads as old.NAME, its members as they were") {
  TierMigrated m(R"(enum Tier { gold, silver, basic }
list members by id: int { tier: Tier }
migrate {
  for o in old.members { members[o.id] = { tier: if o.tier == old.Tier.gold { Tier.gold } else { Tier.basic } } }
}
)");
  CHECK(m.errors() == "");
  TierMigrated mixed(R"(enum Tier { gold, silver, basic }
list members by id: int { tier: Tier }
migrate {
  for o in old.members { members[o.id] = { tier: o.tier } }
}
)");
  CHECK(mixed.errors().find("old.Tier") != std::string::npos);
}

TEST_CASE("migrate: an old field that does not exist is a located error") {
  Migrated m(migrating("  for a in old.accounts { accounts[a.id] = { first: a.ownr, last: \"\", amount: 1.0 } }"), true);
  CHECK(m.errors() == "t.pure:4:54: error: '{id: int, owner: text, amount: int}' has no field 'ownr'\n"
                      "    for a in old.accounts { accounts[a.id] = { first: a.ownr, last: \"\", amount: 1.0 } }\n" +
                          std::string(2 + 53, ' ') + "^\n  hint: did you mean 'owner'?\n");
}

TEST_CASE("migrate: the old field's type is the old schema's") {
  Migrated m(migrating("  for a in old.accounts { accounts[a.id] = { first: a.owner, last: \"\", amount: a.amount } }"),
             true);
  CHECK(m.errors() == "t.pure:4:81: error: field 'amount' must be num, not int\n"
                      "    for a in old.accounts { accounts[a.id] = { first: a.owner, last: \"\", amount: a.amount } }\n"
                      "                                                                                  ^\n"
                      "  hint: convert with num(...)\n");
}

TEST_CASE("migrate: an old list that does not exist, and a write to an old list") {
  Migrated unknown(migrating("  let n = old.acounts.count()"), true);
  CHECK(unknown.errors() == "t.pure:4:11: error: the old version has no stored list 'acounts'; its lists are "
                            "old.accounts, old.notes\n"
                            "    let n = old.acounts.count()\n"
                            "            ^\n"
                            "  hint: did you mean 'old.accounts'?\n");
  Migrated write(migrating("  old.accounts[1].amount = 3"), true);
  CHECK(write.errors() == "t.pure:4:15: error: 'old.accounts' is the old version's list: a migration reads it and "
                          "cannot change it\n"
                          "    old.accounts[1].amount = 3\n"
                          "                ^\n"
                          "  hint: write the new rows to 'accounts'\n");
}

TEST_CASE("migrate: without the old lists the block is parsed, not checked; old.NAME means nothing outside it") {
  Migrated plain(migrating("  let n = old.nothing.count()"), false);
  CHECK(plain.errors() == "");
  CHECK(plain.checked.module.has_migrate);
  CHECK(plain.checked.module.funcs.empty());
  CHECK(plain.checked.module.lists.size() == 2);
  Migrated outside(std::string(kNew) + "fn main() { let n = old.accounts.count() }\n", true);
  CHECK(outside.errors().find("t.pure:3:21: error: unknown name 'old'") == 0);
  Migrated twice(migrating("") + "migrate { }\n", false);
  CHECK(twice.errors().find("t.pure:6:1: error: a module has one migrate block, and one is already declared on line 3")
        == 0);
}

}  // namespace pure::test
