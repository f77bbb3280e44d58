// serve/api_as_of.cpp — reads as of a past point (docs/history.md, "Reads as of a point"):
// `as_of=SEQ` or `as_of_time=TIME` on a query (POST /v1/NAME/QUERY?as_of=SEQ)
// or a list page (GET /v1/NAME/lists/LIST?as_of=SEQ). The state is built on a query thread by
// host::read_state_as_of (the checkpoint at or before the point, the log replayed up to it with
// each record's own version's code, read only), brought to the running version's schema, and
// kept: the last limits::kAsOfStates states built stay cached for the next reads of the same
// point; one being used by a query lives as long as that query, cached or not.
#include <algorithm>
#include <mutex>

#include "base/limits.h"
#include "host/as_of.h"
#include "host/history.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/history.h"

namespace pure::serve {

using Clock = std::chrono::steady_clock;

struct Api::AsOfCache {
  struct Entry {
    const Module* module;
    uint64_t sequence;
    uint32_t version;  // the version whose schema it is in (a hot upgrade makes a new one)
    std::shared_ptr<const PastState> state;
    uint64_t used;
  };
  std::mutex mu;  // entries, tick
  std::vector<Entry> entries;
  uint64_t tick = 0;
  // One state built at a time (a past state is a whole copy of the module's state: two requests
  // for the same point build it once, and the memory of at most one build is in flight). Guards
  // codes too.
  std::mutex build_mu;
  struct Codes {
    const Module* module;
    std::vector<std::unique_ptr<host::VersionCode>> by_version;  // [version]
  };
  std::vector<Codes> codes;

