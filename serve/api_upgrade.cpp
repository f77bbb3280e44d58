// serve/api_upgrade.cpp — PUT /v1/NAME/source: a hot upgrade of a served module (docs/upgrades.md).
// The new source is compiled on a query thread (never an I/O thread, never the owner); the owner
// then, between two batches, plans it against its live state with the restart path's own functions
// (host::plan_upgrade, host::upgrade_refusal, host::upgrade_store), writes the version file, makes
// the version record durable and changes the store before any event runs on the new version. A
// source that does not compile, a refused plan or a failed step leaves the old version serving.
#include <cstdio>

#include "base/limits.h"
#include "host/versions.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/server_log.h"

namespace pure::serve {

namespace {

// "1"/"true" or "0"/"false" (or nothing: true) into *out; false when it is neither.
bool parse_flag(std::string_view value, bool* out) {
  if (value.empty() || value == "1" || value == "true") *out = true;
  else if (value == "0" || value == "false") *out = false;
  else return false;
  return true;
}

void append_plan(std::string& out, const host::UpgradePlan& plan) {
  out += "{\"from\":" + std::to_string(plan.from) + ",\"to\":" + std::to_string(plan.to) + ",\"lists\":[";
  for (size_t i = 0; i < plan.lines.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, plan.lines[i]);
  }
  out += "],\"schema_changed\":";
  out += plan.schema_changed ? "true" : "false";
  out += ",\"drops\":";
  out += plan.drops ? "true" : "false";
  out += ",\"refused\":";
  if (plan.refused.empty()) out += "null";
  else append_json_string(out, plan.refused);
  out += ",\"text\":";
  append_json_string(out, plan.render());
  out += '}';
}

Response refusal(int status, const std::string& message, const host::UpgradePlan* plan) {
  std::string body = "{\"error\":";
  append_json_string(body, message);
  if (plan) {
    body += ",\"plan\":";
    append_plan(body, *plan);
  }
  return json_response(status, body + "}");
}

}  // namespace

