// serve/query_watch.h — the deadlines of the running queries (--query-timeout-ms, issue 31
// item 10): one thread that sleeps until the earliest deadline and then cancels the queries past
// theirs, by storing a message in each one's cancel flag (vm::RunOptions::cancel). The VM looks
// at the flag only between slices of the step budget, so the queries themselves read no clock.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace pure::serve {

// A query's cancel flag: null while it may run; the first message stored wins (a timeout, the
// client gone), and the VM ends the query with it.
using CancelFlag = std::atomic<const char*>;

// Stores why in flag unless a message is there already; true if this call stored it.
inline bool cancel(CancelFlag& flag, const char* why) {
  const char* none = nullptr;
  return flag.compare_exchange_strong(none, why, std::memory_order_acq_rel);
}

class QueryWatch {
 public:
  using Clock = std::chrono::steady_clock;

  QueryWatch() : thread_([this] { run(); }) {}
  ~QueryWatch() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  QueryWatch(const QueryWatch&) = delete;
  QueryWatch& operator=(const QueryWatch&) = delete;

  // Cancels flag with why (a text that outlives the watch) at deadline, unless unwatch(the id
  // returned) comes first.
  uint64_t watch(std::shared_ptr<CancelFlag> flag, Clock::time_point deadline, const char* why) {
    uint64_t id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      id = next_id_++;
      watched_.emplace(id, Entry{std::move(flag), deadline, why});
    }
    wake_.notify_all();
    return id;
  }
  void unwatch(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    watched_.erase(id);
  }

 private:
  struct Entry {
    std::shared_ptr<CancelFlag> flag;
    Clock::time_point deadline;
    const char* why;
  };

  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (watched_.empty()) {
        wake_.wait(lock);
        continue;
      }
      Clock::time_point first = Clock::time_point::max();
      for (const auto& [id, e] : watched_) first = std::min(first, e.deadline);
      if (Clock::now() < first) {
        wake_.wait_until(lock, first);  // or a new, perhaps earlier, deadline came
        continue;
      }
      Clock::time_point now = Clock::now();
      for (auto it = watched_.begin(); it != watched_.end();) {
        if (it->second.deadline <= now) {
          cancel(*it->second.flag, it->second.why);
          it = watched_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::map<uint64_t, Entry> watched_;  // by id: a handful at a time (the query threads)
  uint64_t next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace pure::serve
