// serve/http_session.h — one HTTP connection of pure-serve (http.h), for http.cpp (plain
// HTTP) and http_tls.cpp (HTTPS) only: the hand-written parse of plain requests, the checks of
// every head Beast parses, and the session on its strand that reads requests, hands them to the
// Api and writes the replies. A template over the stream so that the plain path stays as tuned
// (one non-blocking write a reply) and TLS adds only its handshake.
#pragma once
#include <boost/asio.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "serve/http.h"

namespace pure::serve::detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;


// ---- the fast path: a plain request parsed by hand -------------------------------------------
//
// Most requests are plain: a request line, a few headers, a Content-Length body. parse_plain
// reads exactly those from the bytes received so far; anything else (chunked bodies, Expect,
// obsolete line folding, bytes outside printable ASCII, a repeated header, a head or body over the
// limits, a lowercase method, ...) is left to Beast's parser, which answers it as before (the
// errors, 100-continue, the limits). So the fast path decides nothing Beast would decide
// differently; it only skips Beast's parser and its composed reads for the common case.

struct PlainRequest {
  std::string_view method, target, body, authorization, if_none_match, host, origin, content_type;
  std::optional<std::string_view> idempotency_key;
  bool keep_alive = true;
  size_t size = 0;  // bytes of the request, head and body
};

enum class Plain : uint8_t { Complete, NeedMore, NotPlain };

inline bool is_tchar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~': return true;
    default: return false;
  }
}

inline bool iequal(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(a[i]);
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c + 32);
    if (c != static_cast<unsigned char>(lower[i])) return false;
  }
  return true;
}

inline Plain parse_plain(std::string_view in, size_t header_limit, size_t body_limit, PlainRequest& out) {
  // A head that did not arrive whole in one read goes to Beast, which finds a bad byte in it as
  // soon as it comes (400 at once, as before, rather than a 408 later).
  size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return Plain::NotPlain;
  if (head_end + 4 > header_limit) return Plain::NotPlain;
  const char* p = in.data();
  const char* end = p + head_end + 2;  // through the last header line's CRLF
  // request line: METHOD SP TARGET SP HTTP/1.x CRLF
  const char* m = p;
  while (p < end && *p >= 'A' && *p <= 'Z') ++p;
  if (p == m || p - m > 16 || p >= end || *p != ' ') return Plain::NotPlain;
  out.method = std::string_view(m, static_cast<size_t>(p - m));
  const char* t = ++p;
  while (p < end && static_cast<unsigned char>(*p) > 0x20 && static_cast<unsigned char>(*p) < 0x7f) ++p;
  if (p == t || *t != '/' || p >= end || *p != ' ') return Plain::NotPlain;
  out.target = std::string_view(t, static_cast<size_t>(p - t));
  ++p;
  if (end - p < 10 || std::string_view(p, 7) != "HTTP/1." || (p[7] != '1' && p[7] != '0') || p[8] != '\r' || p[9] != '\n')
    return Plain::NotPlain;
  bool http11 = p[7] == '1';
  p += 10;
  bool have_length = false, have_connection = false, have_auth = false, have_tag = false, have_host = false,
       have_origin = false, have_type = false;
  uint64_t length = 0;
  out.keep_alive = http11;
  while (p < end) {
    const char* n = p;
    while (p < end && is_tchar(static_cast<unsigned char>(*p))) ++p;
    if (p == n || p >= end || *p != ':') return Plain::NotPlain;
    std::string_view name(n, static_cast<size_t>(p - n));
    ++p;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    const char* v = p;
    while (p < end && ((static_cast<unsigned char>(*p) >= 0x20 && static_cast<unsigned char>(*p) < 0x7f) || *p == '\t')) ++p;
    if (p + 2 > end || p[0] != '\r' || p[1] != '\n') return Plain::NotPlain;
    const char* ve = p;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) --ve;
    std::string_view value(v, static_cast<size_t>(ve - v));
    p += 2;
    // Which header: by its length, then its name (a header of no interest costs the switch).
    auto once = [](bool& seen) { return !std::exchange(seen, true); };
    switch (name.size()) {
      case 4:
        if (iequal(name, "host")) {
          if (!once(have_host)) return Plain::NotPlain;
          out.host = value;
        }
        break;
      case 6:
        if (iequal(name, "origin")) {
          if (!once(have_origin)) return Plain::NotPlain;
          out.origin = value;
        } else if (iequal(name, "expect")) {
          return Plain::NotPlain;
        }
        break;
      case 7:
        if (iequal(name, "upgrade")) return Plain::NotPlain;
        break;
      case 10:
        if (iequal(name, "connection")) {
          if (!once(have_connection)) return Plain::NotPlain;
          if (iequal(value, "close")) out.keep_alive = false;
          else if (iequal(value, "keep-alive")) out.keep_alive = true;
          else return Plain::NotPlain;
        }
        break;
      case 12:
        if (iequal(name, "content-type")) {
          if (!once(have_type)) return Plain::NotPlain;
          out.content_type = value;
        }
        break;
      case 13:
        if (iequal(name, "authorization")) {
          if (!once(have_auth)) return Plain::NotPlain;
          out.authorization = value;
        } else if (iequal(name, "if-none-match")) {
          if (!once(have_tag)) return Plain::NotPlain;
          out.if_none_match = value;
        }
        break;
      case 14:
        if (iequal(name, "content-length")) {
          if (!once(have_length) || value.empty() || value.size() > 9) return Plain::NotPlain;
          for (char c : value)
            if (c < '0' || c > '9') return Plain::NotPlain;
          for (char c : value) length = length * 10 + static_cast<uint64_t>(c - '0');
        }
        break;
      case 15:
        if (iequal(name, "idempotency-key")) {
          if (out.idempotency_key) return Plain::NotPlain;  // twice: Beast's path says so
          out.idempotency_key = value;
        }
        break;
      case 17:
        if (iequal(name, "transfer-encoding")) return Plain::NotPlain;
        break;
      default: break;
    }
  }
  if (http11 && out.host.empty()) return Plain::NotPlain;  // Beast's path answers 400 (framing_problem)
  if (length > body_limit) return Plain::NotPlain;
  size_t body_at = head_end + 4;
  if (in.size() - body_at < length) return Plain::NeedMore;
  out.body = std::string_view(in.data() + body_at, static_cast<size_t>(length));
  out.size = body_at + static_cast<size_t>(length);
  return Plain::Complete;
}

