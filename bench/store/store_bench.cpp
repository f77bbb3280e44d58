// bench/store/store_bench.cpp — the stored-list store against std::map, SQLite (in memory) and a
// sorted C array: point get, put, in-order scan, prefix slices, publish and first-write cost,
// events per second, resident memory per state byte. JSON lines on stdout, progress on stderr.
// Systems alternate within every round; figures are medians over rounds of this one invocation.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "runtime/store.h"
#include "runtime/store_btree_store.h"
#include "store_bench_systems.h"

using namespace store_bench;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string only;     // comma-separated bench names without "store."; empty: all
  std::string systems;  // comma-separated system names; empty: all
  size_t rows = 1000000;
  int runs = 5;
  size_t lookups = 200000;
  size_t groups = 50000;
  size_t puts = 100000;
  size_t events = 50000;
};

std::string machine() {
  char buf[64] = "unknown";
  if (FILE* p = popen("uname -m", "r")) {
    if (fgets(buf, sizeof buf, p)) buf[strcspn(buf, "\n")] = 0;
    pclose(p);
  }
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Result {
  std::vector<double> ms;
  std::string check;
};

std::string g_machine;
bool g_failed = false;
// bench -> system -> median, for the summary lines printed last.
std::map<std::string, std::map<std::string, double>> g_medians;
std::map<std::string, size_t> g_runs;

void print_summary() {
  for (const auto& [bench, systems] : g_medians) {
    auto pure = systems.find("pure");
    if (pure == systems.end()) continue;
    printf("{\"bench\":\"summary\",\"kernel\":\"%s\",\"system\":\"pure\",\"median_ms\":%.4f,\"runs\":%zu", bench.c_str(),
           pure->second, g_runs[bench]);
    for (const auto& [system, median_ms] : systems) {
      if (system == "pure" || median_ms <= 0) continue;
      std::string field = system == "c" ? "c" : system == "std::map" ? "std_map" : system;
      for (char& ch : field)
        if (ch == '+') ch = '_';
      printf(",\"ratio_to_%s\":%.3f", field.c_str(), pure->second / median_ms);
    }
    printf(",\"machine\":\"%s\"}\n", g_machine.c_str());
  }
}

void print_line(const std::string& bench, const std::string& system, const Result& r, size_t ops,
                const std::map<std::string, double>& baselines) {
  double m = median(r.ms);
  printf("{\"bench\":\"%s\",\"system\":\"%s\",\"median_ms\":%.4f,\"runs\":%zu,\"min_ms\":%.4f,\"max_ms\":%.4f",
         bench.c_str(), system.c_str(), m, r.ms.size(), *std::min_element(r.ms.begin(), r.ms.end()),
         *std::max_element(r.ms.begin(), r.ms.end()));
  if (ops) printf(",\"ops\":%zu,\"ns_per_op\":%.1f", ops, m * 1e6 / double(ops));
  if (baselines.count("c")) printf(",\"ratio_to_c\":%.3f", m / baselines.at("c"));
  if (system == "pure" && baselines.count("sqlite")) printf(",\"ratio_to\":\"sqlite\",\"ratio\":%.3f", m / baselines.at("sqlite"));
  if (system == "pure" && baselines.count("std::map")) printf(",\"ratio_to_std_map\":%.3f", m / baselines.at("std::map"));
  printf(",\"check\":\"%s\",\"machine\":\"%s\"}\n", r.check.c_str(), g_machine.c_str());
  fflush(stdout);
}

// Runs `work` on every system, alternating, `runs` rounds; prints one line per system.
void compare(const std::string& bench, std::vector<std::unique_ptr<System>>& systems, int runs, size_t ops,
             const std::function<int64_t(System&, int)>& work) {
  std::vector<Result> results(systems.size());
  for (int round = 0; round < runs; ++round) {
    for (size_t i = 0; i < systems.size(); ++i) {
      auto t0 = Clock::now();
      int64_t check = work(*systems[i], round);
      results[i].ms.push_back(ms_since(t0));
      std::string c = std::to_string(check);
      if (round > 0 && results[i].check != c && bench != "store.put") {
        fprintf(stderr, "%s: %s changed its check between runs\n", bench.c_str(), systems[i]->name().c_str());
        g_failed = true;
      }
      results[i].check = c;
    }
  }
  std::map<std::string, double> medians;
  for (size_t i = 0; i < systems.size(); ++i) medians[systems[i]->name()] = median(results[i].ms);
  g_medians[bench] = medians;
  g_runs[bench] = size_t(runs);
  for (size_t i = 0; i < systems.size(); ++i) {
    if (results[i].check != results[0].check) {
      fprintf(stderr, "%s: check of %s (%s) differs from %s (%s)\n", bench.c_str(), systems[i]->name().c_str(),
              results[i].check.c_str(), systems[0]->name().c_str(), results[0].check.c_str());
      g_failed = true;
    }
    print_line(bench, systems[i]->name(), results[i], ops, medians);
    fprintf(stderr, "  %-28s %-9s %10.3f ms\n", bench.c_str(), systems[i]->name().c_str(), medians[systems[i]->name()]);
  }
}

long resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE* f = fopen("/proc/self/statm", "r")) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * sysconf(_SC_PAGESIZE);
}

