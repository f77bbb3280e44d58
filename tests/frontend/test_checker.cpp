// tests/frontend/test_checker.cpp — the checker: types, unknown names with hints, stored-list
// writes in queries and functions, main's rules, missing returns, several errors at once.
// Depends on frontend/frontend.h through frontend_support.h.
#include <doctest/doctest.h>

#include "tests/frontend/frontend_support.h"

using namespace pure;
using pure::test::Compiled;

namespace {

// The rendered diagnostics of a module (empty when it compiles).
std::string errors_of(const std::string& text) { return Compiled(text).errors(); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Wraps statements in fn main.
std::string in_main(const std::string& body) { return "fn main() {\n" + body + "\n}\n"; }

}  // namespace

TEST_CASE("checker: a correct module has no errors and annotated types") {
  Compiled c(R"(
type Point { x: num, y: num }
list accounts by id: int { balance: num = 0.0, owner: text = "" }
fn dist2(p: Point) -> num { return p.x * p.x + p.y * p.y }
event deposit(id: int, amount: num) { accounts[id].balance += amount }
query balance(id: int) -> num { return accounts[id].balance }
fn main(args: seq text) {
  let p = Point { x: 3.0, y: 4 }
  let d = dist2(p)
  let r = deposit(1, 2.5)
  let ok = r.ok
  let b = balance(1)
  let n = args.count()
  var s = "n = {n}"
  s = s + text(d)
}
)");
  CHECK_MESSAGE(c.ok(), c.errors());
  const FuncDecl& main = c.checked.module.funcs.back();
  auto type_of = [&](const char* name) -> const Type* {
    for (const LocalInfo& l : main.locals)
      if (l.name == name) return l.type;
    return nullptr;
  };
  REQUIRE(type_of("d"));
  CHECK(type_of("d")->kind == TypeKind::Num);
  CHECK(type_of("ok")->kind == TypeKind::Bool);
  CHECK(type_of("b")->kind == TypeKind::Num);
  CHECK(type_of("n")->kind == TypeKind::Int);
  CHECK(type_of("s")->kind == TypeKind::Text);
  CHECK(type_of("p")->kind == TypeKind::Item);
}

TEST_CASE("checker: type mismatches") {
  CHECK(contains(errors_of(in_main("let x: int = \"a\"")), "t.pure:2:14: error: 'x' is declared as int but the value is text"));
  CHECK(contains(errors_of(in_main("let x = 1 + \"a\"")), "t.pure:2:"));
  CHECK(contains(errors_of(in_main("let a = 1\nlet x = a + 1.5")), "error:"));  // an int variable is not a num
  CHECK(contains(errors_of(in_main("if 1 { }")), "error:"));
  CHECK(contains(errors_of(in_main("while \"x\" { }")), "error:"));
  CHECK(contains(errors_of(in_main("let b = not 3")), "'not' needs a bool, not int"));
  CHECK(contains(errors_of(in_main("let b = -true")), "'-' needs an int or num, not bool"));
  CHECK(contains(errors_of(in_main("let x = 1\nx = 2")), "declare it with 'var' to change it"));
  CHECK(contains(errors_of(in_main("var x = 1\nx = 2.5")), "error:"));
  CHECK(contains(errors_of(in_main("let xs = [1, \"a\"]")), "error:"));
  CHECK(contains(errors_of(in_main("let xs = []")), "write 'seq int'"));
  CHECK(contains(errors_of("fn f(a: int) -> int { return a }\n" + in_main("let y = f(1, 2)")), "takes 1 argument, not 2"));
  CHECK(contains(errors_of("fn f(a: int) -> int { return a }\n" + in_main("let y = f(\"no\")")), "argument 1 of 'f'"));
  CHECK(contains(errors_of(in_main("let y = sqrt(\"a\")")), "error:"));
  CHECK(contains(errors_of(in_main("let y = 9223372036854775808")), "does not fit in 64 bits"));
  // an int literal adapts to num where a num is expected
  CHECK(errors_of(in_main("let y: num = 2\nlet z = y * 2")).empty());
}

TEST_CASE("checker: assigning what cannot be assigned says what it is (issue 37 item 8)") {
  const std::string item = "type P { x: int, y: int }\n";
  // a loop variable's field: the loop variable is a copy, so the hint is to change the list itself
  CHECK(contains(errors_of(item + in_main("var ps = [P { x: 1, y: 2 }]\nfor p in ps { p.x = 3 }")),
                 "t.pure:4:15: error: cannot assign to 'p': it is a loop variable, a copy of each item\n"));
  CHECK(contains(errors_of(item + in_main("var ps = [P { x: 1, y: 2 }]\nfor p in ps { p.x = 3 }")),
                 "hint: to change the list, walk it by position: 'for i, x in xs { xs[i].f = ... }'"));
  CHECK(contains(errors_of(item + in_main("var ps = [P { x: 1, y: 2 }]\nfor i, p in ps { p.x = 3 }")),
                 "cannot assign to 'p': it is a loop variable, a copy of each item"));
  CHECK(contains(errors_of(item + in_main("var ps = [P { x: 1, y: 2 }]\nfor i, p in ps { i = 3 }")),
                 "cannot assign to 'i': it is a loop variable\n"));
  CHECK(contains(errors_of("list m by id: int { n: int }\nevent e() {\n  for r in m { r.n = 1 }\n}\n"),
                 "t.pure:3:16: error: cannot assign to 'r': it is a loop variable, a copy of each row\n"));
  CHECK(contains(errors_of(in_main("for i in 0 .. 3 { i = 4 }")), "cannot assign to 'i': it is a loop variable\n"));
  CHECK(contains(errors_of("fn f(n: int) { n = 2 }\n" + in_main("f(1)")),
                 "t.pure:1:16: error: cannot assign to 'n': it is a parameter\n"));
  CHECK(contains(errors_of(in_main("let x = 1\nx = 2")), "cannot assign to 'x': it is declared with 'let'"));
  // the repair the hint gives works
  CHECK(errors_of(item + in_main("var ps = [P { x: 1, y: 2 }]\nfor i, p in ps { ps[i].x = 3 }")).empty());
}

TEST_CASE("checker: unknown names, fields, types and functions with 'did you mean'") {
  std::string e = errors_of(in_main("let count = 1\nlet y = cuont + 1"));
  CHECK(contains(e, "t.pure:3:9: error: unknown name 'cuont'"));
  CHECK(contains(e, "did you mean 'count'?"));
  CHECK(contains(errors_of("fn compute() -> int { return 1 }\n" + in_main("let y = compte()")),
                 "did you mean 'compute'?"));
  CHECK(contains(errors_of("type Point { x: num, y: num }\n" + in_main("let p = Poin { x: 1.0, y: 2.0 }")),
                 "did you mean 'Point'?"));
  CHECK(contains(errors_of("type Point { x: num, y: num }\nfn f(p: Point) -> num { return p.z }\nfn main() {}"),
                 "'Point' has no field 'z'"));
  CHECK(contains(errors_of("fn f(p: Pont) {}\nfn main() {}"), "unknown type 'Pont'"));
  // no far-fetched suggestion for a name unlike anything
  std::string far = errors_of(in_main("let y = zzzzzzzzzz"));
  CHECK(contains(far, "unknown name 'zzzzzzzzzz'"));
  CHECK_FALSE(contains(far, "did you mean"));
}

TEST_CASE("checker: an item type typo (swapped letters) suggests the item type") {
  CHECK(contains(errors_of("type Point { x: num, y: num }\n" + in_main("let p = Piont { x: 1.0, y: 2.0 }")),
                 "did you mean 'Point'?"));
}

TEST_CASE("checker: edit distance") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "abc") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("count", "cuont") <= 2);
}

