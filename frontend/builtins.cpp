// frontend/builtins.cpp — names of the builtin functions and methods.
#include "frontend/builtins.h"

namespace pure {

const char* builtin_name(Builtin b) {
  static const char* const names[] = {
#define X(id, name) name,
      PURE_BUILTIN_FUNCTIONS(X) PURE_TEXT_METHODS(X) PURE_LIST_METHODS(X)
#undef X
  };
  if (b == Builtin::Quote) return "quote";
  int i = static_cast<int>(b);
  return i >= 0 && i < static_cast<int>(Builtin::Count) ? names[i] : "?";
}

}  // namespace pure
