// serve/serve.h — the interface of serve/, pure-serve's server (docs/serve.md): a module to serve,
// the server's options, and serve(), which serves the modules over HTTP/JSON until SIGTERM or
// SIGINT. The command line (tools/pure_serve.cpp) reads the options and compiles the modules;
// everything else in serve/ is private to it: api.h (the routes), http.h (Beast), the console.
// access.h is public too: the command line checks a token file and the --allow-host names with it.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/limits.h"
#include "cluster/cluster.h"
#include "host/owner.h"
#include "host/versions.h"
#include "ir/ir.h"
#include "serve/access.h"
#include "vm/vm.h"

namespace pure::serve {

// pure-serve's exit codes (docs/serve.md): a clean shutdown, a module that does not compile, a
// usage error or a socket it cannot listen on, no module's data directory recovered (with
// require_all_modules: one did not), a data directory in use by another process.
constexpr int kExitOk = 0, kExitCompile = 1, kExitUsage = 2, kExitRecovery = 3, kExitDataDir = 4;
// --cluster: a module's replica stopped for good: the stream does not match its log (divergence),
// or a rejoin could not open its data directory again. A leader that is deposed or loses the
// stream does not exit: it rejoins as a follower in-process (docs/cluster.md, "Rejoining").
constexpr int kExitCluster = 5;

// What a module's source compiles to, for a hot upgrade (PUT /v1/NAME/source): the command line
// compiles (serve/ cannot: tools/ sits above it) through Module::compile.
struct CompiledSource {
  std::string source;  // the whole text (`use` lines resolved): what the data directory keeps
  std::shared_ptr<vm::Program> program;
  std::vector<ir::ListDesc> stored;
  host::SchemaSpec schema;
  // Its migrate block (docs/upgrades.md, "Migrations"), compiled when asked against the version it
  // upgrades; null when it has none.
  host::CompileMigration migration;
  // A place in `source` as "FILE:LINE:COL" in the file it came from, when it imports files (as
  // Module::place); empty otherwise.
  std::function<std::string(Loc)> place;
};

// One served module. It starts Recovering (its data directory being read: events, queries and
// list pages answer 503); owner is set, then state becomes Serving (release), so a reader that
// sees Serving (acquire) sees the owner.
struct Module {
  enum class State : uint8_t { Recovering, Serving, Failed };
  // Its data directory's lock for this process (serve() takes it). First: released only after the
  // owner below is gone.
  std::unique_ptr<host::DataDirLock> lock;
  std::string name;                    // the file's name without .pure: /v1/NAME/...
  std::string path;
  std::string source;                  // the module's text, for GET /v1/NAME/source
  std::string dir;                     // its data directory
  std::unique_ptr<vm::Program> program;
  // A place in the module's text as "FILE:LINE:COL" in the file it came from, for a module that
  // imports files (pure-serve sets it from the import map, tools::place_in_files); empty: a place
  // is "LINE:COL" in the one text. Failure reasons in replies are written with it.
  std::function<std::string(Loc)> place;
  std::vector<ir::ListDesc> stored;    // the stored lists' column names (the Program keeps types)
  // --cluster: the module's replica on NATS JetStream (null without). Before owner: destroyed after it.
  std::unique_ptr<cluster::Replica> replica;
  // Its owner (set before state becomes Serving). Read through owner(): with --cluster a leader
  // that stops leading gets a new one, rebuilt from its own log (serve(), "rejoin"), and a reader
  // holding the old one keeps it alive (closed: its snapshot still answers) until it lets go.
  std::shared_ptr<host::Owner> owner() const {
    std::lock_guard<std::mutex> lock(owner_mu_);
    return owner_;
  }
  void set_owner(std::shared_ptr<host::Owner> owner) {
    std::lock_guard<std::mutex> lock(owner_mu_);
    owner_ = std::move(owner);
  }
  std::atomic<State> state{State::Recovering};
  std::atomic<uint64_t> recovery_records{0};  // replayed so far (progress while recovering)
  host::RecoveryReport recovery;       // written before state becomes Serving
  // Its versions (host/versions.h, docs/upgrades.md): what the command line compiled (source,
  // stored lists, how to compile the versions kept in the directory, whether to upgrade), and
  // what opening the directory found (written before state becomes Serving).
  host::VersionedOptions versioned;
  host::VersionedReport versions;
  std::string failure;                 // written before state becomes Failed

 private:
  mutable std::mutex owner_mu_;
  std::shared_ptr<host::Owner> owner_;

 public:

