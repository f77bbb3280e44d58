// bench/durable: durable events per second and their latency, Pure's event log against SQLite.
//
// The workload: `deposit(id, amount)` on a keyed list of accounts (ids uniform in 0..kAccounts).
// C closed-loop submitters (1, 16, 64) each submit one event, wait until it is acknowledged as
// durable, and submit the next. One owner thread takes whatever has arrived as a batch:
//   pure:   each event runs as its own transaction through vm::call_event, the committed ones go
//           to the EventLog as one append; the log thread writes and fdatasyncs per burst (group
//           commit) and its durable callback acknowledges the submitters;
//   sqlite: BEGIN; per event SAVEPOINT, the prepared UPDATE, RELEASE (each event atomic on its
//           own, as Pure's); COMMIT — the commit syncs the WAL (synchronous=FULL) or not (NORMAL).
// Systems, alternating run by run: pure sync=always on disk and on tmpfs (/dev/shm), pure
// sync=none, sqlite WAL FULL and NORMAL on disk. Reported per system and submitter count:
// events/s, p50/p99 latency (submit to acknowledgement), bytes written per event (the process's
// write() bytes, /proc/self/io wchar, over the run). Then recovery seconds per million events
// (replay through the VM) and a checkpoint's seconds and bytes against the state's bytes.
//
//   pure-bench-durable [--disk DIR] [--tmpfs DIR] [--seconds S] [--runs R] [--recovery-events N] [--quick]
// JSON lines on stdout (shared/design/bench-format.md), progress on stderr.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "frontend/frontend.h"
#include "host/host.h"
#include "ir/ir.h"
#include "vm/vm.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kAccounts = 100000;

const char* const kModule = R"(list accounts by id: int { balance: int = 0 }
event deposit(id: int, amount: int) { accounts[id].balance += amount }
)";

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "pure-bench-durable: %s\n", message.c_str());
  std::exit(1);
}

uint64_t written_bytes() {  // bytes this process passed to write() and friends
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value)
    if (key == "wchar:") return value;
  return 0;
}

std::unique_ptr<pure::vm::Program> compile() {
  pure::Source source("durable.pure", kModule);
  pure::Diagnostics diags(source);
  pure::CheckedModule checked = pure::compile_frontend(source, diags);
  if (diags.any()) die(diags.render());
  std::string error;
  auto program = pure::vm::load_program(pure::ir::lower_module(checked, "durable.pure"), error);
  if (!program) die(error);
  return program;
}

// One submitter's pending event.
struct Request {
  int64_t id = 0, amount = 0;
  std::binary_semaphore* done = nullptr;
};

// The owner's inbox: submitters push, the owner takes everything.
class Inbox {
 public:
  void push(const Request& r) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(r);
    }
    ready_.notify_one();
  }
  bool take(std::vector<Request>* out) {  // false when stopped and empty
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !queue_.empty() || stopped_; });
    if (queue_.empty()) return false;
    out->assign(queue_.begin(), queue_.end());
    queue_.clear();
    return true;
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Request> queue_;
  bool stopped_ = false;
};

// A system under test: an owner loop that applies batches durably and acknowledges them.
class System {
 public:
  virtual ~System() = default;
  virtual std::string name() const = 0;
  // Owner thread: applies a batch; calls ack for each request once it is durable (any thread).
  virtual void apply(const std::vector<Request>& batch) = 0;
  virtual void finish() = 0;  // waits for everything applied to be acknowledged
  virtual uint64_t records_written() const { return 0; }
};

