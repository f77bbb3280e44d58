// bench/calls: the cost of one call through the hosting API (vm/vm.h) — an empty event
// (call_event: a transaction that commits nothing) and an empty query (call_query against a
// published snapshot). Prints JSON lines (shared/design/bench-format.md): median wall time of
// one batch of calls, calls per second and nanoseconds per call, alternating the two kinds.
//   pure-bench-calls [--calls N] [--runs R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "vm/vm.h"

namespace {

const char* const kModule = R"(list hits by id: int { n: int = 0 }
event nop() { }
event bump(id: int) { hits[id].n += 1 }
query none() -> int { return 0 }
query count(id: int) -> int {
  let h = hits[id] else return 0
  return h.n
}
)";

double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct Sample {
  double wall_ms, cpu_ms;
};

}  // namespace

int main(int argc, char** argv) {
  long calls = 1'000'000, runs = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--calls" || a == "--runs") && i + 1 < argc) {
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (!end || *end || v < 1) {
        std::fprintf(stderr, "pure-bench-calls: %s takes a positive whole number\n", a.c_str());
        return 2;
      }
      (a == "--calls" ? calls : runs) = v;
    } else {
      std::fprintf(stderr, "usage: pure-bench-calls [--calls N] [--runs R]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  pure::Source source("calls.pure", kModule);
  pure::Diagnostics diags(source);
  pure::CheckedModule checked = pure::compile_frontend(source, diags);
  if (diags.any()) {
    std::fputs(diags.render().c_str(), stderr);
    return 1;
  }
  std::string error;
  auto program = pure::vm::load_program(pure::ir::lower_module(checked, "calls.pure"), error);
  if (!program) return std::fprintf(stderr, "%s\n", error.c_str()), 1;
  auto store = pure::rt::make_store(program->stored);
  auto snapshot = store->publish();
  struct Kind {
    const char* bench;
    const char* fn;
    bool event;
    std::vector<pure::vm::Value> args;
    std::vector<Sample> samples;
  };
  std::vector<Kind> kinds = {{"call_event", "nop", true, {}, {}},
                             {"call_query", "none", false, {}, {}},
                             {"call_event_write", "bump", true, {pure::vm::Value::of_int(7)}, {}},
                             {"call_query_read", "count", false, {pure::vm::Value::of_int(7)}, {}}};
  pure::vm::RunOptions options;
  options.max_steps = 1000;
  long failures = 0;
  for (long r = 0; r < runs; ++r) {
    for (Kind& k : kinds) {
      uint32_t fn = static_cast<uint32_t>(pure::vm::find_function(*program, k.fn));
      double c0 = cpu_ms();
      auto t0 = std::chrono::steady_clock::now();
      for (long i = 0; i < calls; ++i) {
        pure::vm::CallResult res = k.event ? pure::vm::call_event(*program, *store, fn, k.args, options)
                                           : pure::vm::call_query(*program, snapshot, fn, k.args, options);
        failures += !res.ok;
      }
      auto t1 = std::chrono::steady_clock::now();
      k.samples.push_back({std::chrono::duration<double, std::milli>(t1 - t0).count(), cpu_ms() - c0});
      std::fprintf(stderr, "run %ld %s: %.1f ms\n", r + 1, k.bench, k.samples.back().wall_ms);
    }
  }
  for (Kind& k : kinds) {
    std::sort(k.samples.begin(), k.samples.end(), [](const Sample& a, const Sample& b) { return a.wall_ms < b.wall_ms; });
    const Sample& m = k.samples[k.samples.size() / 2];
    std::printf(
        "{\"bench\": \"%s\", \"system\": \"pure\", \"median_ms\": %.3f, \"runs\": %ld, \"calls\": %ld, "
        "\"per_second\": %.0f, \"ns_per_call\": %.1f, \"cpu_ns_per_call\": %.1f, \"min_ms\": %.3f, \"max_ms\": %.3f, "
        "\"check\": %ld}\n",
        k.bench, m.wall_ms, runs, calls, calls / (m.wall_ms / 1e3), m.wall_ms * 1e6 / calls, m.cpu_ms * 1e6 / calls,
        k.samples.front().wall_ms, k.samples.back().wall_ms, failures);
  }
  return failures ? 1 : 0;
}
