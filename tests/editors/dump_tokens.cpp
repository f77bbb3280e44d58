// tests/editors/dump_tokens.cpp — the oracle for the editor grammar's test: prints the tokens the
// real lexer (frontend/lexer.cpp) sees in a Pure file, and those inside each text literal's
// {expression} parts, which the parser lexes again over their range (frontend/parser.cpp,
// text_literal). tests/editors/check_grammar.mjs compares them with the TextMate grammar's tokens.
//
// Usage: pure_dump_tokens FILE
// One line a token: DEPTH KIND BEGIN END, byte offsets in the file, END exclusive. DEPTH is 0 for
// the module's own tokens and n for a token inside n nested interpolations. KIND is `kw:TEXT` for
// a keyword, `op:TEXT` for an operator or punctuation, `ident`, `int`, `num`, `text` (a whole
// literal, quotes included), `interp{` and `interp}` for an interpolation's braces, `error` (a bad
// byte, C's `&&`, an unclosed literal).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/lexer.h"

namespace {

void emit(int depth, const std::string& kind, uint32_t begin, uint32_t end) {
  std::printf("%d %s %u %u\n", depth, kind.c_str(), begin, end);
}

void dump_range(const pure::Source& src, pure::Diagnostics& diags, uint32_t begin, uint32_t end, int depth);

// The {expression} parts of one text literal, found as the parser finds them (parser.cpp,
// text_literal): an escape is skipped; inside {...} braces nest and a nested literal's quotes hide
// braces.
void dump_interpolations(const pure::Source& src, pure::Diagnostics& diags, uint32_t body, const std::string& raw,
                         int depth) {
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\') {
      // as the parser's escape(): `\u{` with 1 to 6 characters and a '}' is skipped whole (an
      // error if they are not hex digits); any other escape, `\u` included, is two bytes
      size_t close = raw.find('}', i);
      if (i + 2 < raw.size() && raw[i + 1] == 'u' && raw[i + 2] == '{' && close != std::string::npos &&
          close - i - 3 <= 6 && close != i + 3) {
        i = close;
      } else {
        ++i;
      }
      continue;
    }
    if (raw[i] != '{') continue;
    size_t j = i + 1;
    int nesting = 1;
    bool in_text = false;
    for (; j < raw.size(); ++j) {
      if (raw[j] == '\\') { ++j; continue; }
      if (raw[j] == '"') in_text = !in_text;
      if (in_text) continue;
      if (raw[j] == '{') ++nesting;
      if (raw[j] == '}' && --nesting == 0) break;
    }
    if (j >= raw.size()) return;  // not closed: the parser reports it and reads no expression
    uint32_t open = body + static_cast<uint32_t>(i), close = body + static_cast<uint32_t>(j);
    emit(depth + 1, "interp{", open, open + 1);
    dump_range(src, diags, open + 1, close, depth + 1);
    emit(depth + 1, "interp}", close, close + 1);
    i = j;
  }
}

// Where the lexer went on after skipping white space and comments from p, as it does between tokens.
uint32_t skip_space_and_comments(const std::string& text, uint32_t p, uint32_t end) {
  while (p < end) {
    if (text[p] == ' ' || text[p] == '\t' || text[p] == '\r' || text[p] == '\n') {
      ++p;
    } else if (text[p] == '/' && p + 1 < end && text[p + 1] == '/') {
      while (p < end && text[p] != '\n') ++p;
    } else {
      break;
    }
  }
  return p;
}

void dump_range(const pure::Source& src, pure::Diagnostics& diags, uint32_t begin, uint32_t end, int depth) {
  std::vector<pure::Token> tokens = pure::lex(src, diags, begin, end);
  for (size_t k = 0; k < tokens.size(); ++k) {
    const pure::Token& t = tokens[k];
    uint32_t at = t.loc.offset;
    switch (t.kind) {
      case pure::Tok::End: return;
      case pure::Tok::Error: {
        // An error token keeps no length. A text not closed on its line runs to the line's end;
        // any other ends at the first place from which white space and comments lead to the next
        // token (it holds neither).
        uint32_t next = k + 1 < tokens.size() && tokens[k + 1].kind != pure::Tok::End ? tokens[k + 1].loc.offset : end;
        uint32_t stop = at + 1;
        if (src.text()[at] == '"') {
          while (stop < end && src.text()[stop] != '\n') ++stop;
        } else {
          while (stop < next && skip_space_and_comments(src.text(), stop, end) < next) ++stop;
        }
        emit(depth, "error", at, stop);
        break;
      }
      case pure::Tok::Ident: emit(depth, "ident", at, at + static_cast<uint32_t>(t.text.size())); break;
      case pure::Tok::Int: emit(depth, "int", at, at + static_cast<uint32_t>(t.text.size())); break;
      case pure::Tok::Num: emit(depth, "num", at, at + static_cast<uint32_t>(t.text.size())); break;
      case pure::Tok::Str:
        emit(depth, "text", at, at + static_cast<uint32_t>(t.text.size()) + 2);
        dump_interpolations(src, diags, at + 1, t.text, depth);
        break;
      default: {
        // keywords and operators: tok_name is the token's text in quotes, "'fn'" or "'+='"
        std::string name = pure::tok_name(t.kind);
        std::string text = name.substr(1, name.size() - 2);
        bool keyword = text[0] >= 'a' && text[0] <= 'z';
        emit(depth, (keyword ? "kw:" : "op:") + text, at, at + static_cast<uint32_t>(text.size()));
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pure_dump_tokens FILE\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "pure_dump_tokens: cannot read %s: %s\n", argv[1], std::strerror(errno));
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  pure::Source src(argv[1], text.str());
  pure::Diagnostics diags(src);
  dump_range(src, diags, 0, static_cast<uint32_t>(src.text().size()), 0);
  return 0;
}