// Builds one system in a child process and reports the resident bytes it added (a fresh process
// per system, so no allocator keeps another's memory).
double resident_of(const std::function<std::unique_ptr<System>()>& build) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    long before = resident_bytes();
    auto system = build();  // kept alive until measured
    double added = double(resident_bytes() - before);
    if (write(fds[1], &added, sizeof added) != sizeof added) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  double added = -1;
  if (read(fds[0], &added, sizeof added) != sizeof added) added = -1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return added;
}

void memory_lines(const std::vector<Key>& random_order, const std::vector<Key>& ascending) {
  double state = double(random_order.size()) * 24;
  struct Case {
    std::string system, load;
    std::function<std::unique_ptr<System>()> make;
    const std::vector<Key>* keys;
  };
  std::vector<Case> cases = {
      {"pure", "random", make_pure_system, &random_order}, {"pure", "ascending", make_pure_system, &ascending},
      {"std::map", "random", make_map_system, &random_order}, {"sqlite", "random", make_sqlite_system, &random_order},
      {"c", "random", make_array_system, &random_order},
  };
  for (const Case& c : cases) {
    double added = resident_of([&] {
      auto system = c.make();
      system->load(*c.keys);
      return system;
    });
    printf("{\"bench\":\"store.memory\",\"system\":\"%s\",\"load\":\"%s\",\"median_ms\":0,\"runs\":1,"
           "\"resident_mib\":%.2f,\"state_mib\":%.2f,\"ratio_to\":\"state\",\"ratio\":%.3f,\"machine\":\"%s\"}\n",
           c.system.c_str(), c.load.c_str(), added / 1048576, state / 1048576, added / state, g_machine.c_str());
    fprintf(stderr, "  store.memory %-9s %-9s resident/state %.3f\n", c.system.c_str(), c.load.c_str(), added / state);
  }
  // What the store itself accounts (MemoryUse) after a random-order load.
  auto store = pure::rt::make_store({{"rows", false, {pure::rt::ColType::Int, pure::rt::ColType::Int}, {pure::rt::ColType::Int}}});
  for (const Key& k : random_order) {
    pure::rt::Cell row[3] = {pure::rt::Cell(k.a), pure::rt::Cell(k.b), 0};
    store->list(0).put(row);
  }
  pure::rt::MemoryUse m = store->memory();
  printf("{\"bench\":\"store.memory_accounted\",\"system\":\"pure\",\"load\":\"random\",\"median_ms\":0,\"runs\":1,"
         "\"state_mib\":%.2f,\"structure_mib\":%.2f,\"ratio_to\":\"state\",\"ratio\":%.3f,\"machine\":\"%s\"}\n",
         m.state_bytes / 1048576.0, m.structure_bytes / 1048576.0,
         double(m.state_bytes + m.structure_bytes) / double(m.state_bytes), g_machine.c_str());
}

