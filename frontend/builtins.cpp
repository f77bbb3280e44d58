// frontend/builtins.cpp — names of the builtin functions and methods (the table is builtins.def).
#include "frontend/builtins.h"

namespace pure {

// The kinds of each row are together, functions first, then text methods, then list methods
// (the checker looks a name up in its kind's range).
static constexpr bool kinds_in_order() {
  for (int i = 1; i < static_cast<int>(Builtin::Count); ++i)
    if (builtin_table::kRows[i].kind < builtin_table::kRows[i - 1].kind) return false;
  return true;
}
static_assert(kinds_in_order(), "frontend/builtins.def: rows of one kind must be together, in kind order");

const char* builtin_name(Builtin b) {
  if (b == Builtin::Quote) return "quote";
  int i = static_cast<int>(b);
  return i >= 0 && i < static_cast<int>(Builtin::Count) ? builtin_table::kRows[i].name : "?";
}

}  // namespace pure
