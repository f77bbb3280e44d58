// serve/api_args.cpp — pure-serve's argument decoders: a request body into an event's or a
// query's arguments (decode_args, api_internal.h). A common body goes straight into values
// (FastArgs); any other is parsed with Boost.JSON and checked against the parameters' types, each
// problem named by its path in the document.
#include "serve/api.h"

#include <boost/json.hpp>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "base/assert.h"
#include "runtime/text.h"
#include "stdlib/numtext.h"
#include "serve/api_internal.h"

namespace pure::serve {

namespace json = boost::json;
using Kind = ir::ValueType::Kind;

namespace {

// ---- reading JSON arguments -----------------------------------------------------------------------

std::string json_kind(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return v.get_bool() ? "true" : "false";
    case json::kind::int64: return "the integer " + std::to_string(v.get_int64());
    case json::kind::uint64: return "the integer " + std::to_string(v.get_uint64());
    case json::kind::double_: {
      std::string s = "the number ";
      append_json_num(s, v.get_double());
      return s;
    }
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "?";
}

constexpr const char* kIntRange = "expected int in -9223372036854775808..9223372036854775807";

// A number past int's range as a message shows it: shortest digits, in e-notation (1e26,
// -9.223372036854776e18: not a 19-digit text that looks exact but is rounded).
std::string beyond_int(double d) {
  if (std::isinf(d)) return d < 0 ? "a number below -1.7976931348623157e308" : "a number above 1.7976931348623157e308";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string s(buf, end);
  if (size_t e = s.find("e+"); e != std::string::npos) s.erase(e + 1, 1);
  return s;
}

std::string expected(const std::string& what, const ir::ValueType& t, const json::value& v, const char* note = "") {
  return what + ": expected " + ir::value_type_name(t) + note + ", got " + json_kind(v);
}

// Where a value is in the arguments (lines[3].qty), written out only for a message: decoding a
// long array makes no strings.
struct Path {
  const Path* parent = nullptr;
  std::string_view name;  // a parameter or field
  size_t index = 0;       // an element, when name is empty
  std::string str() const {
    std::string s = parent ? parent->str() : std::string();
    if (name.empty()) return s + "[" + std::to_string(index) + "]";
    return parent ? s + "." + std::string(name) : std::string(name);
  }
};

std::string decode(const Path& path, const ir::ValueType& t, const json::value& v, vm::Value& out);

// Decodes v as an item named name with these fields (an item parameter, or a row of a seq of items):
// an object with every field, or an array of the fields in order.
std::string decode_item(const Path& path, std::string_view name, const std::vector<std::string>& names,
                        const std::vector<ir::ValueType>& fields, const json::value& v, vm::Value& out) {
  auto what = [&path] { return "parameter '" + path.str() + "'"; };
  out.kind = vm::Value::Kind::Item;
  out.items.resize(fields.size());
  if (v.is_array()) {  // the fields by position, in declaration order: [7, 1, 5] for { i_id, supply_w_id, quantity }
    const json::array& a = v.get_array();
    if (a.size() != fields.size())
      return what() + ": " + std::string(name) + " has " + std::to_string(fields.size()) + " fields, got an array of " +
             std::to_string(a.size());
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string e = decode(Path{&path, names[i]}, fields[i], a[i], out.items[i]);
      if (!e.empty()) return e;
    }
    return "";
  }
  if (!v.is_object())
    return what() + ": expected " + std::string(name) + " (an object with every field, or an array of the fields in order), got " +
           json_kind(v);
  const json::object& o = v.get_object();
  for (size_t i = 0; i < fields.size(); ++i) {
    const json::value* f = o.if_contains(names[i]);
    if (!f) return what() + ": missing field '" + names[i] + "' (" + ir::value_type_name(fields[i]) + ")";
    std::string e = decode(Path{&path, names[i]}, fields[i], *f, out.items[i]);
    if (!e.empty()) return e;
  }
  if (o.size() != fields.size())
    for (const auto& kv : o)
      if (std::find(names.begin(), names.end(), std::string_view(kv.key())) == names.end())
        return what() + ": " + std::string(name) + " has no field '" + std::string(kv.key()) + "'";
  return "";
}

// Decodes v as a value of type t into out (a default Value); "" or the problem (naming the
// parameter, e.g. 'l.label' or 'lines[3].qty', and the expected type).
std::string decode(const Path& path, const ir::ValueType& t, const json::value& v, vm::Value& out) {
  auto what = [&path] { return "parameter '" + path.str() + "'"; };
  switch (t.kind) {
    case Kind::Int:
      if (!t.members.empty()) {  // an enum: one of its members' names
        std::string all;
        for (const std::string& m : t.members) all += (all.empty() ? "\"" : ", \"") + m + "\"";
        if (!v.is_string()) return what() + ": expected " + t.name + " (one of " + all + "), got " + json_kind(v);
        auto m = std::find(t.members.begin(), t.members.end(), std::string_view(v.get_string()));
        if (m == t.members.end())
          return what() + ": " + t.name + " has no member \"" + std::string(v.get_string()) + "\"; its members are " + all;
        out.kind = vm::Value::Kind::Int;
        out.i = m - t.members.begin();
        return "";
      }
      if (v.is_int64()) {
        out.kind = vm::Value::Kind::Int;
        out.i = v.get_int64();
        return "";
      }
      if (v.is_uint64()) return what() + ": " + kIntRange + ", got " + std::to_string(v.get_uint64());
      if (v.is_double() && !(std::fabs(v.get_double()) < 0x1p63))  // a whole number past int's range
        return what() + ": " + kIntRange + ", got " + beyond_int(v.get_double());
      return expected(what(), t, v, " (a JSON integer)");
    case Kind::Num:
      out.kind = vm::Value::Kind::Num;
      if (v.is_double() && !std::isfinite(v.get_double()))  // a literal too large for a double: never infinity
        return what() + ": the number " + std::string(v.get_double() < 0 ? "overflows num (below -" : "overflows num (above ") +
               "1.7976931348623157e308); send the string \"inf\" or \"-inf\" for an infinity";
      if (v.is_double()) out.n = v.get_double();
      else if (v.is_int64()) out.n = static_cast<double>(v.get_int64());
      else if (v.is_uint64()) out.n = static_cast<double>(v.get_uint64());
      else if (v.is_string() && (v.get_string() == "nan" || v.get_string() == "inf" || v.get_string() == "-inf"))
        numtext::parse_num(std::string_view(v.get_string().data(), v.get_string().size()), out.n);
      else
        return expected(what(), t, v, " (a JSON number)");
      return "";
    case Kind::Bool:
      if (!v.is_bool()) return expected(what(), t, v, " (true or false)");
      out.kind = vm::Value::Kind::Bool;
      out.i = v.get_bool();
      return "";
    case Kind::Text:
      if (!v.is_string()) return expected(what(), t, v, " (a JSON string)");
      out.kind = vm::Value::Kind::Text;
      out.text.assign(v.get_string().data(), v.get_string().size());
      return "";
    case Kind::Item: return decode_item(path, t.name, t.field_names, t.fields, v, out);
    case Kind::Seq: {
      if (!v.is_array())
        return expected(what(), t, v, t.row_is_item ? " (an array of objects or of rows)" : " (a JSON array)");
      const json::array& a = v.get_array();
      out.kind = vm::Value::Kind::List;
      out.items.resize(a.size());
      std::string_view row = t.name.starts_with("seq ") ? std::string_view(t.name).substr(4) : std::string_view(t.name);
      for (size_t i = 0; i < a.size(); ++i) {
        std::string e = t.row_is_item ? decode_item(Path{&path, {}, i}, row, t.field_names, t.fields, a[i], out.items[i])
                                      : decode(Path{&path, {}, i}, t.fields[0], a[i], out.items[i]);
        if (!e.empty()) return e;
      }
      return "";
    }
    default:
      return what() + ": parameters of type " + ir::value_type_name(t) + " cannot be passed over HTTP";
  }
}

std::string signature(const vm::Function& fn) {
  std::string s = fn.name + "(";
  for (size_t i = 0; i < fn.param_names.size(); ++i) {
    if (i) s += ", ";
    s += fn.param_names[i] + ": " + ir::value_type_name(fn.param_types[i]);
  }
  return s + ")";
}

// Decodes the parsed body (an object, or anything else to be refused) into the arguments.
std::string decode_doc(const vm::Function& fn, const json::value& doc, std::vector<vm::Value>& args) {
  if (!doc.is_object())
    return "the body must be a JSON object with the parameters by name: " + signature(fn) + ", got " + json_kind(doc);
  const json::object& o = doc.get_object();
  args.resize(fn.param_names.size());
  for (size_t i = 0; i < fn.param_names.size(); ++i) {
    const json::value* v = o.if_contains(fn.param_names[i]);
    if (!v) return "missing parameter '" + fn.param_names[i] + "' (" + ir::value_type_name(fn.param_types[i]) + ") of " + signature(fn);
    std::string e = decode(Path{nullptr, fn.param_names[i]}, fn.param_types[i], *v, args[i]);
    if (!e.empty()) return e;
  }
  for (const auto& kv : o)
    if (std::find(fn.param_names.begin(), fn.param_names.end(), std::string_view(kv.key())) == fn.param_names.end())
      return "unknown parameter '" + std::string(kv.key()) + "': " + signature(fn);
  return "";
}

// ---- the fast path: a common JSON body straight into values ----------------------------------------
//
// Most bodies are small objects of ints, ASCII texts and arrays (a TPC-C New-Order's lines);
// parsing them into a Boost.JSON document first cost more than the rest of a request. This
// reads such a body directly into the arguments, by their types, and accepts only what it is
// sure of: an object whose keys are the parameters, each once, in any order, without escapes;
// ints of at most 18 digits (for num parameters too: an int converts exactly as the document's
// int64 would); true and false; texts of printable ASCII without escapes; seqs as arrays; items
// as arrays of their fields (the compact row). Anything else (a fraction, an escape, a byte over
// 0x7F, an object for an item, a duplicate, a missing or unknown key, a syntax error) gives up
// and the document path decodes the body, with its error messages. So it never accepts what the
// document path would refuse, and never decodes to other values (checked builds run both).
class FastArgs {
 public:
  FastArgs(std::string_view body) : p_(body.data()), end_(body.data() + body.size()) {}

