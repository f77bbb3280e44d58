// serve/api_history.cpp — GET /v1/NAME/events: the audit trail of a module (docs/history.md),
// a page of its logged records read from its data directory (host/history.h) on a query thread,
// never through the owner, so reading history blocks no event. Records up to the visible (durable)
// sequence only. Its parameters (after, before, limit, event, since) are checked on the I/O
// thread: a bad one is a 400 naming it. The parameters and each record's JSON are history.h's,
// which `pure-run --data DIR --events` shares.
#include "host/history.h"
#include "host/versions.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/history.h"

namespace pure::serve {

namespace {

// The module's versions as one request sees them (a hot upgrade may add one meanwhile): kept
// alive by the request, since its page is read on a query thread.
struct HistoryKeep {
  std::shared_ptr<const Module::Running> running;
  std::vector<host::VersionFile> versions;
  HistoryCode code;
};

std::shared_ptr<const HistoryKeep> history_code(const Module& m) {
  auto keep = std::make_shared<HistoryKeep>();
  {
    std::lock_guard<std::mutex> lock(m.upgrade_mu);
    keep->running = m.running;
    keep->versions = m.versions.history;
    keep->code.version = m.versions.version;
    keep->code.version_begins = m.versions.version_begins;
  }
  keep->code.program = keep->running->program.get();
  keep->code.versions = &keep->versions;
  return keep;
}

}  // namespace

void Api::history(Module& m, std::string_view query_string, const Request& request, Respond respond,
                  std::chrono::steady_clock::time_point start) {
  auto answer = [&](Response r) {
    finish(Route::History, request.target, r, start);
    respond(std::move(r));
  };
  const std::string takes = "the audit trail takes after, before, limit, event and since";
  host::HistoryFilter filter;
  bool has_before = false;
  filter.max_scan_bytes = limits::kHistoryScanBytes;
  std::shared_ptr<const HistoryKeep> keep = history_code(m);
  for (std::string_view kv : split(query_string, '&')) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    std::string_view key = kv.substr(0, eq);
    if (!is_history_parameter(key))
      return answer(error(400, "unknown query parameter '" + std::string(key) + "': " + takes));
    std::string value;  // as a browser or an HTTP client writes it: a time's colons as %3A
    if (!percent_decode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1), value))
      return answer(error(400, std::string(key) + ": bad percent-encoding"));
    std::string bad = parse_history_parameter(keep->code, m.name, key, value, limits::kHistoryPageRecords, &filter,
                                              &has_before);
    if (!bad.empty()) return answer(error(400, bad));
  }
  if (std::string bad = check_history_range(filter, has_before); !bad.empty()) return answer(error(400, bad));
  struct Call {
    std::string target;
    Respond respond;
  };
  auto call = std::make_shared<Call>(Call{std::string(request.target), std::move(respond)});
  auto reply = [this, call, start](Response r) {
    finish(Route::History, call->target, r, start);
    call->respond(std::move(r));
  };
  QueryPool::Job job;
  job.run = [&m, filter, reply, keep]() mutable {
    Response r;
    try {
      filter.through = m.owner()->visible().second;  // whole on disk: durable
      host::HistoryPage page;
      host::Status s = host::read_history(host::posix_file_system(), m.dir, 0, filter, &page);
      if (!s.ok()) {
        reply(error(500, "reading the history of module " + m.name + ": " + s.error));
        return;
      }
      std::string out = "{\"module\":";
      append_json_string(out, m.name);
      out += ",\"through\":" + std::to_string(filter.through);
      out += ",\"oldest\":" + (page.oldest ? std::to_string(page.oldest) : std::string("null"));
      out += ",\"events\":[";
      for (size_t i = 0; i < page.records.size(); ++i) {
        if (i) out += ',';
        append_history_record(out, keep->code, page.records[i]);
      }
      out += "],\"next_after\":" + (page.next_after ? std::to_string(page.next_after) : std::string("null")) + "}";
      r = json_response(200, std::move(out));
    } catch (const std::bad_alloc&) {
      r = error(503, "the history of module " + m.name + ": out of memory: the system refused the memory to answer");
    }
    reply(std::move(r));
  };
  job.refuse = [reply] { reply(error(503, "the history was not read: the server is shutting down")); };
  if (!queries_.try_submit(std::move(job))) reply(queue_full("the history read"));
}

}  // namespace pure::serve
