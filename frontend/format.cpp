// frontend/format.cpp — the formatter: one canonical layout of a module's source (frontend.h,
// format_source; docs/tooling.md, "The formatter").
//
// It works on the tokens, never on the syntax tree, so that nothing is lost: every token is copied
// byte for byte, every line break between tokens stays where it is (a line break ends a statement
// in Pure, so moving one could change the program), and every comment is kept. What it decides:
// the indentation (two spaces per open bracket, one more level for a line that continues an
// expression), the spaces between the tokens of a line, two spaces before a comment that ends a
// line, at most one blank line in a row, none at the start or end, and one final newline.
// Before returning, the result is lexed again and compared token by token with the source, so a
// formatter bug can only be an error, never a changed program.
#include "frontend/frontend.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"

namespace pure {
namespace {

bool is_open(Tok k) { return k == Tok::LParen || k == Tok::LBracket || k == Tok::LBrace; }
bool is_close(Tok k) { return k == Tok::RParen || k == Tok::RBracket || k == Tok::RBrace; }

// Ends a value: a '-' after it subtracts, a '[' after it indexes.
bool ends_operand(Tok k) {
  return k == Tok::Ident || k == Tok::Int || k == Tok::Num || k == Tok::Str || k == Tok::KwTrue ||
         k == Tok::KwFalse || k == Tok::RParen || k == Tok::RBracket || k == Tok::RBrace;
}

// An operator that needs a right side: a line ending with one (or starting with one) continues an
// expression and is indented one level more.
bool continues(Tok k) {
  switch (k) {
    case Tok::Plus: case Tok::Minus: case Tok::Star: case Tok::Slash: case Tok::Percent: case Tok::Eq:
    case Tok::EqEq: case Tok::NotEq: case Tok::Lt: case Tok::LtEq: case Tok::Gt: case Tok::GtEq:
    case Tok::PlusEq: case Tok::MinusEq: case Tok::StarEq: case Tok::SlashEq: case Tok::PercentEq:
    case Tok::Amp: case Tok::Pipe: case Tok::Caret: case Tok::Shl: case Tok::Shr: case Tok::Arrow:
    case Tok::DotDot: case Tok::Dot: case Tok::KwAnd: case Tok::KwOr: return true;
    default: return false;
  }
}

// Whether one space separates two tokens on one line. `unary`: a is a prefix '-' or '~'.
bool space_between(Tok a, Tok b, bool unary) {
  if (b == Tok::Comma || b == Tok::Semicolon || b == Tok::Colon || b == Tok::Dot) return false;
  if (a == Tok::Dot || a == Tok::LParen || a == Tok::LBracket) return false;
  if (b == Tok::RParen || b == Tok::RBracket) return false;
  if (a == Tok::LBrace) return b != Tok::RBrace;  // `{}`, `{ x }`
  if (b == Tok::RBrace) return true;
  if (unary) return false;  // -x, ~x
  if (b == Tok::LParen) return a != Tok::Ident;  // f(x), but if (x)
  if (b == Tok::LBracket) return !(ends_operand(a) && a != Tok::RBrace);  // xs[0], but = [1, 2]
  return true;
}

class Formatter {
 public:
  Formatter(const std::string& text, const std::vector<Token>& toks) : text_(text), toks_(toks) {}

  std::string run() {
    uint32_t prev_end = 0;
    for (size_t i = 0; i < toks_.size(); ++i) {
      const Token& t = toks_[i];
      gap(prev_end, t.loc.offset);
      if (t.kind == Tok::End) break;
      if (newlines_ > 0 || !line_open_) start_line(i);
      else if (space_between(prev_kind_, t.kind, prev_unary_)) out_ += ' ';
      out_.append(text_, t.loc.offset, t.end - t.loc.offset);
      newlines_ = 0;
      bool unary = (t.kind == Tok::Minus || t.kind == Tok::Tilde) && (i == 0 || !ends_operand(toks_[i - 1].kind));
      if (is_open(t.kind)) open_.push_back({line_level_ + 1, line_level_});
      if (is_close(t.kind) && !open_.empty()) open_.pop_back();
      prev_kind_ = t.kind;
      prev_unary_ = unary;
      prev_end = t.end;
    }
    if (line_open_) out_ += '\n';
    return out_;
  }

