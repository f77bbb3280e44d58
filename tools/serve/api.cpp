// tools/serve/api.cpp — pure-serve's routes (api.h). Boost.JSON parses request bodies; replies
// are written by hand so that nums come out in Pure's shortest round-trip style.
#include "tools/serve/api.h"

#include <boost/json.hpp>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <unistd.h>

#include "runtime/text.h"
#include "stdlib/numtext.h"
#include "tools/serve/console.h"
#include "tools/serve/log.h"

namespace pure::serve {

namespace json = boost::json;
using Kind = ir::ValueType::Kind;
using Clock = std::chrono::steady_clock;

// ---- writing JSON -------------------------------------------------------------------------------

void append_json_string(std::string& out, std::string_view s) {
  static const char* const kHex = "0123456789abcdef";
  out += '"';
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 15];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: copied when well formed, else each bad byte becomes U+FFFD.
    size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    bool ok = len != 0 && i + len <= n;
    if (ok) {
      for (size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) ok = false;
    }
    if (ok) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f))
        ok = false;  // overlong, surrogate or past U+10FFFF
    }
    if (ok) {
      out.append(s.data() + i, len);
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  out += '"';
}

void append_json_num(std::string& out, double d) {
  std::string t = numtext::format_num(d);
  if (t == "nan" || t == "inf" || t == "-inf") {
    out += '"';
    out += t;
    out += '"';
  } else {
    out += t;
  }
}

std::string error_body(std::string_view message) {
  std::string out = "{\"error\":";
  append_json_string(out, message);
  out += '}';
  return out;
}

namespace {

void append_value(std::string& out, const ir::ValueType& t, const vm::Value& v);

void append_row(std::string& out, const ir::ValueType& list, const vm::Value& row) {
  if (list.kind == Kind::Seq && !list.row_is_item) return append_value(out, list.fields[0], row);
  out += '{';
  for (size_t c = 0; c < list.fields.size() && c < row.items.size(); ++c) {
    if (c) out += ',';
    append_json_string(out, list.field_names[c]);
    out += ':';
    append_value(out, list.fields[c], row.items[c]);
  }
  out += '}';
}

void append_value(std::string& out, const ir::ValueType& t, const vm::Value& v) {
  switch (t.kind) {
    case Kind::Void: out += "null"; return;
    case Kind::Int: out += std::to_string(v.i); return;
    case Kind::Num: append_json_num(out, v.n); return;
    case Kind::Bool: out += v.i ? "true" : "false"; return;
    case Kind::Text: append_json_string(out, v.text); return;
    case Kind::Item:
      out += '{';
      for (size_t i = 0; i < t.fields.size() && i < v.items.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, t.field_names[i]);
        out += ':';
        append_value(out, t.fields[i], v.items[i]);
      }
      out += '}';
      return;
    case Kind::Seq:
    case Kind::Keyed:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ',';
        append_row(out, t, v.items[i]);
      }
      out += ']';
      return;
  }
}

const char* col_name(rt::ColType c) {
  switch (c) {
    case rt::ColType::Int: return "int";
    case rt::ColType::Num: return "num";
    case rt::ColType::Bool: return "bool";
    case rt::ColType::Text: return "text";
  }
  return "?";
}

void append_cell(std::string& out, rt::ColType c, rt::Cell cell) {
  switch (c) {
    case rt::ColType::Int: out += std::to_string(static_cast<int64_t>(cell)); return;
    case rt::ColType::Bool: out += cell ? "true" : "false"; return;
    case rt::ColType::Num: {
      double d;
      std::memcpy(&d, &cell, sizeof d);
      append_json_num(out, d);
      return;
    }
    case rt::ColType::Text: append_json_string(out, reinterpret_cast<const rt::Text*>(cell)->view()); return;
  }
}

// A list's first key cell as `after` writes it (42, bob, true), for the prefix filter.
std::string_view first_key_text(rt::ColType c, rt::Cell cell, std::string& buffer) {
  switch (c) {
    case rt::ColType::Text: return reinterpret_cast<const rt::Text*>(cell)->view();
    case rt::ColType::Bool: return cell ? "true" : "false";
    case rt::ColType::Int: buffer = std::to_string(static_cast<int64_t>(cell)); return buffer;
    case rt::ColType::Num:
      buffer.clear();
      append_json_num(buffer, std::bit_cast<double>(cell));
      return buffer;
  }
  return {};
}

// The type as JSON for the interface: {"name":..,"type":..} plus the fields of items and lists.
void append_typed(std::string& out, std::string_view name, const ir::ValueType& t) {
  out += "{\"name\":";
  append_json_string(out, name);
  out += ",\"type\":";
  append_json_string(out, ir::value_type_name(t));
  if (t.kind == Kind::Item || t.kind == Kind::Keyed || (t.kind == Kind::Seq && t.row_is_item)) {
    if (t.kind == Kind::Keyed) out += ",\"key_count\":" + std::to_string(t.key_count);
    out += ",\"fields\":[";
    for (size_t i = 0; i < t.fields.size(); ++i) {
      if (i) out += ',';
      append_typed(out, t.field_names[i], t.fields[i]);
    }
    out += ']';
  }
  out += '}';
}

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

std::string decode_args_document(const vm::Function& fn, std::string_view body, std::vector<vm::Value>& args);

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

