// tests/vm/test_invoke.cpp — the hosting seam (vm/vm.h): events and queries called by name with
// argument values, outside main; argument checks; results as values; budgets per call; and
// several threads querying snapshots while owners run events, across modules (run under TSan).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "frontend/frontend.h"
#include "tests/support/bank_module.h"
#include "tests/support/compile_module.h"
#include "tests/support/values.h"
#include "ir/ir.h"
#include "runtime/text.h"
#include "vm/vm.h"

using pure::vm::CallResult;
using pure::vm::Value;

namespace {

std::unique_ptr<pure::vm::Program> compile(const std::string& text) {
  return pure::test::compile_module(text, "m.pure");
}

// A module hosted: its program, its store, the latest published snapshot.
struct Hosted {
  const pure::vm::Program& program;
  std::unique_ptr<pure::rt::Store> store;
  std::mutex mu;
  std::shared_ptr<const pure::rt::Snapshot> latest;
  explicit Hosted(const pure::vm::Program& p) : program(p), store(pure::rt::make_store(p.stored)) { publish(); }
  void publish() {
    auto snap = store->publish();
    std::lock_guard<std::mutex> lock(mu);
    latest = std::move(snap);
  }
  std::shared_ptr<const pure::rt::Snapshot> snapshot() {
    std::lock_guard<std::mutex> lock(mu);
    return latest;
  }
  CallResult event(const char* name, std::vector<Value> args, uint64_t max_steps = 1'000'000) {
    int fn = pure::vm::find_function(program, name);
    REQUIRE(fn >= 0);
    pure::vm::RunOptions options;
    options.max_steps = max_steps;
    return pure::vm::call_event(program, *store, static_cast<uint32_t>(fn), args, options);
  }
  CallResult query(const char* name, std::vector<Value> args) {
    int fn = pure::vm::find_function(program, name);
    REQUIRE(fn >= 0);
    return pure::vm::call_query(program, snapshot(), static_cast<uint32_t>(fn), args);
  }
};

const std::string kBank = pure::test::bank_module("type Summary { count: int, total: int, note: text }\n", R"(event spin() { while true { } }
query balance(id: int) -> int { return accounts[id].balance }
query owner(id: int) -> text { return accounts[id].owner }
query summary() -> Summary {
  var t = 0
  for a in accounts { t += a.balance }
  return { count: accounts.count(), total: t, note: "sum" }
}
query rich(min: int) -> list by id: int { owner: text } {
  let out = list by id: int { owner: text }
  for a in accounts { if a.balance >= min { out[a.id] = { owner: a.owner } } }
  return out
}
query lines() -> seq text {
  var out: seq text = []
  for l in log { out.push(l.line) }
  return out
}
)");

}  // namespace

TEST_CASE("host calls: events commit or roll back, queries read the published snapshot") {
  int64_t texts = pure::rt::text_live_count();
  {
    auto program = compile(kBank);
    Hosted m(*program);
    CHECK(m.event("open", {Value::of_int(1), Value::of_text("ann"), Value::of_int(100)}).ok);
    CHECK(m.event("open", {Value::of_int(2), Value::of_text("bob"), Value::of_int(50)}).ok);
    CallResult dup = m.event("open", {Value::of_int(1), Value::of_text("x"), Value::of_int(1)});
    CHECK(!dup.ok);
    CHECK(dup.reason == "account 1 exists");
    CallResult missing = m.event("transfer", {Value::of_int(1), Value::of_int(3), Value::of_int(30)});
    CHECK(!missing.ok);  // a runtime error in the event: rolled back, with its location
    CHECK(missing.reason.find("runtime error at 14:") == 0);
    // not yet published: a query sees the state before the events
    CHECK(m.query("summary", {}).value.items[0].i == 0);
    m.publish();
    CHECK(m.query("balance", {Value::of_int(1)}).value.i == 100);
    CHECK(m.query("owner", {Value::of_int(2)}).value.text == "bob");
    Value s = m.query("summary", {}).value;
    REQUIRE(s.kind == Value::Kind::Item);
    REQUIRE(s.items.size() == 3);
    CHECK(s.items[0].i == 2);
    CHECK(s.items[1].i == 150);
    CHECK(s.items[2].text == "sum");
    Value rich = m.query("rich", {Value::of_int(60)}).value;
    REQUIRE(rich.kind == Value::Kind::List);
    REQUIRE(rich.items.size() == 1);
    CHECK(rich.items[0].items[0].i == 1);
    CHECK(rich.items[0].items[1].text == "ann");
    Value lines = m.query("lines", {}).value;
    REQUIRE(lines.items.size() == 2);
    CHECK(lines.items[1].text == "opened bob");
    // a runtime error in a query
    CallResult err = m.query("balance", {Value::of_int(9)});
    CHECK(!err.ok);
    REQUIRE(err.error);
    CHECK(err.error->message.find("no item with key 9") != std::string::npos);
    CHECK(err.error->loc.line == 17);
  }
  CHECK(pure::rt::text_live_count() == texts);
}

