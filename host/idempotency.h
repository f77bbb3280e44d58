// host/idempotency.h — the idempotency keys of one module: which recent event each key committed
// as, so that a retried request (the same Idempotency-Key) gets the original answer instead of
// running again (docs/history.md#idempotency-keys). The owner thread holds the table; each key is
// logged with its event's record (log_format.h, version 3), so the table is rebuilt from the
// retained log when the module opens. Depends on host.h, history.h.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/limits.h"
#include "host/host.h"

namespace pure::host {

// The wall clock in milliseconds since the Unix epoch (the window's age).
uint64_t wall_clock_ms();

// "" when key may be an Idempotency-Key: 1 to limits::kIdempotencyKeyBytes bytes of printable
// ASCII without spaces ('!' to '~'); else what is wrong with it.
std::string check_idempotency_key(std::string_view key);

// A 64-bit hash (FNV-1a) of an event's encoded arguments: what a retry's arguments are compared by.
uint64_t arguments_hash(std::string_view encoded_args);

struct KeyedEvent {
  uint32_t event = 0;          // the event's index
  uint64_t args_hash = 0;      // arguments_hash of its encoded arguments
  uint64_t sequence = 0;       // what it committed as
  uint64_t time_ms = 0;        // when (the window's age bound)
  std::string result;          // its encoded result ("": not kept: it was too large to read out)
};

// The last `capacity` keys committed within `window_ms`, oldest forgotten first. Not thread-safe
// (the owner thread's).
class IdempotencyTable {
 public:
  explicit IdempotencyTable(size_t capacity = limits::kIdempotencyKeys, uint64_t window_ms = limits::kIdempotencyWindowMs)
      : capacity_(capacity), window_ms_(window_ms) {}
  // The event key committed as, if it is inside the window at now_ms; else null.
  const KeyedEvent* find(std::string_view key, uint64_t now_ms) const;
  // Records that key committed as e (replacing a forgotten use of the same key), then forgets
  // the oldest keys past the capacity or the window.
  void remember(std::string key, KeyedEvent e, uint64_t now_ms);
  size_t size() const { return by_key_.size(); }
  size_t capacity() const { return capacity_; }
  uint64_t window_ms() const { return window_ms_; }

 private:
  void forget_old(uint64_t now_ms);
  size_t capacity_;
  uint64_t window_ms_;
  std::unordered_map<std::string, KeyedEvent> by_key_;
  std::deque<std::pair<std::string, uint64_t>> order_;  // (key, sequence), oldest first
};

// Fills table with the keyed records of DIR's retained log up to sequence `through` (recovery's
// last sequence) committed within the table's window of now_ms. module_identity as read_history.
Status rebuild_idempotency(FileSystem& fs, const std::string& dir, uint64_t module_identity, uint64_t through,
                           uint64_t now_ms, IdempotencyTable* table);

}  // namespace pure::host