void Api::upgrade(Module& m, std::string_view query_string, const Request& request, const Tokens::Check& auth,
                  Respond respond, std::chrono::steady_clock::time_point start) {
  auto answer = [&](Response r) {
    finish(Route::Source, request.target, r, start);
    respond(std::move(r));
  };
  const std::string what = "PUT /v1/" + m.name + "/source";
  if (options_.tokens.writes_need_token() && !(auth.scopes & kScopeAdmin))
    return answer(refuse_token(auth, kScopeAdmin, what));
  bool plan_only = false, allow_drop = false;
  for (std::string_view kv : split(query_string, '&')) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    std::string_view key = kv.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
    bool* flag = key == "plan" ? &plan_only : key == "allow_drop" ? &allow_drop : nullptr;
    if (!flag)
      return answer(error(400, what + ": unknown query parameter '" + std::string(key) +
                                   "': it takes plan=1 (answer the plan, apply nothing) and allow_drop=1 (consent to "
                                   "a plan that drops lists or fields)"));
    if (!parse_flag(value, flag))
      return answer(error(400, what + ": " + std::string(key) + " takes 1 or 0 (true or false), got '" +
                                   std::string(value) + "'"));
  }
  if (!m.serving()) return answer(not_serving(m));
  if (!m.owner()->healthy())
    return answer(error(503, "module " + m.name + " is unhealthy: " + m.owner()->unhealthy_reason()));
  if (!m.compile) return answer(error(503, what + ": this server cannot compile sources (no compiler was given)"));
  // The replicated log (cluster/) ships event records, not version records: a follower could not
  // replay a version it never heard of. Refused until the stream carries versions (docs/cluster.md).
  if (m.replica)
    return answer(error(409, what + ": module " + m.name + " is replicated (--cluster): hot upgrades of a "
                                    "replicated module are not built yet (docs/cluster.md, \"Not built yet\")"));
  if (m.upgrading.exchange(true))
    return answer(refusal(409, "module " + m.name + " is being upgraded by another request: send this one once that "
                                  "one is answered", nullptr));

  struct Call {
    std::string target;
    std::string source;
    Respond respond;
  };
  auto call = std::make_shared<Call>(Call{std::string(request.target), std::string(request.body), std::move(respond)});
  // Every path ends here, once: the module takes the next upgrade after this one is answered.
  auto reply = [this, call, start, &m](Response r) {
    m.upgrading.store(false);
    finish(Route::Source, call->target, r, start);
    call->respond(std::move(r));
  };
  QueryPool::Job job;
  job.run = [&m, call, reply, plan_only, allow_drop] {
    auto compiled = std::make_shared<CompiledSource>();
    std::string errors;
    bool ok = false;
    try {
      ok = m.compile(call->source, compiled.get(), &errors);
    } catch (const std::bad_alloc&) {
      errors = "out of memory: the system refused the memory to compile it";
    }
    std::shared_ptr<const Module::Running> running = m.current();
    const std::string serving = "version " + std::to_string(running->version) + " keeps serving";
    if (!ok) {
      while (!errors.empty() && errors.back() == '\n') errors.pop_back();
      return reply(refusal(400, "the new source of module " + m.name + " does not compile (" + serving + "):\n" + errors,
                           nullptr));
    }
    if (compiled->source == running->source) {
      std::string body = "{\"module\":";
      append_json_string(body, m.name);
      body += ",\"version\":" + std::to_string(running->version) +
              ",\"upgraded\":false,\"reason\":\"the source is the version serving: nothing to do\"}";
      return reply(json_response(200, std::move(body)));
    }
    // What the owner's steps found, for the answer (the owner thread writes, the done callback reads).
    struct Outcome {
      host::UpgradePlan plan;
      std::string refused;       // upgrade_refusal's message
      std::string failed;        // writing the version file failed
      host::VersionFile file;    // written
      std::unique_ptr<rt::Store> migrated;  // the state the migrate block made (apply puts it in place)
      std::string printed;       // what the migrate block printed (the server log shows it)
    };
    auto outcome = std::make_shared<Outcome>();
    // A migrate block is checked against the serving version's lists here, on the query thread;
    // it runs on the owner thread in prepare, before the version file is written, on the live
    // state: a failure there refuses the upgrade with nothing changed.
    auto migration = std::make_shared<host::Migration>();
    if (compiled->migration)
      if (host::Status s = compiled->migration(running->schema, migration.get()); !s.ok()) {
        std::string errors = s.error;
        while (!errors.empty() && errors.back() == '\n') errors.pop_back();
        return reply(refusal(409, m.dir + ": the source cannot be upgraded to from version " +
                                      std::to_string(running->version) +
                                      ": its migrate block does not compile against version " +
                                      std::to_string(running->version) + "'s lists (" + serving + "):\n" + errors,
                             nullptr));
      }
    uint64_t identity = 0;
    {
      std::lock_guard<std::mutex> lock(m.upgrade_mu);
      identity = m.versions.history.empty() ? 0 : m.versions.history.front().identity;
    }
    host::HotUpgrade u;
    u.program = compiled->program.get();
    u.version = running->version + 1;
    u.prepare = [&m, running, compiled, outcome, migration, plan_only, allow_drop, identity](const rt::Store& store,
                                                                                          uint64_t sequence) {
      const bool migrates = static_cast<bool>(compiled->migration);
      outcome->plan = host::plan_upgrade(running->schema, compiled->schema, &store, migrates,
                                         migrates ? &migration->reads : nullptr);
      outcome->plan.from = running->version;
      outcome->plan.to = running->version + 1;
      outcome->refused = host::upgrade_refusal(m.dir, running->version, outcome->plan, allow_drop, "allow_drop=1");
      if (plan_only || !outcome->refused.empty()) return false;
      if (migrates) {
        // The block only reads the live store (through old.NAME's copy); the owner is between batches.
        host::Status s = host::migrate_store(running->schema, compiled->schema, const_cast<rt::Store&>(store),
                                             *migration, limits::kMigrationSteps, &outcome->migrated,
                                             &outcome->printed);
        if (!s.ok()) {
          if (!outcome->printed.empty())
            server_log("migrate_printed", {{"module", as_json_string(m.name)},
                                           {"version", as_json_int(running->version + 1)}, {"applied", "false"},
                                           {"printed", as_json_string(outcome->printed)}});
          outcome->refused = m.dir + ": the upgrade to version " + std::to_string(running->version + 1) +
                             " was not applied: its migrate block failed: " + s.error + "\n";
          return false;
        }
      }
      host::VersionFile& v = outcome->file;
      v.number = running->version + 1;
      v.module = m.name;
      v.identity = identity;
      v.begins = sequence;
      v.source = compiled->source;
      if (host::Status s = host::write_version_file(host::posix_file_system(), m.dir, v); !s.ok()) {
        outcome->failed = s.error;
        return false;
      }
      return true;
    };
    u.apply = [running, compiled, outcome](std::unique_ptr<rt::Store>* store) -> std::string {
      if (outcome->migrated) {
        *store = std::move(outcome->migrated);
        return "";
      }
      try {
        host::Status s = host::upgrade_store(running->schema, compiled->schema, store);
        return s.ok() ? std::string() : s.error;
      } catch (const std::bad_alloc&) {
        return "out of memory: the system refused the memory for the new version's lists";
      }
    };
    m.owner()->upgrade(std::move(u), [&m, running, compiled, outcome, plan_only, reply,
                                    serving](const host::HotUpgradeDone& done) {
      if (plan_only && done.error.empty()) {
        std::string body = "{\"module\":";
        append_json_string(body, m.name);
        body += ",\"version\":" + std::to_string(running->version) + ",\"applied\":false,\"allowed\":";
        body += outcome->refused.empty() ? "true" : "false";
        if (!outcome->refused.empty()) {
          body += ",\"reason\":";
          append_json_string(body, outcome->refused);
        }
        body += ",\"plan\":";
        append_plan(body, outcome->plan);
        return reply(json_response(200, body + "}"));
      }
      if (!outcome->refused.empty())
        return reply(refusal(409, outcome->refused + "(" + serving + ")", &outcome->plan));
      if (!outcome->failed.empty())
        return reply(refusal(500, m.dir + ": the upgrade to version " + std::to_string(outcome->plan.to) +
                                      " could not write its version file (" + serving + "): " + outcome->failed,
                             &outcome->plan));
      if (!done.applied)
        return reply(refusal(503, "module " + m.name + ": the upgrade to version " + std::to_string(outcome->plan.to) +
                                      " was not applied: " + done.error,
                             outcome->plan.to ? &outcome->plan : nullptr));
      auto now = std::make_shared<Module::Running>();
      now->version = outcome->file.number;
      now->program = compiled->program;
      now->stored = compiled->stored;
      now->source = compiled->source;
      now->schema = compiled->schema;
      now->place = compiled->place;
      {
        std::lock_guard<std::mutex> lock(m.upgrade_mu);
        m.running = now;
        m.ran.push_back(now);
        m.versions.history.push_back(outcome->file);
        m.versions.version = now->version;
        m.versions.version_begins = done.sequence;
        m.versions.plan = outcome->plan;
        m.versions.upgraded = true;
        m.versions.upgrade_seconds = done.pause_seconds;
      }
      char millis[32];
      std::snprintf(millis, sizeof millis, "%.3f", done.pause_seconds * 1000);
      server_log("upgraded", {{"module", as_json_string(m.name)}, {"version", as_json_int(now->version)},
                              {"sequence", as_json_int(static_cast<int64_t>(done.sequence))},
                              {"hot", "true"}, {"pause_ms", millis},
                              {"plan", as_json_string(outcome->plan.render())}});
      if (!outcome->printed.empty())
        server_log("migrate_printed", {{"module", as_json_string(m.name)}, {"version", as_json_int(now->version)},
                                       {"applied", "true"}, {"printed", as_json_string(outcome->printed)}});
      std::string body = "{\"module\":";
      append_json_string(body, m.name);
      body += ",\"version\":" + std::to_string(now->version) + ",\"upgraded\":true,\"sequence\":" +
              std::to_string(done.sequence) + ",\"pause_ms\":" + millis + ",\"plan\":";
      append_plan(body, outcome->plan);
      reply(json_response(200, body + "}"));
    });
  };
  job.refuse = [reply] { reply(error(503, "the upgrade was not started: the server is shutting down")); };
  if (!queries_.try_submit(std::move(job))) reply(queue_full(what));
}

}  // namespace pure::serve
