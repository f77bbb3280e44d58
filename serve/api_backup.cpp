// serve/api_backup.cpp — POST /v1/NAME/backup: a hot backup of a served module's data directory
// (docs/history.md, "Backups and restore"). The copy is written by host::backup_data_dir on a query
// thread (never the owner, never an I/O thread) while events go on: it holds exactly the events the
// module's queries see when it starts (durable), under --backup-dir/NAME/MODULE. The request names
// only the backup, checked as one directory entry: where backups go is the server's option.
#include <cstdio>
#include <thread>

#include "host/backup.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/server_log.h"

namespace pure::serve {

void Api::backup(Module& m, std::string_view query_string, const Request& request, const Tokens::Check& auth,
                 Respond respond, std::chrono::steady_clock::time_point start) {
  auto answer = [&](Response r) {
    finish(Route::Backup, request.target, r, start);
    respond(std::move(r));
  };
  const std::string what = "POST /v1/" + m.name + "/backup";
  if (options_.tokens.writes_need_token() && !(auth.scopes & kScopeAdmin))
    return answer(refuse_token(auth, kScopeAdmin, what));
  std::string name;
  bool named = false;
  for (std::string_view kv : split(query_string, '&')) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    std::string_view key = kv.substr(0, eq);
    if (key != "name")
      return answer(error(400, what + ": unknown query parameter '" + std::string(key) +
                                   "': it takes name=NAME (the backup's name; default MODULE-SEQUENCE)"));
    if (named) return answer(error(400, what + ": name: give it once"));
    named = true;
    if (!percent_decode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1), name))
      return answer(error(400, what + ": name: bad percent-encoding"));
    if (std::string bad = host::check_backup_name(name); !bad.empty())
      return answer(error(400, what + ": name: '" + name + "' is not a backup name: " + bad));
  }
  if (options_.backup_dir.empty())
    return answer(error(409, what + ": backups are not configured: start pure-serve with --backup-dir DIR (the "
                                    "directory backups are written into)"));
  if (!m.serving()) return answer(not_serving(m));
  if (backing_up_.exchange(true))
    return answer(error(409, what + ": a backup is being written: one at a time per server; send this one once that "
                                    "one is answered"));
  struct Call {
    std::string target, name;
    Respond respond;
  };
  auto call = std::make_shared<Call>(Call{std::string(request.target), std::move(name), std::move(respond)});
  auto reply = [this, call, start](Response r) {
    backing_up_.store(false);
    finish(Route::Backup, call->target, r, start);
    call->respond(std::move(r));
  };
  QueryPool::Job job;
  job.run = [this, &m, call, reply] {
    Written w = write_backup(m, call->name, false);
    if (!w.status.ok()) {
      if (w.problem == host::CopyProblem::Exists)
        return reply(error(409, "POST /v1/" + m.name + "/backup: backup '" + w.name + "': " + w.status.error));
      return reply(error(500, "the backup of module " + m.name + " as '" + w.name + "' failed (nothing was left under " +
                                  "that name): " + w.status.error));
    }
    const std::string data = options_.backup_dir + "/" + w.name;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", w.report.seconds);
    const host::CopyReport& report = w.report;
    std::string body = "{\"module\":";
    append_json_string(body, m.name);
    body += ",\"backup\":";
    append_json_string(body, w.name);
    body += ",\"data\":";
    append_json_string(body, data);
    body += ",\"path\":";
    append_json_string(body, data + "/" + m.name);
    body += ",\"sequence\":" + std::to_string(report.sequence) + ",\"checkpoint\":" +
            std::to_string(report.checkpoint) + ",\"oldest\":" + std::to_string(report.oldest) +
            ",\"files\":" + std::to_string(report.files) + ",\"bytes\":" + std::to_string(report.bytes) +
            ",\"linked\":" + std::to_string(report.linked) + ",\"copied\":" + std::to_string(report.copied) +
            ",\"seconds\":" + seconds + "}";
    reply(json_response(200, std::move(body)));
  };
  job.refuse = [reply] { reply(error(503, "the backup was not started: the server is shutting down")); };
  if (!queries_.try_submit(std::move(job))) reply(queue_full(what));
}