class PureSystem final : public System {
 public:
  PureSystem(const pure::vm::Program& program, std::string label, const std::string& dir, pure::host::Sync sync)
      : program_(program), label_(std::move(label)) {
    fn_ = static_cast<uint32_t>(pure::vm::find_function(program, "deposit"));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path());
    pure::host::OpenOptions open;
    open.module_identity = pure::host::module_identity(program);
    open.schemas = program.stored;
    open.apply = [](pure::rt::Store&, const pure::host::LogRecord&) { return std::string("unexpected replay"); };
    open.log.sync = sync;
    open.on_durable = [this](uint64_t durable, bool poisoned, const std::string& reason) {
      if (poisoned) die(reason);
      std::vector<std::binary_semaphore*> ready;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        while (!waiting_.empty() && waiting_.front().first <= durable) {
          ready.push_back(waiting_.front().second);
          waiting_.pop_front();
        }
      }
      for (auto* s : ready) s->release();
    };
    if (auto s = pure::host::open_module(pure::host::posix_file_system(), dir, std::move(open), &opened_); !s.ok())
      die(s.error);
  }
  ~PureSystem() override { opened_.log->close(); }
  std::string name() const override { return label_; }

  void apply(const std::vector<Request>& batch) override {
    encoded_.clear();
    events_.clear();
    std::vector<std::binary_semaphore*> committed;
    pure::vm::Value args[2];
    for (const Request& r : batch) {
      args[0] = pure::vm::Value::of_int(r.id);
      args[1] = pure::vm::Value::of_int(r.amount);
      pure::vm::CallResult result = pure::vm::call_event(program_, *opened_.store, fn_, args, options_);
      if (!result.ok) die("event failed: " + result.reason);
      encoded_.push_back(pure::host::encode_values(args));
      committed.push_back(r.done);
    }
    for (size_t i = 0; i < batch.size(); ++i) events_.push_back({fn_, encoded_[i]});
    uint64_t first;
    {
      // Register the waiters before the append: the log may acknowledge before append returns.
      std::lock_guard<std::mutex> lock(mutex_);
      first = opened_.log->last_sequence() + 1;
      for (size_t i = 0; i < committed.size(); ++i) waiting_.emplace_back(first + i, committed[i]);
    }
    if (opened_.log->append(events_) != first + batch.size() - 1) die("append: unexpected sequence");
  }
  void finish() override { opened_.log->wait_durable(opened_.log->last_sequence()); }
  uint64_t records_written() const override { return opened_.log->stats().records; }
  pure::host::LogStats stats() const { return opened_.log->stats(); }

 private:
  const pure::vm::Program& program_;
  std::string label_;
  uint32_t fn_ = 0;
  pure::vm::RunOptions options_;
  pure::host::OpenedModule opened_;
  std::vector<std::string> encoded_;
  std::vector<pure::host::EventIn> events_;
  std::mutex mutex_;
  std::deque<std::pair<uint64_t, std::binary_semaphore*>> waiting_;
};

class SqliteSystem final : public System {
 public:
  SqliteSystem(std::string label, const std::string& dir, bool full) : label_(std::move(label)) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    check(sqlite3_open((dir + "/bench.db").c_str(), &db_));
    exec("PRAGMA journal_mode=WAL");
    exec(full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    exec("CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID");
    // The same upsert as `accounts[id].balance += amount` on a list whose field has a default.
    prepare("INSERT INTO accounts (id, balance) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET balance = balance + ?2",
            &update_);
    prepare("BEGIN", &begin_);
    prepare("COMMIT", &commit_);
    prepare("SAVEPOINT e", &savepoint_);
    prepare("RELEASE e", &release_);
  }
  ~SqliteSystem() override {
    for (sqlite3_stmt* s : {update_, begin_, commit_, savepoint_, release_}) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  std::string name() const override { return label_; }
  void apply(const std::vector<Request>& batch) override {
    step(begin_);
    for (const Request& r : batch) {
      step(savepoint_);
      sqlite3_bind_int64(update_, 1, r.id);
      sqlite3_bind_int64(update_, 2, r.amount);
      step(update_);
      step(release_);
    }
    step(commit_);  // durable when it returns (FULL: the WAL is fsynced)
    for (const Request& r : batch) r.done->release();
  }
  void finish() override {}

 private:
  void check(int rc) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) die(std::string("sqlite: ") + sqlite3_errmsg(db_));
  }
  void exec(const char* sql) { check(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr)); }
  void prepare(const char* sql, sqlite3_stmt** out) { check(sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, out, nullptr)); }
  void step(sqlite3_stmt* s) {
    check(sqlite3_step(s));
    sqlite3_reset(s);
  }
  std::string label_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt *update_ = nullptr, *begin_ = nullptr, *commit_ = nullptr, *savepoint_ = nullptr, *release_ = nullptr;
};

struct RunResult {
  uint64_t events = 0;
  double seconds = 0;
  std::vector<double> latencies_us;
  uint64_t bytes_written = 0;
};

