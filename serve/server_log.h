// serve/server_log.h — pure-serve's own log (requests, start, recovery, shutdown; not a module's
// event log, which is host/'s): one JSON object per line on stderr, e.g.
//   {"ts":"2026-12-01T01:40:00.123Z","event":"listening","address":"127.0.0.1:8080"}
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace pure::serve {

struct LogField {
  std::string_view key;
  std::string json;  // the value as JSON text: use as_json_string() / as_json_int()
};
// s as a JSON string: quoted and escaped (invalid UTF-8 bytes become U+FFFD).
std::string as_json_string(std::string_view s);
// v as a JSON number.
std::string as_json_int(int64_t v);
// Writes one line: the time, "event": event, then the fields in order.
void server_log(std::string_view event, std::initializer_list<LogField> fields = {});

}  // namespace pure::serve