TEST_CASE("host calls: arguments are checked against the parameters, by name and type") {
  auto program = compile(kBank);
  const pure::vm::Function& open = program->functions[pure::vm::find_function(*program, "open")];
  REQUIRE(open.param_names == std::vector<std::string>{"id", "owner", "amount"});
  CHECK(pure::vm::check_args(open, std::vector<Value>{Value::of_int(1)}).error == "open takes 3 arguments, got 1");
  CHECK(pure::vm::check_args(open, std::vector<Value>{Value::of_int(1), Value::of_int(2), Value::of_int(3)}).error ==
        "parameter 'owner': expected text, got int");
  CHECK(pure::vm::check_args(open, std::vector<Value>{Value::of_int(1), Value::of_text("a"), Value::of_num(1.5)}).error ==
        "parameter 'amount': expected int, got num");
  CHECK(pure::vm::find_function(*program, "nope") == -1);
  Hosted m(*program);
  CallResult bad = m.event("open", {Value::of_text("1"), Value::of_text("a"), Value::of_int(1)});
  CHECK(!bad.ok);
  CHECK(bad.reason == "parameter 'id': expected int, got text");
  // calling a query as an event (or the reverse) is refused, not run
  CHECK(!pure::vm::call_event(*program, *m.store, pure::vm::find_function(*program, "summary"), {}).ok);
  CHECK(!pure::vm::call_query(*program, m.snapshot(), pure::vm::find_function(*program, "spin"), {}).ok);
}