TEST_CASE("checker: scopes") {
  CHECK(contains(errors_of(in_main("if true { let a = 1 }\nlet b = a")), "unknown name 'a'"));
  CHECK(contains(errors_of(in_main("let a = 1\nlet a = 2")), "is already declared in this block"));
  CHECK(errors_of(in_main("let a = 1\nif true { let a = \"shadow\" }")).empty());
  CHECK(contains(errors_of(in_main("break")), "outside a loop"));
  CHECK(contains(errors_of(in_main("continue")), "outside a loop"));
  CHECK(contains(errors_of("fn f() {}\nfn f() {}\nfn main() {}"), "'f' is declared twice"));
  CHECK(contains(errors_of("fn f(a: int, a: int) {}\nfn main() {}"), "parameter 'a' appears twice"));
  CHECK(contains(errors_of("fn print(a: int) {}\nfn main() {}"), "standard function and cannot be redeclared"));
}

TEST_CASE("checker: only events write stored lists") {
  const std::string lists = "list accounts by id: int { balance: num = 0.0 }\n";
  std::string q = errors_of(lists + "query q(id: int) -> num { accounts[id].balance = 1.0\n return 0.0 }\nfn main() {}");
  CHECK(contains(q, "query 'q' changes stored list 'accounts'; queries only read"));
  CHECK(contains(q, "make it an event"));
  CHECK(contains(errors_of(lists + "query q(id: int) -> int { accounts.remove(id)\n return 0 }\nfn main() {}"),
                 "queries only read"));
  CHECK(contains(errors_of(lists + "fn f(id: int) { accounts[id] = { balance: 1.0 } }\nfn main() {}"),
                 "only events change stored lists"));
  CHECK(contains(errors_of(lists + in_main("accounts[1].balance = 2.0")), "main changes stored list 'accounts' directly"));
  CHECK(errors_of(lists + "event e(id: int) { accounts[id] = { balance: 1.0 }\n accounts.remove(id) }\nfn main() {}").empty());
  // a query reading is fine
  CHECK(errors_of(lists + "query q(id: int) -> num { return accounts[id].balance }\nfn main() {}").empty());
}

TEST_CASE("checker: events and queries are called from main only, with client values") {
  const std::string mod = "event e(x: int) { }\nquery q() -> int { return 1 }\n";
  CHECK(contains(errors_of(mod + "fn f() { e(1) }\nfn main() {}"), "function 'f' calls event 'e'; only main and events call events"));
  CHECK(contains(errors_of("event e(xs: list by k: int { v: int }) { }\nfn main() {}"),
                 "event and query parameters are values sent by a client: int, num, bool, text, items, or a 'seq' of them"));
  CHECK(contains(errors_of("query q(xs: list by k: int {}) -> int { return 0 }\nfn main() {}"), "or a 'seq' of them"));
  CHECK(contains(errors_of("query q() { }\nfn main() {}"), "a query must return a value"));
}

TEST_CASE("checker: events and queries take seqs; an event may declare a result, read from its outcome's .value") {
  const std::string mod = "type L { item: int, qty: int }\ntype P { id: int, total: num }\n"
                          "event place(ls: seq L, tags: seq text) -> P { return P { id: ls.count(), total: 1.5 } }\n"
                          "event skip(ds: seq int) -> seq int { return ds }\nevent plain() { }\n"
                          "query q(xs: seq num) -> num { return xs.sum() }\n";
  CHECK(errors_of(mod + "fn main() {\n let r = place([L { item: 1, qty: 2 }], [\"a\"])\n"
                        " if r.ok { print(r.value.id + 1) }\n print(r.value.total * 2.0)\n print(r.reason)\n"
                        " let s = skip([1])\n for d in s.value { print(d) }\n print(q([1.0]))\n let p = plain()\n print(p.ok) }")
            .empty());
  // the value has the declared type
  CHECK(contains(errors_of(mod + "fn main() { let r = place([], [])\n let t: text = r.value.id }"), "error:"));
  CHECK(contains(errors_of(mod + "fn main() { let r = skip([])\n let n: int = r.value }"), "error:"));
  // an outcome without a result has no value; the value's own fields are not the outcome's
  CHECK(contains(errors_of(mod + "fn main() { let p = plain()\n print(p.value) }"), "'outcome' has no field 'value'"));
  CHECK(contains(errors_of(mod + "fn main() { let r = place([], [])\n print(r.id) }"),
                 "'outcome of P' has no field 'id'"));
  CHECK(contains(errors_of(mod + "fn main() { let r = place([], [])\n print(r.value.idd) }"), "did you mean 'id'"));
  // the element types of seq arguments are checked like any argument
  CHECK(contains(errors_of(mod + "fn main() { let r = skip([1.5]) }"), "argument 1 of 'skip'"));
  // an event with a result must return it
  CHECK(contains(errors_of("event e() -> int { }\nfn main() {}"), "'e' can reach its end without returning an int"));
  CHECK(contains(errors_of("event e() -> int { return \"x\" }\nfn main() {}"), "error:"));
  // only a local holds an outcome with a value: not a list
  CHECK(contains(errors_of(mod + "fn main() { let rs = [skip([])] }"),
                 "a list cannot hold the outcome of an event that returns a value (outcome of seq int)"));
  CHECK(contains(errors_of(mod + "fn main() { let rs = repeat(skip([]), 2) }"), "'repeat' makes a list of"));
  CHECK(errors_of(mod + "fn main() { let rs = [plain()] }").empty());  // a plain outcome still can
}

TEST_CASE("checker: main's rules") {
  CHECK(contains(errors_of("fn main() -> int { return 1 }"), "main returns nothing"));
  CHECK(contains(errors_of("fn main(a: int) { }"), "main takes no parameters or one 'seq text'"));
  CHECK(contains(errors_of("fn main(a: seq text, b: int) { }"), "main takes no parameters"));
  CHECK(contains(errors_of("fn f() { main() }\nfn main() { }"), "main cannot be called"));
  CHECK(contains(errors_of("fn f() -> text { return input() }\nfn main() { }"), "error:"));  // input() is main's
  CHECK(errors_of("fn main(args: seq text) { let t = input() }").empty());
  // a module without main still checks (pure-run reports the missing main when asked to run)
  CHECK(errors_of("fn f() { }").empty());
}

