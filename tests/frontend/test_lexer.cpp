// tests/frontend/test_lexer.cpp — the lexer: tokens, numbers, text literals, newlines, bad bytes.
// Depends on frontend/lexer.h through frontend_support.h.
#include <doctest/doctest.h>

#include "tests/frontend/frontend_support.h"

using namespace pure;
using pure::test::Lexed;

TEST_CASE("lexer: keywords, identifiers and punctuation") {
  Lexed l("fn main_2 ( ) -> { } [ ] , : ; . .. + - * / % = == != < <= > >= += -= *= /= %= and or not");
  std::vector<Tok> want = {Tok::KwFn, Tok::Ident, Tok::LParen, Tok::RParen, Tok::Arrow, Tok::LBrace,
                           Tok::RBrace, Tok::LBracket, Tok::RBracket, Tok::Comma, Tok::Colon, Tok::Semicolon,
                           Tok::Dot, Tok::DotDot, Tok::Plus, Tok::Minus, Tok::Star, Tok::Slash, Tok::Percent,
                           Tok::Eq, Tok::EqEq, Tok::NotEq, Tok::Lt, Tok::LtEq, Tok::Gt, Tok::GtEq, Tok::PlusEq,
                           Tok::MinusEq, Tok::StarEq, Tok::SlashEq, Tok::PercentEq, Tok::KwAnd, Tok::KwOr,
                           Tok::KwNot, Tok::End};
  CHECK(l.kinds() == want);
  CHECK(l.tokens[1].text == "main_2");
  CHECK_FALSE(l.diags->any());
}

TEST_CASE("lexer: every keyword is a keyword, and a longer word is a name") {
  for (const char* w : {"fn", "event", "query", "type", "list", "seq", "by", "let", "var", "if", "else", "while",
                        "for", "in", "return", "break", "continue", "fail", "true", "false", "const"}) {
    Lexed l(w);
    CHECK_MESSAGE(l.tokens[0].kind != Tok::Ident, w);
    Lexed longer(std::string(w) + "x");
    CHECK_MESSAGE(longer.tokens[0].kind == Tok::Ident, w);
  }
}

TEST_CASE("lexer: locations are 1-based line and byte column, newlines are recorded") {
  Lexed l("let a\n  b = 1 // comment\n\tc");
  REQUIRE(l.tokens.size() == 7);
  CHECK(l.tokens[0].loc.line == 1);
  CHECK(l.tokens[0].loc.col == 1);
  CHECK(l.tokens[1].loc.col == 5);
  CHECK(l.tokens[2].loc.line == 2);
  CHECK(l.tokens[2].loc.col == 3);
  CHECK(l.tokens[2].newline_before);
  CHECK_FALSE(l.tokens[3].newline_before);
  CHECK(l.tokens[5].text == "c");
  CHECK(l.tokens[5].loc.line == 3);
  CHECK(l.tokens[5].loc.col == 2);
  CHECK(l.tokens[5].loc.offset == 26);
}

TEST_CASE("lexer: integers with underscores and hex") {
  Lexed l("0 42 1_000_000 0xFF 0x_dead_BEEF 9223372036854775807 9223372036854775808");
  REQUIRE(l.tokens.size() == 8);
  CHECK_FALSE(l.diags->any());
  int64_t want[] = {0, 42, 1000000, 255, 0xdeadbeef, INT64_MAX};
  for (int i = 0; i < 6; ++i) {
    CHECK(l.tokens[i].kind == Tok::Int);
    CHECK(l.tokens[i].int_value == want[i]);
  }
  // 2^63 lexes (so that -9223372036854775808 can be written); the checker range-checks it.
  CHECK(l.tokens[6].kind == Tok::Int);
  CHECK(static_cast<uint64_t>(l.tokens[6].int_value) == uint64_t{1} << 63);
}

TEST_CASE("lexer: nums with fractions and exponents") {
  Lexed l("1.5 0.25 1e3 2E-2 6.02e+23 1_0.5e1");
  REQUIRE(l.tokens.size() == 7);
  double want[] = {1.5, 0.25, 1000.0, 0.02, 6.02e23, 105.0};
  for (int i = 0; i < 6; ++i) {
    CHECK(l.tokens[i].kind == Tok::Num);
    CHECK(l.tokens[i].num_value == want[i]);
  }
  CHECK_FALSE(l.diags->any());
}

TEST_CASE("lexer: a range is not a fraction; a method call on an int is not a fraction") {
  Lexed l("0..10 1.x");
  std::vector<Tok> want = {Tok::Int, Tok::DotDot, Tok::Int, Tok::Int, Tok::Dot, Tok::Ident, Tok::End};
  CHECK(l.kinds() == want);
}

TEST_CASE("lexer: malformed and out-of-range numbers are errors with a location") {
  struct Case { const char* text; const char* message; };
  Case cases[] = {
      {"12abc", "malformed number '12abc'"},
      {"0x", "'0x' needs hexadecimal digits"},
      {"0xFFFFFFFFFFFFFFFFF", "does not fit in 64 bits"},
      {"0x8000000000000000", "does not fit in 64 bits"},
      {"99999999999999999999", "does not fit in 64 bits"},
      {"1e999", "out of range"},
      {"0xG1", "malformed number"},
  };
  for (const Case& c : cases) {
    Lexed l(std::string("  ") + c.text);
    CAPTURE(c.text);
    REQUIRE(l.diags->count() == 1);
    CHECK(l.list()[0].message.find(c.message) != std::string::npos);
    CHECK(l.list()[0].loc.line == 1);
    CHECK(l.list()[0].loc.col == 3);
    CHECK(l.tokens[0].kind == Tok::Error);
    CHECK(l.tokens.back().kind == Tok::End);
  }
}

