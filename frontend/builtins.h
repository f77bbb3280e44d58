// frontend/builtins.h — the standard functions and methods the checker knows, by id.
// The VM implements each id (vm/builtins.cpp); this table is the one list both sides share.
// Depends on nothing.
#pragma once

namespace pure {

// X(id, name): free functions callable as name(...)
#define PURE_BUILTIN_FUNCTIONS(X)                                                                  \
  X(Print, "print") X(Write, "write") X(Input, "input") X(ToNum, "num") X(ToInt, "int")           \
  X(ToText, "text") X(Sqrt, "sqrt") X(Abs, "abs") X(Min, "min") X(Max, "max") X(Floor, "floor")   \
  X(Ceil, "ceil") X(Round, "round") X(Trunc, "trunc") X(Pow, "pow") X(Exp, "exp") X(Log, "log")   \
  X(Log2, "log2") X(Log10, "log10") X(Sin, "sin") X(Cos, "cos") X(Tan, "tan") X(Asin, "asin")     \
  X(Acos, "acos") X(Atan, "atan") X(Atan2, "atan2") X(Hypot, "hypot") X(Cbrt, "cbrt")             \
  X(IsNan, "is_nan") X(Repeat, "repeat") X(Join, "join") X(ParseInt, "parse_int")                 \
  X(ParseNum, "parse_num") X(Fixed, "fixed") X(RandNext, "rand_next") X(RandInt, "rand_int")      \
  X(RandNum, "rand_num") X(Char, "char") X(Zpad, "zpad")

// X(id, name): methods on text values
#define PURE_TEXT_METHODS(X)                                                                       \
  X(TLen, "len") X(TByteLen, "byte_len") X(TSlice, "slice") X(TFind, "find")                      \
  X(TContains, "contains") X(TStartsWith, "starts_with") X(TEndsWith, "ends_with")                \
  X(TSplit, "split") X(TWords, "words") X(TLines, "lines") X(TReplace, "replace")                 \
  X(TUpper, "upper") X(TLower, "lower") X(TTrim, "trim") X(TRepeat, "repeat")                     \
  X(TPadLeft, "pad_left") X(TPadRight, "pad_right") X(TCode, "code") X(TAt, "at")                 \
  X(TReverse, "reverse")

// X(id, name): methods on lists (some only on sequences or only on keyed lists)
#define PURE_LIST_METHODS(X)                                                                       \
  X(LCount, "count") X(LPush, "push") X(LPop, "pop") X(LHas, "has") X(LRemove, "remove")          \
  X(LFirst, "first") X(LLast, "last") X(LRange, "range") X(LSort, "sort") X(LSortBy, "sort_by")   \
  X(LSum, "sum") X(LMin, "min") X(LMax, "max") X(LClear, "clear") X(LReverse, "reverse")          \
  X(LContains, "contains") X(LJoin, "join") X(LGet, "get")

enum class Builtin : int {
#define X(id, name) id,
  PURE_BUILTIN_FUNCTIONS(X) PURE_TEXT_METHODS(X) PURE_LIST_METHODS(X)
#undef X
  Count,
  // Not callable from source (no name to look up): the lowering uses it to print a text field of
  // an item as a quoted, escaped literal.
  Quote
};

const char* builtin_name(Builtin b);

}  // namespace pure
