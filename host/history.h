// host/history.h — the audit trail: the records a data directory still holds (docs/history.md),
// read from the segment files, never from the owner, so reading history blocks no event. The
// segment being written is read only up to a sequence the caller knows is durable (its records
// are whole on disk; what follows may be half written). Depends on host.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/host.h"

namespace pure::host {

struct HistoryRecord {
  uint64_t sequence = 0;
  uint32_t event = 0;    // the event's index, or kVersionEvent (host/versions.h)
  uint64_t time_ms = 0;  // commit time (0: unknown: written before commit times)
  std::string args;      // encoded as logged
  std::string key;       // the request's Idempotency-Key ("": none)
  std::string result;    // with a key: the event's encoded result; failed: why it failed
  bool failed = false;   // an audit-only record of an event that failed (--audit-failed): it changed nothing
};

struct HistoryFilter {
  uint64_t after = 0;               // only sequences above this
  uint64_t before = UINT64_MAX;     // only sequences below this
  uint64_t through = UINT64_MAX;    // never past this: the durable sequence
  uint64_t since_ms = 0;            // only commit times at or after this (unknown times are not)
  std::optional<uint32_t> event;    // only this event index
  size_t limit = 100;               // at most this many records
  uint64_t max_scan_bytes = UINT64_MAX;  // stop after reading segments of this many bytes (next_after says where)
};

struct HistoryPage {
  std::vector<HistoryRecord> records;  // in sequence order
  uint64_t oldest = 0;      // the first sequence the directory still holds (0: no record)
  uint64_t next_after = 0;  // more records match: the `after` of the next page (0: none)
};

// Reads the records of DIR that pass filter. module_identity: the log's (0: not checked). A
// damaged record before `through` is an error naming the file and offset; a segment that
// retention deleted while this ran is skipped.
Status read_history(FileSystem& fs, const std::string& dir, uint64_t module_identity, const HistoryFilter& filter,
                    HistoryPage* out);

}  // namespace pure::host