// What RFC 9112 makes a request's head unusable, checked on every request Beast parsed (the fast
// path hands each of these to Beast): "" or the reason for a 400 that closes the connection.
// A Transfer-Encoding other than exactly `chunked` would leave the body's end to guesswork (a
// proxy in front may frame it otherwise: request smuggling, section 6.3); in HTTP/1.0 the
// framing is faulty whatever it says (section 6.1). Host, Authorization, Origin and
// Content-Type decide what a request may do, so each may come once; HTTP/1.1 needs a Host.
inline std::string framing_problem(const http::request<http::string_body>& req) {
  int te = 0, length = 0, host = 0, auth = 0, origin = 0, type = 0;
  std::string_view coding, host_value;
  for (const auto& f : req) {
    switch (f.name()) {
      case http::field::transfer_encoding: ++te, coding = f.value(); break;
      case http::field::content_length: ++length; break;
      case http::field::host: ++host, host_value = f.value(); break;
      case http::field::authorization: ++auth; break;
      case http::field::origin: ++origin; break;
      case http::field::content_type: ++type; break;
      default: break;
    }
  }
  if (te) {
    if (req.version() < 11) return "Transfer-Encoding in an HTTP/1.0 request (its framing cannot be trusted)";
    if (te > 1) return "two Transfer-Encoding headers";
    while (!coding.empty() && (coding.back() == ' ' || coding.back() == '\t')) coding.remove_suffix(1);
    if (!beast::iequals(coding, "chunked"))
      return "Transfer-Encoding must be exactly 'chunked', got '" + std::string(coding) + "'";
    if (length) return "both Content-Length and Transfer-Encoding";
  }
  if (host > 1) return "two Host headers";
  if ((host == 0 || host_value.empty()) && req.version() >= 11) return "an HTTP/1.1 request needs a Host header";
  if (auth > 1) return "two Authorization headers";
  if (origin > 1) return "two Origin headers";
  if (type > 1) return "two Content-Type headers";
  return "";
}

// What shutdown needs of a session, plain or TLS.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void drain() = 0;
  virtual net::any_io_executor executor() = 0;
};

// The sessions alive, so that shutdown can close the idle ones.
struct Registry {
  std::mutex mu;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  std::atomic<bool> draining{false};
};

