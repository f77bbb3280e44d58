// tests/support/bank_module.h — the bank module that the hosting tests (tests/vm/test_invoke) and
// the durability tests (tests/host/test_vm_runner) run events against: accounts by id and a log,
// the events open and transfer. Each test adds its own types (after the two lists, before the
// events) and its own functions (after the events). Header only, needs nothing but the standard
// library: a vm test that includes it does not depend on host/.
#pragma once

#include <string>
#include <string_view>

namespace pure::test {

// The module text: the two lists, `types`, open and transfer, then `functions`. A runtime error
// in transfer's last line (a missing `to` account) is at line 13 plus the lines of `types`.
inline std::string bank_module(std::string_view types, std::string_view functions) {
  std::string text = R"(list accounts by id: int { owner: text, balance: int }
list log seq { line: text }
)";
  text += types;
  text += R"(event open(id: int, owner: text, amount: int) {
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
)";
  text += functions;
  return text;
}

}  // namespace pure::test
