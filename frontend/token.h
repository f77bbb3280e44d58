// frontend/token.h — the tokens of Pure source text.
// Depends on frontend/source.h only.
#pragma once
#include <cstdint>
#include <string>

#include "frontend/source.h"

namespace pure {

#define PURE_KEYWORDS(X)                                                                     \
  X(Fn, "fn") X(Event, "event") X(Query, "query") X(Type, "type") X(List, "list")            \
  X(Seq, "seq") X(By, "by") X(Let, "let") X(Var, "var") X(If, "if") X(Else, "else")          \
  X(While, "while") X(For, "for") X(In, "in") X(Return, "return") X(Break, "break")          \
  X(Continue, "continue") X(Fail, "fail") X(And, "and") X(Or, "or") X(Not, "not")            \
  X(True, "true") X(False, "false") X(Const, "const")

enum class Tok : uint8_t {
  End, Error, Ident, Int, Num, Str,
#define X(name, text) Kw##name,
  PURE_KEYWORDS(X)
#undef X
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Comma, Colon, Semicolon, Dot, DotDot, Arrow,
  Plus, Minus, Star, Slash, Percent, Eq, EqEq, NotEq, Lt, LtEq, Gt, GtEq,
  PlusEq, MinusEq, StarEq, SlashEq, PercentEq,
  Amp, Pipe, Caret, Tilde, Shl, Shr,  // bitwise operators on int
};

const char* tok_name(Tok t);  // for messages: "'{'", "identifier", "end of file"

struct Token {
  Tok kind = Tok::End;
  Loc loc;
  std::string text;   // identifier name, string body (raw, between quotes), or error message
  int64_t int_value = 0;
  double num_value = 0;
  bool newline_before = false;  // a line break separates it from the previous token
  uint32_t end = 0;             // offset just past its last byte (the formatter copies tokens verbatim)
};

}  // namespace pure
