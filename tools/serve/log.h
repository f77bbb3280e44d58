// tools/serve/log.h — pure-serve's log: one JSON object per line on stderr, e.g.
//   {"ts":"2026-12-01T01:40:00.123Z","event":"listening","address":"127.0.0.1:8080"}
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace pure::serve {

struct LogField {
  std::string_view key;
  std::string json;  // the value as JSON text: use jstr() / jint()
};
std::string jstr(std::string_view s);
std::string jint(int64_t v);
void log_line(std::string_view event, std::initializer_list<LogField> fields = {});

}  // namespace pure::serve
