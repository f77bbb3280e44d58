// tests/serve/test_args.cpp — the argument decoders of serve/ (api_args.cpp, decode_args): a
// request body into an event's or a query's arguments, for each parameter type, through both the
// fast path and the Boost.JSON document; every bad body answered with the message a 400 carries,
// checked word for word.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "tests/support/compile_module.h"

namespace pure::serve {
namespace {

constexpr const char* kModule = R"(type Point { x: num, y: num }
type Pick { sku: text, qty: int }
event take_int(n: int) {}
event take_num(x: num) {}
event take_bool(b: bool) {}
event take_text(s: text) {}
event take_point(p: Point) {}
event take_picks(picks: seq Pick) {}
event take_texts(names: seq text) {}
event take_two(n: int, s: text) {}
event take_none() {}
)";

struct Decoded {
  std::string error;
  std::vector<vm::Value> args;
};

class Decoder {
 public:
  Decoder() : program_(test::compile_module(kModule)) {}
  Decoded operator()(std::string_view fn_name, std::string_view body) const {
    int index = vm::find_function(*program_, fn_name);
    REQUIRE(index >= 0);
    Decoded d;
    d.error = decode_args(program_->functions[static_cast<size_t>(index)], body, d.args);
    return d;
  }

 private:
  std::unique_ptr<vm::Program> program_;
};

TEST_CASE("int: a JSON integer in int's range; anything else named with the range or the type") {
  Decoder decode;
  Decoded d = decode("take_int", R"({"n": -9223372036854775808})");
  REQUIRE(d.error == "");
  REQUIRE(d.args.size() == 1);
  CHECK(d.args[0].kind == vm::Value::Kind::Int);
  CHECK(d.args[0].i == INT64_MIN);
  CHECK(decode("take_int", R"({"n":42})").args.at(0).i == 42);
  CHECK(decode("take_int", R"({"n": 9223372036854775808})").error ==
        "parameter 'n': expected int in -9223372036854775808..9223372036854775807, got 9223372036854775808");
  CHECK(decode("take_int", R"({"n": 1e26})").error ==
        "parameter 'n': expected int in -9223372036854775808..9223372036854775807, got 1e26");
  CHECK(decode("take_int", R"({"n": 1.5})").error == "parameter 'n': expected int (a JSON integer), got the number 1.5");
  CHECK(decode("take_int", R"({"n": "7"})").error == "parameter 'n': expected int (a JSON integer), got a string");
  CHECK(decode("take_int", R"({"n": null})").error == "parameter 'n': expected int (a JSON integer), got null");
}

TEST_CASE("num: any JSON number, or the strings nan, inf and -inf; an overflowing literal refused") {
  Decoder decode;
  CHECK(decode("take_num", R"({"x": 0.25})").args.at(0).n == 0.25);
  CHECK(decode("take_num", R"({"x": 3})").args.at(0).n == 3.0);
  CHECK(decode("take_num", R"({"x": -1e-3})").args.at(0).n == -0.001);
  CHECK(std::isnan(decode("take_num", R"({"x": "nan"})").args.at(0).n));
  CHECK(decode("take_num", R"({"x": "-inf"})").args.at(0).n == -INFINITY);
  CHECK(decode("take_num", R"({"x": 1e999})").error ==
        "parameter 'x': the number overflows num (above 1.7976931348623157e308); send the string \"inf\" or \"-inf\" "
        "for an infinity");
  CHECK(decode("take_num", R"({"x": -1e999})").error ==
        "parameter 'x': the number overflows num (below -1.7976931348623157e308); send the string \"inf\" or \"-inf\" "
        "for an infinity");
  CHECK(decode("take_num", R"({"x": "infinity"})").error == "parameter 'x': expected num (a JSON number), got a string");
  CHECK(decode("take_num", R"({"x": true})").error == "parameter 'x': expected num (a JSON number), got true");
}

TEST_CASE("bool and text") {
  Decoder decode;
  Decoded b = decode("take_bool", R"({"b": false})");
  REQUIRE(b.error == "");
  CHECK(b.args.at(0).kind == vm::Value::Kind::Bool);
  CHECK(b.args.at(0).i == 0);
  CHECK(decode("take_bool", R"({"b": 1})").error == "parameter 'b': expected bool (true or false), got the integer 1");
  Decoded t = decode("take_text", R"({"s": "caf\u00e9 \"q\"\n"})");
  REQUIRE(t.error == "");
  CHECK(t.args.at(0).kind == vm::Value::Kind::Text);
  CHECK(t.args.at(0).text == "caf\xc3\xa9 \"q\"\n");
  CHECK(decode("take_text", R"({"s": ["a"]})").error == "parameter 's': expected text (a JSON string), got an array");
}

