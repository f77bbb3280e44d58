// tools/pure_serve.cpp — `pure-serve [options] MODULE.pure...`: reads the options, compiles the
// modules and hands them to serve/ (serve.h), which serves their events, queries and stored lists
// over HTTP/JSON (docs/serve.md). A module's main is not run. Each module's state is durable in
// DATA/NAME (host/: event log, checkpoints, recovery); recovery runs after the socket listens, so
// /health and the module's routes answer 503 until it is done.
// Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 compile error, 2 usage error or
// cannot listen, 3 no module's data directory recovered (with --require-all-modules: any one did
// not), 4 a data directory is in use by another process (or cannot be created or locked).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/limits.h"
#include "host/owner.h"
#include "ir/ir.h"
#include "jit-common/jit.h"
#include "serve/access.h"
#include "serve/serve.h"
#include "tools/allocator.h"  // mimalloc on large OS pages: the stored state is hundreds of MB of small nodes
#include "tools/compile_module.h"
#include "tools/module_versions.h"
#include "tools/jit_env.h"
#include "tools/memory_budget.h"

namespace {

using pure::serve::kExitCompile;
using pure::serve::kExitOk;
using pure::serve::kExitUsage;

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

std::string module_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".pure") == 0) base.resize(base.size() - 5);
  return base;
}

