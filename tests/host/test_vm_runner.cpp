// tests/host/test_vm_runner.cpp — the VM glue: the log's encoding of vm::Value arguments (round
// trip and every decoding error), module identity, and a Pure module made durable: events run by
// vm::call_event through host::Owner over open_durable, failed events answered and not logged,
// state recovered through the VM on reopen and read by queries; another module refused; the VM
// runner replaying a log by itself (recover() with make_vm_runner); events with seq arguments and a
// result: the owner's reply carries the value, and recovery replays the lists to the same state.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <future>

#include "frontend/frontend.h"
#include "host/host.h"
#include "host/owner.h"
#include "ir/ir.h"
#include "temp_dir.h"
#include "tests/support/bank_module.h"
#include "tests/support/compile_module.h"
#include "tests/support/values.h"
#include "vm/vm.h"

using namespace pure;
using namespace pure::host;
using vm::Value;

namespace {

std::unique_ptr<vm::Program> compile(const std::string& text) {
  return test::compile_module(text, "bank.pure");
}

const std::string kBank = test::bank_module("", R"(query balance(id: int) -> int { return accounts[id].balance }
query lines() -> int { return log.count() }
)");

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
  std::unique_ptr<Owner> owner;
  DurableLog* log = nullptr;
  Status open(FileSystem& fs, const std::string& dir) {
    std::unique_ptr<rt::Store> store;
    std::unique_ptr<DurableLog> d;
    DurableOptions o;
    o.checkpoint_log_bytes = 0;
    o.checkpoint_seconds = 0;
    if (Status s = open_durable(fs, dir, *program, o, &store, &d); !s.ok()) return s;
    log = d.get();
    OwnerOptions oo;
    oo.max_steps = 1'000'000;
    owner = std::make_unique<Owner>("bank", *program, std::move(store), std::move(d), oo);
    return {};
  }
  EventReply event(const char* name, std::vector<Value> args) {
    int fn = vm::find_function(*program, name);
    REQUIRE(fn >= 0);
    std::promise<EventReply> p;
    std::future<EventReply> f = p.get_future();
    owner->submit(static_cast<uint32_t>(fn), std::move(args), [&p](EventReply r) { p.set_value(std::move(r)); });
    return f.get();
  }
  int64_t query(const char* name, std::vector<Value> args) {
    int fn = vm::find_function(*program, name);
    REQUIRE(fn >= 0);
    vm::CallResult r = owner->query(static_cast<uint32_t>(fn), args);
    REQUIRE(r.ok);
    return r.value.i;
  }
};

}  // namespace

TEST_CASE("argument encoding round trip") {
  Value item = test::item_value({Value::of_text("naïve"), Value::of_num(-0.0), Value::of_bool(true)});
  Value list = test::list_value({item, item, Value::of_int(INT64_MIN)});
  std::vector<Value> values = {Value::of_int(-5), Value::of_num(std::nan("")), Value::of_text(""), list};
  std::string bytes = encode_values(values);
  std::vector<Value> back;
  REQUIRE(decode_values(bytes, &back).ok());
  REQUIRE(back.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) CHECK(same_bits(values[i], back[i]) == "");
  CHECK(encode_values(back) == bytes);
  // Appended to a buffer (a batch's, reused): the same bytes after what it held.
  std::string buffer = "held";
  append_encoded_values(buffer, values);
  append_encoded_values(buffer, {});
  CHECK(buffer == "held" + bytes + encode_values({}));

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
  using Kind = EventReply::Kind;
  {
    Bank bank;
    Status s = bank.open(fs, tmp.path);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(bank.event("open", {Value::of_int(1), Value::of_text("ann"), Value::of_int(100)}).kind == Kind::Committed);
    CHECK(bank.event("open", {Value::of_int(2), Value::of_text("bob"), Value::of_int(50)}).kind == Kind::Committed);
    EventReply dup = bank.event("open", {Value::of_int(1), Value::of_text("x"), Value::of_int(1)});
    CHECK(dup.kind == Kind::Failed);
    CHECK(dup.reason == "account 1 exists");
    CHECK(dup.sequence == 3);  // its audit-only record (--audit-failed, the default): replay skips it
    EventReply t = bank.event("transfer", {Value::of_int(1), Value::of_int(2), Value::of_int(30)});
    CHECK(t.kind == Kind::Committed);
    CHECK(t.sequence == 4);
    CHECK(bank.event("transfer", {Value::of_int(2), Value::of_int(1), Value::of_int(1000)}).reason ==
          "insufficient funds");
    CHECK(bank.query("balance", {Value::of_int(1)}) == 70);
    REQUIRE(bank.owner->close() == "");
  }
  {
    Bank bank;  // compiled again, as a new process would
    Status s = bank.open(fs, tmp.path);
    REQUIRE_MESSAGE(s.ok(), s.error);
    CHECK(bank.log->recovery().records_replayed == 3);  // the two failed events' records are not replayed
    CHECK(bank.log->recovery().last_sequence == 5);
    CHECK(bank.query("balance", {Value::of_int(1)}) == 70);
    CHECK(bank.query("balance", {Value::of_int(2)}) == 80);
    CHECK(bank.query("lines", {}) == 2);
    CHECK(bank.event("transfer", {Value::of_int(2), Value::of_int(1), Value::of_int(80)}).sequence == 6);
    REQUIRE(bank.log->checkpoint_now() == "");
    REQUIRE(bank.owner->close() == "");
  }
  {
    Bank bank;
    REQUIRE(bank.open(fs, tmp.path).ok());
    CHECK(bank.log->recovery().checkpoint_sequence == 6);
    CHECK(bank.query("balance", {Value::of_int(1)}) == 150);
    CHECK(bank.query("balance", {Value::of_int(2)}) == 0);
  }
  {
    // The VM runner replays the log by itself (what pure-run --data and tools do).
    auto program = compile(kBank);
    auto runner = make_vm_runner(*program);
    OpenOptions o;
    o.module_identity = module_identity(*program);
    o.schemas = program->stored;
    o.apply = [&](rt::Store& store, const LogRecord& r) {
      EventOutcome out = runner->run(store, r.event, r.args);
      return out.ok ? std::string() : out.reason;
    };
    std::unique_ptr<rt::Store> store;
    RecoveryReport report;
    REQUIRE(recover(fs, tmp.path, o, &store, &report).ok());
    CHECK(report.last_sequence == 6);
    CHECK(runner->run(*store, static_cast<uint32_t>(vm::find_function(*program, "open")), "xx").reason.find("encoded arguments cut short") == 0);
    CHECK(runner->run(*store, 99, encode_values({})).reason == "no event with index 99");
  }
  std::string changed = kBank;
  changed.replace(changed.find("insufficient funds"), 18, "not enough money!!");
  Bank other;
  other.program = compile(changed);
  Status s = other.open(fs, tmp.path);
  CHECK(s.error.find("checkpoint was written by module") != std::string::npos);
}

