// base/status.h — Status, the outcome of an operation that can fail with a message: ok(), or the
// error that says what failed and where. Used wherever a function would otherwise return a
// string that means success when empty (ir::verify_function, vm::check_args), and by host/
// (host::Status is this type). In pure::base, so that code using both namespaces pure and
// pure::host finds one Status.
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