TEST_CASE("checker: a function with a result must return on every path") {
  CHECK(contains(errors_of("fn f(a: int) -> int { if a > 0 { return 1 } }\nfn main() {}"),
                 "'f' can reach its end without returning"));
  CHECK(contains(errors_of("fn f(a: int) -> int { while a > 0 { return 1 } }\nfn main() {}"),
                 "can reach its end without returning"));
  CHECK(errors_of("fn f(a: int) -> int { if a > 0 { return 1 } else { return 2 } }\nfn main() {}").empty());
  CHECK(errors_of("fn f(a: int) -> int { fail \"never\" }\nfn main() {}").empty());
  CHECK(contains(errors_of("fn f() { return 1 }\nfn main() {}"), "returns nothing, so 'return' takes no value"));
  CHECK(contains(errors_of("fn f() -> int { return }\nfn main() {}"), "error:"));
}

TEST_CASE("checker: keyed lists, sequences and items") {
  const std::string m = "list edges by (src: int, dst: int) { w: num = 0.0 }\n";
  CHECK(errors_of(m + "query deg(v: int) -> int { var n = 0\n for e in edges[v] { n += 1 }\n return n }\nfn main() {}").empty());
  CHECK(contains(errors_of(m + "event e() { edges[1] = { w: 1.0 } }\nfn main() {}"), "give every key to change one"));
  CHECK(contains(errors_of(m + "event e() { edges[1, 2] = { src: 1, w: 1.0 } }\nfn main() {}"), "is a key"));
  CHECK(contains(errors_of(in_main("let xs = [1, 2]\nlet y = xs[\"a\"]")), "error:"));
  CHECK(contains(errors_of(in_main("let xs = [1, 2]\nfor a, b, c in xs { }")), "error:"));
  CHECK(contains(errors_of("type P { x: int }\n" + in_main("let p = P { x: 1, x: 2 }")), "is given twice"));
  CHECK(contains(errors_of("type P { x: int, y: int }\n" + in_main("let p = P { x: 1 }")), "'y' is missing from the item"));
  CHECK(contains(errors_of("list l by (a: num) { }\nfn main() {}"), "error:"));  // num is never a key
  CHECK(contains(errors_of(in_main("let xs = [1]\nlet ys = [xs]")), "a list cannot hold lists"));
}

TEST_CASE("checker: let-else") {
  const std::string m = "list accounts by id: int { balance: num = 0.0 }\n";
  CHECK(errors_of(m + "event e(id: int) { let a = accounts[id] else fail \"no {id}\"\n accounts[id].balance = a.balance }\nfn main() {}").empty());
  CHECK(contains(errors_of(in_main("let a = 1 else return")), "'let ... else' needs a keyed-list lookup"));
  CHECK(contains(errors_of(m + "event e(id: int) { let a = accounts[id] else print(1) }\nfn main() {}"),
                 "the 'else' of a 'let' must leave"));
}

TEST_CASE("checker: independent errors are all reported, each with its own location") {
  Compiled c(R"(fn main() {
  let a: int = "x"
  let b = unknown_one
  let c = not 1
  var d = 1
  d = "text"
}
)");
  REQUIRE(c.diags->count() >= 4);
  std::vector<uint32_t> lines;
  for (const Diagnostic& d : c.list()) lines.push_back(d.loc.line);
  for (uint32_t want : {2u, 3u, 4u, 6u}) CHECK(std::find(lines.begin(), lines.end(), want) != lines.end());
}

TEST_CASE("checker: a rendered diagnostic has the source line and a caret under the column") {
  std::string e = errors_of("fn main() {\n  let y = nope\n}\n");
  CHECK(e.rfind("t.pure:2:11: error: unknown name 'nope'\n  ", 0) == 0);
  CHECK(contains(e, "\n    let y = nope\n            ^\n"));
}

TEST_CASE("checker: a flood of errors is capped in the output but counted") {
  std::string body;
  for (int i = 0; i < 150; ++i) body += "let v" + std::to_string(i) + ": int = \"x\"\n";
  Compiled c(in_main(body));
  CHECK(c.diags->count() == 150);
  CHECK(c.list().size() == pure::limits::kErrorsShown);
  CHECK(contains(c.errors(), "... and 130 more errors"));
}

TEST_CASE("frontend: source must be valid UTF-8; the first bad byte is located") {
  struct Case { std::string bytes; const char* what; };
  Case bad[] = {
      {"\xff", "invalid byte"},
      {"\xc3", "truncated sequence"},
      {"\xc0\xaf", "overlong encoding"},
      {"\xe0\x80\xaf", "overlong encoding (3 bytes)"},
      {"\xed\xa0\x80", "surrogate"},
      {"\xf4\x90\x80\x80", "above U+10FFFF"},
      {"\x80", "lone continuation byte"},
  };
  for (const Case& c : bad) {
    CAPTURE(c.what);
    for (const char* where : {"text", "comment"}) {
      CAPTURE(where);
      std::string line = std::string(where) == "text" ? "  print(\"ab" + c.bytes + "\")" : "  // ab" + c.bytes;
      Compiled comp(in_main(line));
      REQUIRE(comp.diags->any());
      CHECK(contains(comp.errors(), "t.pure:2:" + std::to_string(std::string(where) == "text" ? 12 : 8) + ": error: "));
      CHECK(contains(comp.errors(), "UTF-8"));
    }
  }
  Compiled good(in_main("  print(\"caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac\") // \xc3\xa9"));
  CHECK_MESSAGE(good.ok(), good.errors());
}

TEST_CASE("checker: an open '{' in a text is reported at the '{', and later errors still are") {
  // issue 13: the literal swallowed the rest of the file; the later type error was never reported
  // and an error was placed on a line past the end of the file
  std::string source = in_main("  let x = 1\n  print(\"set {x\")\n  let y: int = \"a\"\n  print(y)");
  std::string errors = errors_of(source);
  CHECK(errors ==
        "t.pure:3:14: error: '{' in text is not closed\n"
        "    print(\"set {x\")\n"
        "               ^\n"
        "  hint: write '\\{' for a brace\n"
        "t.pure:4:16: error: 'y' is declared as int but the value is text\n"
        "    let y: int = \"a\"\n"
        "                 ^\n");
}