TEST_CASE("events with seq arguments and results: the owner replies with the value; recovery replays the lists") {
  const char* const kOrders = R"(type Line { item: int, qty: int, note: text }
type Placed { id: int, total: int }
list orders by id: int { lines: int, total: int, notes: text }
list next by k: int { id: int = 1 }
event place(lines: seq Line, tags: seq text) -> Placed {
  if lines.count() == 0 { fail "no lines" }
  next[0].id += 0
  let id = next[0].id
  next[0].id += 1
  var total = 0
  var notes = ""
  for l in lines { total += l.qty * l.item
    notes = notes + l.note }
  for t in tags { notes = notes + "/" + t }
  orders[id] = { lines: lines.count(), total: total, notes: notes }
  return { id: id, total: total }
}
query total_of(id: int) -> int { return orders[id].total }
query notes_of(id: int) -> text { return orders[id].notes }
)";
  host_test::TempDir tmp;
  FileSystem& fs = posix_file_system();
  auto line = [](int64_t item, int64_t qty, std::string note) {
    return test::item_value({Value::of_int(item), Value::of_int(qty), Value::of_text(std::move(note))});
  };
  auto list = test::list_value;
  // the log's encoding carries lists of items and of texts
  std::vector<Value> args{list({line(1, 2, "a"), line(3, 4, "é")}), list({Value::of_text("x"), Value::of_text("")})};
  std::vector<Value> back;
  REQUIRE(decode_values(encode_values(args), &back).ok());
  REQUIRE(back.size() == 2);
  CHECK(same_bits(back[0], args[0]) == "");
  CHECK(same_bits(back[1], args[1]) == "");
  {
    Bank shop;
    shop.program = compile(kOrders);
    REQUIRE(shop.open(fs, tmp.path).ok());
    EventReply r = shop.event("place", args);
    REQUIRE(r.kind == EventReply::Kind::Committed);
    REQUIRE(r.value.kind == Value::Kind::Item);
    CHECK(r.value.items[0].i == 1);
    CHECK(r.value.items[1].i == 14);
    EventReply empty = shop.event("place", {list({}), list({})});
    CHECK(empty.kind == EventReply::Kind::Failed);
    CHECK(empty.reason == "no lines");
    EventReply r2 = shop.event("place", {list({line(5, 5, "b")}), list({})});
    REQUIRE(r2.kind == EventReply::Kind::Committed);
    CHECK(r2.value.items[0].i == 2);
    REQUIRE(shop.owner->close() == "");
  }
  Bank shop;
  shop.program = compile(kOrders);
  REQUIRE(shop.open(fs, tmp.path).ok());
  CHECK(shop.log->recovery().records_replayed == 2);
  CHECK(shop.query("total_of", {Value::of_int(1)}) == 14);
  CHECK(shop.query("total_of", {Value::of_int(2)}) == 25);
  std::vector<Value> one{Value::of_int(1)};
  vm::CallResult n = shop.owner->query(static_cast<uint32_t>(vm::find_function(*shop.program, "notes_of")), one);
  REQUIRE(n.ok);
  CHECK(n.value.text == "aé/x/");
  EventReply r3 = shop.event("place", {list({line(1, 1, "c")}), list({})});
  CHECK(r3.value.items[0].i == 3);  // the counter was recovered too
}