  std::shared_ptr<const PastState> find(const Module* m, uint64_t sequence, uint32_t version) {
    std::lock_guard<std::mutex> lock(mu);
    for (Entry& e : entries)
      if (e.module == m && e.sequence == sequence && e.version == version) {
        e.used = ++tick;
        return e.state;
      }
    return nullptr;
  }
  void keep(const Module* m, std::shared_ptr<const PastState> state) {
    std::lock_guard<std::mutex> lock(mu);
    if (entries.size() >= limits::kAsOfStates) {
      auto oldest = std::min_element(entries.begin(), entries.end(),
                                     [](const Entry& a, const Entry& b) { return a.used < b.used; });
      entries.erase(oldest);
    }
    const uint32_t version = state->running->version;
    entries.push_back(Entry{m, state->sequence, version, std::move(state), ++tick});
  }
};

std::shared_ptr<Api::AsOfCache> Api::make_as_of_cache() { return std::make_shared<AsOfCache>(); }

namespace {

bool whole_number(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + uint64_t(c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string Api::take_as_of(std::string_view query_string, AsOf* out, std::string* rest) {
  *out = AsOf{};
  rest->clear();
  for (std::string_view kv : split(query_string, '&')) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    std::string_view key = kv.substr(0, eq);
    if (key != "as_of" && key != "as_of_time") {
      if (!rest->empty()) *rest += '&';
      *rest += kv;
      continue;
    }
    if (out->asked) return "as_of: give one of as_of and as_of_time, once";
    std::string value;
    if (!percent_decode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1), value))  // %3A: a time's colons
      return std::string(key) + ": bad percent-encoding";
    out->asked = true;
    if (key == "as_of") {
      if (!whole_number(value, &out->value))
        return "as_of: expected a sequence number (a whole number 0 or more), got '" + value +
               "' (a time goes in as_of_time)";
    } else {
      out->by_time = true;
      if (!parse_history_time(value, &out->value))
        return "as_of_time: expected milliseconds since 1970 or a UTC time like 2026-12-07T02:30:00Z, got '" + value +
               "'";
    }
  }
  return "";
}

std::shared_ptr<const Api::PastState> Api::past_state(Module& m, const AsOf& as_of, Response* refusal) {
  host::FileSystem& fs = host::posix_file_system();
  const uint64_t through = m.owner()->visible().second;  // durable: its records are whole on disk
  uint64_t sequence = as_of.value;
  if (as_of.by_time) {
    // The last record committed at or before the time: the one before the first committed after it.
    host::HistoryFilter after;
    after.since_ms = as_of.value + 1;
    after.through = through;
    after.limit = 1;
    host::HistoryPage page;
    if (host::Status s = host::read_history(fs, m.dir, 0, after, &page); !s.ok()) {
      *refusal = error(500, "reading the history of module " + m.name + ": " + s.error);
      return nullptr;
    }
    sequence = page.records.empty() ? through : page.records[0].sequence - 1;
  }
  // The version serving now, and the versions the directory has then: the past state is brought to
  // its schema (a hot upgrade after this one builds, and caches, another).
  const std::shared_ptr<const Module::Running> running = m.current();
  const host::VersionedReport versions = m.versions_copy();
  if (auto hit = as_of_cache_->find(&m, sequence, running->version)) return hit;
  std::lock_guard<std::mutex> build(as_of_cache_->build_mu);
  if (auto hit = as_of_cache_->find(&m, sequence, running->version)) return hit;  // built while this one waited

  // Each version's code, compiled once (the one the server started with is the program it compiled).
  AsOfCache::Codes* codes = nullptr;
  for (AsOfCache::Codes& c : as_of_cache_->codes)
    if (c.module == &m) codes = &c;
  if (!codes) codes = &as_of_cache_->codes.emplace_back(AsOfCache::Codes{&m, {}});
  host::AsOfCode code;
  code.versions = versions.history;
  code.module_identity = code.versions.empty() ? host::module_identity(*m.program) : code.versions.front().identity;
  code.present_in = running->version;
  code.version_code = [&m, codes, &versions = versions.history](uint32_t number, const host::VersionCode** out) -> host::Status {
    if (number == 0 || (number > versions.size() && number != 1))
      return host::Status::failure(m.dir + ": the log names version " + std::to_string(number) + ", which has no " +
                                   host::version_file_name(number));
    if (codes->by_version.size() <= number) codes->by_version.resize(number + 1);
    if (!codes->by_version[number]) {
      auto c = std::make_unique<host::VersionCode>();
      const bool started = versions.empty() || versions[number - 1].source == m.versioned.source;
      if (started) {  // the version the server started with: its code is at hand
        *c = m.versioned.code;
        if (!c->apply) {
          std::shared_ptr<host::EventRunner> runner =
              host::make_vm_runner(*m.program, host::DurableOptions{}.replay_max_steps);
          c->apply = [runner](rt::Store& s, const host::LogRecord& r) -> std::string {
            host::EventOutcome outcome = runner->run(s, r.event, r.args);
            return outcome.ok ? std::string() : outcome.reason.empty() ? "the event failed" : outcome.reason;
          };
        }
      } else if (host::Status s = m.versioned.compile(number, versions[number - 1].source, c.get()); !s.ok()) {
        return host::Status::failure(m.dir + "/" + host::version_file_name(number) + ": version " +
                                     std::to_string(number) + " no longer compiles: " + s.error);
      }
      codes->by_version[number] = std::move(c);
    }
    *out = codes->by_version[number].get();
    return {};
  };
  host::AsOfState state;
  host::AsOfProblem problem = host::AsOfProblem::None;
  host::Status s = host::read_state_as_of(fs, m.dir, sequence, through, code, &state, &problem);
  if (!s.ok()) {
    switch (problem) {
      case host::AsOfProblem::PastRetention:
        *refusal = json_response(410, "{\"error\":");
        append_json_string(refusal->body, (as_of.by_time ? "as_of_time: " : "as_of: ") + s.error);
        refusal->body += ",\"oldest\":" + std::to_string(state.oldest) + "}";
        break;
      case host::AsOfProblem::Future:
        *refusal = error(400, (as_of.by_time ? "as_of_time: " : "as_of: ") + s.error);
        break;
      default:
        *refusal = error(500, "reading module " + m.name + " as of sequence " + std::to_string(sequence) + ": " + s.error);
    }
    return nullptr;
  }
  auto past = std::make_shared<PastState>();
  past->store = std::move(state.store);
  past->snapshot = past->store->publish();
  rt::MemoryUse use = past->store->memory();
  past->bytes = use.state_bytes + use.structure_bytes;
  past->sequence = sequence;
  past->running = running;
  as_of_cache_->keep(&m, past);
  return past;
}

void Api::list_as_of(Module& m, std::string_view list, std::string rest, AsOf as_of, const Request& request,
                     Respond respond, Clock::time_point start) {
  struct Call {
    std::string target, list, rest;
    Respond respond;
  };
  auto call = std::make_shared<Call>(Call{std::string(request.target), std::string(list), std::move(rest), std::move(respond)});
  auto reply = [this, call, start](Response r) {
    finish(Route::List, call->target, r, start);
    call->respond(std::move(r));
  };
  QueryPool::Job job;
  job.run = [this, &m, call, as_of, reply] {
    Response r;
    try {
      if (auto past = past_state(m, as_of, &r)) r = list_page(m, call->list, call->rest, past.get());
    } catch (const std::bad_alloc&) {
      r = error(503, "module " + m.name + " as of a past point: out of memory: the system refused the memory to build it");
    }
    reply(std::move(r));
  };
  job.refuse = [reply] { reply(error(503, "the list page was not read: the server is shutting down")); };
  if (!queries_.try_submit(std::move(job))) reply(queue_full("the list page as of a past point"));
}

}  // namespace pure::serve
