// serve/api_internal.h — what the files of pure-serve's API (api.cpp, api_json.cpp,
// api_args.cpp, api_lists.cpp, api_metrics.cpp) share and nothing else includes: values and
// stored-list cells as JSON, the argument decoder, the answers' helpers and the names of routes
// and module states.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "serve/api.h"

namespace pure::serve {

// ---- the JSON writer (api_json.cpp) --------------------------------------------------------------

void append_value(std::string& out, const ir::ValueType& t, const vm::Value& v);
const char* col_name(rt::ColType c);
void append_cell(std::string& out, rt::ColType c, rt::Cell cell);
// A stored list's cell in column `col` of d: an enum column's cell as its member's name.
// ,"members":["a","b"]: an enum's members, in an interface's type (the names its values are sent as).
void append_members(std::string& out, const std::vector<std::string>& members);
void append_column(std::string& out, const ir::ListDesc& d, size_t col, rt::Cell cell);
// A list's first key cell as `after` writes it (42, bob, true), for the prefix filter.
std::string_view first_key_text(rt::ColType c, rt::Cell cell, std::string& buffer);
// The type as JSON for the interface: {"name":..,"type":..} plus the fields of items and lists.
void append_typed(std::string& out, std::string_view name, const ir::ValueType& t);

// ---- the argument decoders (api_args.cpp) --------------------------------------------------------

// Parses the body into the function's arguments; "" or the problem.
std::string decode_args(const vm::Function& fn, std::string_view body, std::vector<vm::Value>& args);

// ---- the answers (api.cpp) -----------------------------------------------------------------------

std::vector<std::string_view> split(std::string_view s, char sep);
// A query string's value or key: %XX decoded, '+' a space (api_lists.cpp); false: a bad escape.
bool percent_decode(std::string_view in, std::string& out);
Response json_response(int status, std::string body);
Response error(int status, std::string_view message);
const char* route_label(Route r);
// Whether a module takes events, and why not: "serving", "recovering", "failed" or "unhealthy".
std::pair<const char*, std::string> module_state(const Module& m);

}  // namespace pure::serve