// ---- small helpers ----------------------------------------------------------------------------------

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      int h = hex(in[i + 1]), l = hex(in[i + 2]);
      if (h < 0 || l < 0) return false;
      out += static_cast<char>(h * 16 + l);
      i += 2;
    } else if (in[i] == '+') {
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

Response json_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response error(int status, std::string_view message) { return json_response(status, error_body(message)); }

// allow: "GET, HEAD" or "POST" (named "GET" or "POST" in the message)
Response method_not_allowed(std::string_view method, std::string_view what, const char* allow) {
  std::string_view named = std::string_view(allow).substr(0, std::string_view(allow).find(','));
  Response r = error(405, std::string(what) + " takes " + std::string(named) + ", not " + std::string(method));
  r.allow = allow;
  return r;
}

uint64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

const char* route_label(Route r) {
  switch (r) {
    case Route::Event: return "event";
    case Route::Query: return "query";
    case Route::Interface: return "interface";
    case Route::List: return "list";
    case Route::Health: return "health";
    case Route::Metrics: return "metrics";
    case Route::Other: return "other";
    case Route::Http: return "http";
    case Route::Source: return "source";
    case Route::Console: return "console";
    case Route::kCount: break;
  }
  return "?";
}

// Whether a module takes events, and why not: "serving", "recovering", "failed" (its data
// directory did not recover: the others are served all the same) or "unhealthy" (its log failed).
std::pair<const char*, std::string> module_state(const Module& m) {
  switch (m.state.load(std::memory_order_acquire)) {
    case Module::State::Recovering: return {"recovering", ""};
    case Module::State::Failed: return {"failed", m.failure};
    case Module::State::Serving: break;
  }
  if (!m.owner->healthy()) return {"unhealthy", m.owner->unhealthy_reason()};
  return {"serving", ""};
}

// A Prometheus label value: backslash, double quote and line feed escaped.
std::string label_value(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

// ---- the API ----------------------------------------------------------------------------------------

void Api::Latency::add(uint64_t us) {
  size_t b = 0;
  while (b < kBoundsUs.size() && us > kBoundsUs[b]) ++b;
  buckets[b].fetch_add(1, std::memory_order_relaxed);
  count.fetch_add(1, std::memory_order_relaxed);
  sum_us.fetch_add(us, std::memory_order_relaxed);
}

Api::Api(std::vector<Module*> modules, ApiOptions options)
    : modules_(std::move(modules)),
      options_(std::move(options)),
      reads_need_token_(options_.tokens.reads_need_token()),
      timeout_why_("cancelled: it ran longer than the time limit of " + std::to_string(options_.query_timeout_ms) +
                   " ms (--query-timeout-ms); ask for less, or raise --query-timeout-ms"),
      queries_(options_.query_threads, options_.max_query_queue) {}

size_t Api::status_index(int status) {
  for (size_t i = 0; i + 1 < kStatuses.size(); ++i)
    if (kStatuses[i] == status) return i;
  return kStatuses.size() - 1;  // any other status
}

void Api::count(Route route, int status, uint64_t micros) {
  requests_[static_cast<size_t>(route)][status_index(status)].fetch_add(1, std::memory_order_relaxed);
}

Module* Api::find(std::string_view name) const {
  for (Module* m : modules_)
    if (m->name == name) return m;
  return nullptr;
}

void Api::finish(Route route, std::string_view target, const Response& r, Clock::time_point start) {
  uint64_t us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
  count(route, r.status);
  if (route == Route::Event) event_latency_.add(us);
  if (route == Route::Query) query_latency_.add(us);
  if (us >= options_.slow_us)
    log_line("slow_request", {{"route", jstr(route_label(route))}, {"target", jstr(target)}, {"status", jint(r.status)},
                              {"micros", jint(static_cast<int64_t>(us))}});
  else if (options_.log_requests)
    log_line("request", {{"route", jstr(route_label(route))}, {"target", jstr(target)}, {"status", jint(r.status)},
                         {"micros", jint(static_cast<int64_t>(us))}});
}

void Api::handle(const Request& request, Respond respond) {
  Clock::time_point start = Clock::now();
  auto answer = [&](Route route, Response r) {
    finish(route, request.target, r, start);
    respond(std::move(r));
  };
  std::string_view target = request.target, query_string;
  if (size_t q = target.find('?'); q != std::string_view::npos) {
    query_string = target.substr(q + 1);
    target = target.substr(0, q);
  }
  const std::string_view method = request.method;
  bool get = method == "GET" || method == "HEAD";  // HEAD: as GET; the HTTP layer drops the body
  // Who may ask (access.h): only the Host names this server serves (a page whose name was rebound
  // to this address sends its own), only its own pages' Origin.
  if (!request.host.empty() && !options_.hosts.allows(request.host))
    return answer(Route::Other, error(421, "this server does not serve the host '" + std::string(request.host) +
                                               "' (it serves " + options_.hosts.list() +
                                               "; start it with --allow-host NAME to serve another name)"));
  if (!request.origin.empty() && !same_origin(request.origin, request.host, options_.tls))
    return answer(Route::Other, error(403, "cross-origin requests are refused: Origin '" + std::string(request.origin) +
                                               "' is not this server's (" + (options_.tls ? "https://" : "http://") +
                                               std::string(request.host) + ")"));
  if (target == "/health") {  // open to all: a load balancer's probe carries no token
    if (!get) return answer(Route::Health, method_not_allowed(method, "/health", "GET, HEAD"));
    return answer(Route::Health, health());
  }
  Tokens::Check auth;
  if (options_.tokens.writes_need_token()) auth = options_.tokens.check(request.authorization);
  bool reads_need_token = reads_need_token_;
  if (target == "/metrics") {
    if (!get) return answer(Route::Metrics, method_not_allowed(method, "/metrics", "GET, HEAD"));
    if (reads_need_token && !(auth.scopes & kScopeRead))
      return answer(Route::Metrics, refuse_token(auth, kScopeRead, "/metrics"));
    Response r;
    r.body = metrics();
    r.content_type = "text/plain; version=0.0.4";
    return answer(Route::Metrics, std::move(r));
  }
  if (Response r; console_route(method, target, request.if_none_match, r)) return answer(Route::Console, std::move(r));
  constexpr std::string_view kPrefix = "/v1/";
  if (target.substr(0, kPrefix.size()) != kPrefix)
    return answer(Route::Other, error(404, "no route " + std::string(target) +
                                               ": the API is under /v1/MODULE, /health and /metrics, the console at /"));
  // Every read needs a token when read tokens exist: refused before anything of the module shows.
  if (reads_need_token && !(auth.scopes & kScopeRead))
    return answer(Route::Other, refuse_token(auth, kScopeRead, std::string(method) + " " + std::string(target)));
  std::vector<std::string_view> parts = split(target.substr(kPrefix.size()), '/');
  Module* m = find(parts[0]);
  if (!m) {
    std::string names;
    for (Module* x : modules_) names += (names.empty() ? "" : ", ") + x->name;
    return answer(Route::Other, error(404, "no module '" + std::string(parts[0]) + "' (serving: " + names + ")"));
  }
  if (parts.size() == 1) {
    if (!get) return answer(Route::Interface, method_not_allowed(method, "/v1/" + m->name, "GET, HEAD"));
    return answer(Route::Interface, interface(*m));
  }
  if (parts.size() == 3 && parts[1] == "lists") {
    if (!get) return answer(Route::List, method_not_allowed(method, "a list page", "GET, HEAD"));
    if (!m->serving()) return answer(Route::List, not_serving(*m));
    return answer(Route::List, list_page(*m, parts[2], query_string));
  }
  if (parts.size() != 2)
    return answer(Route::Other, error(404, "no route " + std::string(target) + ": use /v1/" + m->name + "/NAME or /v1/" +
                                               m->name + "/lists/LIST"));
  int index = parts[1].empty() ? -1 : vm::find_function(*m->program, parts[1]);
  // GET .../source is the module's text; events and queries take POST, so one named source
  // stays reachable.
  if (parts[1] == "source" && (get || index < 0)) {
    if (!get) return answer(Route::Source, method_not_allowed(method, "/v1/" + m->name + "/source", "GET, HEAD"));
    return answer(Route::Source, source(*m));
  }
  const vm::Function* fn = index >= 0 ? &m->program->functions[index] : nullptr;
  if (!fn || (fn->kind != FuncKind::Event && fn->kind != FuncKind::Query))
    return answer(Route::Other, error(404, "module " + m->name + " has no event or query '" + std::string(parts[1]) + "'"));
  Route route = fn->kind == FuncKind::Event ? Route::Event : Route::Query;
  if (method != "POST")
    return answer(route, method_not_allowed(method, std::string(fn->kind == FuncKind::Event ? "event " : "query ") + fn->name, "POST"));
  // A body a form or another site's page can send without asking (text/plain, a form's types)
  // never runs anything: application/json makes a browser ask first (a CORS preflight, refused).
  if (!is_json_content_type(request.content_type))
    return answer(route, error(415, std::string(fn->kind == FuncKind::Event ? "event " : "query ") + fn->name +
                                        " takes a JSON body: send 'Content-Type: application/json' (got " +
                                        (request.content_type.empty() ? std::string("none")
                                                                      : "'" + std::string(request.content_type) + "'") +
                                        ")"));
  if (!m->serving()) return answer(route, not_serving(*m));
  if (route == Route::Query) return query(*m, *fn, static_cast<uint32_t>(index), request, std::move(respond), start);
  event(*m, *fn, static_cast<uint32_t>(index), request, auth, std::move(respond), start);
}

Response Api::refuse_token(const Tokens::Check& check, uint8_t needed, std::string_view what) const {
  std::string scope = scope_name(needed);
  std::string prefix = std::string(what) + " needs a token of scope " + scope + ": ";
  Response r;
  std::string challenge = "Bearer realm=\"pure-serve\"";
  switch (check.outcome) {
    case Tokens::Outcome::Missing:
      r = error(401, prefix + "none was sent (send the header 'Authorization: Bearer TOKEN')");
      challenge += ", scope=\"" + scope + "\"";
      break;
    case Tokens::Outcome::WrongScheme:
      r = error(401, prefix + "the Authorization header must use the Bearer scheme ('Authorization: Bearer TOKEN')");
      challenge += ", scope=\"" + scope + "\"";
      break;
    case Tokens::Outcome::Invalid:
      r = error(401, prefix + "the token sent is not valid");
      challenge += ", error=\"invalid_token\", error_description=\"the token is not valid\"";
      break;
    case Tokens::Outcome::Valid:
      r = error(403, prefix + "the token sent has scope " + scope_name(check.scopes));
      challenge += ", error=\"insufficient_scope\", scope=\"" + scope + "\"";
      break;
  }
  r.headers.emplace_back("WWW-Authenticate", std::move(challenge));
  return r;
}

void Api::event(Module& m, const vm::Function& fn, uint32_t index, const Request& request, const Tokens::Check& auth,
                Respond respond, Clock::time_point start) {
  auto answer = [&](Response r) {
    finish(Route::Event, request.target, r, start);
    respond(std::move(r));
  };
  if (options_.tokens.writes_need_token() && !(auth.scopes & kScopeWrite))
    return answer(refuse_token(auth, kScopeWrite, "event " + fn.name));
  if (!m.owner->healthy()) return answer(error(503, "module " + m.name + " is unhealthy: " + m.owner->unhealthy_reason()));
  std::vector<vm::Value> args;
  if (std::string e = decode_args(fn, request.body, args); !e.empty()) return answer(error(400, e));
  m.owner->submit(index, std::move(args),
                  [this, &fn, respond = std::move(respond), target = std::string(request.target), start](host::EventReply reply) {
                    Response r;
                    switch (reply.kind) {
                      case host::EventReply::Kind::Committed: {
                        // The event is committed (and durable) whatever happens to its reply: a
                        // result too large for --max-reply, or memory refused, is said with its seq.
                        std::string committed = "event " + fn.name + " committed as seq " + std::to_string(reply.sequence);
                        if (reply.result_bytes_at_least) {
                          r = too_large(committed + "; its result", reply.result_bytes_at_least);
                          break;
                        }
                        if (!reply.result_error.empty()) {
                          r = error(503, committed + "; its result cannot be sent: " + reply.result_error);
                          break;
                        }
                        try {
                          std::string body = "{\"ok\":true,\"seq\":" + std::to_string(reply.sequence);
                          if (fn.result_type.kind != Kind::Void) {  // the result the event declares
                            body += ",\"result\":";
                            append_value(body, fn.result_type, reply.value);
                          }
                          body += "}";
                          if (body.size() > options_.max_reply)
                            r = too_large(committed + "; its result", body.size());
                          else
                            r = json_response(200, std::move(body));
                        } catch (const std::bad_alloc&) {
                          r = error(503, committed + "; its result cannot be sent: out of memory: the system refused "
                                                     "the memory to build the reply");
                        }
                        break;
                      }
                      case host::EventReply::Kind::Failed: {
                        std::string body = "{\"ok\":false,\"reason\":";
                        append_json_string(body, reply.reason);
                        r = json_response(409, body + "}");
                        break;
                      }
                      case host::EventReply::Kind::Unavailable: r = error(503, reply.reason); break;
                    }
                    finish(Route::Event, target, r, start);
                    respond(std::move(r));
                  });
}

Response Api::too_large(const std::string& what, uint64_t bytes) const {
  (void)bytes;  // a lower bound that stopped counting just past the limit: not worth printing
  return error(413, what + " is larger than the reply limit of " + std::to_string(options_.max_reply) +
                        " bytes of JSON (--max-reply); ask for less (a page, a count), or raise --max-reply");
}

// The query runs on a query thread; a query whose result, or whose reply, runs out of memory is
// that query's failure (503), never the server's.
void Api::query(Module& m, const vm::Function& fn, uint32_t index, const Request& request, Respond respond,
                Clock::time_point start) {
  std::vector<vm::Value> args;
  if (std::string e = decode_args(fn, request.body, args); !e.empty()) {
    Response r = error(400, e);
    finish(Route::Query, request.target, r, start);
    return respond(std::move(r));
  }
  // One copy of what the query thread needs: the request's views die when this returns.
  struct Call {
    std::vector<vm::Value> args;
    std::string target;
    Respond respond;
    std::shared_ptr<CancelFlag> cancel;  // the time limit's, and the HTTP layer's (client gone)
  };
  auto call = std::make_shared<Call>(Call{std::move(args), std::string(request.target), std::move(respond),
                                          request.cancel ? request.cancel : std::make_shared<CancelFlag>(nullptr)});
  auto reply = [this, call, start](Response r) {
    finish(Route::Query, call->target, r, start);
    call->respond(std::move(r));
  };
  QueryPool::Job job;
  job.run = [this, &m, &fn, index, call, reply] {
    Response r;
    try {
      uint64_t watched = 0;  // the time limit counts from the start on a query thread
      if (options_.query_timeout_ms)
        watched = watch_.watch(call->cancel, Clock::now() + std::chrono::milliseconds(options_.query_timeout_ms),
                               timeout_why_.c_str());
      r = run_query(m, fn, index, call->args, *call->cancel);
      if (watched) watch_.unwatch(watched);
    } catch (const std::bad_alloc&) {
      r = error(503, "query " + fn.name + ": out of memory: the system refused the memory to answer it");
    }
    reply(std::move(r));
  };
  job.refuse = [reply, &fn] { reply(error(503, "query " + fn.name + " was not run: the server is shutting down")); };
  if (!queries_.try_submit(std::move(job))) {
    Response r = error(503, "query " + fn.name + " refused: " + std::to_string(queries_.max_queue()) +
                                " queries are already waiting for the " + std::to_string(queries_.threads()) +
                                " query threads (--max-query-queue, --query-threads); try again later");
    r.headers.emplace_back("Retry-After", "1");
    reply(std::move(r));
  }
}

Response Api::run_query(Module& m, const vm::Function& fn, uint32_t index, const std::vector<vm::Value>& args,
                          const CancelFlag& cancel) {
  vm::CallResult r = m.owner->query(index, args, &cancel);
  if (r.cancelled && r.error) {  // the time limit, or the client gone (whose answer nobody reads)
    (cancel.load(std::memory_order_acquire) == kClientGone ? cancelled_client_gone_ : cancelled_timeout_)
        .fetch_add(1, std::memory_order_relaxed);
    return error(503, "query " + fn.name + " " + r.error->message);
  }
  if (!r.ok) {
    std::string body = "{\"reason\":";
    // As an event's reason reads: "runtime error at LINE:COL: message".
    std::string reason = r.reason;
    if (r.error)
      reason = "runtime error at " + std::to_string(r.error->loc.line) + ":" + std::to_string(r.error->loc.col) + ": " +
               r.error->message;
    append_json_string(body, reason);
    return json_response(409, body + "}");
  }
  if (r.result_bytes_at_least) return too_large("the result of query " + fn.name, r.result_bytes_at_least);
  if (!r.result_error.empty()) return error(503, "query " + fn.name + ": " + r.result_error);
  std::string body = "{\"result\":";
  append_value(body, fn.result_type, r.value);
  r.value = vm::Value{};  // its memory back before the reply's is copied
  body += "}";
  if (body.size() > options_.max_reply) return too_large("the result of query " + fn.name, body.size());
  return json_response(200, std::move(body));
}

Response Api::interface(const Module& m) const {
  std::string out = "{\"module\":";
  append_json_string(out, m.name);
  auto [state, reason] = module_state(m);  // the console shows why a module takes no events
  out += ",\"state\":\"" + std::string(state) + "\"";
  if (!reason.empty()) {
    out += ",\"reason\":";
    append_json_string(out, reason);
  }
  out += options_.tokens.writes_need_token() ? ",\"events_need_token\":true" : ",\"events_need_token\":false";
  out += reads_need_token_ ? ",\"reads_need_token\":true" : ",\"reads_need_token\":false";
  for (FuncKind kind : {FuncKind::Event, FuncKind::Query}) {
    out += kind == FuncKind::Event ? ",\"events\":[" : ",\"queries\":[";
    bool first = true;
    for (const vm::Function& fn : m.program->functions) {
      if (fn.kind != kind) continue;
      if (!first) out += ',';
      first = false;
      out += "{\"name\":";
      append_json_string(out, fn.name);
      out += ",\"params\":[";
      for (size_t i = 0; i < fn.param_names.size(); ++i) {
        if (i) out += ',';
        append_typed(out, fn.param_names[i], fn.param_types[i]);
      }
      out += ']';
      if (kind == FuncKind::Query || fn.result_type.kind != Kind::Void) {  // an event's only when it declares one
        out += ",\"result\":";
        append_typed(out, "result", fn.result_type);
      }
      out += '}';
    }
    out += ']';
  }
  out += ",\"lists\":[";
  // row counts: O(1) each; null while the module recovers (it has no state yet)
  std::shared_ptr<const rt::Snapshot> snap = m.serving() ? m.owner->snapshot() : nullptr;
  for (size_t i = 0; i < m.stored.size(); ++i) {
    const ir::ListDesc& d = m.stored[i];
    if (i) out += ',';
    out += "{\"name\":";
    append_json_string(out, d.name);
    out += d.sequence ? ",\"kind\":\"seq\"" : ",\"kind\":\"keyed\"";
    out += ",\"count\":" + (snap ? std::to_string(snap->list(i).count()) : std::string("null"));
    for (int part = 0; part < 2; ++part) {
      out += part == 0 ? ",\"key\":[" : ",\"fields\":[";
      size_t from = part == 0 ? 0 : d.key_count, to = part == 0 ? d.key_count : d.cols.size();
      for (size_t c = from; c < to; ++c) {
        if (c != from) out += ',';
        out += "{\"name\":";
        append_json_string(out, d.names[c]);
        out += ",\"type\":\"";
        out += col_name(d.cols[c]);
        out += "\"}";
      }
      out += ']';
    }
    out += '}';
  }
  out += "]}";
  return json_response(200, std::move(out));
}

Response Api::source(const Module& m) const {
  std::string out = "{\"module\":";
  append_json_string(out, m.name);
  out += ",\"source\":";
  append_json_string(out, m.source);
  out += '}';
  return json_response(200, std::move(out));
}

Response Api::list_page(const Module& m, std::string_view list, std::string_view query_string) const {
  size_t li = 0;
  while (li < m.stored.size() && m.stored[li].name != list) ++li;
  if (li == m.stored.size()) return error(404, "module " + m.name + " has no stored list '" + std::string(list) + "'");
  const ir::ListDesc& d = m.stored[li];
  int64_t limit = 100;
  std::string after, prefix;
  bool has_after = false, has_prefix = false;
  if (!query_string.empty()) {
    for (std::string_view kv : split(query_string, '&')) {
      if (kv.empty()) continue;
      size_t eq = kv.find('=');
      std::string key, value;
      if (!percent_decode(kv.substr(0, eq), key) ||
          !percent_decode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1), value))
        return error(400, "bad percent-encoding in the query string");
      if (key == "limit") {
        if (!numtext::parse_int(value, limit) || limit < 1 || limit > 1000)
          return error(400, "limit: expected a whole number from 1 to 1000, got '" + value + "'");
      } else if (key == "after") {
        after = value;
        has_after = true;
      } else if (key == "prefix") {
        if (d.sequence) return error(400, "prefix: the sequence " + d.name + " has no key to filter by");
        prefix = value;
        has_prefix = !value.empty();
      } else {
        return error(400, "unknown query parameter '" + key + "': a list page takes limit, after and prefix");
      }
    }
  }
  // The key to start after: one key column as written; several as a JSON array; a sequence's
  // position as an int.
  std::vector<rt::Cell> after_key;
  std::vector<rt::Text*> texts;
  struct ReleaseTexts {
    std::vector<rt::Text*>& t;
    ~ReleaseTexts() {
      for (rt::Text* x : t) rt::text_release(x);
    }
  } release{texts};
  std::vector<rt::ColType> key_cols(d.cols.begin(), d.cols.begin() + d.key_count);
  if (d.sequence) key_cols = {rt::ColType::Int};
  if (has_after) {
    auto cell_of = [&](rt::ColType c, const json::value* jv, std::string_view raw, std::string& e) -> rt::Cell {
      int64_t i = 0;
      switch (c) {
        case rt::ColType::Int:
          if (jv ? !jv->is_int64() : !numtext::parse_int(raw, i)) e = "after: expected int";
          return static_cast<rt::Cell>(jv && jv->is_int64() ? jv->get_int64() : i);
        case rt::ColType::Bool:
          if (jv ? !jv->is_bool() : (raw != "true" && raw != "false")) e = "after: expected true or false";
          return jv ? (jv->is_bool() && jv->get_bool()) : raw == "true";
        case rt::ColType::Text: {
          if (jv && !jv->is_string()) e = "after: expected text";
          std::string_view s = jv && jv->is_string() ? std::string_view(jv->get_string().data(), jv->get_string().size()) : raw;
          texts.push_back(rt::text_new(s));
          return reinterpret_cast<rt::Cell>(texts.back());
        }
        case rt::ColType::Num: e = "after: num keys are not supported"; return 0;
      }
      return 0;
    };
    std::string e;
    if (key_cols.size() == 1) {
      after_key.push_back(cell_of(key_cols[0], nullptr, after, e));
    } else {
      boost::system::error_code ec;
      json::value doc = json::parse(after, ec);
      if (ec || !doc.is_array() || doc.get_array().size() != key_cols.size())
        return error(400, "after: the list's key has " + std::to_string(key_cols.size()) +
                              " columns; pass them as a JSON array, e.g. after=[1,\"a\"]");
      for (size_t c = 0; c < key_cols.size() && e.empty(); ++c)
        after_key.push_back(cell_of(key_cols[c], &doc.get_array()[c], "", e));
    }
    if (!e.empty()) return error(400, e + ", got '" + after + "'");
  }

  std::shared_ptr<const rt::Snapshot> snap = m.owner->snapshot();
  const rt::ListReader& reader = snap->list(li);
  const rt::ListShape& shape = *m.program->stored_shapes[li];
  std::unique_ptr<rt::Cursor> cursor;
  bool skip_keys = false;  // rows at or before after_key still to be skipped
  if (!has_after) {
    cursor = reader.scan();
  } else if (d.sequence) {
    int64_t p = static_cast<int64_t>(after_key[0]);
    cursor = reader.range(p == std::numeric_limits<int64_t>::max() ? p : p + 1, std::numeric_limits<int64_t>::max());
  } else if (key_cols[0] == rt::ColType::Int && static_cast<int64_t>(after_key[0]) != std::numeric_limits<int64_t>::max()) {
    cursor = reader.range(static_cast<int64_t>(after_key[0]), std::numeric_limits<int64_t>::max());
    skip_keys = true;
  } else {
    cursor = reader.scan();  // no seek by a text key yet: skip from the start
    skip_keys = true;
  }
  std::string out = "{\"list\":";
  append_json_string(out, d.name);
  out += ",\"count\":" + std::to_string(reader.count()) + ",\"rows\":[";
  int64_t n = 0;
  std::string key_buffer;
  const rt::Cell* last = nullptr;
  int64_t last_position = -1;
  bool more = false;
  for (; cursor->valid(); cursor->next()) {
    const rt::Cell* row = cursor->row();
    if (skip_keys) {
      if (shape.compare_keys(row, after_key.data(), d.key_count) <= 0) continue;
      skip_keys = false;
    }
    if (has_prefix) {
      std::string_view key = first_key_text(d.cols[0], row[0], key_buffer);
      if (key.substr(0, prefix.size()) != prefix) {
        // Text keys are in byte order: past the prefix, no later key has it.
        if (d.cols[0] == rt::ColType::Text && key > std::string_view(prefix)) break;
        continue;
      }
    }
    if (n == limit) {
      more = true;
      break;
    }
    if (n++) out += ',';
    out += '{';
    for (size_t c = 0; c < d.cols.size(); ++c) {
      if (c) out += ',';
      append_json_string(out, d.names[c]);
      out += ':';
      append_cell(out, d.cols[c], row[c]);
    }
    out += '}';
    last = row;
    last_position = cursor->position();
  }
  // Int keys beyond the range's end (INT64_MAX itself) are not in range(); they come from prefix.
  if (!more && !d.sequence && has_after && key_cols[0] == rt::ColType::Int &&
      static_cast<int64_t>(after_key[0]) != std::numeric_limits<int64_t>::max()) {
    rt::Cell top = static_cast<rt::Cell>(std::numeric_limits<int64_t>::max());
    for (auto c = reader.prefix(&top, 1); c->valid(); c->next()) {
      const rt::Cell* row = c->row();
      if (has_prefix && first_key_text(d.cols[0], row[0], key_buffer).substr(0, prefix.size()) != prefix) continue;
      if (n == limit) {
        more = true;
        break;
      }
      if (n++) out += ',';
      out += '{';
      for (size_t k = 0; k < d.cols.size(); ++k) {
        if (k) out += ',';
        append_json_string(out, d.names[k]);
        out += ':';
        append_cell(out, d.cols[k], row[k]);
      }
      out += '}';
      last = row;
    }
  }
  out += "],\"next\":";
  if (!more || !last) {
    out += "null";
  } else if (d.sequence) {
    append_json_string(out, std::to_string(last_position));
  } else if (d.key_count == 1) {
    std::string k;
    if (d.cols[0] == rt::ColType::Text) k = std::string(reinterpret_cast<const rt::Text*>(last[0])->view());
    else if (d.cols[0] == rt::ColType::Bool) k = last[0] ? "true" : "false";
    else k = std::to_string(static_cast<int64_t>(last[0]));
    append_json_string(out, k);
  } else {
    std::string k = "[";
    for (size_t c = 0; c < d.key_count; ++c) {
      if (c) k += ',';
      append_cell(k, d.cols[c], last[c]);
    }
    append_json_string(out, k + "]");
  }
  out += '}';
  return json_response(200, std::move(out));
}