TEST_CASE("checker: a statement run into the next one does not also lose the next one") {
  // issue 13: `let y = x + 1 return y` also reported "'f' can reach its end without returning"
  CHECK(errors_of("fn f(x: int) -> int {\n  let y = x + 1 return y\n}\nfn main() { print(f(1)) }\n") ==
        "t.pure:2:17: error: expected a new line or ';' after the statement, found 'return'\n"
        "    let y = x + 1 return y\n"
        "                  ^\n");
  // the statement after the missing separator is checked like any other
  CHECK(contains(errors_of(in_main("  let x = 1 let y = 2\n  print(x + y + z)")), "unknown name 'z'"));
  // when the parser had to skip part of a body, the body is incomplete: no missing-return error
  std::string skipped = errors_of("fn f(x: int) -> int {\n  let y = x + ) return y\n}\nfn main() { print(f(1)) }\n");
  CHECK(contains(skipped, "expected an expression, found ')'"));
  CHECK_FALSE(contains(skipped, "can reach its end"));
}

TEST_CASE("checker: 'outcome' can be written as an item literal, as it can be named as a type") {
  // issue 13: `outcome { ... }` said "unknown item type 'outcome'"
  Compiled c(in_main("  let o = outcome { ok: false, reason: \"no\" }\n  let p: outcome = { ok: true, reason: \"\" }\n"
                     "  print(o.reason)\n  print(p.ok)"));
  CHECK_MESSAGE(c.ok(), c.errors());
  CHECK(contains(errors_of(in_main("  let o = outcome { ok: true }")), "field 'reason' is missing from the item"));
  CHECK(contains(errors_of(in_main("  let o = outcome { ok: 1, reason: \"\" }")), "field 'ok' must be bool, not int"));
}

TEST_CASE("diagnostics: a long source line is shown as a window around the spot, with the caret under it") {
  // before, lines over 400 bytes were not shown at all (a long list literal had no source line)
  std::string list = "[";
  for (int i = 0; i < 300; ++i) list += "1, ";
  list += "\"x\"]";  // the odd element is at column 913 of the line
  std::string errors = errors_of(in_main("  let xs = " + list));
  std::string want_head = "t.pure:2:913: error: a list's elements must share one type: this is text, the first is int\n  ...";
  REQUIRE(errors.rfind(want_head, 0) == 0);
  size_t line_start = errors.find('\n') + 1;
  size_t line_end = errors.find('\n', line_start);
  std::string shown = errors.substr(line_start, line_end - line_start);
  std::string caret = errors.substr(line_end + 1, errors.find('\n', line_end + 1) - line_end - 1);
  CHECK(shown.size() < 200);
  CHECK(shown.find("1, 1, \"x\"]") != std::string::npos);
  REQUIRE(caret.size() <= shown.size());
  CHECK(caret.back() == '^');
  CHECK(shown[caret.size() - 1] == '"');  // the caret stands under the opening quote of "x"
  // a short line is shown whole, as before
  CHECK(contains(errors_of(in_main("  let y: int = \"a\"")), "\n    let y: int = \"a\"\n                 ^\n"));
}

TEST_CASE("checker: interpolation and text() take items and lists, as print does (type rule 5)") {
  // issue 13: language.md's rule 5 said only int, num, bool and text, while the checker (and the
  // section on printing) took items and lists; the rule now says what the checker does
  Compiled c("type P { a: int }\nfn main() {\n  let p = P { a: 1 }\n  let xs = [p]\n"
             "  let m = list by k: text { n: int = 0 }\n  print(\"{p} {xs} {m} {[1, 2]}\" + text(p) + text(xs) + text(m))\n}\n");
  CHECK_MESSAGE(c.ok(), c.errors());
  CHECK(contains(errors_of("fn f() { }\nfn main() {\n  print(\"{f()}\")\n}\n"),
                 "t.pure:3:11: error: this has no value to put into a text"));
  CHECK(contains(errors_of("fn f() { }\nfn main() {\n  print(text(f()))\n}\n"),
                 "t.pure:3:14: error: this has no value to turn into text"));
  CHECK(contains(errors_of("list s seq int\nfn main() {\n  print(\"{s}\")\n}\n"), "is the module's state, not a value"));
  CHECK(contains(errors_of("list s seq int\nfn main() {\n  print(text(s))\n}\n"), "is the module's state, not a value"));
}

TEST_CASE("checker: defaults are constant expressions of the field's type") {
  // issue 13: errors.md said negative num defaults were rejected; they are accepted
  CHECK(errors_of("type T { a: num = -1.5, b: num = -2, c: int = -9223372036854775808 }\nfn main() { }\n").empty());
  CHECK(errors_of("fn main() {\n  let m = list by k: int { v: num = -0.25 }\n  m[1].v += 1.0\n}\n").empty());
  CHECK(contains(errors_of("type T { a: num = -x }\nfn main() { }\n"), "unknown constant 'x'"));
  CHECK(contains(errors_of("type T { a: bool = -true }\nfn main() { }\n"), "'-' needs an int or num, not bool"));
  CHECK(contains(errors_of("type T { a: text = -\"x\" }\nfn main() { }\n"), "'-' needs an int or num, not text"));
  CHECK(contains(errors_of("type T { a: num = \"x\" }\nfn main() { }\n"), "the default of 'a' must be a num, not a text"));
  CHECK(contains(errors_of("fn f() -> int { return 1 }\ntype T { a: int = f() }\nfn main() { }\n"),
                 "a constant's value must be computed at compile time"));
  CHECK(errors_of("const N = 4\ntype T { a: num = N / 2, b: text = \"n{N}\", c: bool = N > 3 }\nfn main() { }\n").empty());
}

TEST_CASE("checker: constants: any order, scalar values, clear errors for cycles, calls and clashes") {
  CHECK(errors_of("const B = A + 1\nconst A = 2\nconst T = \"{A}{B}\" + \"!\"\nconst F = 0.5 * A\n" +
                  in_main("let x: int = A\nlet y: num = B\nlet t: text = T\nlet f: num = F")) == "");
  CHECK(contains(errors_of("const A = B\nconst B = C\nconst C = A\nfn main() { }\n"), "constant 'A' depends on itself"));
  CHECK(contains(errors_of("const A = A\nfn main() { }\n"), "t.pure:1:11: error: constant 'A' depends on itself"));
  CHECK(contains(errors_of("const A = [1]\nfn main() { }\n"), "must be computed at compile time"));
  CHECK(contains(errors_of("const A = 1\nconst A = 2\nfn main() { }\n"), "constant 'A' is declared twice"));
  CHECK(contains(errors_of("const f = 1\nfn f() { }\nfn main() { }\n"), "'f' is declared twice (a constant and a function)"));
  CHECK(contains(errors_of("const L = 1\nlist L seq int\nfn main() { }\n"), "(a constant and a stored list)"));
  CHECK(contains(errors_of("const print = 1\nfn main() { }\n"), "'print' is a standard function"));
  CHECK(contains(errors_of("const N = 1\nfn g(N: int) { }\nfn main() { }\n"), "'N' is already the name of a constant"));
  CHECK(contains(errors_of("const N = 1\n" + in_main("for N in 0 .. 3 { }")), "'N' is already the name of a constant"));
  CHECK(contains(errors_of("const N = 1 % 0\nfn main() { }\n"), "division by zero (in %) in a constant"));
  CHECK(contains(errors_of("const N = -(-9223372036854775807 - 1)\nfn main() { }\n"), "integer overflow in a constant"));
  CHECK(contains(errors_of("const N = 1 + \"a\"\nfn main() { }\n"), "cannot use '+' on int and text"));
  CHECK(contains(errors_of("const N = true < false\nfn main() { }\n"), "cannot order bool values"));
  CHECK(contains(errors_of("const DISTRICS = 1\n" + in_main("print(DISTRICTS)")), "did you mean 'DISTRICS'?"));
  // a long chain is an error, not a stack overflow
  std::string chain;
  for (int i = 0; i < 5000; ++i) chain += "const C" + std::to_string(i) + " = C" + std::to_string(i + 1) + " + 1\n";
  chain += "const C5000 = 0\nfn main() { print(C0) }\n";
  CHECK(contains(errors_of(chain), "constants refer to each other too deeply"));
}

