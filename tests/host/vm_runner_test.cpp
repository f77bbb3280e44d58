// tests/host/vm_runner_test.cpp — the VM glue: the log's encoding of vm::Value arguments (round
// trip and every decoding error), module identity, and a Pure module made durable: events run by
// vm::call_event through Module, failed events answered and not logged, state recovered through
// the VM on reopen and read by vm::call_query; another module refused.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "frontend/frontend.h"
#include "host/host.h"
#include "ir/ir.h"
#include "temp_dir.h"
#include "vm/vm.h"

using namespace pure;
using namespace pure::host;
using vm::Value;
using HostModule = pure::host::Module;  // pure::Module is the frontend's

namespace {

std::unique_ptr<vm::Program> compile(const std::string& text) {
  Source source("bank.pure", text);
  Diagnostics diags(source);
  CheckedModule checked = compile_frontend(source, diags);
  REQUIRE_MESSAGE(!diags.any(), diags.render());
  ir::Program lowered = ir::lower_module(checked, "bank.pure");
  std::string error;
  auto program = vm::load_program(lowered, error);
  REQUIRE_MESSAGE(program, error);
  return program;
}

const char* const kBank = R"(list accounts by id: int { owner: text, balance: int }
list log seq { line: text }
event open(id: int, owner: text, amount: int) {
  if accounts.has(id) { fail "account {id} exists" }
  accounts[id] = { owner: owner, balance: amount }
  log.push({ line: "opened {owner}" })
}
event transfer(from: int, to: int, amount: int) {
  if amount <= 0 { fail "amount must be positive" }
  let a = accounts[from] else fail "no account {from}"
  if a.balance < amount { fail "insufficient funds" }
  accounts[from].balance -= amount
  accounts[to].balance += amount
}
query balance(id: int) -> int { return accounts[id].balance }
query lines() -> int { return log.count() }
)";

std::string same_bits(const Value& a, const Value& b) {
  if (a.kind != b.kind) return "kind";
  if (a.kind == Value::Kind::Num && std::memcmp(&a.n, &b.n, 8) != 0) return "num bits";
  if (a.i != b.i || a.text != b.text || a.items.size() != b.items.size()) return "value";
  for (size_t i = 0; i < a.items.size(); ++i)
    if (std::string d = same_bits(a.items[i], b.items[i]); !d.empty()) return d;
  return "";
}

struct Bank {
  std::unique_ptr<vm::Program> program = compile(kBank);
  std::unique_ptr<EventRunner> runner = make_vm_runner(*program, 1'000'000);
  ModuleOptions options() {
    ModuleOptions o;
    o.module_identity = module_identity(*program);
    o.schemas = program->stored;
    o.runner = runner.get();
    return o;
  }
  EventOutcome event(HostModule& m, const char* name, std::vector<Value> args) {
    int fn = vm::find_function(*program, name);
    REQUIRE(fn >= 0);
    return m.submit(static_cast<uint32_t>(fn), encode_values(args)).get();
  }
  int64_t query(HostModule& m, const char* name, std::vector<Value> args) {
    int fn = vm::find_function(*program, name);
    REQUIRE(fn >= 0);
    vm::CallResult r = vm::call_query(*program, m.snapshot(), static_cast<uint32_t>(fn), args);
    REQUIRE(r.ok);
    return r.value.i;
  }
};

}  // namespace

TEST_CASE("argument encoding round trip") {
  Value item;
  item.kind = Value::Kind::Item;
  item.items = {Value::of_text("naïve"), Value::of_num(-0.0), Value::of_bool(true)};
  Value list;
  list.kind = Value::Kind::List;
  list.items = {item, item, Value::of_int(INT64_MIN)};
  std::vector<Value> values = {Value::of_int(-5), Value::of_num(std::nan("")), Value::of_text(""), list};
  std::string bytes = encode_values(values);
  std::vector<Value> back;
  REQUIRE(decode_values(bytes, &back).ok());
  REQUIRE(back.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) CHECK(same_bits(values[i], back[i]) == "");
  CHECK(encode_values(back) == bytes);

  CHECK(decode_values(bytes.substr(0, bytes.size() - 1), &back).error.find("encoded arguments cut short at byte") == 0);
  CHECK(decode_values(bytes + "x", &back).error == "encoded arguments have 1 bytes left over");
  std::string bad = bytes;
  bad[4] = 9;
  CHECK(decode_values(bad, &back).error == "unknown value kind 9 at byte 4");
  CHECK(decode_values("", &back).error == "encoded arguments cut short at byte 0");
}

