// serve/server_log.cpp — JSON lines on stderr (see server_log.h). One write per line under a mutex, so
// lines from the I/O and owner threads never interleave.
#include "serve/server_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "serve/api.h"

namespace pure::serve {

std::string as_json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string as_json_int(int64_t v) { return std::to_string(v); }

void server_log(std::string_view event, std::initializer_list<LogField> fields) {
  static std::mutex mu;
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[96];
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  std::string line = "{\"ts\":\"";
  line += ts;
  line += "\",\"event\":";
  append_json_string(line, event);
  for (const LogField& f : fields) {
    line += ',';
    append_json_string(line, f.key);
    line += ':';
    line += f.json;
  }
  line += "}\n";
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace pure::serve