TEST_CASE("checker: bitwise operators take ints, once per operator, with hints for bools and nums") {
  CHECK(errors_of(in_main("let a = 1 | 2 & 3 ^ ~4 << 1 >> 2\nlet b: int = a\nprint(a & 1 == 1)")) == "");
  std::string e = errors_of(in_main("let a = true | false"));
  CHECK(contains(e, "t.pure:2:14: error: cannot use '|' on bool; bitwise operators take ints"));
  CHECK(contains(e, "write 'or' for bools"));
  CHECK(errors_of(in_main("let a = true | false")).find("error", e.find("error") + 1) == std::string::npos);
  CHECK(contains(errors_of(in_main("let a = 1.5 & 1")), "cannot use '&' on num; bitwise operators take ints"));
  CHECK(contains(errors_of(in_main("let a = 1.5 & 1")), "convert with int(...)"));
  CHECK(contains(errors_of(in_main("let a = 1 << \"x\"")), "cannot use '<<' on text"));
  CHECK(contains(errors_of(in_main("let a = ~true")), "'~' needs an int, not bool"));
  CHECK(contains(errors_of(in_main("let a = ~1.0")), "'~' needs an int, not num"));
  // precedence: comparisons below the bitwise operators, so this compares ints, not bools
  CHECK(errors_of(in_main("let ok: bool = 6 & 3 == 2")) == "");
  CHECK(contains(errors_of(in_main("let x = 1 + 2 << 3 < 4 | 5 < 6")), "comparisons cannot be chained"));
}

TEST_CASE("checker: 'if' as a value has one type; conditions are bools; branches have values") {
  CHECK(errors_of(in_main("let a: num = if true { 1 } else { 2.5 }\nlet b = if a > 1.0 { \"x\" } else { \"y\" }\nlet c: text = b")) == "");
  CHECK(errors_of(in_main("let xs = if true { [1] } else { [] }\nlet n: int = xs[0]")) == "");
  CHECK(contains(errors_of(in_main("let a = if 1 { 2 } else { 3 }")), "an 'if' condition must be a bool, not int"));
  CHECK(contains(errors_of(in_main("let n = 1\nlet a = if true { n } else { 2.5 }")),
                 "the branches of this 'if' have different types: int and num"));
  CHECK(contains(errors_of("fn f() { }\n" + in_main("let a = if true { f() } else { f() }")),
                 "this branch has no value; an 'if' used as a value needs one in each branch"));
  CHECK(contains(errors_of(in_main("let a: int = if true { \"x\" } else { \"y\" }")), "declared as int but the value is text"));
}

TEST_CASE("checker: .range(lo, hi) bounds an int or a text key, with bounds of the key's type (issue 37, item 7)") {
  const char* lists = R"(list sales by (day: text, id: int) { amount: int }
list shops by (shop: int, day: text) { amount: int }
list flags by (w: int, f: bool, k: int) { v: int }
list marks by (f: bool, k: int) { v: int }
list orders by (w: int, o: int) { c: int }
)";
  auto errs = [&](const std::string& body) { return errors_of(std::string(lists) + in_main(body)); };
  CHECK(errs("for r in sales.range(\"2026-12\", \"2026-13\") { print(r.id) }\n"
             "for r in shops[1].range(\"a\", \"b\").reverse() { print(r.day) }\n"
             "let m = \"2026-12\"\nprint(sales.range(m, m + \"~\").sum(amount))\n"
             "let e = list by (day: text) { n: int }\nfor r in e.range(\"a\", \"b\") { print(r.n) }") == "");
  CHECK(contains(errs("for r in sales.range(1, 2) { print(r.id) }"), "argument 1 of '.range' over text key 'day' must be text, not int"));
  CHECK(contains(errs("print(shops[1].range(\"a\", 2).count())"), "argument 2 of '.range' over text key 'day' must be text, not int"));
  CHECK(contains(errs("for r in orders.range(\"a\", \"b\") { print(r.o) }"), "argument 1 of '.range' over int key 'w' must be int, not text"));
  CHECK(contains(errs("for r in flags[1].range(0, 3) { print(r.k) }"), "'.range' needs an int or text key after the prefix, not bool key 'f'"));
  CHECK(contains(errs("for r in marks.range(0, 3) { print(r.k) }"), "'.range' needs a list whose first key is an int or a text, not bool key 'f'"));
}