Api::Written Api::write_backup(Module& m, const std::string& requested, bool scheduled) {
  Written w;
  // Twice at most: with little history kept (--retain none) a checkpoint written since the
  // sequence was read may have deleted the log up to it; a fresh sequence is then past it.
  for (int attempt = 0; attempt < 2; ++attempt) {
    // What the module's queries see now: durable, so its records are whole on disk.
    const uint64_t sequence = m.owner()->visible().second;
    w.name = !requested.empty() ? requested
             : scheduled        ? host::scheduled_backup_name(m.name, sequence)
                                : m.name + "-" + std::to_string(sequence);
    w.report = {};
    w.problem = host::CopyProblem::None;
    w.status = host::backup_data_dir(host::posix_file_system(), m.dir, options_.backup_dir, w.name, m.name, sequence,
                                     &w.report, &w.problem);
    if (w.status.ok() || w.problem != host::CopyProblem::PastRetention) break;
  }
  const std::string kind = scheduled ? "\"scheduled\"" : "\"request\"";
  if (!w.status.ok()) {
    if (w.problem != host::CopyProblem::Exists)
      server_log("backup_failed", {{"module", as_json_string(m.name)}, {"name", as_json_string(w.name)},
                                   {"by", kind}, {"error", as_json_string(w.status.error)}});
    return w;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", w.report.seconds);
  server_log("backup", {{"module", as_json_string(m.name)}, {"name", as_json_string(w.name)}, {"by", kind},
                        {"sequence", as_json_int(static_cast<int64_t>(w.report.sequence))},
                        {"files", as_json_int(static_cast<int64_t>(w.report.files))},
                        {"linked", as_json_int(static_cast<int64_t>(w.report.linked))},
                        {"copied", as_json_int(static_cast<int64_t>(w.report.copied))}, {"seconds", seconds}});
  return w;
}

void Api::scheduled_backups(const std::atomic<bool>& stopping) {
  for (Module* mp : modules_) {
    Module& m = *mp;
    if (stopping.load() || !m.serving()) continue;
    const uint64_t sequence = m.owner()->visible().second;
    if (sequence == 0) continue;  // nothing to keep yet
    host::FileSystem& fs = host::posix_file_system();
    std::vector<host::ScheduledBackup> have;
    if (host::Status s = host::list_scheduled_backups(fs, options_.backup_dir, m.name, &have); !s.ok()) {
      scheduled_failed_.fetch_add(1, std::memory_order_relaxed);
      server_log("backup_failed", {{"module", as_json_string(m.name)}, {"by", "\"scheduled\""},
                                   {"error", as_json_string(s.error)}});
      continue;
    }
    if (!have.empty() && have.back().sequence >= sequence) continue;  // no event since the newest one
    // One backup at a time per server: wait for a requested one to finish.
    while (backing_up_.exchange(true)) {
      if (stopping.load()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Written w = write_backup(m, "", true);
    std::vector<std::string> removed;
    host::Status pruned;
    if (w.status.ok()) pruned = host::prune_scheduled_backups(fs, options_.backup_dir, m.name, options_.backup_keep,
                                                              &removed);
    backing_up_.store(false);
    // Exists: a scheduled backup of this very sequence is there already (written by an earlier run).
    if (!w.status.ok() && w.problem != host::CopyProblem::Exists) {
      scheduled_failed_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (w.status.ok()) scheduled_written_.fetch_add(1, std::memory_order_relaxed);
    scheduled_pruned_.fetch_add(removed.size(), std::memory_order_relaxed);
    for (const std::string& name : removed)
      server_log("backup_pruned", {{"module", as_json_string(m.name)}, {"name", as_json_string(name)},
                                   {"keep", as_json_int(static_cast<int64_t>(options_.backup_keep))}});
    if (!pruned.ok()) {
      scheduled_failed_.fetch_add(1, std::memory_order_relaxed);
      server_log("backup_failed", {{"module", as_json_string(m.name)}, {"by", "\"pruning\""},
                                   {"error", as_json_string(pruned.error)}});
    }
  }
}

}  // namespace pure::serve
