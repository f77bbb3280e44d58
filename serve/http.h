// serve/http.h — pure-serve's HTTP/1.1 server (Boost.Beast on Asio, http.cpp): sessions on
// strands, limits and deadlines, replies posted back from the owners, graceful shutdown.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include "serve/api.h"

namespace pure::serve {

// Where the owners hand each batch's replies (host::OwnerOptions::reply_runner): while run_http
// runs, posted to its I/O threads as one job, so a batch of N events costs the owner one hand-off
// (one wake-up of the I/O thread) instead of N, and the replies are encoded there. Before and after
// run_http, a job runs at once on the calling thread. Any thread.
class ReplyPost {
 public:
  void run(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (post_) return post_(std::move(job));
    }
    job();
  }
  // run_http's: where jobs go while it runs (null: run them at once).
  void set(std::function<void(std::function<void()>)> post) {
    std::lock_guard<std::mutex> lock(mu_);
    post_ = std::move(post);
  }

 private:
  std::mutex mu_;
  std::function<void(std::function<void()>)> post_;
};

// Serves api until SIGTERM or SIGINT. Then: stops accepting, closes idle connections, calls
// drain() on another thread (it must finish in-flight events: close the owners), writes the
// replies still due, and returns 0. Returns 1 with error set when it cannot listen.
// on_listening gets "ADDRESS:PORT" once the socket listens.
int run_http(Api& api, const HttpOptions& options, const std::function<void(const std::string&)>& on_listening,
             const std::function<void()>& drain, std::string& error);

}  // namespace pure::serve