TEST_CASE("host calls: each call has its own step budget; a runaway event fails alone") {
  auto program = compile(kBank);
  Hosted m(*program);
  CHECK(m.event("open", {Value::of_int(1), Value::of_text("ann"), Value::of_int(5)}).ok);
  CallResult spin = m.event("spin", {}, 10'000);
  CHECK(!spin.ok);
  CHECK(spin.reason.find("step budget spent (10000 steps") != std::string::npos);
  for (int i = 0; i < 100; ++i) CHECK(m.event("transfer", {Value::of_int(1), Value::of_int(1), Value::of_int(1)}, 10).ok);
  m.publish();
  CHECK(m.query("balance", {Value::of_int(1)}).value.i == 5);
}

TEST_CASE("host calls: each call has its own memory budget; a runaway event fails alone, on any thread") {
  const char* text = R"(list log seq { line: text }
list names by k: int { s: text }
event grow() {
  var i = 0
  while true { log.push({ line: "line {i}" }); i += 1 }
}
event add(s: text) { log.push({ line: s }) }
query hoard(n: int) -> int {
  var xs = seq text
  for i in 0 .. n { xs.push("item {i}") }
  return xs.count()
}
)";
  auto program = compile(text);
  Hosted m(*program);
  pure::vm::RunOptions options;
  options.max_memory = 8 << 20;
  auto call = [&](const char* name, std::vector<Value> args) {
    return pure::vm::call_event(*program, *m.store, static_cast<uint32_t>(pure::vm::find_function(*program, name)), args, options);
  };
  for (int round = 0; round < 3; ++round) {  // what a failed event took is given back each time
    CallResult r = call("grow", {});
    CHECK(!r.ok);
    CHECK(r.reason.rfind("runtime error at 5:", 0) == 0);  // the push or the text it pushes
    CHECK(r.reason.find(": memory budget spent (8 MiB of texts, lists and stored rows held at once); raise it with --max-memory") != std::string::npos);
  }
  CHECK(call("add", {Value::of_text("kept")}).ok);
  CHECK(m.store->list(0).count() == 1);  // the failed events left nothing behind
  m.publish();
  // queries on other threads, each against its own meter: one runs out, the others do not
  auto query = [&](int64_t n) {
    return pure::vm::call_query(*program, m.snapshot(), static_cast<uint32_t>(pure::vm::find_function(*program, "hoard")),
                                std::vector<Value>{Value::of_int(n)}, options);
  };
  CallResult big, small1, small2;
  std::thread a([&] { big = query(10'000'000); }), b([&] { small1 = query(50'000); }), c([&] { small2 = query(50'000); });
  a.join();
  b.join();
  c.join();
  CHECK(!big.ok);
  REQUIRE(big.error);
  CHECK(big.error->message.find("memory budget spent (8 MiB") == 0);
  CHECK(small1.ok);
  CHECK(small1.value.i == 50'000);
  CHECK(small2.value.i == 50'000);
}

// Owners run events on their modules while other threads query the latest snapshots. Two
// different modules and the same module hosted twice (one Program, two stores) share the
// process; under ThreadSanitizer this proves the Program is immutable and the counters private.
TEST_CASE("host calls: queries on several threads while owners run events, across modules") {
  auto bank = compile(kBank);
  auto counter = compile(R"(list hits by name: text { n: int = 0 }
event hit(name: text) { hits[name].n += 1 }
query count(name: text) -> int {
  let h = hits[name] else return 0
  return h.n
}
query all() -> int {
  var t = 0
  for h in hits { t += h.n }
  return t
}
)");
  Hosted a(*bank), b(*bank), c(*counter);
  constexpr int kAccounts = 20, kEvents = 1500, kInitial = 1000;
  for (Hosted* m : {&a, &b})
    for (int i = 0; i < kAccounts; ++i)
      REQUIRE(m->event("open", {Value::of_int(i), Value::of_text("owner"), Value::of_int(kInitial)}).ok);
  a.publish();
  b.publish();
  std::atomic<int> owners_done{0}, readers_ready{0};
  auto wait_for_readers = [&] {
    while (readers_ready.load() < 3) std::this_thread::yield();
  };
  std::atomic<int64_t> bad{0}, queries{0};
  auto bank_owner = [&](Hosted& m, int seed) {
    wait_for_readers();
    uint64_t x = static_cast<uint64_t>(seed) * 2654435761u + 1;
    for (int i = 0; i < kEvents; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      int from = static_cast<int>((x >> 33) % kAccounts), to = static_cast<int>((x >> 45) % kAccounts);
      m.event("transfer", {Value::of_int(from), Value::of_int(to), Value::of_int(static_cast<int64_t>(x >> 60) + 1)});
      if (i % 7 == 0) m.publish();
    }
    m.publish();
    ++owners_done;
  };
  auto counter_owner = [&]() {
    wait_for_readers();
    const char* names[] = {"x", "y", "z"};
    for (int i = 0; i < kEvents; ++i) {
      c.event("hit", {Value::of_text(names[i % 3])});
      if (i % 5 == 0) c.publish();
    }
    c.publish();
    ++owners_done;
  };
  auto reader = [&](int which) {
    int64_t last = 0;
    ++readers_ready;
    for (int n = 0; n < 20 || owners_done.load() < 3; ++n) {
      if (which < 2) {
        Hosted& m = which == 0 ? a : b;
        CallResult r = m.query("summary", {});
        // transfers move money: every snapshot holds the same total
        if (!r.ok || r.value.items[1].i != kAccounts * kInitial) ++bad;
      } else {
        CallResult r = c.query("all", {});
        if (!r.ok || r.value.i < last) ++bad;  // snapshots only move forward
        last = r.ok ? r.value.i : last;
      }
      ++queries;
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(bank_owner, std::ref(a), 1);
  threads.emplace_back(bank_owner, std::ref(b), 2);
  threads.emplace_back(counter_owner);
  for (int r = 0; r < 3; ++r) threads.emplace_back(reader, r);
  for (std::thread& t : threads) t.join();
  CHECK(bad.load() == 0);
  CHECK(queries.load() > 0);
  CHECK(c.query("all", {}).value.i == kEvents);
  CHECK(c.query("count", {Value::of_text("y")}).value.i == kEvents / 3);
  CHECK(a.query("summary", {}).value.items[1].i == kAccounts * kInitial);
}

// RunOptions::on_commit: what pure-run --data logs. Only committed events of main, in order, with
// the values they were called with (items as their fields, texts copied before the event could
// change its parameters' slots); an error from the hook ends main at the call.
TEST_CASE("run_main: on_commit sees each committed event with its arguments, failed ones not") {
  auto program = compile(R"(
type pair { a: int, b: text }
list log seq { line: text }
event note(p: pair, x: num, flag: bool) {
  var t = p.b
  t = "changed"
  if not flag { fail "no flag" }
  log.push({ line: "{p.a} {t} {x}" })
}
event boom(n: int) {
  let z = 10 / n
  log.push({ line: "{z}" })
}
fn main() {
  let r1 = note({ a: 1, b: "one" }, 1.5, true)
  let r2 = note({ a: 2, b: "two" }, 2.5, false)
  let r3 = boom(0)
  let r4 = boom(5)
  print("{r1.ok} {r2.ok} {r3.ok} {r4.ok} {log.count()}")
}
)");
  struct Seen {
    uint32_t fn;
    std::vector<Value> args;
  };
  std::vector<Seen> seen;
  std::string out;
  pure::vm::RunOptions options;
  options.write_output = [&](std::string_view t) { out += t; };
  options.on_commit = [&](uint32_t fn, std::span<const Value> args) {
    seen.push_back({fn, std::vector<Value>(args.begin(), args.end())});
    return std::string();
  };
  auto store = pure::rt::make_store(program->stored);
  auto err = pure::vm::run_main(*program, *store, options);
  REQUIRE_MESSAGE(!err.has_value(), (err ? err->render("m.pure") : std::string()));
  CHECK(out == "true false false true 2\n");
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].fn == static_cast<uint32_t>(pure::vm::find_function(*program, "note")));
  REQUIRE(seen[0].args.size() == 3);
  CHECK(seen[0].args[0].kind == Value::Kind::Item);
  REQUIRE(seen[0].args[0].items.size() == 2);
  CHECK(seen[0].args[0].items[0].i == 1);
  CHECK(seen[0].args[0].items[1].text == "one");
  CHECK(seen[0].args[1].n == 1.5);
  CHECK(seen[0].args[2].kind == Value::Kind::Bool);
  CHECK(seen[0].args[2].i == 1);
  CHECK(seen[1].fn == static_cast<uint32_t>(pure::vm::find_function(*program, "boom")));
  REQUIRE(seen[1].args.size() == 1);
  CHECK(seen[1].args[0].i == 5);

  // A hook that refuses ends main with a runtime error located at the call; the event stays
  // committed in the store.
  out.clear();
  int calls = 0;
  options.on_commit = [&](uint32_t, std::span<const Value>) {
    return ++calls == 1 ? std::string() : std::string("the log is gone");
  };
  auto store2 = pure::rt::make_store(program->stored);
  auto err2 = pure::vm::run_main(*program, *store2, options);
  REQUIRE(err2.has_value());
  CHECK(err2->message == "the log is gone");
  CHECK(err2->loc.line == 18);
  CHECK(out.empty());
  CHECK(store2->list(0).count() == 2);
}

TEST_CASE("host calls: seq arguments from values, results of events as values, arguments checked") {
  auto program = compile(R"(type Line { item: int, qty: int, note: text }
type Placed { id: int, total: int }
list orders by id: int { lines: int, total: int }
event place(id: int, lines: seq Line, tags: seq text) -> Placed {
  if lines.count() == 0 { fail "no lines" }
  var total = 0
  for l in lines { total += l.qty * l.item }
  orders[id] = { lines: lines.count(), total: total }
  return { id: id, total: total + tags.count() }
}
event ids() -> seq int {
  let out: seq int = []
  for o in orders { out.push(o.id) }
  return out
}
event nothing(xs: seq num) { }
query sum(xs: seq int) -> int { return xs.sum() }
)");
  Hosted m(*program);
  auto line = [](int64_t item, int64_t qty, std::string note) {
    return pure::test::item_value({Value::of_int(item), Value::of_int(qty), Value::of_text(std::move(note))});
  };
  auto list = pure::test::list_value;
  int64_t live = pure::rt::text_live_count();
  CallResult r = m.event("place", {Value::of_int(7), list({line(2, 3, "a"), line(5, 1, "é")}), list({Value::of_text("x")})});
  REQUIRE(r.ok);
  REQUIRE(r.value.kind == Value::Kind::Item);
  REQUIRE(r.value.items.size() == 2);
  CHECK(r.value.items[0].i == 7);
  CHECK(r.value.items[1].i == 12);
  CallResult empty = m.event("place", {Value::of_int(8), list({}), list({})});
  CHECK(!empty.ok);
  CHECK(empty.reason == "no lines");
  CHECK(empty.value.kind == Value::Kind::Int);  // a failed event has no value
  CallResult ids = m.event("ids", {});
  REQUIRE(ids.ok);
  REQUIRE(ids.value.kind == Value::Kind::List);
  REQUIRE(ids.value.items.size() == 1);
  CHECK(ids.value.items[0].i == 7);
  CallResult none = m.event("nothing", {list({Value::of_num(1.5)})});
  CHECK(none.ok);
  CHECK(none.value.kind == Value::Kind::Int);
  m.publish();
  CallResult s = m.query("sum", {list({Value::of_int(4), Value::of_int(5)})});
  REQUIRE(s.ok);
  CHECK(s.value.i == 9);
  CHECK(pure::rt::text_live_count() == live);  // the argument lists' texts are released
  // each element is checked, by position and field
  const pure::vm::Function& place = program->functions[pure::vm::find_function(*program, "place")];
  CHECK(pure::vm::check_args(place, std::vector<Value>{Value::of_int(1), Value::of_int(2), list({})}).error ==
        "parameter 'lines': expected seq Line (a list), got int");
  CHECK(pure::vm::check_args(place, std::vector<Value>{Value::of_int(1), list({line(1, 1, "a"), Value::of_int(3)}), list({})}).error ==
        "parameter 'lines'[1]: expected Line (an item), got int");
  Value bad = line(1, 1, "a");
  bad.items[1] = Value::of_text("2");
  CHECK(pure::vm::check_args(place, std::vector<Value>{Value::of_int(1), list({bad}), list({})}).error ==
        "parameter 'lines'[0].qty: expected int, got text");
  CHECK(pure::vm::check_args(place, std::vector<Value>{Value::of_int(1), list({}), list({Value::of_int(1)})}).error ==
        "parameter 'tags'[0]: expected text, got int");
  CHECK(!m.event("place", {Value::of_int(1), list({bad}), list({})}).ok);
  CHECK(place.param_types[1].desc >= 0);
  CHECK(place.result_type.kind == pure::ir::ValueType::Kind::Item);
}

TEST_CASE("run_main: on_commit gets seq arguments as they were sent, before the event changes its copy") {
  auto program = compile(R"(list log seq { line: text }
event note(xs: seq int, words: seq text) -> int {
  xs.push(99)
  words.push("inside")
  log.push({ line: "{xs} {words}" })
  return xs.count()
}
fn main() {
  let xs = [1, 2]
  let r = note(xs, ["a", "b"])
  print("{r.value} {xs}")
}
)");
  std::vector<std::vector<Value>> seen;
  std::string out;
  pure::vm::RunOptions options;
  options.write_output = [&](std::string_view t) { out += t; };
  options.on_commit = [&](uint32_t, std::span<const Value> args) {
    seen.emplace_back(args.begin(), args.end());
    return std::string();
  };
  auto store = pure::rt::make_store(program->stored);
  auto err = pure::vm::run_main(*program, *store, options);
  REQUIRE_MESSAGE(!err.has_value(), (err ? err->render("m.pure") : std::string()));
  CHECK(out == "3 [1, 2]\n");
  REQUIRE(seen.size() == 1);
  REQUIRE(seen[0].size() == 2);
  CHECK(seen[0][0].kind == Value::Kind::List);
  REQUIRE(seen[0][0].items.size() == 2);
  CHECK(seen[0][0].items[1].i == 2);
  REQUIRE(seen[0][1].items.size() == 2);
  CHECK(seen[0][1].items[0].text == "a");
  // replaying the logged arguments through call_event gives the same state
  auto replay = pure::rt::make_store(program->stored);
  CallResult r = pure::vm::call_event(*program, *replay, pure::vm::find_function(*program, "note"), seen[0]);
  REQUIRE(r.ok);
  CHECK(r.value.i == 3);
  auto a = store->publish();
  auto b = replay->publish();
  REQUIRE(a->list(0).count() == 1);
  REQUIRE(b->list(0).count() == 1);
}

TEST_CASE("invoke: seq bool (a narrow list, one byte a row) to and from a host, as values") {
  auto program = compile(R"(type F { on: bool }
list flags by pos: int { on: bool }
event set_all(bs: seq bool, fs: seq F) -> seq bool {
  for i in 0 .. bs.count() { flags[i] = { on: bs[i] != fs[i].on } }
  bs.reverse()
  bs.push(false)
  return bs
}
query read() -> seq bool {
  let out: seq bool = []
  for f in flags { out.push(f.on) }
  return out
}
query items(n: int) -> seq F {
  let out: seq F = []
  for f in flags { if out.count() < n { out.push(F { on: not f.on }) } }
  return out
}
)");
  Hosted m(*program);
  std::mt19937_64 rng(20261201);
  std::vector<bool> bs, fs;
  std::vector<Value> b_values, f_values;
  for (int i = 0; i < 300; ++i) {
    bs.push_back(rng() % 2);
    fs.push_back(rng() % 3 == 0);
    b_values.push_back(Value::of_bool(bs.back()));
    f_values.push_back(pure::test::item_value({Value::of_bool(fs.back())}));
  }
  CallResult r = m.event("set_all", {pure::test::list_value(b_values), pure::test::list_value(f_values)});
  REQUIRE_MESSAGE(r.ok, r.reason);
  m.publish();
  REQUIRE(r.value.kind == Value::Kind::List);
  REQUIRE(r.value.items.size() == bs.size() + 1);
  for (size_t i = 0; i < bs.size(); ++i) {
    CHECK(r.value.items[i].kind == Value::Kind::Bool);
    CHECK(r.value.items[i].i == (bs[bs.size() - 1 - i] ? 1 : 0));  // reversed
  }
  CHECK(r.value.items.back().i == 0);
  CallResult q = m.query("read", {});
  REQUIRE(q.ok);
  REQUIRE(q.value.items.size() == bs.size());
  for (size_t i = 0; i < bs.size(); ++i) CHECK(q.value.items[i].i == (bs[i] != fs[i] ? 1 : 0));
  CallResult it = m.query("items", {Value::of_int(5)});
  REQUIRE(it.ok);
  REQUIRE(it.value.items.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    REQUIRE(it.value.items[i].kind == Value::Kind::Item);
    CHECK(it.value.items[i].items[0].i == (bs[i] != fs[i] ? 0 : 1));
  }
}

TEST_CASE("a host's event calls events: a plain inner failure fails it whole, a try'd one is undone alone") {
  auto program = compile(R"(list stock by sku: text { n: int = 0 }
list notes seq { t: text }
event adjust(sku: text, d: int) -> int {
  stock[sku].n += d
  notes.push({ t: "{sku} {d}" })
  if stock[sku].n < 0 { fail "short of {sku}" }
  return stock[sku].n
}
event both(a: text, b: text, d: int) -> int { return adjust(a, d) + adjust(b, d) }
event either(a: text, b: text, d: int) -> int {
  notes.push({ t: "either" })
  let x = try adjust(a, d)
  let y = try adjust(b, d)
  let vx = if x.ok { x.value } else { 0 }
  let vy = if y.ok { y.value } else { 0 }
  return vx + vy
}
query count() -> int { return notes.count() }
query level(sku: text) -> int {
  if not stock.has(sku) { fail "none" }
  return stock[sku].n
}
)");
  REQUIRE(program);
  Hosted h(*program);
  CHECK(h.event("both", {Value::of_text("a"), Value::of_text("b"), Value::of_int(3)}).value.i == 6);
  CallResult r = h.event("both", {Value::of_text("a"), Value::of_text("c"), Value::of_int(-1)});
  CHECK(!r.ok);
  CHECK(r.reason == "short of c");
  r = h.event("either", {Value::of_text("a"), Value::of_text("c"), Value::of_int(-1)});
  CHECK(r.ok);
  CHECK(r.value.i == 2);
  h.publish();
  CHECK(h.query("count", {}).value.i == 4);  // a 3, b 3, either, a -1: c's adjustment undone
  CHECK(h.query("level", {Value::of_text("a")}).value.i == 2);
  CHECK(!h.query("level", {Value::of_text("c")}).ok);
}