TEST_CASE("module identity follows the compiled module") {
  auto a = compile(kBank);
  auto b = compile(kBank);
  CHECK(module_identity(*a) == module_identity(*b));
  std::string changed = kBank;
  changed.replace(changed.find("insufficient funds"), 18, "not enough money!!");
  CHECK(module_identity(*compile(changed)) != module_identity(*a));
}

TEST_CASE("a Pure module made durable: events through the VM, recovery through the VM") {
  host_test::TempDir tmp;
  FileSystem& fs = posix_file_system();
  {
    Bank bank;
    std::unique_ptr<HostModule> m;
    Status s = HostModule::open(fs, tmp.path, bank.options(), &m);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(bank.event(*m, "open", {Value::of_int(1), Value::of_text("ann"), Value::of_int(100)}).ok);
    CHECK(bank.event(*m, "open", {Value::of_int(2), Value::of_text("bob"), Value::of_int(50)}).ok);
    EventOutcome dup = bank.event(*m, "open", {Value::of_int(1), Value::of_text("x"), Value::of_int(1)});
    CHECK(!dup.ok);
    CHECK(dup.reason == "account 1 exists");
    EventOutcome t = bank.event(*m, "transfer", {Value::of_int(1), Value::of_int(2), Value::of_int(30)});
    CHECK(t.ok);
    CHECK(t.sequence == 3);
    CHECK(bank.event(*m, "transfer", {Value::of_int(2), Value::of_int(1), Value::of_int(1000)}).reason ==
          "insufficient funds");
    EventOutcome wrong = bank.event(*m, "transfer", {Value::of_text("one")});
    CHECK(!wrong.ok);
    CHECK(!wrong.reason.empty());
    CHECK(bank.query(*m, "balance", {Value::of_int(1)}) == 70);
    REQUIRE(m->close().ok());
  }
  {
    Bank bank;  // compiled again, as a new process would
    std::unique_ptr<HostModule> m;
    Status s = HostModule::open(fs, tmp.path, bank.options(), &m);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(m->recovery().records_replayed == 3);
    CHECK(bank.query(*m, "balance", {Value::of_int(1)}) == 70);
    CHECK(bank.query(*m, "balance", {Value::of_int(2)}) == 80);
    CHECK(bank.query(*m, "lines", {}) == 2);
    CHECK(bank.event(*m, "transfer", {Value::of_int(2), Value::of_int(1), Value::of_int(80)}).sequence == 4);
    REQUIRE(m->checkpoint().ok());
    REQUIRE(m->close().ok());
  }
  {
    Bank bank;
    std::unique_ptr<HostModule> m;
    REQUIRE(HostModule::open(fs, tmp.path, bank.options(), &m).ok());
    CHECK(m->recovery().checkpoint_sequence == 4);
    CHECK(bank.query(*m, "balance", {Value::of_int(1)}) == 150);
    CHECK(bank.query(*m, "balance", {Value::of_int(2)}) == 0);
  }
  std::string changed = kBank;
  changed.replace(changed.find("insufficient funds"), 18, "not enough money!!");
  auto other = compile(changed);
  auto runner = make_vm_runner(*other);
  ModuleOptions o;
  o.module_identity = module_identity(*other);
  o.schemas = other->stored;
  o.runner = runner.get();
  std::unique_ptr<HostModule> m;
  Status s = HostModule::open(fs, tmp.path, o, &m);
  CHECK(s.error.find("checkpoint was written by module") != std::string::npos);
}