// "ADDR:PORT", "[V6]:PORT", or ":PORT" for every interface (0.0.0.0).
bool parse_listen(const std::string& s, std::string& address, unsigned short& port) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos) return false;
  address = s.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') address = address.substr(1, address.size() - 2);
  if (address.empty()) address = "0.0.0.0";
  std::string p = s.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  unsigned long v = std::stoul(p);
  if (v > 65535) return false;
  port = static_cast<unsigned short>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pure-serve: serve Pure modules' events, queries and stored lists over HTTP/JSON (docs/serve.md).\n"
               "Exit codes: 0 after SIGTERM/SIGINT, 1 compile error, 2 usage error or cannot listen, 3 no module's data\n"
               "directory recovered (--require-all-modules: one did not), 4 a data directory is in use by another process.",
               "pure-serve"};
  std::vector<std::string> paths;
  std::string listen = "127.0.0.1:8080", data = "./pure-data", sync = "always", token_file;
  uint64_t max_steps = 10'000'000, request_timeout_ms = 10'000, slow_ms = 1000, query_timeout_ms = 10'000;
  size_t body_limit = 1 << 20, header_limit = 16 << 10;
  int io_threads = 1;
  size_t max_queue = 100'000;
  // Queries run off the I/O threads (docs/serve.md, "Queries"): by default one thread per core, at
  // most 4, so queries leave room for the owners and the I/O; 64 may wait for one.
  size_t query_threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4), max_query_queue = 64;
  bool log_requests = false;
  app.add_option("modules", paths, "the modules to serve (.pure files); each is served under /v1/NAME, NAME its file name without .pure")
      ->required();
  app.add_option("--listen", listen, "address and port to listen on (port 0: any free port)")->capture_default_str();
  double checkpoint_mb = 64, checkpoint_seconds = 300, segment_mb = 64;
  app.add_option("--data", data, "data directory (created if missing), one subdirectory per module named after its file")
      ->capture_default_str();
  app.add_option("--sync", sync,
                 "always: acknowledge events after fdatasync; none: after write() (a machine crash loses the unsynced tail)")
      ->check(CLI::IsMember({"always", "none"}))
      ->capture_default_str();
  app.add_option("--checkpoint-mb", checkpoint_mb, "log megabytes since the last checkpoint that trigger one (0: never by size)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--segment-mb", segment_mb, "log segments roll over before they would pass this many megabytes")
      ->check(CLI::Range(0.001, 4096.0))
      ->capture_default_str();
  app.add_option("--checkpoint-seconds", checkpoint_seconds,
                 "seconds since the last checkpoint that trigger one when events came since (0: never by time)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  std::string retain_text = "7d";
  app.add_option("--retain", retain_text,
                 "the history each module's checkpoints keep (log segments they cover, older checkpoints), read by "
                 "GET /v1/MODULE/events: an age (7d, 12h), a size (2GiB, 500MiB), both (7d,2GiB: whichever bound "
                 "comes first), all, or none (docs/history.md)")
      ->check(CLI::Validator(
          [](std::string& v) {
            pure::host::Retention r;
            return pure::host::parse_retention(v, &r);
          },
          "RETAIN"))
      ->capture_default_str();
  std::string audit_failed = "on";
  app.add_option("--audit-failed", audit_failed,
                 "on: each module's failed events (fail, a runtime error, a spent budget) are logged as audit-only "
                 "records with their arguments and reason, shown by GET /v1/MODULE/events and skipped by replay; "
                 "off: committed events only. With --cluster they are not logged (a cluster replicates committed events only) "
                 "(docs/history.md)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--max-steps", max_steps, "step budget of each event and query (one step = one loop iteration, one call, or 64 bytes or one item a standard function works through)")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX))
      ->capture_default_str();
  // Memory (docs/serve.md, "Memory budgets and large replies"): sizes as pure-run's --max-memory.
  std::string max_memory_text, max_memory_total_text, max_reply_text;
  auto size_check = CLI::Validator(
      [](std::string& v) {
        uint64_t ignored;
        return pure::tools::parse_size(v, ignored);
      },
      "SIZE");
  app.add_option("--max-memory", max_memory_text,
                 "memory budget of each module: its stored state plus what one event or query allocates; an event "
                 "that would pass it fails (409, rolled back, not logged); K, M, G suffixes (default: half the smallest "
                 "of physical memory, the cgroup limit and what ulimit -v leaves)")
      ->check(size_check)
      ->type_name("SIZE");
  app.add_option("--max-memory-total", max_memory_total_text,
                 "memory budget of all modules together (their states plus one event's allocations); an event that "
                 "would pass it fails (409) as for --max-memory (default: the same machine-derived amount)")
      ->check(size_check)
      ->type_name("SIZE");
  app.add_option("--max-reply", max_reply_text,
                 "largest reply of a query or event in bytes of JSON; a larger one is answered 413 without being "
                 "built; K, M, G suffixes (default 64M)")
      ->check(size_check)
      ->type_name("SIZE");
  std::string backup_dir;
  app.add_option("--backup-dir", backup_dir,
                 "where POST /v1/MODULE/backup writes hot backups (created if missing; not inside --data): each as "
                 "DIR/NAME/MODULE, a data directory `pure-serve --data DIR/NAME` serves; the request names only NAME. "
                 "Without it backups are refused (409). docs/history.md")
      ->type_name("DIR");
  std::string backup_every_text;
  app.add_option("--backup-every", backup_every_text,
                 "scheduled backups: each module backed up into --backup-dir this often (90s, 15m, 1h, 1d) when "
                 "events came since its last one, as auto-MODULE-SEQUENCE; needs --backup-dir. docs/history.md")
      ->check(CLI::Validator(
          [](std::string& v) {
            pure::host::Retention r;
            if (pure::host::parse_retention(v, &r).empty() && r.keep_bytes == pure::host::Retention::kForever &&
                r.keep_ms != pure::host::Retention::kForever && r.keep_ms > 0)
              return std::string();
            return "'" + v + "' is not an interval: a number and s, m, h or d (90s, 15m, 1h, 1d)";
          },
          "INTERVAL"));
  size_t backup_keep = pure::limits::kScheduledBackupsKept;
  app.add_option("--backup-keep", backup_keep,
                 "scheduled backups kept per module (--backup-every): older ones are deleted after each new one; "
                 "backups named by a request are never deleted")
      ->check(CLI::Range(size_t{1}, pure::limits::kScheduledBackupsKeptMax))
      ->capture_default_str();
  app.add_option("--token-file", token_file,
                 "tokens, one a line: 'SCOPE[,SCOPE] TOKEN' (scopes read, write, admin; '#' comments) or a lone TOKEN "
                 "(write); events need 'Authorization: Bearer TOKEN' of scope write, reads one of scope read once a "
                 "read token exists");
  app.add_option("--request-timeout-ms", request_timeout_ms, "a request must arrive whole within this, else 408")
      ->check(CLI::Range(uint64_t{1}, uint64_t{3'600'000}))
      ->capture_default_str();
  app.add_option("--body-limit", body_limit, "largest request body in bytes, else 413")->capture_default_str();
  app.add_option("--header-limit", header_limit, "largest request line plus headers in bytes, else 431")->capture_default_str();
  app.add_option("--io-threads", io_threads, "threads doing HTTP I/O")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--max-queue", max_queue, "events waiting for a module's owner; more are refused with 503")
      ->check(CLI::Range(size_t{1}, size_t{100'000'000}))
      ->capture_default_str();
  app.add_option("--query-threads", query_threads,
                 "threads that run queries, never the I/O threads (default: the cores, at most 4)")
      ->check(CLI::Range(size_t{1}, size_t{64}))
      ->capture_default_str();
  app.add_option("--max-query-queue", max_query_queue, "queries waiting for a query thread; more are refused with 503")
      ->check(CLI::Range(size_t{1}, size_t{100'000}))
      ->capture_default_str();
  app.add_option("--query-timeout-ms", query_timeout_ms,
                 "a query running longer is cancelled and answered 503 (0: no limit; the step budget still holds)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{86'400'000}))
      ->capture_default_str();
  app.add_option("--slow-ms", slow_ms, "log requests slower than this")->capture_default_str();
  app.add_flag("--log-requests", log_requests, "log one line per request");
  // Security (docs/serve.md, "Security"): the Host names served.
  std::vector<std::string> allow_hosts;
  app.add_option("--allow-host", allow_hosts,
                 "also serve requests whose Host is NAME (repeatable; '*': any), beside the listen address's own names")
      ->type_name("NAME");
  std::string tls_cert, tls_key;
  app.add_option("--tls-cert", tls_cert, "serve HTTPS with this PEM certificate chain (with --tls-key); plain HTTP without")
      ->type_name("FILE");
  app.add_option("--tls-key", tls_key, "the PEM private key of --tls-cert")->type_name("FILE");
  // Data directories (docs/durability.md, "The manifest"; docs/serve.md, "Durability").
  bool require_all_modules = false;
  app.add_flag("--require-all-modules", require_all_modules,
               "stop (exit 3) when any module's data directory does not recover; by default the others are served "
               "and that module answers 503 with the reason");
  bool upgrade = false, allow_drop = false;
  app.add_flag("--upgrade", upgrade,
               "when a module's source differs from the version its data directory is at, make it the next "
               "version: its stored lists change as the plan says, in one durable step, and every earlier event "
               "keeps the code that ran it (docs/upgrades.md); without it such a module is not served, and its "
               "plan is the reason it gives");
  app.add_flag("--allow-drop", allow_drop, "with --upgrade: consent to plans that drop stored lists or fields");
  std::vector<std::string> accept_data_loss;
  app.add_option("--accept-data-loss", accept_data_loss,
                 "start module NAME from what its data directory holds even when files its manifest records are "
                 "missing (a deleted log segment or checkpoint), instead of refusing it; logged (data_loss_accepted). "
                 "Repeat for more modules")
      ->option_text("NAME");
  // Replication on NATS JetStream (docs/cluster.md)
  std::string cluster_text, node;
  int cluster_replicas = 3;
  uint64_t lease_ms = 3000;
  app.add_option("--cluster", cluster_text,
                 "replicate each module on this NATS JetStream cluster (nats://HOST:PORT[,...]): one leader takes "
                 "events, the other nodes follow and serve reads (docs/cluster.md)")
      ->type_name("URLS");
  app.add_option("--node", node, "with --cluster: this node's name in the cluster (unique)");
  app.add_option("--cluster-replicas", cluster_replicas,
                 "with --cluster: JetStream replicas of each module's stream and lease (3 on a three-node NATS cluster)")
      ->check(CLI::Range(1, 5))
      ->capture_default_str();
  app.add_option("--lease-ms", lease_ms,
                 "with --cluster: a leader's lease lapses when not renewed for this long; a follower then takes it")
      ->check(CLI::Range(300, 600000))
      ->capture_default_str();
  app.set_version_flag("--version", "pure-serve 0.1");
#ifdef PURE_HAVE_JIT
  app.footer("Logs are JSON lines on stderr. curl examples: docs/serve.md.\n"
             "Environment: PURE_JIT=0 runs events and queries in the interpreter only; PURE_JIT=1 (the default)\n"
             "compiles their hot loops to machine code on a background thread, as pure-run does (PURE_JIT_THRESHOLD,\n"
             "PURE_JIT_MIN_SHARE; PURE_JIT_STATS=1 prints the JIT's stats line to stderr at shutdown).");
#else
  app.footer("Logs are JSON lines on stderr. curl examples: docs/serve.md.\n"
             "Environment: PURE_JIT=0 is accepted (this build has no JIT: the interpreter runs everything).");
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  // PURE_JIT and friends: the same switches as pure-run (jit-common/jit.h)
  pure::jit::EnvSettings jit_env;
  if (!pure::tools::read_jit_env("pure-serve", jit_env)) return kExitUsage;

  pure::serve::ServeOptions serve;
  pure::serve::HttpOptions& http = serve.http;
  if (!parse_listen(listen, http.address, http.port)) {
    std::fprintf(stderr, "pure-serve: --listen needs ADDRESS:PORT (e.g. 127.0.0.1:8080), got '%s'\n", listen.c_str());
    return kExitUsage;
  }
  http.body_limit = body_limit;
  http.header_limit = header_limit;
  http.request_timeout = std::chrono::milliseconds(request_timeout_ms);
  http.io_threads = io_threads;

  pure::serve::ApiOptions& api_options = serve.api;
  api_options.slow_us = slow_ms * 1000;
  // The memory budgets: by default both are derived from the machine (tools/memory_budget.h).
  const uint64_t machine_budget = pure::tools::default_memory_budget(pure::tools::machine_memory());
  uint64_t max_memory = machine_budget, max_memory_total = machine_budget, max_reply = pure::limits::kReplyBytes;
  if (!max_memory_text.empty()) pure::tools::parse_size(max_memory_text, max_memory);  // checked by the validators
  if (!max_memory_total_text.empty()) pure::tools::parse_size(max_memory_total_text, max_memory_total);
  if (!max_reply_text.empty()) pure::tools::parse_size(max_reply_text, max_reply);
  api_options.max_reply = max_reply;
  auto memory_pool = std::make_shared<pure::host::MemoryPool>(max_memory_total);
  api_options.memory_pool = memory_pool;
  api_options.log_requests = log_requests;
  api_options.query_threads = query_threads;
  api_options.max_query_queue = max_query_queue;
  api_options.query_timeout_ms = query_timeout_ms;
  if (!token_file.empty()) {
    std::string text;
    if (!read_file(token_file, text)) {
      std::fprintf(stderr, "pure-serve: cannot read the token file '%s'\n", token_file.c_str());
      return kExitUsage;
    }
    if (std::string e = pure::serve::parse_token_file(text, header_limit, api_options.tokens.tokens); !e.empty()) {
      std::fprintf(stderr, "pure-serve: the token file '%s' %s\n", token_file.c_str(), e.c_str());
      return kExitUsage;
    }
  }
  if (tls_cert.empty() != tls_key.empty()) {
    std::fprintf(stderr, "pure-serve: --tls-cert and --tls-key go together (a certificate and its private key)\n");
    return kExitUsage;
  }
  http.tls_cert = tls_cert;
  http.tls_key = tls_key;
  api_options.tls = !tls_cert.empty();
  if (std::string e = pure::serve::make_host_rules(http.address, allow_hosts, api_options.hosts); !e.empty()) {
    std::fprintf(stderr, "pure-serve: %s\n", e.c_str());
    return kExitUsage;
  }

  // Compile every module before serving any.
  std::vector<std::unique_ptr<pure::serve::Module>> modules;
  bool failed = false;
  for (const std::string& path : paths) {
    auto m = std::make_unique<pure::serve::Module>();
    m->path = path;
    m->name = module_name(path);
    if (std::string why = pure::host::check_module_name(m->name); !why.empty()) {
      std::fprintf(stderr, "pure-serve: '%s': %s\n", path.c_str(), why.c_str());
      return kExitUsage;
    }
    for (const auto& other : modules)
      if (other->name == m->name) {
        std::fprintf(stderr, "pure-serve: two modules named '%s' ('%s' and '%s')\n", m->name.c_str(), other->path.c_str(),
                     path.c_str());
        return kExitUsage;
      }
    std::string text;
    if (!read_file(path, text)) {
      std::fprintf(stderr, "pure-serve: cannot read '%s'\n", path.c_str());
      return kExitUsage;
    }
    pure::tools::CompileSteps steps;
    {  // `use` lines: the imported files join the text (what runs and what the data directory keeps)
      std::string errors;
      bool resolved = pure::tools::resolve_module(path, &text, &steps, &errors);
      std::fputs(errors.c_str(), stderr);
      if (!resolved) {
        failed = true;
        continue;
      }
    }
    m->source = text;  // GET /v1/NAME/source
    if (!steps.files.empty()) m->place = pure::tools::place_in_files(path, steps.files);
    pure::tools::EnumNames enums;  // the stored lists' enum columns' enums (checked comes before lowered)
    steps.lowered = [&m, &enums](const pure::ir::Program& ir) {
      m->stored = ir.stored;
      m->versioned.code.schema = pure::tools::schema_spec(ir, enums);
    };
    bool has_migrate = false;  // run by a restart's --upgrade (docs/upgrades.md, "Migrations")
    steps.checked = [&has_migrate, &enums](const pure::CheckedModule& checked) {
      has_migrate = checked.module.has_migrate;
      enums = pure::tools::enum_names_of(checked);
    };
    const auto files = steps.files;
    m->program = pure::tools::compile_or_report(path, std::move(text), steps);
    if (!m->program) {
      failed = true;
      continue;
    }
    // Its data directory keeps its versions: the versions there compile with the replay's budget.
    m->versioned.module = m->name;
    m->versioned.source = m->source;
    m->versioned.legacy_identity = pure::host::module_identity(*m->program);
    m->versioned.upgrade = upgrade;
    m->versioned.allow_drop = allow_drop;
    pure::vm::RunOptions replay;
    replay.max_steps = pure::host::DurableOptions{}.replay_max_steps;
    m->versioned.code.migration = pure::tools::migration_compiler(has_migrate, path, m->source, files, replay);
    m->versioned.migration_steps = pure::limits::kMigrationSteps;
    m->versioned.compile = [dir = data + "/" + m->name, replay](uint32_t number, const std::string& version_source,
                                                                pure::host::VersionCode* out) {
      return pure::tools::compile_version(dir + "/" + pure::host::version_file_name(number), version_source, replay,
                                          out);
    };
    // A hot upgrade's source (PUT /v1/NAME/source) compiles as this file would: its `use` lines
    // resolved beside it, its messages located in it.
    m->compile = [path, replay](const std::string& source, pure::serve::CompiledSource* out, std::string* errors) {
      std::string text = source;
      pure::tools::CompileSteps steps;
      if (!pure::tools::resolve_module(path, &text, &steps, errors)) return false;
      out->source = text;
      if (!steps.files.empty()) out->place = pure::tools::place_in_files(path, steps.files);
      pure::tools::EnumNames enums;
      steps.lowered = [out, &enums](const pure::ir::Program& ir) {
        out->stored = ir.stored;
        out->schema = pure::tools::schema_spec(ir, enums);
      };
      bool has_migrate = false;
      steps.checked = [&has_migrate, &enums](const pure::CheckedModule& checked) {
        has_migrate = checked.module.has_migrate;
        enums = pure::tools::enum_names_of(checked);
      };
      const auto files = steps.files;
      std::shared_ptr<pure::vm::Program> program = pure::tools::compile_to(path, std::move(text), steps, errors);
      if (!program) return false;
      out->program = std::move(program);
      out->migration = pure::tools::migration_compiler(has_migrate, path, out->source, files, replay);
      return true;
    };
    modules.push_back(std::move(m));
  }
  if (failed) return kExitCompile;
  for (const std::string& name : accept_data_loss)
    if (std::none_of(modules.begin(), modules.end(), [&](const auto& m) { return m->name == name; })) {
      std::fprintf(stderr, "pure-serve: --accept-data-loss %s: no module of that name is served\n", name.c_str());
      return kExitUsage;
    }

#ifdef PURE_HAVE_JIT
  // One tier for every module's events and queries, on every thread. Made after the modules, so
  // its native code goes before their programs do; the owners that use it are closed (serve
  // returns) first.
  std::unique_ptr<pure::jit::Jit> jit;
  if (jit_env.use_jit) jit = std::make_unique<pure::jit::Jit>(pure::jit::native_backend(), jit_env.options);
  serve.jit = jit ? pure::tools::jit_backend_name() : "off";
  serve.owner.tier = jit.get();
  serve.after_close = [&] {
    if (!jit) return;
    jit->stop();  // cancels queued compiles, waits for the one in flight
    if (jit_env.stats) std::fprintf(stderr, "%s\n", pure::jit::stats_line(jit->stats()).c_str());
  };
#endif

  if (!cluster_text.empty() || !node.empty()) {
    if (std::string e = pure::cluster::parse_servers(cluster_text, &serve.cluster.servers); !e.empty()) {
      std::fprintf(stderr, "pure-serve: --cluster: %s\n", e.c_str());
      return kExitUsage;
    }
    if (node.empty()) {
      std::fprintf(stderr, "pure-serve: --cluster needs --node NAME: this node's name in the cluster\n");
      return kExitUsage;
    }
    serve.clustered = true;
    serve.cluster.node = node;
    serve.cluster.replicas = cluster_replicas;
    serve.cluster.lease_ms = lease_ms;
  }
  if (!backup_dir.empty()) {
    // An absolute path (answers name it), made now, never inside --data (a backup named after a
    // module would land in that module's directory).
    std::error_code ec;
    std::filesystem::path root = std::filesystem::absolute(backup_dir, ec);
    if (!ec) std::filesystem::create_directories(root, ec);
    if (!ec) root = std::filesystem::canonical(root, ec);
    if (ec) {
      std::fprintf(stderr, "pure-serve: --backup-dir %s: %s\n", backup_dir.c_str(), ec.message().c_str());
      return kExitUsage;
    }
    std::filesystem::path data_root = std::filesystem::weakly_canonical(std::filesystem::absolute(data, ec), ec);
    const std::string r = root.string() + "/", d = data_root.string() + "/";
    if (!ec && (r.compare(0, d.size(), d) == 0 || d.compare(0, r.size(), r) == 0)) {
      std::fprintf(stderr, "pure-serve: --backup-dir %s: must be neither --data %s, nor inside it, nor around it\n",
                   backup_dir.c_str(), data.c_str());
      return kExitUsage;
    }
    serve.api.backup_dir = root.string();
  }
  if (!backup_every_text.empty()) {
    if (backup_dir.empty()) {
      std::fprintf(stderr, "pure-serve: --backup-every %s: needs --backup-dir DIR (where the backups go)\n",
                   backup_every_text.c_str());
      return kExitUsage;
    }
    pure::host::Retention every;
    (void)pure::host::parse_retention(backup_every_text, &every);  // checked by the option's validator
    serve.api.backup_every_ms = every.keep_ms;
  }
  serve.api.backup_keep = backup_keep;
  serve.data = data;
  serve.sync = sync;
  serve.accept_data_loss = accept_data_loss;
  serve.require_all_modules = require_all_modules;
  serve.owner.max_steps = max_steps;
  serve.owner.max_memory = max_memory;
  serve.owner.pool = memory_pool;
  serve.owner.max_result_bytes = max_reply;
  serve.owner.max_queue = max_queue;
  pure::host::DurableOptions& durable_options = serve.durable;
  durable_options.log.sync = sync == "none" ? pure::host::Sync::None : pure::host::Sync::Always;
  durable_options.log.segment_bytes = static_cast<uint64_t>(segment_mb * 1024 * 1024);
  (void)pure::host::parse_retention(retain_text, &durable_options.log.retain);  // checked by the option's validator
  durable_options.audit_failed = audit_failed == "on";
  durable_options.checkpoint_log_bytes = static_cast<uint64_t>(checkpoint_mb * 1024 * 1024);
  durable_options.checkpoint_seconds = checkpoint_seconds;
  durable_options.progress_every = 100'000;
  return pure::serve::serve(modules, std::move(serve));
}