TEST_CASE("checker: slices are read with their methods or walked, never kept as values (issue 15, item 3)") {
  const char* lists = R"(list orders by (w: int, d: int, o: int) { c: int, note: text }
list names by (w: int, n: text, k: int) { v: int }
list journal seq { n: int }
)";
  auto errs = [&](const std::string& body) { return errors_of(std::string(lists) + in_main(body)); };
  // what compiles: every method, a range after a prefix, reverse walks, first/last in let ... else
  CHECK(errs("let a = orders[1, 2].last()\nlet b = orders[1].count() + orders[1].range(2, 5).sum(o)\n"
             "let c = orders.range(1, 3).min(note)\nlet d = orders[1, 2].range(0, 9).max(c)\n"
             "for r in orders[1].reverse() { print(r.o) }\nfor r in orders[1, 2].range(3, 9).reverse() { print(r.o) }\n"
             "for r in orders.reverse() { print(r.o) }\nfor j in journal.reverse() { print(j.n) }\n"
             "for r in orders[1].range(2, 4) { print(r.o) }\n"
             "for i in 0 .. 3 {\n  let f = orders[i].first() else continue\n  let l = journal.last() else break\n  print(f.o + l.n)\n}") == "");
  CHECK(contains(errs("let s = orders[1]"), "a key prefix selects several items; loop over it or read it with a slice method"));
  CHECK(contains(errs("let s = orders.range(1, 2)"), "'.range(lo, hi)' selects items: loop over it or read it with a slice method"));
  CHECK(contains(errs("print(orders[1].has(2, 3))"), "a slice has no method 'has'"));
  CHECK(contains(errs("print(orders.range(1, 2).range(1, 2).count())"), "'.range(lo, hi)' selects items"));
  CHECK(contains(errs("print(orders[1].reverse().count())"), "a slice has no method 'reverse'"));
  CHECK(contains(errs("orders.reverse()"), "'.reverse()' of a keyed list is a walk from its last item back, only in a for loop"));
  CHECK(contains(errs("let xs = [1, 2]\nfor x in xs.reverse() { print(x) }"),
                 "'.reverse()' of an event sequence reverses it in place and gives nothing to loop over"));
  CHECK(contains(errs("for i, j in journal.reverse() { print(j.n) }"), "a reverse walk gives one variable"));
  CHECK(contains(errs("let n = orders[1].count() else return"),
                 "'let ... else' needs a keyed-list lookup like 'list[key]', or '.first()' or '.last()', on the right"));
  // an event sequence still reverses in place, and a stored sequence still cannot be
  CHECK(errs("let xs = [1, 2]\nxs.reverse()\nprint(xs)") == "");
  CHECK(contains(errs("journal.reverse()"), "'.reverse' is not available on stored lists"));
  // a function reading slices does not write the module's state
  CHECK(errors_of(std::string(lists) + "fn newest(w: int, d: int) -> int { return orders[w, d].last().o }\n"
                                       "query oldest(w: int) -> int { for r in orders[w].reverse() { return r.o }\n  return 0 }\n" +
                  in_main("print(newest(1, 2))")) == "");
}

TEST_CASE("checker: 'stock.Row' names a stored list's row type; a whole row of that type is written back (issue 15, item 4)") {
  const char* lists = R"(list stock by (w: int, i: int) { qty: int }
list other by (w: int, j: int) { qty: int }
type P { x: int }
)";
  auto errs = [&](const std::string& rest) { return errors_of(std::string(lists) + rest); };
  CHECK(errs("type S = stock.Row\nfn f(s: S, t: stock.Row) -> stock.Row { return if s.qty > t.qty { s } else { t } }\n"
             "event e() {\n  var s = stock[1, 2]\n  s.qty += 1\n  stock[1, 2] = s\n  stock[1, 3] = f(s, stock[1, 4])\n}\n"
             "fn main() { let r = e() }\n") == "");
  std::string e = errs("fn f(a: stok.Row) {}\nfn main() {}\n");
  CHECK(contains(e, "'stok.Row' names the rows of a stored list, and there is no stored list 'stok'"));
  CHECK(contains(e, "did you mean 'stock'?"));
  CHECK(contains(errs("fn f(a: P.Row) {}\nfn main() {}\n"), "there is no stored list 'P'"));
  // a row of another list, or another item, is not this list's row (even with the same fields)
  e = errs("event e() {\n  stock[1, 1] = other[1, 1]\n  stock[1, 2] = P { x: 1 }\n}\nfn main() {}\n");
  CHECK(contains(e, "a row of this list is a {w: int, i: int, qty: int}, not {w: int, j: int, qty: int}"));
  CHECK(contains(e, "a row of this list is a {w: int, i: int, qty: int}, not P"));
  // only events write: a whole row is a write like any other
  CHECK(contains(errs("fn main() { stock[1, 1] = stock[1, 2] }\n"), "main"));
  // `.Row` only after a name, in a type: elsewhere a field or a method as before
  CHECK(contains(errs("fn main() { let s = stock.Row }\n"), "error"));
}

TEST_CASE("checker: a stored list whose type names its own rows is an error, not an endless resolution (fuzz find)") {
  // found by the frontend fuzzer: `s: stock.Row` inside stock's own type recursed until the stack ran out
  std::string e = errors_of("list stock by id: int { s: stock.Row }\nfn main() {}\n");
  CHECK(contains(e, "'stock.Row' is used inside the type of stored list 'stock' itself, and a row cannot hold a row"));
  CHECK(contains(e, "1:28"));
  // two lists naming each other's rows, through a sequence and a key
  e = errors_of("list a by id: int { r: seq b.Row }\nlist b by (k: a.Row) { n: int }\nfn main() {}\n");
  CHECK(contains(e, "'a.Row' is used inside the type of stored list 'a' itself"));
  // a list resolved already is named as usual, from a later list's type too (still not a scalar field)
  e = errors_of("list a by id: int { n: int }\nlist b by id: int { r: a.Row }\nfn main() {}\n");
  CHECK(contains(e, "a list's field must be int, num, bool or text"));
  CHECK(!contains(e, "itself"));
}

// The type rule of a builtin whose row in frontend/builtins.def gives a signature is that row:
// a call with arguments of those kinds has the result's kind, and one argument more or fewer is
// an arity error naming the count. Every such row, so a row and the checker cannot disagree.
TEST_CASE("checker: builtins with a signature in builtins.def are checked by it") {
  auto value = [](char kind) -> std::string {
    switch (kind) {
      case 'i': return "1";
      case 'n': return "1.5";
      case 'b': return "true";
      case 't': return "\"a b\"";
      case 's': return "\"a b\".words()";
      default: return "?";
    }
  };
  auto type = [](char kind) -> std::string {
    switch (kind) {
      case 'i': return "int";
      case 'n': return "num";
      case 'b': return "bool";
      case 't': return "text";
      case 's': return "seq text";
      default: return "?";
    }
  };
  int rows = 0;
  for (int i = 0; i < static_cast<int>(Builtin::Count); ++i) {
    const BuiltinInfo& info = builtin_info(static_cast<Builtin>(i));
    if (!info.has_signature()) continue;
    ++rows;
    std::vector<std::string> args;
    for (const char* k = info.args; *k; ++k) args.push_back(value(*k));
    auto call = [&](size_t n) {
      std::string list;
      for (size_t a = 0; a < n; ++a) list += (a ? ", " : "") + (a < args.size() ? args[a] : std::string("1"));
      std::string receiver = info.kind == BuiltinKind::TextMethod ? "\"abc\"." : info.kind == BuiltinKind::ListMethod ? "xs." : "";
      return receiver + info.name + "(" + list + ")";
    };
    std::string prefix = "  let xs = [1, 2]\n  let r: " + type(info.result[0]) + " = ";
    CAPTURE(info.name);
    CHECK(errors_of(in_main(prefix + call(args.size()) + "\n  print(text(r) + text(xs.count()))")) == "");
    std::string more = errors_of(in_main(prefix + call(args.size() + 1) + "\n  print(text(r) + text(xs.count()))"));
    CHECK(contains(more, "takes " + std::to_string(args.size()) + " argument"));
    if (!args.empty()) {
      std::string fewer = errors_of(in_main(prefix + call(args.size() - 1) + "\n  print(text(r) + text(xs.count()))"));
      CHECK(contains(fewer, "takes " + std::to_string(args.size()) + " argument"));
    }
  }
  CHECK(rows > 40);
}