// Pure alone: what a publish costs, and what the first write after it costs (it copies the path
// the snapshot shares) against a write with no publish before it.
void publish_lines(const std::vector<Key>& keys, int runs) {
  auto store = pure::rt::make_store({{"rows", false, {pure::rt::ColType::Int, pure::rt::ColType::Int}, {pure::rt::ColType::Int}}});
  for (const Key& k : keys) {
    pure::rt::Cell row[3] = {pure::rt::Cell(k.a), pure::rt::Cell(k.b), 0};
    store->list(0).put(row);
  }
  std::mt19937_64 rng(5);
  const size_t n = 20000;
  Result publish, first, second;
  std::shared_ptr<const pure::rt::Snapshot> held;
  for (int round = 0; round < runs; ++round) {
    std::vector<double> p, f, s;
    for (size_t i = 0; i < n; ++i) {
      const Key& a = keys[rng() % keys.size()];
      const Key& b = keys[rng() % keys.size()];
      pure::rt::Cell ra[3] = {pure::rt::Cell(a.a), pure::rt::Cell(a.b), pure::rt::Cell(i)};
      pure::rt::Cell rb[3] = {pure::rt::Cell(b.a), pure::rt::Cell(b.b), pure::rt::Cell(i)};
      auto t0 = Clock::now();
      auto snapshot = store->publish();
      auto t1 = Clock::now();
      store->list(0).put(ra);
      auto t2 = Clock::now();
      store->list(0).put(rb);
      auto t3 = Clock::now();
      held = std::move(snapshot);  // held while the next ones are published, then released
      p.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      f.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
      s.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
    }
    publish.ms.push_back(median(p));
    first.ms.push_back(median(f));
    second.ms.push_back(median(s));
  }
  publish.check = first.check = second.check = std::to_string(n);
  print_line("store.publish", "pure", publish, 0, {});
  print_line("store.first_write_after_publish", "pure", first, 0, {});
  print_line("store.write_without_publish", "pure", second, 0, {});
  fprintf(stderr, "  publish %.0f ns, first write after publish %.0f ns, write without publish %.0f ns\n",
          median(publish.ms) * 1e6, median(first.ms) * 1e6, median(second.ms) * 1e6);
}