 private:
  const std::string& text_;
  const std::vector<Token>& toks_;
  std::string out_;
  // The brackets open at this point: the level of their contents and of the line that opened
  // them. Brackets opened on one line (`add(Body {`) indent what follows by one level, not by one
  // each, and the line that closes them goes back to the opening line's level.
  struct Open {
    int content;
    int line;
  };
  std::vector<Open> open_;
  int line_level_ = 0;  // the indentation level of the current line
  int newlines_ = 0;        // line breaks since the last token or comment
  bool line_open_ = false;  // the output's last line has something on it
  Tok prev_kind_ = Tok::End;  // the last token written
  bool prev_unary_ = false;

  // The whitespace and comments between two tokens.
  void gap(uint32_t from, uint32_t to) {
    for (uint32_t p = from; p < to; ++p) {
      char c = text_[p];
      if (c == '\n') {
        ++newlines_;
      } else if (c == '/' && p + 1 < to && text_[p + 1] == '/') {
        uint32_t e = p;
        while (e < to && text_[e] != '\n') ++e;
        uint32_t last = e;
        while (last > p && (text_[last - 1] == ' ' || text_[last - 1] == '\t' || text_[last - 1] == '\r')) --last;
        if (newlines_ == 0 && line_open_) {
          out_ += "  ";  // a comment after code on its line
        } else {
          new_line();
          out_.append(2 * static_cast<size_t>(content_level()), ' ');
        }
        out_.append(text_, p, last - p);
        line_open_ = true;
        newlines_ = 0;
        p = e - 1;
      }
    }
  }

  int content_level() const { return open_.empty() ? 0 : open_.back().content; }

  void new_line() {
    if (line_open_) out_ += '\n';
    if (newlines_ >= 2 && !out_.empty()) out_ += '\n';  // one blank line for any number
    line_open_ = false;
  }

  // A line of code starting with token i.
  void start_line(size_t i) {
    Tok first = toks_[i].kind;
    bool continuation = line_open_ && prev_kind_ != Tok::End &&
                        (continues(prev_kind_) || (continues(first) && first != Tok::Minus));
    new_line();
    size_t closers = 0;  // `})` at the start of a line: both close before it
    for (size_t k = i; k < toks_.size() && is_close(toks_[k].kind) && (k == i || !toks_[k].newline_before); ++k) ++closers;
    if (closers > open_.size()) closers = open_.size();
    if (closers > 0) line_level_ = open_[open_.size() - closers].line;
    else line_level_ = content_level() + (continuation ? 1 : 0);
    out_.append(2 * static_cast<size_t>(line_level_), ' ');
    line_open_ = true;
  }
};

}  // namespace

bool format_source(const Source& source, Diagnostics& diags, std::string* out) {
  Module unused = parse_module(source, diags);  // a file with a syntax error is left as it is
  (void)unused;
  if (diags.any()) return false;
  std::vector<Token> before = lex(source, diags);
  std::string formatted = Formatter(source.text(), before).run();
  // The same tokens, with the same line breaks between them, or no result at all.
  Source again(source.path(), formatted);
  Diagnostics again_diags(again);
  std::vector<Token> after = lex(again, again_diags);
  bool same = !again_diags.any() && after.size() == before.size();
  for (size_t i = 0; same && i < before.size(); ++i) {
    const Token& a = before[i];
    const Token& b = after[i];
    // The end of the file may gain the final line break a file without one lacked: it ends no
    // statement that the end of the file did not end already.
    same = a.kind == b.kind && (a.newline_before == b.newline_before || a.kind == Tok::End) &&
           source.text().compare(a.loc.offset, a.end - a.loc.offset, formatted, b.loc.offset, b.end - b.loc.offset) == 0;
  }
  if (!same) {
    diags.error(source.loc_at(0), "the formatter would change this module's tokens (a bug in the formatter)",
                "the file is left as it is; please report it");
    return false;
  }
  *out = std::move(formatted);
  return true;
}

}  // namespace pure
