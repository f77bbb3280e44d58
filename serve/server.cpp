// serve/server.cpp — serve() (serve.h): the data directories, recovery after the socket listens,
// the owners, the API over HTTP, and the shutdown that closes the owners before the process ends.
#include "serve/serve.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <cstdio>
#include <thread>

#include "base/assert.h"
#include "serve/api.h"
#include "serve/http.h"
#include "serve/server_log.h"

namespace pure::serve {

int serve(const std::vector<std::unique_ptr<Module>>& modules, ServeOptions options) {
  std::string& data = options.data;
  const std::vector<std::string>& accept_data_loss = options.accept_data_loss;
  const bool require_all_modules = options.require_all_modules;
  HttpOptions& http = options.http;
  // The data directory itself (each module's subdirectory is made when it is locked, below).
  while (data.size() > 1 && data.back() == '/') data.pop_back();
  if (host::Status s = host::make_data_dir(data); !s.ok()) {
    std::fprintf(stderr, "pure-serve: cannot create the data directory: %s\n", s.error.c_str());
    return kExitUsage;
  }
  // Each module's directory, locked for this process before anything is served: a second
  // pure-serve or a pure-run --data on it is refused, and so is this server while one holds it.
  // Each lock is held by its Module, released after the module's owner is gone.
  for (auto& m : modules) {
    PURE_ASSERT(host::check_module_name(m->name).empty());  // DATA/NAME stays inside DATA
    m->dir = data + "/" + m->name;
    m->start_running();  // routes find events and queries in it while the module recovers
    if (host::Status s = host::lock_data_dir(m->dir, "pure-serve", &m->lock); !s.ok()) {
      server_log("error", {{"module", as_json_string(m->name)}, {"message", as_json_string(s.error)}});
      std::fprintf(stderr, "pure-serve: %s: %s\n", m->name.c_str(), s.error.c_str());
      return kExitDataDir;
    }
  }

  const uint64_t max_memory_total = options.api.memory_pool ? options.api.memory_pool->limit : 0;
  server_log("start", {{"version", as_json_string("pure-serve 0.1")},
                       {"modules", as_json_int(static_cast<int64_t>(modules.size()))},
                       {"data", as_json_string(data)},
                       {"sync", as_json_string(options.sync)},
                       {"max_memory", as_json_int(static_cast<int64_t>(options.owner.max_memory))},
                       {"max_memory_total", as_json_int(static_cast<int64_t>(max_memory_total))},
                       {"max_reply", as_json_int(static_cast<int64_t>(options.api.max_reply))},
                       {"jit", as_json_string(options.jit)}});
  host::OwnerOptions owner_options = options.owner;
  // The owners hand each batch's replies to the I/O threads in one job (http.h, ReplyPost).
  auto replies = std::make_shared<ReplyPost>();
  http.replies = replies.get();
  owner_options.reply_runner = [replies](std::function<void()> job) { replies->run(std::move(job)); };
  const host::DurableOptions& durable_options = options.durable;
  std::vector<Module*> served;
  for (auto& m : modules) served.push_back(m.get());

  // Recovery runs after the socket listens (routes answer 503 meanwhile), one module after
  // another. A module that does not recover is never served (no silent loss): its routes answer
  // 503 with the reason while the others serve; the server stops (exit 3) when none recovered,
  // or at the first one with --require-all-modules.
  std::atomic<bool> stopping{false};
  std::atomic<bool> recovery_failed{false};
  // --cluster: a replica stopped for good (divergence, or a rejoin that could not reopen the data
  // directory; its reason is logged); the server shuts down, exit 5.
  // Shared: a replica's callback may run on an owner or I/O thread until the owners are closed.
  auto cluster_stopped = std::make_shared<std::atomic<bool>>(false);
  std::thread recovery;
  // A module's DurableOptions: recovery's, and a rejoin's (which opens the directory again).
  auto options_for = [&](Module& module) {
    host::DurableOptions o = durable_options;
    std::string name = module.name;
    o.accept_data_loss = std::count(accept_data_loss.begin(), accept_data_loss.end(), name) > 0;
    Module* mp = &module;
    o.progress = [name, mp](const host::RecoveryProgress& p) {
      mp->recovery_records.store(p.records_replayed);
      server_log("recovery_progress", {{"module", as_json_string(name)},
                                     {"records", as_json_int(static_cast<int64_t>(p.records_replayed))},
                                     {"bytes_read", as_json_int(static_cast<int64_t>(p.bytes_read))},
                                     {"bytes_total", as_json_int(static_cast<int64_t>(p.bytes_total))}});
    };
    o.on_checkpoint = [name, mp, dir = module.dir](const std::string& error, const host::CheckpointInfo& info,
                                                   uint64_t sequence) {
#ifdef PURE_HAVE_CLUSTER
      // --cluster: a leader publishes each checkpoint it writes, then trims the stream behind the
      // published ones (docs/cluster.md, "Checkpoints and trimming"); on the checkpoint thread.
      // Handed to the replica's publisher thread: the checkpoint thread never waits for NATS.
      if (error.empty() && mp->replica)
        mp->replica->publish_checkpoint(host::checkpoint_path(dir, sequence), sequence, [name, sequence](const std::string& why) {
          server_log("cluster_checkpoint_failed", {{"module", as_json_string(name)},
                                                   {"sequence", as_json_int(static_cast<int64_t>(sequence))},
                                                   {"reason", as_json_string(why)}});
        });
#endif
      if (error.empty())
        server_log("checkpoint", {{"module", as_json_string(name)}, {"sequence", as_json_int(static_cast<int64_t>(sequence))},
                                {"bytes", as_json_int(static_cast<int64_t>(info.bytes))},
                                {"rows", as_json_int(static_cast<int64_t>(info.rows))},
                                {"millis", as_json_int(static_cast<int64_t>(info.seconds * 1000))}});
      else
        server_log("checkpoint_failed", {{"module", as_json_string(name)}, {"sequence", as_json_int(static_cast<int64_t>(sequence))},
                                       {"error", as_json_string(error)},
                                       {"retry_in_seconds", as_json_int(static_cast<int64_t>(info.retry_seconds))}});
    };
    o.versions = &module.versioned;  // each logged event replays with its own version's code
    return o;
  };
  // --cluster: a new or wiped node, or one behind a trimmed stream, installs the newest published
  // checkpoint (cluster::Replica::fetch_checkpoint) instead of reading the stream from its start:
  // the log just opened is closed, the checkpoint installed (host::install_checkpoint: checked
  // whole before it is named), and the directory opened again. A failed fetch or install leaves
  // the directory as it was (the replica then reads the stream, or stops and tries again).
  auto catch_up = [&](Module& module, std::unique_ptr<rt::Store>* store, std::unique_ptr<host::DurableLog>* event_log,
                      uint64_t identity) -> host::Status {
#ifdef PURE_HAVE_CLUSTER
    auto started = std::chrono::steady_clock::now();
    const uint64_t last = (*event_log)->recovery().last_sequence;
    std::string bytes;
    uint64_t through = 0;
    if (host::Status f = module.replica->fetch_checkpoint(last, &bytes, &through); !f.ok() || through == 0) {
      if (!f.ok())
        server_log("cluster_checkpoint_failed", {{"module", as_json_string(module.name)}, {"reason", as_json_string(f.error)}});
      return {};
    }
    (void)(*event_log)->close();  // nothing was appended: recovery's state, closed to be replaced
    event_log->reset();
    store->reset();
    uint64_t installed = 0;
    host::Status s = host::install_checkpoint(host::posix_file_system(), module.dir, identity, module.program->stored,
                                              bytes, &installed);
    if (s.ok())
      server_log("cluster_checkpoint_installed",
                 {{"module", as_json_string(module.name)}, {"sequence", as_json_int(static_cast<int64_t>(installed))},
                  {"log_was_at", as_json_int(static_cast<int64_t>(last))},
                  {"bytes", as_json_int(static_cast<int64_t>(bytes.size()))},
                  {"millis", as_json_int(static_cast<int64_t>(std::chrono::duration<double, std::milli>(
                                                                 std::chrono::steady_clock::now() - started)
                                                                 .count()))}});
    else
      server_log("cluster_checkpoint_failed", {{"module", as_json_string(module.name)}, {"reason", as_json_string(s.error)}});
    host::DurableOptions o = options_for(module);
    host::VersionedReport report;
    o.versions_report = &report;
    return host::open_durable(host::posix_file_system(), module.dir, *module.program, o, store, event_log);
#else
    (void)module, (void)store, (void)event_log, (void)identity;
    return {};
#endif
  };
  auto identity_of = [](const host::VersionedReport& report, const vm::Program& program) {
    return report.history.empty() ? host::module_identity(program) : report.history.front().identity;
  };
  // The owner over a recovered store and its durability (wrapped by the replica with --cluster).
  auto make_owner = [&](Module& module, std::unique_ptr<rt::Store> store, std::unique_ptr<host::Durability> durability) {
    host::OwnerOptions oo = owner_options;
    oo.on_unhealthy = [name = module.name](const std::string& why) {
      server_log("log_poisoned", {{"module", as_json_string(name)}, {"reason", as_json_string(why)}});
    };
    oo.version = module.versions.version ? module.versions.version : 1;
    oo.version_begins = module.versions.version_begins;
    return std::make_shared<host::Owner>(module.name, *module.program, std::move(store), std::move(durability), oo);
  };
  // --cluster: a leader that stopped leading (deposed, a publish refused or timed out, its lease
  // lost) rejoins as a follower without leaving the process. Its owner's store may hold a batch
  // the stream never took (run, then refused), so the store is not trusted: the owner is closed
  // (what its log took is made durable: all of it is in the stream, which took each burst before
  // the log), the data directory is opened again (the state is exactly the log's, a prefix of the
  // stream), and a new owner over it follows the stream from there. Readers meanwhile answer from
  // the old owner's last visible state, which is durable and so in the stream too. One thread
  // does every module's rejoins, off the owner and replica threads that report the stop.
  struct Rejoins {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<Module*, std::string>> queue;  // the module and why it stopped leading
    bool stop = false;
  };
  auto rejoins = std::make_shared<Rejoins>();
  auto rejoin = [&](Module& module, const std::string& why) {
    server_log("cluster_rejoining", {{"module", as_json_string(module.name)}, {"reason", as_json_string(why)}});
    auto started = std::chrono::steady_clock::now();
    // Each phase's milliseconds go into cluster_rejoined: where a slow rejoin spends its time.
    auto lap = [at = started]() mutable {
      auto now = std::chrono::steady_clock::now();
      auto ms = std::chrono::duration<double, std::milli>(now - at).count();
      at = now;
      return as_json_int(static_cast<int64_t>(ms));
    };
    module.replica->stop();
    const std::string stop_ms = lap();
    std::shared_ptr<host::Owner> old = module.owner();
    old->close();  // its queue answered 503; what its log took is durable
    const std::string close_ms = lap();
    std::string released = module.replica->release();
    host::DurableOptions o = options_for(module);
    host::VersionedReport report;  // module.versions stays as the first opening found it
    o.versions_report = &report;
    std::unique_ptr<rt::Store> store;
    std::unique_ptr<host::DurableLog> event_log;
    const std::string release_ms = lap();
    host::Status s = host::open_durable(host::posix_file_system(), module.dir, *module.program, o, &store, &event_log);
    const std::string open_ms = lap();
    if (!s.ok()) {  // the directory that just served cannot be read: nothing a rejoin can do
      server_log("cluster_stopped", {{"module", as_json_string(module.name)},
                                     {"reason", as_json_string("rejoining: cannot open the data directory again: " + s.error)}});
      std::fprintf(stderr, "pure-serve: %s: cluster: rejoining: %s\n", module.name.c_str(), s.error.c_str());
      if (!cluster_stopped->exchange(true)) std::raise(SIGTERM);
      return;
    }
    // Only a replica behind the trimmed stream asks for a checkpoint (cluster.h, behind()).
    const bool asked = module.replica->behind();
    if (asked) s = catch_up(module, &store, &event_log, identity_of(report, *module.program));
    if (!s.ok()) {
      server_log("cluster_stopped", {{"module", as_json_string(module.name)},
                                     {"reason", as_json_string("rejoining: cannot open the data directory after "
                                                               "installing a checkpoint: " + s.error)}});
      std::fprintf(stderr, "pure-serve: %s: cluster: rejoining: %s\n", module.name.c_str(), s.error.c_str());
      if (!cluster_stopped->exchange(true)) std::raise(SIGTERM);
      return;
    }
    const std::string catch_up_ms = lap();
    const uint64_t sequence = event_log->recovery().last_sequence;
    std::shared_ptr<host::Owner> owner = make_owner(module, std::move(store), module.replica->wrap(std::move(event_log)));
    module.set_owner(owner);
    module.replica->start(owner.get());
    double millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    server_log("cluster_rejoined", {{"module", as_json_string(module.name)}, {"reason", as_json_string(why)},
                                    {"sequence", as_json_int(static_cast<int64_t>(sequence))},
                                    {"visible_before", as_json_int(static_cast<int64_t>(old->visible().second))},
                                    {"lease", as_json_string(released)},
                                    {"checkpoint_asked", asked ? "true" : "false"},
                                    {"millis", as_json_int(static_cast<int64_t>(millis))},
                                    {"stop_ms", stop_ms}, {"close_ms", close_ms}, {"release_ms", release_ms},
                                    {"open_ms", open_ms}, {"catch_up_ms", catch_up_ms}});
  };
  std::thread rejoiner([&, rejoins] {
    std::unique_lock<std::mutex> lock(rejoins->mu);
    for (;;) {
      rejoins->cv.wait(lock, [&] { return rejoins->stop || !rejoins->queue.empty(); });
      if (rejoins->stop) return;
      auto [module, why] = std::move(rejoins->queue.front());
      rejoins->queue.pop_front();
      lock.unlock();
      rejoin(*module, why);
      lock.lock();
    }
  });
  // A rejoin under way ends first (then the modules close as they are); queued ones are dropped.
  auto stop_rejoins = [&] {
    {
      std::lock_guard<std::mutex> lock(rejoins->mu);
      rejoins->stop = true;
      rejoins->cv.notify_one();
    }
    if (rejoiner.joinable()) rejoiner.join();
  };
  auto recover_all = [&] {
    for (auto& m : modules) {
      if (stopping.load()) return;
      host::DurableOptions o = options_for(*m);
      std::string name = m->name;
      server_log("recovery_started", {{"module", as_json_string(name)}, {"dir", as_json_string(m->dir)}});
      std::unique_ptr<rt::Store> store;
      std::unique_ptr<host::DurableLog> event_log;  // the module's event log (host/), not this server's log
      o.versions_report = &m->versions;
      host::Status s = host::open_durable(host::posix_file_system(), m->dir, *m->program, o, &store, &event_log);
      // What a migrate block printed when it ran at this start (applied or not) goes to the log.
      if (!m->versions.migration_output.empty())
        server_log("migrate_printed", {{"module", as_json_string(name)}, {"version", as_json_int(m->versions.plan.to)},
                                       {"applied", m->versions.upgraded ? "true" : "false"},
                                       {"printed", as_json_string(m->versions.migration_output)}});
      if (!s.ok()) {
        if (s.error.find("the manifest records") != std::string::npos)
          s.error += " (restore the missing files, or start with --accept-data-loss " + name + " to serve what is left)";
        m->failure = s.error;
        m->state.store(Module::State::Failed, std::memory_order_release);
        server_log("recovery_failed", {{"module", as_json_string(name)}, {"dir", as_json_string(m->dir)}, {"error", as_json_string(s.error)}});
        std::fprintf(stderr, "pure-serve: %s: %s\n", name.c_str(), s.error.c_str());
        if (require_all_modules) {
          recovery_failed = true;
          std::raise(SIGTERM);  // the HTTP layer shuts down as for a signal
          return;
        }
        continue;  // the others are served; this one answers 503 with the reason
      }
      m->recovery = event_log->recovery();
      if (m->versions.upgraded)
        server_log("upgraded", {{"module", as_json_string(name)}, {"version", as_json_int(m->versions.version)},
                                {"sequence", as_json_int(static_cast<int64_t>(m->versions.version_begins))},
                                {"millis", as_json_int(static_cast<int64_t>(m->versions.upgrade_seconds * 1000))},
                                {"plan", as_json_string(m->versions.plan.render())}});
      if (!m->recovery.data_loss.empty())
        server_log("data_loss_accepted", {{"module", as_json_string(name)}, {"dir", as_json_string(m->dir)}, {"loss", as_json_string(m->recovery.data_loss)}});
      if (m->recovery.manifest_missing)
        server_log("manifest_missing", {{"module", as_json_string(name)}, {"dir", as_json_string(m->dir)},
                                      {"message", as_json_string("no manifest (a directory from before manifests, or its manifest "
                                                       "was deleted): nothing could be checked; a new one is written")}});
      m->recovery_records.store(m->recovery.records_replayed);
      std::unique_ptr<host::Durability> durability;
      if (options.clustered) {
        std::string error = "this pure-serve was built without libnats (libnats-dev): no --cluster";
#ifdef PURE_HAVE_CLUSTER
        Module* mp = m.get();
        auto on_stop = [name, mp, cluster_stopped, rejoins](const std::string& why, bool rejoin) {
          if (rejoin) {  // stopped leading: the rejoin thread makes it a follower again
            std::lock_guard<std::mutex> lock(rejoins->mu);
            if (rejoins->stop) return;
            rejoins->queue.emplace_back(mp, why);
            rejoins->cv.notify_one();
            return;
          }
          server_log("cluster_stopped", {{"module", as_json_string(name)}, {"reason", as_json_string(why)}});
          std::fprintf(stderr, "pure-serve: %s: cluster: %s\n", name.c_str(), why.c_str());
          if (!cluster_stopped->exchange(true)) std::raise(SIGTERM);  // diverged: shut down (exit 5), say why
        };
        error = cluster::open_replica(options.cluster, name, host::module_identity(*m->program), on_stop, &m->replica).error;
#endif
        if (!error.empty()) {
          m->failure = "cluster: " + error;
          m->state.store(Module::State::Failed, std::memory_order_release);
          server_log("recovery_failed", {{"module", as_json_string(name)}, {"error", as_json_string(m->failure)}});
          std::fprintf(stderr, "pure-serve: %s: %s\n", name.c_str(), m->failure.c_str());
          event_log->close();
          continue;
        }
        if (host::Status c = catch_up(*m, &store, &event_log, identity_of(m->versions, *m->program)); !c.ok()) {
          m->failure = "cluster: cannot open the data directory after installing a checkpoint: " + c.error;
          m->state.store(Module::State::Failed, std::memory_order_release);
          server_log("recovery_failed", {{"module", as_json_string(name)}, {"error", as_json_string(m->failure)}});
          std::fprintf(stderr, "pure-serve: %s: %s\n", name.c_str(), m->failure.c_str());
          continue;
        }
        m->recovery = event_log->recovery();
        durability = m->replica->wrap(std::move(event_log));
      } else {
        durability = std::move(event_log);
      }
      {
        std::lock_guard<std::mutex> lock(m->upgrade_mu);
        auto running = std::make_shared<Module::Running>(*m->running);
        running->version = m->versions.version ? m->versions.version : 1;
        m->running = running;
        m->ran = {running};
      }
      m->set_owner(make_owner(*m, std::move(store), std::move(durability)));
      if (m->replica) {
        m->replica->start(m->owner().get());
        server_log("cluster_joined", {{"module", as_json_string(name)}, {"node", as_json_string(options.cluster.node)},
                                      {"sequence", as_json_int(static_cast<int64_t>(m->recovery.last_sequence))}});
      }
      const host::RecoveryReport& r = m->recovery;
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.3f", r.seconds);
      server_log("recovered", {{"module", as_json_string(name)},
                             {"sequence", as_json_int(static_cast<int64_t>(r.last_sequence))},
                             {"checkpoint", as_json_int(static_cast<int64_t>(r.checkpoint_sequence))},
                             {"records_replayed", as_json_int(static_cast<int64_t>(r.records_replayed))},
                             {"torn_bytes_cut", as_json_int(static_cast<int64_t>(r.torn_bytes_cut))},
                             {"seconds", secs}});
      m->state.store(Module::State::Serving, std::memory_order_release);
      server_log("module_ready", {{"module", as_json_string(m->name)}, {"path", as_json_string(m->path)},
                                {"sequence", as_json_int(static_cast<int64_t>(r.last_sequence))}});
    }
    bool any_serving = false;
    for (auto& m : modules) any_serving = any_serving || m->serving();
    if (!any_serving && !stopping.load()) {  // nothing at all to serve: stop, as for a signal
      recovery_failed = true;
      std::raise(SIGTERM);
    }
  };
  bool closed_all = false;  // close_all runs on the drain thread, then on this one after it was joined
  auto close_all = [&] {
    if (closed_all) return;
    closed_all = true;
    stopping = true;
    if (recovery.joinable()) recovery.join();
    stop_rejoins();
    for (auto& m : modules) {
      if (!m->serving()) continue;
      if (m->replica) m->replica->stop();  // nothing more from the stream before the owner closes
      std::shared_ptr<host::Owner> owner = m->owner();
      std::string why = owner->close();
      // A leader shutting down gives its lease up after its last acknowledged batch: a follower
      // takes over at its next look (a tenth of a lease), not after a whole lease.
      if (m->replica) {
        std::string lease = m->replica->release();
        if (lease != "not held") server_log("cluster_lease", {{"module", as_json_string(m->name)}, {"lease", as_json_string(lease)}});
      }
      host::OwnerStats s = owner->stats();
      server_log("module_closed", {{"module", as_json_string(m->name)},
                                 {"committed", as_json_int(static_cast<int64_t>(s.committed))},
                                 {"failed", as_json_int(static_cast<int64_t>(s.failed))},
                                 {"sequence", as_json_int(static_cast<int64_t>(s.visible_sequence))},
                                 {"error", as_json_string(why)}});
    }
  };

  Api api(served, options.api);
  // --backup-every: the scheduled backups' thread (Api::scheduled_backups), from the listening
  // line until the drain (or this function's end on an error), before the owners close.
  struct Schedule {
    std::mutex mu;
    std::condition_variable cv;
    std::atomic<bool> stop{false};
    std::thread thread;
    void end() {
      {
        std::lock_guard<std::mutex> lock(mu);
        stop = true;
      }
      cv.notify_all();
      if (thread.joinable()) thread.join();
    }
    ~Schedule() { end(); }
  } schedule;
  auto start_schedule = [&] {
    const auto every = std::chrono::milliseconds(options.api.backup_every_ms);
    if (every.count() == 0 || options.api.backup_dir.empty()) return;
    schedule.thread = std::thread([&schedule, &api, every] {
      std::unique_lock<std::mutex> lock(schedule.mu);
      while (!schedule.cv.wait_for(lock, every, [&] { return schedule.stop.load(); })) {
        lock.unlock();
        api.scheduled_backups(schedule.stop);
        lock.lock();
      }
    });
  };
  std::string error;
  int rc = run_http(
      api, http,
      [&](const std::string& where) {
        server_log("listening", {{"address", as_json_string(where)}, {"io_threads", as_json_int(http.io_threads)},
                               {"query_threads", as_json_int(static_cast<int64_t>(options.api.query_threads))},
                               {"tls", http.tls_cert.empty() ? "false" : "true"}});
        if (!is_loopback_address(http.address) && !options.api.tokens.writes_need_token())
          server_log("warning", {{"message", as_json_string("listening beyond loopback (" + where +
                                                ") without --token-file: anyone who can connect can send events")}});
        else if (!is_loopback_address(http.address) && http.tls_cert.empty())
          server_log("warning", {{"message", as_json_string("listening beyond loopback (" + where +
                                                ") without --tls-cert: tokens and data cross the network in clear")}});
        options.cluster.advertise = (http.tls_cert.empty() ? "http://" : "https://") + where;
        recovery = std::thread(recover_all);
        start_schedule();
      },
      [&] {
        schedule.end();  // a scheduled backup being written finishes first
        api.stop_queries();  // the queries end before the owners they read close
        close_all();
      },
      error);
  if (rc != 0) {
    stop_rejoins();
    server_log("error", {{"message", as_json_string(error)}});
    std::fprintf(stderr, "pure-serve: %s\n", error.c_str());
    return kExitUsage;
  }
  close_all();  // idempotent: the owners are closed by the drain already
  if (options.after_close) options.after_close();
  int code = recovery_failed.load() ? kExitRecovery : cluster_stopped->load() ? kExitCluster : kExitOk;
  server_log("shutdown", {{"exit", as_json_int(code)}});
  return code;
}

}  // namespace pure::serve