// What reusing retired nodes gives (the seeds' change 107): small events, a publish after each,
// and a reader thread that takes the newest snapshot, reads from it and releases it, so retired
// nodes come back on another thread, as they do from pure-serve's connection threads. The same
// work runs with reuse on and off, alternating; reported: events per second, fresh node
// allocations per event, and the store's memory per state byte at the end of a round.
void reuse_lines(const std::vector<Key>& keys, size_t events, int runs) {
  struct Mode {
    const char* system;
    bool reuse;
    std::vector<double> ms, allocations_per_event, memory_ratio;
  } modes[2] = {{"pure", true, {}, {}, {}}, {"pure-no-reuse", false, {}, {}, {}}};
  std::string check;
  for (int round = 0; round < runs; ++round)
    for (Mode& mode : modes) {
      pure::rt::set_node_reuse(mode.reuse);
      auto store = pure::rt::make_store({{"rows", false, {pure::rt::ColType::Int, pure::rt::ColType::Int}, {pure::rt::ColType::Int}}});
      for (const Key& k : keys) {
        pure::rt::Cell row[3] = {pure::rt::Cell(k.a), pure::rt::Cell(k.b), 0};
        store->list(0).put(row);
      }
      std::mutex lock;
      std::shared_ptr<const pure::rt::Snapshot> newest = store->publish();
      std::atomic<bool> stop{false};
      std::atomic<uint64_t> reads{0};
      std::thread reader([&] {
        std::mt19937_64 r(7);
        while (!stop.load(std::memory_order_relaxed)) {
          std::shared_ptr<const pure::rt::Snapshot> snap;
          {
            std::lock_guard<std::mutex> g(lock);
            snap = newest;
          }
          uint64_t found = 0;
          for (int i = 0; i < 16; ++i) {
            const Key& k = keys[r() % keys.size()];
            pure::rt::Cell key[2] = {pure::rt::Cell(k.a), pure::rt::Cell(k.b)};
            found += snap->list(0).find(key) != nullptr;
          }
          reads.fetch_add(found, std::memory_order_relaxed);
        }  // the snapshot is released here, on the reader thread
      });
      pure::rt::StoreStats before, after;
      pure::rt::btree_store_stats(*store, before);
      std::mt19937_64 rng(11);
      auto t0 = Clock::now();
      for (size_t i = 0; i < events; ++i) {
        const Key& a = keys[rng() % keys.size()];
        const Key& b = keys[rng() % keys.size()];
        pure::rt::Cell ka[2] = {pure::rt::Cell(a.a), pure::rt::Cell(a.b)}, kb[2] = {pure::rt::Cell(b.a), pure::rt::Cell(b.b)};
        store->begin();
        store->list(0).set_field(ka, 0, pure::rt::Cell(i));
        store->list(0).set_field(kb, 0, pure::rt::Cell(i + 1));
        store->commit();
        auto snapshot = store->publish();
        std::lock_guard<std::mutex> g(lock);
        newest = std::move(snapshot);
      }
      mode.ms.push_back(ms_since(t0));
      stop = true;
      reader.join();
      pure::rt::btree_store_stats(*store, after);
      pure::rt::MemoryUse use = store->memory();
      mode.allocations_per_event.push_back(double(after.nodes.allocated - before.nodes.allocated) / double(events));
      mode.memory_ratio.push_back(double(use.state_bytes + use.structure_bytes) / double(use.state_bytes));
      check = std::to_string(events);
    }
  pure::rt::set_node_reuse(true);
  double base = median(modes[0].ms);
  for (Mode& mode : modes) {
    double m = median(mode.ms);
    printf("{\"bench\":\"store.event+publish+reader\",\"system\":\"%s\",\"median_ms\":%.3f,\"runs\":%zu,"
           "\"per_second\":%.0f,\"events\":%zu,\"node_allocations_per_event\":%.3f,\"memory_per_state_byte\":%.3f,"
           "\"ratio_to\":\"pure\",\"ratio\":%.3f,\"check\":\"%s\",\"machine\":\"%s\"}\n",
           mode.system, m, mode.ms.size(), double(events) / (m / 1000), events, median(mode.allocations_per_event),
           median(mode.memory_ratio), m / base, check.c_str(), g_machine.c_str());
    fprintf(stderr, "  store.event+publish+reader %-14s %9.0f events/s, %.2f node allocations per event, memory %.2fx state\n",
            mode.system, double(events) / (m / 1000), median(mode.allocations_per_event), median(mode.memory_ratio));
  }
}