  // Hot upgrades (PUT /v1/NAME/source, docs/upgrades.md). compile: the command line's compiler
  // (the messages, located, in *errors when it returns false). The version serving now (program,
  // stored lists, source, schema, number) is `running`: read it through current(); an upgrade
  // replaces it (under upgrade_mu, with versions.history and .version). Every program run since
  // the start is kept to the end (queries and list pages of a snapshot use its own version's, and
  // the JIT's code refers to them).
  std::function<bool(const std::string& source, CompiledSource* out, std::string* errors)> compile;
  struct Running {
    uint32_t version = 1;
    std::shared_ptr<const vm::Program> program;
    std::vector<ir::ListDesc> stored;
    std::string source;
    host::SchemaSpec schema;
    std::function<std::string(Loc)> place;  // as Module::place, for this version's source
  };
  mutable std::mutex upgrade_mu;
  std::shared_ptr<const Running> running;                // set by serve() before it listens
  std::vector<std::shared_ptr<const Running>> ran;       // every version this process served, oldest first
  std::atomic<bool> upgrading{false};                    // one PUT at a time (another: 409)
  // Sets running, unless set, to the program as compiled (the Module keeps it), as version 1.
  void start_running() {
    std::lock_guard<std::mutex> lock(upgrade_mu);
    if (running) return;
    auto r = std::make_shared<Running>();
    r->program = std::shared_ptr<const vm::Program>(std::shared_ptr<void>(), program.get());
    r->stored = stored;
    r->source = source;
    r->schema = versioned.code.schema;
    r->place = place;
    running = r;
    ran = {r};
  }
  std::shared_ptr<const Running> current() const {
    std::lock_guard<std::mutex> lock(upgrade_mu);
    return running;
  }
  // The version whose program is p (a snapshot's, Owner::program_at); the current one if none is.
  std::shared_ptr<const Running> running_for(const vm::Program* p) const {
    std::lock_guard<std::mutex> lock(upgrade_mu);
    for (const auto& r : ran)
      if (r->program.get() == p) return r;
    return running;
  }
  // The place function of the version numbered `version` (a failed event's reply names it); the
  // current version's when no version this process ran has that number.
  std::function<std::string(Loc)> place_of(uint32_t version) const {
    std::lock_guard<std::mutex> lock(upgrade_mu);
    for (const auto& r : ran)
      if (r->version == version) return r->place;
    return running ? running->place : place;
  }
  host::VersionedReport versions_copy() const {
    std::lock_guard<std::mutex> lock(upgrade_mu);
    return versions;
  }

  bool serving() const { return state.load(std::memory_order_acquire) == State::Serving; }
};

class ReplyPost;  // http.h: where the owners hand their batches' replies

// The HTTP layer's address, limits and deadlines (http.h).
struct HttpOptions {
  std::string address = "127.0.0.1";
  unsigned short port = 8080;                 // 0: any free port (the "listening" log line names it)
  size_t body_limit = 1 << 20;                // larger bodies: 413
  size_t header_limit = 16 << 10;             // larger request line + headers: 431
  std::chrono::milliseconds request_timeout{10'000};  // a request must arrive whole within this: else 408
  std::chrono::milliseconds write_timeout{10'000};    // a reply the client does not read is dropped after this
  int io_threads = 1;
  std::string tls_cert, tls_key;  // PEM files: HTTPS when given (both), plain HTTP when not
  ReplyPost* replies = nullptr;  // when set, run_http posts the jobs given to it onto its I/O threads
};

// What the API answers and to whom (api.h).
struct ApiOptions {
  Tokens tokens;                   // --token-file: events need a write token, reads a read token (access.h)
  HostRules hosts;                 // the Host names served (others: 421)
  bool tls = false;                // served over HTTPS (the scheme of same-origin requests)
  uint64_t slow_us = 1'000'000;    // requests slower than this are logged
  bool log_requests = false;       // one log line per request
  // --max-reply: the largest query or event reply body, in bytes; a larger one is answered 413
  // (the result's size is bounded before it is read out: vm::RunOptions::max_result_bytes).
  uint64_t max_reply = limits::kReplyBytes;
  std::shared_ptr<host::MemoryPool> memory_pool;  // --max-memory-total (null: none), for /metrics
  size_t query_threads = 2;        // --query-threads: the threads queries run on (never the I/O threads)
  size_t max_query_queue = 64;     // --max-query-queue: queries waiting for one of them; more: 503
  // --query-timeout-ms: a query running longer is cancelled and answered 503 (0: no limit).
  uint64_t query_timeout_ms = 10'000;
  // --backup-dir: where POST /v1/NAME/backup writes (an absolute path, made at the start; "": backups
  // are not configured, 409). A request names only the backup (host::check_backup_name), never a path.
  std::string backup_dir;
  // --backup-every: a scheduled backup of each module this often when events came since its last
  // one (0: none), named auto-MODULE-SEQUENCE in backup_dir; --backup-keep: the newest this many
  // scheduled backups of a module are kept, older ones deleted (docs/history.md, "Scheduled backups").
  uint64_t backup_every_ms = 0;
  size_t backup_keep = limits::kScheduledBackupsKept;
};

struct ServeOptions {
  HttpOptions http;                 // replies: set by serve()
  ApiOptions api;
  host::OwnerOptions owner;         // reply_runner and on_unhealthy: set by serve()
  host::DurableOptions durable;     // accept_data_loss, progress, on_checkpoint: set by serve() per module
  std::string data = "./pure-data"; // --data: one subdirectory per module
  std::string sync = "always";      // --sync, for the start line (durable.log.sync is what counts)
  std::vector<std::string> accept_data_loss;  // module names
  bool require_all_modules = false;
  std::string jit = "off";          // the JIT's name, for the start line
  // --cluster and --node: each module replicated on NATS JetStream (cluster.h); advertise is set
  // by serve() once it listens.
  bool clustered = false;
  cluster::ClusterOptions cluster;
  // Runs once the owners are closed, before the shutdown line (the command line stops its JIT).
  std::function<void()> after_close;
};

// Makes the data directory, locks each module's subdirectory for this process, listens, then
// recovers the modules one after another (their routes answer 503 meanwhile) and serves them
// until SIGTERM or SIGINT; their owners are closed when it returns. A module that does not
// recover answers 503 with the reason while the others are served. Returns the exit code
// (kExit...); every error is written to stderr (and to the log once it has started). The
// modules are compiled, named (host::check_module_name) and distinct; the caller keeps them,
// and the tier their owners run on (options.owner.tier) goes before them.
int serve(const std::vector<std::unique_ptr<Module>>& modules, ServeOptions options);

}  // namespace pure::serve
