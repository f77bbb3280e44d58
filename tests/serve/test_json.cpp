// tests/serve/test_json.cpp — the JSON writer of serve/ (api_json.cpp, api.h, api_internal.h):
// texts escaped byte by byte (quotes, backslashes, control bytes, bad UTF-8 as U+FFFD), nums in
// Pure's shortest round-trip form with nan and the infinities as strings, and values, items,
// sequences and types nested as replies and the interface write them. Exact bytes throughout.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "tests/support/compile_module.h"

namespace pure::serve {
namespace {

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string json_num(double d) {
  std::string out;
  append_json_num(out, d);
  return out;
}

TEST_CASE("a text: quoted, with quotes, backslashes and control bytes escaped") {
  CHECK(json_string("") == "\"\"");
  CHECK(json_string("plain text") == "\"plain text\"");
  CHECK(json_string("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(json_string("a\\b") == "\"a\\\\b\"");
  CHECK(json_string("line\nnext\r\ttab") == "\"line\\nnext\\r\\ttab\"");
  // the other control bytes, and DEL, as \u00XX in lower case
  CHECK(json_string(std::string_view("\x00\x01\x1f\x7f", 4)) == "\"\\u0000\\u0001\\u001f\\u007f\"");
  CHECK(json_string("/<>&'") == "\"/<>&'\"");  // nothing else is escaped
}

TEST_CASE("a text: well-formed UTF-8 copied, every bad byte one U+FFFD") {
  CHECK(json_string("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  const std::string fffd = "\xef\xbf\xbd";
  CHECK(json_string("a\xff" "b") == "\"a" + fffd + "b\"");              // never a lead byte
  CHECK(json_string("\x80") == "\"" + fffd + "\"");                      // a lone continuation byte
  CHECK(json_string("\xc3") == "\"" + fffd + "\"");                      // cut short at the end
  CHECK(json_string("\xc0\xaf") == "\"" + fffd + fffd + "\"");          // overlong (C0 never leads)
  CHECK(json_string("\xe0\x80\xaf") == "\"" + fffd + fffd + fffd + "\"");  // overlong three-byte form
  CHECK(json_string("\xed\xa0\x80") == "\"" + fffd + fffd + fffd + "\"");  // a surrogate
  CHECK(json_string("\xf4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // past U+10FFFF
}

TEST_CASE("a num: shortest round-trip digits; nan and the infinities as strings") {
  CHECK(json_num(0.0) == "0.0");
  CHECK(json_num(1.5) == "1.5");
  CHECK(json_num(-2.0) == "-2.0");
  CHECK(json_num(0.1) == "0.1");
  CHECK(json_num(1e300) == "1e300");
  CHECK(json_num(std::numeric_limits<double>::quiet_NaN()) == "\"nan\"");
  CHECK(json_num(std::numeric_limits<double>::infinity()) == "\"inf\"");
  CHECK(json_num(-std::numeric_limits<double>::infinity()) == "\"-inf\"");
}

TEST_CASE("an error body: the message escaped") {
  CHECK(error_body("no module 'x\"y'") == "{\"error\":\"no module 'x\\\"y'\"}");
}

// A module whose results cover every kind a reply writes.
constexpr const char* kTypes = R"(type Point { x: num, y: num }
type Pick { sku: text, qty: int }
query point() -> Point { return { x: 1.5, y: 0.0 / 0.0 } }
query picks() -> seq Pick { return [{ sku: "a\"b", qty: 2 }, { sku: "c", qty: -3 }] }
query names() -> seq text { return ["x", "y"] }
query flag() -> bool { return true }
event log_one(p: Pick, points: seq Point) {}
)";

const vm::Function& function(const vm::Program& program, std::string_view name) {
  int index = vm::find_function(program, name);
  REQUIRE(index >= 0);
  return program.functions[static_cast<size_t>(index)];
}

TEST_CASE("values: items, sequences of items and of texts, nested as a query's result") {
  auto program = test::compile_module(kTypes);
  std::string out;
  vm::Value point;
  point.kind = vm::Value::Kind::Item;
  point.items = {vm::Value::of_num(1.5), vm::Value::of_num(std::nan(""))};
  append_value(out, function(*program, "point").result_type, point);
  CHECK(out == "{\"x\":1.5,\"y\":\"nan\"}");

  out.clear();
  vm::Value picks;
  picks.kind = vm::Value::Kind::List;
  for (auto [sku, qty] : {std::pair<const char*, int>{"a\"b", 2}, {"c", -3}}) {
    vm::Value row;
    row.kind = vm::Value::Kind::Item;
    row.items = {vm::Value::of_text(sku), vm::Value::of_int(qty)};
    picks.items.push_back(row);
  }
  append_value(out, function(*program, "picks").result_type, picks);
  CHECK(out == "[{\"sku\":\"a\\\"b\",\"qty\":2},{\"sku\":\"c\",\"qty\":-3}]");

  out.clear();
  vm::Value names;
  names.kind = vm::Value::Kind::List;
  names.items = {vm::Value::of_text("x"), vm::Value::of_text("y")};
  append_value(out, function(*program, "names").result_type, names);
  CHECK(out == "[\"x\",\"y\"]");

  out.clear();
  vm::Value empty;
  empty.kind = vm::Value::Kind::List;
  append_value(out, function(*program, "names").result_type, empty);
  CHECK(out == "[]");

  out.clear();
  append_value(out, function(*program, "flag").result_type, vm::Value::of_bool(true));
  CHECK(out == "true");
}

TEST_CASE("types for the interface: fields nested inside items and sequences") {
  auto program = test::compile_module(kTypes);
  const vm::Function& fn = function(*program, "log_one");
  std::string out;
  append_typed(out, fn.param_names[0], fn.param_types[0]);
  CHECK(out == "{\"name\":\"p\",\"type\":\"Pick\",\"fields\":[{\"name\":\"sku\",\"type\":\"text\"},"
               "{\"name\":\"qty\",\"type\":\"int\"}]}");
  out.clear();
  append_typed(out, fn.param_names[1], fn.param_types[1]);
  CHECK(out == "{\"name\":\"points\",\"type\":\"seq Point\",\"fields\":[{\"name\":\"x\",\"type\":\"num\"},"
               "{\"name\":\"y\",\"type\":\"num\"}]}");
  out.clear();
  append_typed(out, "result", function(*program, "names").result_type);
  CHECK(out == "{\"name\":\"result\",\"type\":\"seq text\"}");
}

TEST_CASE("stored-list cells: each column type, a num cell's nan as a string") {
  std::string out;
  append_cell(out, rt::ColType::Int, static_cast<rt::Cell>(int64_t{-42}));
  out += ',';
  append_cell(out, rt::ColType::Bool, 1);
  out += ',';
  append_cell(out, rt::ColType::Num, std::bit_cast<rt::Cell>(0.25));
  out += ',';
  append_cell(out, rt::ColType::Num, std::bit_cast<rt::Cell>(-std::numeric_limits<double>::infinity()));
  CHECK(out == "-42,true,0.25,\"-inf\"");
  CHECK(std::string(col_name(rt::ColType::Int)) == "int");
  CHECK(std::string(col_name(rt::ColType::Num)) == "num");
  CHECK(std::string(col_name(rt::ColType::Bool)) == "bool");
  CHECK(std::string(col_name(rt::ColType::Text)) == "text");
}

}  // namespace
}  // namespace pure::serve