TEST_CASE("lexer: text literals keep their raw body; braces inside interpolation are tracked") {
  Lexed l(R"(let s = "a\"b {f("x")} c")");
  REQUIRE(l.tokens.size() == 5);
  CHECK(l.tokens[3].kind == Tok::Str);
  CHECK(l.tokens[3].text == R"(a\"b {f("x")} c)");
  CHECK_FALSE(l.diags->any());
}

TEST_CASE("lexer: an unclosed text literal is one located error and lexing goes on") {
  Lexed l("let s = \"abc\nlet t = 1");
  REQUIRE(l.diags->count() == 1);
  CHECK(l.list()[0].message.find("not closed") != std::string::npos);
  CHECK(l.list()[0].loc.line == 1);
  CHECK(l.list()[0].loc.col == 9);
  CHECK(l.tokens.back().kind == Tok::End);
  // the next line is lexed normally
  bool saw_t = false;
  for (const Token& t : l.tokens) saw_t |= t.kind == Tok::Ident && t.text == "t";
  CHECK(saw_t);
}

TEST_CASE("lexer: an open '{' in a text ends the literal at the line's last quote, never past the line") {
  // issue 13: "set {x" used to run on past the end of the line and swallow the rest of the file
  Lexed l("print(\"set {x\")\nlet y = \"z\"");
  CHECK_FALSE(l.diags->any());  // the parser reports the open '{'; the literal itself is closed
  REQUIRE(l.tokens.size() == 9);
  CHECK(l.tokens[2].kind == Tok::Str);
  CHECK(l.tokens[2].text == "set {x");
  CHECK(l.tokens[3].kind == Tok::RParen);
  CHECK(l.tokens[4].kind == Tok::KwLet);
  CHECK(l.tokens[4].newline_before);
  CHECK(l.tokens[7].text == "z");
  // without any closing quote on the line the error stops at the line's end
  Lexed open("let s = \"a {f(\nlet t = \"b\"");
  REQUIRE(open.diags->count() == 1);
  CHECK(open.list()[0].loc.line == 1);
  CHECK(open.tokens[4].kind == Tok::KwLet);
  // a backslash at the end of a line does not carry the literal onto the next one
  Lexed slash("let s = \"abc\\\nlet t = \"b\"");
  REQUIRE(slash.diags->count() == 1);
  CHECK(slash.tokens[4].kind == Tok::KwLet);
  CHECK(slash.tokens[7].text == "b");
}

TEST_CASE("lexer: the end of the input is located after the last visible character") {
  Lexed l("fn main() {\n  print(1)\n\n  \n");
  REQUIRE(l.tokens.back().kind == Tok::End);
  CHECK(l.tokens.back().loc.line == 2);
  CHECK(l.tokens.back().loc.col == 11);
  Lexed empty("\n\n");
  CHECK(empty.tokens.back().loc.line == 1);
  CHECK(empty.tokens.back().loc.col == 1);
}

TEST_CASE("lexer: a text literal ending in a backslash at the end of input") {
  Lexed l("\"abc\\");
  CHECK(l.diags->count() == 1);
  CHECK(l.tokens.back().kind == Tok::End);
}

TEST_CASE("lexer: bad characters and bytes are reported once each, with hints for C habits") {
  Lexed bang("if !x {}");
  REQUIRE(bang.diags->count() == 1);
  CHECK(bang.list()[0].message.find("write 'not'") != std::string::npos);

  Lexed amp("a && b || c");
  CHECK(amp.diags->count() == 2);
  CHECK(amp.list()[0].message == "unexpected '&&'; write 'and'");
  CHECK(amp.list()[1].message == "unexpected '||'; write 'or'");

  Lexed bytes(std::string("a \x01 \xff b \xe2\x82\xac c"));
  CHECK(bytes.diags->count() == 3);
  CHECK(bytes.list()[0].message.find("0x01") != std::string::npos);
  CHECK(bytes.list()[1].message.find("0xFF") != std::string::npos);
  CHECK(bytes.list()[2].loc.col == 9);  // the euro sign is one error, not three

  Lexed nul(std::string("a\0b", 3));
  CHECK(nul.diags->count() == 1);
  CHECK(nul.tokens.back().kind == Tok::End);
}

TEST_CASE("lexer: empty input and comments only") {
  CHECK(Lexed("").kinds() == std::vector<Tok>{Tok::End});
  CHECK(Lexed("// only a comment").kinds() == std::vector<Tok>{Tok::End});
  CHECK(Lexed("\n\n  \t\r\n").kinds() == std::vector<Tok>{Tok::End});
}

TEST_CASE("lexer: lexing a sub-range gives positions in the whole source") {
  Source src("t.pure", "abc + def");
  Diagnostics diags(src);
  std::vector<Token> tokens = lex(src, diags, 6, 9);
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0].text == "def");
  CHECK(tokens[0].loc.offset == 6);
  CHECK(tokens[0].loc.col == 7);
}

TEST_CASE("lexer: bitwise operators, and shifts before comparisons") {
  Lexed l("a & b | c ^ ~d << 2 >> 1 < <= > >= <<= >>=");
  std::vector<Tok> want = {Tok::Ident, Tok::Amp,   Tok::Ident, Tok::Pipe, Tok::Ident, Tok::Caret, Tok::Tilde,
                           Tok::Ident, Tok::Shl,   Tok::Int,   Tok::Shr,  Tok::Int,   Tok::Lt,    Tok::LtEq,
                           Tok::Gt,    Tok::GtEq,  Tok::Shl,   Tok::Eq,   Tok::Shr,   Tok::Eq,    Tok::End};
  CHECK(l.kinds() == want);
  CHECK_FALSE(l.diags->any());
}
