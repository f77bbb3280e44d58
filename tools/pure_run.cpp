// tools/pure_run.cpp — `pure-run FILE [ARGS...]`: compiles a module and runs its main.
// Exit codes: 0 success, 1 compile error, 2 usage error, 3 runtime error, 4 data directory error
// (--data: see tools/run_data.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/store.h"
#include "stdlib/utf8.h"
#include "tools/allocator.h"
#include "tools/compile_module.h"
#include "tools/memory_budget.h"
#include "base/limits.h"
#include "tools/module_versions.h"
#include "tools/run_data.h"
#include "tools/run_as_of.h"
#include "tools/run_events.h"
#include "vm/vm.h"
#include "jit-common/jit.h"
#include "tools/jit_env.h"

namespace {

constexpr int kExitOk = 0, kExitCompile = 1, kExitUsage = 2, kExitRuntime = 3;

// Reads a whole source file; on failure returns false with the reason in `why` (may be empty).
bool read_file(const std::string& path, std::string& out, std::string& why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {  // a directory opens, then reads as empty
    why = "it is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

// A budget given on the command line: decimal digits only (so "010" is ten, never octal), at
// least 1 and at most INT64_MAX (sizes: after the unit, tools/memory_budget.h). Returns the reason
// it is not one, or "". (CLI11 puts the option's name in front of the reason.)
std::string parse_budget(const std::string& text, bool size, uint64_t& out) {
  if (size) return pure::tools::parse_size(text, out);
  const uint64_t kMax = INT64_MAX;
  const std::string what = "a whole decimal number of at least 1";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return "needs " + what + ", not '" + text + "'";
  uint64_t n = 0;
  for (char c : text) {
    if (n > (kMax - (c - '0')) / 10) return text + " is too large (the largest is " + std::to_string(kMax) + ")";
    n = n * 10 + (c - '0');
  }
  if (n == 0) return "needs " + what + ", not '" + text + "'";
  out = n;
  return "";
}

std::string read_all_stdin() {
  std::string data;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) data.append(buf, n);
  return data;
}

// `pure-run --fmt FILE...`: each file in the canonical layout (frontend.h, format_source),
// rewritten in place only when it changes (a new file renamed over the old one, so a failure
// leaves the old one whole). With --check nothing is written: the files that would change are
// listed on stdout. Exit code 0 when every file is (or now is) formatted; 1 when one has a syntax
// error (printed, the file left as it is) or, with --check, would change; 2 when one cannot be
// read or written.
int format_files(const std::vector<std::string>& files, bool check) {
  int code = kExitOk;
  auto worst = [&code](int c) {
    if (c == kExitUsage || code == kExitOk) code = c;
  };
  for (const std::string& path : files) {
    std::string text, why;
    if (!read_file(path, text, why)) {
      std::fprintf(stderr, "pure-run: cannot read '%s'%s\n", path.c_str(), why.empty() ? "" : (": " + why).c_str());
      worst(kExitUsage);
      continue;
    }
    pure::Source source(path, text);
    pure::Diagnostics diags(source);
    std::string formatted;
    if (!pure::format_source(source, diags, &formatted)) {
      std::fputs(diags.render().c_str(), stderr);
      worst(kExitCompile);
      continue;
    }
    if (formatted == text) continue;
    if (check) {
      std::printf("%s\n", path.c_str());
      worst(kExitCompile);
      continue;
    }
    std::string temp = path + ".pure-fmt.tmp";
    std::error_code ec;
    {
      std::ofstream out(temp, std::ios::binary | std::ios::trunc);
      out << formatted;
      out.close();
      if (!out) ec = std::make_error_code(std::errc::io_error);
    }
    if (!ec) std::filesystem::permissions(temp, std::filesystem::status(path).permissions(), ec);
    if (!ec) std::filesystem::rename(temp, path, ec);
    if (ec) {
      std::filesystem::remove(temp);
      std::fprintf(stderr, "pure-run: cannot write '%s': %s (the file is unchanged)\n", path.c_str(), ec.message().c_str());
      worst(kExitUsage);
    }
  }
  std::fflush(stdout);
  return code;
}

// `pure-run --test FILE`: each test block of the module runs as main of its own compile, against
// a fresh state (empty stored lists), in the order written. A test passes when it ends without a
// runtime error; a failed assert is a `fail` at its line (frontend/parser.cpp, assertion), printed
// as a runtime error is. Output: the tests' own prints, one `ok NAME` or `FAIL NAME` line per test
// on stdout (the failure's message on stderr), then `N passed, N failed`. Exit code 0 when every
// test passed, 1 when the module or a test does not compile, 3 when a test failed.
int run_tests(const std::string& path, const std::string& text,
              const std::vector<std::pair<uint32_t, std::string>>& files, const pure::vm::RunOptions& base,
              const pure::jit::EnvSettings& jit_env) {
  std::vector<std::string> names;
  pure::tools::CompileSteps whole;  // the module as it runs without --test: its errors come first
  whole.files = files;
  whole.checked = [&names](const pure::CheckedModule& checked) {
    for (const pure::TestDecl& t : checked.module.tests) names.push_back(t.name);
  };
  if (!pure::tools::compile_or_report(path, text, whole)) return kExitCompile;
  std::vector<std::unique_ptr<pure::vm::Program>> programs;
  for (size_t i = 0; i < names.size(); ++i) {
    pure::tools::CompileSteps steps;
    steps.run_test = static_cast<int>(i);
    steps.files = files;
    programs.push_back(pure::tools::compile_or_report(path, text, steps));
    if (!programs.back()) return kExitCompile;
  }
  size_t passed = 0, failed = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    pure::vm::Program& program = *programs[i];
    pure::vm::RunOptions options = base;
    options.read_input = [] { return std::string(); };  // a test reads no standard input
#ifdef PURE_HAVE_JIT
    std::unique_ptr<pure::jit::Jit> jit;
    if (jit_env.use_jit) {
      jit = std::make_unique<pure::jit::Jit>(pure::jit::native_backend(), jit_env.options);
      options.tier = jit.get();
    }
#else
    (void)jit_env;
#endif
    std::unique_ptr<pure::rt::Store> store = pure::rt::make_store(program.stored);  // fresh for each test
    std::optional<pure::vm::RuntimeError> failure = pure::vm::run_main(program, *store, options);
    std::fflush(stdout);
#ifdef PURE_HAVE_JIT
    if (jit) {  // the next test is another program: this one's compiles end here (waited for)
      jit->cancel();
      jit->stop();
    }
#endif
    if (failure) {
      ++failed;
      std::printf("FAIL %s\n", names[i].c_str());
      std::fflush(stdout);
      std::fputs(pure::tools::render_failure(*failure, path, files).c_str(), stderr);
      std::fflush(stderr);
    } else {
      ++passed;
      std::printf("ok %s\n", names[i].c_str());
    }
  }
  std::printf("%zu passed, %zu failed\n", passed, failed);
  std::fflush(stdout);
  return failed ? kExitRuntime : kExitOk;
}

// The usage line names what comes after FILE: CLI11 would print only "file".
class RunFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string) const override {
    return "Usage: pure-run [OPTIONS] FILE [ARGS...]\n"
           "       pure-run --fmt [--check] FILE...\n";
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pure-run: compile a Pure module and run its main.\n"
               "Exit codes: 0 success, 1 compile error, 2 usage error, 3 runtime error, 4 data directory error\n"
               "(--data: cannot be opened, recovered, read or written).",
               "pure-run"};
  std::string path;
  bool check_only = false, dump_ast = false, dump_ir = false, dump_bytecode = false;
  std::string max_steps_text = "10000000000", max_memory_text;  // memory: empty = derived from the machine
  app.formatter(std::make_shared<RunFormatter>());
  app.add_option("FILE", path, "the module to run (a .pure file); ARGS after it go to main(args: seq text)")
      ->required();
  app.add_flag("--check", check_only, "compile only: report errors, run nothing");
  app.add_flag("--dump-ast", dump_ast, "print the checked syntax tree");
  app.add_flag("--dump-ir", dump_ir, "print the control-flow graph with its loops");
  app.add_flag("--dump-bytecode", dump_bytecode, "print the bytecode");
  bool fmt_mode = false;
  app.add_flag("--fmt", fmt_mode,
               "format FILE and every file after it in place (one canonical layout, comments kept); with --check, "
               "write nothing, list the files that would change and exit 1 if any (docs/tooling.md)");
  bool test_mode = false;
  app.add_flag("--test", test_mode,
               "run the module's test blocks (test \"name\" { ... }) instead of main, each against empty stored "
               "lists; prints 'ok NAME' or 'FAIL NAME' per test and 'N passed, N failed'; exit code 3 when a test "
               "failed (docs/tooling.md)");
  // Budgets are taken as text and read here: decimal only, out-of-range values refused.
  auto budget = [](bool size) {
    return CLI::Validator(
        [size](std::string& v) {
          uint64_t ignored;
          return parse_budget(v, size, ignored);
        },
        size ? "SIZE" : "N");
  };
  app.add_option("--max-steps", max_steps_text,
                 "step budget of main and of each event or query it calls (one step = one loop iteration, one call, or 64 bytes or one item a standard function works through; "
                 "default 10000000000)")
      ->check(budget(false));
  app.add_option("--max-memory", max_memory_text,
                 "memory budget of the run: bytes of texts, lists and stored rows live at once; K, M, G suffixes "
                 "(default: half the smallest of physical memory, the cgroup limit and what ulimit -v leaves; "
                 "see docs/errors.md)")
      ->check(budget(true));
  std::string data_dir, sync_mode = "always", checkpoint_every_text = "100000";
  CLI::Option* data_option =
      app.add_option("--data", data_dir,
                     "keep the module's state in directory DIR (created if missing): recover it at the start, log every "
                     "event main calls that commits, and continue from it next time. Output reaches stdout only once "
                     "the events before it are durable; exit code 0 means every committed event is durable; a crash "
                     "loses at most a suffix of whole events. A changed program is refused. See docs/durability.md")
          ->option_text("DIR");
  app.add_option("--sync", sync_mode,
                 "with --data: always (the default): fdatasync each burst of events before anything that follows them "
                 "is shown; none: no fdatasync until exit (a crash of the machine can lose the unsynced tail)")
      ->check(CLI::IsMember({"always", "none"}))
      ->needs(data_option);
  app.add_option("--checkpoint-every", checkpoint_every_text,
                 "with --data: at exit, write a checkpoint when the log holds at least N events after the newest one "
                 "(default 100000)")
      ->check(budget(false))
      ->needs(data_option);
  bool accept_data_loss = false;
  app.add_flag("--accept-data-loss", accept_data_loss,
               "with --data: when files the directory's manifest records are missing (a deleted log segment or "
               "checkpoint), start from what is left instead of refusing; the loss is printed on stderr")
      ->needs(data_option);
  std::string retain_text = "7d";
  auto retain_check = CLI::Validator(
      [](std::string& v) {
        pure::host::Retention r;
        return pure::host::parse_retention(v, &r);
      },
      "RETAIN");
  app.add_option("--retain", retain_text,
                 "with --data: the history a checkpoint keeps (log segments it covers, older checkpoints; pure-serve's "
                 "audit trail reads it): an age (7d, 12h), a size (2GiB, 500MiB), both (7d,2GiB: whichever bound comes first), "
                 "all, or none (default 7d; docs/history.md)")
      ->check(retain_check)
      ->needs(data_option);
  std::string audit_failed = "on";
  app.add_option("--audit-failed", audit_failed,
                 "with --data: on (the default) logs each event main called that failed (fail, a runtime error, a "
                 "spent budget) as an audit-only record with its arguments and reason, which --events shows and "
                 "replay skips; off logs committed events only (docs/history.md)")
      ->check(CLI::IsMember({"on", "off"}))
      ->needs(data_option);
  bool upgrade = false, allow_drop = false, plan_only = false;
  std::string migration_steps_text = std::to_string(pure::limits::kMigrationSteps);
  app.add_option("--migration-steps", migration_steps_text,
                 "with --upgrade: step budget of the new source's migrate block, which runs once at the upgrade "
                 "(default " + std::to_string(pure::limits::kMigrationSteps) + "; docs/upgrades.md)")
      ->check(budget(false))
      ->needs(data_option);
  app.add_flag("--upgrade", upgrade,
               "with --data: when FILE differs from the directory's current version, make it the next version: "
               "its stored lists are changed as the plan says (lists and fields added, renamed with 'was'), in one "
               "durable step, and every earlier event keeps the code that ran it (docs/upgrades.md)")
      ->needs(data_option);
  app.add_flag("--allow-drop", allow_drop,
               "with --upgrade: consent to a plan that drops stored lists or fields (their data is lost)")
      ->needs(data_option);
  app.add_flag("--plan", plan_only,
               "with --data: print the upgrade plan from the directory's current version to FILE and exit "
               "without running anything")
      ->needs(data_option);
  bool events = false;
  CLI::Option* events_option =
      app.add_flag("--events", events,
                   "with --data: print the directory's retained history (docs/history.md) as JSON lines, one record "
                   "per line, each the JSON GET /v1/MODULE/events gives for it, oldest first; reads only (no lock, "
                   "no recovery, no checkpoint, no upgrade), runs no main. Filters as the HTTP parameters: --after, "
                   "--before, --event, --since, --limit")
          ->needs(data_option);
  std::string as_of_text;
  app.add_option("--as-of", as_of_text,
                 "with --data: run main against the state the directory held at sequence SEQ (the checkpoint at or "
                 "before it, then the log replayed up to it; docs/history.md), in memory: reads only (no lock, nothing "
                 "written), and the events main calls change only that copy. FILE must be the directory's running "
                 "version")
      ->option_text("SEQ")
      ->needs(data_option);
  bool verify = false;
  app.add_flag("--verify", verify,
               "with --data: check the directory (a backup's copy): every log record's and checkpoint's checksum, "
               "every checkpoint read whole, then every retained record replayed; prints what it checked; exit "
               "code 4 naming the file and offset of the first damage. Reads only; runs no main")
      ->needs(data_option);
  std::string restore_text;
  app.add_option("--restore-to", restore_text,
                 "with --data: cut the directory back to sequence SEQ (every event after it removed; docs/history.md): "
                 "built beside it and exchanged with it in one step, the directory as it was kept as "
                 "DIR.before-restore-N; refused beyond the log or before the oldest retained point. Runs no main")
      ->option_text("SEQ")
      ->needs(data_option);
  std::vector<std::pair<std::string, std::string>> event_filters;
  auto filter_option = [&](const char* name, const char* type, const char* help) {
    std::string key = name + 2;
    app.add_option_function<std::string>(
           name, [&event_filters, key](const std::string& v) { event_filters.emplace_back(key, v); }, help)
        ->type_name(type)
        ->needs(events_option);
  };
  filter_option("--after", "SEQ", "with --events: records after sequence SEQ");
  filter_option("--before", "SEQ", "with --events: records before sequence SEQ");
  filter_option("--event", "NAME", "with --events: only this event (of the directory's running version)");
  filter_option("--since", "TIME",
                "with --events: only records committed at or after TIME: milliseconds since 1970 or UTC "
                "2026-12-07T02:30:00Z");
  filter_option("--limit", "N", "with --events: at most N records (default: all)");
  app.set_version_flag("--version", "pure-run 0.1");
