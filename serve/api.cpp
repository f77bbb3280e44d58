// serve/api.cpp — pure-serve's routes (api.h): a request to a module's events, queries,
// interface and source, and /health, with the helpers the api_*.cpp files share (api_internal.h).
// The JSON writer is api_json.cpp, the argument decoders api_args.cpp, the list pages
// api_lists.cpp and the metrics api_metrics.cpp.
#include "serve/api.h"

#include <cstddef>
#include <optional>
#include <thread>

#include "serve/api_internal.h"
#include "stdlib/numtext.h"
#include "serve/console.h"
#include "serve/server_log.h"

namespace pure::serve {

using Kind = ir::ValueType::Kind;
using Clock = std::chrono::steady_clock;

// ---- small helpers ----------------------------------------------------------------------------------

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

Response json_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response error(int status, std::string_view message) { return json_response(status, error_body(message)); }

const char* route_label(Route r) {
  switch (r) {
    case Route::Event: return "event";
    case Route::Query: return "query";
    case Route::Interface: return "interface";
    case Route::List: return "list";
    case Route::Health: return "health";
    case Route::Metrics: return "metrics";
    case Route::Other: return "other";
    case Route::Http: return "http";
    case Route::Source: return "source";
    case Route::Console: return "console";
    case Route::History: return "history";
    case Route::Backup: return "backup";
    case Route::kCount: break;
  }
  return "?";
}

// Whether a module takes events, and why not: "serving", "recovering", "failed" (its data
// directory did not recover: the others are served all the same) or "unhealthy" (its log failed).
std::pair<const char*, std::string> module_state(const Module& m) {
  switch (m.state.load(std::memory_order_acquire)) {
    case Module::State::Recovering: return {"recovering", ""};
    case Module::State::Failed: return {"failed", m.failure};
    case Module::State::Serving: break;
  }
  if (!m.owner()->healthy()) return {"unhealthy", m.owner()->unhealthy_reason()};
  return {"serving", ""};
}

// `,"state":"..."` and, for a failed or unhealthy module, `,"reason":"..."` (GET /v1, GET /v1/NAME).
static void append_state(std::string& out, const Module& m) {
  auto [state, reason] = module_state(m);
  out += ",\"state\":\"" + std::string(state) + "\"";
  if (!reason.empty()) {
    out += ",\"reason\":";
    append_json_string(out, reason);
  }
}

// ?min_seq=N (queries and list pages): *out N, or 0 when absent; "" or why N is not a seq.
static std::string parse_min_seq(std::string_view query_string, uint64_t* out) {
  *out = 0;
  for (std::string_view kv : split(query_string, '&')) {
    if (kv.substr(0, 8) != "min_seq=") continue;
    std::string_view v = kv.substr(8);
    int64_t n = 0;
    if (!numtext::parse_int(v, n) || n < 0)
      return "min_seq: expected the seq of an event (a whole number, 0 or more), got '" + std::string(v) + "'";
    *out = static_cast<uint64_t>(n);
  }
  return "";
}

// Waits (at most limits::kMinSeqWaitMs) until m has applied event min_seq: nullopt, or the 503.
static std::optional<Response> wait_min_seq(const Module& m, uint64_t min_seq) {
  if (min_seq == 0 || m.owner()->visible().second >= min_seq) return std::nullopt;
  // Polled: the owner publishes without a notification, and a follower applies the stream in
  // bursts; 2 ms is a small share of a read that waits at all.
  auto until = Clock::now() + std::chrono::milliseconds(limits::kMinSeqWaitMs);
  while (Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (m.owner()->visible().second >= min_seq) return std::nullopt;
  }
  std::string role = m.replica ? std::string(" (") + cluster::role_name(m.replica->status().role) + ")" : "";
  Response r = error(503, "min_seq " + std::to_string(min_seq) + ": this node" + role + " has applied events through " +
                              std::to_string(m.owner()->visible().second) + " after waiting " +
                              std::to_string(limits::kMinSeqWaitMs) + " ms; try again, or ask the leader");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

namespace {

// allow: "GET, HEAD" or "POST" (named "GET" or "POST" in the message)
Response method_not_allowed(std::string_view method, std::string_view what, const char* allow) {
  std::string_view named = std::string_view(allow).substr(0, std::string_view(allow).find(','));
  Response r = error(405, std::string(what) + " takes " + std::string(named) + ", not " + std::string(method));
  r.allow = allow;
  return r;
}

}  // namespace

// ---- the API ----------------------------------------------------------------------------------------

Api::Api(std::vector<Module*> modules, ApiOptions options)
    : modules_(std::move(modules)),
      options_(std::move(options)),
      reads_need_token_(options_.tokens.reads_need_token()),
      timeout_why_("cancelled: it ran longer than the time limit of " + std::to_string(options_.query_timeout_ms) +
                   " ms (--query-timeout-ms); ask for less, or raise --query-timeout-ms"),
      queries_(options_.query_threads, options_.max_query_queue) {
  for (Module* m : modules_) m->start_running();  // serve() did already; a test's modules may not have
}

Module* Api::find(std::string_view name) const {
  for (Module* m : modules_)
    if (m->name == name) return m;
  return nullptr;
}

void Api::finish(Route route, std::string_view target, const Response& r, Clock::time_point start) {
  uint64_t us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
  count(route, r.status);
  if (route == Route::Event) event_latency_.add(us);
  if (route == Route::Query) query_latency_.add(us);
  if (us >= options_.slow_us)
    server_log("slow_request", {{"route", as_json_string(route_label(route))}, {"target", as_json_string(target)}, {"status", as_json_int(r.status)},
                              {"micros", as_json_int(static_cast<int64_t>(us))}});
  else if (options_.log_requests)
    server_log("request", {{"route", as_json_string(route_label(route))}, {"target", as_json_string(target)}, {"status", as_json_int(r.status)},
                         {"micros", as_json_int(static_cast<int64_t>(us))}});
}

void Api::handle(const Request& request, Respond respond) {
  Clock::time_point start = Clock::now();
  auto answer = [&](Route route, Response r) {
    finish(route, request.target, r, start);
    respond(std::move(r));
  };
  std::string_view target = request.target, query_string;
  if (size_t q = target.find('?'); q != std::string_view::npos) {
    query_string = target.substr(q + 1);
    target = target.substr(0, q);
  }
  const std::string_view method = request.method;
  bool get = method == "GET" || method == "HEAD";  // HEAD: as GET; the HTTP layer drops the body
  // Who may ask (access.h): only the Host names this server serves (a page whose name was rebound
  // to this address sends its own), only its own pages' Origin.
  if (!request.host.empty() && !options_.hosts.allows(request.host))
    return answer(Route::Other, error(421, "this server does not serve the host '" + std::string(request.host) +
                                               "' (it serves " + options_.hosts.list() +
                                               "; start it with --allow-host NAME to serve another name)"));
  if (!request.origin.empty() && !same_origin(request.origin, request.host, options_.tls))
    return answer(Route::Other, error(403, "cross-origin requests are refused: Origin '" + std::string(request.origin) +
                                               "' is not this server's (" + (options_.tls ? "https://" : "http://") +
                                               std::string(request.host) + ")"));
  if (target == "/health") {  // open to all: a load balancer's probe carries no token
    if (!get) return answer(Route::Health, method_not_allowed(method, "/health", "GET, HEAD"));
    return answer(Route::Health, health());
  }
  Tokens::Check auth;
  if (options_.tokens.writes_need_token()) auth = options_.tokens.check(request.authorization);
  bool reads_need_token = reads_need_token_;
  if (target == "/metrics") {
    if (!get) return answer(Route::Metrics, method_not_allowed(method, "/metrics", "GET, HEAD"));
    if (reads_need_token && !(auth.scopes & kScopeRead))
      return answer(Route::Metrics, refuse_token(auth, kScopeRead, "/metrics"));
    Response r;
    r.body = metrics();
    r.content_type = "text/plain; version=0.0.4";
    return answer(Route::Metrics, std::move(r));
  }
  if (Response r; console_route(method, target, request.if_none_match, r)) return answer(Route::Console, std::move(r));
  if (target == "/v1" || target == "/v1/") {  // the modules this server serves, each with its state
    if (!get) return answer(Route::Interface, method_not_allowed(method, "/v1", "GET, HEAD"));
    if (reads_need_token && !(auth.scopes & kScopeRead))
      return answer(Route::Interface, refuse_token(auth, kScopeRead, std::string(method) + " /v1"));
    return answer(Route::Interface, modules_index());
  }
  constexpr std::string_view kPrefix = "/v1/";
  if (target.substr(0, kPrefix.size()) != kPrefix)
    return answer(Route::Other, error(404, "no route " + std::string(target) +
                                               ": the API is under /v1/MODULE, /health and /metrics, the console at /"));
  // Every read needs a token when read tokens exist: refused before anything of the module shows.
  if (reads_need_token && !(auth.scopes & kScopeRead))
    return answer(Route::Other, refuse_token(auth, kScopeRead, std::string(method) + " " + std::string(target)));
  std::vector<std::string_view> parts = split(target.substr(kPrefix.size()), '/');
  Module* m = find(parts[0]);
  if (!m) {
    std::string names;
    for (Module* x : modules_) names += (names.empty() ? "" : ", ") + x->name;
    return answer(Route::Other, error(404, "no module '" + std::string(parts[0]) + "' (serving: " + names + ")"));
  }
  if (parts.size() == 1) {
    if (!get) return answer(Route::Interface, method_not_allowed(method, "/v1/" + m->name, "GET, HEAD"));
    return answer(Route::Interface, interface(*m));
  }
  if (parts.size() == 3 && parts[1] == "lists") {
    if (!get) return answer(Route::List, method_not_allowed(method, "a list page", "GET, HEAD"));
    if (!m->serving()) return answer(Route::List, not_serving(*m));
    AsOf as_of;
    std::string rest;
    if (std::string bad = take_as_of(query_string, &as_of, &rest); !bad.empty())
      return answer(Route::List, error(400, bad));
    if (as_of.asked)  // built (or found) on a query thread, then paged there
      return list_as_of(*m, parts[2], std::move(rest), as_of, request, std::move(respond), start);
    uint64_t min_seq = 0;
    if (std::string e = parse_min_seq(query_string, &min_seq); !e.empty()) return answer(Route::List, error(400, e));
    if (min_seq == 0 || m->owner()->visible().second >= min_seq)
      return answer(Route::List, list_page(*m, parts[2], query_string));
    // Not applied yet (a follower behind): the wait runs on a query thread, never an I/O thread.
    struct Call {
      std::string list, query_string, target;
      Respond respond;
    };
    auto call = std::make_shared<Call>(Call{std::string(parts[2]), std::string(query_string), std::string(request.target),
                                            std::move(respond)});
    auto reply = [this, call, start](Response r) {
      finish(Route::List, call->target, r, start);
      call->respond(std::move(r));
    };
    QueryPool::Job job;
    job.run = [this, m, call, reply, min_seq] {
      std::optional<Response> late = wait_min_seq(*m, min_seq);
      reply(late ? std::move(*late) : list_page(*m, call->list, call->query_string));
    };
    job.refuse = [reply] { reply(error(503, "the list page was not read: the server is shutting down")); };
    if (!queries_.try_submit(std::move(job))) {
      Response r = error(503, "the list page waits for min_seq, and the query threads are all taken; try again later");
      r.headers.emplace_back("Retry-After", "1");
      reply(std::move(r));
    }
    return;
  }
  if (parts.size() != 2)
    return answer(Route::Other, error(404, "no route " + std::string(target) + ": use /v1/" + m->name + "/NAME or /v1/" +
                                               m->name + "/lists/LIST"));
  // The version serving now (a hot upgrade may replace it; this request keeps the one it found).
  std::shared_ptr<const Module::Running> running = m->current();
  const vm::Program& program = *running->program;
  int index = parts[1].empty() ? -1 : vm::find_function(program, parts[1]);
  // GET .../source is the module's text, PUT a hot upgrade (docs/upgrades.md); events and queries
  // take POST, so one named source stays reachable.
  if (parts[1] == "source" && (get || method == "PUT" || index < 0)) {
    if (method == "PUT") return upgrade(*m, query_string, request, auth, std::move(respond), start);
    if (!get) return answer(Route::Source, method_not_allowed(method, "/v1/" + m->name + "/source", "GET, HEAD, PUT"));
    return answer(Route::Source, source(*m));
  }
  // GET .../events is the audit trail (docs/history.md); an event or query named `events` takes POST.
  if (parts[1] == "events" && (get || index < 0)) {
    if (!get) return answer(Route::History, method_not_allowed(method, "/v1/" + m->name + "/events", "GET, HEAD"));
    if (!m->serving()) return answer(Route::History, not_serving(*m));
    return history(*m, query_string, request, std::move(respond), start);
  }
  // POST .../backup is a hot backup (docs/history.md) unless the module has an event or query of that name.
  if (parts[1] == "backup" && index < 0) {
    if (method != "POST") return answer(Route::Backup, method_not_allowed(method, "/v1/" + m->name + "/backup", "POST"));
    return backup(*m, query_string, request, auth, std::move(respond), start);
  }
  const vm::Function* fn = index >= 0 ? &program.functions[index] : nullptr;
  if (!fn || (fn->kind != FuncKind::Event && fn->kind != FuncKind::Query))
    return answer(Route::Other, error(404, "module " + m->name + " has no event or query '" + std::string(parts[1]) + "'"));
  Route route = fn->kind == FuncKind::Event ? Route::Event : Route::Query;
  if (method != "POST")
    return answer(route, method_not_allowed(method, std::string(fn->kind == FuncKind::Event ? "event " : "query ") + fn->name, "POST"));
  // A body a form or another site's page can send without asking (text/plain, a form's types)
  // never runs anything: application/json makes a browser ask first (a CORS preflight, refused).
  if (!is_json_content_type(request.content_type))
    return answer(route, error(415, std::string(fn->kind == FuncKind::Event ? "event " : "query ") + fn->name +
                                        " takes a JSON body: send 'Content-Type: application/json' (got " +
                                        (request.content_type.empty() ? std::string("none")
                                                                      : "'" + std::string(request.content_type) + "'") +
                                        ")"));
  if (!m->serving()) return answer(route, not_serving(*m));
  if (route == Route::Query)
    return query(*m, program, *fn, static_cast<uint32_t>(index), query_string, request, std::move(respond), start);
  event(*m, program, *fn, static_cast<uint32_t>(index), request, auth, std::move(respond), start);
}

Response Api::refuse_token(const Tokens::Check& check, uint8_t needed, std::string_view what) const {
  std::string scope = scope_name(needed);
  std::string prefix = std::string(what) + " needs a token of scope " + scope + ": ";
  Response r;
  std::string challenge = "Bearer realm=\"pure-serve\"";
  switch (check.outcome) {
    case Tokens::Outcome::Missing:
      r = error(401, prefix + "none was sent (send the header 'Authorization: Bearer TOKEN')");
      challenge += ", scope=\"" + scope + "\"";
      break;
    case Tokens::Outcome::WrongScheme:
      r = error(401, prefix + "the Authorization header must use the Bearer scheme ('Authorization: Bearer TOKEN')");
      challenge += ", scope=\"" + scope + "\"";
      break;
    case Tokens::Outcome::Invalid:
      r = error(401, prefix + "the token sent is not valid");
      challenge += ", error=\"invalid_token\", error_description=\"the token is not valid\"";
      break;
    case Tokens::Outcome::Valid:
      r = error(403, prefix + "the token sent has scope " + scope_name(check.scopes));
      challenge += ", error=\"insufficient_scope\", scope=\"" + scope + "\"";
      break;
  }
  r.headers.emplace_back("WWW-Authenticate", std::move(challenge));
  return r;
}

namespace {

// "runtime error at LINE:COL: ..." (an event's or a query's failure, as the VM words it) with the
// place in its own file, "runtime error at lib/m.pure:2:12: ...", when the module imports files.
std::string placed_reason(const std::function<std::string(Loc)>& place, const std::string& reason) {
  static constexpr std::string_view kAt = "runtime error at ";
  if (!place || reason.compare(0, kAt.size(), kAt) != 0) return reason;
  size_t i = kAt.size();
  auto number = [&](uint32_t* out) {
    size_t from = i;
    uint64_t v = 0;
    while (i < reason.size() && i - from < 9 && reason[i] >= '0' && reason[i] <= '9') v = v * 10 + (reason[i++] - '0');
    *out = static_cast<uint32_t>(v);
    return i > from;
  };
  Loc at;
  if (!number(&at.line) || i >= reason.size() || reason[i++] != ':' || !number(&at.col) ||
      reason.compare(i, 2, ": ") != 0)
    return reason;
  return std::string(kAt) + place(at) + reason.substr(i);
}

}  // namespace

void Api::event(Module& m, const vm::Program& program, const vm::Function& fn, uint32_t index, const Request& request, const Tokens::Check& auth,
                Respond respond, Clock::time_point start) {
  auto answer = [&](Response r) {
    finish(Route::Event, request.target, r, start);
    respond(std::move(r));
  };
  if (options_.tokens.writes_need_token() && !(auth.scopes & kScopeWrite))
    return answer(refuse_token(auth, kScopeWrite, "event " + fn.name));
  std::shared_ptr<host::Owner> owner = m.owner();  // one read: a rejoin may replace it (serve.h)
  if (!owner->healthy()) return answer(error(503, "module " + m.name + " is unhealthy: " + owner->unhealthy_reason()));
  // --cluster: only the leader takes events (docs/cluster.md). A follower redirects to the leader
  // it knows (307: the client sends the same request there); with none known, 503 and retry.
  if (m.replica && !m.replica->leader()) {
    cluster::ReplicaStatus s = m.replica->status();
    bool known = !s.leader_url.empty() && s.role == cluster::Role::Follower;
    Response r = error(known ? 307 : 503, "module " + m.name + ": this node is " + (s.role == cluster::Role::Follower ? "a follower" : "stopped") +
                                              (known ? "; the leader is " + s.leader + " at " + s.leader_url
                                                     : "; no leader is known yet: try again"));
    if (known) r.headers.emplace_back("Location", s.leader_url + std::string(request.target));
    else r.headers.emplace_back("Retry-After", "1");
    return answer(std::move(r));
  }
  std::string key;
  if (request.idempotency_key) {
    if (request.idempotency_key_twice) return answer(error(400, "Idempotency-Key: the header came twice; send one key"));
    if (std::string e = host::check_idempotency_key(*request.idempotency_key); !e.empty())
      return answer(error(400, "Idempotency-Key: the key " + e));
    key = std::string(*request.idempotency_key);
  }
  std::vector<vm::Value> args;
  if (std::string e = decode_args(fn, request.body, args); !e.empty()) return answer(error(400, e));
  owner->submit(index, std::move(args),
                  [this, &m, &fn, respond = std::move(respond), target = std::string(request.target), start](host::EventReply reply) {
                    Response r;
                    switch (reply.kind) {
                      case host::EventReply::Kind::Committed: {
                        // The event is committed (and durable) whatever happens to its reply: a
                        // result too large for --max-reply, or memory refused, is said with its seq.
                        std::string committed = "event " + fn.name + " committed as seq " + std::to_string(reply.sequence);
                        if (reply.result_bytes_at_least) {
                          r = too_large(committed + "; its result", reply.result_bytes_at_least);
                          break;
                        }
                        if (!reply.result_error.empty()) {
                          r = error(503, committed + "; its result cannot be sent: " + reply.result_error);
                          break;
                        }
                        try {
                          std::string body = "{\"ok\":true,\"seq\":" + std::to_string(reply.sequence);
                          if (reply.version) body += ",\"version\":" + std::to_string(reply.version);
                          if (fn.result_type.kind != Kind::Void) {  // the result the event declares
                            body += ",\"result\":";
                            append_value(body, fn.result_type, reply.value);
                          }
                          if (reply.replayed) body += ",\"replayed\":true";  // a retry: not run again
                          body += "}";
                          if (body.size() > options_.max_reply)
                            r = too_large(committed + "; its result", body.size());
                          else
                            r = json_response(200, std::move(body));
                        } catch (const std::bad_alloc&) {
                          r = error(503, committed + "; its result cannot be sent: out of memory: the system refused "
                                                     "the memory to build the reply");
                        }
                        break;
                      }
                      case host::EventReply::Kind::Failed: {
                        std::string body = "{\"ok\":false,\"reason\":";
                        append_json_string(body, placed_reason(m.place_of(reply.version), reply.reason));
                        if (reply.version) body += ",\"version\":" + std::to_string(reply.version);
                        r = json_response(409, body + "}");
                        break;
                      }
                      case host::EventReply::Kind::Unavailable: r = error(503, reply.reason); break;
                      case host::EventReply::Kind::KeyReused: {
                        std::string body = "{\"ok\":false,\"seq\":" + std::to_string(reply.sequence) + ",\"reason\":";
                        append_json_string(body, reply.reason);
                        r = json_response(422, body + "}");
                        break;
                      }
                    }
                    finish(Route::Event, target, r, start);
                    respond(std::move(r));
                  },
                  std::move(key), &program);
}

Response Api::too_large(const std::string& what, uint64_t bytes) const {
  (void)bytes;  // a lower bound that stopped counting just past the limit: not worth printing
  return error(413, what + " is larger than the reply limit of " + std::to_string(options_.max_reply) +
                        " bytes of JSON (--max-reply); ask for less (a page, a count), or raise --max-reply");
}

// The query runs on a query thread; a query whose result, or whose reply, runs out of memory is
// that query's failure (503), never the server's.
void Api::query(Module& m, const vm::Program& program, const vm::Function& fn, uint32_t index, std::string_view query_string,
                const Request& request, Respond respond, Clock::time_point start) {
  AsOf as_of;  // as_of=SEQ or as_of_time=TIME: the query runs against that past state
  std::string rest;
  if (std::string bad = take_as_of(query_string, &as_of, &rest); !bad.empty()) {
    Response r = error(400, bad);
    finish(Route::Query, request.target, r, start);
    return respond(std::move(r));
  }
  std::vector<vm::Value> args;
  if (std::string e = decode_args(fn, request.body, args); !e.empty()) {
    Response r = error(400, e);
    finish(Route::Query, request.target, r, start);
    return respond(std::move(r));
  }
  // One copy of what the query thread needs: the request's views die when this returns.
  struct Call {
    std::vector<vm::Value> args;
    std::string target;
    Respond respond;
    std::shared_ptr<CancelFlag> cancel;  // the time limit's, and the HTTP layer's (client gone)
    uint64_t min_seq = 0;                // ?min_seq=N: wait (bounded) until event N is applied here
  };
  auto call = std::make_shared<Call>(Call{std::move(args), std::string(request.target), std::move(respond),
                                          request.cancel ? request.cancel : std::make_shared<CancelFlag>(nullptr)});
  if (size_t q = request.target.find('?'); q != std::string_view::npos) {
    if (std::string e = parse_min_seq(request.target.substr(q + 1), &call->min_seq); !e.empty()) {
      Response r = error(400, e);
      finish(Route::Query, request.target, r, start);
      return call->respond(std::move(r));
    }
  }
  auto reply = [this, call, start](Response r) {
    finish(Route::Query, call->target, r, start);
    call->respond(std::move(r));
  };
  QueryPool::Job job;
  job.run = [this, &m, &program, &fn, index, call, reply, as_of] {
    Response r;
    try {
      uint64_t watched = 0;  // the time limit counts from the start on a query thread
      if (options_.query_timeout_ms)
        watched = watch_.watch(call->cancel, Clock::now() + std::chrono::milliseconds(options_.query_timeout_ms),
                               timeout_why_.c_str());
      std::optional<Response> late = wait_min_seq(m, call->min_seq);
      std::shared_ptr<const PastState> past;
      if (late)
        r = std::move(*late);
      else if (as_of.asked)
        past = past_state(m, as_of, &r);
      if (!late && (!as_of.asked || past)) r = run_query(m, program, fn, index, call->args, *call->cancel, past.get());
      if (watched) watch_.unwatch(watched);
    } catch (const std::bad_alloc&) {
      r = error(503, "query " + fn.name + ": out of memory: the system refused the memory to answer it");
    }
    reply(std::move(r));
  };
  job.refuse = [reply, &fn] { reply(error(503, "query " + fn.name + " was not run: the server is shutting down")); };
  if (!queries_.try_submit(std::move(job))) {
    Response r = error(503, "query " + fn.name + " refused: " + std::to_string(queries_.max_queue()) +
                                " queries are already waiting for the " + std::to_string(queries_.threads()) +
                                " query threads (--max-query-queue, --query-threads); try again later");
    r.headers.emplace_back("Retry-After", "1");
    reply(std::move(r));
  }
}

Response Api::run_query(Module& m, const vm::Program& program, const vm::Function& fn, uint32_t index,
                        const std::vector<vm::Value>& args, const CancelFlag& cancel, const PastState* past) {
  vm::CallResult r;
  if (past) {  // the past state is in the schema of the version it was brought to (past->running)
    if (past->running->program.get() != &program) {
      r.ok = false;
      r.reason = "module " + m.name + " was upgraded while the query waited: send it again";
    } else {
      r = m.owner()->query_at(*past->running->program, past->snapshot, past->bytes, index, args, &cancel);
    }
  } else {
    r = m.owner()->query(index, args, &cancel, &program);
  }
  if (r.cancelled && r.error) {  // the time limit, or the client gone (whose answer nobody reads)
    (cancel.load(std::memory_order_acquire) == kClientGone ? cancelled_client_gone_ : cancelled_timeout_)
        .fetch_add(1, std::memory_order_relaxed);
    return error(503, "query " + fn.name + " " + r.error->message);
  }
  if (!r.ok) {
    std::string body = "{\"reason\":";
    // As an event's reason reads: a `fail`'s own text, or "runtime error at LINE:COL: message".
    std::string reason = r.reason;
    static constexpr std::string_view kFailed = "failed: ";
    if (r.error && r.error->is_fail && r.error->message.starts_with(kFailed)) {
      reason = r.error->message.substr(kFailed.size());
    } else if (r.error) {
      const std::function<std::string(Loc)> place =
          past ? past->running->place : m.running_for(&program)->place;  // the version that ran it
      reason = "runtime error at " +
               (place ? place(r.error->loc) : std::to_string(r.error->loc.line) + ":" + std::to_string(r.error->loc.col)) +
               ": " + r.error->message;
    }
    append_json_string(body, reason);
    if (past) body += ",\"as_of\":" + std::to_string(past->sequence);  // what it read, as a result names it
    return json_response(409, body + "}");
  }
  if (r.result_bytes_at_least) return too_large("the result of query " + fn.name, r.result_bytes_at_least);
  if (!r.result_error.empty()) return error(503, "query " + fn.name + ": " + r.result_error);
  std::string body = "{\"result\":";
  append_value(body, fn.result_type, r.value);
  r.value = vm::Value{};  // its memory back before the reply's is copied
  if (past) body += ",\"as_of\":" + std::to_string(past->sequence);
  body += "}";
  if (body.size() > options_.max_reply) return too_large("the result of query " + fn.name, body.size());
  return json_response(200, std::move(body));
}

Response Api::modules_index() const {
  std::string out = "{\"modules\":[";
  for (size_t i = 0; i < modules_.size(); ++i) {
    const Module& m = *modules_[i];
    out += i ? ",{\"name\":" : "{\"name\":";
    append_json_string(out, m.name);
    append_state(out, m);
    std::unique_lock<std::mutex> history_lock(m.upgrade_mu);  // a hot upgrade changes the version
    if (m.serving() && !m.versions.history.empty()) out += ",\"version\":" + std::to_string(m.versions.version);
    history_lock.unlock();
    out += ",\"interface\":";
    append_json_string(out, "/v1/" + m.name);
    out += '}';
  }
  out += "]}";
  Response r;
  r.body = std::move(out);
  return r;
}

Response Api::interface(const Module& m) const {
  std::string out = "{\"module\":";
  append_json_string(out, m.name);
  append_state(out, m);  // the console shows why a module takes no events
  // Its versions (docs/upgrades.md): the one serving, and each one the directory kept, with the
  // sequence of the upgrade record that started it (0: version 1). Known once it serves.
  std::shared_ptr<const Module::Running> running = m.current();
  std::unique_lock<std::mutex> history_lock(m.upgrade_mu);  // a hot upgrade appends to the history
  if (m.serving() && !m.versions.history.empty()) {
    out += ",\"version\":" + std::to_string(m.versions.version) + ",\"versions\":[";
    for (size_t i = 0; i < m.versions.history.size(); ++i) {
      const host::VersionFile& v = m.versions.history[i];
      out += (i ? ",{\"version\":" : "{\"version\":") + std::to_string(v.number) +
             ",\"begins\":" + std::to_string(v.begins) + ",\"source_bytes\":" + std::to_string(v.source.size()) + "}";
    }
    out += ']';
  }
  history_lock.unlock();
  out += options_.tokens.writes_need_token() ? ",\"events_need_token\":true" : ",\"events_need_token\":false";
  out += reads_need_token_ ? ",\"reads_need_token\":true" : ",\"reads_need_token\":false";
  for (FuncKind kind : {FuncKind::Event, FuncKind::Query}) {
    out += kind == FuncKind::Event ? ",\"events\":[" : ",\"queries\":[";
    bool first = true;
    for (const vm::Function& fn : running->program->functions) {
      if (fn.kind != kind) continue;
      if (!first) out += ',';
      first = false;
      out += "{\"name\":";
      append_json_string(out, fn.name);
      out += ",\"params\":[";
      for (size_t i = 0; i < fn.param_names.size(); ++i) {
        if (i) out += ',';
        append_typed(out, fn.param_names[i], fn.param_types[i]);
      }
      out += ']';
      if (kind == FuncKind::Query || fn.result_type.kind != Kind::Void) {  // an event's only when it declares one
        out += ",\"result\":";
        append_typed(out, "result", fn.result_type);
      }
      out += '}';
    }
    out += ']';
  }
  out += ",\"lists\":[";
  // row counts: O(1) each; null while the module recovers (it has no state yet)
  std::shared_ptr<const rt::Snapshot> snap;
  if (m.serving()) {  // the lists of the visible snapshot's version
    auto [s, sequence] = m.owner()->visible();
    snap = std::move(s);
    running = m.running_for(m.owner()->program_at(sequence).first);
  }
  for (size_t i = 0; i < running->stored.size(); ++i) {
    const ir::ListDesc& d = running->stored[i];
    if (i) out += ',';
    out += "{\"name\":";
    append_json_string(out, d.name);
    out += d.sequence ? ",\"kind\":\"seq\"" : ",\"kind\":\"keyed\"";
    out += ",\"count\":" + (snap ? std::to_string(snap->list(i).count()) : std::string("null"));
    for (int part = 0; part < 2; ++part) {
      out += part == 0 ? ",\"key\":[" : ",\"fields\":[";
      size_t from = part == 0 ? 0 : d.key_count, to = part == 0 ? d.key_count : d.cols.size();
      for (size_t c = from; c < to; ++c) {
        if (c != from) out += ',';
        out += "{\"name\":";
        append_json_string(out, d.names[c]);
        out += ",\"type\":\"";
        out += col_name(d.cols[c]);
        out += '"';
        if (c < d.members.size() && !d.members[c].empty()) append_members(out, d.members[c]);
        out += '}';
      }
      out += ']';
    }
    out += '}';
  }
  out += "]}";
  return json_response(200, std::move(out));
}

Response Api::source(const Module& m) const {
  std::string out = "{\"module\":";
  append_json_string(out, m.name);
  out += ",\"source\":";
  append_json_string(out, m.current()->source);
  out += '}';
  return json_response(200, std::move(out));
}

Response Api::queue_full(const std::string& what) const {
  Response r = error(503, what + " was refused: " + std::to_string(queries_.max_queue()) +
                              " queries are already waiting for the query threads; try again later");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

Response Api::not_serving(const Module& m) const {
  if (m.state.load(std::memory_order_acquire) == Module::State::Failed)
    return error(503, "module " + m.name + " did not recover: " + m.failure);
  return error(503, "module " + m.name + " is recovering (" + std::to_string(m.recovery_records.load()) +
                        " records replayed so far); try again shortly");
}

Response Api::health() const {
  bool all = true;
  std::string mods = "{";
  for (size_t i = 0; i < modules_.size(); ++i) {
    const Module& m = *modules_[i];
    if (i) mods += ',';
    append_json_string(mods, m.name);
    mods += ':';
    auto [state, reason] = module_state(m);
    std::string_view said = state;
    all = all && said == "serving";
    append_json_string(mods, said == "failed"      ? "recovery failed: " + reason
                             : said == "unhealthy" ? "unhealthy: " + reason
                                                   : std::string(said));
  }
  mods += '}';
  // --cluster: each module's role, applied sequence and lag (docs/cluster.md)
  std::string cluster;
  for (const Module* m : modules_) {
    if (!m->replica || !m->serving()) continue;
    cluster::ReplicaStatus s = m->replica->status();
    cluster += cluster.empty() ? "{" : ",";
    append_json_string(cluster, m->name);
    cluster += ":{\"role\":";
    append_json_string(cluster, cluster::role_name(s.role));
    cluster += ",\"applied\":" + std::to_string(s.applied) + ",\"stream_events\":" + std::to_string(s.stream_events) +
               ",\"lag\":" + std::to_string(s.lag) + ",\"rejoins\":" + std::to_string(s.rejoins) +
               ",\"read_from\":" + std::to_string(s.read_from) + ",\"installed\":" + std::to_string(s.installed) +
               ",\"published\":" + std::to_string(s.published) + ",\"trimmed_below\":" + std::to_string(s.trimmed_below) +
               ",\"leader\":";
    append_json_string(cluster, s.leader);
    cluster += ",\"leader_url\":";
    append_json_string(cluster, s.leader_url);
    if (!s.failure.empty()) {
      cluster += ",\"failure\":";
      append_json_string(cluster, s.failure);
    }
    cluster += "}";
  }
  if (!cluster.empty()) cluster = ",\"cluster\":" + cluster + "}";
  return json_response(all ? 200 : 503, std::string("{\"ok\":") + (all ? "true" : "false") + ",\"modules\":" + mods + cluster + "}");
}

bool Api::healthy() const {
  for (const Module* m : modules_)
    if (!m->serving() || !m->owner()->healthy()) return false;
  return true;
}

}  // namespace pure::serve