// `submitters` closed-loop threads for about `seconds`, one owner thread applying batches.
RunResult run(System& system, int submitters, double seconds, uint64_t seed) {
  Inbox inbox;
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> latencies(submitters);
  std::vector<uint64_t> counts(submitters, 0);
  std::thread owner([&] {
    std::vector<Request> batch;
    while (inbox.take(&batch)) system.apply(batch);
    system.finish();
  });
  uint64_t bytes_before = written_bytes();
  auto started = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < submitters; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 1000 + t);
      std::binary_semaphore done(0);
      while (!stop.load(std::memory_order_relaxed)) {
        auto at = Clock::now();
        inbox.push({static_cast<int64_t>(rng() % kAccounts), 1 + static_cast<int64_t>(rng() % 100), &done});
        done.acquire();
        latencies[t].push_back(std::chrono::duration<double, std::micro>(Clock::now() - at).count());
        ++counts[t];
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  RunResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  inbox.stop();
  owner.join();
  result.bytes_written = written_bytes() - bytes_before;
  for (int t = 0; t < submitters; ++t) {
    result.events += counts[t];
    result.latencies_us.insert(result.latencies_us.end(), latencies[t].begin(), latencies[t].end());
  }
  return result;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Recovery and checkpoint figures: `events` deposits logged with sync=none, then a recovery
// through the VM (timed), then a checkpoint of the recovered state (timed, sized).
void recovery_and_checkpoint(const pure::vm::Program& program, const std::string& dir, uint64_t events,
                             const char* machine) {
  namespace host = pure::host;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path());
  host::FileSystem& fs = host::posix_file_system();
  uint32_t fn = static_cast<uint32_t>(pure::vm::find_function(program, "deposit"));
  pure::vm::RunOptions options;
  host::OpenOptions open;
  open.module_identity = host::module_identity(program);
  open.schemas = program.stored;
  open.apply = [&](pure::rt::Store& store, const host::LogRecord& record) -> std::string {
    std::vector<pure::vm::Value> args;
    if (host::Status s = host::decode_values(record.args, &args); !s.ok()) return s.error;
    pure::vm::CallResult r = pure::vm::call_event(program, store, record.event, args, options);
    return r.ok ? std::string() : r.reason;
  };
  open.log.sync = host::Sync::None;
  {
    host::OpenedModule opened;
    if (host::Status s = host::open_module(fs, dir, open, &opened); !s.ok()) die(s.error);
    std::mt19937_64 rng(7);
    std::vector<std::string> encoded;
    std::vector<host::EventIn> batch;
    pure::vm::Value args[2];
    for (uint64_t done = 0; done < events;) {
      encoded.clear();
      batch.clear();
      for (int i = 0; i < 1000 && done < events; ++i, ++done) {
        args[0] = pure::vm::Value::of_int(static_cast<int64_t>(rng() % (10 * kAccounts)));
        args[1] = pure::vm::Value::of_int(1 + static_cast<int64_t>(rng() % 100));
        encoded.push_back(host::encode_values(args));
      }
      for (const std::string& e : encoded) batch.push_back({fn, e});
      opened.log->append(batch);
    }
    if (host::Status s = opened.log->close(); !s.ok()) die(s.error);
  }
  std::unique_ptr<pure::rt::Store> store;
  host::RecoveryReport report;
  if (host::Status s = host::recover(fs, dir, open, &store, &report); !s.ok()) die(s.error);
  if (report.records_replayed != events) die("recovery replayed " + std::to_string(report.records_replayed));
  std::printf("{\"bench\": \"durable.recovery\", \"system\": \"pure\", \"median_ms\": %.1f, \"runs\": 1, "
              "\"events\": %llu, \"seconds_per_million_events\": %.3f, \"per_second\": %.0f, \"machine\": \"%s\"}\n",
              report.seconds * 1e3, static_cast<unsigned long long>(events), report.seconds * 1e6 / static_cast<double>(events),
              static_cast<double>(events) / report.seconds, machine);
  auto snapshot = store->publish();
  host::CheckpointInfo info;
  if (host::Status s = host::write_checkpoint(fs, dir, open.module_identity, *snapshot, report.last_sequence, nullptr, &info);
      !s.ok())
    die(s.error);
  std::printf("{\"bench\": \"durable.checkpoint\", \"system\": \"pure\", \"median_ms\": %.1f, \"runs\": 1, "
              "\"rows\": %llu, \"checkpoint_bytes\": %llu, \"state_bytes\": %llu, \"bytes_per_state_byte\": %.3f, "
              "\"state_mib_per_second\": %.1f, \"machine\": \"%s\"}\n",
              info.seconds * 1e3, static_cast<unsigned long long>(info.rows), static_cast<unsigned long long>(info.bytes),
              static_cast<unsigned long long>(info.state_bytes),
              static_cast<double>(info.bytes) / static_cast<double>(std::max<uint64_t>(1, info.state_bytes)),
              static_cast<double>(info.state_bytes) / (1 << 20) / info.seconds, machine);
  std::fflush(stdout);
  std::fprintf(stderr, "recovery: %llu events in %.3f s (%.3f s per million); checkpoint: %llu rows, %.1f MiB file for "
                       "%.1f MiB of state in %.3f s\n",
               static_cast<unsigned long long>(events), report.seconds, report.seconds * 1e6 / static_cast<double>(events),
               static_cast<unsigned long long>(info.rows), static_cast<double>(info.bytes) / (1 << 20),
               static_cast<double>(info.state_bytes) / (1 << 20), info.seconds);
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::string pid = std::to_string(::getpid());
  std::string disk = "pure-bench-durable-" + pid, tmpfs = "/dev/shm/pure-bench-durable-" + pid;
  double seconds = 1.0;
  long runs = 3;
  uint64_t recovery_events = 1'000'000;
  std::vector<int> submitters = {1, 16, 64};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--disk") disk = value();
    else if (a == "--tmpfs") tmpfs = value();
    else if (a == "--seconds") seconds = std::atof(value().c_str());
    else if (a == "--runs") runs = std::atol(value().c_str());
    else if (a == "--recovery-events") recovery_events = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--quick") {
      seconds = 0.2;
      runs = 1;
      recovery_events = 50'000;
    } else {
      std::fprintf(stderr, "usage: pure-bench-durable [--disk DIR] [--tmpfs DIR] [--seconds S] [--runs R] "
                           "[--recovery-events N] [--quick]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (seconds <= 0 || runs < 1 || recovery_events < 1) die("--seconds, --runs and --recovery-events must be positive");
  const char* machine =
#if defined(__x86_64__)
      "x86_64";
#elif defined(__aarch64__)
      "aarch64";
#else
      "unknown";
#endif
  auto program = compile();
  bool have_tmpfs = std::filesystem::is_directory(std::filesystem::path(tmpfs).parent_path());
  struct Config {
    std::string name, engine;
    std::function<std::unique_ptr<System>()> make;
  };
  std::vector<Config> configs;
  auto pure_system = [&](std::string label, std::string dir, pure::host::Sync sync) {
    return [&program, label, dir, sync]() -> std::unique_ptr<System> {
      return std::make_unique<PureSystem>(*program, label, dir, sync);
    };
  };
  configs.push_back({"pure", "sync=always disk", pure_system("pure", disk + "/pure", pure::host::Sync::Always)});
  if (have_tmpfs)
    configs.push_back({"pure", "sync=always tmpfs", pure_system("pure", tmpfs + "/pure", pure::host::Sync::Always)});
  configs.push_back({"pure", "sync=none disk", pure_system("pure", disk + "/pure-none", pure::host::Sync::None)});
  configs.push_back({"sqlite", "wal synchronous=FULL disk",
                     [&] { return std::make_unique<SqliteSystem>("sqlite", disk + "/sqlite-full", true); }});
  configs.push_back({"sqlite", "wal synchronous=NORMAL disk",
                     [&] { return std::make_unique<SqliteSystem>("sqlite", disk + "/sqlite-normal", false); }});
  if (have_tmpfs)
    configs.push_back({"sqlite", "wal synchronous=FULL tmpfs",
                       [&] { return std::make_unique<SqliteSystem>("sqlite", tmpfs + "/sqlite-full", true); }});

  for (int c : submitters) {
    // Alternating: each round runs every configuration once.
    std::vector<std::vector<RunResult>> results(configs.size());
    for (long r = 0; r < runs; ++r)
      for (size_t k = 0; k < configs.size(); ++k) {
        std::unique_ptr<System> system = configs[k].make();
        results[k].push_back(run(*system, c, seconds, static_cast<uint64_t>(r)));
      }
    for (size_t k = 0; k < configs.size(); ++k) {
      std::vector<double> rates, p50, p99, bytes, ms;
      for (const RunResult& r : results[k]) {
        rates.push_back(static_cast<double>(r.events) / r.seconds);
        p50.push_back(percentile(r.latencies_us, 0.50));
        p99.push_back(percentile(r.latencies_us, 0.99));
        bytes.push_back(static_cast<double>(r.bytes_written) / static_cast<double>(std::max<uint64_t>(1, r.events)));
        ms.push_back(r.seconds * 1e3 / static_cast<double>(std::max<uint64_t>(1, r.events)));
      }
      std::printf("{\"bench\": \"durable.events\", \"system\": \"%s\", \"engine\": \"%s\", \"submitters\": %d, "
                  "\"median_ms\": %.4f, \"per_second\": %.0f, \"p50_us\": %.1f, \"p99_us\": %.1f, "
                  "\"bytes_per_event\": %.1f, \"runs\": %ld, \"machine\": \"%s\"}\n",
                  configs[k].name.c_str(), configs[k].engine.c_str(), c, median(ms), median(rates), median(p50),
                  median(p99), median(bytes), runs, machine);
      std::fprintf(stderr, "%-7s %-28s %2d submitters: %9.0f events/s  p50 %8.1f us  p99 %8.1f us  %6.1f bytes/event\n",
                   configs[k].name.c_str(), configs[k].engine.c_str(), c, median(rates), median(p50), median(p99),
                   median(bytes));
    }
    std::fflush(stdout);
  }
  recovery_and_checkpoint(*program, disk + "/recovery", recovery_events, machine);
  std::filesystem::remove_all(disk);
  if (have_tmpfs) std::filesystem::remove_all(tmpfs);
  return 0;
}
