// frontend/lexer.cpp — the lexer: identifiers, keywords, numbers, strings, operators, comments.
#include "frontend/lexer.h"

#include <charconv>
#include <cstring>
#include <unordered_map>

namespace pure {

const char* tok_name(Tok t) {
  switch (t) {
    case Tok::End: return "end of file";
    case Tok::Error: return "invalid token";
    case Tok::Ident: return "a name";
    case Tok::Int: return "an integer";
    case Tok::Num: return "a number";
    case Tok::Str: return "a text literal";
#define X(name, text) \
  case Tok::Kw##name: return "'" text "'";
      PURE_KEYWORDS(X)
#undef X
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Semicolon: return "';'";
    case Tok::Dot: return "'.'";
    case Tok::DotDot: return "'..'";
    case Tok::Arrow: return "'->'";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Star: return "'*'";
    case Tok::Slash: return "'/'";
    case Tok::Percent: return "'%'";
    case Tok::Eq: return "'='";
    case Tok::EqEq: return "'=='";
    case Tok::NotEq: return "'!='";
    case Tok::Lt: return "'<'";
    case Tok::LtEq: return "'<='";
    case Tok::Gt: return "'>'";
    case Tok::GtEq: return "'>='";
    case Tok::PlusEq: return "'+='";
    case Tok::MinusEq: return "'-='";
    case Tok::StarEq: return "'*='";
    case Tok::SlashEq: return "'/='";
    case Tok::PercentEq: return "'%='";
    case Tok::Amp: return "'&'";
    case Tok::Pipe: return "'|'";
    case Tok::Caret: return "'^'";
    case Tok::Tilde: return "'~'";
    case Tok::Shl: return "'<<'";
    case Tok::Shr: return "'>>'";
  }
  return "?";
}

namespace {

const std::unordered_map<std::string, Tok>& keywords() {
  static const std::unordered_map<std::string, Tok> table = {
#define X(name, text) {text, Tok::Kw##name},
      PURE_KEYWORDS(X)
#undef X
  };
  return table;
}

bool is_ident_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(unsigned char c) { return is_ident_start(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(const Source& src, Diagnostics& diags, uint32_t begin, uint32_t end)
      : src_(src), text_(src.text()), diags_(diags), begin_(begin), pos_(begin), end_(end) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    bool newline = true;
    while (true) {
      newline = skip_space_and_comments() || newline;
      Token t = next();
      t.end = t.kind == Tok::End ? t.loc.offset : pos_;
      t.newline_before = newline;
      newline = false;
      out.push_back(std::move(t));
      if (out.back().kind == Tok::End) break;
    }
    return out;
  }

 private:
  const Source& src_;
  const std::string& text_;
  Diagnostics& diags_;
  uint32_t begin_;
  uint32_t pos_;
  uint32_t end_;

  char peek(uint32_t ahead = 0) const { return pos_ + ahead < end_ ? text_[pos_ + ahead] : '\0'; }
  Loc here() const { return src_.loc_at(pos_); }

  // The end of the input is placed just after its last visible character, so that "found end of
  // file" points into the last line that has something on it, never past the file's last line.
  Loc end_loc() const {
    uint32_t p = end_;
    while (p > begin_ && (text_[p - 1] == ' ' || text_[p - 1] == '\t' || text_[p - 1] == '\r' || text_[p - 1] == '\n')) --p;
    return src_.loc_at(p);
  }

  bool skip_space_and_comments() {
    bool newline = false;
    while (pos_ < end_) {
      char c = text_[pos_];
      if (c == '\n') {
        newline = true;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
    return newline;
  }

  Token make(Tok kind, Loc loc, uint32_t length) {
    pos_ += length;
    Token t;
    t.kind = kind;
    t.loc = loc;
    return t;
  }

  Token error(Loc loc, std::string message) {
    diags_.error(loc, message);
    Token t;
    t.kind = Tok::Error;
    t.loc = loc;
    t.text = std::move(message);
    return t;
  }

  Token next() {
    Loc loc = here();
    if (pos_ >= end_) return make(Tok::End, end_loc(), 0);
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (is_ident_start(c)) return identifier(loc);
    if (is_digit(c)) return number(loc);
    if (c == '"') return string(loc);
    switch (c) {
      case '(': return make(Tok::LParen, loc, 1);
      case ')': return make(Tok::RParen, loc, 1);
      case '{': return make(Tok::LBrace, loc, 1);
      case '}': return make(Tok::RBrace, loc, 1);
      case '[': return make(Tok::LBracket, loc, 1);
      case ']': return make(Tok::RBracket, loc, 1);
      case ',': return make(Tok::Comma, loc, 1);
      case ':': return make(Tok::Colon, loc, 1);
      case ';': return make(Tok::Semicolon, loc, 1);
      case '.': return peek(1) == '.' ? make(Tok::DotDot, loc, 2) : make(Tok::Dot, loc, 1);
      case '+': return peek(1) == '=' ? make(Tok::PlusEq, loc, 2) : make(Tok::Plus, loc, 1);
      case '-':
        if (peek(1) == '>') return make(Tok::Arrow, loc, 2);
        return peek(1) == '=' ? make(Tok::MinusEq, loc, 2) : make(Tok::Minus, loc, 1);
      case '*': return peek(1) == '=' ? make(Tok::StarEq, loc, 2) : make(Tok::Star, loc, 1);
      case '/': return peek(1) == '=' ? make(Tok::SlashEq, loc, 2) : make(Tok::Slash, loc, 1);
      case '%': return peek(1) == '=' ? make(Tok::PercentEq, loc, 2) : make(Tok::Percent, loc, 1);
      case '=': return peek(1) == '=' ? make(Tok::EqEq, loc, 2) : make(Tok::Eq, loc, 1);
      case '<':
        if (peek(1) == '<') return make(Tok::Shl, loc, 2);
        return peek(1) == '=' ? make(Tok::LtEq, loc, 2) : make(Tok::Lt, loc, 1);
      case '>':
        if (peek(1) == '>') return make(Tok::Shr, loc, 2);
        return peek(1) == '=' ? make(Tok::GtEq, loc, 2) : make(Tok::Gt, loc, 1);
      case '^': return make(Tok::Caret, loc, 1);
      case '~': return make(Tok::Tilde, loc, 1);
      case '!':
        if (peek(1) == '=') return make(Tok::NotEq, loc, 2);
        ++pos_;
        return error(loc, "unexpected '!'; write 'not' for negation");
      case '&':
      case '|': {
        // A single '&' or '|' is the bitwise operator on ints; doubled, it is C's logical one.
        if (peek(1) != static_cast<char>(c)) return make(c == '&' ? Tok::Amp : Tok::Pipe, loc, 1);
        pos_ += 2;
        return error(loc, std::string("unexpected '") + static_cast<char>(c) + static_cast<char>(c) + "'; write '" +
                              (c == '&' ? "and" : "or") + "'");
      }
      default: break;
    }
    // Skip one whole UTF-8 sequence (or one bad byte) so the error is reported once.
    uint32_t len = 1;
    if (c >= 0xC0) while (len < 4 && (static_cast<unsigned char>(peek(len)) & 0xC0) == 0x80) ++len;
    pos_ += len;
    if (c >= 0x20 && c < 0x7f) return error(loc, std::string("unexpected character '") + static_cast<char>(c) + "'");
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", c);
    return error(loc, std::string("unexpected byte ") + buf + " outside a text literal");
  }

  Token identifier(Loc loc) {
    uint32_t start = pos_;
    while (pos_ < end_ && is_ident_char(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    std::string word = text_.substr(start, pos_ - start);
    Token t;
    t.loc = loc;
    auto it = keywords().find(word);
    t.kind = it == keywords().end() ? Tok::Ident : it->second;
    t.text = std::move(word);
    return t;
  }

  Token number(Loc loc) {
    uint32_t start = pos_;
    bool is_num = false;
    std::string digits;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) return hex_number(loc);
    auto take_digits = [&] {
      while (pos_ < end_ && (is_digit(text_[pos_]) || text_[pos_] == '_')) {
        if (text_[pos_] != '_') digits += text_[pos_];
        ++pos_;
      }
    };
    take_digits();
    if (peek() == '.' && is_digit(peek(1))) {
      is_num = true;
      digits += text_[pos_++];
      take_digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      uint32_t save = pos_;
      std::string exp = "e";
      ++pos_;
      if (peek() == '+' || peek() == '-') exp += text_[pos_++];
      if (is_digit(peek())) {
        is_num = true;
        digits += exp;
        take_digits();
      } else {
        pos_ = save;
      }
    }
    if (pos_ < end_ && is_ident_start(text_[pos_])) {
      while (pos_ < end_ && is_ident_char(text_[pos_])) ++pos_;
      return error(loc, "malformed number '" + text_.substr(start, pos_ - start) + "'");
    }
    Token t;
    t.loc = loc;
    t.text = text_.substr(start, pos_ - start);
    if (is_num) {
      t.kind = Tok::Num;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), t.num_value);
      if (r.ec != std::errc()) return error(loc, "number '" + t.text + "' is out of range");
    } else {
      t.kind = Tok::Int;
      // Parsed as unsigned so that -9223372036854775808 can be written; the checker range-checks.
      uint64_t v = 0;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (r.ec != std::errc() || v > (uint64_t{1} << 63))
        return error(loc, "integer '" + t.text + "' does not fit in 64 bits");
      t.int_value = static_cast<int64_t>(v);
    }
    return t;
  }

  Token hex_number(Loc loc) {
    uint32_t start = pos_;
    pos_ += 2;
    uint64_t v = 0;
    int count = 0;
    bool overflow = false;
    while (pos_ < end_) {
      char c = text_[pos_];
      int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
      if (d < 0 && c != '_') break;
      if (d >= 0) {
        if (v >> 60) overflow = true;
        v = v * 16 + d;
        ++count;
      }
      ++pos_;
    }
    if (pos_ < end_ && is_ident_char(text_[pos_])) {
      while (pos_ < end_ && is_ident_char(text_[pos_])) ++pos_;
      return error(loc, "malformed number '" + text_.substr(start, pos_ - start) + "'");
    }
    if (count == 0) return error(loc, "'0x' needs hexadecimal digits");
    if (overflow || v > uint64_t(INT64_MAX)) return error(loc, "integer does not fit in 64 bits");
    Token t;
    t.kind = Tok::Int;
    t.loc = loc;
    t.int_value = static_cast<int64_t>(v);
    t.text = text_.substr(start, pos_ - start);
    return t;
  }

  // Strings are kept raw (escapes and {interpolations} are handled by the parser); here we only
  // find the closing quote, tracking braces so that "{f("x")}" is one literal. A text literal is
  // one line: nothing past the end of its line is ever taken into it.
  Token string(Loc loc) {
    uint32_t start = ++pos_;
    // Inside {...} a nested text literal may hold braces and quotes of its own; each nesting
    // level remembers whether it is in such a literal.
    std::vector<bool> in_text;  // one per open '{'
    uint32_t close = start;
    while (close < end_ && text_[close] != '\n') {
      char c = text_[close];
      if (c == '\\') {
        if (close + 1 >= end_ || text_[close + 1] == '\n') {  // a backslash never escapes the line's end
          ++close;
          break;
        }
        close += 2;
        continue;
      }
      bool nested_text = !in_text.empty() && in_text.back();
      if (c == '"') {
        if (in_text.empty()) break;
        in_text.back() = !in_text.back();
      } else if (!nested_text && c == '{') {
        in_text.push_back(false);
      } else if (!nested_text && c == '}' && !in_text.empty()) {
        in_text.pop_back();
      }
      ++close;
    }
    if (close >= end_ || text_[close] != '"') {
      // The line ended first. If an interpolation was left open ("set {x"), the literal ends at
      // the line's last unescaped quote and the parser reports the '{' that is not closed.
      uint32_t line_end = close;
      while (line_end < end_ && text_[line_end] != '\n') ++line_end;
      close = line_end;
      for (uint32_t i = start; i < line_end; ++i) {
        if (text_[i] == '\\') ++i;
        else if (text_[i] == '"') close = i;
      }
      if (close >= line_end) {
        pos_ = line_end;
        return error(loc, "text literal is not closed with '\"' before the end of the line");
      }
    }
    Token t;
    t.kind = Tok::Str;
    t.loc = loc;
    t.text = text_.substr(start, close - start);
    pos_ = close + 1;
    return t;
  }
};

}  // namespace

std::vector<Token> lex(const Source& source, Diagnostics& diags, uint32_t begin, uint32_t end) {
  return Lexer(source, diags, begin, end).run();
}

std::vector<Token> lex(const Source& source, Diagnostics& diags) {
  return lex(source, diags, 0, static_cast<uint32_t>(source.text().size()));
}

}  // namespace pure
