// frontend/frontend.cpp — runs the parser and the checker in order.
#include "frontend/frontend.h"

#include "frontend/checker.h"
#include "frontend/parser.h"

namespace pure {

CheckedModule compile_frontend(const Source& source, Diagnostics& diags) {
  CheckedModule result;
  result.module = parse_module(source, diags);
  check_module(result.module, *result.types, diags);
  return result;
}

}  // namespace pure