// Stream: tcp::socket (plain HTTP: each reply tried with one non-blocking write first) or
// net::ssl::stream<tcp::socket> (TLS, http_tls.cpp: a handshake first, replies through
// async_write).
template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
  using Clock = std::chrono::steady_clock;
  static constexpr bool kTls = !std::is_same_v<Stream, tcp::socket>;
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;
  using std::enable_shared_from_this<Session<Stream>>::weak_from_this;

 public:
  Session(Stream&& stream, Api& api, const HttpOptions& options, Registry& registry)
      : socket_(std::move(stream)), timer_(socket_.get_executor()), api_(api), options_(options), registry_(registry) {
    ++api_.connections();
  }
  ~Session() {
    --api_.connections();
    std::lock_guard<std::mutex> lock(registry_.mu);
    registry_.sessions.erase(this);
  }

  void start() {
    {
      std::lock_guard<std::mutex> lock(registry_.mu);
      registry_.sessions.emplace(this, std::weak_ptr<SessionBase>(shared_from_this()));
    }
    if constexpr (kTls) {
      // The handshake under the request deadline: a client that never finishes it is closed.
      net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
        self->state_ = State::Handshake;
        self->arm(Clock::now() + self->options_.request_timeout);
        self->socket_.async_handshake(Stream::server, [self](beast::error_code ec) {
          if (self->state_ == State::Closed) return;
          if (ec) return self->close();  // not TLS, a certificate refused, too slow: nothing was read
          self->read_request();
        });
      });
    } else {
      beast::error_code ignored;
      socket_.non_blocking(true, ignored);  // write() tries each reply synchronously first
      net::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->read_request(); });
    }
  }

  // On the strand: shutting down. An idle or half-read connection closes now; one whose event
  // is in flight closes after its reply.
  void drain() override {
    if (state_ == State::Reading || state_ == State::Handshake) {
      state_ = State::Closed;
      close();
    }
  }

  net::any_io_executor executor() override { return socket_.get_executor(); }

 private:
  enum class State : uint8_t { Handshake, Reading, Handling, Writing, Lingering, Closed };

  tcp::socket& lowest() {
    if constexpr (kTls) return socket_.next_layer();
    else return socket_;
  }

  void read_request() {
    if (registry_.draining.load()) return close();
    state_ = State::Reading;
    timed_out_ = false;
    parser_.reset();
    arm(Clock::now() + options_.request_timeout);
    read_plain();
  }

  // The fast path: what has arrived, parsed by hand when plain (parse_plain); more read straight
  // from the socket while it may still be; else Beast's parser from the same buffer.
  void read_plain() {
    PlainRequest req;
    std::string_view in(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    switch (in.empty() ? Plain::NeedMore : parse_plain(in, options_.header_limit, options_.body_limit, req)) {
      case Plain::Complete: return on_plain(req);
      case Plain::NotPlain: return read_with_beast();
      case Plain::NeedMore: break;
    }
    socket_.async_read_some(buffer_.prepare(16384), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (self->state_ == State::Closed) return;
      self->inline_reads_ = 0;
      self->buffer_.commit(n);
      if (ec) return self->on_read_error(ec == net::error::eof ? beast::error_code(http::error::end_of_stream) : ec);
      self->read_plain();
    });
  }

  void on_plain(const PlainRequest& plain) {
    state_ = State::Handling;
    keep_alive_ = plain.keep_alive;
    Request request;
    request.method = plain.method;
    request.target = plain.target;
    request.body = plain.body;
    request.authorization = plain.authorization;
    request.if_none_match = plain.if_none_match;
    request.host = plain.host;
    request.origin = plain.origin;
    request.content_type = plain.content_type;
    request.idempotency_key = plain.idempotency_key;
    head_ = plain.method == "HEAD";
    size_t used = plain.size;
    handle(request, [this, used] { buffer_.consume(used); });
  }

  void read_with_beast() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(options_.header_limit));
    parser_->body_limit(options_.body_limit);
    put_header();
  }

  // Beast's parser over the head as it arrives (what async_read_header does), with one check of
  // ours first: Beast joins a folded header line (obs-fold) to the one before it, which a proxy
  // in front may read as a header of its own; RFC 9112 section 5.2 lets a server refuse it.
  // Beast consumes no byte of a head until the head is whole, so the bytes seen here are all of it.
  void put_header() {
    std::string_view in(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    size_t end = in.find("\r\n\r\n");
    std::string_view head = in.substr(0, end == std::string_view::npos ? in.size() : end + 2);
    for (size_t at = head.find("\r\n"); at != std::string_view::npos && at + 2 < head.size(); at = head.find("\r\n", at + 2))
      if (head[at + 2] == ' ' || head[at + 2] == '\t')
        return reply_error(http::status::bad_request,
                           "bad HTTP request: obsolete line folding (a header line that starts with a space or tab)",
                           Route::Http);
    if (!in.empty()) {
      beast::error_code ec;
      size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec && ec != http::error::need_more) return on_read_error(ec);
      if (parser_->is_header_done()) return on_header({});
    }
    socket_.async_read_some(buffer_.prepare(16384), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (self->state_ == State::Closed) return;
      self->buffer_.commit(n);
      if (ec) return self->on_read_error(ec == net::error::eof ? beast::error_code(http::error::end_of_stream) : ec);
      self->put_header();
    });
  }

  void on_header(beast::error_code ec) {
    if (state_ == State::Closed) return;  // drain() closed it while this completion was queued
    if (ec) return on_read_error(ec);
    auto& req = parser_->get();
    if (std::string problem = framing_problem(req); !problem.empty())
      return reply_error(http::status::bad_request, "bad HTTP request: " + problem, Route::Http);
    auto expect = req.find(http::field::expect);
    if (expect != req.end() && beast::iequals(expect->value(), "100-continue") && !parser_->is_done()) {
      // The client waits for this before it sends the body.
      continue_.emplace(http::status::continue_, 11);
      http::async_write(socket_, *continue_, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return self->close();
        self->read_body();
      });
      return;
    }
    // A small request usually arrives whole, its body in the buffer with its head: parse it
    // here instead of through one more asynchronous read (a composed operation and a post).
    if (!parser_->is_done() && buffer_.size() > 0) {
      beast::error_code put_ec;
      size_t used = parser_->put(buffer_.data(), put_ec);
      buffer_.consume(used);
      if (put_ec && put_ec != http::error::need_more) return on_body(put_ec);
    }
    if (parser_->is_done()) return on_body({});
    read_body();
  }

  void read_body() {
    http::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->on_body(ec);
    });
  }

  void on_read_error(beast::error_code ec) {
    if (state_ != State::Reading) return;
    bool got_some = (parser_ && parser_->got_some()) || buffer_.size() > 0;
    if (timed_out_) {
      if (!got_some) return close();  // an idle keep-alive connection
      return reply_error(http::status::request_timeout, "the request did not arrive whole within " +
                                                            std::to_string(options_.request_timeout.count()) + " ms", Route::Http);
    }
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
        ec == net::error::operation_aborted || ec == net::error::broken_pipe || ec == http::error::partial_message)
      return close();  // the client went away (perhaps mid-body): nothing was run
    if (ec == http::error::header_limit)
      return reply_error(http::status::request_header_fields_too_large,
                         "the request line and headers are over the limit of " + std::to_string(options_.header_limit) + " bytes",
                         Route::Http);
    if (ec == http::error::body_limit)
      return reply_error(http::status::payload_too_large,
                         "the body is over the limit of " + std::to_string(options_.body_limit) + " bytes", Route::Http);
    if (ec == http::error::buffer_overflow)
      return reply_error(http::status::request_header_fields_too_large, "the request head is too large", Route::Http);
    return reply_error(http::status::bad_request, "bad HTTP request: " + ec.message(), Route::Http);
  }

  void on_body(beast::error_code ec) {
    // drain() may have closed the connection after the body arrived but before this ran: the
    // request must not run then, or an event would commit with no one to tell.
    if (state_ == State::Closed) return;
    if (ec) return on_read_error(ec);
    state_ = State::Handling;  // no deadline while the request runs (the timer, if it fires, lapses)
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    Request request;
    request.method = std::string_view(req.method_string().data(), req.method_string().size());
    request.target = std::string_view(req.target().data(), req.target().size());
    request.body = req.body();
    if (auto auth = req.find(http::field::authorization); auth != req.end())
      request.authorization = std::string_view(auth->value().data(), auth->value().size());
    if (auto tag = req.find(http::field::if_none_match); tag != req.end())
      request.if_none_match = std::string_view(tag->value().data(), tag->value().size());
    if (auto host = req.find(http::field::host); host != req.end()) request.host = host->value();
    if (auto origin = req.find(http::field::origin); origin != req.end()) request.origin = origin->value();
    if (auto type = req.find(http::field::content_type); type != req.end()) request.content_type = type->value();
    for (const auto& f : req) {
      if (!beast::iequals(f.name_string(), "idempotency-key")) continue;
      if (request.idempotency_key) request.idempotency_key_twice = true;
      request.idempotency_key = std::string_view(f.value().data(), f.value().size());
    }
    head_ = req.method() == http::verb::head;
    handle(request, [] {});
  }

  // Runs the request; after_handle (the request's bytes are done with) runs before the next read.
  template <class AfterHandle>
  void handle(const Request& request_in, AfterHandle after_handle) {
    in_handle_ = true;
    ++handled_;
    // A POST (an event or a query) may be answered later, from another thread: a query then
    // gets a cancel flag this session sets when its client leaves first (watch_client).
    Request request = request_in;
    if (request.method == "POST") request.cancel = std::make_shared<CancelFlag>(nullptr);
    api_.handle(request, [self = shared_from_this()](Response r) {
      // From the owner's thread for events, from a query thread for queries, inline for the
      // rest: onto the strand either way.
      net::dispatch(self->executor(), [self, r = std::move(r)]() mutable { self->write(std::move(r), false); });
    });
    in_handle_ = false;
    if (request.cancel && state_ == State::Handling) watch_client(std::move(request.cancel));
    after_handle();
    // A reply written inline (not an event's) left the next read to here: the request's views
    // into the parser stay valid until handle returns.
    // Pipelined requests already in the buffer are answered one inside the other's call chain;
    // every 16th goes through the strand's queue so that the stack stays shallow.
    if (read_after_handle_) {
      read_after_handle_ = false;
      if (++inline_reads_ < 16) return read_request();
      inline_reads_ = 0;
      net::post(socket_.get_executor(), [self = shared_from_this()] { self->read_request(); });
    }
  }

  // While the answer to request number handled_ is pending: waits for the socket to become
  // readable, and when the client closed its side (a peek reads end of stream, or an error),
  // stores Api::kClientGone in the request's cancel flag, so that a query nobody will read stops
  // at its next slice of steps (vm::RunOptions::cancel). Bytes from the client (a pipelined
  // request; over TLS, any record, a close_notify too) end the watch: the client is still there,
  // or cannot be told from one that is. Once the answer is written, the wait's completion (the
  // next request's bytes, or the close) finds another state or request number and does nothing.
  void watch_client(std::shared_ptr<CancelFlag> flag) {
    lowest().async_wait(tcp::socket::wait_read, [self = shared_from_this(), flag, n = handled_](beast::error_code ec) {
      if (ec || self->state_ != State::Handling || self->handled_ != n) return;
      char byte;
      ssize_t got = ::recv(self->lowest().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        cancel(*flag, Api::kClientGone);
      else if (got < 0)
        self->watch_client(flag);  // woken with nothing to read: wait again
    });
  }

  void reply_error(http::status status, const std::string& message, Route route) {
    api_.count(route, static_cast<int>(status));
    Response r;
    r.status = static_cast<int>(status);
    r.body = error_body(message);
    head_ = false;  // the request's method may not even be known: the reason is always sent
    write(std::move(r), true);
  }

  // The reply's bytes are written here, head and body in one buffer and one async_write: Beast's
  // serializer walked a chain of buffer views per write that cost more than the JSON body itself
  // (about 20k instructions a reply, a sixth of pure-serve's work per TPC-C transaction).
  void write(Response r, bool close_after) {
    if (state_ == State::Closed) return;
    state_ = State::Writing;
    bool keep = keep_alive_ && !close_after && !registry_.draining.load();
    out_.clear();
    std::string_view reason = http::obsolete_reason(static_cast<http::status>(r.status));
    out_ += "HTTP/1.1 ";
    out_ += std::to_string(r.status);
    out_ += ' ';
    out_.append(reason.data(), reason.size());
    out_ += "\r\nServer: pure-serve\r\nX-Content-Type-Options: nosniff\r\nContent-Type: ";
    out_ += r.content_type;
    out_ += "\r\n";
    if (!r.allow.empty()) out_ += "Allow: " + r.allow + "\r\n";
    for (const auto& [name, value] : r.headers) out_ += name + ": " + value + "\r\n";
    if (!keep) out_ += "Connection: close\r\n";
    if (r.status != 304) {  // a 304 has no body and no Content-Length
      out_ += "Content-Length: ";
      out_ += std::to_string(r.body.size());
      out_ += "\r\n\r\n";
      if (!head_) out_ += r.body;  // HEAD: the headers GET would send, no body
    } else {
      out_ += "\r\n";
    }
    // Most replies fit the socket's send buffer: written here at once, with no asynchronous
    // operation and no completion to schedule. The rest (or all, if the buffer is full) goes
    // through async_write under the write deadline.
    size_t n = 0;
    if constexpr (!kTls) {
      beast::error_code ec;
      n = socket_.write_some(net::buffer(out_), ec);
      if (!ec && n == out_.size()) return written(keep, close_after);
      if (ec && ec != net::error::would_block && ec != net::error::try_again) return close();
      if (ec) n = 0;
    }
    arm(Clock::now() + options_.write_timeout);
    net::async_write(socket_, net::buffer(out_.data() + n, out_.size() - n),
                     [self = shared_from_this(), keep, close_after](beast::error_code ec, size_t) {
                       if (ec) return self->close();
                       self->written(keep, close_after);
                     });
  }

  void written(bool keep, bool close_after) {
    if (keep) {
      if (in_handle_) {
        read_after_handle_ = true;
        return;
      }
      return read_request();
    }
    if (close_after) return linger();
    close();
  }

  // One timer per session, armed lazily: each read, asynchronous write or linger sets the
  // deadline; the timer is re-armed only when it fires early or must fire sooner, so a request
  // that arrives in time costs no timer operation. When it fires past the deadline in a state
  // that has one, the socket's operations are cancelled (a read then answers 408 or closes).
  void arm(Clock::time_point deadline) {
    deadline_ = deadline;
    if (timer_armed_ && timer_.expiry() <= deadline) return;
    timer_armed_ = true;
    timer_.expires_at(deadline);  // cancels a later wait, whose handler then returns
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) { self->on_timer(ec); });
  }

  void on_timer(beast::error_code ec) {
    if (ec) return;  // cancelled: re-armed sooner, or closed
    timer_armed_ = false;
    if (state_ == State::Closed || state_ == State::Handling) return;
    if (Clock::now() < deadline_) return arm(deadline_);
    if (state_ == State::Reading) timed_out_ = true;
    beast::error_code ignored;
    lowest().cancel(ignored);
  }

  // After an error reply: stop sending, read and discard what the client still sends for a
  // short while, then close. Closing at once with unread bytes would reset the connection and
  // the client might never see the reply.
  void linger() {
    state_ = State::Lingering;
    beast::error_code ignored;
    lowest().shutdown(tcp::socket::shutdown_send, ignored);
    arm(Clock::now() + std::chrono::seconds(1));
    discard();
  }

  void discard() {
    socket_.async_read_some(net::buffer(scratch_), [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->discarded_ += n;
      if (ec || self->discarded_ > (8u << 20)) return self->close();
      self->discard();
    });
  }

  void close() {
    state_ = State::Closed;
    timer_.cancel();
    beast::error_code ignored;
    lowest().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close(ignored);
  }

  Stream socket_;  // the connection: a socket, or a TLS stream over one
  net::steady_timer timer_;
  Clock::time_point deadline_{};
  bool timer_armed_ = false;
  bool in_handle_ = false;          // inside api_.handle (on_body)
  uint64_t handled_ = 0;            // requests handed to api_.handle (watch_client's request number)
  bool read_after_handle_ = false;  // a reply written inside it: read the next request after it
  uint32_t inline_reads_ = 0;       // requests read since the last asynchronous read
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string out_;  // the reply being written
  std::optional<http::response<http::empty_body>> continue_;
  Api& api_;
  const HttpOptions& options_;
  Registry& registry_;
  State state_ = State::Reading;
  bool keep_alive_ = true;
  bool head_ = false;  // the request being answered is a HEAD
  bool timed_out_ = false;
  size_t discarded_ = 0;
  char scratch_[16384];
};

// TLS (http_tls.cpp): the server's context from --tls-cert and --tls-key (null and error set when
// they do not load, or this build has no TLS), and a session on an accepted socket.
struct TlsContext;
std::shared_ptr<TlsContext> make_tls_context(const std::string& cert, const std::string& key, std::string& error);
void start_tls_session(TlsContext& tls, tcp::socket&& socket, Api& api, const HttpOptions& options, Registry& registry);

}  // namespace pure::serve::detail
