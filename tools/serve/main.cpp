// tools/serve/main.cpp — `pure-serve [options] MODULE.pure...`: compiles modules and serves their
// events, queries and stored lists over HTTP/JSON (docs/serve.md). A module's main is not run.
// Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 compile error, 2 usage error or
// cannot listen.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "frontend/frontend.h"
#include "host/owner.h"
#include "ir/ir.h"
#include "tools/serve/api.h"
#include "tools/serve/http.h"
#include "tools/serve/log.h"

namespace {

constexpr int kExitOk = 0, kExitCompile = 1, kExitUsage = 2;

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

bool url_safe(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
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
  using pure::serve::jint;
  using pure::serve::jstr;
  using pure::serve::log_line;
  CLI::App app{"pure-serve: serve Pure modules' events, queries and stored lists over HTTP/JSON (docs/serve.md).\n"
               "Exit codes: 0 after SIGTERM/SIGINT, 1 compile error, 2 usage error or cannot listen.",
               "pure-serve"};
  std::vector<std::string> paths;
  std::string listen = "127.0.0.1:8080", data = "./pure-data", sync = "always", token_file;
  uint64_t max_steps = 10'000'000, request_timeout_ms = 10'000, slow_ms = 1000;
  size_t body_limit = 1 << 20, header_limit = 16 << 10;
  int io_threads = 1;
  size_t max_queue = 100'000;
  bool log_requests = false;
  app.add_option("modules", paths, "the modules to serve (.pure files); each is served under /v1/NAME, NAME its file name without .pure")
      ->required();
  app.add_option("--listen", listen, "address and port to listen on (port 0: any free port)")->capture_default_str();
  app.add_option("--data", data, "data directory, one subdirectory per module (used once the event log is built in)")
      ->capture_default_str();
  app.add_option("--sync", sync, "always: acknowledge events after fdatasync; none: after write()")
      ->check(CLI::IsMember({"always", "none"}))
      ->capture_default_str();
  app.add_option("--max-steps", max_steps, "step budget of each event and query (one step = one loop iteration or one call)")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX))
      ->capture_default_str();
  app.add_option("--token-file", token_file, "events need 'Authorization: Bearer TOKEN' with the token in this file");
  app.add_option("--request-timeout-ms", request_timeout_ms, "a request must arrive whole within this, else 408")
      ->check(CLI::Range(uint64_t{1}, uint64_t{3'600'000}))
      ->capture_default_str();
  app.add_option("--body-limit", body_limit, "largest request body in bytes, else 413")->capture_default_str();
  app.add_option("--header-limit", header_limit, "largest request line plus headers in bytes, else 431")->capture_default_str();
  app.add_option("--io-threads", io_threads, "threads doing HTTP I/O")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--max-queue", max_queue, "events waiting for a module's owner; more are refused with 503")
      ->check(CLI::Range(size_t{1}, size_t{100'000'000}))
      ->capture_default_str();
  app.add_option("--slow-ms", slow_ms, "log requests slower than this")->capture_default_str();
  app.add_flag("--log-requests", log_requests, "log one line per request");
  app.set_version_flag("--version", "pure-serve 0.1");
  app.footer("Logs are JSON lines on stderr. curl examples: docs/serve.md.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  pure::serve::HttpOptions http;
  if (!parse_listen(listen, http.address, http.port)) {
    std::fprintf(stderr, "pure-serve: --listen needs ADDRESS:PORT (e.g. 127.0.0.1:8080), got '%s'\n", listen.c_str());
    return kExitUsage;
  }
  http.body_limit = body_limit;
  http.header_limit = header_limit;
  http.request_timeout = std::chrono::milliseconds(request_timeout_ms);
  http.io_threads = io_threads;

  pure::serve::ApiOptions api_options;
  api_options.slow_us = slow_ms * 1000;
  api_options.log_requests = log_requests;
  if (!token_file.empty()) {
    std::string token;
    if (!read_file(token_file, token)) {
      std::fprintf(stderr, "pure-serve: cannot read the token file '%s'\n", token_file.c_str());
      return kExitUsage;
    }
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    size_t start = token.find_first_not_of(" \t\r\n");
    token = start == std::string::npos ? "" : token.substr(start);
    if (token.empty() || token.find_first_of(" \t\r\n") != std::string::npos) {
      std::fprintf(stderr, "pure-serve: the token file '%s' must hold one token (no spaces)\n", token_file.c_str());
      return kExitUsage;
    }
    api_options.token = token;
  }

  // Compile every module before serving any.
  std::vector<std::unique_ptr<pure::serve::Module>> modules;
  bool failed = false;
  for (const std::string& path : paths) {
    auto m = std::make_unique<pure::serve::Module>();
    m->path = path;
    m->name = module_name(path);
    if (!url_safe(m->name)) {
      std::fprintf(stderr, "pure-serve: module name '%s' (from '%s') must be letters, digits, '_', '-' or '.'\n",
                   m->name.c_str(), path.c_str());
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
    m->source = text;  // GET /v1/NAME/source
    pure::Source source(path, std::move(text));
    pure::Diagnostics diags(source);
    pure::CheckedModule checked = pure::compile_frontend(source, diags);
    if (diags.any()) {
      std::fputs(diags.render().c_str(), stderr);
      failed = true;
      continue;
    }
    pure::ir::Program ir = pure::ir::lower_module(checked, path);
    std::string error;
    m->program = pure::vm::load_program(ir, error);
    if (!m->program) {
      std::fprintf(stderr, "%s:1:1: error: %s\n", path.c_str(), error.c_str());
      failed = true;
      continue;
    }
    m->stored = ir.stored;
    modules.push_back(std::move(m));
  }
  if (failed) return kExitCompile;

  log_line("start", {{"version", jstr("pure-serve 0.1")},
                     {"modules", jint(static_cast<int64_t>(modules.size()))},
                     {"durability", jstr("none")},
                     {"note", jstr("the event log is not in this build: state lives as long as the process; --data " + data +
                                   " and --sync " + sync + " are not used yet")}});
  pure::host::OwnerOptions owner_options;
  owner_options.max_steps = max_steps;
  owner_options.max_queue = max_queue;
  std::vector<pure::serve::Module*> served;
  for (auto& m : modules) {
    std::string name = m->name;
    owner_options.on_unhealthy = [name](const std::string& why) {
      log_line("log_poisoned", {{"module", jstr(name)}, {"reason", jstr(why)}});
    };
    m->owner = std::make_unique<pure::host::Owner>(m->name, *m->program, pure::rt::make_store(m->program->stored),
                                                   pure::host::make_no_durability(), owner_options);
    log_line("module_ready", {{"module", jstr(m->name)}, {"path", jstr(m->path)},
                              {"sequence", jint(static_cast<int64_t>(m->owner->stats().visible_sequence))}});
    served.push_back(m.get());
  }

  pure::serve::Api api(served, api_options);
  std::string error;
  int rc = pure::serve::run_http(
      api, http,
      [&](const std::string& where) {
        log_line("listening", {{"address", jstr(where)}, {"io_threads", jint(http.io_threads)}});
      },
      [&] {
        for (auto& m : modules) {
          std::string why = m->owner->close();
          pure::host::OwnerStats s = m->owner->stats();
          log_line("module_closed", {{"module", jstr(m->name)},
                                     {"committed", jint(static_cast<int64_t>(s.committed))},
                                     {"failed", jint(static_cast<int64_t>(s.failed))},
                                     {"sequence", jint(static_cast<int64_t>(s.visible_sequence))},
                                     {"error", jstr(why)}});
        }
      },
      error);
  if (rc != 0) {
    log_line("error", {{"message", jstr(error)}});
    std::fprintf(stderr, "pure-serve: %s\n", error.c_str());
    return kExitUsage;
  }
  for (auto& m : modules) m->owner->close();
  log_line("shutdown", {{"exit", jint(0)}});
  return kExitOk;
}