#ifdef PURE_HAVE_JIT
#ifdef PURE_HAVE_LLVM_JIT
#define PURE_RUN_ENGINE_HELP "\nPURE_JIT_ENGINE=PATH: the LLVM engine to load at the first compile (default: libpure_llvm_engine.so\nbeside pure-run, then the one this build made)."
#else
#define PURE_RUN_ENGINE_HELP ""
#endif
  app.footer("Arguments after FILE are passed to main(args: seq text). main may read standard input with input().\n"
             "Environment: PURE_JIT=0 forces the interpreter; PURE_JIT=1 (the default) compiles hot loops to\n"
             "machine code on a background thread (LLVM on x86-64, asmjit on AArch64). PURE_JIT_THRESHOLD=N: loop\n"
             "passes before a loop is first considered (default 1000; 0 = compile on first entry); it compiles once\n"
             "its interpreted work has reached the compile's expected cost (PURE_JIT_PAYOFF=0: at the threshold).\n"
             "PURE_JIT_STATS=1 prints to stderr at exit the loops compiled, rejected and waiting, the share of\n"
             "their instructions compiled natively and the compile milliseconds. PURE_JIT_MIN_SHARE=S (default 0.8): compile only loops with at least\n"
             "that share of native instructions." PURE_RUN_ENGINE_HELP);
