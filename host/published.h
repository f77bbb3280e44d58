// host/published.h — the latest published value (the owner's visible snapshot and its sequence),
// read by any thread without a lock (used by host/owner.h; not part of host.h's interface).
//
// Hazard slots: a reader claims a free slot, writes into it the entry it is about to read, and
// checks that the entry is still the published one (else it retries with the new one); while the
// slot names the entry, the writer will not free it, so the reader copies the shared_ptr out of
// it and clears the slot. The writer swaps the current entry and frees retired entries that no
// slot names. A reader never waits for the writer: it retries only when a publish happened
// between its two loads. It moves to the next slot when one is taken, so only more than kSlots
// readers at one instant make one wait for a slot (for as long as a copy of a shared_ptr).
//
// Writers must be serialised by the caller (the owner publishes with its waiting mutex held).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/assert.h"

namespace pure::host {

template <class T>
class Published {
 public:
  // More readers at one instant than slots only makes the extra ones look for a free slot again.
  static constexpr size_t kSlots = 64;

  Published() = default;
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;
  ~Published() {
    delete current_.load(std::memory_order_relaxed);
    for (Entry* e : retired_) delete e;
  }

  // Any thread: the value last published and its tag, read together (null before the first).
  std::pair<std::shared_ptr<const T>, uint64_t> read() const {
    size_t i = start_slot();
    Entry* e = current_.load(std::memory_order_acquire);
    if (!e) return {nullptr, 0};
    // claim a slot by writing e into an empty one
    for (;;) {
      Entry* expected = nullptr;
      if (slots_[i].compare_exchange_weak(expected, e, std::memory_order_seq_cst)) break;
      i = (i + 1) % kSlots;
    }
    // the slot holds e: is e still current? (seq_cst against the writer's exchange and scan)
    for (;;) {
      Entry* now = current_.load(std::memory_order_seq_cst);
      if (now == e) break;
      e = now;
      slots_[i].store(e, std::memory_order_seq_cst);
    }
    std::pair<std::shared_ptr<const T>, uint64_t> out{e->value, e->tag};
    slots_[i].store(nullptr, std::memory_order_release);
    return out;
  }

  // The writer (serialised by the caller): makes value visible; a replaced value is released
  // once no reader holds its entry (here, or at a later publish).
  void publish(std::shared_ptr<const T> value, uint64_t tag) {
    Entry* old = current_.exchange(new Entry{std::move(value), tag}, std::memory_order_seq_cst);
    if (old) retired_.push_back(old);
    reclaim();
  }

  // The writer: entries replaced but still named by a reader's slot (tests; a bound, not a leak:
  // at most one per slot).
  size_t retired() const { return retired_.size(); }

 private:
  struct Entry {
    std::shared_ptr<const T> value;
    uint64_t tag;
  };

  void reclaim() {
    size_t kept = 0;
    for (Entry* e : retired_) {
      bool named = false;
      for (const auto& slot : slots_)
        if (slot.load(std::memory_order_seq_cst) == e) {
          named = true;
          break;
        }
      if (named) retired_[kept++] = e;
      else delete e;
    }
    retired_.resize(kept);
    PURE_ASSERT(retired_.size() <= kSlots);
  }

  // Threads start at different slots so that they seldom meet.
  static size_t start_slot() {
    static std::atomic<size_t> next{0};
    thread_local size_t mine = next.fetch_add(1, std::memory_order_relaxed) % kSlots;
    return mine;
  }

  std::atomic<Entry*> current_{nullptr};
  mutable std::array<std::atomic<Entry*>, kSlots> slots_{};
  std::vector<Entry*> retired_;  // writer only
};

}  // namespace pure::host
