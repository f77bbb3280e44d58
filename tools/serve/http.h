// tools/serve/http.h — pure-serve's HTTP/1.1 server (Boost.Beast on Asio, http.cpp): sessions on
// strands, limits and deadlines, replies posted back from the owners, graceful shutdown.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "tools/serve/api.h"

namespace pure::serve {

struct HttpOptions {
  std::string address = "127.0.0.1";
  unsigned short port = 8080;                 // 0: any free port (the "listening" log line names it)
  size_t body_limit = 1 << 20;                // larger bodies: 413
  size_t header_limit = 16 << 10;             // larger request line + headers: 431
  std::chrono::milliseconds request_timeout{10'000};  // a request must arrive whole within this: else 408
  std::chrono::milliseconds write_timeout{10'000};    // a reply the client does not read is dropped after this
  int io_threads = 1;
};

// Serves api until SIGTERM or SIGINT. Then: stops accepting, closes idle connections, calls
// drain() on another thread (it must finish in-flight events: close the owners), writes the
// replies still due, and returns 0. Returns 1 with error set when it cannot listen.
// on_listening gets "ADDRESS:PORT" once the socket listens.
int run_http(Api& api, const HttpOptions& options, const std::function<void(const std::string&)>& on_listening,
             const std::function<void()>& drain, std::string& error);

}  // namespace pure::serve
