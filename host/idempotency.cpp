// host/idempotency.cpp — the idempotency table and its rebuild from the log (idempotency.h).
// Depends on idempotency.h, history.h.
#include "host/idempotency.h"

#include <chrono>

#include "host/history.h"

namespace pure::host {

uint64_t wall_clock_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string check_idempotency_key(std::string_view key) {
  if (key.empty()) return "is empty; a key is 1 to " + std::to_string(limits::kIdempotencyKeyBytes) +
                          " printable ASCII characters without spaces";
  if (key.size() > limits::kIdempotencyKeyBytes)
    return "is " + std::to_string(key.size()) + " bytes long; a key is at most " +
           std::to_string(limits::kIdempotencyKeyBytes) + " bytes (limits::kIdempotencyKeyBytes)";
  for (size_t i = 0; i < key.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    if (c < '!' || c > '~')
      return "has byte " + std::to_string(c) + " at offset " + std::to_string(i) +
             "; a key is printable ASCII without spaces ('!' to '~')";
  }
  return "";
}

uint64_t arguments_hash(std::string_view encoded_args) {
  uint64_t h = 1469598103934665603ull;
  for (char c : encoded_args) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

const KeyedEvent* IdempotencyTable::find(std::string_view key, uint64_t now_ms) const {
  auto it = by_key_.find(std::string(key));
  if (it == by_key_.end()) return nullptr;
  if (now_ms > it->second.time_ms && now_ms - it->second.time_ms > window_ms_) return nullptr;  // past the window
  return &it->second;
}

void IdempotencyTable::remember(std::string key, KeyedEvent e, uint64_t now_ms) {
  order_.emplace_back(key, e.sequence);
  by_key_[std::move(key)] = std::move(e);  // a forgotten (aged) use of the key is replaced
  forget_old(now_ms);
}

void IdempotencyTable::forget_old(uint64_t now_ms) {
  while (!order_.empty()) {
    auto& [key, sequence] = order_.front();
    auto it = by_key_.find(key);
    bool current = it != by_key_.end() && it->second.sequence == sequence;  // not replaced since
    if (current) {
      bool aged = now_ms > it->second.time_ms && now_ms - it->second.time_ms > window_ms_;
      if (by_key_.size() <= capacity_ && !aged) break;
      by_key_.erase(it);
    }
    order_.pop_front();
  }
}

Status rebuild_idempotency(FileSystem& fs, const std::string& dir, uint64_t module_identity, uint64_t through,
                           uint64_t now_ms, IdempotencyTable* table) {
  HistoryFilter filter;
  filter.through = through;
  filter.since_ms = now_ms > table->window_ms() ? now_ms - table->window_ms() : 1;
  filter.limit = 10000;  // a page at a time: only the keyed records are kept
  for (;;) {
    HistoryPage page;
    if (Status s = read_history(fs, dir, module_identity, filter, &page); !s.ok())
      return Status::failure("rebuilding the idempotency keys: " + s.error);
    for (HistoryRecord& r : page.records)
      if (!r.key.empty())
        table->remember(std::move(r.key), KeyedEvent{r.event, arguments_hash(r.args), r.sequence, r.time_ms, std::move(r.result)},
                        now_ms);
    if (page.next_after == 0) return {};
    filter.after = page.next_after;
  }
}

}  // namespace pure::host
