// serve/history.h — the audit trail's JSON, shared by GET /v1/NAME/events (api_history.cpp) and
// `pure-run --data DIR --events` (tools/run_events.cpp), so that a record is the same bytes from
// both (docs/history.md): the filter parameters read and checked with the same messages, and one
// record rendered as one JSON object. Linked as pure_serve_json (no Boost). Depends on
// host/history.h, host/versions.h, vm/vm.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/history.h"
#include "host/versions.h"
#include "vm/vm.h"

namespace pure::serve {

// What names and types a directory's records: the running (newest) version's program, and every
// version's number and starting sequence (oldest first) for the version that ran each record.
struct HistoryCode {
  const vm::Program* program = nullptr;             // the running version's code
  uint32_t version = 1;                             // the running version
  uint64_t version_begins = 0;                      // the sequence of its upgrade record (0: version 1)
  const std::vector<host::VersionFile>* versions = nullptr;  // may be null or empty: version 1 only
};

// A time as since= and as_of_time= take it: milliseconds since the Unix epoch, or an RFC 3339 UTC
// time 2026-12-07T02:30:00Z (with optional .fff milliseconds). False when text is neither.
bool parse_history_time(std::string_view text, uint64_t* ms);

// True for the audit trail's parameter names: after, before, limit, event, since.
bool is_history_parameter(std::string_view key);

// Reads one parameter (is_history_parameter(key)) into *filter; "" when it is good, else the
// message naming it, e.g. "limit: expected a whole number from 1 to 1000, got '0'". max_limit:
// the largest limit taken (UINT64_MAX: no bound but the number's size, "1 or more" in the message).
// module: its name, for `event`'s message. *has_before is set by before.
std::string parse_history_parameter(const HistoryCode& code, const std::string& module, std::string_view key,
                                    std::string_view value, uint64_t max_limit, host::HistoryFilter* filter,
                                    bool* has_before);

// "" when after and before leave room for a sequence, else the message (checked once all are read).
std::string check_history_range(const host::HistoryFilter& filter, bool has_before);

// Appends one record as the audit trail shows it: sequence, time, at, then event, args and version
// (or upgrade and version for an upgrade record).
void append_history_record(std::string& out, const HistoryCode& code, const host::HistoryRecord& record);

}  // namespace pure::serve