TEST_CASE("checker: 'outcome of T' is a type of locals, parameters and results") {
  const char* good = R"(type Placed { id: int, total: int }
list orders by id: int { total: int }
event place(id: int) -> Placed { orders[id] = { total: 1 }; return { id: id, total: 1 } }
event bump() -> seq int { return [1] }
fn show(r: outcome of Placed) -> text { if r.ok { return "{r.value.id}" }; return r.reason }
fn pass(r: outcome of seq int) -> outcome of seq int { return r }
fn main() {
  let r: outcome of Placed = place(1)
  print(show(r))
  print(show(place(2)))
  let s = pass(bump())
  print(s.value.count())
}
)";
  CHECK(errors_of(good) == "");
  const std::string bad = errors_of(R"(event one() -> int { return 1 }
fn show(r: outcome of int) {}
fn main() {
  let a: outcome of text = one()
  let b: outcome of outcome of int = one()
  let c: outcome of list by k: int { v: int } = one()
  let d: outcome = one()
  show(one())
  show(a)
}
)");
  CHECK(contains(bad, "t.pure:4:28: error: 'a' is declared as outcome of text but the value is outcome of int"));
  CHECK(contains(bad, "t.pure:5:21: error: 'outcome of' takes the type an event returns, not an outcome of int\n"));
  CHECK(contains(bad, "hint: an event returns int, num, bool, text, an item, or a 'seq' of them"));
  CHECK(contains(bad, "t.pure:6:26: error: 'outcome of' takes the type an event returns, not a list by k: int { v: int }"));
  CHECK(contains(bad, "t.pure:7:20: error: 'd' is declared as outcome but the value is outcome of int"));
  CHECK(contains(bad, "t.pure:9:8: error: argument 1 of 'show' must be outcome of int, not outcome of text"));
  CHECK(!contains(bad, "t.pure:8:"));
}

TEST_CASE("checker: a function whose header does not parse is not reported again as unknown where it is called") {
  // the parse error alone: no "unknown function 'show'" with a suggestion of some other name
  const std::string e = errors_of("fn show(label: text, r: outcome off int) { print(label) }\nfn main() {\n  show(\"a\", 1)\n}\n");
  CHECK(contains(e, "t.pure:1:33: error: expected ')' to close the parameters, found 'off'"));
  CHECK(!contains(e, "unknown function"));
  CHECK(!contains(e, "did you mean"));
  // a call of a function that was never declared still is
  CHECK(contains(errors_of("fn main() {\n  shw(1)\n}\n"), "t.pure:2:3: error: unknown function 'shw'"));
}

TEST_CASE("checker: sort_by keys, their directions and their errors") {
  const char* head = "type P { name: text, score: int, w: num }\nfn main() {\n  let ps = [P { name: \"a\", score: 1, w: 0.5 }]\n";
  CHECK(errors_of(std::string(head) + "  ps.sort_by(score desc, name, w asc)\n  ps.sort_by(w desc)\n}\n") == "");
  const std::string e = errors_of(std::string(head) +
                                  "  ps.sort_by()\n  ps.sort_by(score, score)\n  ps.sort_by(score + 1)\n  ps.sort_by(nme desc)\n"
                                  "  print(abs(3 desc))\n  let xs = [3, 1]\n  xs.sort_by(x)\n}\n");
  CHECK(contains(e, "t.pure:4:5: error: '.sort_by' takes the fields to sort by, e.g. '.sort_by(score desc, name)'"));
  CHECK(contains(e, "t.pure:5:21: error: field 'score' is already a key of this sort"));
  CHECK(contains(e, "t.pure:6:20: error: a key of '.sort_by' is the name of a field, optionally followed by 'desc'"));
  CHECK(!contains(e, "unknown name 'score'"));
  CHECK(contains(e, "t.pure:7:14: error: the items have no field 'nme'\n"));
  CHECK(contains(e, "hint: did you mean 'name'?"));
  CHECK(contains(e, "t.pure:8:13: error: 'desc' orders a key of '.sort_by' only"));
  CHECK(contains(e, "t.pure:10:5: error: '.sort_by(field)' is for lists of items; use '.sort()'"));
  // `desc` and `asc` stay ordinary names
  CHECK(errors_of("fn main() {\n  let desc = 1\n  let asc = desc + 1\n  print(asc)\n}\n") == "");
}

TEST_CASE("checker: clear() and [prefix].clear() of stored lists are writes of events") {
  const char* good = "list rows by (g: text, n: int) { v: int }\nlist s seq { v: int }\n"
                     "event a() { rows.clear(); s.clear() }\nevent b(g: text) { rows[g].clear() }\nfn main() {}\n";
  CHECK(errors_of(good) == "");
  const std::string e = errors_of(R"(list rows by (g: text, n: int) { v: int }
query q() -> int { rows.clear(); return 0 }
fn f() { rows["a"].clear() }
fn main() {
  rows.clear()
  let m = list by (a: int, b: int) { v: int }
  m[1].clear()
}
)");
  CHECK(contains(e, "t.pure:2:24: error: query 'q' changes stored list 'rows'; queries only read"));
  CHECK(contains(e, "t.pure:3:19: error: function 'f' changes stored list 'rows'; only events change stored lists"));
  CHECK(contains(e, "t.pure:5:7: error: main changes stored list 'rows' directly"));
  CHECK(contains(e, "t.pure:7:7: error: a slice has no method 'clear'\n"));
  CHECK(contains(e, "hint: 'm[prefix].clear()' is for stored lists; remove an event list's items with .remove(keys)"));
}

TEST_CASE("checker: m.get(k) is the row item, readable in queries and main") {
  Compiled c("list counters by name: text { next: int = 1 }\nquery peek(n: text) -> int { return counters.get(n).next }\n"
             "fn main() {\n  let row = counters.get(\"a\")\n  print(row.next)\n}\n");
  CHECK_MESSAGE(c.ok(), c.errors());
  CHECK(contains(errors_of("list counters by name: text { next: int = 1 }\nfn main() {\n  let n: text = counters.get(\"a\").next\n}\n"),
                 "t.pure:3:34: error: 'n' is declared as text but the value is int"));
  CHECK(contains(errors_of("list counters by name: text { next: int = 1 }\nfn main() {\n  print(counters.get(1))\n}\n"),
                 "error: argument 1 of '.get' must be text, not int"));
}