void event_lines(std::vector<std::unique_ptr<System>>& systems, const std::vector<Key>& keys, size_t events, int runs) {
  using End = System::EventEnd;
  struct Entry {
    System* system;
    End end;
    std::string name;
    Result result;
  };
  std::vector<Entry> entries;
  for (auto& s : systems) {
    if (!s->supports_events()) continue;
    entries.push_back({s.get(), End::Commit, s->name(), {}});
    if (s->name() == "pure") entries.push_back({s.get(), End::CommitAndPublish, "pure+publish", {}});
    entries.push_back({s.get(), End::Rollback, s->name() + "+rollback", {}});
  }
  for (int round = 0; round < runs; ++round) {
    for (Entry& e : entries) {
      auto t0 = Clock::now();
      e.system->events(keys, events, e.end);
      e.result.ms.push_back(ms_since(t0));
      e.result.check = std::to_string(e.system->scan());  // events move value, never create it
    }
  }
  double sqlite_ms = 0;
  for (Entry& e : entries)
    if (e.name == "sqlite") sqlite_ms = median(e.result.ms);
  // SQLite has no publish; its plain commit is the baseline for Pure's commit+publish.
  for (Entry& e : entries)
    if (e.name == "sqlite") g_medians["store.event+publish"]["sqlite"] = median(e.result.ms);
  for (Entry& e : entries) {
    double m = median(e.result.ms);
    g_medians["store.event" + std::string(e.name.find('+') != std::string::npos ? e.name.substr(e.name.find('+')) : "")]
             [e.name.substr(0, e.name.find('+'))] = m;
    g_runs["store.event" + std::string(e.name.find('+') != std::string::npos ? e.name.substr(e.name.find('+')) : "")] = e.result.ms.size();
    if (e.result.check != entries[0].result.check) g_failed = true;
    printf("{\"bench\":\"store.event\",\"system\":\"%s\",\"median_ms\":%.4f,\"runs\":%zu,\"per_second\":%.0f,"
           "\"events\":%zu,\"ratio_to\":\"sqlite\",\"ratio\":%.3f,\"check\":\"%s\",\"machine\":\"%s\"}\n",
           e.name.c_str(), m, e.result.ms.size(), double(events) / (m / 1000), events, sqlite_ms > 0 ? m / sqlite_ms : 0,
           e.result.check.c_str(), g_machine.c_str());
    fprintf(stderr, "  store.event %-13s %10.0f events/s\n", e.name.c_str(), double(events) / (m / 1000));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") {
      o.rows = 100000;
      o.runs = 3;
      o.lookups = o.groups = o.puts = o.events = 20000;
    } else if (a == "--rows" && i + 1 < argc) {
      o.rows = std::stoul(argv[++i]);
    } else if (a == "--systems" && i + 1 < argc) {
      o.systems = "," + std::string(argv[++i]) + ",";
    } else if (a == "--only" && i + 1 < argc) {
      o.only = "," + std::string(argv[++i]) + ",";
    } else if (a == "--runs" && i + 1 < argc) {
      o.runs = std::stoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--rows N] [--runs N] [--only get,scan,...] [--systems pure,c,...]\n", argv[0]);
      return 2;
    }
  }
  g_machine = machine();
  std::mt19937_64 rng(20261130);
  std::vector<Key> ascending(o.rows);
  for (size_t i = 0; i < o.rows; ++i) ascending[i] = {int64_t(i / 16), int64_t(i % 16)};
  std::vector<Key> random_order = ascending;
  std::shuffle(random_order.begin(), random_order.end(), rng);
  std::vector<Key> lookups(o.lookups), nearby(o.lookups), puts(o.puts);
  for (Key& k : lookups) k = ascending[rng() % o.rows];
  size_t start = rng() % (o.rows - o.lookups);
  for (size_t i = 0; i < o.lookups; ++i) nearby[i] = ascending[start + i];
  for (Key& k : puts) k = ascending[rng() % o.rows];
  std::vector<int64_t> groups(o.groups);
  for (int64_t& g : groups) g = int64_t(rng() % (o.rows / 16));

  fprintf(stderr, "store benchmark: %zu rows (a, b) -> v, %d runs, machine %s\n", o.rows, o.runs, g_machine.c_str());
  auto wanted = [&](const char* name) { return o.only.empty() || o.only.find("," + std::string(name) + ",") != std::string::npos; };
  if (wanted("memory")) memory_lines(random_order, ascending);

  std::vector<std::unique_ptr<System>> systems;
  for (auto make : {make_pure_system, make_map_system, make_sqlite_system, make_array_system}) {
    auto system = make();
    if (o.systems.empty() || o.systems.find("," + system->name() + ",") != std::string::npos) systems.push_back(std::move(system));
  }
  compare("store.load", systems, 1, o.rows, [&](System& s, int) {
    s.load(random_order);
    return int64_t(o.rows);
  });
  if (wanted("get")) compare("store.get", systems, o.runs, o.lookups, [&](System& s, int) { return s.get(lookups); });
  if (wanted("get_nearby")) compare("store.get_nearby", systems, o.runs, o.lookups, [&](System& s, int) { return s.get(nearby); });
  if (wanted("scan")) compare("store.scan", systems, o.runs, o.rows, [&](System& s, int) { return s.scan(); });
  if (wanted("scan_runs")) compare("store.scan_runs", systems, o.runs, o.rows, [&](System& s, int) { return s.scan_runs(); });
  if (wanted("prefix")) compare("store.prefix", systems, o.runs, o.groups, [&](System& s, int) { return s.prefix(groups); });
  if (wanted("put"))
    compare("store.put", systems, o.runs, o.puts, [&](System& s, int round) {
      s.put(puts, round + 1);
      return s.get(puts);
    });
  if (wanted("publish")) publish_lines(random_order, o.runs);
  if (wanted("event")) event_lines(systems, random_order, o.events, o.runs);
  if (wanted("reuse")) reuse_lines(random_order, o.events, o.runs);
  print_summary();
  return g_failed ? 1 : 0;
}