  bool decode(const vm::Function& fn, std::vector<vm::Value>& args) {
    size_t n = fn.param_names.size();
    if (n > 64) return false;
    args.assign(n, vm::Value{});
    uint64_t seen = 0;
    skip_ws();
    if (!eat('{')) return false;
    skip_ws();
    if (!eat('}')) {
      for (;;) {
        std::string_view key;
        if (!plain_string(key)) return false;
        size_t i = 0;
        while (i < n && fn.param_names[i] != key) ++i;
        if (i == n || (seen >> i & 1)) return false;
        seen |= uint64_t{1} << i;
        skip_ws();
        if (!eat(':')) return false;
        skip_ws();
        if (!value(fn.param_types[i], args[i], 0)) return false;
        skip_ws();
        if (eat('}')) break;
        if (!eat(',')) return false;
        skip_ws();
      }
    }
    skip_ws();
    return p_ == end_ && seen == (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1);
  }

 private:
  static constexpr int kMaxDepth = 16;  // well inside the document path's 64

  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool eat(char c) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    if (static_cast<size_t>(end_ - p_) < w.size() || std::string_view(p_, w.size()) != w) return false;
    p_ += w.size();
    return true;
  }
  // "..." of printable ASCII, no escapes
  bool plain_string(std::string_view& out) {
    if (!eat('"')) return false;
    const char* start = p_;
    while (p_ < end_) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c < 0x20 || c > 0x7e || c == '\\') return false;
      ++p_;
    }
    return false;
  }
  // -?(0|[1-9][0-9]*) of at most 18 digits, not followed by a fraction or an exponent; not -0
  bool integer(int64_t& out) {
    bool negative = eat('-');
    const char* start = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    size_t digits = static_cast<size_t>(p_ - start);
    if (digits == 0 || digits > 18 || (start[0] == '0' && (digits > 1 || negative))) return false;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    int64_t v = 0;  // 18 digits cannot overflow
    for (const char* d = start; d < p_; ++d) v = v * 10 + (*d - '0');
    out = negative ? -v : v;
    return true;
  }
  bool item(const std::vector<ir::ValueType>& fields, vm::Value& out, int depth) {
    if (!eat('[')) return false;
    out.kind = vm::Value::Kind::Item;
    out.items.resize(fields.size());
    for (size_t i = 0; i < fields.size(); ++i) {
      skip_ws();
      if (i) {
        if (!eat(',')) return false;
        skip_ws();
      }
      if (!value(fields[i], out.items[i], depth + 1)) return false;
    }
    skip_ws();
    return eat(']');
  }
  bool value(const ir::ValueType& t, vm::Value& out, int depth) {
    if (depth > kMaxDepth) return false;
    switch (t.kind) {
      case Kind::Int:
        if (!t.members.empty()) return false;  // an enum's names: the general decoder
        out.kind = vm::Value::Kind::Int;
        return integer(out.i);
      case Kind::Num: {
        int64_t v;
        if (!integer(v)) return false;
        out.kind = vm::Value::Kind::Num;
        out.n = static_cast<double>(v);
        return true;
      }
      case Kind::Bool:
        out.kind = vm::Value::Kind::Bool;
        if (word("true")) out.i = 1;
        else if (word("false")) out.i = 0;
        else return false;
        return true;
      case Kind::Text: {
        std::string_view v;
        if (!plain_string(v)) return false;
        out.kind = vm::Value::Kind::Text;
        out.text.assign(v.data(), v.size());
        return true;
      }
      case Kind::Item: return item(t.fields, out, depth);
      case Kind::Seq: {
        if (!eat('[')) return false;
        out.kind = vm::Value::Kind::List;
        skip_ws();
        if (eat(']')) return true;
        out.items.reserve(16);  // a New-Order's lines (5 to 15) in one allocation, not five growths
        for (;;) {
          out.items.emplace_back();
          if (!(t.row_is_item ? item(t.fields, out.items.back(), depth + 1) : value(t.fields[0], out.items.back(), depth + 1)))
            return false;
          skip_ws();
          if (eat(']')) return true;
          if (!eat(',')) return false;
          skip_ws();
        }
      }
      default: return false;
    }
  }

  const char* p_;
  const char* end_;
};

