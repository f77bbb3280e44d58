// host/retention.cpp — the --retain text of a Retention (host.h): parsing and printing it.
// Depends on host.h.
#include <cstdint>
#include <string>
#include <string_view>

#include "host/host.h"

namespace pure::host {

namespace {

struct Unit {
  std::string_view name;
  uint64_t factor;
  bool age;  // milliseconds (else bytes)
};
constexpr Unit kUnits[] = {
    {"s", 1000, true},          {"m", 60'000, true},       {"h", 3'600'000, true},       {"d", 86'400'000, true},
    {"B", 1, false},            {"KiB", 1ull << 10, false}, {"MiB", 1ull << 20, false},  {"GiB", 1ull << 30, false},
    {"TiB", 1ull << 40, false},
};

// One "NUMBER UNIT" part: "" or why not.
std::string parse_part(std::string_view part, Retention* out, bool* saw_age, bool* saw_size) {
  size_t digits = 0;
  uint64_t n = 0;
  while (digits < part.size() && part[digits] >= '0' && part[digits] <= '9') {
    uint64_t next = n * 10 + uint64_t(part[digits] - '0');
    if (next / 10 != n) return "'" + std::string(part) + "' is too large";
    n = next;
    ++digits;
  }
  std::string_view unit = part.substr(digits);
  if (digits == 0 || unit.empty())
    return "'" + std::string(part) + "' is not an age (7d, 12h, 30m, 90s) or a size (2GiB, 500MiB, 4096B)";
  for (const Unit& u : kUnits) {
    if (u.name != unit) continue;
    if (n > UINT64_MAX / u.factor) return "'" + std::string(part) + "' is too large";
    bool& seen = u.age ? *saw_age : *saw_size;
    if (seen) return std::string("two ") + (u.age ? "ages" : "sizes") + " given: at most one of each";
    seen = true;
    (u.age ? out->keep_ms : out->keep_bytes) = n * u.factor;
    return "";
  }
  return "'" + std::string(unit) + "' is not a unit: ages take s, m, h or d; sizes B, KiB, MiB, GiB or TiB";
}

std::string age_text(uint64_t ms) {
  for (auto [unit, factor] : {std::pair<const char*, uint64_t>{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}})
    if (ms % factor == 0 && ms >= factor) return std::to_string(ms / factor) + unit;
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string size_text(uint64_t bytes) {
  for (auto [unit, factor] : {std::pair<const char*, uint64_t>{"TiB", 1ull << 40}, {"GiB", 1ull << 30},
                              {"MiB", 1ull << 20}, {"KiB", 1ull << 10}})
    if (bytes % factor == 0 && bytes >= factor) return std::to_string(bytes / factor) + unit;
  return std::to_string(bytes) + "B";
}

}  // namespace

std::string Retention::describe() const {
  if (keeps_all()) return "all";
  if (keep_ms == 0 || keep_bytes == 0) return "none";
  std::string out;
  if (keep_ms != kForever) out = age_text(keep_ms);
  if (keep_bytes != kForever) out += (out.empty() ? "" : ",") + size_text(keep_bytes);
  return out;
}

std::string parse_retention(std::string_view text, Retention* out) {
  const std::string rule = " (--retain takes all, none, an age such as 7d, a size such as 2GiB, or both: 7d,2GiB)";
  Retention r;
  if (text == "all") {
    r.keep_ms = r.keep_bytes = Retention::kForever;
  } else if (text == "none") {
    r.keep_ms = 0;
  } else {
    r.keep_ms = r.keep_bytes = Retention::kForever;
    bool saw_age = false, saw_size = false;
    size_t comma = text.find(',');
    if (text.empty() || (comma != std::string_view::npos && text.find(',', comma + 1) != std::string_view::npos))
      return "'" + std::string(text) + "' is not a retention" + rule;
    for (std::string_view part : {text.substr(0, comma),
                                  comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1)}) {
      if (part.empty() && comma == std::string_view::npos) continue;
      if (std::string why = parse_part(part, &r, &saw_age, &saw_size); !why.empty()) return why + rule;
    }
  }
  *out = r;
  return "";
}

}  // namespace pure::host