#else
  app.footer("Arguments after FILE are passed to main(args: seq text). main may read standard input with input().\n"
             "PURE_JIT=0 forces the interpreter (the only engine in this build).");
#endif
  // Options come before FILE; everything after FILE belongs to main, whatever it looks like.
  int split = 1;
  while (split < argc) {
    std::string a = argv[split];
    if (a.empty() || a[0] != '-' || a == "-") break;
    ++split;
    if ((a == "--max-steps" || a == "--max-memory" || a == "--data" || a == "--sync" || a == "--checkpoint-every" ||
         a == "--retain" || a == "--audit-failed" || a == "--migration-steps" || a == "--after" || a == "--before" || a == "--event" || a == "--since" ||
         a == "--limit" || a == "--as-of" || a == "--restore-to") &&
        split < argc)
      ++split;
  }
  int own_argc = split < argc ? split + 1 : argc;
  std::vector<std::string> args(argv + own_argc, argv + argc);
  try {
    app.parse(own_argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  if (fmt_mode) {
    if (test_mode || dump_ast || dump_ir || dump_bytecode || !data_dir.empty()) {
      std::fprintf(stderr, "pure-run: --fmt formats files: it takes only --check\n");
      return kExitUsage;
    }
    std::vector<std::string> files{path};
    files.insert(files.end(), args.begin(), args.end());
    return format_files(files, check_only);
  }
  uint64_t max_steps = 0, max_memory = 0;
  parse_budget(max_steps_text, false, max_steps);  // both checked by the validators above
  if (max_memory_text.empty())
    max_memory = pure::tools::default_memory_budget(pure::tools::machine_memory());
  else
    parse_budget(max_memory_text, true, max_memory);
  // Texts are valid UTF-8: arguments are checked before they become texts, as input() checks
  // standard input.
  for (size_t i = 0; i < args.size(); ++i) {
    if (pure::text::utf8_valid(args[i])) continue;
    std::fprintf(stderr, "pure-run: argument %zu for main is not valid UTF-8: %s\n", i + 1,
                 pure::text::utf8_error_message(args[i]).c_str());
    return kExitUsage;
  }
  // PURE_JIT, PURE_JIT_THRESHOLD, PURE_JIT_MIN_SHARE, PURE_JIT_STATS: the same switches for every
  // JIT backend (jit-common/jit.h)
  pure::jit::EnvSettings jit_env;
  if (!pure::tools::read_jit_env("pure-run", jit_env)) return kExitUsage;
  std::string text, why;
  if (!read_file(path, text, why)) {
    std::fprintf(stderr, "pure-run: cannot read '%s'%s\n", path.c_str(), why.empty() ? "" : (": " + why).c_str());
    return kExitUsage;
  }
  pure::tools::CompileSteps steps;  // with the imported files' lines, when the module has `use`
  {
    std::string errors;
    bool resolved = pure::tools::resolve_module(path, &text, &steps, &errors);
    std::fputs(errors.c_str(), stderr);
    if (!resolved) return kExitCompile;
  }
  if (test_mode) {
    if (check_only || dump_ast || dump_ir || dump_bytecode || !data_dir.empty() || !args.empty()) {
      std::fprintf(stderr, "pure-run: --test runs the test blocks alone: it takes no --check, --dump-*, --data or "
                           "arguments for main\n");
      return kExitUsage;
    }
    pure::vm::RunOptions options;
    options.max_steps = max_steps;
    options.max_memory = max_memory;
    options.flush_lines = isatty(STDOUT_FILENO) == 1;
    return run_tests(path, text, steps.files, options, jit_env);
  }
  pure::host::SchemaSpec schema;  // the stored lists, for --data's versions
  pure::tools::EnumNames enums;   // their enum columns' enums (set when checked, before lowering)
  steps.lowered = [dump_ir, &schema, &enums](const pure::ir::Program& ir) {
    if (dump_ir) std::fputs(pure::ir::dump_ir(ir).c_str(), stdout);
    schema = pure::tools::schema_spec(ir, enums);
  };
  size_t test_count = 0;  // --check also checks the test blocks, each as `--test` compiles it
  bool has_migrate = false;  // --data --upgrade runs it (docs/upgrades.md, "Migrations"); else ignored
  steps.checked = [dump_ast, &test_count, &has_migrate, &enums](const pure::CheckedModule& checked) {
    if (dump_ast) std::fputs(pure::dump_ast(checked.module).c_str(), stdout);
    enums = pure::tools::enum_names_of(checked);
    test_count = checked.module.tests.size();
    has_migrate = checked.module.has_migrate;
  };
  std::string source = text;
  std::unique_ptr<pure::vm::Program> program = pure::tools::compile_or_report(path, text, steps);
  if (!program) return kExitCompile;
  if (check_only)
    for (size_t i = 0; i < test_count; ++i) {
      pure::tools::CompileSteps test_steps;
      test_steps.run_test = static_cast<int>(i);
      test_steps.files = steps.files;
      if (!pure::tools::compile_or_report(path, text, test_steps)) return kExitCompile;
    }
  if (dump_bytecode) std::fputs(pure::vm::dump_bytecode(*program).c_str(), stdout);
  if (check_only || dump_ast || dump_ir || dump_bytecode) return kExitOk;
  if (events) {  // reads the directory's history: runs nothing, writes nothing
    if (!args.empty() || upgrade || allow_drop || plan_only || accept_data_loss || app.count("--sync") ||
        app.count("--checkpoint-every") || app.count("--retain") || app.count("--restore-to")) {
      std::fprintf(stderr, "pure-run: --events only reads the directory: it takes no --upgrade, --allow-drop, --plan, "
                           "--accept-data-loss, --sync, --checkpoint-every, --retain, --restore-to or arguments for main\n");
      return kExitUsage;
    }
    pure::tools::EventsOptions events_options;
    events_options.dir = data_dir;
    events_options.filters = std::move(event_filters);
    return pure::tools::print_events(*program, path, source, events_options);
  }
  if (verify) {  // reads the directory: runs nothing, writes nothing
    if (!args.empty() || events || app.count("--as-of") || upgrade || allow_drop || plan_only || accept_data_loss ||
        app.count("--sync") || app.count("--checkpoint-every") || app.count("--retain") || app.count("--restore-to")) {
      std::fprintf(stderr, "pure-run: --verify only reads the directory: it takes no --events, --as-of, --upgrade, "
                           "--allow-drop, --plan, --accept-data-loss, --sync, --checkpoint-every, --retain, --restore-to or "
                           "arguments for main\n");
      return kExitUsage;
    }
    pure::tools::AsOfRun run;
    run.dir = data_dir;
    run.source = source;
    run.schema = schema;
    run.has_migrate = has_migrate;
    run.files = steps.files;
    return pure::tools::verify_data(*program, path, run);
  }
  if (app.count("--restore-to")) {  // cuts the directory: runs nothing
    bool digits = !restore_text.empty() && restore_text.size() <= 19 &&
                  restore_text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      std::fprintf(stderr, "pure-run: --restore-to: expected a sequence number (a whole number 0 or more), got '%s'\n",
                   restore_text.c_str());
      return kExitUsage;
    }
    if (!args.empty() || events || app.count("--as-of") || upgrade || allow_drop || plan_only || accept_data_loss ||
        app.count("--sync") || app.count("--checkpoint-every") || app.count("--retain")) {
      std::fprintf(stderr, "pure-run: --restore-to only cuts the directory: it takes no --events, --as-of, --verify, "
                           "--upgrade, --allow-drop, --plan, --accept-data-loss, --sync, --checkpoint-every, --retain "
                           "or arguments for main\n");
      return kExitUsage;
    }
    pure::tools::AsOfRun run;
    run.dir = data_dir;
    run.sequence = std::stoull(restore_text);
    run.source = source;
    run.schema = schema;
    run.has_migrate = has_migrate;
    run.files = steps.files;
    return pure::tools::restore_data(*program, path, run);
  }
  uint64_t as_of = 0;
  const bool reading_as_of = app.count("--as-of") > 0;
  if (reading_as_of) {
    bool digits = !as_of_text.empty() && as_of_text.size() <= 19 &&
                  as_of_text.find_first_not_of("0123456789") == std::string::npos;
    if (digits) as_of = std::stoull(as_of_text);
    if (!digits) {
      std::fprintf(stderr, "pure-run: --as-of: expected a sequence number (a whole number 0 or more), got '%s'\n",
                   as_of_text.c_str());
      return kExitUsage;
    }
    if (events || upgrade || allow_drop || plan_only || accept_data_loss || app.count("--sync") ||
        app.count("--checkpoint-every") || app.count("--retain")) {
      std::fprintf(stderr, "pure-run: --as-of only reads the directory: it takes no --events, --upgrade, --allow-drop, "
                           "--plan, --accept-data-loss, --sync, --checkpoint-every or --retain\n");
      return kExitUsage;
    }
  }
  if (program->main < 0) {
    std::fprintf(stderr, "%s:1:1: error: the module has no 'fn main()' to run\n", path.c_str());
    return kExitCompile;
  }

  pure::vm::RunOptions options;
  options.max_steps = max_steps;
  options.max_memory = max_memory;
  options.args = std::move(args);
  options.read_input = read_all_stdin;
  options.flush_lines = isatty(STDOUT_FILENO) == 1;  // a person watching: each line as it is printed
#ifdef PURE_HAVE_JIT
  std::unique_ptr<pure::jit::Jit> jit;  // after the program: its code dies before the program
  if (jit_env.use_jit) {
    jit = std::make_unique<pure::jit::Jit>(pure::jit::native_backend(), jit_env.options);
    options.tier = jit.get();
  }
#endif
  std::unique_ptr<pure::rt::Store> store;
  std::optional<pure::vm::RuntimeError> failure;
  int data_exit = kExitOk;
  if (reading_as_of) {  // main on the state as of a past sequence, in memory: nothing is written
    pure::tools::AsOfRun run;
    run.dir = data_dir;
    run.sequence = as_of;
    run.source = std::move(source);
    run.schema = std::move(schema);
    run.has_migrate = has_migrate;
    run.files = steps.files;
    if (int code = pure::tools::load_as_of(*program, path, run, &store); code != 0) return code;
    failure = pure::vm::run_main(*program, *store, options);
  } else if (!data_dir.empty()) {  // prints its own messages, the runtime error included
    pure::tools::DataOptions data;
    data.dir = data_dir;
    data.sync_always = sync_mode == "always";
    parse_budget(checkpoint_every_text, false, data.checkpoint_every);
    data.accept_data_loss = accept_data_loss;
    (void)pure::host::parse_retention(retain_text, &data.retain);  // checked by the option's validator
    data.audit_failed = audit_failed == "on";
    data.source = std::move(source);
    data.schema = std::move(schema);
    data.files = steps.files;
    data.upgrade = upgrade;
    data.allow_drop = allow_drop;
    data.plan_only = plan_only;
    data.has_migrate = has_migrate;
    parse_budget(migration_steps_text, false, data.migration_steps);  // checked by the option's validator
    data_exit = pure::tools::run_with_data(*program, path, std::move(options), data);
  } else {
    store = pure::rt::make_store(program->stored);
    failure = pure::vm::run_main(*program, *store, options);
  }
  std::fflush(stdout);
  bool compile_in_flight = false;
#ifdef PURE_HAVE_JIT
  if (jit) {
    // Cancels queued compiles. One still in flight (the engine's set-up cannot be cancelled) is
    // left to die with the process below, not waited for: a short run whose loop got hot near
    // its end would otherwise wait for LLVM's loading and compile (examples/collatz).
    compile_in_flight = jit->cancel();
    if (!compile_in_flight) jit->stop();
    if (jit_env.stats) {
      std::string line = pure::jit::stats_line(jit->stats());
      // every loop rejected: the run (from its next loop pass on) checked no loop any more
      if (program->open_loops.load() == 0) line += "; every loop rejected: tier check off";
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
#endif
  if (failure) std::fputs(pure::tools::render_failure(*failure, path, steps.files).c_str(), stderr);  // before the store is torn down
  store.reset();
  int code = data_exit != kExitOk ? data_exit : failure ? kExitRuntime : kExitOk;
  if (compile_in_flight) {
    // Everything the run owes is out (stdout and stderr flushed; a data directory's log closed by
    // run_with_data). Not returning: static teardown would wait for the compile thread, or tear
    // down the program under it.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  return code;
}
