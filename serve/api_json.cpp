// serve/api_json.cpp — pure-serve's JSON writer: texts, nums (in Pure's shortest round-trip
// style), error bodies, and values, rows, stored-list cells and the interface's types as JSON
// (api.h, api_internal.h). Replies are written by hand, not through Boost.JSON, so that nums come
// out as Pure prints them.
#include "serve/api.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "runtime/text.h"
#include "stdlib/numtext.h"
#include "serve/api_internal.h"

namespace pure::serve {

using Kind = ir::ValueType::Kind;

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

}  // namespace

void append_value(std::string& out, const ir::ValueType& t, const vm::Value& v) {
  switch (t.kind) {
    case Kind::Void: out += "null"; return;
    case Kind::Int:  // an enum by its member's name
      if (!t.members.empty() && v.i >= 0 && static_cast<uint64_t>(v.i) < t.members.size())
        append_json_string(out, t.members[static_cast<size_t>(v.i)]);
      else
        out += std::to_string(v.i);
      return;
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

void append_column(std::string& out, const ir::ListDesc& d, size_t col, rt::Cell cell) {
  if (col < d.members.size() && !d.members[col].empty() && d.cols[col] == rt::ColType::Int && cell < d.members[col].size())
    return append_json_string(out, d.members[col][cell]);
  append_cell(out, d.cols[col], cell);
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
void append_members(std::string& out, const std::vector<std::string>& members) {
  out += ",\"members\":[";
  for (size_t i = 0; i < members.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, members[i]);
  }
  out += ']';
}

void append_typed(std::string& out, std::string_view name, const ir::ValueType& t) {
  out += "{\"name\":";
  append_json_string(out, name);
  out += ",\"type\":";
  append_json_string(out, ir::value_type_name(t));
  if (!t.members.empty()) append_members(out, t.members);
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

}  // namespace pure::serve
