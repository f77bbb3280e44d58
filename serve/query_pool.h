// serve/query_pool.h — the threads pure-serve runs queries on, off the HTTP I/O threads
// (issue 31 item 10): a fixed number of threads and a bounded queue of the queries waiting for
// one. A query that finds the queue full is refused at once (try_submit: false; the API answers
// 503), so a burst of slow queries neither blocks /health and the other requests nor grows
// memory without bound. stop() answers what is still queued through its `refuse` and waits for
// the queries running to end.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pure::serve {

class QueryPool {
 public:
  // A query to run: run() on a pool thread, or refuse() (on the thread calling stop()) when the
  // pool stops before it started.
  struct Job {
    std::function<void()> run;
    std::function<void()> refuse;
  };

  QueryPool(size_t threads, size_t max_queue) : max_queue_(max_queue) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~QueryPool() { stop(); }
  QueryPool(const QueryPool&) = delete;
  QueryPool& operator=(const QueryPool&) = delete;

  // Queues job unless max_queue queries are already waiting or the pool has stopped.
  bool try_submit(Job job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || queue_.size() >= max_queue_) return false;
      queue_.push_back(std::move(job));
      queued_.store(queue_.size(), std::memory_order_relaxed);
    }
    wake_.notify_one();
    return true;
  }

  // Refuses the queued queries, waits for the running ones. Idempotent.
  void stop() {
    std::deque<Job> left;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ && threads_.empty()) return;
      stopping_ = true;
      left.swap(queue_);
      queued_.store(0, std::memory_order_relaxed);
    }
    wake_.notify_all();
    for (Job& j : left)
      if (j.refuse) j.refuse();
    for (std::thread& t : threads_) t.join();
    std::lock_guard<std::mutex> lock(mu_);
    threads_.clear();
  }

  size_t threads() const { return threads_.size(); }
  size_t max_queue() const { return max_queue_; }
  size_t queued() const { return queued_.load(std::memory_order_relaxed); }
  size_t running() const { return running_.load(std::memory_order_relaxed); }

 private:
  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        job = std::move(queue_.front());
        queue_.pop_front();
        queued_.store(queue_.size(), std::memory_order_relaxed);
        running_.fetch_add(1, std::memory_order_relaxed);
      }
      job.run();
      running_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  const size_t max_queue_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::atomic<size_t> queued_{0}, running_{0};
  std::vector<std::thread> threads_;
};

}  // namespace pure::serve