bool same_values(const vm::Value& a, const vm::Value& b) {
  if (a.kind != b.kind || a.items.size() != b.items.size()) return false;
  switch (a.kind) {
    case vm::Value::Kind::Int:
    case vm::Value::Kind::Bool:
      if (a.i != b.i) return false;
      break;
    case vm::Value::Kind::Num:
      if (std::bit_cast<uint64_t>(a.n) != std::bit_cast<uint64_t>(b.n)) return false;
      break;
    case vm::Value::Kind::Text:
      if (a.text != b.text) return false;
      break;
    default: break;
  }
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!same_values(a.items[i], b.items[i])) return false;
  return true;
}


// Parses the body into the function's arguments; "" or the problem. The parsed document lives in
// an arena on the stack (spilling to the heap for large bodies) and is dropped whole: parsing a
// TPC-C New-Order's body into default storage was one malloc and free per JSON value.
std::string decode_args_document(const vm::Function& fn, std::string_view body, std::vector<vm::Value>& args) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return decode_doc(fn, json::object(), args);  // an empty body is {}
  alignas(std::max_align_t) unsigned char arena[8192];
  unsigned char scratch[1024];  // the parser's own stack
  json::monotonic_resource mr(arena, sizeof arena);
  json::parse_options opts;
  opts.max_depth = 64;
  json::stream_parser parser(json::storage_ptr(), opts, scratch, sizeof scratch);
  parser.reset(json::storage_ptr(&mr));
  boost::system::error_code ec;
  size_t used = parser.write_some(body.data(), body.size(), ec);
  if (!ec) {
    if (used < body.size()) ec = json::error::extra_data;
    else parser.finish(ec);
  }
  if (ec) return "bad JSON at byte " + std::to_string(used) + ": " + ec.message();
  json::value doc = parser.release();
  return decode_doc(fn, doc, args);
}

}  // namespace

// Parses the body into the function's arguments; "" or the problem: the fast path when it can,
// else the document.
std::string decode_args(const vm::Function& fn, std::string_view body, std::vector<vm::Value>& args) {
  if (FastArgs(body).decode(fn, args)) {
#if PURE_CHECKS
    std::vector<vm::Value> slow;
    PURE_ASSERT(decode_args_document(fn, body, slow).empty());
    PURE_ASSERT(slow.size() == args.size());
    for (size_t i = 0; i < args.size(); ++i) PURE_ASSERT(same_values(args[i], slow[i]));
#endif
    return "";
  }
  args.clear();
  return decode_args_document(fn, body, args);
}

}  // namespace pure::serve
