// serve/api.h — pure-serve's HTTP API without the HTTP: routes a request (method, target,
// body, token) to a module's events, queries, interface and stored lists, and answers with a
// status and a JSON body (docs/serve.md). The HTTP layer (http.cpp) parses and writes HTTP;
// this layer is everything else, plus the metrics: api.cpp (the routes), api_json.cpp,
// api_args.cpp (with Boost.JSON for parsing), api_lists.cpp and api_metrics.cpp.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/limits.h"
#include "host/backup.h"
#include "host/owner.h"
#include "serve/access.h"
#include "serve/serve.h"
#include "serve/query_pool.h"
#include "serve/query_watch.h"
#include "ir/ir.h"
#include "vm/vm.h"

namespace pure::serve {

struct Request {
  std::string_view method;         // "GET", "POST", ...
  std::string_view target;         // path and query, as sent
  std::string_view body;
  std::string_view authorization;  // the Authorization header, or ""
  std::string_view if_none_match;  // the If-None-Match header, or "" (the console's files)
  std::string_view host;           // the Host header ("" only in HTTP/1.0 without one)
  std::string_view origin;         // the Origin header, or ""
  std::string_view content_type;   // the Content-Type header, or ""
  // The Idempotency-Key header (an event's; docs/history.md#idempotency-keys), or none; twice:
  // it came more than once (a 400).
  std::optional<std::string_view> idempotency_key;
  bool idempotency_key_twice = false;
  // A query's cancel flag, for the HTTP layer to store Api::kClientGone in when the client leaves
  // before the answer (null: the query gets one of its own, that only its time limit sets).
  std::shared_ptr<CancelFlag> cancel;
};

struct Response {
  int status = 200;
  std::string body;                // JSON, or Prometheus text for /metrics
  std::string content_type = "application/json";
  std::string allow;               // for 405: the methods the route takes
  std::vector<std::pair<std::string, std::string>> headers;  // more headers (the console's ETag, ...)
};
using Respond = std::function<void(Response)>;

// Where the HTTP layer reports requests it answered itself (bad HTTP, limits, timeouts).
enum class Route : uint8_t { Event, Query, Interface, List, Health, Metrics, Other, Http, Source, Console, History, Backup, kCount };

// `{"error":"..."}` with message escaped.
std::string error_body(std::string_view message);
// JSON text of s (quoted, escaped; invalid UTF-8 bytes become U+FFFD).
void append_json_string(std::string& out, std::string_view s);
// A num in Pure's shortest round-trip style; nan, inf and -inf as the strings "nan", "inf", "-inf".
void append_json_num(std::string& out, double d);

class Api {
 public:
  Api(std::vector<Module*> modules, ApiOptions options);
  // Answers through respond exactly once: at once for most routes, from the module's owner
  // (another thread) for events, from a query thread (QueryPool) for queries. Never blocks on
  // the owner or on a query.
  void handle(const Request& request, Respond respond);
  // Refuses the queries still waiting (503) and waits for the running ones; the server's drain
  // calls it before it closes the owners. Idempotent.
  void stop_queries() { queries_.stop(); }
  // The cancel message of a query whose client left before its answer (the HTTP layer stores it).
  // An array, not a pointer to a literal: one object with one address in every translation unit,
  // which the query thread compares the flag against (copies of a literal need not share one).
  static constexpr char kClientGone[] = "cancelled: the client closed the connection before the answer";
  // Counts a reply the HTTP layer made without calling handle().
  void count(Route route, int status, uint64_t micros = 0);
  std::string metrics() const;
  bool healthy() const;
  // --backup-every (api_backup.cpp, docs/history.md "Scheduled backups"): a backup named
  // auto-MODULE-SEQUENCE of each serving module whose queries see events its newest scheduled
  // backup lacks, then the module's scheduled backups beyond --backup-keep deleted, oldest first.
  // Runs on the caller's thread (serve()'s scheduler), taking the one-backup-at-a-time turn from
  // POST .../backup (waiting while one runs, unless stopping is set).
  void scheduled_backups(const std::atomic<bool>& stopping);
  size_t connections_open() const { return connections_.load(); }
  std::atomic<int64_t>& connections() { return connections_; }

 private:
  struct Latency {
    static constexpr std::array<uint64_t, 14> kBoundsUs = {50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000,
                                                           50000, 100000, 250000, 1000000, 5000000};
    std::array<std::atomic<uint64_t>, kBoundsUs.size() + 1> buckets{};
    std::atomic<uint64_t> count{0}, sum_us{0};
    void add(uint64_t us);
  };
  static constexpr std::array<int, 19> kStatuses = {200, 304, 307, 400, 401, 403, 404, 405, 408, 409,
                                                     410, 413, 415, 421, 431, 500, 503, 505, 0};