TEST_CASE("an item: an object with every field, or an array of the fields in order") {
  Decoder decode;
  for (const char* body : {R"({"p": {"y": 2, "x": 1.5}})", R"({"p": [1.5, 2]})"}) {
    Decoded d = decode("take_point", body);
    REQUIRE(d.error == "");
    CHECK(d.args.at(0).kind == vm::Value::Kind::Item);
    REQUIRE(d.args.at(0).items.size() == 2);
    CHECK(d.args[0].items[0].n == 1.5);  // in declaration order, whatever the object's
    CHECK(d.args[0].items[1].n == 2.0);
  }
  CHECK(decode("take_point", R"({"p": {"x": 1}})").error == "parameter 'p': missing field 'y' (num)");
  CHECK(decode("take_point", R"({"p": {"x": 1, "y": 2, "z": 3}})").error == "parameter 'p': Point has no field 'z'");
  CHECK(decode("take_point", R"({"p": [1]})").error == "parameter 'p': Point has 2 fields, got an array of 1");
  CHECK(decode("take_point", R"({"p": [1, 2, 3]})").error == "parameter 'p': Point has 2 fields, got an array of 3");
  CHECK(decode("take_point", R"({"p": {"x": 1, "y": "2"}})").error ==
        "parameter 'p.y': expected num (a JSON number), got a string");
  CHECK(decode("take_point", R"({"p": 5})").error ==
        "parameter 'p': expected Point (an object with every field, or an array of the fields in order), got the "
        "integer 5");
}

TEST_CASE("a seq: an array of values, or of items; a bad element named by its index") {
  Decoder decode;
  Decoded d = decode("take_picks", R"({"picks": [{"sku": "a", "qty": 1}, ["b", 2]]})");
  REQUIRE(d.error == "");
  CHECK(d.args.at(0).kind == vm::Value::Kind::List);
  REQUIRE(d.args[0].items.size() == 2);
  CHECK(d.args[0].items[1].items.at(0).text == "b");
  CHECK(d.args[0].items[1].items.at(1).i == 2);
  CHECK(decode("take_picks", R"({"picks": []})").args.at(0).items.empty());
  CHECK(decode("take_picks", R"({"picks": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2.5}]})").error ==
        "parameter 'picks[1].qty': expected int (a JSON integer), got the number 2.5");
  CHECK(decode("take_picks", R"({"picks": {"sku": "a"}})").error ==
        "parameter 'picks': expected seq Pick (an array of objects or of rows), got an object");
  Decoded texts = decode("take_texts", R"({"names": ["x", "y"]})");
  REQUIRE(texts.error == "");
  REQUIRE(texts.args.at(0).items.size() == 2);
  CHECK(texts.args[0].items[1].text == "y");
  CHECK(decode("take_texts", R"({"names": ["x", 1]})").error ==
        "parameter 'names[1]': expected text (a JSON string), got the integer 1");
  CHECK(decode("take_texts", R"({"names": "x"})").error ==
        "parameter 'names': expected seq text (a JSON array), got a string");
}

TEST_CASE("the body: an object of the parameters by name; missing, unknown and bad JSON named") {
  Decoder decode;
  Decoded d = decode("take_two", R"({"s": "a", "n": 1})");
  REQUIRE(d.error == "");
  REQUIRE(d.args.size() == 2);
  CHECK(d.args[0].i == 1);  // in the parameters' order
  CHECK(d.args[1].text == "a");
  CHECK(decode("take_none", "").error == "");  // an empty body is {}
  CHECK(decode("take_none", " \r\n").error == "");
  CHECK(decode("take_two", R"({"n": 1})").error == "missing parameter 's' (text) of take_two(n: int, s: text)");
  CHECK(decode("take_two", R"({"n": 1, "s": "a", "t": 0})").error == "unknown parameter 't': take_two(n: int, s: text)");
  CHECK(decode("take_two", "[1, \"a\"]").error ==
        "the body must be a JSON object with the parameters by name: take_two(n: int, s: text), got an array");
  CHECK(decode("take_none", "{} x").error.starts_with("bad JSON at byte 3: "));
  CHECK(decode("take_two", R"({"n": 1, "s": )").error.starts_with("bad JSON at byte 14: "));
}

}  // namespace
}  // namespace pure::serve
