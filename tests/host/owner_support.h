// tests/host/owner_support.h — a small Pure module for the owner tests (host::Owner over
// open_durable): compiled once per test, events submitted by name with a blocking helper, the
// state dumped canonically and compared with a replay of events in sequence order on a fresh
// store. Depends on frontend/, ir/, vm/, host/owner.h and host_test_support.h (dumps).
#pragma once
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "host/owner.h"
#include "host_test_support.h"
#include "ir/ir.h"
#include "tests/support/compile_module.h"
#include "vm/vm.h"

namespace owner_test {

using namespace pure;
using namespace pure::host;
using vm::Value;

// accounts by id; a history row per committed event; `need` fails (changing nothing) when the
// account is absent.
inline const char* const kAccounts = R"(list accounts by id: int { balance: int, note: text }
list history seq { id: int, note: text }
event put(id: int, balance: int, note: text) {
  accounts[id] = { balance: balance, note: note }
  history.push({ id: id, note: "put {note}" })
}
event drop(id: int) {
  let removed = accounts.remove(id)
  history.push({ id: id, note: "removed {removed}" })
}
event need(id: int) {
  if not accounts.has(id) { fail "key {id} is absent" }
  history.push({ id: id, note: "present" })
}
query events() -> int { return history.count() }
)";

inline std::unique_ptr<vm::Program> compile(const std::string& text, const char* path = "m.pure") {
  return test::compile_module(text, path);
}

inline uint32_t fn(const vm::Program& p, const char* name) {
  int i = vm::find_function(p, name);
  REQUIRE(i >= 0);
  return static_cast<uint32_t>(i);
}

struct Call {
  uint32_t fn = 0;
  std::vector<Value> args;
};

// The i-th event of the workloads (i from 1): puts with texts of many lengths, some drops.
inline Call workload_call(const vm::Program& p, uint64_t i) {
  int64_t key = static_cast<int64_t>((i * 7) % 13);
  if (i % 5 == 4) return {fn(p, "drop"), {Value::of_int(key)}};
  return {fn(p, "put"),
          {Value::of_int(key), Value::of_int(static_cast<int64_t>(i * 1000) + key),
           Value::of_text(std::string(i % 11, static_cast<char>('a' + i % 26)))}};
}

// Submits and waits for the reply.
inline EventReply call(Owner& owner, Call c) {
  auto promise = std::make_shared<std::promise<EventReply>>();
  std::future<EventReply> f = promise->get_future();
  owner.submit(c.fn, std::move(c.args), [promise](EventReply r) { promise->set_value(std::move(r)); });
  REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  return f.get();
}

// The state after running calls in order on a fresh store (failed ones change nothing).
inline std::string replay(const vm::Program& p, const std::vector<Call>& calls) {
  auto store = rt::make_store(p.stored);
  for (const Call& c : calls) vm::call_event(p, *store, c.fn, c.args);
  return host_test::dump(*store);
}

inline std::string reference(const vm::Program& p, uint64_t n) {
  std::vector<Call> calls;
  for (uint64_t i = 1; i <= n; ++i) calls.push_back(workload_call(p, i));
  return replay(p, calls);
}

// An Owner over open_durable on dir; fails the test when the directory does not open.
struct Opened {
  std::unique_ptr<Owner> owner;
  DurableLog* log = nullptr;  // owned by owner
};

inline Status open_owner(FileSystem& fs, const std::string& dir, const vm::Program& p, DurableOptions options,
                         Opened* out, OwnerOptions owner_options = {}) {
  std::unique_ptr<rt::Store> store;
  std::unique_ptr<DurableLog> log;
  if (Status s = open_durable(fs, dir, p, std::move(options), &store, &log); !s.ok()) return s;
  out->log = log.get();
  out->owner = std::make_unique<Owner>("m", p, std::move(store), std::move(log), owner_options);
  return {};
}

inline DurableOptions manual_checkpoints(LogOptions log = {}) {
  DurableOptions o;
  o.log = log;
  o.checkpoint_log_bytes = 0;
  o.checkpoint_seconds = 0;
  return o;
}

}  // namespace owner_test
