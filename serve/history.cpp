// serve/history.cpp — the audit trail's JSON (history.h): its parameters and one record, for
// GET /v1/NAME/events and `pure-run --data DIR --events` alike. Depends on history.h and the JSON
// writer (api_json.cpp).
#include "serve/history.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "base/limits.h"
#include "serve/api_internal.h"
#include "stdlib/numtext.h"

namespace pure::serve {

namespace {

bool parse_u64(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t next = v * 10 + uint64_t(c - '0');
    if (next / 10 != v) return false;
    v = next;
  }
  *out = v;
  return true;
}

}  // namespace

bool parse_history_time(std::string_view text, uint64_t* ms) {
  if (parse_u64(text, ms)) return true;
  int y, mo, d, h, mi, s;
  int consumed = 0;
  std::string t(text);
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &consumed) != 6 || consumed != 19)
    return false;
  uint64_t frac = 0;
  std::string_view rest = text.substr(19);
  if (!rest.empty() && rest[0] == '.') {
    if (rest.size() < 5 || !parse_u64(rest.substr(1, 3), &frac)) return false;
    rest = rest.substr(4);
  }
  if (rest != "Z") return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970) return false;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  time_t secs = timegm(&tm);
  if (secs < 0) return false;
  *ms = static_cast<uint64_t>(secs) * 1000 + frac;
  return true;
}

namespace {

// A commit time as RFC 3339 UTC with milliseconds.
std::string time_text(uint64_t ms) {
  time_t secs = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<unsigned>(ms % 1000));
  return buf;
}

// A value without its type (a record of an earlier version): items and lists as arrays.
void append_untyped(std::string& out, const vm::Value& v) {
  switch (v.kind) {
    case vm::Value::Kind::Int: out += std::to_string(v.i); return;
    case vm::Value::Kind::Num: append_json_num(out, v.n); return;
    case vm::Value::Kind::Bool: out += v.i ? "true" : "false"; return;
    case vm::Value::Kind::Text: append_json_string(out, v.text); return;
    case vm::Value::Kind::Item:
    case vm::Value::Kind::List:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ',';
        append_untyped(out, v.items[i]);
      }
      out += ']';
      return;
  }
}

// The version that ran a record: the newest whose version record comes before it.
uint32_t version_of(const HistoryCode& code, uint64_t sequence) {
  uint32_t version = 1;
  if (code.versions)
    for (const host::VersionFile& v : *code.versions)
      if (v.begins < sequence || v.begins == 0) version = v.number;
  return version;
}

}  // namespace

void append_history_record(std::string& out, const HistoryCode& code, const host::HistoryRecord& r) {
  out += "{\"sequence\":" + std::to_string(r.sequence);
  out += ",\"time\":" + (r.time_ms ? std::to_string(r.time_ms) : std::string("null"));
  out += ",\"at\":" + (r.time_ms ? "\"" + time_text(r.time_ms) + "\"" : std::string("null"));
  if (r.event == host::kVersionEvent) {
    uint32_t to = 0;
    for (size_t i = r.args.size() == 4 ? 4 : 0; i-- > 0;) to = to << 8 | static_cast<unsigned char>(r.args[i]);
    out += ",\"upgrade\":" + std::to_string(to) + ",\"version\":" + std::to_string(to) + "}";
    return;
  }
  const uint32_t version = version_of(code, r.sequence);
  std::vector<vm::Value> args;
  host::Status decoded = host::decode_values(r.args, &args);
  // The current version's events are named and typed; an earlier version's by index, untyped.
  const vm::Function* fn = nullptr;
  if (version == code.version && r.event < code.program->functions.size()) {
    fn = &code.program->functions[r.event];
    if (fn->param_types.size() != args.size()) fn = nullptr;
  }
  out += ",\"event\":";
  if (fn) append_json_string(out, fn->name);
  else out += "null,\"event_index\":" + std::to_string(r.event);
  out += ",\"args\":";
  if (!decoded.ok()) {
    out += "null,\"args_error\":";
    append_json_string(out, decoded.error);
  } else if (fn) {
    out += '{';
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) out += ',';
      append_json_string(out, fn->param_names[i]);
      out += ':';
      append_value(out, fn->param_types[i], args[i]);
    }
    out += '}';
  } else {
    out += '[';
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) out += ',';
      append_untyped(out, args[i]);
    }
    out += ']';
  }
  if (r.failed) {  // an audit-only record (--audit-failed): the event failed and changed nothing
    out += ",\"failed\":true,\"reason\":";
    append_json_string(out, r.result);
  }
  out += ",\"version\":" + std::to_string(version) + "}";
}

bool is_history_parameter(std::string_view key) {
  return key == "after" || key == "before" || key == "limit" || key == "event" || key == "since";
}

std::string parse_history_parameter(const HistoryCode& code, const std::string& module, std::string_view key,
                                    std::string_view value, uint64_t max_limit, host::HistoryFilter* filter,
                                    bool* has_before) {
  if (key == "after" || key == "before") {
    uint64_t n = 0;
    if (!parse_u64(value, &n))
      return std::string(key) + ": expected a sequence number (0 or more), got '" + std::string(value) + "'";
    (key == "after" ? filter->after : filter->before) = n;
    *has_before |= key == "before";
  } else if (key == "limit") {
    uint64_t n = 0;
    if (!parse_u64(value, &n) || n < 1 || n > max_limit)
      return "limit: expected a whole number " +
             (max_limit == UINT64_MAX ? std::string("1 or more") : "from 1 to " + std::to_string(max_limit)) +
             ", got '" + std::string(value) + "'";
    filter->limit = static_cast<size_t>(n);
  } else if (key == "event") {
    int index = vm::find_function(*code.program, value);
    if (index < 0 || code.program->functions[index].kind != FuncKind::Event)
      return "event: module " + module + " has no event '" + std::string(value) + "'";
    filter->event = static_cast<uint32_t>(index);
    // Event indexes are the running version's: earlier versions' records are not matched.
    filter->after = std::max(filter->after, code.version_begins);
  } else if (key == "since") {
    uint64_t ms = 0;
    if (!parse_history_time(value, &ms) || ms == 0)
      return "since: expected milliseconds since 1970 or a UTC time like 2026-12-07T02:30:00Z, got '" +
             std::string(value) + "'";
    filter->since_ms = ms;
  } else {
    return "unknown parameter '" + std::string(key) + "'";
  }
  return "";
}

std::string check_history_range(const host::HistoryFilter& filter, bool has_before) {
  if (has_before && filter.before <= filter.after + 1 && !filter.event)
    return "before (" + std::to_string(filter.before) + ") must be above after + 1 (" +
           std::to_string(filter.after + 1) + "): no sequence lies between them";
  return "";
}

}  // namespace pure::serve
