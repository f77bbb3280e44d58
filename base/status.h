// base/status.h — Status, the outcome of an operation that can fail with a message: ok(), or the
// error that says what failed and where. Used where a function would otherwise return a string
// that means success when empty (ir::verify_function, vm::check_args). In pure::base, so that code
// that uses both namespaces pure and pure::host does not find two Status types (host::Status is
// the same shape; making it this one is left to host/).
// Depends on nothing; every layer may include it.
#pragma once
#include <string>
#include <utility>

namespace pure::base {

struct [[nodiscard]] Status {
  std::string error;  // empty when ok
  bool ok() const { return error.empty(); }
  static Status success() { return Status{}; }
  static Status failure(std::string message) { return Status{std::move(message)}; }
};

}  // namespace pure::base
