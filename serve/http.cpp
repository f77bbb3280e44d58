// serve/http.cpp — the Beast side of pure-serve (http.h): the listener and run_http (signals,
// graceful shutdown). Each accepted connection becomes a session (http_session.h) on its own
// strand, plain here or TLS (http_tls.cpp, when --tls-cert and --tls-key are given).
#include "serve/http.h"

#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>

#include <csignal>
#include <thread>
#include <vector>

#include "serve/http_session.h"
#include "serve/server_log.h"

namespace pure::serve {

using namespace detail;

namespace {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(net::io_context& ioc, Api& api, const HttpOptions& options, Registry& registry, TlsContext* tls)
      : ioc_(ioc), acceptor_(net::make_strand(ioc)), api_(api), options_(options), registry_(registry), tls_(tls) {}

  bool listen(const tcp::endpoint& endpoint, std::string& error) {
    beast::error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      error = "cannot listen on " + endpoint.address().to_string() + ":" + std::to_string(endpoint.port()) + ": " + ec.message();
      return false;
    }
    return true;
  }
  tcp::endpoint local() const { return acceptor_.local_endpoint(); }

  void accept() {
    acceptor_.async_accept(net::make_strand(ioc_), [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
      if (!ec) {
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        if (self->tls_)
          start_tls_session(*self->tls_, std::move(socket), self->api_, self->options_, self->registry_);
        else
          std::make_shared<Session<tcp::socket>>(std::move(socket), self->api_, self->options_, self->registry_)->start();
      } else if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space) {
        // Out of file descriptors: wait a little instead of spinning.
        server_log("accept_failed", {{"error", as_json_string(ec.message())}});
        auto timer = std::make_shared<net::steady_timer>(self->acceptor_.get_executor(), std::chrono::milliseconds(100));
        timer->async_wait([self, timer](beast::error_code) { self->accept(); });
        return;
      }
      self->accept();
    });
  }

  void stop() {
    net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] {
      beast::error_code ignored;
      self->acceptor_.close(ignored);
    });
  }

 private:
  net::io_context& ioc_;
  tcp::acceptor acceptor_;
  Api& api_;
  const HttpOptions& options_;
  Registry& registry_;
  TlsContext* tls_;  // null: plain HTTP
};

}  // namespace

int run_http(Api& api, const HttpOptions& options, const std::function<void(const std::string&)>& on_listening,
             const std::function<void()>& drain, std::string& error) {
  int threads = options.io_threads < 1 ? 1 : options.io_threads;
  Registry registry;  // outlives the io_context: sessions it destroys unregister themselves
  net::io_context ioc{threads};
  beast::error_code ec;
  net::ip::address address = net::ip::make_address(options.address, ec);
  if (ec) {
    error = "bad listen address '" + options.address + "': " + ec.message();
    return 1;
  }
  std::shared_ptr<TlsContext> tls;
  if (!options.tls_cert.empty() && !(tls = make_tls_context(options.tls_cert, options.tls_key, error))) return 1;
  auto listener = std::make_shared<Listener>(ioc, api, options, registry, tls.get());
  if (!listener->listen(tcp::endpoint(address, options.port), error)) return 1;
  tcp::endpoint bound = listener->local();
  std::string where = (bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string()) +
                      ":" + std::to_string(bound.port());
  auto work = net::make_work_guard(ioc);
  // Replies posted here run before the drain's own post below (the owners are closed first), so
  // none is left behind while the io_context runs; after it, ReplyPost runs them inline again.
  struct Unset {
    ReplyPost* replies;
    ~Unset() {
      if (replies) replies->set(nullptr);
    }
  } unset{options.replies};
  if (options.replies) options.replies->set([&ioc](std::function<void()> job) { net::post(ioc, std::move(job)); });
  net::signal_set signals(ioc, SIGINT, SIGTERM);
  std::thread drainer;
  signals.async_wait([&](beast::error_code ec, int signo) {
    if (ec) return;
    server_log("shutdown_started", {{"signal", as_json_string(signo == SIGTERM ? "SIGTERM" : "SIGINT")},
                                  {"connections", as_json_int(api.connections().load())}});
    registry.draining = true;
    listener->stop();
    {
      std::lock_guard<std::mutex> lock(registry.mu);
      for (auto& [raw, weak] : registry.sessions)
        if (auto s = weak.lock()) net::dispatch(s->executor(), [s] { s->drain(); });
    }
    // Closing the owners waits for their in-flight events; their replies come back through the
    // strands, so this cannot run on an I/O thread.
    drainer = std::thread([&] {
      drain();
      net::post(ioc, [&] {
        work.reset();
        // Replies still being written get a bounded time; then everything stops.
        auto deadline = std::make_shared<net::steady_timer>(ioc, options.write_timeout);
        deadline->async_wait([&ioc, deadline](beast::error_code ec) {
          if (!ec) ioc.stop();
        });
        // When the last session is gone the deadline is the only work left: stop at once.
        auto poll = std::make_shared<std::function<void()>>();
        std::weak_ptr<std::function<void()>> weak = poll;  // only a pending wait keeps it alive
        auto timer = std::make_shared<net::steady_timer>(ioc);
        *poll = [&, weak, timer, deadline] {
          bool empty;
          {
            std::lock_guard<std::mutex> lock(registry.mu);
            empty = registry.sessions.empty();
          }
          if (empty) {
            deadline->cancel();
            return;
          }
          timer->expires_after(std::chrono::milliseconds(10));
          timer->async_wait([again = weak.lock()](beast::error_code ec) {
            if (!ec && again) (*again)();
          });
        };
        (*poll)();
      });
    });
  });
  listener->accept();
  on_listening(where);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (std::thread& t : pool) t.join();
  if (drainer.joinable()) drainer.join();
  return 0;
}

}  // namespace pure::serve