  // program: the version fn was found in (the owner maps fn to a newer version's event of the
  // same name and types if a hot upgrade comes before it runs).
  void event(Module& m, const vm::Program& program, const vm::Function& fn, uint32_t index, const Request& request, const Tokens::Check& auth,
             Respond respond, std::chrono::steady_clock::time_point start);
  // 413: a result (or its reply) of at least `bytes` passes --max-reply; `what` names it.
  Response too_large(const std::string& what, uint64_t bytes) const;
  // Decodes the arguments here, then runs the query on a query thread and answers from there.
  void query(Module& m, const vm::Program& program, const vm::Function& fn, uint32_t index,
             std::string_view query_string, const Request& request, Respond respond,
             std::chrono::steady_clock::time_point start);
  // A past state (as_of, api_as_of.cpp): its store, kept alive for the snapshot queries read, in
  // the schema of the version `running` (the one serving when it was built).
  struct PastState {
    std::unique_ptr<rt::Store> store;
    std::shared_ptr<const rt::Snapshot> snapshot;  // declared after store: released before it
    uint64_t sequence = 0;
    uint64_t bytes = 0;  // what it holds (rt::MemoryUse), counted against the module's memory budget
    std::shared_ptr<const Module::Running> running;
  };
  // past: run against that past state instead of the visible one.
  Response run_query(Module& m, const vm::Program& program, const vm::Function& fn, uint32_t index,
                     const std::vector<vm::Value>& args, const CancelFlag& cancel, const PastState* past = nullptr);
  Response modules_index() const;  // GET /v1
  Response interface(const Module& m) const;
  // past: the past state to page, its sequence named in the answer (null: the visible state).
  Response list_page(const Module& m, std::string_view list, std::string_view query,
                     const PastState* past = nullptr) const;
  // Reads as of a past point (api_as_of.cpp, docs/history.md): as_of=SEQ or as_of_time=TIME on a
  // query or a list page.
  struct AsOf {
    bool asked = false;
    bool by_time = false;  // value is milliseconds since the epoch (as_of_time), else a sequence
    uint64_t value = 0;
  };
  // Takes as_of and as_of_time out of a query string into *out, the other parameters into *rest:
  // "" or the 400 message.
  static std::string take_as_of(std::string_view query_string, AsOf* out, std::string* rest);
  // On a query thread: the module's state as of the point asked for (the last one built is cached),
  // or null with the answer to give (400 beyond the present, 410 past retention, 500 damage).
  std::shared_ptr<const PastState> past_state(Module& m, const AsOf& as_of, Response* refusal);
  void list_as_of(Module& m, std::string_view list, std::string rest, AsOf as_of, const Request& request,
                  Respond respond, std::chrono::steady_clock::time_point start);
  struct AsOfCache;
  static std::shared_ptr<AsOfCache> make_as_of_cache();
  std::shared_ptr<AsOfCache> as_of_cache_ = make_as_of_cache();
  Response source(const Module& m) const;
  // GET /v1/NAME/events (api_history.cpp): the audit trail, read from the data directory on a
  // query thread; its parameters are checked here (400).
  void history(Module& m, std::string_view query_string, const Request& request, Respond respond,
               std::chrono::steady_clock::time_point start);
  // PUT /v1/NAME/source (api_upgrade.cpp): a hot upgrade (docs/upgrades.md). The new source is
  // compiled on a query thread, planned by the module's owner against its live state between two
  // batches, and applied there when the plan allows it (?plan=1: answered, never applied).
  void upgrade(Module& m, std::string_view query_string, const Request& request, const Tokens::Check& auth,
               Respond respond, std::chrono::steady_clock::time_point start);
  // POST /v1/NAME/backup (api_backup.cpp, docs/history.md): a hot backup of the module's data
  // directory into --backup-dir, written on a query thread (never the owner), one at a time.
  void backup(Module& m, std::string_view query_string, const Request& request, const Tokens::Check& auth,
              Respond respond, std::chrono::steady_clock::time_point start);
  std::atomic<bool> backing_up_{false};
  // What a backup of m wrote, or why it did not (the caller holds backing_up_). name: the backup's
  // name, or "" for the default: MODULE-SEQUENCE, or auto-MODULE-SEQUENCE when scheduled.
  struct Written {
    host::Status status;
    host::CopyProblem problem = host::CopyProblem::None;
    std::string name;
    host::CopyReport report;
  };
  Written write_backup(Module& m, const std::string& name, bool scheduled);
  std::atomic<uint64_t> scheduled_written_{0}, scheduled_failed_{0}, scheduled_pruned_{0};
  Response health() const;
  Response not_serving(const Module& m) const;  // 503 while recovering or after recovery failed
  // 503 with Retry-After: what (e.g. "the history read") was refused, the query threads' queue full
  Response queue_full(const std::string& what) const;
  // 401 or 403 for a request that needs a token of scope `needed` and has not got one (what: the
  // route, for the message), with its WWW-Authenticate header (RFC 6750).
  Response refuse_token(const Tokens::Check& check, uint8_t needed, std::string_view what) const;
  Module* find(std::string_view name) const;
  void finish(Route route, std::string_view target, const Response& r, std::chrono::steady_clock::time_point start);
  static size_t status_index(int status);

  std::vector<Module*> modules_;
  ApiOptions options_;
  bool reads_need_token_ = false;  // options_.tokens.reads_need_token(), once
  std::array<std::array<std::atomic<uint64_t>, kStatuses.size()>, static_cast<size_t>(Route::kCount)> requests_{};
  Latency event_latency_, query_latency_;
  std::atomic<int64_t> connections_{0};
  // The cancel message of a query past --query-timeout-ms; the queries cancelled, by reason.
  std::string timeout_why_;
  std::atomic<uint64_t> cancelled_timeout_{0}, cancelled_client_gone_{0};
  QueryWatch watch_;  // the queries' deadlines
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  QueryPool queries_;  // last: its threads stop (the destructor) before the rest goes
};

}  // namespace pure::serve
