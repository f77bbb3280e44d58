// frontend/builtins.h — the standard functions and methods, by id: the table frontend/builtins.def
// (name, kind, signature, step cost) turned into the Builtin ids, their names and BuiltinInfo.
// The checker reads the signatures, the VM implements each id (vm/builtins.cpp) and spends the
// steps the WORK column names. Depends on nothing.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pure {

enum class Builtin : int {
#define PURE_BUILTIN(id, name, kind, args, result, work) id,
#include "frontend/builtins.def"
#undef PURE_BUILTIN
  Count,
  // Not callable from source (no name to look up): the lowering uses it to print a text field of
  // an item as a quoted, escaped literal.
  Quote
};

// The KIND column: how a builtin is called.
enum class BuiltinKind : uint8_t { Function, TextMethod, ListMethod };
// The WORK column: the steps a builtin spends for its work (builtins.def).
enum class BuiltinWork : uint8_t { None, First, Second, Own };

struct BuiltinInfo {
  const char* name;
  BuiltinKind kind;
  const char* args;    // argument kinds, one letter each, or "*" (generic: the checker's rule is code)
  const char* result;  // the result's kind, or "*"
  BuiltinWork work;
  bool has_signature() const { return args[0] != '*' && result[0] != '*'; }
};

namespace builtin_table {
inline constexpr BuiltinKind function = BuiltinKind::Function, text = BuiltinKind::TextMethod,
                             list = BuiltinKind::ListMethod;
inline constexpr BuiltinWork none = BuiltinWork::None, first = BuiltinWork::First, second = BuiltinWork::Second,
                             own = BuiltinWork::Own;
inline constexpr BuiltinInfo kRows[] = {
#define PURE_BUILTIN(id, name, kind, args, result, work) {name, kind, args, result, work},
#include "frontend/builtins.def"
#undef PURE_BUILTIN
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == static_cast<size_t>(Builtin::Count));
inline constexpr BuiltinInfo kQuote{"quote", function, "*", "*", own};
}  // namespace builtin_table

// The row of b; Quote (not in the table) is a function that measures its own work.
constexpr const BuiltinInfo& builtin_info(Builtin b) {
  int i = static_cast<int>(b);
  return i >= 0 && i < static_cast<int>(Builtin::Count) ? builtin_table::kRows[i] : builtin_table::kQuote;
}

// The first row of a kind (the rows of each kind are together: builtins.cpp checks it), or Count.
constexpr Builtin first_builtin_of(BuiltinKind kind) {
  for (int i = 0; i < static_cast<int>(Builtin::Count); ++i)
    if (builtin_table::kRows[i].kind == kind) return static_cast<Builtin>(i);
  return Builtin::Count;
}

const char* builtin_name(Builtin b);

}  // namespace pure