Response Api::not_serving(const Module& m) const {
  if (m.state.load(std::memory_order_acquire) == Module::State::Failed)
    return error(503, "module " + m.name + " did not recover: " + m.failure);
  return error(503, "module " + m.name + " is recovering (" + std::to_string(m.recovery_records.load()) +
                        " records replayed so far); try again shortly");
}

Response Api::health() const {
  bool all = true;
  std::string mods = "{";
  for (size_t i = 0; i < modules_.size(); ++i) {
    const Module& m = *modules_[i];
    if (i) mods += ',';
    append_json_string(mods, m.name);
    mods += ':';
    auto [state, reason] = module_state(m);
    std::string_view said = state;
    all = all && said == "serving";
    append_json_string(mods, said == "failed"      ? "recovery failed: " + reason
                             : said == "unhealthy" ? "unhealthy: " + reason
                                                   : std::string(said));
  }
  mods += '}';
  return json_response(all ? 200 : 503, std::string("{\"ok\":") + (all ? "true" : "false") + ",\"modules\":" + mods + "}");
}

bool Api::healthy() const {
  for (const Module* m : modules_)
    if (!m->serving() || !m->owner->healthy()) return false;
  return true;
}

std::string Api::metrics() const {
  std::string out;
  auto line = [&](const std::string& name, const std::string& labels, uint64_t value) {
    out += name;
    if (!labels.empty()) out += "{" + labels + "}";
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  };
  out += "# HELP pure_requests_total HTTP requests answered, by route and status.\n# TYPE pure_requests_total counter\n";
  for (size_t r = 0; r < static_cast<size_t>(Route::kCount); ++r)
    for (size_t s = 0; s < kStatuses.size(); ++s) {
      uint64_t v = requests_[r][s].load(std::memory_order_relaxed);
      if (v == 0) continue;
      std::string status = kStatuses[s] ? std::to_string(kStatuses[s]) : "other";
      line("pure_requests_total", std::string("route=\"") + route_label(static_cast<Route>(r)) + "\",status=\"" + status + "\"", v);
    }
  auto histogram = [&](const char* name, const char* help, const Latency& h) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
    uint64_t cumulative = 0;
    for (size_t b = 0; b < h.buckets.size(); ++b) {
      cumulative += h.buckets[b].load(std::memory_order_relaxed);
      std::string le;
      if (b < Latency::kBoundsUs.size()) {
        le = numtext::format_num(static_cast<double>(Latency::kBoundsUs[b]) / 1e6);
      } else {
        le = "+Inf";
      }
      out += std::string(name) + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    char sum[64];
    std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(h.sum_us.load()) / 1e6);
    out += std::string(name) + "_sum " + sum + "\n";
    out += std::string(name) + "_count " + std::to_string(h.count.load()) + "\n";
  };
  histogram("pure_event_seconds", "Time from an event request to its reply (durable), seconds.", event_latency_);
  histogram("pure_query_seconds", "Time to answer a query request, seconds.", query_latency_);
  out += "# HELP pure_queries_running Queries running on the query threads.\n# TYPE pure_queries_running gauge\n"
         "pure_queries_running " + std::to_string(queries_.running()) + "\n";
  out += "# HELP pure_queries_cancelled_total Queries cancelled while running: past --query-timeout-ms (timeout), or their "
         "client gone (client_gone).\n# TYPE pure_queries_cancelled_total counter\n"
         "pure_queries_cancelled_total{reason=\"timeout\"} " + std::to_string(cancelled_timeout_.load()) + "\n"
         "pure_queries_cancelled_total{reason=\"client_gone\"} " + std::to_string(cancelled_client_gone_.load()) + "\n";
  out += "# HELP pure_queries_queued Queries waiting for a query thread.\n# TYPE pure_queries_queued gauge\n"
         "pure_queries_queued " + std::to_string(queries_.queued()) + "\n";
  out += "# HELP pure_query_threads The query threads (--query-threads).\n# TYPE pure_query_threads gauge\n"
         "pure_query_threads " + std::to_string(queries_.threads()) + "\n";
  // Per module, from the owner and its durability; a module still recovering has no owner yet and
  // reports only pure_module_healthy 0 and its recovery progress.
  std::vector<std::pair<const Module*, host::OwnerStats>> served;
  for (const Module* m : modules_)
    if (m->serving()) served.emplace_back(m, m->owner->stats());
  auto per_module = [&](const char* name, const char* help, const char* type, auto get) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (auto& [m, s] : served) line(name, "module=\"" + m->name + "\"", get(s, *m));
  };
  out += "# HELP pure_events_total Events by outcome: committed (durable), failed (rolled back), unavailable (refused).\n"
         "# TYPE pure_events_total counter\n";
  for (auto& [m, s] : served) {
    std::string mod = "module=\"" + m->name + "\"";
    line("pure_events_total", mod + ",outcome=\"committed\"", s.committed);
    line("pure_events_total", mod + ",outcome=\"failed\"", s.failed);
    line("pure_events_total", mod + ",outcome=\"unavailable\"", s.unavailable);
  }
  per_module("pure_batches_total", "Batches the owner ran (each: the events that had arrived).", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.batches; });
  per_module("pure_queue_events", "Events waiting for the owner.", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.queued; });
  per_module("pure_visible_sequence", "Sequence number of the last event visible to queries.", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.visible_sequence; });
  per_module("pure_memory_bytes",
             "Bytes held against the module's memory budget: its state and structure (events and queries add what "
             "they allocate while they run).",
             "gauge", [](const host::OwnerStats& s, const Module&) { return s.memory_bytes; });
  per_module("pure_memory_budget_bytes", "The module's memory budget (--max-memory).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.memory_budget; });
  per_module("pure_state_bytes", "Bytes the stored rows need (cells and texts).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.state_bytes; });
  per_module("pure_structure_bytes", "Bytes of store structure beyond the rows (nodes, slack, pools).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.structure_bytes; });
  per_module("pure_snapshots_held",
             "Distinct snapshots the host holds: the visible one, those of batches waiting to be durable, one a "
             "checkpoint is written from when no longer visible (not those queries hold while they run).",
             "gauge", [](const host::OwnerStats& s, const Module&) { return s.snapshots_held + s.durability.snapshots_held; });
  per_module("pure_log_records_total", "Events written to the log.", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.durability.log.records; });
  per_module("pure_log_bursts_total", "Log bursts (group commits: one write run and, with --sync always, one fdatasync).",
             "counter", [](const host::OwnerStats& s, const Module&) { return s.durability.log.bursts; });
  per_module("pure_log_bytes_total", "Bytes appended to log segments, headers included.", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.durability.log.bytes; });
  per_module("pure_log_segments_created_total", "Log segments created.", "counter",
             [](const host::OwnerStats& s, const Module&) { return s.durability.log.segments_created; });
  out += "# HELP pure_fsync_seconds fdatasync of log segments (each burst with --sync always, each roll, close), seconds.\n"
         "# TYPE pure_fsync_seconds histogram\n";
  for (auto& [m, s] : served) {
    const host::LogStats& l = s.durability.log;
    std::string mod = "module=\"" + m->name + "\"";
    uint64_t cumulative = 0;
    for (size_t b = 0; b < l.sync_buckets.size(); ++b) {
      cumulative += l.sync_buckets[b];
      std::string le = b < host::kSyncBoundsUs.size()
                           ? numtext::format_num(static_cast<double>(host::kSyncBoundsUs[b]) / 1e6)
                           : std::string("+Inf");
      out += "pure_fsync_seconds_bucket{" + mod + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    char sum[64];
    std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(l.sync_us_total) / 1e6);
    out += "pure_fsync_seconds_sum{" + mod + "} " + sum + "\n";
    out += "pure_fsync_seconds_count{" + mod + "} " + std::to_string(l.syncs) + "\n";
  }
  out += "# HELP pure_checkpoints_total Checkpoints this process wrote, by outcome (a failed one loses nothing).\n"
         "# TYPE pure_checkpoints_total counter\n";
  for (auto& [m, s] : served) {
    std::string mod = "module=\"" + m->name + "\"";
    line("pure_checkpoints_total", mod + ",outcome=\"written\"", s.durability.checkpoints);
    line("pure_checkpoints_total", mod + ",outcome=\"failed\"", s.durability.checkpoint_failures);
  }
  per_module("pure_checkpoint_sequence", "The newest checkpoint holds events 1..this (0: none).", "gauge",
             [](const host::OwnerStats& s, const Module&) { return s.durability.checkpoint_sequence; });
  out += "# HELP pure_checkpoint_age_seconds Seconds since the newest checkpoint was written (or found at start); "
         "absent when there is none.\n# TYPE pure_checkpoint_age_seconds gauge\n";
  for (auto& [m, s] : served) {
    if (s.durability.checkpoint_age_seconds < 0) continue;
    char age[64];
    std::snprintf(age, sizeof age, "%.3f", s.durability.checkpoint_age_seconds);
    out += "pure_checkpoint_age_seconds{module=\"" + m->name + "\"} " + age + "\n";
  }
  out += "# HELP pure_recovery_records Log records replayed by the start's recovery (so far, while recovering).\n"
         "# TYPE pure_recovery_records gauge\n";
  for (const Module* m : modules_) line("pure_recovery_records", "module=\"" + m->name + "\"", m->recovery_records.load());
  out += "# HELP pure_recovery_seconds Seconds the start's recovery took.\n# TYPE pure_recovery_seconds gauge\n";
  for (auto& [m, s] : served) {
    char secs[64];
    std::snprintf(secs, sizeof secs, "%.6f", m->recovery.seconds);
    out += "pure_recovery_seconds{module=\"" + m->name + "\"} " + secs + "\n";
  }
  out += "# HELP pure_module_healthy 1 when the module takes events; 0 while recovering, after its recovery failed or "
         "after its log failed.\n"
         "# TYPE pure_module_healthy gauge\n";
  for (const Module* m : modules_)
    line("pure_module_healthy", "module=\"" + m->name + "\"", m->serving() && m->owner->healthy() ? 1 : 0);
  out += "# HELP pure_module_unhealthy 1 for each module that takes no events, with its state (failed: its data "
         "directory did not recover; unhealthy: its log failed) and the reason.\n"
         "# TYPE pure_module_unhealthy gauge\n";
  for (const Module* m : modules_) {
    auto [state, reason] = module_state(*m);
    if (!reason.empty())
      line("pure_module_unhealthy",
           "module=\"" + m->name + "\",state=\"" + state + "\",reason=\"" + label_value(reason) + "\"", 1);
  }
  out += "# HELP pure_connections Open HTTP connections.\n# TYPE pure_connections gauge\n";
  line("pure_connections", "", static_cast<uint64_t>(std::max<int64_t>(0, connections_.load())));
  if (const host::MemoryPool* pool = options_.memory_pool.get()) {
    out += "# HELP pure_memory_total_bytes Bytes all modules' states hold against --max-memory-total.\n"
           "# TYPE pure_memory_total_bytes gauge\n";
    line("pure_memory_total_bytes", "", pool->held.load());
    out += "# HELP pure_memory_total_budget_bytes The memory budget of all modules together (--max-memory-total).\n"
           "# TYPE pure_memory_total_budget_bytes gauge\n";
    line("pure_memory_total_budget_bytes", "", pool->limit);
  }
  out += "# HELP pure_resident_bytes Resident memory of the process.\n# TYPE pure_resident_bytes gauge\n";
  line("pure_resident_bytes", "", resident_bytes());
  out += "# HELP pure_uptime_seconds Seconds since the server started.\n# TYPE pure_uptime_seconds gauge\n";
  line("pure_uptime_seconds", "",
       static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_).count()));
  return out;
}

}  // namespace pure::serve