TEST_CASE("checker: m.get(k) else DEFAULT needs the fields of a missing row, or a whole row") {
  const char* ok = R"(list stock by item: text { qty: int, note: text }
query q(k: text) -> int { return (stock.get(k) else { qty: -1, note: "" }).qty }
fn main() {
  let a = stock.get("a") else { qty: 0, note: "none" }
  let b = stock.get("b") else a
  let m = list by (x: int, y: int) { n: int }
  print((m.get(1, 2) else { n: 3 }).n)
}
)";
  Compiled c(ok);
  CHECK_MESSAGE(c.ok(), c.errors());
  std::string e = errors_of(R"(list stock by item: text { qty: int, note: text }
fn main() {
  let a = stock.get("a") else { qty: "x", note: "" }
  let b = stock.get("b") else { qty: 1 }
  let c = stock.get("c") else 5
  let d = stock.get("d") else { item: "d", qty: 1, note: "" }
  let s: seq int = []
  let e = s.get(0) else 1
  let f = stock.get("f") else fail "no f"
}
)");
  CHECK(contains(e, "t.pure:3:38: error: field 'qty' must be int, not text\n"));
  CHECK(contains(e, "t.pure:4:31: error: field 'note' is missing from the item\n"));
  CHECK(contains(e, "t.pure:5:31: error: the default of '.get(...) else' is the fields of a missing row, '{ field: value, ... }', or a whole row\n"));
  CHECK(contains(e, "hint: a row of this list is a {item: text, qty: int, note: text}, not int\n"));
  CHECK(contains(e, "t.pure:6:39: error: 'item' is a key: it comes from the index, not the item\n"));
  CHECK(contains(e, "t.pure:8:12: error: '.get' is for keyed lists\n"));
  CHECK(contains(e, "t.pure:9:7: error: 'let ... else' needs a keyed-list lookup like 'list[key]', or '.first()' or '.last()', on the right\n"));
  CHECK(contains(e, "hint: 'let r = list[key] else fail ...' leaves; 'list.get(key) else { field: value, ... }' reads a default row\n"));
}

TEST_CASE("checker: 'try q(args)' gives a query's outcome, in main only, and 'try' stays a usable name") {
  Compiled c(R"(list c by k: int { n: int }
query q(k: int) -> int { return c[k].n }
query all() -> seq int {
  let out: seq int = []
  for r in c { out.push(r.n) }
  return out
}
fn show(o: outcome of int) -> text { if o.ok { return "{o.value}" }; return o.reason }
fn main() {
  let e = try q(1)
  let f: outcome of seq int = try all()
  print(show(e))
  print(show(try q(2)))
  print((try q(3)).ok)
  let try = 3
  print(try + 1)
}
)");
  CHECK_MESSAGE(c.ok(), c.errors());
  std::string e = errors_of(R"(list c by k: int { n: int }
event bump(k: int) { c[k] = { n: 1 } }
query q(k: int) -> int { return c[k].n }
fn f(k: int) -> int { return k }
fn g() -> int {
  let o = try q(1)
  return 0
}
fn main() {
  let a = try bump(1)
  let b = try f(1)
  let d = try sqrt(2.0)
  let e = try q(1)
  let v: int = e
}
)");
  CHECK(contains(e, "t.pure:6:15: error: 'try' is for main: a query called from a function runs inside its caller, and its failure is the caller's\n"));
  CHECK(contains(e, "t.pure:10:15: error: 'try' is not needed here: main's call of event 'bump' already gives its outcome\n"));
  CHECK(contains(e, "hint: drop 'try'; inside an event, 'try bump(...)' catches the inner event's failure\n"));
  CHECK(contains(e, "t.pure:11:15: error: 'try' calls a query or an event and gives its outcome; 'f' is a function\n"));
  CHECK(contains(e, "hint: a function's failure ends main; make it a query to catch it\n"));
  CHECK(contains(e, "t.pure:12:15: error: 'try' calls a query or an event and gives its outcome; 'sqrt' is a standard function\n"));
  CHECK(contains(e, "t.pure:14:16: error: 'v' is declared as int but the value is outcome of int\n"));
}

TEST_CASE("checker: enums are types of fields, keys, parameters, locals and results; members are checked") {
  const char* good = R"(enum Status { open, shipped
  cancelled }
type Order { id: int, status: Status }
const FIRST = Status.open
list orders by id: int { status: Status = FIRST }
list counts by status: Status { n: int = 0 }
fn next(s: Status) -> Status { if s == Status.open { return Status.shipped }; return Status.cancelled }
event ship(id: int) -> Status { orders[id].status = next(orders[id].status); return orders[id].status }
query of(id: int) -> Order { return { id: id, status: orders[id].status } }
fn main() {
  var s: Status = Status.open
  s = next(s)
  let enum = 3
  print("{s} {enum} {s != FIRST}")
  let xs: seq Status = [s, Status.cancelled]
  print(xs)
}
)";
  CHECK(errors_of(good) == "");
  const std::string bad = errors_of(R"(enum Status { open, shipped, cancelled }
fn main() {
  let a = Status.opne
  let b = Status.open + 1
  let c = Status.open < Status.shipped
  let d: int = Status.open
  let e: Status = 0
  let f = Status.open == 1.5
  let g = Status
}
)");
  CHECK(contains(bad, "t.pure:3:17: error: enum 'Status' has no member 'opne'; its members are open, shipped, cancelled\n"));
  CHECK(contains(bad, "hint: did you mean 'open'?"));
  CHECK(contains(bad, "t.pure:4:23: error: cannot use '+' on Status and int\n"));
  CHECK(contains(bad, "t.pure:5:23: error: cannot order Status values with '<'\n"));
  CHECK(contains(bad, "t.pure:6:22: error: 'd' is declared as int but the value is Status\n"));
  CHECK(contains(bad, "t.pure:7:19: error: 'e' is declared as Status but the value is int\n"));
  CHECK(contains(bad, "t.pure:8:23: error: cannot use '==' on Status and num\n"));  // no int literal adapting to num
  CHECK(contains(bad, "t.pure:9:11: error: 'Status' is an enum type, not a value\n"));
  CHECK(contains(bad, "hint: write one of its members, e.g. 'Status.open'"));
  CHECK(contains(errors_of("enum E { }\nfn main() {}"), "t.pure:1:10: error: an enum needs at least one member\n"));
  CHECK(contains(errors_of("enum E { a, b, a }\nfn main() {}"), "t.pure:1:16: error: enum member 'a' appears twice in 'E'\n"));
  CHECK(contains(errors_of("enum E { a }\ntype E { x: int }\nfn main() {}"), "error: type 'E' is declared twice"));
  CHECK(contains(errors_of("enum E { a }\nconst C = E.b\nfn main() {}"), "error: enum 'E' has no member 'b'; its members are a"));
}
